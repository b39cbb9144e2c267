/* SPDX-License-Identifier: MIT */
/* readset snapshot: what the page cache holds now of some files, as a read
 * set that readset replay reads back (keep/snapshot.h). */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "keep/snapshot.h"
#include "model/format.h"
#include "model/readset.h"
#include "util/json.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

static void snapshot_help(void)
{
        printf("usage: readset snapshot [OPTIONS] -o FILE [--cgroup DIR] PATH...\n"
               "\n"
               "Write as a read set what the page cache holds now of the files below\n"
               "each PATH (a directory or a file), reading none of them: a file with\n"
               "nothing cached is passed over (cachestat), the others are asked page\n"
               "by page (mincore).  Each PATH is walked on its own file system; the\n"
               "symlinks below it are not followed, FIFOs, devices and sockets never\n"
               "opened.  'readset replay FILE' reads it back in one sweep; where its\n"
               "memory budget is smaller, the pages that the most snapshots in a row\n"
               "found cached come first.\n"
               "\n"
               "options:\n"
               "  -o, --output FILE    the snapshot to write (required); a snapshot\n"
               "                       already there ranks the pages (see --previous)\n"
               "      --previous FILE  rank the pages against this snapshot instead\n"
               "      --no-previous    rank none: every page as if first seen\n"
               "      --cgroup DIR     also the files the processes of this cgroup (a\n"
               "                       directory below /sys/fs/cgroup) have open or mapped\n"
               "  -j, --json           the summary as JSON on stdout\n"
               "  -v, --verbose        name every file skipped, and why\n"
               "  -q, --quiet          no summary on stderr\n"
               "      --allow-untrusted\n"
               "                       as root, rank by a snapshot others can change\n"
               "  -h, --help           show this help\n");
}

#define OPT_PREVIOUS 0x100
#define OPT_NO_PREVIOUS 0x101
#define OPT_CGROUP 0x102

const char snapshot_short_options[] = "o:jvqh";
const struct option snapshot_long_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "previous", required_argument, NULL, OPT_PREVIOUS },
        { "no-previous", no_argument, NULL, OPT_NO_PREVIOUS },
        { "cgroup", required_argument, NULL, OPT_CGROUP },
        { "json", no_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "quiet", no_argument, NULL, 'q' },
        TRUST_LONG_OPTION,
        { "help", no_argument, NULL, 'h' },
        {}
};

static void say_skip(void *userdata, const char *path, enum snapshot_skip why, int err)
{
        char buf[4 * PATH_MAX + 8];

        (void)userdata;
        if (err < 0)
                log_info("skipped '%s': %s (%s)", cmd_fit(path, 40, buf, sizeof(buf)), snapshot_skip_name(why),
                         strerror(-err));
        else
                log_info("skipped '%s': %s", cmd_fit(path, 40, buf, sizeof(buf)), snapshot_skip_name(why));
}

/* The snapshot ranked against: --previous, else the output when it is a
 * snapshot already (a file that is not one, or is missing, ranks nothing). */
static int load_previous(const char *output, const char *previous, bool none, struct readset **ret)
{
        char why[512];
        struct stat st;
        int r;

        *ret = NULL;
        if (none)
                return 0;
        if (previous) {
                r = cmd_load_readset(previous, ret);
                if (r < 0)
                        return r;
                if (!((*ret)->rec_flags & RS_REC_SNAPSHOT))
                        log_warning("'%s' is a recording, not a snapshot: nothing ranked by it", previous);
                return 0;
        }
        if (lstat(output, &st) < 0)
                return 0;
        r = format_read(output, ret, why, sizeof(why));
        if (r < 0 || !((*ret)->rec_flags & RS_REC_SNAPSHOT)) {
                log_warning("'%s' is there but %s: it is replaced, and ranks nothing", output,
                            r < 0 ? (why[0] ? why : strerror(-r)) : "not a snapshot");
                readset_free(*ret);
                *ret = NULL;
        }
        return 0;
}

static void print_json(const char *output, const struct readset *rs, const struct snapshot_result *res)
{
        struct readset_totals t;
        struct json j;

        readset_totals(rs, &t);
        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_string(&j, "output", output);
        json_u64(&j, "dirs", res->dirs);
        json_u64(&j, "files", res->files);
        json_u64(&j, "bytes", res->bytes);
        json_u64(&j, "files_opened", res->files_opened);
        json_u64(&j, "files_mapped", res->files_mapped);
        json_u64(&j, "files_uncached", res->files_uncached);
        json_u64(&j, "files_cached", res->files_cached);
        json_u64(&j, "bytes_cached", res->bytes_cached);
        json_u64(&j, "bytes_kept", res->bytes_kept);
        json_u64(&j, "ranges", t.ranges);
        json_u64(&j, "cpu_us", res->cpu_us);
        json_u64(&j, "wall_us", res->wall_us);
        json_object_open(&j, "skipped");
        for (int i = 0; i < _SNAPSHOT_SKIP_MAX; i++)
                json_u64(&j, snapshot_skip_key(i), res->skipped[i]);
        json_object_close(&j);
        json_object_close(&j);
        json_end(&j);
}

static void print_summary(const char *output, const struct readset *rs, const struct snapshot_result *res,
                          bool arg_verbose_hint)
{
        char a[32], b[32], t[32], c[32], buf[4 * PATH_MAX + 8], line[512];
        size_t len = 0;

        log_info("wrote '%s': %s cached of %s in %zu of %" PRIu64 " files", cmd_fit(output, 60, buf, sizeof(buf)),
                 format_bytes(res->bytes_cached, a), format_bytes(res->bytes, b), rs->n_files, res->files);
        log_info("  %s, %s of CPU; asked page by page: %" PRIu64 " files; nothing cached: %" PRIu64,
                 format_seconds((double)res->wall_us / 1e6, t), format_seconds((double)res->cpu_us / 1e6, c),
                 res->files_mapped, res->files_uncached);
        if (res->bytes_kept)
                log_info("  %s of it cached in the previous snapshot too (read first under a budget)",
                         format_bytes(res->bytes_kept, a));
        for (int i = 0; i < _SNAPSHOT_SKIP_MAX; i++) {
                int n;
                if (!res->skipped[i])
                        continue;
                n = snprintf(line + len, sizeof(line) - len, "%s %" PRIu64 " %s", len ? "," : "  skipped:",
                             res->skipped[i], snapshot_skip_name(i));
                len = n < 0 ? len : MIN(len + (size_t)n, sizeof(line) - 1);
        }
        if (len)
                cmd_info_wrapped("%s%s", line, arg_verbose_hint ? "" : "; -v names them");
}

int cmd_snapshot(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL, *prev = NULL;
        const char *arg_output = NULL, *arg_previous = NULL, *arg_cgroup = NULL;
        char **files = NULL;
        size_t n_files = 0;
        bool arg_json = false, arg_verbose = false, arg_no_previous = false;
        struct snapshot_options o = { 0 };
        struct snapshot_result res;
        int c, r;

        while ((c = getopt_long(argc, argv, snapshot_short_options, snapshot_long_options, NULL)) >= 0) {
                switch (c) {
                case 'o': arg_output = optarg; break;
                case OPT_PREVIOUS: arg_previous = optarg; break;
                case OPT_NO_PREVIOUS: arg_no_previous = true; break;
                case OPT_CGROUP: arg_cgroup = optarg; break;
                case 'j': arg_json = true; break;
                case 'v': arg_verbose = true; break;
                case 'q': log_set_quiet(true); break;
                case CMD_OPT_ALLOW_UNTRUSTED: trust_allow_untrusted(); break;
                case 'h': snapshot_help(); return 0;
                default: return CMD_OPTION_ERROR(snapshot, argc, argv);
                }
        }
        if (!arg_output)
                return log_usage("snapshot", "missing -o FILE");
        if (optind == argc && !arg_cgroup)
                return log_usage("snapshot", "missing PATH");
        if (arg_previous && arg_no_previous)
                return log_usage("snapshot", "--previous and --no-previous exclude each other");
        r = load_previous(arg_output, arg_previous, arg_no_previous, &prev);
        if (r < 0)
                return r;
        o.previous = prev;
        if (arg_verbose)
                o.on_skip = say_skip;
        if (arg_cgroup) {
                r = snapshot_cgroup_files(arg_cgroup, &files, &n_files);
                if (r < 0)
                        return log_errno(r, "cannot list the processes of the cgroup '%s'", arg_cgroup);
                o.files = files;
                o.n_files = n_files;
        }
        r = snapshot_take(argv + optind, (size_t)(argc - optind), &o, &rs, &res);
        snapshot_paths_free(files, n_files);
        if (r < 0)
                return log_errno(r, "cannot take a snapshot of '%s'", optind < argc ? argv[optind] : arg_cgroup);
        r = format_write(rs, arg_output);
        if (r < 0)
                return log_errno(r, "cannot write '%s'", arg_output);
        if (arg_json)
                print_json(arg_output, rs, &res);
        else
                print_summary(arg_output, rs, &res, arg_verbose);
        return 0;
}
