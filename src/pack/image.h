/* SPDX-License-Identifier: MIT */
/* Compressed images in the order a start reads them, built by the image
 * tools Debian ships (squashfs-tools' mksquashfs -sort; erofs-utils'
 * mkfs.erofs, whose 1.5 cannot order data: built in its own order).  No
 * image writer of readset's own. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/readset.h"
#include "util/progress.h"

enum pack_image {
        PACK_SQUASHFS,
        PACK_EROFS,
};

enum pack_compress {
        PACK_ZSTD,
        PACK_XZ,
        PACK_LZ4,
        PACK_GZIP,
        _PACK_COMPRESS_MAX,
};

int pack_image_from_name(const char *s);
int pack_compress_from_name(const char *s);
const char *pack_compress_name(enum pack_compress c);

/* How many files of an order mksquashfs can place one by one: one
 * priority each, 32767 down to 1 (the rest of the tree has 0); the files
 * after share priority 1. */
#define PACK_DISTINCT_PRIORITIES 32767

struct pack_order_counts {
        uint64_t listed;
        uint64_t unnamable;     /* a newline in the name: a sort file cannot say it */
};

/* The sort file of a portable read set's files (paths relative to the
 * image's root), first needed first: "NAME PRIORITY" lines, NAME escaped
 * for mksquashfs (a backslash before blanks, backslashes and a leading #),
 * prefixed by prefix (the tree's absolute path, or "" for names relative
 * to it).  -errno (a write error). */
int pack_order_write(FILE *f, const struct readset *portable, const char *prefix, struct pack_order_counts *c);

struct pack_build {
        enum pack_image image;
        enum pack_compress compress;
        const char *tree;       /* absolute, resolved */
        const char *sort_file;  /* squashfs */
        const char *out;        /* a new file in a directory of readset's own */
        uint32_t block_size;    /* squashfs: bytes of a data block (0: the tool's) */
        uint32_t mkfs_time;     /* squashfs: the image's own timestamp (reproducible; EROFS
                                 * takes SOURCE_DATE_EPOCH from the environment) */
        uint8_t uuid[16];       /* EROFS's filesystem UUID (reproducible) */
        /* told how far the tool is (NULL: nobody): the tree looked through
         * first (its files' bytes, as the tools go: across mounts), then
         * the bytes the tool has read of them (/proc/PID/io; its time where
         * that cannot be read) */
        progress_fn *progress;
        void *progress_userdata;
};

/* The byte ranges of the squashfs image at path that the portable read set
 * p's start reads: the image's tables (the lookups read them first), then
 * the data blocks and fragments holding each file's ranges by position
 * (the files' order in an access-ordered image), ranges less than
 * PACK_SPAN_GAP apart read as one; the
 * image's size and head digest with them (model/readset.h's rs_image).
 * -EOPNOTSUPP metadata compressed with what readset cannot read (lzo, the
 * old lzma), -ENOENT a file of p not in the image, -EBADMSG, -ENOMEM. */
#define PACK_SPAN_GAP (32 << 10)
int pack_image_spans(const char *path, const struct readset *p, struct rs_image **ret);
/* The same of the squashfs image open at fd, where p's paths are its own
 * below a prefix of skip bytes (a portable read set bound to the root the
 * image is mounted at): its spans and size, no digests (another image than
 * p's, or p has none).  Errors as above. */
int image_spans_here(int fd, const struct readset *p, size_t skip, struct rs_image **ret);

/* Run the image tool; its errors on standard error.  -ENOENT when the
 * tool is not installed, -EIO when it failed, -EINVAL for a compressor
 * the image type does not have. */
int pack_build_image(const struct pack_build *b);
