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

/* The btrfs backend is layout_btrfs_ops (layout.h): its survey skips
 * shared (unless the request unshares), nodatacow and already compressed
 * files; its run rewrites each file in first-access order, then syncs,
 * reads each back from the device, compares, and reads its extents again
 * (the layout's encoded_after, files' after).  *o->stop, o's failpoints:
 * fail_signal raised after fail_after files, the fail_corrupt-th read-back
 * taken as differing.  -EBUSY another layout runs there. */

