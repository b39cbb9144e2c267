/* SPDX-License-Identifier: MIT */
/* The steps the engine's parts take (steps.c): the state of one replay and
 * what every fill method (fill-*.c) and the warmers (warm.c) do with it --
 * open a file once, ask the cache first, settle what is not resident, stop
 * when asked.  The orchestrator (engine.c) calls all of them; none of them
 * calls it.  Not for use outside src/replay/. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay/engine.h"

/* e->fds[] per file */
enum { FD_UNTRIED = -1, FD_SKIPPED = -2, FD_OPENING = -3 };
/* e->issued[] per read */
enum { READ_NOT_ISSUED = 0, READ_ISSUED = 1, READ_FOUND_CACHED = 2 };
/* e->file_cached[] per file: is the span of its planned reads all cached? */
enum { FILE_UNKNOWN = 0, FILE_CHECKING = 1, FILE_ALL_CACHED = 2, FILE_NOT_ALL = 3 };

/* A buffer each thread settles ranges with (reads what readahead left out). */
#define SETTLE_BUF (1u << 20)

struct eng {
        /* the files are those of an image whose bytes were checked: their
         * identity (size, mtime) is enough */
        atomic_bool trusted;
        bool dry;                 /* the null method: no plan read is issued, metadata or data */
        const struct readset *rs;
        const struct plan *plan;
        const struct engine_options *opt;
        atomic_int *fds;          /* per file: FD_UNTRIED, FD_OPENING, FD_SKIPPED or an fd;
                                   * the thread that claims it (FD_OPENING) opens it */
        size_t from, to;          /* the data reads of this window: [from, to) */
        atomic_size_t next;       /* plan->by_position: the next read to take */
        uint8_t *counted;         /* per file: its opening was counted (a later window reopens it);
                                   * COUNTED_CHECK_LATER: and its content is to be checked */
        atomic_uchar *issued;     /* per read: READ_*; submitted ones' pages may be in flight */
        atomic_uchar *file_cached; /* per file: FILE_* */
        uint64_t *span_lo, *span_hi; /* per file: the bytes its planned data reads cover */
        uint8_t *by_reading;      /* per file, set by its opener: residency_by_reading() */
        atomic_bool stop;
        atomic_bool cold_seen;     /* a thread found data not cached */
        atomic_bool workers_done;
        pthread_mutex_t stop_lock;
        pthread_mutex_t wake_lock; /* the warmers sleep until one of the three above */
        pthread_cond_t wake;
};

/* A fill method (fio's engines/ are the model): fills the page cache with
 * the plan's data reads [plan->n_meta, plan->n_reads), adding to st, and
 * when e->opt->wait, settles them before returning. */
struct fill_method {
        const char *name;
        int (*fill)(struct eng *e, struct engine_stats *st);
        bool uring;               /* needs io_uring: readahead(2)'s method where it is not usable */
};
extern const struct fill_method fill_readahead, fill_uring_read, fill_uring_fadvise, fill_null;

/* The state of one replay: the plan's files counted in st->files. */
int engine_state_init(struct eng *e, const struct readset *rs, const struct plan *plan,
                      const struct engine_options *opt, struct engine_stats *st);
void engine_state_free(struct eng *e);
/* Close the files' descriptors (left FD_UNTRIED: a later window opens them
 * again, checked again); keep_devices: not the block devices'. */
void engine_close_files(struct eng *e, bool keep_devices);
/* The content of the files opened to be checked later (FS_OPEN_CONTENT_LATER),
 * checked now that their reads were issued (counted in st). */
#define COUNTED_CHECK_LATER 2
void engine_check_contents(struct eng *e, struct engine_stats *st);

/* Asking the page cache before every read pays on a warm cache and costs
 * on a cold one (readahead(2) skips cached pages by itself): a thread's
 * probe asks less once it met a run of reads with nothing cached. */
struct cache_probe {
        unsigned cold_run, since;
};

/* Whether to stop (the caller's stop callback, polled when poll_callback;
 * counted in st). */
bool engine_stopping(struct eng *e, struct engine_stats *st, bool poll_callback);
/* The descriptor of a file, as far as it is known (an fd or FD_*). */
int engine_fd(struct eng *e, uint32_t file);
/* The file opened and checked, once for all threads (one that finds another
 * opening it waits); < 0 when it is skipped (counted in st). */
int engine_get_fd(struct eng *e, uint32_t file, struct engine_stats *st);
/* The file of read i, opened, and the cache asked (as probe says; always,
 * without one): the descriptor, or -1 when the read is to be skipped (file
 * skipped, or range cached), with the bytes counted in st. */
int engine_prepare_read(struct eng *e, size_t i, struct engine_stats *st, struct cache_probe *probe);
/* Read what is not resident yet of a read (pages in flight are waited for,
 * pages the kernel dropped or skipped are fetched), then count what still
 * is not in st->bytes_missing.  issued: this replay submitted it. */
void engine_settle_range(int fd, const struct plan_read *pr, bool issued, uint8_t *buf, struct engine_stats *st);
/* Wake the warmers (data found not cached, the workers done, a stop). */
void engine_wake_warmers(struct eng *e);
void engine_add_stats(struct engine_stats *a, const struct engine_stats *b);
/* The read set's resident pages of the files whose last data read
 * (last_read[file], an index into plan->reads) is in this window, marked
 * used (mark.c), counted in st->bytes_marked.  0; -ENOMEM (nothing
 * marked, or not all). */
int engine_mark_used(struct eng *e, const size_t *last_read, struct engine_stats *st);
