/* SPDX-License-Identifier: MIT */
/* The planner: a pure function from a read set, a device profile and the
 * files' positions to an ordered list of reads.  No I/O: everything it
 * needs is in its arguments (replay/policy.c gathers them). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/device.h"
#include "fs/extents.h"
#include "model/readset.h"

struct plan_read {
        uint32_t file;      /* index into the read set's files */
        uint64_t offset;
        uint64_t length;
        uint64_t time_us;   /* when the recorded start first needed any of it */
};

struct plan {
        struct plan_read *reads;  /* in execution order */
        size_t n_reads;
        size_t n_meta;            /* reads[0 .. n_meta) are filesystem metadata */
        uint32_t *lookups;        /* indices into rs->lookups: one per distinct path, first use first */
        size_t n_lookups;
        size_t lookups_thinned;   /* distinct paths left out (plan_options.lookup_stride) */
        uint64_t bytes;           /* planned */
        uint64_t bytes_recorded;  /* in the read set's usable files */
        uint64_t bytes_cut;       /* left out by the byte budget */
        bool by_position;         /* data sorted by position on the device: to be
                                   * submitted in this order by every thread */
};

struct plan_options {
        uint64_t max_bytes;       /* 0 = no limit; the latest-needed reads go first */
        bool accessed_only;       /* leave out file ranges only brought in by readahead */
        /* Optional: where each file's data lies on its device (one extent map
         * per file of the read set, as extents_table_read() gives them), so
         * that a rotational device can be read in order; NULL: not known. */
        const struct rp_layout *layouts;
        /* Optional: how many lookups of the directory dir (len bytes, no
         * trailing slash) to keep: the first in first-use order, then one in
         * this many; 0 or 1 keeps them all.  Listings are always kept. */
        uint32_t (*lookup_stride)(void *userdata, const char *dir, size_t len);
        void *lookup_stride_userdata;
};

int planner_build(const struct readset *rs, const struct device_profile *dev,
                  const struct plan_options *opt, struct plan **ret);
void plan_free(struct plan *p);
static inline void plan_freep(struct plan **p) { plan_free(*p); }
#define _cleanup_plan_ __attribute__((cleanup(plan_freep)))
