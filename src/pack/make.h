/* SPDX-License-Identifier: MIT */
/* pack --image: a tree's image with a portable read set's files first
 * (pack/image.h), made in a directory of readset's own beside the output
 * and renamed over it once whole, its read set written beside it first (an
 * image is never there without its read set), reproducible (the same tree
 * and read set: the same bytes).  Never prints: what failed comes back as
 * data (struct pack_make_result). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/readset.h"
#include "pack/image.h"

struct pack_make_options {
        enum pack_image image;
        enum pack_compress compress;
        uint32_t block_size;            /* squashfs: bytes of a data block (0: the tool's) */
        const char *root;               /* the tree: absolute, resolved */
        const char *out;                /* the image; OUT.readset beside it */
        int64_t source_date_epoch;      /* SOURCE_DATE_EPOCH as given, -1: not set */
        uint64_t created_unix;          /* the recording's time: the image's without the above */
        /* called (when set) just before the image tool runs, whose own
         * messages go to standard error */
        void (*tool_starts)(const struct pack_make_options *o, void *userdata);
        void *userdata;
        /* told how far the image tool is (pack_build.progress; NULL: nobody) */
        progress_fn *progress;
        void *progress_userdata;
};

/* What stopped pack_make(), in the order it is done. */
enum pack_make_step {
        PACK_MAKE_DONE,
        PACK_MAKE_INSIDE,       /* out's directory lies in the tree */
        PACK_MAKE_PRIVATE_DIR,  /* no directory of readset's own beside out */
        PACK_MAKE_PATHS,        /* out of memory naming the files */
        PACK_MAKE_SORT,         /* the sort file not written */
        PACK_MAKE_TREE,         /* the tree not looked through (EROFS's epoch) */
        PACK_MAKE_EPOCH,        /* SOURCE_DATE_EPOCH not set (EROFS) */
        PACK_MAKE_ENCODE,       /* the read set not encoded (the UUID) */
        PACK_MAKE_TOOL_MISSING, /* the image tool is not installed: tool, package */
        PACK_MAKE_TOOL_FAILED,  /* it ran and failed (it said why on standard error) */
        PACK_MAKE_TOOL_RUN,     /* it could not be run */
        PACK_MAKE_READ_BACK,    /* the image built not read back (its spans) */
        PACK_MAKE_WRITE_READSET,/* OUT.readset not written */
        PACK_MAKE_RENAME,       /* the image not renamed to out (OUT.readset stays) */
};

struct pack_make_result {
        enum pack_make_step failed;     /* PACK_MAKE_DONE: made */
        int error;                      /* -errno of the step that failed */
        const char *tool, *package;     /* the image tool and the Debian package holding it */
        char *side;                     /* OUT.readset (the caller frees it) */
        uint32_t mkfs_time;             /* the image's own time */
        uint64_t tool_epoch;            /* EROFS: the SOURCE_DATE_EPOCH set for the tool (0: none set) */
        bool files_only;                /* squashfs metadata compressed with what readset
                                         * cannot read back (pack_image_spans): the read set
                                         * replays the files, not the image */
        bool have_size;
        uint64_t size;                  /* the image's bytes, once renamed */
        size_t ordered;                 /* files placed one by one in the read set's order */
};

/* Build the image of o->root with the portable read set p's files first
 * (in its order: squashfs; EROFS in mkfs.erofs's own), at o->out, and p
 * (with the image's spans, squashfs) at OUT.readset.  0, or -errno with
 * res->failed saying where; nothing is left of the attempt but OUT.readset
 * when the last rename failed.  For EROFS without SOURCE_DATE_EPOCH this
 * process's SOURCE_DATE_EPOCH is set (the tool reads it): to the tree's
 * newest mtime.  res->side is set once named (NULL before); free it
 * with pack_make_result_done(). */
int pack_make(const struct pack_make_options *o, struct readset *p, struct pack_make_result *res);
void pack_make_result_done(struct pack_make_result *res);

/* The steps, for tests. */
/* Does path's directory lie at or below root (resolved; "/" holds all)? */
bool pack_inside_tree(const char *path, const char *root);
/* A new directory of readset's own beside path: DIR/.BASE.pack.XXXXXX (0700). -errno. */
int pack_private_dir_beside(const char *path, char **ret);
/* The newest mtime in the tree, in seconds (not across mounts). -errno. */
int pack_newest_mtime(const char *root, uint64_t *ret);
/* The image's own time: SOURCE_DATE_EPOCH (>= 0) when given, else the
 * recording's, at most UINT32_MAX. */
uint32_t pack_mkfs_time(int64_t source_date_epoch, uint64_t created_unix);
/* A name-based UUID (version 5's bits) from the encoded read set p's
 * digest: the same read set, the same UUID.  -errno. */
int pack_image_uuid(const struct readset *p, uint8_t uuid[16]);
