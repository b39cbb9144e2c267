/* SPDX-License-Identifier: MIT */
/* readset build: turn a saved tracefs text trace into a read set.  This is
 * the fixture event source: the whole pipeline below the tracer runs from a
 * file, without root. */
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>

#include "cmd/cmd.h"
#include "model/format.h"
#include "model/readset.h"
#include "record/trace-file.h"
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
               "      --paths FILE     lines 'MAJOR:MINOR INODE PATH' naming the files\n"
               "      --no-walk        do not search the mounts for unknown inodes\n"
               "  -j, --json           the summary as JSON on stdout\n"
               "  -h, --help           show this help\n");
}

/* Why trace_file_build() stopped.  CMD_FAILED. */
static int say_build_failed(const struct trace_file_result *t, const char *trace, const char *list)
{
        switch (t->failed) {
        case TRACE_FILE_MEMORY: return log_errno(t->error, "out of memory");
        case TRACE_FILE_EVENT: return log_errno(t->error, "cannot add event");
        case TRACE_FILE_BINARY:
                return log_error("'%s' is not a text trace: line %u has a NUL byte (a binary file)", trace,
                                 t->trace_line);
        case TRACE_FILE_READ: return log_error("cannot read '%s'", trace);
        case TRACE_FILE_NO_EVENTS:
                if (t->trace_line)
                        return log_error("no trace events in '%s': line %u is not a line of a trace", trace,
                                         t->trace_line);
                if (t->malformed)
                        return log_error("no trace events in '%s' (%" PRIu64 " malformed event lines)", trace,
                                         t->malformed);
                return log_error("no trace events in '%s'", trace);
        case TRACE_FILE_PATHS: return log_errno(t->error, "cannot set up path resolution");
        case TRACE_FILE_LIST:
                if (t->error == -EBADMSG)
                        return log_error("'%s' line %u: expected 'MAJOR:MINOR INODE /PATH'", list, t->bad_line);
                return log_errno(t->error, "cannot read '%s'", list);
        case TRACE_FILE_RESOLVE: return log_errno(t->error, "cannot resolve paths");
        case TRACE_FILE_BUILD: return log_errno(t->error, "cannot build the read set");
        case TRACE_FILE_DONE: break;
        }
        return log_errno(t->error, "cannot build the read set");
}

/* The options of readset build, as getopt reads them (main.c lists them for
 * completion and the tests). */
/* -p: --paths for this release (cmd_old_letter) */
const char build_short_options[] = "+o:p:jh";
const struct option build_long_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "paths", required_argument, NULL, 'P' },
        { "no-walk", no_argument, NULL, 'N' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_build(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL;
        const char *arg_output = "trace.readset";
        bool arg_walk = true, arg_json = false;
        struct trace_file_options to = { 0 };
        struct trace_file_result tr;
        FILE *in;
        int c, r;

        while ((c = getopt_long(argc, argv, build_short_options, build_long_options, NULL)) >= 0) {
                switch (c) {
                case 'o': arg_output = optarg; break;
                case 'p':
                        say_old_letter("build", c);
                        /* fall through */
                case 'P': to.paths_list = optarg; break;
                case 'N': arg_walk = false; break;
                case 'j': arg_json = true; break;
                case 'h': build_help(); return 0;
                default: return CMD_OPTION_ERROR(build, argc, argv);
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
        to.max_walk = arg_walk ? 2000000 : 0;
        r = trace_file_build(in, &to, &rs, &tr);
        if (in != stdin)
                fclose(in);
        if (r < 0)
                return say_build_failed(&tr, strcmp(argv[optind], "-") == 0 ? "standard input" : argv[optind],
                                        to.paths_list);
        rs->command = strdup(argv[optind]);
        r = format_write(rs, arg_output);
        if (r < 0)
                return log_errno(r, "cannot write '%s'", arg_output);
        if (arg_json) {
                struct json j;
                json_begin(&j, stdout, true);
                json_object_open(&j, NULL);
                json_string(&j, "output", arg_output);
                json_u64(&j, "files", rs->n_files);
                json_u64(&j, "events", rs->events);
                json_u64(&j, "malformed_lines", tr.malformed);
                json_object_close(&j);
                json_end(&j);
        } else {
                if (tr.malformed)
                        log_info("skipped %" PRIu64 " malformed event lines", tr.malformed);
                char n[32], path[4 * PATH_MAX + 8];
                int len = snprintf(n, sizeof(n), " (%zu files)", rs->n_files);
                log_info("wrote '%s'%s", cmd_fit(arg_output, 17 + (size_t)len, path, sizeof(path)), n);
        }
        return 0;
}
