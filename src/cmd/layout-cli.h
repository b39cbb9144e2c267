/* SPDX-License-Identifier: MIT */
/* readset layout's arguments, shared by its ext4 and btrfs halves. */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "layout/btrfs.h"
#include "layout/layout.h"

struct layout_args {
        bool dry, json, force, undo, unshare;
        enum layout_what what;
        int compress;             /* btrfs: enum blayout_compress, 0: none */
        const char *profile, *ioprio, *under, *path;
};

/* The btrfs layout (layout/btrfs.h), said; the exit status. */
int layout_btrfs(const struct readset *rs, const struct layout_fs *fs, const struct layout_args *a,
                 const struct layout_options *o);
