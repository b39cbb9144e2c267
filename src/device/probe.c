/* SPDX-License-Identifier: MIT */
#include "device/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

const unsigned probe_depths[4] = { 1, 4, 16, 64 };

#define BLOCK 4096u
#define BIG (1u << 20)
#define SEQ_DEPTH 8u

/* xorshift: offsets spread over the region, not in the page cache anyway
 * (O_DIRECT) */
static uint64_t next_rand(uint64_t *s)
{
        uint64_t x = *s;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *s = x;
}

/* Told a few times a second, or at once (force). */
static void tell(struct probe_progress *pp, const char *step, enum progress_unit unit, uint64_t done,
                 uint64_t total, bool force)
{
        uint64_t now;

        if (!pp || !pp->fn)
                return;
        now = now_ns();
        if (!force && now - pp->last_ns < 50000000)
                return;
        pp->last_ns = now;
        pp->fn(pp->userdata, &(struct progress_report){ step, unit, done, total });
}

/* A timed measurement under way (pp->step): the time of them all so far. */
static void tick(struct probe_progress *pp, bool force)
{
        if (pp && pp->fn)
                tell(pp, pp->step, PROGRESS_US, (now_ns() - pp->begin_ns) / 1000, pp->total_us, force);
}

/* The next timed measurement, said at once. */
static void step(struct probe_progress *pp, const char *what)
{
        if (pp) {
                pp->step = what;
                tick(pp, true);
        }
}

int probe_scratch(const char *dir, uint64_t size, int *ret_direct, int *ret_buffered, struct probe_progress *pp)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ uint64_t *chunk = NULL;
        uint64_t seed = 88172645463325252ULL;
        char proc[64];
        int d;

        fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        chunk = malloc(BIG);
        if (!chunk)
                return -ENOMEM;
        /* real data: a filesystem reads unwritten extents as zeros, no I/O */
        for (size_t i = 0; i < BIG / sizeof(*chunk); i++)
                chunk[i] = next_rand(&seed);
        for (uint64_t off = 0; off < size; off += BIG) {
                ssize_t k = pwrite(fd, chunk, BIG, (off_t)off);
                if (k != BIG)
                        return k < 0 ? -errno : -ENOSPC;
                tell(pp, "scratch file", PROGRESS_BYTES, off + BIG, size, off + BIG >= size);
        }
        if (fsync(fd) < 0)
                return -errno;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        d = open(proc, O_RDONLY | O_DIRECT | O_CLOEXEC);
        if (d < 0)
                return errno == EINVAL ? -EOPNOTSUPP : -errno;
        *ret_direct = d;
        *ret_buffered = TAKE_FD(fd);
        return 0;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* Random reads of `size` at `depth` in flight for `seconds`; returns
 * completed reads per second, and (depth 1) the per-read latencies. */
static int random_reads(struct io_uring *ring, int fd, uint8_t *buf, uint64_t region, unsigned size,
                        unsigned depth, double seconds, bool sequential, double *ret_rate,
                        double *lat, size_t *n_lat, size_t max_lat, uint64_t base, struct probe_progress *pp)
{
        uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)depth, done = 0, next_seq = 0;
        uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), slots = region / size;
        uint64_t *started = calloc(depth, sizeof(uint64_t)), first_ns = 0;
        unsigned inflight = 0;
        bool stop = false;

        if (!started)
                return -ENOMEM;
        if (slots == 0) {
                free(started);
                return -EINVAL;
        }
        while (!stop || inflight > 0) {
                struct io_uring_cqe *cqe;
                int r;

                while (!stop && inflight < depth) {
                        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
                        unsigned slot = inflight;
                        uint64_t off;

                        if (!sqe)
                                break;
                        if (sequential) {
                                off = (next_seq % slots) * size;
                                next_seq++;
                        } else
                                off = (next_rand(&seed) % slots) * size;
                        /* find a free slot id: the lowest not in use */
                        for (unsigned k = 0; k < depth; k++)
                                if (!started[k]) {
                                        slot = k;
                                        break;
                                }
                        started[slot] = now_ns();
                        io_uring_prep_read(sqe, fd, buf + (uint64_t)slot * size, size, base + off);
                        io_uring_sqe_set_data64(sqe, slot);
                        inflight++;
                }
                io_uring_submit(ring);
                r = io_uring_wait_cqe(ring, &cqe);
                if (r == -EINTR)
                        continue;
                if (r < 0) {
                        free(started);
                        return r;
                }
                if (cqe->res < 0) {
                        r = cqe->res;
                        io_uring_cqe_seen(ring, cqe);
                        free(started);
                        return r;
                }
                {
                        uint64_t slot = io_uring_cqe_get_data64(cqe);
                        if (lat && *n_lat < max_lat && slot < depth)
                                lat[(*n_lat)++] = (double)(now_ns() - started[slot]) / 1e3;
                        if (slot < depth)
                                started[slot] = 0;
                }
                io_uring_cqe_seen(ring, cqe);
                inflight--;
                if (++done == depth)
                        first_ns = now_ns();
                tick(pp, false);
                if (now_ns() >= end)
                        stop = true;
        }
        /* a sequential stream is timed from its first queue-full of
         * completions: the seek to its start, and a disk taking the first
         * requests in the order it reaches them, are not bandwidth */
        if (sequential && first_ns && done > depth)
                *ret_rate = (double)(done - depth) / ((double)(now_ns() - first_ns) / 1e9);
        else
                *ret_rate = (double)done / ((double)(now_ns() - t0) / 1e9);
        free(started);
        return 0;
}

/* The cost of a QD1 read `dist` away from the previous one: pairs of reads
 * at a random place and `dist` further; only the second read is timed. */
static int seek_pairs(int fd, uint8_t *buf, uint64_t region, uint64_t dist, double seconds, double *ret_us,
                      struct probe_progress *pp)
{
        uint64_t seed = 12345 + dist, t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), n = 0, spent = 0;

        if (dist + BLOCK > region)
                return -EINVAL;
        while (n == 0 || now_ns() < end) {
                /* a new random pair each time, so no cache below us helps */
                uint64_t base = (next_rand(&seed) % ((region - dist) / BLOCK)) * BLOCK, t;
                if (pread(fd, buf, BLOCK, (off_t)base) != BLOCK)
                        return errno ? -errno : -EIO;
                t = now_ns();
                if (pread(fd, buf, BLOCK, (off_t)(base + dist)) != BLOCK)
                        return errno ? -errno : -EIO;
                spent += now_ns() - t;
                n++;
                tick(pp, false);
        }
        *ret_us = (double)spent / 1e3 / (double)n;
        return 0;
}

int probe_run(int fd, int buffered_fd, uint64_t region, double seconds, struct probe_result *ret,
              struct probe_progress *pp)
{
        struct probe_result res = { .region_bytes = region };
        struct io_uring ring;
        double *lat = NULL, rate;
        size_t n_lat = 0, max_lat = 200000;
        uint8_t *buf;
        double slice = seconds / 10.0;   /* 10 measurements share the time */
        int r;

        region &= ~(uint64_t)(BIG - 1);
        if (region < 4 * (uint64_t)BIG)
                return -EINVAL;
        buf = mmap(NULL, 64 * (size_t)BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED)
                return -ENOMEM;
        lat = malloc(max_lat * sizeof(double));
        r = lat ? io_uring_queue_init(128, &ring, 0) : -ENOMEM;
        if (r < 0)
                goto out;

        /* 1. latency at queue depth 1 */
        step(pp, "latency at depth 1");
        r = random_reads(&ring, fd, buf, region, BLOCK, 1, slice * 2, false, &rate, lat, &n_lat, max_lat, 0, pp);
        if (r < 0)
                goto out_ring;
        qsort_safe(lat, n_lat, sizeof(double), cmp_double);
        res.lat_qd1_us = n_lat ? lat[n_lat / 2] : 0;
        res.lat_qd1_p99_us = n_lat ? lat[MIN(n_lat - 1, n_lat * 99 / 100)] : 0;
        res.iops[0] = rate;
        /* 2. random IOPS at deeper queues */
        step(pp, "random reads");
        for (int i = 1; i < 4; i++) {
                r = random_reads(&ring, fd, buf, region, BLOCK, probe_depths[i], slice, false, &res.iops[i],
                                 NULL, NULL, 0, 0, pp);
                if (r < 0)
                        goto out_ring;
        }
        /* 3. sequential bandwidth: at the start, the middle and the end (a
         * disk's outer tracks are faster than its inner ones) */
        {
                uint64_t part = MIN(region / 4, (uint64_t)64 << 20) & ~(uint64_t)(BIG - 1);
                uint64_t at[3] = { 0, region / 2 & ~(uint64_t)(BIG - 1), region - part };
                double sum = 0;
                step(pp, "sequential reads");
                for (int i = 0; i < 3; i++) {
                        r = random_reads(&ring, fd, buf, part, BIG, SEQ_DEPTH, slice * 2 / 3, true, &rate, NULL, NULL, 0,
                                         at[i], pp);
                        if (r < 0)
                                goto out_ring;
                        res.seq_zone_mbps[i] = rate * BIG / 1e6;
                        sum += res.seq_zone_mbps[i];
                }
                res.seq_mbps = sum / 3;
        }
        /* 4. seek cost against distance */
        {
                uint64_t dists[4] = { 64 << 10, 1 << 20, region / 4, region / 2 };
                step(pp, "seek cost");
                for (int i = 0; i < 4; i++) {
                        res.seek_dist[i] = dists[i] & ~(uint64_t)(BLOCK - 1);
                        r = seek_pairs(fd, buf, region, res.seek_dist[i], slice / 2, &res.seek_us[i], pp);
                        if (r < 0)
                                goto out_ring;
                }
                /* rotational: far requests clearly dearer than near ones */
                res.rotational = res.seek_us[3] > 2.0 * res.seek_us[0] && res.seek_us[3] - res.seek_us[0] > 500;
        }
        /* 5. page-cache fill rate: buffered sequential reads of dropped pages */
        if (buffered_fd >= 0) {
                uint64_t len = MIN(region, (uint64_t)256 << 20), off = 0, t0;
                (void)posix_fadvise(buffered_fd, 0, (off_t)len, POSIX_FADV_DONTNEED);
                t0 = now_ns();
                while (off < len) {
                        ssize_t k = pread(buffered_fd, buf, BIG, (off_t)off);
                        if (k <= 0)
                                break;
                        off += (uint64_t)k;
                        tell(pp, "page-cache fill", PROGRESS_BYTES, off, len, false);
                }
                res.fill_mbps = (double)off / ((double)(now_ns() - t0) / 1e3);
                (void)posix_fadvise(buffered_fd, 0, (off_t)len, POSIX_FADV_DONTNEED);
        }
        r = 0;
        *ret = res;
out_ring:
        io_uring_queue_exit(&ring);
out:
        free(lat);
        munmap(buf, 64 * (size_t)BIG);
        return r;
}

/* Files opened at once in the second part of the metadata probe (at each
 * of probe_meta_depths), and how many of them at each (not opened before:
 * their lookups and opens are the device's, not a cache's) */
#define PAR_MAX_DEPTH 32u
#define PAR_FILES 192u
#define PAR_MIN_FILES 64u

const unsigned probe_meta_depths[PROBE_META_DEPTHS] = { 8, 32 };

struct walk {
        dev_t dev;
        uint64_t end_ns, serial_end_ns;
        unsigned max;
        double *open_us, *read_us;
        unsigned n;
        char **par;               /* files for the second part, relative to the top */
        unsigned n_par;
        char prefix[PATH_MAX];    /* the directory walked, relative to the top ("" at it) */
        uint8_t *buf;
        struct probe_progress *pp;
};

static bool walk_more(const struct walk *w)
{
        uint64_t now = now_ns();
        return now < w->end_ns && ((w->n < w->max && now < w->serial_end_ns) ||
                                   w->n_par < PAR_FILES * PROBE_META_DEPTHS);
}

/* A file for the second part; false: out of memory or too long a name */
static bool walk_keep(struct walk *w, const char *name)
{
        char path[PATH_MAX];
        int k = snprintf(path, sizeof(path), "%s%s", w->prefix, name);
        if (k < 0 || (size_t)k >= sizeof(path) || !(w->par[w->n_par] = strdup(path)))
                return false;
        w->n_par++;
        return true;
}

/* A file under the probed directory opened for reading: no symlink
 * followed, never blocking, its access time left alone where we may. */
static int open_file(int dfd, const char *name)
{
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOATIME | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == EPERM)   /* O_NOATIME on a file we do not own */
                fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        return fd;
}

static void walk_dir(struct walk *w, int dfd, unsigned depth)
{
        DIR *d;
        struct dirent *e;
        size_t plen;

        if (depth > 32) {
                close(dfd);
                return;
        }
        d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return;
        }
        while (walk_more(w) && (e = readdir(d))) {
                struct stat st;
                uint64_t t0, t1, t2;
                int fd;

                if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
                        continue;
                if (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        e->d_type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
                if (e->d_type == DT_DIR) {
                        int sub;
                        /* stay on this filesystem, and trigger no automount */
                        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) < 0 ||
                            st.st_dev != w->dev)
                                continue;
                        sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0)
                                continue;
                        if (fstat(sub, &st) < 0 || st.st_dev != w->dev) {
                                close(sub);
                                continue;
                        }
                        plen = strlen(w->prefix);
                        if (plen + strlen(e->d_name) + 2 >= sizeof(w->prefix)) {
                                close(sub);
                                continue;
                        }
                        snprintf(w->prefix + plen, sizeof(w->prefix) - plen, "%s/", e->d_name);
                        walk_dir(w, sub, depth + 1);
                        w->prefix[plen] = 0;
                        continue;
                }
                if (e->d_type != DT_REG)
                        continue;
                /* the serial part done: the rest is named for the second */
                if (w->n >= w->max || now_ns() >= w->serial_end_ns) {
                        if (w->n_par < PAR_FILES * PROBE_META_DEPTHS && !walk_keep(w, e->d_name))
                                break;
                        continue;
                }
                t0 = now_ns();
                fd = open_file(dirfd(d), e->d_name);
                if (fd < 0)
                        continue;
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                        close(fd);
                        continue;
                }
                t1 = now_ns();
                w->open_us[w->n] = (double)(t1 - t0) / 1e3;
                w->read_us[w->n] = -1;
                if (st.st_size >= (off_t)BLOCK) {
                        (void)posix_fadvise(fd, 0, BLOCK, POSIX_FADV_DONTNEED);
                        t1 = now_ns();
                        if (pread(fd, w->buf, BLOCK, 0) == BLOCK) {
                                t2 = now_ns();
                                w->read_us[w->n] = (double)(t2 - t1) / 1e3;
                        }
                }
                close(fd);
                w->n++;
                tick(w->pp, false);
        }
        closedir(d);
}

struct par {
        int top;
        char **files;
        unsigned n;
        uint64_t end_ns;          /* no file taken after it */
        pthread_mutex_t go;       /* held until every thread is there */
        atomic_uint next, done;
};

static void *par_main(void *arg)
{
        struct par *p = arg;
        unsigned i;

        pthread_mutex_lock(&p->go);
        pthread_mutex_unlock(&p->go);
        while (now_ns() < p->end_ns && (i = atomic_fetch_add(&p->next, 1)) < p->n) {
                struct stat st;
                int fd = open_file(p->top, p->files[i]);
                if (fd < 0)
                        continue;
                if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
                        atomic_fetch_add(&p->done, 1);
                close(fd);
        }
        return NULL;
}

/* The second part: the files named, opened and stat'ed depth at once for
 * seconds at most; how many a second (0: too few, or too few threads),
 * how many in *ret_done. */
static double probe_parallel(int top, char **files, unsigned n, unsigned depth, double seconds,
                             unsigned *ret_done)
{
        struct par p = { .top = top, .files = files, .n = n, .go = PTHREAD_MUTEX_INITIALIZER };
        pthread_t t[PAR_MAX_DEPTH];
        unsigned started = 0;
        uint64_t t0;

        *ret_done = 0;
        if (n < PAR_MIN_FILES)
                return 0;
        /* the clock starts once every thread is made (making 31 of them
         * takes time a fast share would count against itself) */
        pthread_mutex_lock(&p.go);
        for (; started + 1 < MIN(depth, PAR_MAX_DEPTH); started++)
                if (pthread_create(&t[started], NULL, par_main, &p) != 0)
                        break;
        t0 = now_ns();
        p.end_ns = t0 + (uint64_t)(seconds * 1e9);
        pthread_mutex_unlock(&p.go);
        par_main(&p);
        for (unsigned i = 0; i < started; i++)
                pthread_join(t[i], NULL);
        pthread_mutex_destroy(&p.go);
        *ret_done = atomic_load(&p.done);
        if (started + 1 < depth / 2 || *ret_done < PAR_MIN_FILES)
                return 0;
        return (double)*ret_done / ((double)(now_ns() - t0) / 1e9);
}

int probe_metadata(const char *dir, unsigned max_files, double seconds, struct probe_meta *ret,
                   struct probe_progress *pp)
{
        uint64_t t0 = now_ns();
        /* 60% of the time for the files one at a time, the rest for
         * naming those of the second part (on a slow share, listings take
         * round trips too) */
        struct walk w = { .max = max_files, .end_ns = t0 + (uint64_t)(seconds * 1e9),
                          .serial_end_ns = t0 + (uint64_t)(seconds * 0.6e9), .pp = pp };
        struct probe_meta m = {};
        struct stat st;
        unsigned nr = 0;
        int dfd, top;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        if (fstat(dfd, &st) < 0) {
                close(dfd);
                return -errno;
        }
        w.dev = st.st_dev;
        w.open_us = calloc(max_files + 1, sizeof(double));
        w.read_us = calloc(max_files + 1, sizeof(double));
        w.buf = malloc(BLOCK);
        w.par = calloc(PAR_FILES * PROBE_META_DEPTHS, sizeof(*w.par));
        if (!w.open_us || !w.read_us || !w.buf || !w.par) {
                close(dfd);
                free(w.open_us);
                free(w.read_us);
                free(w.buf);
                free(w.par);
                return -ENOMEM;
        }
        step(pp, "opening files");
        top = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
        walk_dir(&w, dfd, 0);   /* takes dfd */
        if (top >= 0) {
                step(pp, "opening files at once");
                /* each depth its own files (none opened before), as many
                 * for each, and a fifth of the time */
                for (unsigned k = 0, from = 0; k < PROBE_META_DEPTHS; k++) {
                        unsigned n = MIN(PAR_FILES, w.n_par / PROBE_META_DEPTHS), done;
                        m.parallel_per_s[k] = probe_parallel(top, w.par + from, n, probe_meta_depths[k],
                                                             seconds / 5, &done);
                        m.parallel_files[k] = m.parallel_per_s[k] > 0 ? done : 0;
                        from += n;
                }
                close(top);
        }
        for (unsigned i = 0; i < w.n_par; i++)
                free(w.par[i]);
        free(w.par);
        m.files = w.n;
        if (w.n > 0) {
                qsort_safe(w.open_us, w.n, sizeof(double), cmp_double);
                m.open_stat_us = w.open_us[w.n / 2];
                m.open_stat_p90_us = w.open_us[MIN(w.n - 1, w.n * 9 / 10)];
                for (unsigned i = 0; i < w.n; i++)
                        if (w.read_us[i] >= 0)
                                w.read_us[nr++] = w.read_us[i];
                qsort_safe(w.read_us, nr, sizeof(double), cmp_double);
                m.first_read_us = nr ? w.read_us[nr / 2] : 0;
        }
        free(w.open_us);
        free(w.read_us);
        free(w.buf);
        *ret = m;
        return 0;
}
