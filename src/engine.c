/* SPDX-License-Identifier: MIT */
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

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

static int cachestat_works = -1;   /* -1 unknown, 0 no, 1 yes */

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
        if (cachestat_works != 0) {
                struct cachestat_range_ cr = { off, len };
                struct cachestat_ cs;
                if (syscall(__NR_cachestat, fd, &cr, &cs, 0) == 0) {
                        cachestat_works = 1;
                        return (int64_t)(cs.nr_cache * (uint64_t)sysconf(_SC_PAGESIZE));
                }
                if (errno != ENOSYS && errno != EPERM && errno != EOPNOTSUPP)
                        return -errno;
                cachestat_works = 0;
        }
        return mincore_bytes(fd, off, len);
}

/* ---- opening files ---------------------------------------------------- */

enum { FD_UNTRIED = -1, FD_SKIPPED = -2 };

/* Open the file only if it is still the one recorded: never follow a
 * symlink, never open a FIFO or a device node (opening can have effects),
 * never change access times. */
static int open_checked(const struct rs_file *f, struct engine_stats *st)
{
        _cleanup_close_ int pfd = -1;
        char proc[64];
        struct stat s;
        int fd;

        pfd = open(f->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        st->files_missing++;
                else if (errno == ELOOP)
                        st->files_not_regular++;
                else
                        st->files_error++;
                return FD_SKIPPED;
        }
        if (fstat(pfd, &s) < 0) {
                st->files_error++;
                return FD_SKIPPED;
        }
        if (f->kind == RS_FILE_BLOCKDEV) {
                if (!S_ISBLK(s.st_mode) || s.st_rdev != f->dev) {
                        st->files_changed++;
                        return FD_SKIPPED;
                }
        } else {
                if (!S_ISREG(s.st_mode)) {
                        st->files_not_regular++;
                        return FD_SKIPPED;
                }
                if (s.st_dev != f->dev || s.st_ino != f->ino ||
                    (f->size && (uint64_t)s.st_size != f->size) ||
                    (f->mtime_ns && (int64_t)s.st_mtim.tv_sec * 1000000000LL + s.st_mtim.tv_nsec != f->mtime_ns)) {
                        st->files_changed++;
                        return FD_SKIPPED;
                }
        }
        /* Reopen the very inode checked above, for reading. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOATIME);
        if (fd < 0 && errno == EPERM)
                fd = open(proc, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                st->files_error++;
                return FD_SKIPPED;
        }
        st->files_opened++;
        return fd;
}

struct eng {
        const struct readset *rs;
        const struct plan *plan;
        const struct engine_options *opt;
        struct engine_stats *st;
        int *fds;
        struct io_uring ring;
        bool ring_ok;
        uint8_t *bufs;       /* ENGINE_READ: queue_depth buffers */
        uint32_t *free_slots;
        uint32_t n_free;
        uint32_t inflight;
        uint64_t chunk;
};

static int get_fd(struct eng *e, uint32_t file)
{
        if (e->fds[file] == FD_UNTRIED)
                e->fds[file] = open_checked(&e->rs->files[file], e->st);
        return e->fds[file];
}

/* Reap completions; wait for at least `min` of them. */
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
                /* a failed read of one range (e.g. a file truncated since) is
                 * not fatal: the final residency check counts it */
                io_uring_cqe_seen(&e->ring, cqe);
                e->inflight--;
                got++;
        }
        return 0;
}

static struct io_uring_sqe *get_sqe(struct eng *e)
{
        struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
        if (!sqe) {
                io_uring_submit(&e->ring);
                sqe = io_uring_get_sqe(&e->ring);
        }
        return sqe;
}

/* Issue one range: in pieces of `chunk` bytes. */
static int issue(struct eng *e, int fd, uint64_t off, uint64_t len)
{
        while (len > 0) {
                uint64_t n = MIN(len, e->chunk);
                struct io_uring_sqe *sqe;
                int r;

                if (e->opt->method == ENGINE_READAHEAD) {
                        if (readahead(fd, (off64_t)off, n) < 0 && errno != EINVAL)
                                return -errno;
                        e->st->reads++;
                        off += n;
                        len -= n;
                        continue;
                }
                while (e->inflight >= e->opt->queue_depth || (e->opt->method == ENGINE_READ && e->n_free == 0)) {
                        io_uring_submit(&e->ring);
                        r = reap(e, 1);
                        if (r < 0)
                                return r;
                }
                sqe = get_sqe(e);
                if (!sqe)
                        return -EBUSY;
                if (e->opt->method == ENGINE_READ) {
                        uint32_t slot = e->free_slots[--e->n_free];
                        io_uring_prep_read(sqe, fd, e->bufs + (uint64_t)slot * e->chunk, (unsigned)n, off);
                        io_uring_sqe_set_data64(sqe, slot);
                } else {
                        io_uring_prep_fadvise(sqe, fd, off, (off_t)n, POSIX_FADV_WILLNEED);
                        io_uring_sqe_set_data64(sqe, 0);
                }
                e->inflight++;
                e->st->reads++;
                off += n;
                len -= n;
        }
        return 0;
}

static int drain(struct eng *e)
{
        if (!e->ring_ok)
                return 0;
        io_uring_submit(&e->ring);
        return reap(e, e->inflight);
}

/* After fadvise/readahead: the pages are on their way.  Make sure they
 * arrived: any range not fully resident is read (which waits for pages
 * under I/O and fetches any the kernel dropped). */
static int settle(struct eng *e, size_t from, size_t to)
{
        enum engine_method saved = e->opt->method;
        struct engine_options o = *e->opt;
        const struct engine_options *keep = e->opt;
        int r = 0;

        if (saved == ENGINE_READ)
                return 0;
        o.method = ENGINE_READ;
        e->opt = &o;
        for (size_t i = from; i < to && r >= 0; i++) {
                const struct plan_read *pr = &e->plan->reads[i];
                int fd = e->fds[pr->file];
                int64_t have;

                if (fd < 0)
                        continue;
                have = engine_cached_bytes(fd, pr->offset, pr->length);
                if (have >= 0 && (uint64_t)have >= pr->length)
                        continue;
                r = issue(e, fd, pr->offset, pr->length);
        }
        if (r >= 0)
                r = drain(e);
        e->opt = keep;
        return r;
}

static int setup_ring(struct eng *e)
{
        uint32_t qd = MAX(e->opt->queue_depth, 1u);
        int r = io_uring_queue_init(MAX(qd * 2, 8u), &e->ring, 0);

        if (r < 0)
                return r;
        e->ring_ok = true;
        /* the scratch ring: needed by ENGINE_READ, and by settle() */
        e->bufs = mmap(NULL, (size_t)qd * e->chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (e->bufs == MAP_FAILED) {
                e->bufs = NULL;
                return -ENOMEM;
        }
        e->free_slots = malloc(qd * sizeof(uint32_t));
        if (!e->free_slots)
                return -ENOMEM;
        for (uint32_t i = 0; i < qd; i++)
                e->free_slots[e->n_free++] = i;
        return 0;
}

static bool should_stop(struct eng *e)
{
        if (e->opt->stop && e->opt->stop(e->opt->stop_userdata)) {
                e->st->stopped = true;
                return true;
        }
        return false;
}

/* Run reads [from, to) of the plan. */
static int run_reads(struct eng *e, size_t from, size_t to)
{
        int r;

        for (size_t i = from; i < to; i++) {
                const struct plan_read *pr = &e->plan->reads[i];
                int fd;

                if ((i & 63) == 0 && should_stop(e))
                        break;
                fd = get_fd(e, pr->file);
                if (fd < 0) {
                        e->st->bytes_skipped += pr->length;
                        continue;
                }
                if (e->opt->skip_cached) {
                        int64_t have = engine_cached_bytes(fd, pr->offset, pr->length);
                        if (have >= 0 && (uint64_t)have >= pr->length) {
                                e->st->bytes_cached += pr->length;
                                continue;
                        }
                }
                e->st->bytes += pr->length;
                r = issue(e, fd, pr->offset, pr->length);
                if (r < 0)
                        return r;
        }
        r = drain(e);
        if (r < 0)
                return r;
        if (e->opt->wait && !e->st->stopped)
                r = settle(e, from, to);
        return r;
}

/* statx through io_uring: the kernel runs them in parallel workers. */
static int warm_paths(struct eng *e)
{
        const struct readset *rs = e->rs;
        const struct plan *plan = e->plan;
        uint32_t qd = MAX(e->opt->queue_depth, 1u), inflight = 0;
        _cleanup_free_ struct statx *bufs = calloc(qd, sizeof(struct statx));
        _cleanup_free_ uint32_t *slots = malloc(qd * sizeof(uint32_t));
        _cleanup_free_ uint8_t *seen = calloc(rs->n_files ? rs->n_files : 1, 1);
        uint32_t n_free = 0;
        size_t total = plan->n_reads + (e->opt->lookups ? plan->n_lookups : 0);

        if (!bufs || !slots || !seen)
                return -ENOMEM;
        for (uint32_t i = 0; i < qd; i++)
                slots[n_free++] = i;
        for (size_t i = 0; i <= total; i++) {
                const char *path = NULL;
                struct io_uring_sqe *sqe;
                struct io_uring_cqe *cqe;

                if (i < total) {
                        if (i < plan->n_reads) {
                                uint32_t f = plan->reads[i].file;
                                if (seen[f] || rs->files[f].kind != RS_FILE_REGULAR)
                                        continue;
                                seen[f] = 1;
                                path = rs->files[f].path;
                        } else {
                                path = rs->lookups[plan->lookups[i - plan->n_reads]].path;
                                e->st->lookups++;
                        }
                        if ((i & 63) == 0 && should_stop(e))
                                break;
                }
                /* make room, or at the end wait for everything */
                while (inflight > 0 && (n_free == 0 || i == total)) {
                        int r;
                        io_uring_submit(&e->ring);
                        r = io_uring_wait_cqe(&e->ring, &cqe);
                        if (r == -EINTR)
                                continue;
                        if (r < 0)
                                return r;
                        slots[n_free++] = (uint32_t)io_uring_cqe_get_data64(cqe);
                        io_uring_cqe_seen(&e->ring, cqe);
                        inflight--;
                }
                if (i == total)
                        break;
                sqe = get_sqe(e);
                if (!sqe)
                        return -EBUSY;
                n_free--;
                io_uring_prep_statx(sqe, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &bufs[slots[n_free]]);
                io_uring_sqe_set_data64(sqe, slots[n_free]);
                inflight++;
        }
        while (inflight > 0) {
                struct io_uring_cqe *cqe;
                int r;
                io_uring_submit(&e->ring);
                r = io_uring_wait_cqe(&e->ring, &cqe);
                if (r == -EINTR)
                        continue;
                if (r < 0)
                        return r;
                io_uring_cqe_seen(&e->ring, cqe);
                inflight--;
        }
        return 0;
}

static void count_missing(struct eng *e)
{
        for (size_t i = 0; i < e->plan->n_reads; i++) {
                const struct plan_read *pr = &e->plan->reads[i];
                int fd = e->fds[pr->file];
                int64_t have;

                if (fd < 0)
                        continue;
                have = engine_cached_bytes(fd, pr->offset, pr->length);
                if (have >= 0 && (uint64_t)have < pr->length) {
                        /* a range past the end of a file that shrank is not missing */
                        struct stat s;
                        uint64_t end = pr->offset + pr->length;
                        if (fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && end > (uint64_t)s.st_size)
                                end = ((uint64_t)s.st_size + 4095) & ~4095ULL;
                        if (end > pr->offset && (uint64_t)have < end - pr->offset)
                                e->st->bytes_missing += end - pr->offset - (uint64_t)have;
                }
        }
}

int engine_run(const struct readset *rs, const struct plan *plan, const struct engine_options *opt,
               struct engine_stats *ret)
{
        struct engine_stats st = { 0 };
        struct eng e = { .rs = rs, .plan = plan, .opt = opt, .st = &st };
        uint64_t t0 = now_us();
        int r;

        e.chunk = opt->method == ENGINE_READ ? MAX(opt->request_bytes, 4096) : MAX(opt->readahead_cap, 4096);
        if (opt->method != ENGINE_READ)
                e.chunk = MIN(e.chunk, MAX(opt->request_bytes, 4096));
        e.fds = malloc((rs->n_files ? rs->n_files : 1) * sizeof(int));
        if (!e.fds)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++)
                e.fds[i] = FD_UNTRIED;
        for (size_t i = 0; i < plan->n_reads; i++)
                if (e.fds[plan->reads[i].file] == FD_UNTRIED) {
                        e.fds[plan->reads[i].file] = FD_UNTRIED - 1; /* mark counted */
                        st.files++;
                }
        for (size_t i = 0; i < rs->n_files; i++)
                if (e.fds[i] == FD_UNTRIED - 1)
                        e.fds[i] = FD_UNTRIED;

        r = setup_ring(&e);
        if (r < 0)
                goto out;

        /* 1. metadata, all of it, and wait: opens and stats need it */
        r = run_reads(&e, 0, plan->n_meta);
        if (r < 0)
                goto out;
        st.meta_us = now_us() - t0;
        /* 2. inodes and dentries: every file the plan reads and every path
         * the start looked up, found or not, stat'ed many at a time (the
         * metadata they need is read with a deep queue, whether or not the
         * block device itself could be read) */
        if (!st.stopped) {
                r = warm_paths(&e);
                if (r < 0)
                        goto out;
        }
        st.stat_us = now_us() - t0 - st.meta_us;
        /* 3. the data, first needed first */
        if (!st.stopped)
                r = run_reads(&e, plan->n_meta, plan->n_reads);
        st.submit_us = now_us() - t0 - st.meta_us - st.stat_us;
        if (r >= 0 && opt->wait && !st.stopped)
                count_missing(&e);
out:
        st.elapsed_us = now_us() - t0;
        if (e.ring_ok)
                io_uring_queue_exit(&e.ring);
        if (e.bufs)
                munmap(e.bufs, (size_t)MAX(opt->queue_depth, 1u) * e.chunk);
        free(e.free_slots);
        for (size_t i = 0; i < rs->n_files; i++)
                if (e.fds[i] >= 0)
                        close(e.fds[i]);
        free(e.fds);
        *ret = st;
        return r;
}
