/* SPDX-License-Identifier: MIT */
/* The engine's orchestrator: the phases of one replay (the image, the
 * metadata, then the data in windows beside the warmers), each a call into
 * the parts below it -- the fill methods (fill-*.c, through their table),
 * the metadata and the warmers (warm.c), the steps they all share
 * (steps.c).  None of them calls back into this file. */
#include "replay/steps.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "replay/warm.h"
#include "util/util.h"
#include "util/banned.h"

static const struct fill_method *const methods[ENGINE_NULL + 1] = {
        [ENGINE_READ] = &fill_uring_read,
        [ENGINE_FADVISE] = &fill_uring_fadvise,
        [ENGINE_READAHEAD] = &fill_readahead,
        [ENGINE_NULL] = &fill_null,
};

const char *engine_method_name(enum engine_method m)
{
        return m <= ENGINE_NULL ? methods[m]->name : "unknown";
}

int engine_method_from_name(const char *s)
{
        /* the null method is not one to name */
        for (int m = 0; m < _ENGINE_METHOD_MAX; m++)
                if (strcmp(s, methods[m]->name) == 0)
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
                .image_fd = -1,
        };
}

/* ---- the image a portable read set was packed in ------------------------- */

struct image_job {
        struct eng *e;
        int fd;
        const struct rs_image *im;
        uint64_t cap, bridge;
        uint64_t bytes;
        atomic_bool queued;
        bool unverified, verified;
};

/* Its ranges, in order: all queued first (readahead(2) returns once they
 * are, a window at a time: the kernel reads at most that a call), so that
 * the device reads them one after the other; then read through the page
 * cache (where the file system that decompresses them finds them) for
 * their digest: the read set's, the files opened after it are the image's
 * and need no check of their own. */
static void *image_main(void *userdata)
{
        struct image_job *j = userdata;
        struct content_sum sum;

        /* the ranges and no more (a read would read ahead past them), but
         * through gaps smaller than the device's bridge: on a disk, the
         * start's file system reads around them (squashfs reads ahead whole
         * windows of blocks: a start that uses 27 MB of a packed zstd image
         * read 50 MB of it), and the gaps cost less read than skipped */
        (void)posix_fadvise(j->fd, 0, 0, POSIX_FADV_RANDOM);
        for (size_t i = 0; i < j->im->n_spans && !atomic_load(&j->e->stop);) {
                uint64_t off = j->im->spans[i].offset, end = off + j->im->spans[i].length;
                for (i++; i < j->im->n_spans && j->im->spans[i].offset >= end &&
                          j->im->spans[i].offset - end <= j->bridge; i++)
                        end = j->im->spans[i].offset + j->im->spans[i].length;
                for (; off < end; off += j->cap)
                        (void)readahead(j->fd, (off64_t)off, (size_t)MIN(j->cap, end - off));
        }
        atomic_store(&j->queued, true);
        /* (another image's spans: read ahead and counted, not waited for) */
        if (!j->unverified &&
            (atomic_load(&j->e->stop) || checksum_spans(j->fd, j->im->spans, j->im->n_spans, &sum) < 0))
                return NULL;
        for (size_t i = 0; i < j->im->n_spans; i++)
                j->bytes += j->im->spans[i].length;
        if (j->unverified)
                return NULL;
        j->verified = memcmp(sum.d, j->im->digest, sizeof(j->im->digest)) == 0;
        atomic_store(&j->e->trusted, j->verified);
        return NULL;
}

/* ---- one replay ---------------------------------------------------------- */

/* A file stays open until its data is resident: lift the soft limit on
 * descriptors to the hard one (1024 is a common soft limit), and open at
 * most what it leaves, less a reserve for the rest of the process (run's
 * recorder, libraries), at once. */
#define FD_RESERVE 64

static uint32_t fd_budget(uint32_t asked)
{
        struct rlimit rl;
        unsigned long open_now = 0, limit;
        DIR *d;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                rl.rlim_cur = 1024;
        limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1UL << 30) ? 1UL << 30 : (unsigned long)rl.rlim_cur;
        d = opendir("/proc/self/fd");
        if (d) {
                while (readdir(d))
                        open_now++;
                closedir(d);
        } else
                open_now = limit / 2;
        limit = limit > open_now + FD_RESERVE + 16 ? limit - open_now - FD_RESERVE : 16;
        return asked && asked < limit ? asked : (uint32_t)MIN(limit, (unsigned long)UINT32_MAX);
}

/* Grow the descriptor table to hold n more now, while this is the only
 * thread: grown later, with the fill threads sharing it, every doubling
 * waits for an RCU grace period (expand_fdtable()), and all their opens
 * wait with it (10-25 ms apiece, measured: a warm replay of 221 files took
 * 24 ms instead of 4). */
static void reserve_fds(uint32_t n)
{
        int probe = open("/", O_PATH | O_CLOEXEC), top;

        if (probe < 0)
                return;
        top = fcntl(probe, F_DUPFD_CLOEXEC, probe + (int)MIN(n, (uint32_t)INT_MAX / 2));
        if (top >= 0)
                close(top);
        close(probe);
}

int engine_run(const struct readset *rs, const struct plan *plan, const struct engine_options *opt,
               struct engine_stats *ret)
{
        struct engine_stats st = { 0 };
        _cleanup_free_ uint64_t *mark = NULL;   /* per file: the last window that opened it */
        _cleanup_free_ size_t *last_read = NULL; /* per file: its last data read (mark_used) */
        struct warmers *w;
        struct eng e;
        uint64_t t0 = now_us();
        enum engine_method method;
        struct image_job img;
        pthread_t img_thread;
        bool img_on = false;
        uint32_t budget;
        int r;

        if (opt->method > ENGINE_NULL)
                return -EINVAL;
        r = engine_state_init(&e, rs, plan, opt, &st);
        if (r < 0)
                return r;
        /* io_uring unavailable (disabled by sysctl, a seccomp filter): the
         * readahead(2) method, said in st.fell_back, rather than nothing */
        method = opt->method;
        if (methods[method]->uring && io_uring_usable(&st.fell_back) < 0)
                method = ENGINE_READAHEAD;
        budget = fd_budget(opt->max_open_files);
        mark = calloc(rs->n_files ? rs->n_files : 1, sizeof(*mark));
        if (!mark) {
                engine_state_free(&e);
                return -ENOMEM;
        }
        reserve_fds((uint32_t)MIN((size_t)budget, rs->n_files) + 16);
        /* (marking is a help, never needed: without the memory for it,
         * nothing is marked) */
        if (opt->mark_used && opt->wait && !e.dry) {
                last_read = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*last_read));
                if (last_read) {
                        for (size_t f = 0; f < rs->n_files; f++)
                                last_read[f] = SIZE_MAX;
                        for (size_t i = plan->n_meta; i < plan->n_reads; i++)
                                last_read[plan->reads[i].file] = i;
                }
        }

        /* 0. the image the files are packed in, mounted from a file: the
         * ranges the start reads, first, in its order, in large requests
         * (the files' reads would ask in the file system's smaller ones,
         * with its readahead besides).  Their digest the read set's, every
         * file the start reads is the one packed: the files are replayed
         * after (decompressed ahead of the start, from the page cache) but
         * not checked one by one. */
        if (opt->image_fd >= 0 && opt->image) {
                uint64_t cap = opt->image_cap ? opt->image_cap : opt->readahead_cap;
                img = (struct image_job){ .e = &e, .fd = opt->image_fd, .im = opt->image,
                                          .cap = cap ? cap : 128 << 10, .bridge = opt->image_bridge,
                                          .unverified = opt->image_unverified };
                img_on = pthread_create(&img_thread, NULL, image_main, &img) == 0;
                while (img_on && !atomic_load(&img.queued)) {
                        struct timespec ts = { 0, 1000000 };
                        nanosleep(&ts, NULL);
                }
        }
        /* 1. filesystem metadata, all of it, before anything is opened */
        warm_metadata(&e, &st);
        st.meta_us = now_us() - t0;
        /* the image checked before any file is opened: a file opened before
         * would have its own ranges read to check it, one request after
         * another, while the image's are in flight (packed zstd image on
         * the emulated 7200 rpm disk: 188 files, 19 MB read so, run 0.97 s
         * against plain 0.73) */
        if (img_on) {
                pthread_join(img_thread, NULL);
                img_on = false;
                st.image_bytes = img.bytes;
                st.image_verified = img.verified;
        }
        /* 2. inodes and lookups beside 3. the data, first needed first: in
         * windows of at most budget files, each closed before the next */
        w = engine_stopping(&e, &st, true) ? NULL : warmers_start(&e, engine_threads(opt));
        for (size_t i = plan->n_meta; i < plan->n_reads && r >= 0 && !st.stopped;) {
                uint32_t distinct = 0;

                e.from = i;
                st.windows++;
                for (; i < plan->n_reads; i++) {
                        uint32_t f = plan->reads[i].file;
                        if (mark[f] == st.windows)
                                continue;
                        if (distinct == budget)
                                break;
                        mark[f] = st.windows;
                        distinct++;
                }
                e.to = i;
                atomic_store(&e.next, e.from);
                r = methods[method]->fill(&e, &st);
                if (last_read && r >= 0 && !engine_stopping(&e, &st, false))
                        (void)engine_mark_used(&e, last_read, &st);   /* (-ENOMEM: as above) */
                if (i < plan->n_reads) {
                        engine_check_contents(&e, &st);
                        engine_close_files(&e, true);
                }
        }
        atomic_store(&e.workers_done, true);
        engine_wake_warmers(&e);
        st.submit_us = now_us() - t0 - st.meta_us;
        warmers_join(w, &st);
        if (img_on) {
                pthread_join(img_thread, NULL);
                st.image_bytes = img.bytes;
                st.image_verified = img.verified;
        }
        engine_check_contents(&e, &st);
        st.elapsed_us = now_us() - t0;
        engine_close_files(&e, false);
        engine_state_free(&e);
        *ret = st;
        return r;
}
