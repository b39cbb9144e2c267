/* SPDX-License-Identifier: MIT */
/* replay/residency.c: the page cache's answer, true for the file's owner
 * (cachestat) and for a user who may only read it (RWF_NOWAIT reads),
 * where mincore would say "all cached". */
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/residency.h"
#include "tests.h"

#define SIZE (1u << 20)
#define PAGE 4096u

/* The pages the test read, held locked in memory while it asks: the cache
 * drops no page that is locked, so that neither another process's
 * drop_caches (the e2e tests', another run's) nor a reclaimer that pages
 * out memory it has seen idle (DAMON's, on these machines: a page just read
 * into memory idle for a minute may go at once) can take them between the
 * reading and the asking.  Mapped once per check_fd(): valgrind reads the
 * start of a file each time it is mapped. */
static volatile unsigned char *held;

static void hold(off_t off, size_t len)
{
        if (held)
                CHECK_EQ(mlock((void *)(held + off), len), 0);
}

static char buf[SIZE];

/* Pages of the file cached, as mincore tells the file's owner (and root):
 * the test's own answer, not the one under test. */
static size_t cached_pages(void)
{
        unsigned char vec[SIZE / PAGE];
        size_t n = 0;

        if (!held || mincore((void *)held, SIZE, vec) < 0)
                return 0;
        for (size_t i = 0; i < SIZE / PAGE; i++)
                n += vec[i] & 1;
        return n;
}

/* Another user's process asks the owner (its parent, root) to evict for
 * it, which may see what is left: a byte on owner_ask, the answer ('y':
 * nothing left) on owner_told. */
static int owner_ask = -1, owner_told = -1;

/* The file's pages dropped; told by mincore (verify: the owner, or root)
 * that none is left, asked again until then, 1 s at most. */
static void drop(int fd, bool verify)
{
        for (int i = 0; i < 100; i++) {
                CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
                if (!verify || cached_pages() == 0)
                        return;
                usleep(10000);
        }
        CHECK_EQ(cached_pages(), 0);
}

/* Nothing of the file cached.  A page still being read (the readahead a
 * question by reading started) is dropped by no one: the file is read whole
 * first, which waits for it.  A folio another CPU still holds a reference to
 * (its batch of folios to put on the LRU) is not dropped either, and on
 * ext4 one large folio may be the whole file: where the test may know (the
 * owner), it asks again until none is left; another user has the owner do
 * it (it failed once in CI with every page left, under valgrind). */
static void evict(int fd, bool owner)
{
        if (held) {
                CHECK_EQ(munlock((void *)held, SIZE), 0);
                CHECK_EQ(madvise((void *)held, SIZE, MADV_DONTNEED), 0);
        }
        CHECK_EQ(pread(fd, buf, SIZE, 0), SIZE);
        CHECK_EQ(fdatasync(fd), 0);
        if (owner_ask >= 0) {
                char c = 'e';
                CHECK_EQ(write(owner_ask, &c, 1), 1);
                CHECK_EQ(read(owner_told, &c, 1), 1);
                CHECK_EQ(c, 'y');
                return;
        }
        drop(fd, owner);
}

static void read_range(int fd, off_t off, size_t len)
{
        CHECK_EQ(pread(fd, buf, len, off), (ssize_t)len);
        hold(off, len);
}

/* The checks on a descriptor, whoever holds it; returns the failures.
 * exact: asked without reading (cachestat, mincore), a count of a range
 * partly cached is exact; asked by reading, it is at least what was there
 * (the asking may bring in what it found missing). */
static int check_fd(int fd, bool exact)
{
        int before = tests_failed;
        void *m = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
        int64_t n;

        CHECK(m != MAP_FAILED);
        if (m != MAP_FAILED) {
                CHECK_EQ(madvise(m, SIZE, MADV_RANDOM), 0);   /* a page touched is that page */
                held = m;
        }
        /* (each after evicting: asked by reading, a question starts reading
         * what it found missing) */
        evict(fd, exact);
        CHECK(residency_check(fd, 0, SIZE, RESIDENCY_PRESENT) < SIZE);
        evict(fd, exact);
        CHECK(residency_check(fd, 0, SIZE, RESIDENCY_UPTODATE) < SIZE);
        evict(fd, exact);
        if (exact) {
                CHECK_EQ(residency_count(fd, 0, SIZE, RESIDENCY_PRESENT), 0);
                CHECK_EQ(residency_count(fd, 0, SIZE, RESIDENCY_UPTODATE), 0);
        }
        /* the first 64 KiB and 8 KiB at 512 KiB (fadvise RANDOM: no readahead around them) */
        evict(fd, exact);
        CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
        read_range(fd, 0, 64 << 10);
        read_range(fd, 512 << 10, 8192);
        CHECK_EQ(residency_count(fd, 0, 64 << 10, RESIDENCY_PRESENT), 64 << 10);
        CHECK_EQ(residency_check(fd, 0, 64 << 10, RESIDENCY_UPTODATE), 64 << 10);
        CHECK_EQ(residency_count(fd, 512 << 10, 8192, RESIDENCY_PRESENT), 8192);
        /* stops at the first missing page; asked by reading, that page may
         * be in by the time the read looks again (the read itself started
         * reading it: a race with the device, won on a busy machine) */
        n = residency_check(fd, 0, (64 << 10) + 4096, RESIDENCY_PRESENT);
        if (exact)
                CHECK_EQ(n, 64 << 10);
        else
                CHECK(n == 64 << 10 || n == (64 << 10) + 4096);
        n = residency_count(fd, 0, SIZE, RESIDENCY_PRESENT);
        if (exact)
                CHECK_EQ(n, (64 << 10) + 8192);
        else
                CHECK(n >= (64 << 10) + 8192 && n <= SIZE);
        /* not page aligned: counted in the range's bytes */
        CHECK_EQ(residency_count(fd, 100, 1000, RESIDENCY_PRESENT), 1000);
        read_range(fd, 0, SIZE);
        CHECK_EQ(residency_check(fd, 0, SIZE, RESIDENCY_PRESENT), SIZE);
        CHECK_EQ(residency_count(fd, 0, SIZE, RESIDENCY_UPTODATE), SIZE);
        /* past the end of the file nothing is cached */
        CHECK_EQ(residency_count(fd, SIZE, 8192, RESIDENCY_PRESENT), 0);
        evict(fd, exact);
        if (held)
                munmap((void *)held, SIZE);
        held = NULL;
        return tests_failed - before;
}

/* What mincore says to a user who may not write the file: everything is
 * cached (so that a test of the other path proves something). */
static bool mincore_lies(int fd)
{
        unsigned char vec[SIZE / PAGE];
        void *m = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
        size_t n = 0;

        if (m == MAP_FAILED)
                return false;
        evict(fd, false);
        if (mincore(m, SIZE, vec) == 0)
                for (size_t i = 0; i < SIZE / PAGE; i++)
                        n += vec[i] & 1;
        munmap(m, SIZE);
        return n == SIZE / PAGE;
}

/* valgrind reads the start of every file mapped (mincore's mapping) and
 * has no cachestat: exact counts of partly cached ranges are not for it. */
static bool under_valgrind(void)
{
        const char *p = getenv("LD_PRELOAD");
        return p && strstr(p, "vgpreload");
}

int main(void)
{
        char dir[] = "/var/tmp/readset-test.XXXXXX", path[64];
        char *data = malloc(SIZE);
        bool exact = !under_valgrind();
        int fd;

        if (!mkdtemp(dir))
                TEST_SKIP("cannot create a directory in /var/tmp");
        snprintf(path, sizeof(path), "%s/f", dir);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && data);
        memset(data, 'r', SIZE);
        CHECK_EQ(write(fd, data, SIZE), SIZE);
        free(data);
        close(fd);

        /* the owner */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        if (!exact)
                printf("under valgrind: counts of partly cached ranges not checked\n");
        check_fd(fd, exact);
        close(fd);

        /* another user, who may read the file but not write it */
        if (geteuid() == 0) {
                pid_t pid;
                int status = 0;

                int ask[2], told[2];
                char c;

                CHECK_EQ(chmod(dir, 0755), 0);
                CHECK(pipe2(ask, O_CLOEXEC) == 0 && pipe2(told, O_CLOEXEC) == 0);
                pid = fork();
                if (pid == 0) {
                        int bad;
                        close(ask[0]);
                        close(told[1]);
                        owner_ask = ask[1];
                        owner_told = told[0];
                        if (setgid(65534) < 0 || setuid(65534) < 0)
                                _exit(100);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                _exit(101);
                        if (!mincore_lies(fd))
                                fprintf(stderr, "note: mincore told this user the truth\n");
                        bad = check_fd(fd, false);
                        _exit(bad ? 1 : 0);
                }
                CHECK(pid > 0);
                close(ask[1]);
                close(told[0]);
                /* evicting for the child, told by mincore (root's is true)
                 * through a mapping of its own, never touched */
                fd = open(path, O_RDONLY | O_CLOEXEC);
                CHECK(fd >= 0);
                held = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
                CHECK(held != MAP_FAILED);
                if (held == MAP_FAILED)
                        held = NULL;
                while (read(ask[0], &c, 1) == 1) {
                        int before = tests_failed;
                        drop(fd, true);     /* (the child waited for its reads) */
                        c = tests_failed == before ? 'y' : 'n';
                        CHECK_EQ(write(told[1], &c, 1), 1);
                }
                if (held)
                        munmap((void *)held, SIZE);
                held = NULL;
                close(fd);
                close(ask[0]);
                close(told[1]);
                CHECK_EQ(waitpid(pid, &status, 0), pid);
                CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        } else
                printf("another user: not checked, it takes root to become one\n");
        unlink(path);
        rmdir(dir);
        TESTS_DONE();
}
