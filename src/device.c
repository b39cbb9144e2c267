/* SPDX-License-Identifier: MIT */
#include "device.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util.h"
#include "banned.h"

void device_profile_solid(struct device_profile *p)
{
        *p = (struct device_profile){
                .name = "solid-state",
                .rotational = false,
                .queue_depth = 32,
                .max_request = 1 << 20,
                /* reading 64 KiB more costs less than one more request here
                 * (~40 us per request, ~2 GB/s) */
                .bridge_bytes = 64 << 10,
                /* reads in the same 10 ms slice of recorded time go file by
                 * file, in offset order: the kernel then finds each file's
                 * page-cache tree and extent map warm from the read before
                 * (a million scattered single-page readahead(2) calls: 10.1 s
                 * of system time in first-access order, 3.4 s grouped this
                 * way in slices of 5 000 reads) */
                .window_us = 10000,
                .readahead_cap = 128 << 10,
        };
}

void device_profile_rotational(struct device_profile *p)
{
        *p = (struct device_profile){
                .name = "rotational",
                .rotational = true,
                .queue_depth = 4,
                .max_request = 4 << 20,
                /* a seek costs ~10 ms, i.e. ~1 MB of transfer */
                .bridge_bytes = 1 << 20,
                /* one sweep by position, for run too: on the emulated 7200 rpm
                 * disk a sweep of the boot tree takes 5 s where the start
                 * itself takes 33 s, and a program reading beside 2-second
                 * windows pulls the head away (15 s); waiting for the sweep
                 * costs it less (7 s) */
                .window_us = UINT64_MAX,
                .readahead_cap = 128 << 10,
        };
}

static int read_u64_file(const char *path, uint64_t *ret)
{
        _cleanup_free_ char *s = NULL;
        int r = read_small_file(path, &s, 64);

        if (r < 0)
                return r;
        s[strcspn(s, "\n")] = 0;
        return parse_u64(s, ret);
}

int device_profile_for_path(const char *path, struct device_profile *ret)
{
        struct stat st;
        char q[128], base[96], devlink[96];
        uint64_t v;
        dev_t dev;

        if (stat(path, &st) < 0)
                return -errno;
        dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        snprintf(base, sizeof(base), "/sys/dev/block/%u:%u", major(dev), minor(dev));
        snprintf(devlink, sizeof(devlink), "%s", base);
        /* a partition's queue is its disk's */
        snprintf(q, sizeof(q), "%s/partition", base);
        if (access(q, F_OK) == 0)
                snprintf(base + strlen(base), sizeof(base) - strlen(base), "/..");
        snprintf(q, sizeof(q), "%s/queue/rotational", base);
        if (read_u64_file(q, &v) >= 0 && v == 1)
                device_profile_rotational(ret);
        else
                device_profile_solid(ret);
        /* Virtual disks often claim to be rotational; until probe measures,
         * treat virtio and NVMe devices as solid-state. */
        {
                char link[PATH_MAX], target[PATH_MAX];
                ssize_t k;
                snprintf(link, sizeof(link), "%s", devlink);   /* the device itself, not "/.." */
                k = readlink(link, target, sizeof(target) - 1);
                if (k > 0) {
                        target[k] = 0;
                        if (strstr(target, "/virtio") || strstr(target, "/nvme"))
                                device_profile_solid(ret);
                        snprintf(ret->name, sizeof(ret->name), "%.63s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
                }
        }
        snprintf(q, sizeof(q), "%s/queue/read_ahead_kb", base);
        if (read_u64_file(q, &v) >= 0)
                ret->readahead_cap = MAX(v << 10, ret->readahead_cap);
        snprintf(q, sizeof(q), "%s/queue/max_sectors_kb", base);
        if (read_u64_file(q, &v) >= 0) {
                ret->readahead_cap = MAX(v << 10, ret->readahead_cap);
                ret->max_request = MIN(ret->max_request < (v << 10) ? (v << 10) : ret->max_request, 4ULL << 20);
        }
        return 0;
}
