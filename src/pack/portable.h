/* SPDX-License-Identifier: MIT */
/* Portable read sets: files named by their path below a root and known by
 * content (size, mtime to the second, the digest of the ranges the start
 * reads) instead of device and inode, so that a read set recorded on one
 * copy of a tree (a build machine's, one copy of an image) replays on every
 * other copy, and skips, counted, each file whose content differs there. */
#pragma once

#include <stdint.h>

#include "model/readset.h"

struct portable_counts {
        uint64_t files;         /* made portable */
        uint64_t outside;       /* regular files not below the root: left out */
        uint64_t unusable;      /* changed, missing or unreadable now: left out */
        uint64_t not_read;      /* only read ahead, never read by the start: left out */
        uint64_t not_files;     /* metadata through a block device, unresolved: left out */
        uint64_t lookups;       /* kept (below the root) */
        uint64_t lookups_outside;
};

/* The files of rs below root (an absolute path without symlinks, "/" for
 * the whole tree; a directory whose files still are those recorded) as a
 * portable read set, their paths relative to root ("/usr/bin/x" for
 * ROOT/usr/bin/x), with the ranges the start read (accessed: not those
 * only read ahead), their digests read now; mtimes after clamp_s (seconds
 * since the epoch; -1: none) taken as clamp_s, as image builders given
 * SOURCE_DATE_EPOCH write them.  -ENOMEM, -ELIBACC (no
 * digests here), -EINVAL (root not absolute). */
int portable_make(const struct readset *rs, const char *root, int64_t clamp_s, struct readset **ret,
                  struct portable_counts *c);

/* Bind a portable read set to the root it is replayed against (NULL or "/":
 * as it is): its paths joined to root, its files on root's device dev (for
 * the device's plan; identity is by content).  -ENOMEM. */
int portable_bind(struct readset *rs, const char *root, uint64_t dev);

/* The file the image im is mounted from at root: the backing file of the
 * loop device root's file system is on (at offset 0), when its size and
 * head digest are im's (a copy of the very image).  An fd (O_RDONLY), or
 * -ENODEV not a loop device, -ESTALE another image, -errno. */
int portable_image_open(const char *root, const struct rs_image *im);
/* The squashfs image root is mounted from, whichever it is (another image
 * of the same files, one the read set has no spans of): an fd of it, as
 * above, and the spans the bound read set rs's ranges lie in there (no
 * digests: *ret's files still need their content checked).  -ENODEV,
 * -EOPNOTSUPP (not a squashfs readset can read), -ENOENT (a file not in
 * it), -errno. */
int portable_image_here(const char *root, const struct readset *rs, struct rs_image **ret);
/* The compressor of the squashfs image root is mounted from (as above):
 * SQFS_COMP_* (pack/squashfs.h), or -ENODEV, -EBADMSG (not squashfs),
 * -errno. */
int portable_image_compressor(const char *root);

static inline bool readset_is_portable(const struct readset *rs)
{
        return rs->rec_flags & RS_REC_PORTABLE;
}
