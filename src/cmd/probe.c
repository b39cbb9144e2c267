/* SPDX-License-Identifier: MIT */
/* readset probe: what does a request cost here? */
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "cmd/progress.h"
#include "device/device.h"
#include "device/probe.h"
#include "util/util.h"
#include "util/banned.h"

#define DEFAULT_SECONDS 10.0
#define QUICK_SECONDS 2.0
#define DEFAULT_SCRATCH (512ULL << 20)
#define QUICK_SCRATCH (128ULL << 20)

static void probe_help(void)
{
        printf("usage: readset probe [OPTIONS] [PATH]\n"
               "\n"
               "Measure what a read request costs on the device holding PATH (default: the\n"
               "current directory): latency of one 4 KiB read at queue depth 1, random\n"
               "4 KiB reads per second at depths 1, 4, 16 and 64, sequential bandwidth at\n"
               "the start, middle and end, seek cost against distance (\"rotational\" when\n"
               "far reads cost more, whatever the rotational flag says) and the page-cache\n"
               "fill rate.  Reads only, with O_DIRECT: the block device itself when PATH is\n"
               "one, else a scratch file made in PATH (an unnamed O_TMPFILE: gone when\n"
               "probe ends, however it ends).  For a directory, also the metadata cost:\n"
               "open + stat, and the first 4 KiB read, of the files under it, then the\n"
               "open + stat of other files 8 and 32 at once (how many round trips a share\n"
               "overlaps; a read-only or remote directory gets only this part).\n"
               "\n"
               "options:\n"
               "      --quick          about 3 s instead of about 12\n"
               "      --seconds N      time for the measurements (1..60)\n"
               "      --size SIZE      scratch file size (default 512M; quick 128M)\n"
               "      --cold           drop the page, inode and dentry caches first (root), so\n"
               "                       that the metadata figures are cold\n"
               "  -j, --json           the profile as JSON on stdout\n"
               "  -o, --output FILE    also save the profile (JSON) to FILE\n"
               "      --save           also save it where replay, run and report look for the\n"
               "                       device's profile (/var/cache/readset/probe-MAJ:MIN.json):\n"
               "                       they then plan by what was measured, not by sysfs's flag\n"
               "      --quiet          no notes on stderr (errors and warnings still)\n"
               "  -h, --help           show this help\n");
}

/* What the reads measured */
static void print_reads(const struct probe_result *res)
{
        char b1[32];

        printf("per request:  %.0f us (4 KiB read at queue depth 1; p99 %.0f us)\n", res->lat_qd1_us,
               res->lat_qd1_p99_us);
        printf("random 4 KiB:");
        for (int i = 0; i < 4; i++)
                printf("%sQD%-2u %7.0f/s", i ? "  " : " ", probe_depths[i], res->iops[i]);
        printf("\nsequential:   %.0f MB/s (1 MiB reads, 8 in flight)\n", res->seq_mbps);
        printf("              start %.0f, middle %.0f, end %.0f MB/s\n", res->seq_zone_mbps[0],
               res->seq_zone_mbps[1], res->seq_zone_mbps[2]);
        /* two distances a line */
        for (int i = 0; i < 4; i++)
                printf("%s%9s: %6.0f us%s", i == 0 ? "seek cost:   " : i == 2 ? "             " : "   ",
                       format_bytes(res->seek_dist[i], b1), res->seek_us[i], i % 2 ? "\n" : "");
        printf("              -> %s\n", res->rotational ? "rotational (far reads cost more: sort by position)"
                                                       : "not rotational (distance does not matter)");
        if (res->fill_mbps > 0)
                printf("page cache:   %.0f MB/s buffered fill\n", res->fill_mbps);
}

/* The profile as text on stdout. */
static void print_text(const struct probe_report *p, bool cold)
{
        const struct probe_result *res = &p->res;
        char b1[32], path[4 * PATH_MAX + 8];

        if (!p->have_reads) {
                printf("probed:       %s\n", cmd_fit(p->target, 14, path, sizeof(path)));
                cmd_printf_wrapped("              ", "              (metadata only: %s)", p->why_no_reads);
        } else {
                char what[96];
                int n = snprintf(what, sizeof(what), "(%s, %s)", p->kind, format_bytes(res->region_bytes, b1));
                cmd_fit(p->target, 14, path, sizeof(path));
                /* the path alone on its line where both do not fit */
                if (14 + strlen(path) + 1 + (size_t)n <= CMD_COLUMNS && strcmp(path, p->target) == 0)
                        printf("probed:       %s %s\n", path, what);
                else
                        printf("probed:       %s\n              %s\n", path, what);
                print_reads(res);
        }
        if (p->have_meta && p->meta.files > 0) {
                printf("metadata:     %.0f us per open + stat (p90 %.0f us), first 4 KiB read %.0f us\n",
                       p->meta.open_stat_us, p->meta.open_stat_p90_us, p->meta.first_read_us);
                printf("              (%u files%s)\n", p->meta.files, cold ? ", caches dropped" : "; --cold for cold figures");
                for (int k = 0; k < PROBE_META_DEPTHS; k++)
                        if (p->meta.parallel_per_s[k] > 0)
                                printf("              %.0f opens + stats a second with %u at once (%u other files)\n",
                                       p->meta.parallel_per_s[k], probe_meta_depths[k], p->meta.parallel_files[k]);
        } else if (p->have_meta)
                printf("metadata:     no files under %s\n", cmd_fit(p->target, 29, path, sizeof(path)));
}

static int write_job(FILE *f, void *userdata)
{
        probe_report_write(f, userdata);
        return 0;
}

/* Written beside and renamed into place: never through a symbolic link
 * planted at the name, never half a file. */
static int write_to(const char *path, const struct probe_report *p)
{
        return write_file_atomic(path, 0644, write_job, (void *)p);
}

enum { OPT_QUICK = 0x100, OPT_SAVE, OPT_QUIET };

/* The options of readset probe, as getopt reads them (main.c lists them for
 * completion and the tests). */
/* -q and -s: --quick and --save for this release (cmd_old_letter) */
const char probe_short_options[] = "+qjo:sh";
const struct option probe_long_options[] = {
        { "quick", no_argument, NULL, OPT_QUICK },
        { "seconds", required_argument, NULL, 'S' },
        { "size", required_argument, NULL, 'Z' },
        { "cold", no_argument, NULL, 'C' },
        { "json", no_argument, NULL, 'j' },
        { "output", required_argument, NULL, 'o' },
        { "save", no_argument, NULL, OPT_SAVE },
        { "quiet", no_argument, NULL, OPT_QUIET },
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_probe(int argc, char **argv)
{
        struct probe_options po = { 0 };
        const char *target = ".", *arg_output = NULL;
        bool arg_json = false, arg_quick = false, arg_save = false;
        struct probe_report rep;
        struct probe_failure fail;
        struct progress pg;
        char id[1024], save_path[PATH_MAX] = "", shown[4 * PATH_MAX + 8];
        struct stat st;
        uint64_t v;
        dev_t dev;
        int c, r;

        while ((c = getopt_long(argc, argv, probe_short_options, probe_long_options, NULL)) >= 0) {
                switch (c) {
                case 'q':
                        say_old_letter("probe", c);
                        /* fall through */
                case OPT_QUICK: arg_quick = true; break;
                case OPT_QUIET: log_set_quiet(true); break;
                case 'S':
                        if (parse_u64(optarg, &v) < 0 || v < 1 || v > 60)
                                return log_usage("probe", "invalid --seconds '%s' (1..60)", optarg);
                        po.seconds = (double)v;
                        break;
                case 'Z':
                        if (parse_size(optarg, &po.scratch_bytes) < 0 || po.scratch_bytes < (16ULL << 20) ||
                            po.scratch_bytes > (64ULL << 30))
                                return log_usage("probe", "invalid --size '%s' (16M..64G)", optarg);
                        break;
                case 'C': po.cold = true; break;
                case 'j': arg_json = true; break;
                case 'o': arg_output = optarg; break;
                case 's':
                        say_old_letter("probe", c);
                        /* fall through */
                case OPT_SAVE: arg_save = true; break;
                case 'h': probe_help(); return 0;
                default: return CMD_OPTION_ERROR(probe, argc, argv);
                }
        }
        if (optind + 1 < argc)
                return log_usage("probe", "too many arguments");
        if (optind < argc)
                target = argv[optind];
        po.seconds = po.seconds ? po.seconds : arg_quick ? QUICK_SECONDS : DEFAULT_SECONDS;
        po.scratch_bytes = po.scratch_bytes ? po.scratch_bytes : arg_quick ? QUICK_SCRATCH : DEFAULT_SCRATCH;
        po.meta_files = arg_quick ? 500 : 4000;
        /* --save: before measuring, the profile must be one to keep and
         * where it goes writable */
        if (arg_save) {
                if (stat(target, &st) < 0)
                        return log_errno(-errno, "cannot probe '%s'", target);
                dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
                if (device_identity(dev, id, sizeof(id)) < 0)
                        return log_error("cannot --save a profile of '%s': no block device tells its file system "
                                         "apart (-o FILE and --device FILE do)", target);
                r = device_probe_cache_prepare(dev, save_path, sizeof(save_path));
                if (r < 0)
                        return log_errno(r, "cannot save the profile to '%s'", save_path);
                po.need_reads = true;
        }
        /* how far it is, on a terminal (not with --quiet: log_quiet) */
        progress_start(&pg, "probe", false);
        po.progress = progress_report_to;
        po.progress_userdata = &pg;
        r = probe_target(target, &po, &rep, &fail);
        progress_done(&pg);
        if (r == -EOPNOTSUPP && po.need_reads && !rep.have_reads)
                return log_error("nothing to save for '%s': no reads can be timed there (%s)", target,
                                 rep.why_no_reads);
        if (r < 0 && fail.why)
                return log_error("cannot %s '%s': %s", fail.what, target, fail.why);
        if (r < 0)
                return log_errno(r, "cannot %s '%s'", fail.what, target);
        if (arg_output && (r = write_to(arg_output, &rep)) < 0)
                return log_errno(r, "cannot write '%s'", arg_output);
        if (arg_save) {
                r = probe_report_save(save_path, &rep);
                if (r < 0)
                        return log_errno(r, "cannot save the profile to '%s'", save_path);
                cmd_info_wrapped("saved as %s: replay, run and report now plan for %s",
                                 printable_elided(save_path, 60, shown, sizeof(shown)),
                                 rep.res.rotational ? "a rotational device" :
                                 "a device where distance does not matter");
        }
        if (arg_json)
                probe_report_write(stdout, &rep);
        else
                print_text(&rep, po.cold);
        return 0;
}
