/* SPDX-License-Identifier: MIT */
/* The mount table, from /proc/self/mountinfo. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct mount_ent {
        uint64_t dev;     /* st_dev of files on it */
        char *mnt;        /* mount point, unescaped */
        char *fstype;
        char *root;       /* the mounted directory of the filesystem */
};

struct mounts {
        struct mount_ent *m;
        size_t n;
};

/* Read the table (in mount order); mounts_free() in any case. */
int mounts_read(struct mounts *ret);
void mounts_free(struct mounts *mt);
