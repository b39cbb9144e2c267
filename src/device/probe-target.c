/* SPDX-License-Identifier: MIT */
/* A whole probe of a directory or a block device, and the profile it makes
 * (JSON): what readset probe runs, and report when it needs a profile of
 * this machine. */
#include "device/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/device.h"
#include "util/json.h"
#include "util/util.h"
#include "util/banned.h"

static int fail(struct probe_failure *f, const char *what, int r, const char *why)
{
        f->what = what;
        f->why = why;
        return r;
}

int probe_target(const char *target, const struct probe_options *o, struct probe_report *ret, struct probe_failure *f)
{
        _cleanup_close_ int direct = -1, buffered = -1;
        struct probe_progress pp = { .fn = o->progress, .userdata = o->progress_userdata };
        uint64_t region = o->scratch_bytes;
        double meta_s = 0;
        struct stat st;
        dev_t dev;
        int r;

        *ret = (struct probe_report){ .target = target };
        *f = (struct probe_failure){ "probe", NULL };
        if (stat(target, &st) < 0)
                return fail(f, "probe", -errno, NULL);
        /* which device was measured, so that its saved profile is not taken
         * for another one's when the numbers are reused */
        dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        if (device_identity(dev, ret->device_id, sizeof(ret->device_id)) < 0)
                ret->device_id[0] = 0;
        ret->have_reads = true;
        if (S_ISBLK(st.st_mode)) {
                ret->kind = "block device";
                direct = open(target, O_RDONLY | O_DIRECT | O_CLOEXEC);
                if (direct < 0)
                        return fail(f, "open", -errno, NULL);
                buffered = open(target, O_RDONLY | O_CLOEXEC);
                if (ioctl(direct, BLKGETSIZE64, &region) < 0)
                        return fail(f, "get the size of", -errno, NULL);
        } else if (S_ISDIR(st.st_mode)) {
                ret->kind = "scratch file";
                r = probe_scratch(target, o->scratch_bytes, &direct, &buffered, &pp);
                if (r == -EOPNOTSUPP || r == -EROFS || r == -EACCES || r == -EPERM || r == -EINVAL || r == -ENOSPC) {
                        /* a read-only, remote or full directory: metadata only */
                        ret->have_reads = false;
                        ret->kind = "metadata only";
                        ret->why_no_reads = r == -EOPNOTSUPP ? "no O_TMPFILE or O_DIRECT there" : strerror(-r);
                } else if (r < 0)
                        return fail(f, "make a scratch file in", r, NULL);
        } else
                return fail(f, "probe", -EINVAL, "not a directory nor a block device");
        if (o->need_reads && !ret->have_reads)
                return fail(f, "time reads in", -EOPNOTSUPP, ret->why_no_reads);
        if (o->cold) {
                r = drop_caches();
                if (r < 0)
                        return fail(f, "drop the caches before probing", r, "--cold needs root");
        }
        /* the timed measurements, told as one span of time */
        if (S_ISDIR(st.st_mode))
                meta_s = ret->have_reads ? o->seconds / 6 : o->seconds;
        pp.begin_ns = now_ns();
        /* (the metadata's opens at once: a fifth of meta_s at most each) */
        pp.total_us = (uint64_t)((meta_s * (1 + 0.2 * PROBE_META_DEPTHS) +
                                  (ret->have_reads ? o->seconds * PROBE_RUN_SHARE : 0)) * 1e6);
        if (S_ISDIR(st.st_mode)) {
                /* first, while the caches are as cold as they will be */
                r = probe_metadata(target, o->meta_files, meta_s, &ret->meta, &pp);
                if (r < 0)
                        return fail(f, "measure the metadata cost under", r, NULL);
                ret->have_meta = true;
                if (!ret->have_reads && ret->meta.files == 0)
                        return fail(f, "probe", -ENOENT, "no reads can be timed there, and no files under it to open");
        }
        if (ret->have_reads) {
                const char *why = NULL;
                r = io_uring_usable(&why);
                if (r < 0) {
                        /* said, not guessed at: the queue depths are its requests */
                        snprintf(ret->why_uring, sizeof(ret->why_uring), "io_uring, which times the reads at "
                                 "each queue depth, is unavailable: %s", why);
                        return fail(f, "time reads on", r, ret->why_uring);
                }
                r = probe_run(direct, buffered, region, o->seconds, &ret->res, &pp);
                if (r < 0)
                        return fail(f, "time reads on", r, NULL);
        }
        return 0;
}

int probe_report_write(FILE *f, const struct probe_report *r)
{
        const struct probe_result *p = r->have_reads ? &r->res : NULL;
        const struct probe_meta *m = r->have_meta ? &r->meta : NULL;
        struct json j;

        json_begin(&j, f, true);
        json_object_open(&j, NULL);
        json_string(&j, "target", r->target);
        json_string(&j, "probed", r->kind);
        if (r->device_id[0])
                json_string(&j, "device_id", r->device_id);
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
                bool par = false;
                for (int k = 0; k < PROBE_META_DEPTHS; k++)
                        par |= m->parallel_per_s[k] > 0;
                if (par) {
                        json_array_open(&j, "parallel");
                        for (int k = 0; k < PROBE_META_DEPTHS; k++) {
                                if (m->parallel_per_s[k] <= 0)
                                        continue;
                                json_object_open(&j, NULL);
                                json_u64(&j, "depth", probe_meta_depths[k]);
                                json_double(&j, "open_stat_per_s", m->parallel_per_s[k]);
                                json_u64(&j, "files", m->parallel_files[k]);
                                json_object_close(&j);
                        }
                        json_array_close(&j);
                }
                json_object_close(&j);
        }
        json_object_close(&j);
        json_end(&j);
        return 0;
}

static int write_job(FILE *f, void *userdata)
{
        return probe_report_write(f, userdata);
}

int probe_report_save(const char *path, const struct probe_report *r)
{
        return write_file_atomic(path, 0644, write_job, (void *)r);
}
