/* SPDX-License-Identifier: MIT */
/* Measuring what a request costs on a device: latency at queue depth 1,
 * random IOPS at several depths, sequential bandwidth, seek cost against
 * distance, page-cache fill rate.  Reads only, with O_DIRECT, from a block
 * device or from a scratch file the caller created. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/progress.h"

struct probe_result {
        uint64_t region_bytes;      /* what was probed */
        double lat_qd1_us;          /* median 4 KiB random read at queue depth 1 */
        double lat_qd1_p99_us;
        double iops[4];             /* 4 KiB random reads per second at depths 1, 4, 16, 64 */
        double seq_mbps;            /* 1 MiB reads, 8 in flight: mean of the three zones */
        double seq_zone_mbps[3];    /* at the start, the middle and the end of the region */
        double seek_us[4];          /* QD1 latency alternating between offsets this far apart */
        uint64_t seek_dist[4];
        double fill_mbps;           /* buffered reads into the page cache (0 when not measured) */
        bool rotational;            /* seeks cost more with distance */
};

/* The depths the metadata probe opens files at, after one at a time */
#define PROBE_META_DEPTHS 2
extern const unsigned probe_meta_depths[PROBE_META_DEPTHS];

/* Metadata cost under a directory: open + fstat of files not opened before
 * by this process (cold when the caller dropped the caches first), and the
 * first 4 KiB read of each with its pages dropped. */
struct probe_meta {
        unsigned files;             /* files measured (0: none found) */
        double open_stat_us;        /* median open + fstat + close */
        double open_stat_p90_us;
        double first_read_us;       /* median buffered 4 KiB read after dropping the file's pages */
        /* then other files, probe_meta_depths[k] at once: opened and
         * stat'ed per second (0: not measured, too few files left) and how
         * many were; on a share, what its server and client serve with
         * many asked at once */
        double parallel_per_s[PROBE_META_DEPTHS];
        unsigned parallel_files[PROBE_META_DEPTHS];
};

extern const unsigned probe_depths[4];

/* How far a probe is, told as it measures (fn NULL: to nobody): the timed
 * measurements as one span of time, total_us from begin_ns, each step by
 * its name; the scratch file and the page-cache fill by their bytes. */
struct probe_progress {
        progress_fn *fn;
        void *userdata;
        uint64_t begin_ns;          /* now_ns() when the timed measurements began */
        uint64_t total_us;          /* what they take in all */
        uint64_t last_ns;           /* last told (a few times a second) */
        const char *step;           /* the measurement under way */
};
/* The timed measurements' share of `seconds` that probe_run() takes. */
#define PROBE_RUN_SHARE 0.9

/* Walk dir (not leaving its filesystem, at most max_files regular files,
 * about `seconds`) and time what opening a file costs there, one at a
 * time, then at each of probe_meta_depths (another fifth of `seconds` at
 * most for each). */
int probe_metadata(const char *dir, unsigned max_files, double seconds, struct probe_meta *ret,
                   struct probe_progress *pp);

/* A scratch file of `size` bytes of real data in dir, unnamed (O_TMPFILE):
 * nothing is left behind however the process ends.  Returns it opened with
 * O_DIRECT and, separately, buffered.  -EOPNOTSUPP when the filesystem
 * cannot do O_DIRECT. */
int probe_scratch(const char *dir, uint64_t size, int *ret_direct, int *ret_buffered, struct probe_progress *pp);

/* Probe fd (opened O_RDONLY|O_DIRECT) over [0, region) for about `seconds`
 * in all.  buffered_fd, if >= 0, is the same data opened without O_DIRECT,
 * for the page-cache fill rate (its pages are dropped first). */
int probe_run(int fd, int buffered_fd, uint64_t region, double seconds, struct probe_result *ret,
              struct probe_progress *pp);

/* ---- a whole probe, as readset probe makes it (probe-target.c) --------- */

struct probe_options {
        double seconds;            /* for the timed measurements, in all */
        uint64_t scratch_bytes;    /* a directory's scratch file */
        unsigned meta_files;       /* files under a directory opened, at most */
        bool cold;                 /* drop the page, inode and dentry caches first (root) */
        bool need_reads;           /* fail (-EOPNOTSUPP) before measuring anything
                                    * where reads cannot be timed */
        progress_fn *progress;     /* told how far it is (NULL: nobody) */
        void *progress_userdata;
};

struct probe_report {
        const char *target;
        const char *kind;          /* "block device", "scratch file" or "metadata only" */
        char device_id[1024];      /* device_identity() of what was measured; "" when nothing tells */
        char why_uring[256];       /* a failure's text, when io_uring is what is missing */
        bool have_reads;           /* res was measured */
        struct probe_result res;
        bool have_meta;            /* meta was measured (a directory) */
        struct probe_meta meta;
        const char *why_no_reads;  /* !have_reads: why (a read-only or remote directory...) */
};

/* What a probe could not do, for the caller's message: "cannot WHAT
 * 'TARGET': WHY" (WHY NULL: the error's own text). */
struct probe_failure {
        const char *what, *why;
};

/* Probe target, a directory (a scratch file of real data made in it, and
 * the cost of opening files under it; a directory where no scratch file can
 * be made gets the second part only) or a block device. */
int probe_target(const char *target, const struct probe_options *o, struct probe_report *ret, struct probe_failure *f);

/* The profile as JSON (readset probe -o, --json, --save; read back by
 * device_profile_from_probe() and cost_profile_parse()). */
int probe_report_write(FILE *f, const struct probe_report *r);
/* Written whole or not at all (replay may be reading it). */
int probe_report_save(const char *path, const struct probe_report *r);
