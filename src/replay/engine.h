/* SPDX-License-Identifier: MIT */
/* The engine: executes a plan, filling the page cache.  Never writes; opens
 * only regular files (and, for metadata, the block devices the read set
 * names) whose identity still matches the read set. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay/planner.h"
#include "model/readset.h"

enum engine_method {
        ENGINE_READ = 0,      /* io_uring buffered reads into a scratch ring */
        ENGINE_FADVISE = 1,   /* io_uring IORING_OP_FADVISE(WILLNEED), then wait */
        ENGINE_READAHEAD = 2, /* readahead(2) calls, then wait */
        _ENGINE_METHOD_MAX,   /* the methods a user may name (--method) */
        /* For tests: opens, checks and accounts as the others do, but
         * issues none of the plan's reads, metadata or data (an image_fd's
         * ranges are still read); "null", a name that
         * engine_method_from_name() does not know. */
        ENGINE_NULL = _ENGINE_METHOD_MAX,
};

struct engine_options {
        enum engine_method method;
        uint32_t queue_depth;     /* io_uring methods */
        uint32_t threads;         /* readahead submitters (0: one per CPU) */
        uint64_t request_bytes;   /* scratch buffer per request (ENGINE_READ) */
        uint64_t readahead_cap;   /* split readahead/fadvise calls to this */
        bool wait;                /* until the data is resident (else: submit and go) */
        bool skip_cached;         /* ask the page cache first (cachestat, mincore) */
        bool lookups;             /* stat each recorded lookup path */
        /* A snapshot's pages, once resident, marked used twice (replay/mark.c):
         * on the kernel's active list, as the service's hot pages were */
        bool mark_used;
        /* Where the engine says why each file was skipped: n_files entries
         * of enum fs_skip (fs/open.h), FS_SKIP_NONE for one opened or never
         * tried; NULL: only counted. */
        uint8_t *skip_reasons;
        /* Files open at once at most (0: what the open-file limit leaves,
         * less a reserve); a plan of more files runs in windows of this
         * many, each closed before the next. */
        uint32_t max_open_files;
        /* A portable read set's image, mounted from the file image_fd (-1:
         * none): its byte ranges the start reads (image), read ahead in
         * order beside the files, in large requests. */
        int image_fd;
        const struct rs_image *image;
        uint64_t image_cap;       /* what one readahead(2) call of it reads (0: readahead_cap) */
        uint64_t image_bridge;    /* its ranges read as one where apart by less than this */
        bool image_unverified;    /* image has no digest (another image's spans): not checked */

        /* Where the bytes of each of the plan's reads are added as it is
         * dealt with (issued, found cached or skipped), for a caller in
         * another thread or process to see how far the replay is (NULL:
         * not counted). */
        _Atomic uint64_t *progress_bytes;

        /* Polled between submissions; returning true stops the replay. */
        bool (*stop)(void *userdata);
        void *stop_userdata;
};

struct engine_stats {
        uint64_t files;            /* files the plan uses */
        uint64_t files_opened;
        uint64_t files_changed;    /* identity (dev, ino, size, mtime) differs */
        uint64_t files_differ;     /* of those, known by content and whose bytes differ */
        uint64_t files_checked;    /* known by content, and found the same (their ranges read for that) */
        uint64_t bytes_checked;    /* what those reads were */
        uint64_t files_missing;
        uint64_t files_not_regular;/* symlink, FIFO, device, directory now */
        uint64_t files_error;      /* could not be opened for another reason */
        uint64_t files_refused;    /* on a pseudo filesystem, or recorded without identity */
        uint64_t windows;          /* runs of at most max_open_files files (1: all at once) */
        uint64_t reads;            /* requests issued */
        uint64_t bytes;            /* bytes requested */
        uint64_t bytes_cached;     /* skipped: already in the page cache */
        uint64_t bytes_skipped;    /* skipped: their file was skipped */
        uint64_t bytes_missing;    /* still not resident after waiting */
        uint64_t bytes_marked;     /* mark_used: resident pages marked used */
        uint64_t lookups;          /* paths stat'ed */
        uint64_t image_bytes;      /* read of the image file (image_fd) */
        bool image_verified;       /* ... and found the image packed: the files were not opened */
        uint64_t elapsed_us;
        uint64_t meta_us, submit_us;  /* phases: metadata; data (with lookups beside) */
        bool stopped;              /* stop() ended it early */
        const char *fell_back;     /* why io_uring could not be used (readahead(2) was), or NULL */
};

void engine_options_default(struct engine_options *o);
int engine_run(const struct readset *rs, const struct plan *plan, const struct engine_options *opt,
               struct engine_stats *ret);
const char *engine_method_name(enum engine_method m);
/* Submitting threads the options amount to (threads, or 4 per CPU). */
unsigned engine_threads(const struct engine_options *opt);
int engine_method_from_name(const char *s);
