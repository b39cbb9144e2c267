/* SPDX-License-Identifier: MIT */
/* What the report lists and says: the files and directories ranked by
 * bytes, ranges and predicted cost, and the plain-language findings. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"
#include "report/costmodel.h"
#include "report/report.h"

/* One device the report predicts for: its profile and the four costs. */
struct report_column {
        struct cost_profile profile;
        struct rp_scenarios s;
};

struct rp_dirstat {
        char *dir;
        uint64_t bytes, ranges, files;
};

/* A file and the key it is ranked by (descending). */
struct rp_rank {
        uint32_t file;
        double key;
};

#define REPORT_MAX_FINDINGS 16
#define REPORT_FINDING_MAX 640

struct report_summary {
        struct rp_rank *by_bytes, *by_ranges, *by_cost;   /* every file, ranked */
        struct rp_dirstat *dirs;      /* parent directories of regular files, most bytes first */
        size_t n_dirs;
        size_t *dir_by_ranges;        /* indices into dirs, most ranges first */
        char findings[REPORT_MAX_FINDINGS][REPORT_FINDING_MAX];
        size_t n_findings;
};

/* ref: the reference device's column (its costs decide some findings; may
 * be NULL).  -ENOMEM. */
int report_summarize(const struct readset *rs, const struct report *r, const struct report_column *ref,
                     struct report_summary *ret);
void report_summary_free(struct report_summary *s);

/* The last `width` characters of s, made printable, "..." in front when
 * cut; returns buf. */
const char *rp_tail(const char *s, size_t width, char *buf, size_t size);
