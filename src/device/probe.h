/* SPDX-License-Identifier: MIT */
/* Measuring what a request costs on a device: latency at queue depth 1,
 * random IOPS at several depths, sequential bandwidth, seek cost against
 * distance, page-cache fill rate.  Reads only, with O_DIRECT, from a block
 * device or from a scratch file the caller created. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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

/* Metadata cost under a directory: open + fstat of files not opened before
 * by this process (cold when the caller dropped the caches first), and the
 * first 4 KiB read of each with its pages dropped. */
struct probe_meta {
        unsigned files;             /* files measured (0: none found) */
        double open_stat_us;        /* median open + fstat + close */
        double open_stat_p90_us;
        double first_read_us;       /* median buffered 4 KiB read after dropping the file's pages */
};

extern const unsigned probe_depths[4];

/* Walk dir (not leaving its filesystem, at most max_files regular files,
 * about `seconds`) and time what opening a file costs there. */
int probe_metadata(const char *dir, unsigned max_files, double seconds, struct probe_meta *ret);

/* A scratch file of `size` bytes of real data in dir, unnamed (O_TMPFILE):
 * nothing is left behind however the process ends.  Returns it opened with
 * O_DIRECT and, separately, buffered.  -EOPNOTSUPP when the filesystem
 * cannot do O_DIRECT. */
int probe_scratch(const char *dir, uint64_t size, int *ret_direct, int *ret_buffered);

/* Probe fd (opened O_RDONLY|O_DIRECT) over [0, region) for about `seconds`
 * in all.  buffered_fd, if >= 0, is the same data opened without O_DIRECT,
 * for the page-cache fill rate (its pages are dropped first). */
int probe_run(int fd, int buffered_fd, uint64_t region, double seconds, struct probe_result *ret);
