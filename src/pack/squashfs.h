/* SPDX-License-Identifier: MIT */
/* Where a squashfs image keeps a file's data: read from the image's own
 * tables (superblock, inode, directory and fragment tables, as the kernel's
 * squashfs_fs.h lays them out), so that pack can say which byte ranges of
 * the image a start reads, and a replay can read those of the image itself,
 * in order, in large requests.  A reader only: images are written by
 * mksquashfs.  Every offset is checked against the image's size; metadata
 * compressed with zstd or gzip (what readset links) is read, other
 * compressors give -EOPNOTSUPP. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"

struct sqfs;

/* Open the image at path (mapped read-only).  -EBADMSG not a squashfs 4.0
 * image (or a damaged one), -EOPNOTSUPP its metadata's compressor, -errno. */
int sqfs_open(const char *path, struct sqfs **ret);
/* The same, of the file open at fd (mapped: fd may be closed after). */
int sqfs_open_fd(int fd, struct sqfs **ret);
/* The compressor of the squashfs image at fd, from its superblock alone:
 * SQFS_COMP_*, or -EBADMSG (not a squashfs 4 image), -errno. */
#define SQFS_COMP_GZIP 1
#define SQFS_COMP_XZ 4
#define SQFS_COMP_LZ4 5
#define SQFS_COMP_ZSTD 6
int sqfs_compressor_fd(int fd);
void sqfs_close(struct sqfs *s);
static inline void sqfs_closep(struct sqfs **p) { sqfs_close(*p); }
#define _cleanup_sqfs_ __attribute__((cleanup(sqfs_closep)))

/* Where the file's metadata lies: the image's tables, [start, end). */
void sqfs_tables(const struct sqfs *s, uint64_t *ret_start, uint64_t *ret_end);

/* The ranges of the image (model/readset.h's spans) that hold bytes [offset, offset+length) of the
 * regular file at path ("/usr/lib/x", relative to the image's root), in
 * file order, appended to *spans (n, cap: grow_array's).  -ENOENT no such
 * regular file, -EBADMSG damaged tables, -ENOMEM. */
int sqfs_file_spans(struct sqfs *s, const char *path, uint64_t offset, uint64_t length, struct rs_span **spans,
                    size_t *n, size_t *cap);
