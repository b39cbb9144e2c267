/* SPDX-License-Identifier: MIT */
#include "replay/residency.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

struct cachestat_range_ {
        uint64_t off, len;
};

struct cachestat_ {
        uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* cachestat(2) missing from this kernel (ENOSYS): known after one try.  A
 * refusal (EPERM) is about one file, and says nothing of the next. */
static atomic_int cachestat_missing;

static uint64_t page_size(void)
{
        long p = sysconf(_SC_PAGESIZE);
        return p > 0 ? (uint64_t)p : 4096;
}

/* Pages of [off, off + len) cached (len 0: to the end), or -errno. */
static int64_t cachestat_pages(int fd, uint64_t off, uint64_t len)
{
        struct cachestat_range_ cr = { off, len };
        struct cachestat_ cs;

        if (atomic_load_explicit(&cachestat_missing, memory_order_relaxed))
                return -ENOSYS;
        if (syscall(__NR_cachestat, fd, &cr, &cs, 0) == 0)
                return (int64_t)MIN(cs.nr_cache, (uint64_t)INT64_MAX);
        if (errno == ENOSYS)
                atomic_store_explicit(&cachestat_missing, 1, memory_order_relaxed);
        return -errno;
}

static int64_t by_cachestat(int fd, uint64_t off, uint64_t len)
{
        int64_t n = cachestat_pages(fd, off, len);

        return n < 0 ? n : (int64_t)MIN((uint64_t)n * page_size(), len + page_size() - 1);
}

/* The caller's effective uid, asked once (the questions below come once
 * per read of a replay): readset never changes its own, and a child it
 * forks, which might, asks again. */
static atomic_long euid = -1;
static pthread_once_t euid_once = PTHREAD_ONCE_INIT;

static void forget_euid(void)
{
        atomic_store_explicit(&euid, -1, memory_order_relaxed);
}

static void forget_privileged(void);

static void forget_in_children(void)
{
        forget_euid();
        forget_privileged();
}

static void forget_euid_in_children(void)
{
        (void)pthread_atfork(NULL, NULL, forget_in_children);
}

static uid_t caller_euid(void)
{
        long v;

        pthread_once(&euid_once, forget_euid_in_children);
        v = atomic_load_explicit(&euid, memory_order_relaxed);
        if (v < 0) {
                v = (long)geteuid();
                atomic_store_explicit(&euid, v, memory_order_relaxed);
        }
        return (uid_t)v;
}

/* Privileged as the kernel's cachestat and mincore ask it: CAP_FOWNER in
 * effect (inode_owner_or_capable), not only uid 0 -- a unit's root with a
 * narrower capability set (readset keep's templates) is told "all cached"
 * of the files it does not own.  Asked once, as the uid is. */
static atomic_int privileged = -1;

static void forget_privileged(void)
{
        atomic_store_explicit(&privileged, -1, memory_order_relaxed);
}

static bool caller_privileged(void)
{
        int v = atomic_load_explicit(&privileged, memory_order_relaxed);

        if (v < 0) {
                struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
                struct __user_cap_data_struct d[2] = { { 0 } };
                v = caller_euid() == 0 && syscall(SYS_capget, &h, d) == 0 && (d[0].effective & (1u << CAP_FOWNER));
                atomic_store_explicit(&privileged, v, memory_order_relaxed);
        }
        return v;
}

/* mincore(2) tells the truth only to a caller who owns the file, or may
 * write it (or is privileged): to others it says every page is cached. */
static bool mincore_truthful(int fd)
{
        struct stat st;
        int fl;

        if (caller_privileged())
                return true;
        fl = fcntl(fd, F_GETFL);
        if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
                return true;
        return fstat(fd, &st) == 0 && st.st_uid == caller_euid();
}

static int64_t by_mincore(int fd, uint64_t off, uint64_t len)
{
        uint64_t page = page_size(), start = off & ~(page - 1), end = off + len, n, count = 0;
        unsigned char *vec;
        void *m;

        if (end <= start)
                return 0;
        n = (end - start + page - 1) / page;
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
        return (int64_t)(count * page);
}

/* Reads with RWF_NOWAIT succeed only for pages cached and up to date: read
 * (into one small buffer, over and over: only the answer matters) until the
 * first page that is not, skip that page, go on.  whole: count every page;
 * else stop at the first missing one.  Pages are counted whole, as the
 * other two count them: the last page of a file is there when its tail is. */
#define NOWAIT_BUF (16u << 10)
#define NOWAIT_IOV 256   /* 4 MiB a call */

static uint64_t round_up(uint64_t v, uint64_t page)
{
        return v > UINT64_MAX - page ? UINT64_MAX : (v + page - 1) / page * page;
}

static int64_t by_nowait(int fd, uint64_t off, uint64_t len, bool whole)
{
        uint64_t page = page_size(), pos = off & ~(page - 1), size = UINT64_MAX, have = 0, end;
        uint8_t buf[NOWAIT_BUF];
        struct iovec iov[NOWAIT_IOV];
        struct stat st;

        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
                size = (uint64_t)st.st_size;
        end = MIN(off + len, round_up(size, page));   /* nothing is cached past the end */
        while (pos < end) {
                uint64_t want = MIN(end - pos, (uint64_t)NOWAIT_BUF * NOWAIT_IOV), got, next;
                int n = 0;
                ssize_t k;

                for (uint64_t left = want; left > 0 && n < NOWAIT_IOV; n++) {
                        iov[n].iov_base = buf;
                        iov[n].iov_len = (size_t)MIN(left, (uint64_t)NOWAIT_BUF);
                        left -= iov[n].iov_len;
                }
                k = preadv2(fd, iov, n, (off_t)pos, RWF_NOWAIT);
                if (k < 0 && errno != EAGAIN)
                        return errno == EOPNOTSUPP || errno == EINVAL ? -EOPNOTSUPP : -errno;
                got = k > 0 ? (uint64_t)k : 0;
                next = pos + got;
                if (got < want && next >= size)
                        next = MAX(next, round_up(size, page));   /* the end of the file: its last page was there */
                if (next > pos && next > off)
                        have += MIN(next, off + len) - MAX(pos, off);
                if (next >= end || (got < want && !whole))
                        break;
                pos = got == want ? next : (next & ~(page - 1)) + page;   /* skip the page missing at next */
        }
        return (int64_t)have;
}

static int64_t query(int fd, uint64_t off, uint64_t len, enum residency_kind kind, bool whole)
{
        int64_t r;

        if (len == 0)
                return 0;
        if (kind == RESIDENCY_PRESENT) {
                r = by_cachestat(fd, off, len);
                if (r >= 0)
                        return MIN((uint64_t)r, len);
                if (r != -ENOSYS && r != -EPERM && r != -EOPNOTSUPP)
                        return r;
                /* refused for this file (EPERM), or missing: as below */
        }
        if (mincore_truthful(fd)) {
                r = by_mincore(fd, off, len);
                if (r >= 0)
                        return MIN((uint64_t)r, len);
        }
        r = by_nowait(fd, off, len, whole);
        return r >= 0 ? (int64_t)MIN((uint64_t)r, len) : r;
}

bool residency_by_reading(int fd)
{
        int64_t r;

        if (caller_privileged())
                return false;   /* cachestat answers root whatever the file */
        r = by_cachestat(fd, 0, page_size());
        if (r >= 0)
                return false;
        return r == -EPERM || r == -EOPNOTSUPP || !mincore_truthful(fd);
}

int64_t residency_count(int fd, uint64_t off, uint64_t len, enum residency_kind kind)
{
        return query(fd, off, len, kind, true);
}

int64_t residency_check(int fd, uint64_t off, uint64_t len, enum residency_kind kind)
{
        return query(fd, off, len, kind, false);
}

int64_t residency_cached_pages(int fd)
{
        return cachestat_pages(fd, 0, 0);
}

bool residency_mincore_truthful(int fd)
{
        return mincore_truthful(fd);
}
