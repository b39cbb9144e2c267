/* SPDX-License-Identifier: MIT */
/* readset report's output: the text report (80 columns) and the same
 * figures as one JSON document. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "model/readset.h"
#include "report/report.h"
#include "report/summary.h"

struct report_doc {
        const char *path;                  /* the read set's file */
        const struct readset *rs;
        const struct report *r;
        const struct report_column *cols;  /* this machine's first (when known), the reference last */
        size_t n_cols;
        size_t top;                        /* files and directories listed */
        uint64_t extent_skipped;           /* files whose positions are unknown */
        uint64_t unwritten;                /* files with no position yet (not written back) */
        const struct report_summary *sum;
};

void report_write_text(FILE *f, const struct report_doc *d);
void report_write_json(FILE *f, const struct report_doc *d);
