/* SPDX-License-Identifier: MIT */
/* Compressed layout on btrfs: a read set's files rewritten compressed, one
 * after the other in first-access order, by the kernel's defragment with
 * compression (BTRFS_IOC_DEFRAG_RANGE), so that a cold start reads fewer
 * bytes, in one sweep, decompressed by the kernel as it reads.  A rewrite
 * is copy-on-write: each file keeps its inode and content, old or new
 * extents whatever happens; every rewritten file is read back from the
 * device and compared with its SHA-256 from before.  Files sharing extents
 * with a snapshot or a reflinked copy are left alone unless asked (a
 * rewrite unshares them). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "layout/layout.h"

enum blayout_compress {
        BLAYOUT_ZLIB = 1,   /* the kernel's BTRFS_COMPRESS_* numbers */
        BLAYOUT_LZO = 2,
        BLAYOUT_ZSTD = 3,
};
int blayout_compress_from_name(const char *s);
const char *blayout_compress_name(int c);

struct bextent {
        uint64_t logical, physical, length;   /* FIEMAP's: a compressed extent's length is its logical one */
        uint32_t flags;                       /* FIEMAP_EXTENT_* */
};

struct blayout_file {
        uint32_t file;            /* index in the read set */
        uint8_t skip;             /* enum layout_skip */
        bool duplicate;           /* a hard link of an earlier file */
        bool moved, verified;
        int err;
        uint64_t size;
        struct bextent *before, *after;
        size_t n_before, n_after;
};

struct blayout {
        const struct readset *rs;
        struct layout_fs fs;
        int compress;             /* enum blayout_compress */
        bool unshare;             /* rewrite shared files too */
        struct blayout_file *files;   /* the regular files of rs there, first-access order */
        size_t n_files;
        uint64_t outside_files;   /* not below fs.under */
        uint64_t skipped[_LAYOUT_SKIP_MAX];
        uint64_t move_files, move_bytes;
        /* what the run did */
        uint64_t moved_files, moved_bytes, verified_files;
        uint64_t encoded_before, encoded_after;   /* of the movable files' extents, compressed ones */
        int stopped;              /* 0, -EINTR, -EIO (a failed check: stop_file), -ENOSPC, -errno */
        size_t stop_file;
        bool sync_failed;
};

void blayout_free(struct blayout *l);
static inline void blayout_freep(struct blayout **p) { blayout_free(*p); }
#define _cleanup_blayout_ __attribute__((cleanup(blayout_freep)))

/* Look at every file (nothing changed): skipped by reason, the rest to be
 * rewritten.  -ENOMEM only. */
int blayout_survey(const struct readset *rs, const struct layout_fs *fs, int compress, bool unshare,
                   struct blayout **ret);
/* Rewrite what the survey decided, in first-access order, each file checked
 * again first; then sync, read back from the device and compare, and read
 * the extents again.  Stops after the file at hand when *o->stop is set
 * (o's failpoints: fail_signal raised after fail_after files, the
 * fail_corrupt-th read-back taken as differing).
 * -errno only when it cannot start (-EBUSY: another layout runs there). */
int blayout_run(struct blayout *l, const struct layout_options *o);
/* Runs of consecutive data the movable files lie in, in first-access order
 * (a compressed extent follows one that starts at most its logical length
 * before it): before, or after the run. */
uint64_t blayout_pieces(const struct blayout *l, bool after);
