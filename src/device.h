/* SPDX-License-Identifier: MIT */
/* What a storage device wants from a replay: how many requests in flight,
 * how large, whether seeks dominate.  readset probe (to come) measures it;
 * until then it is derived from the block layer's settings, with the
 * rotational flag trusted only as a hint. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct device_profile {
        char name[64];           /* e.g. "vda" or a reference profile's name */
        bool rotational;         /* seeks dominate: sort by position inside time windows */
        uint32_t queue_depth;    /* requests to keep in flight */
        uint64_t max_request;    /* bytes per request */
        uint64_t bridge_bytes;   /* read through gaps smaller than this */
        uint64_t window_us;      /* reads in a window of recorded time are reordered: by
                                  * position if rotational, else by file and offset */
        uint64_t readahead_cap;  /* what one readahead(2) call reads at most */
};

/* A profile for a non-rotational device (SSD, NVMe, virtual disk). */
void device_profile_solid(struct device_profile *p);
/* A profile for a single-actuator disk. */
void device_profile_rotational(struct device_profile *p);
/* The profile of the block device holding path (sysfs queue settings). */
int device_profile_for_path(const char *path, struct device_profile *ret);
