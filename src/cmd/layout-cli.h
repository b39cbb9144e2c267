/* SPDX-License-Identifier: MIT */
/* readset layout's arguments, shared by its ext4 and btrfs halves. */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "layout/btrfs.h"
#include "layout/layout.h"
#include "report/report.h"

struct layout_args {
        bool dry, json, force, undo, unshare, quiet;
        enum layout_what what;
        int compress;             /* btrfs: enum blayout_compress, 0: none */
        const char *profile, *ioprio, *under, *path;
};

/* The predictions of the report's cost model for this device. */
struct prediction {
        bool have;
        char profile[96];
        bool rotational;
        struct rp_scenarios s;
};

/* The btrfs layout (layout/btrfs.h) said in text: the survey, and after
 * the run what it did; the end of a run, said, and the exit status. */
void layout_btrfs_print_survey(const struct layout *l, const struct layout_args *a);
void layout_btrfs_print_run(const struct layout *l, double seconds);
int layout_btrfs_say_end(const struct layout *l);
