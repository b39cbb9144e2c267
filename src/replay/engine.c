/* SPDX-License-Identifier: MIT */
#include "replay/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct cachestat_range_ {
        uint64_t off, len;
};

struct cachestat_ {
        uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

const char *engine_method_name(enum engine_method m)
{
        switch (m) {
        case ENGINE_READ: return "read";
        case ENGINE_FADVISE: return "fadvise";
        case ENGINE_READAHEAD: return "readahead";
        default: return "unknown";
        }
}

int engine_method_from_name(const char *s)
{
        for (int m = 0; m < _ENGINE_METHOD_MAX; m++)
                if (strcmp(s, engine_method_name((enum engine_method)m)) == 0)
                        return m;
        return -EINVAL;
}

void engine_options_default(struct engine_options *o)
{
        *o = (struct engine_options){
                .method = ENGINE_READAHEAD,
                .queue_depth = 32,
                .request_bytes = 1 << 20,
                .readahead_cap = 128 << 10,
                .wait = true,
                .skip_cached = true,
                .lookups = true,
        };
}

static atomic_int cachestat_works = -1;   /* -1 unknown, 0 no, 1 yes */

static int64_t mincore_bytes(int fd, uint64_t off, uint64_t len)
{
        long page = sysconf(_SC_PAGESIZE);
        uint64_t start = off & ~((uint64_t)page - 1), end = off + len, n, count = 0;
        unsigned char *vec;
        void *m;

        if (end <= start)
                return 0;
        n = (end - start + (uint64_t)page - 1) / (uint64_t)page;
        m = mmap(NULL, end - start, PROT_READ, MAP_SHARED, fd, (off_t)start);
        if (m == MAP_FAILED)
                return -errno;
        vec = malloc(n);
        if (!vec) {
                munmap(m, end - start);
                return -ENOMEM;
        }
        if (mincore(m, end - start, vec) < 0) {
                int e = -errno;
                free(vec);
                munmap(m, end - start);
                return e;
        }
        for (uint64_t i = 0; i < n; i++)
                count += vec[i] & 1;
        free(vec);
        munmap(m, end - start);
        return (int64_t)(count * (uint64_t)page);
}

int64_t engine_cached_bytes(int fd, uint64_t off, uint64_t len)
{
        if (atomic_load_explicit(&cachestat_works, memory_order_relaxed) != 0) {
                struct cachestat_range_ cr = { off, len };
                struct cachestat_ cs;
                if (syscall(__NR_cachestat, fd, &cr, &cs, 0) == 0) {
                        atomic_store_explicit(&cachestat_works, 1, memory_order_relaxed);
                        return (int64_t)(cs.nr_cache * (uint64_t)sysconf(_SC_PAGESIZE));
                }
                if (errno != ENOSYS && errno != EPERM && errno != EOPNOTSUPP)
                        return -errno;
                atomic_store_explicit(&cachestat_works, 0, memory_order_relaxed);
        }
        return mincore_bytes(fd, off, len);
}

/* ---- opening files ---------------------------------------------------- */

enum { FD_UNTRIED = -1, FD_SKIPPED = -2, FD_OPENING = -3 };
/* e->issued[] per read */
enum { READ_NOT_ISSUED = 0, READ_ISSUED = 1, READ_FOUND_CACHED = 2 };
/* e->file_cached[] per file: is the span of its planned reads all cached? */
enum { FILE_UNKNOWN = 0, FILE_CHECKING = 1, FILE_ALL_CACHED = 2, FILE_NOT_ALL = 3 };

static bool identity_ok(const struct rs_file *f, const struct stat *s)
{
        if (f->kind == RS_FILE_BLOCKDEV)
                return S_ISBLK(s->st_mode) && s->st_rdev == f->dev;
        return S_ISREG(s->st_mode) && s->st_dev == f->dev && s->st_ino == f->ino &&
               (!f->size || (uint64_t)s->st_size == f->size) &&
               (!f->mtime_ns || (int64_t)s->st_mtim.tv_sec * 1000000000LL + s->st_mtim.tv_nsec == f->mtime_ns);
}

/* Open the file only if it is still the one recorded.  The path is checked
 * first without opening anything (lstat: a FIFO, device node or symlink
 * there is skipped untouched), then opened without following symlinks,
 * without waiting (O_NONBLOCK), without taking a terminal, without changing
 * access times, and checked again through the descriptor: what was opened
 * must be the very inode checked, or it is closed unread.  (Only a file
 * swapped in between the two checks is ever opened and closed unread.) */
int engine_open_checked(const struct rs_file *f, struct engine_stats *st)
{
        int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        struct stat s, s2;
        int fd;

        if (fstatat(AT_FDCWD, f->path, &s, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        st->files_missing++;
                else
                        st->files_error++;
                return FD_SKIPPED;
        }
        if (f->kind == RS_FILE_BLOCKDEV ? !S_ISBLK(s.st_mode) : !S_ISREG(s.st_mode)) {
                st->files_not_regular++;
                return FD_SKIPPED;
        }
        if (!identity_ok(f, &s)) {
                st->files_changed++;
                return FD_SKIPPED;
        }
        fd = open(f->path, flags | O_NOATIME);
        if (fd < 0 && errno == EPERM)
                fd = open(f->path, flags);
        if (fd < 0) {
                st->files_error++;
                return FD_SKIPPED;
        }
        if (fstat(fd, &s2) < 0 || s2.st_dev != s.st_dev || s2.st_ino != s.st_ino || !identity_ok(f, &s2)) {
                close(fd);
                st->files_changed++;
                return FD_SKIPPED;
        }
        st->files_opened++;
        return fd;
}

struct eng {
        const struct readset *rs;
        const struct plan *plan;
        const struct engine_options *opt;
        atomic_int *fds;          /* per file: FD_UNTRIED, FD_OPENING, FD_SKIPPED or an fd;
                                   * the worker that claims it (FD_OPENING) opens it */
        atomic_size_t next;       /* plan->by_position: the next read to take */
        atomic_uchar *issued;     /* per read: READ_*; submitted ones' pages may be in flight */
        atomic_uchar *file_cached; /* per file: FILE_* */
        uint64_t *span_lo, *span_hi; /* per file: the bytes its planned data reads cover */
        atomic_bool stop;
        atomic_bool cold_seen;     /* a worker found data not cached */
        atomic_bool workers_done;
        pthread_mutex_t stop_lock;
        pthread_mutex_t wake_lock; /* the warmers sleep until one of the three above */
        pthread_cond_t wake;
        /* io_uring methods (one thread) */
        struct io_uring ring;
        bool ring_ok;
        uint8_t *bufs;
        uint32_t *free_slots;
        uint32_t n_free, inflight;
        uint64_t chunk;
};

struct worker {
        struct eng *e;
        unsigned tid, n;          /* handles the files with index % n == tid */
        struct engine_stats st;
        uint8_t *buf;             /* for reads that settle what readahead left out */
        pthread_t thread;
};

#define SETTLE_BUF (1u << 20)
/* inode and dentry warmers: one per data worker (each stat may wait for a
 * metadata read: more of them in flight) */
#define MAX_WARMERS 16

static void wake_warmers(struct eng *e)
{
        pthread_mutex_lock(&e->wake_lock);
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->wake_lock);
}

static bool stopping(struct eng *e, struct engine_stats *st, bool poll_callback)
{
        /* the callback (a waitpid, say) is not thread-safe: one caller at a time */
        if (!atomic_load(&e->stop) && poll_callback && e->opt->stop &&
            pthread_mutex_trylock(&e->stop_lock) == 0) {
                if (e->opt->stop(e->opt->stop_userdata)) {
                        atomic_store(&e->stop, true);
                        wake_warmers(e);
                }
                pthread_mutex_unlock(&e->stop_lock);
        }
        if (atomic_load(&e->stop)) {
                st->stopped = true;
                return true;
        }
        return false;
}

static int fd_of(struct eng *e, uint32_t file)
{
        return atomic_load_explicit(&e->fds[file], memory_order_relaxed);
}

static int get_fd(struct eng *e, uint32_t file, struct engine_stats *st)
{
        int fd = atomic_load(&e->fds[file]), untried = FD_UNTRIED;

        if (fd == FD_UNTRIED &&
            atomic_compare_exchange_strong(&e->fds[file], &untried, FD_OPENING)) {
                fd = engine_open_checked(&e->rs->files[file], st);
                atomic_store(&e->fds[file], fd);
                return fd;
        }
        /* another worker is opening it (by position, files are not owned);
         * an open takes a metadata read at most: wait without burning CPU */
        while ((fd = atomic_load(&e->fds[file])) == FD_OPENING) {
                struct timespec ts = { 0, 50000 };
                nanosleep(&ts, NULL);
        }
        return fd;
}

/* Bytes of [off, off + len) whose data is in the page cache: mincore(2)
 * counts only pages read completely, where cachestat(2) also counts those
 * a readahead has put in the cache and is still reading into. */
static int64_t uptodate_bytes(int fd, uint64_t off, uint64_t len)
{
        int64_t have = mincore_bytes(fd, off, len);

        return have >= 0 ? have : engine_cached_bytes(fd, off, len);
}

/* Read what is not resident yet (pages in flight are waited for, pages the
 * kernel dropped or skipped are fetched); then count what still is not.
 * issued: this replay submitted the range, so some of its pages may still
 * be in flight (cachestat counts them, mincore does not); a range found
 * cached and not submitted needs only cachestat. */
static void settle_range(int fd, const struct plan_read *pr, bool issued, uint8_t *buf, struct engine_stats *st)
{
        uint64_t off = pr->offset, len = pr->length, end = pr->offset + pr->length;
        int64_t have = issued ? uptodate_bytes(fd, off, len) : engine_cached_bytes(fd, off, len);
        struct stat s;

        if (have >= 0 && (uint64_t)have >= len)
                return;
        while (len > 0) {
                size_t n = (size_t)MIN(len, (uint64_t)SETTLE_BUF);
                ssize_t k = pread(fd, buf, n, (off_t)off);
                if (k <= 0)
                        break;      /* end of a file that shrank, or an I/O error */
                off += (uint64_t)k;
                len -= (uint64_t)k;
        }
        have = engine_cached_bytes(fd, pr->offset, pr->length);   /* the reads waited: one cachestat will do */
        if (have < 0 || (uint64_t)have >= pr->length)
                return;
        /* a range past the end of a file that shrank is not missing */
        if (fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && end > (uint64_t)s.st_size) {
                uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
                end = ((uint64_t)s.st_size + page - 1) / page * page;
        }
        if (end > pr->offset && (uint64_t)have < end - pr->offset)
                st->bytes_missing += end - pr->offset - (uint64_t)have;
}

/* Asking the page cache before every read pays on a warm cache and costs
 * on a cold one (readahead(2) skips cached pages by itself).  After a run
 * of reads with nothing cached, ask only every CHECK_EVERY reads. */
#define COLD_RUN 16
#define CHECK_EVERY 64

struct cache_probe {
        unsigned cold_run, since;
};

static bool probe_says_cached(struct eng *e, struct cache_probe *p, int fd, uint64_t off, uint64_t len)
{
        int64_t have;

        if (p->cold_run >= COLD_RUN && ++p->since < CHECK_EVERY)
                return false;
        p->since = 0;
        have = engine_cached_bytes(fd, off, len);
        if ((have < 0 || (uint64_t)have < len) && !atomic_exchange(&e->cold_seen, true))
                wake_warmers(e);
        if (have > 0)
                p->cold_run = 0;
        else if (p->cold_run < COLD_RUN)
                p->cold_run++;
        return have >= 0 && (uint64_t)have >= len;
}

/* On a warm cache one question per file instead of one per read: is all of
 * what the plan reads of it cached?  Asked while the probe asks. */
static bool file_all_cached(struct eng *e, uint32_t file, int fd, const struct cache_probe *probe)
{
        unsigned char state = atomic_load(&e->file_cached[file]), unknown = FILE_UNKNOWN;
        uint64_t lo = e->span_lo[file], hi = e->span_hi[file];
        int64_t have;

        if (state != FILE_UNKNOWN)
                return state == FILE_ALL_CACHED;
        if (!probe || probe->cold_run >= COLD_RUN || hi <= lo ||
            !atomic_compare_exchange_strong(&e->file_cached[file], &unknown, FILE_CHECKING))
                return false;
        have = engine_cached_bytes(fd, lo, hi - lo);
        state = have >= 0 && (uint64_t)have >= hi - lo ? FILE_ALL_CACHED : FILE_NOT_ALL;
        atomic_store(&e->file_cached[file], state);
        return state == FILE_ALL_CACHED;
}

/* The file of read i, opened and checked; -1 when the read is to be skipped
 * (file skipped, or its range already cached), with the bytes counted.  With
 * a probe, the cache is asked as the probe says; without, always. */
static int prepare_read(struct eng *e, size_t i, struct engine_stats *st, struct cache_probe *probe)
{
        const struct plan_read *pr = &e->plan->reads[i];
        int fd = get_fd(e, pr->file, st);

        if (fd < 0) {
                st->bytes_skipped += pr->length;
                return -1;
        }
        if (e->opt->skip_cached) {
                bool cached;
                if (probe && file_all_cached(e, pr->file, fd, probe)) {
                        probe->cold_run = 0;
                        cached = true;
                } else if (probe)
                        cached = probe_says_cached(e, probe, fd, pr->offset, pr->length);
                else {
                        int64_t have = engine_cached_bytes(fd, pr->offset, pr->length);
                        cached = have >= 0 && (uint64_t)have >= pr->length;
                }
                if (cached) {
                        /* found there now: the wait does not ask again */
                        atomic_store(&e->issued[i], READ_FOUND_CACHED);
                        st->bytes_cached += pr->length;
                        return -1;
                }
        }
        st->bytes += pr->length;
        return fd;
}

/* readahead(2) the reads [from, to) of this worker's files, in plan order. */
static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct eng *e = w->e;
        const struct plan *plan = e->plan;
        size_t from = plan->n_meta, to = plan->n_reads;
        uint64_t cap = MAX(e->opt->readahead_cap, 4096);
        struct cache_probe probe = { 0, 0 };

        for (size_t k = from; k < to; k++) {
                /* by position: every thread takes the next read, so that what
                 * is in flight stays together on the device; else its own files */
                size_t i = e->plan->by_position ? atomic_fetch_add(&e->next, 1) : k;
                const struct plan_read *pr;
                uint64_t off, len;
                int fd;

                if (i >= to)
                        break;
                pr = &plan->reads[i];
                off = pr->offset;
                len = pr->length;
                if (stopping(e, &w->st, (k & 31) == 0))
                        break;
                if (!e->plan->by_position && pr->file % w->n != w->tid)
                        continue;
                fd = prepare_read(e, i, &w->st, &probe);
                if (fd < 0)
                        continue;
                atomic_store(&e->issued[i], READ_ISSUED);
                /* one call reads at most max(read_ahead_kb, max_sectors_kb): chunk */
                while (len > 0) {
                        uint64_t n = MIN(len, cap);
                        (void)readahead(fd, (off64_t)off, n);
                        w->st.reads++;
                        off += n;
                        len -= n;
                }
        }
        if (e->opt->wait && !w->st.stopped)
                for (size_t i = from; i < to; i++) {
                        const struct plan_read *pr = &plan->reads[i];
                        unsigned char state = atomic_load(&e->issued[i]);
                        int sfd;
                        if (pr->file % w->n != w->tid || state == READ_FOUND_CACHED)
                                continue;
                        /* in order, another thread may still be opening this
                         * file, or not have got to it: get_fd waits, or opens */
                        sfd = e->plan->by_position ? get_fd(e, pr->file, &w->st) : fd_of(e, pr->file);
                        if (sfd >= 0)
                                settle_range(sfd, pr, state == READ_ISSUED, w->buf, &w->st);
                }
        return NULL;
}

/* ---- the io_uring methods (single thread) ------------------------------ */

static int reap(struct eng *e, unsigned min)
{
        struct io_uring_cqe *cqe;
        unsigned got = 0;

        while (e->inflight > 0) {
                int r = got < min ? io_uring_wait_cqe(&e->ring, &cqe) : io_uring_peek_cqe(&e->ring, &cqe);
                if (r == -EAGAIN)
                        break;
                if (r == -EINTR)
                        continue;
                if (r < 0)
                        return r;
                if (e->opt->method == ENGINE_READ)
                        e->free_slots[e->n_free++] = (uint32_t)io_uring_cqe_get_data64(cqe);
                /* a failed read of one range (a file truncated since, say) is
                 * not fatal: the final residency check counts it */
                io_uring_cqe_seen(&e->ring, cqe);
                e->inflight--;
                got++;
        }
        return 0;
}

static int uring_issue(struct eng *e, int fd, uint64_t off, uint64_t len, struct engine_stats *st)
{
        while (len > 0) {
                uint64_t n = MIN(len, e->chunk);
                struct io_uring_sqe *sqe;
                int r;

                while (e->inflight >= e->opt->queue_depth || (e->opt->method == ENGINE_READ && e->n_free == 0)) {
                        io_uring_submit(&e->ring);
                        r = reap(e, 1);
                        if (r < 0)
                                return r;
                }
                sqe = io_uring_get_sqe(&e->ring);
                if (!sqe) {
                        io_uring_submit(&e->ring);
                        sqe = io_uring_get_sqe(&e->ring);
                        if (!sqe)
                                return -EBUSY;
                }
                if (e->opt->method == ENGINE_READ) {
                        uint32_t slot = e->free_slots[--e->n_free];
                        io_uring_prep_read(sqe, fd, e->bufs + (uint64_t)slot * e->chunk, (unsigned)n, off);
                        io_uring_sqe_set_data64(sqe, slot);
                } else {
                        io_uring_prep_fadvise(sqe, fd, off, (off_t)n, POSIX_FADV_WILLNEED);
                        io_uring_sqe_set_data64(sqe, 0);
                }
                e->inflight++;
                st->reads++;
                off += n;
                len -= n;
        }
        return 0;
}

static int uring_data(struct eng *e, struct engine_stats *st)
{
        const struct plan *plan = e->plan;
        uint32_t qd = MAX(e->opt->queue_depth, 1u);
        _cleanup_free_ uint8_t *buf = malloc(SETTLE_BUF);
        int r;

        if (!buf)
                return -ENOMEM;
        e->chunk = e->opt->method == ENGINE_READ ? MAX(e->opt->request_bytes, 4096) : MAX(e->opt->readahead_cap, 4096);
        r = io_uring_queue_init(MAX(qd * 2, 8u), &e->ring, 0);
        if (r < 0)
                return r;
        e->ring_ok = true;
        if (e->opt->method == ENGINE_READ) {
                e->bufs = mmap(NULL, (size_t)qd * e->chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                e->free_slots = malloc(qd * sizeof(uint32_t));
                if (e->bufs == MAP_FAILED || !e->free_slots) {
                        if (e->bufs == MAP_FAILED)
                                e->bufs = NULL;
                        return -ENOMEM;
                }
                for (uint32_t i = 0; i < qd; i++)
                        e->free_slots[e->n_free++] = i;
        }
        for (size_t i = plan->n_meta; i < plan->n_reads; i++) {
                const struct plan_read *pr = &plan->reads[i];
                int fd;

                if ((i & 31) == 0 && stopping(e, st, true))
                        break;
                fd = prepare_read(e, i, st, NULL);
                if (fd < 0)
                        continue;
                /* read into buffers, the data is there when the read completes */
                atomic_store(&e->issued[i], e->opt->method != ENGINE_READ ? READ_ISSUED : READ_NOT_ISSUED);
                r = uring_issue(e, fd, pr->offset, pr->length, st);
                if (r < 0)
                        return r;
        }
        io_uring_submit(&e->ring);
        r = reap(e, e->inflight);
        if (r < 0)
                return r;
        if (e->opt->wait && !st->stopped)
                for (size_t i = plan->n_meta; i < plan->n_reads; i++) {
                        unsigned char state = atomic_load(&e->issued[i]);
                        if (state != READ_FOUND_CACHED && fd_of(e, plan->reads[i].file) >= 0)
                                settle_range(fd_of(e, plan->reads[i].file), &plan->reads[i],
                                             state == READ_ISSUED, buf, st);
                }
        return 0;
}

/* ---- metadata and lookups ---------------------------------------------- */

/* The block device ranges: readahead on the device (when it may be opened;
 * some sandboxes forbid it), then wait: every open and stat needs them. */
static void replay_metadata(struct eng *e, struct engine_stats *st)
{
        const struct plan *plan = e->plan;
        _cleanup_free_ uint8_t *buf = NULL;

        for (size_t i = 0; i < plan->n_meta; i++) {
                const struct plan_read *pr = &plan->reads[i];
                int fd;
                if (stopping(e, st, (i & 31) == 0))
                        return;
                fd = prepare_read(e, i, st, NULL);
                if (fd < 0)
                        continue;
                atomic_store(&e->issued[i], READ_ISSUED);
                st->reads++;
                (void)readahead(fd, (off64_t)pr->offset, pr->length);
        }
        buf = malloc(SETTLE_BUF);
        if (!buf)
                return;
        for (size_t i = 0; i < plan->n_meta; i++) {
                const struct plan_read *pr = &plan->reads[i];
                if (stopping(e, st, (i & 31) == 0))
                        return;
                if (fd_of(e, pr->file) >= 0)
                        settle_range(fd_of(e, pr->file), pr, atomic_load(&e->issued[i]) == READ_ISSUED, buf, st);
        }
}

struct lookup_job {
        struct eng *e;
        unsigned tid, n;
        uint64_t done;
        char dents[32768];
};

/* A directory the start listed: list it, which reads its blocks. */
static void list_dir(const char *path, char *buf)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0)
                return;
        while (syscall(SYS_getdents64, fd, buf, 32768) > 0)
                ;
        close(fd);
}

/* The inode and dentry warmer, beside the data workers: a stat of every
 * file the plan reads, in plan order (so that a worker opening it finds its
 * inode read already: opening is otherwise one synchronous metadata read
 * per file), then of every other path the start looked up, found or not
 * (positive and negative dentries). */
static void *lookups_main(void *arg)
{
        struct lookup_job *j = arg;
        struct eng *e = j->e;
        const struct plan *plan = e->plan;
        struct stat s;

        /* On a warm cache this would only double the workers' opens: start
         * once a worker has met data that is not cached. */
        pthread_mutex_lock(&e->wake_lock);
        while (!atomic_load(&e->cold_seen) && !atomic_load(&e->workers_done) && !atomic_load(&e->stop))
                pthread_cond_wait(&e->wake, &e->wake_lock);
        pthread_mutex_unlock(&e->wake_lock);
        for (size_t i = plan->n_meta; i < plan->n_reads && atomic_load(&e->cold_seen); i++) {
                uint32_t f = plan->reads[i].file;
                if (atomic_load(&e->stop))
                        return NULL;
                if (f % j->n != j->tid || (i > plan->n_meta && plan->reads[i - 1].file == f))
                        continue;
                if (fd_of(e, f) == FD_UNTRIED)   /* a worker has not got there yet */
                        (void)fstatat(AT_FDCWD, e->rs->files[f].path, &s, AT_SYMLINK_NOFOLLOW);
        }
        if (!e->opt->lookups)
                return NULL;
        for (size_t i = j->tid; i < plan->n_lookups; i += j->n) {
                const struct rs_lookup *l = &e->rs->lookups[plan->lookups[i]];
                if (atomic_load(&e->stop))
                        break;
                if (l->op == RS_LOOKUP_READDIR && l->result == 0)
                        list_dir(l->path, j->dents);
                else
                        (void)fstatat(AT_FDCWD, l->path, &s, AT_SYMLINK_NOFOLLOW);
                j->done++;
        }
        return NULL;
}

static void add_stats(struct engine_stats *a, const struct engine_stats *b)
{
        a->files_opened += b->files_opened;
        a->files_changed += b->files_changed;
        a->files_missing += b->files_missing;
        a->files_not_regular += b->files_not_regular;
        a->files_error += b->files_error;
        a->reads += b->reads;
        a->bytes += b->bytes;
        a->bytes_cached += b->bytes_cached;
        a->bytes_skipped += b->bytes_skipped;
        a->bytes_missing += b->bytes_missing;
        a->stopped |= b->stopped;
}

/* Every file of the plan stays open until its data is resident: lift the
 * soft limit on descriptors to the hard one (1024 is a common soft limit). */
static void raise_fd_limit(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
}

unsigned engine_threads(const struct engine_options *opt)
{
        /* opening a file waits for its inode: more submitters than CPUs keep
         * more of those reads in flight (8 measured best on 2 CPUs here) */
        long n = opt->threads ? (long)opt->threads : 4 * sysconf(_SC_NPROCESSORS_ONLN);
        return (unsigned)MAX(1, MIN(n, 16));
}

static void engine_free(struct eng *e)
{
        free(e->fds);
        free(e->issued);
        free(e->file_cached);
        free(e->span_lo);
        free(e->span_hi);
        pthread_cond_destroy(&e->wake);
        pthread_mutex_destroy(&e->wake_lock);
        pthread_mutex_destroy(&e->stop_lock);
}

static int cmp_int(const void *a, const void *b)
{
        int x = *(const int *)a, y = *(const int *)b;
        return x < y ? -1 : x > y;
}

/* The files' descriptors, one close_range(2) per run of consecutive
 * numbers (they mostly are: a warm replay of 3 000 files spent 3 000 calls
 * closing them one by one). */
static void close_all(struct eng *e)
{
        _cleanup_free_ int *fds = malloc((e->rs->n_files ? e->rs->n_files : 1) * sizeof(int));
        size_t n = 0;

        for (size_t i = 0; i < e->rs->n_files; i++) {
                int fd = fd_of(e, (uint32_t)i);
                if (fd < 0)
                        continue;
                if (!fds)
                        close(fd);
                else
                        fds[n++] = fd;
        }
        qsort_safe(fds, n, sizeof(int), cmp_int);
        for (size_t i = 0; i < n;) {
                size_t j = i + 1;
                while (j < n && fds[j] == fds[j - 1] + 1)
                        j++;
                if (j - i == 1 || close_range((unsigned)fds[i], (unsigned)fds[j - 1], 0) < 0)
                        for (size_t k = i; k < j; k++)
                                close(fds[k]);
                i = j;
        }
}

int engine_run(const struct readset *rs, const struct plan *plan, const struct engine_options *opt,
               struct engine_stats *ret)
{
        struct engine_stats st = { 0 };
        struct eng e = { .rs = rs, .plan = plan, .opt = opt };
        unsigned warmers = MIN(engine_threads(opt), MAX_WARMERS);
        struct lookup_job *lj = calloc(warmers, sizeof(*lj));
        pthread_t lthread[MAX_WARMERS];
        bool lthread_ok[MAX_WARMERS] = { false };
        uint64_t t0 = now_us();
        int r = 0;

        atomic_init(&e.stop, false);
        atomic_init(&e.next, plan->n_meta);
        atomic_init(&e.cold_seen, !opt->skip_cached);
        atomic_init(&e.workers_done, false);
        pthread_mutex_init(&e.stop_lock, NULL);
        pthread_mutex_init(&e.wake_lock, NULL);
        pthread_cond_init(&e.wake, NULL);
        e.fds = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*e.fds));
        e.issued = calloc(plan->n_reads ? plan->n_reads : 1, sizeof(*e.issued));
        e.file_cached = calloc(rs->n_files ? rs->n_files : 1, sizeof(*e.file_cached));
        e.span_lo = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*e.span_lo));
        e.span_hi = calloc(rs->n_files ? rs->n_files : 1, sizeof(*e.span_hi));
        if (!e.fds || !e.issued || !e.file_cached || !e.span_lo || !e.span_hi) {
                engine_free(&e);
                free(lj);
                return -ENOMEM;
        }
        for (size_t i = 0; i < rs->n_files; i++) {
                atomic_init(&e.fds[i], FD_UNTRIED);
                e.span_lo[i] = UINT64_MAX;
        }
        for (size_t i = plan->n_meta; i < plan->n_reads; i++) {
                const struct plan_read *pr = &plan->reads[i];
                e.span_lo[pr->file] = MIN(e.span_lo[pr->file], pr->offset);
                e.span_hi[pr->file] = MAX(e.span_hi[pr->file], pr->offset + pr->length);
        }
        raise_fd_limit();
        {
                _cleanup_free_ uint8_t *seen = calloc(rs->n_files ? rs->n_files : 1, 1);
                if (!seen) {
                        engine_free(&e);
                        free(lj);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < plan->n_reads; i++)
                        if (!seen[plan->reads[i].file]) {
                                seen[plan->reads[i].file] = 1;
                                st.files++;
                        }
        }

        /* 1. filesystem metadata, all of it, before anything is opened */
        replay_metadata(&e, &st);
        st.meta_us = now_us() - t0;

        /* 2. inodes and lookups beside 3. the data, first needed first */
        for (unsigned i = 0; lj && i < warmers; i++) {
                lj[i].e = &e;
                lj[i].tid = i;
                lj[i].n = warmers;
                if (!stopping(&e, &st, true))
                        lthread_ok[i] = pthread_create(&lthread[i], NULL, lookups_main, &lj[i]) == 0;
        }

        if (opt->method == ENGINE_READAHEAD) {
                unsigned n = engine_threads(opt);
                struct worker *w = calloc(n, sizeof(*w));

                if (!w) {
                        r = -ENOMEM;
                        goto join;
                }
                for (unsigned i = 0; i < n; i++) {
                        w[i] = (struct worker){ .e = &e, .tid = i, .n = n };
                        w[i].buf = malloc(SETTLE_BUF);
                        if (!w[i].buf)
                                r = -ENOMEM;
                }
                if (r == 0) {
                        /* worker 0 runs here, the others in threads; a share
                         * whose thread could not start is done here after */
                        bool *started = calloc(n, sizeof(bool));
                        for (unsigned i = 1; started && i < n; i++)
                                started[i] = pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0;
                        worker_main(&w[0]);
                        for (unsigned i = 1; i < n; i++) {
                                if (started && started[i])
                                        pthread_join(w[i].thread, NULL);
                                else
                                        worker_main(&w[i]);
                        }
                        free(started);
                        for (unsigned i = 0; i < n; i++)
                                add_stats(&st, &w[i].st);
                }
                for (unsigned i = 0; i < n; i++)
                        free(w[i].buf);
                free(w);
        } else {
                r = uring_data(&e, &st);
        }
join:
        atomic_store(&e.workers_done, true);
        wake_warmers(&e);
        st.submit_us = now_us() - t0 - st.meta_us;
        for (unsigned i = 0; lj && i < warmers; i++)
                if (lthread_ok[i]) {
                        pthread_join(lthread[i], NULL);
                        st.lookups += lj[i].done;
                }
        free(lj);
        st.elapsed_us = now_us() - t0;
        if (e.ring_ok)
                io_uring_queue_exit(&e.ring);
        if (e.bufs)
                munmap(e.bufs, (size_t)MAX(opt->queue_depth, 1u) * e.chunk);
        free(e.free_slots);
        close_all(&e);
        engine_free(&e);
        *ret = st;
        return r;
}
