/* SPDX-License-Identifier: MIT */
/* readset probe: what does a request cost here? */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "device/device.h"
#include "util/json.h"
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
               "open + stat, and the first 4 KiB read, of the files under it (a read-only\n"
               "or remote directory gets only this part).\n"
               "\n"
               "options:\n"
               "  -q, --quick          about 3 s instead of about 12\n"
               "      --seconds N      time for the measurements (1..60)\n"
               "      --size SIZE      scratch file size (default 512M; quick 128M)\n"
               "      --cold           drop the page, inode and dentry caches first (root), so\n"
               "                       that the metadata figures are cold\n"
               "  -j, --json           the profile as JSON on stdout\n"
               "  -o, --output FILE    also save the profile (JSON) to FILE\n"
               "  -s, --save           also save it where replay, run and report look for the\n"
               "                       device's profile (/var/cache/readset/probe-MAJ:MIN.json):\n"
               "                       they then plan by what was measured, not by sysfs's flag\n"
               "  -h, --help           show this help\n");
}

static void print_json(FILE *f, const char *target, const char *kind, const char *id, const struct probe_result *p,
                       const struct probe_meta *m)
{
        struct json j;

        json_begin(&j, f, true);
        json_object_open(&j, NULL);
        json_string(&j, "target", target);
        json_string(&j, "probed", kind);
        if (id)
                json_string(&j, "device_id", id);
        if (p) {
                json_u64(&j, "region_bytes", p->region_bytes);
                json_double(&j, "latency_qd1_us", p->lat_qd1_us);
                json_double(&j, "latency_qd1_p99_us", p->lat_qd1_p99_us);
                json_object_open(&j, "random_4k_iops");
                for (int i = 0; i < 4; i++) {
                        char k[16];
                        snprintf(k, sizeof(k), "qd%u", probe_depths[i]);
                        json_double(&j, k, p->iops[i]);
                }
                json_object_close(&j);
                json_double(&j, "sequential_mbps", p->seq_mbps);
                json_array_open(&j, "sequential_zones_mbps");
                for (int i = 0; i < 3; i++)
                        json_double(&j, NULL, p->seq_zone_mbps[i]);
                json_array_close(&j);
                json_array_open(&j, "seek_cost");
                for (int i = 0; i < 4; i++) {
                        json_object_open(&j, NULL);
                        json_u64(&j, "distance_bytes", p->seek_dist[i]);
                        json_double(&j, "latency_us", p->seek_us[i]);
                        json_object_close(&j);
                }
                json_array_close(&j);
                json_double(&j, "page_cache_fill_mbps", p->fill_mbps);
                json_bool(&j, "rotational", p->rotational);
        }
        if (m) {
                json_object_open(&j, "metadata");
                json_u64(&j, "files", m->files);
                json_double(&j, "open_stat_us", m->open_stat_us);
                json_double(&j, "open_stat_p90_us", m->open_stat_p90_us);
                json_double(&j, "first_read_us", m->first_read_us);
                json_object_close(&j);
        }
        json_object_close(&j);
        json_end(&j);
}

struct profile_job {
        const char *target, *kind, *id;
        const struct probe_result *p;
        const struct probe_meta *m;
};

static int write_profile_job(FILE *f, void *userdata)
{
        const struct profile_job *j = userdata;
        print_json(f, j->target, j->kind, j->id, j->p, j->m);
        return 0;
}

int cmd_probe(int argc, char **argv)
{
        static const struct option opts[] = {
                { "quick", no_argument, NULL, 'q' },
                { "seconds", required_argument, NULL, 'S' },
                { "size", required_argument, NULL, 'Z' },
                { "cold", no_argument, NULL, 'C' },
                { "json", no_argument, NULL, 'j' },
                { "output", required_argument, NULL, 'o' },
                { "save", no_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_close_ int direct = -1, buffered = -1;
        const char *target = ".", *arg_output = NULL, *kind;
        bool arg_json = false, arg_quick = false, arg_cold = false, arg_save = false, have_block = true;
        struct probe_meta meta = {};
        const struct probe_meta *mp = NULL;
        const char *why_not = NULL;
        uint64_t arg_size = 0, v, region;
        double seconds = 0;
        struct probe_result res;
        struct stat st;
        char b1[32], id[1024], save_path[PATH_MAX] = "";
        bool have_id;
        dev_t dev;
        int c, r;

        while ((c = getopt_long(argc, argv, "+qjo:sh", opts, NULL)) >= 0) {
                switch (c) {
                case 'q': arg_quick = true; break;
                case 'S':
                        if (parse_u64(optarg, &v) < 0 || v < 1 || v > 60)
                                return log_usage("probe", "invalid --seconds '%s' (1..60)", optarg);
                        seconds = (double)v;
                        break;
                case 'Z':
                        if (parse_size(optarg, &arg_size) < 0 || arg_size < (16ULL << 20) || arg_size > (64ULL << 30))
                                return log_usage("probe", "invalid --size '%s' (16M..64G)", optarg);
                        break;
                case 'C': arg_cold = true; break;
                case 'j': arg_json = true; break;
                case 'o': arg_output = optarg; break;
                case 's': arg_save = true; break;
                case 'h': probe_help(); return 0;
                default: return log_usage("probe", "invalid option");
                }
        }
        if (optind + 1 < argc)
                return log_usage("probe", "too many arguments");
        if (optind < argc)
                target = argv[optind];
        if (seconds == 0)
                seconds = arg_quick ? QUICK_SECONDS : DEFAULT_SECONDS;
        if (arg_size == 0)
                arg_size = arg_quick ? QUICK_SCRATCH : DEFAULT_SCRATCH;

        if (stat(target, &st) < 0)
                return log_errno(-errno, "cannot probe '%s'", target);
        /* which device was measured, so that its saved profile is not taken
         * for another one's when the numbers are reused */
        dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        have_id = device_identity(dev, id, sizeof(id)) >= 0;
        if (arg_save) {
                /* before measuring: where it goes must be writable */
                if (!have_id)
                        return log_error("cannot --save a profile of '%s': no block device tells its file system "
                                         "apart (-o FILE and --device FILE do)", target);
                r = device_probe_cache_prepare(dev, save_path, sizeof(save_path));
                if (r < 0)
                        return log_errno(r, "cannot save the profile to '%s'", save_path);
        }
        if (S_ISBLK(st.st_mode)) {
                kind = "block device";
                direct = open(target, O_RDONLY | O_DIRECT | O_CLOEXEC);
                if (direct < 0)
                        return log_errno(-errno, "cannot open '%s'", target);
                buffered = open(target, O_RDONLY | O_CLOEXEC);
                if (ioctl(direct, BLKGETSIZE64, &region) < 0)
                        return log_errno(-errno, "cannot get the size of '%s'", target);
        } else if (S_ISDIR(st.st_mode)) {
                kind = "scratch file";
                r = probe_scratch(target, arg_size, &direct, &buffered);
                if (r == -EOPNOTSUPP || r == -EROFS || r == -EACCES || r == -EPERM || r == -EINVAL || r == -ENOSPC) {
                        /* a read-only, remote or full directory: metadata only */
                        have_block = false;
                        kind = "metadata only";
                        why_not = r == -EOPNOTSUPP ? "no O_TMPFILE or O_DIRECT there" : strerror(-r);
                } else if (r < 0)
                        return log_errno(r, "cannot make a %s scratch file in '%s'", format_bytes(arg_size, b1), target);
                region = arg_size;
        } else
                return log_error("cannot probe '%s': not a directory nor a block device", target);
        if (arg_save && !have_block)
                return log_error("nothing to save for '%s': no reads can be timed there (%s)", target, why_not);

        if (arg_cold) {
                r = drop_caches();
                if (r < 0)
                        return log_errno(r, "cannot drop the caches (--cold needs root)");
        }
        if (S_ISDIR(st.st_mode)) {
                /* first, while the caches are as cold as they will be */
                r = probe_metadata(target, arg_quick ? 500 : 4000, have_block ? seconds / 6 : seconds, &meta);
                if (r < 0)
                        return log_errno(r, "cannot measure the metadata cost under '%s'", target);
                mp = &meta;
        }
        if (have_block) {
                r = probe_run(direct, buffered, region, seconds, &res);
                if (r < 0)
                        return log_errno(r, "probe of '%s' failed", target);
        } else if (meta.files == 0)
                return log_error("cannot probe '%s': %s, and no files under it to open", target, why_not);

        if (arg_output) {
                _cleanup_fclose_ FILE *f = fopen(arg_output, "we");
                if (!f)
                        return log_errno(-errno, "cannot write '%s'", arg_output);
                print_json(f, target, kind, have_id ? id : NULL, have_block ? &res : NULL, mp);
                if (fflush(f) != 0 || ferror(f))
                        return log_error("cannot write '%s'", arg_output);
        }
        if (arg_save) {
                /* whole or not at all: replay may be reading it */
                struct profile_job job = { target, kind, id, &res, mp };
                r = write_file_atomic(save_path, write_profile_job, &job);
                if (r < 0)
                        return log_errno(r, "cannot save the profile to '%s'", save_path);
                log_info("saved as %s: replay, run and report now plan for %s", save_path,
                         res.rotational ? "a rotational device" : "a device where distance does not matter");
        }
        if (arg_json) {
                print_json(stdout, target, kind, have_id ? id : NULL, have_block ? &res : NULL, mp);
                return 0;
        }
        if (!have_block)
                printf("probed:       %s (metadata only: %s)\n", target, why_not);
        else {
                printf("probed:       %s (%s, %s)\n", target, kind, format_bytes(res.region_bytes, b1));
                printf("per request:  %.0f us (4 KiB read at queue depth 1; p99 %.0f us)\n", res.lat_qd1_us,
                       res.lat_qd1_p99_us);
                printf("random 4 KiB: ");
                for (int i = 0; i < 4; i++)
                        printf("QD%-2u %7.0f/s  ", probe_depths[i], res.iops[i]);
                printf("\nsequential:   %.0f MB/s (1 MiB reads, 8 in flight; start %.0f, middle %.0f, end %.0f)\n",
                       res.seq_mbps, res.seq_zone_mbps[0], res.seq_zone_mbps[1], res.seq_zone_mbps[2]);
                printf("seek cost:    ");
                for (int i = 0; i < 4; i++)
                        printf("%s: %.0f us  ", format_bytes(res.seek_dist[i], b1), res.seek_us[i]);
                printf("\n              -> %s\n", res.rotational ? "rotational (far reads cost more: sort by position)"
                                                                 : "not rotational (distance does not matter)");
                if (res.fill_mbps > 0)
                        printf("page cache:   %.0f MB/s buffered fill\n", res.fill_mbps);
        }
        if (mp && meta.files > 0)
                printf("metadata:     %.0f us per open + stat (p90 %.0f us), first 4 KiB read %.0f us (%u files%s)\n",
                       meta.open_stat_us, meta.open_stat_p90_us, meta.first_read_us, meta.files,
                       arg_cold ? ", caches dropped" : "; --cold for cold figures");
        else if (mp)
                printf("metadata:     no files under %s\n", target);
        return 0;
}
