/* SPDX-License-Identifier: MIT */
/* The analysis behind readset report: where a read set lies on the device,
 * in what order it is read, what it costs on a device profile now, with a
 * replay and after a contiguous layout, and what stands out.  Pure: the
 * caller supplies each file's extent map (FIEMAP) and the profiles. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/client.h"
#include "report/costmodel.h"
#include "device/device.h"
#include "fs/extents.h"
#include "model/readset.h"
#include "replay/planner.h"

/* At most this many pieces (a range cut at extent boundaries is several):
 * report_build fails with -E2BIG beyond it. */
#define RP_MAX_PIECES (4u << 20)

/* One physically contiguous piece of a recorded range, in first-access order. */
struct rp_piece {
        uint32_t file;
        uint64_t offset;      /* in the file */
        uint64_t length;
        uint64_t phys;        /* COST_POS_UNKNOWN when not known or on another device */
        uint64_t time_us;
        bool other_dev;       /* not on the read set's main device */
        bool waited;          /* the program waited for it: it accessed it, or it is metadata
                               * (readahead it never touched was read beside it) */
};

enum {
        RP_HIST_CONTIG,       /* continues where the previous piece ended */
        RP_HIST_1M,           /* < 1 MiB away */
        RP_HIST_16M,
        RP_HIST_256M,
        RP_HIST_4G,
        RP_HIST_FAR,          /* >= 4 GiB */
        RP_HIST_UNKNOWN,      /* position not known */
        _RP_HIST_MAX,
};

struct rp_file_stats {
        uint64_t bytes, ranges, pieces;
        uint64_t extents_touched;  /* distinct extents the ranges lie in */
        uint64_t extents;          /* extents of the whole file */
        uint64_t small_ranges;     /* ranges of at most 16 KiB */
        double plain_s;            /* this file's share of the plain estimate (first profile) */
};

struct rp_scenarios {
        struct cost_result plain;   /* the program's own order and request sizes */
        struct cost_result replay;  /* readset replay's plan */
        struct cost_result layout;  /* the plan after a contiguous layout */
        struct cost_result sequential; /* every byte as one contiguous file, read in order
                                        * (what bench's sequential limit measures) */
        uint64_t plain_meta_requests;  /* of plain.requests, metadata */
        /* bytes each reads on every device (the cost_results count the
         * bytes costed: with main_only, those on the main device) */
        uint64_t plain_bytes, replay_bytes, layout_bytes, sequential_bytes;
        uint64_t replay_unpositioned_bytes;  /* of replay.bytes, those without a position */
        /* the start replayed by readset run: it waits for the replay's reads
         * at most, and for the round trips its client asks anyway */
        struct cost_result run;
        /* on a share whose lookups were recorded: the round trips its
         * client asks for them (client.h); lookups_costed false: opens
         * costed at the profile's open_stat_us each, other lookups not */
        bool lookups_costed;
        struct client_cost lookups_plain, lookups_replay, lookups_warmed;
};

struct rp_alternation {
        uint32_t a, b;              /* files */
        uint64_t switches;          /* moves from one to the other in first-access order */
        uint64_t distance;          /* bytes between them on the device (median of the moves) */
};

struct report {
        struct readset_totals totals;
        uint64_t file_bytes;        /* sizes of the regular files read */
        uint64_t pages;
        uint64_t meta_ranges, meta_bytes, data_ranges, data_bytes;
        uint64_t small_ranges;
        struct rp_piece *pieces;    /* first-access order */
        size_t n_pieces;
        uint64_t main_dev;          /* the device most bytes come from (st_dev / st_rdev) */
        uint64_t other_dev_pieces, other_dev_bytes;
        uint64_t pos_min, pos_max;  /* over known positions on the main device (pos_max exclusive) */
        uint64_t hist[_RP_HIST_MAX];
        uint64_t extents_touched;
        struct rp_file_stats *files;
        struct rp_alternation alt;  /* the pair of files that alternates most, if any */
        uint64_t request_bytes;     /* the program's request size used for the plain estimate */
        /* the network share the most recorded lookups went to, as it is
         * mounted now (report_analyse(); NULL: none): a remote profile's
         * "this machine" column costs it, its lookups and its files */
        char *share_root;
        uint64_t share_dev;
        /* the round trips each recorded lookup made (rs->n_lookups), on the
         * profile report_predict() was last asked for file_shares on a
         * share: NULL when none */
        uint32_t *lookup_trips;
};

/* Analyse rs with the given layouts (one per file, n = rs->n_files; may be
 * NULL: no positions known; a block-device file's offsets are positions
 * already).  request_bytes: the largest request the program's reads
 * become (the device's readahead size). */
int report_build(const struct readset *rs, const struct rp_layout *layouts, uint64_t request_bytes,
                 struct report **ret);
void report_free(struct report *r);
static inline void report_freep(struct report **p) { report_free(*p); }
#define _cleanup_report_ __attribute__((cleanup(report_freep)))

/* Predict plain / replay / layout / sequential on profile p.  plan: the
 * replay's (replay_plan() for a device like p; dev its planner profile),
 * costed as it is.  main_only: only what lies on the main device (p is that
 * device's profile); else everything, as if on one device of that kind
 * (positions on other devices unknown).  file_shares: each file's part of
 * the plain estimate goes to r->files[].plain_s. */
int report_predict(struct report *r, const struct readset *rs, const struct rp_layout *layouts,
                   const struct cost_profile *p, const struct plan *plan, const struct device_profile *dev,
                   bool main_only, bool file_shares, struct rp_scenarios *ret);

/* rs analysed for its costs: the extent map of each file read (the table,
 * *ret_layouts, extents_table_free(); files not written back yet are
 * first, where the caller may: EXTENTS_TABLE_SYNC; *ret_counts, may be
 * NULL: the files whose map is unknown, those still without positions)
 * and the report built with request_bytes.  What
 * both report and layout predict from.  -E2BIG (more than RP_MAX_PIECES),
 * -ENOMEM. */
int report_analyse(const struct readset *rs, uint64_t request_bytes, struct rp_layout **ret_layouts,
                   struct extents_counts *ret_counts, struct report **ret);

/* The same with the replay readset makes for dev with o (replay_plan()):
 * what the report predicts for a replay is what replay does. */
struct replay_options;
int report_predict_replay(struct report *r, const struct readset *rs, const struct rp_layout *layouts,
                          const struct cost_profile *p, const struct replay_options *o,
                          const struct device_profile *dev, bool main_only, bool file_shares,
                          struct rp_scenarios *ret);

/* The prediction for rs's main device, its profile p, planned as replay
 * plans with o for dev (what readset layout says before it moves):
 * report_analyse(), then report_predict_replay() of the main device.
 * -errno. */
int report_predict_here(const struct readset *rs, const struct cost_profile *p, const struct replay_options *o,
                        const struct device_profile *dev, struct rp_scenarios *ret);
