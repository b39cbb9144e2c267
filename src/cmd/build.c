/* SPDX-License-Identifier: MIT */
/* readset build: turn a saved tracefs text trace into a read set.  This is
 * the fixture event source: the whole pipeline below the tracer runs from a
 * file, without root. */
#include <getopt.h>
#include <inttypes.h>
#include <sys/sysmacros.h>

#include "cmd/cmd.h"
#include "model/format.h"
#include "record/paths.h"
#include "model/readset.h"
#include "record/builder.h"
#include "record/tracer.h"
#include "util/json.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

static void build_help(void)
{
        printf("usage: readset build [OPTIONS] TRACE\n"
               "\n"
               "Build a read set from a text trace of the filemap events, as read from\n"
               "tracefs's trace or trace_pipe ('-' reads standard input).  Paths come\n"
               "from --paths, else from a walk of this machine's mounts.\n"
               "\n"
               "options:\n"
               "  -o, --output FILE    where to write the read set (default: trace.readset)\n"
               "  -p, --paths FILE     lines 'MAJOR:MINOR INODE PATH' naming the files\n"
               "      --no-walk        do not search the mounts for unknown inodes\n"
               "  -j, --json           the summary as JSON on stdout\n"
               "  -h, --help           show this help\n");
}

int cmd_build(int argc, char **argv)
{
        static const struct option opts[] = {
                { "output", required_argument, NULL, 'o' },
                { "paths", required_argument, NULL, 'p' },
                { "no-walk", no_argument, NULL, 'N' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_builder_ struct rs_builder *b = NULL;
        _cleanup_free_ char *line = NULL;
        const char *arg_output = "trace.readset", *arg_paths = NULL;
        bool arg_walk = true, arg_json = false, have_start = false;
        struct paths *paths = NULL;
        uint64_t start_us = 0, last_us = 0, bad = 0;
        size_t cap = 0;
        FILE *in;
        int c, r;

        while ((c = getopt_long(argc, argv, "+o:p:jh", opts, NULL)) >= 0) {
                switch (c) {
                case 'o': arg_output = optarg; break;
                case 'p': arg_paths = optarg; break;
                case 'N': arg_walk = false; break;
                case 'j': arg_json = true; break;
                case 'h': build_help(); return 0;
                default: return log_usage("build", "invalid option");
                }
        }
        if (optind + 1 != argc)
                return log_usage("build", optind == argc ? "missing TRACE file" : "too many arguments");
        if (strcmp(argv[optind], "-") == 0)
                in = stdin;
        else {
                /* a text file of anyone's: only its type is checked (a FIFO
                 * named here is refused, not waited on) */
                char why[512];
                int fd = trust_open_regular(argv[optind], why, sizeof(why));
                if (fd < 0)
                        return why[0] ? log_error("cannot read '%s': %s", argv[optind], why) :
                                        log_errno(fd, "cannot open '%s'", argv[optind]);
                in = fdopen(fd, "re");
                if (!in) {
                        r = -errno;
                        close(fd);
                        return log_errno(r, "cannot open '%s'", argv[optind]);
                }
        }

        b = builder_new();
        rs = readset_new();
        if (!b || !rs) {
                r = log_errno(-ENOMEM, "out of memory");
                goto out;
        }
        while (getline(&line, &cap, in) > 0) {
                struct rs_event ev;

                r = tracer_parse_line(line, 0, 12, &ev);   /* 4 KiB pages, as on x86-64 */
                if (r < 0) {
                        bad++;
                        continue;
                }
                if (r == 0)
                        continue;
                /* Times relative to the first event. */
                if (!have_start) {
                        start_us = ev.time_us;
                        have_start = true;
                }
                ev.time_us = ev.time_us >= start_us ? ev.time_us - start_us : 0;
                last_us = MAX(last_us, ev.time_us);
                r = builder_add(b, &ev);
                if (r < 0) {
                        r = log_errno(r, "cannot add event");
                        goto out;
                }
        }
        if (ferror(in)) {
                r = log_error("cannot read '%s'", argv[optind]);
                goto out;
        }
        r = paths_open(&paths, false);
        if (r < 0) {
                r = log_errno(r, "cannot set up path resolution");
                goto out;
        }
        if (arg_paths) {
                unsigned bad_line = 0;
                r = paths_learn_list(paths, arg_paths, &bad_line);
                if (r == -EBADMSG)
                        r = log_error("'%s' line %u: expected 'MAJOR:MINOR INODE /PATH'", arg_paths, bad_line);
                else if (r < 0)
                        r = log_errno(r, "cannot read '%s'", arg_paths);
                if (r < 0)
                        goto out;
        }
        r = paths_prepare(paths, b, arg_walk ? 2000000 : 0);
        if (r < 0) {
                r = log_errno(r, "cannot resolve paths");
                goto out;
        }
        r = builder_finish(b, rs, 4096, paths_resolve, paths);
        if (r < 0) {
                r = log_errno(r, "cannot build the read set");
                goto out;
        }
        rs->duration_us = last_us;
        rs->command = strdup(argv[optind]);
        r = format_write(rs, arg_output);
        if (r < 0) {
                r = log_errno(r, "cannot write '%s'", arg_output);
                goto out;
        }
        if (arg_json) {
                struct json j;
                json_begin(&j, stdout, true);
                json_object_open(&j, NULL);
                json_string(&j, "output", arg_output);
                json_u64(&j, "files", rs->n_files);
                json_u64(&j, "events", rs->events);
                json_u64(&j, "malformed_lines", bad);
                json_object_close(&j);
                json_end(&j);
        } else {
                if (bad)
                        log_info("skipped %" PRIu64 " malformed event lines", bad);
                log_info("wrote '%s' (%zu files)", arg_output, rs->n_files);
        }
        r = 0;
out:
        paths_close(paths);
        if (in != stdin)
                fclose(in);
        return r;
}
