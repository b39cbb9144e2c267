/* SPDX-License-Identifier: MIT */
/* keep/snapshot.c: a tree in /var/tmp, some pages of its files cached (and
 * held mapped, so that another test's drop_caches cannot take them), the
 * snapshot's ranges and ranks checked against them; what is not cached
 * stays so (nothing read); symlinks, FIFOs and devices counted, never
 * opened. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "keep/snapshot.h"
#include "model/readset.h"
#include "tests.h"

#define PAGE 4096u
#define PAGES 64u

static char dir[] = "/var/tmp/rs-test-snapshot-XXXXXX";
static char path_a[128], path_b[128], path_c[128];

static void make_file(const char *path, size_t pages)
{
        static char buf[PAGES * PAGE];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        memset(buf, 'x', sizeof(buf));
        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK_EQ(write(fd, buf, pages * PAGE), (long long)(pages * PAGE));
        CHECK_EQ(fsync(fd), 0);
        CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        close(fd);
}

/* Pages of path cached, as mincore tells root and the owner. */
static size_t cached(const char *path)
{
        unsigned char vec[PAGES];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t n = 0;
        struct stat st;
        void *m;

        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
                return 0;
        if (mincore(m, (size_t)st.st_size, vec) == 0)
                for (size_t i = 0; i < (size_t)st.st_size / PAGE; i++)
                        n += vec[i] & 1;
        munmap(m, (size_t)st.st_size);
        return n;
}

/* Bring pages [first, first + n) of path into the cache and keep them
 * there: read without readahead, then mapped and touched (a mapped page is
 * dropped by no drop_caches).  The mapping is returned to be unmapped. */
static volatile unsigned char *hold(const char *path, size_t first, size_t n)
{
        char page[PAGE];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        volatile unsigned char *m;
        unsigned sum = 0;

        CHECK(fd >= 0);
        if (fd < 0)
                return NULL;
        CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
        for (size_t i = first; i < first + n; i++)
                CHECK_EQ(pread(fd, page, PAGE, (off_t)(i * PAGE)), PAGE);
        m = mmap(NULL, PAGES * PAGE, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        CHECK(m != MAP_FAILED);
        if (m == MAP_FAILED)
                return NULL;
        CHECK_EQ(madvise((void *)m, PAGES * PAGE, MADV_RANDOM), 0);
        for (size_t i = first; i < first + n; i++)
                sum += m[i * PAGE];
        (void)sum;
        return m;
}

static const struct rs_file *find(const struct readset *rs, const char *path)
{
        for (size_t i = 0; i < rs->n_files; i++)
                if (strcmp(rs->files[i].path, path) == 0)
                        return &rs->files[i];
        return NULL;
}

/* The range of f holding offset off (NULL: none). */
static const struct rs_range *range_at(const struct rs_file *f, uint64_t off)
{
        for (size_t i = 0; f && i < f->n_ranges; i++)
                if (f->ranges[i].offset <= off && off < f->ranges[i].offset + f->ranges[i].length)
                        return &f->ranges[i];
        return NULL;
}

/* Under valgrind, which reads the start of a file each time it is mapped
 * (the test's own mincore and the snapshot's), the pages cached are not
 * only the test's: the page-exact checks are left to the plain run. */
static bool exact;

static struct readset *take(const struct readset *prev, struct snapshot_result *res)
{
        struct snapshot_options o = { .previous = prev };
        struct readset *rs = NULL;
        char *paths[] = { dir };

        CHECK_EQ(snapshot_take(paths, 1, &o, &rs, res), 0);
        CHECK(rs && (rs->rec_flags & RS_REC_SNAPSHOT));
        CHECK(rs && readset_validate(rs) == 0);
        return rs;
}

/* a's cached pages 3-5 and 20 (held), b nothing, c (in sub/) pages 0-1;
 * a symlink, a FIFO, a hard link to a beside them. */
static void test_tree(void)
{
        struct snapshot_result res;
        struct readset *rs, *again;
        const struct rs_file *a, *c;
        volatile unsigned char *ma, *ma2, *mc;
        char p[160];

        ma = hold(path_a, 3, 3);
        ma2 = hold(path_a, 20, 1);
        mc = hold(path_c, 0, 2);
        if (exact) {
                CHECK_EQ(cached(path_a), 4);
                CHECK_EQ(cached(path_b), 0);
        }
        rs = take(NULL, &res);
        a = rs ? find(rs, path_a) : NULL;
        if (!a && rs) {
                snprintf(p, sizeof(p), "%s/sub/a-link", dir);
                a = find(rs, p);   /* the hard link may come first in the walk */
        }
        c = rs ? find(rs, path_c) : NULL;
        CHECK(a && c);
        CHECK(range_at(a, 3 * PAGE) && range_at(a, 5 * PAGE) == range_at(a, 3 * PAGE));
        CHECK(range_at(a, 20 * PAGE) && !range_at(a, 30 * PAGE));
        CHECK(range_at(a, 3 * PAGE) && range_at(a, 3 * PAGE)->time_us == SNAPSHOT_RANK_NEW);
        CHECK(range_at(a, 3 * PAGE) && (range_at(a, 3 * PAGE)->flags & RS_RANGE_ACCESSED));
        CHECK(a && a->size == PAGES * PAGE && a->mtime_ns != 0);
        CHECK(range_at(c, 0) && range_at(c, PAGE));
        CHECK_EQ(res.files, 3);            /* the hard link once */
        CHECK_EQ(res.skipped[SNAPSHOT_SKIP_SYMLINK], 1);
        CHECK_EQ(res.skipped[SNAPSHOT_SKIP_SPECIAL], geteuid() == 0 ? 2 : 1);   /* the FIFO (and a device node) */
        CHECK_EQ(res.dirs, 2);
        CHECK_EQ(res.bytes_kept, 0);
        if (exact) {
                CHECK(rs && rs->n_files == 2);     /* b has nothing cached */
                CHECK(rs && !find(rs, path_b));
                CHECK(a && a->n_ranges == 2);
                CHECK(range_at(a, 3 * PAGE) && range_at(a, 3 * PAGE)->offset == 3 * PAGE &&
                      range_at(a, 3 * PAGE)->length == 3 * PAGE);
                CHECK(range_at(a, 20 * PAGE) && range_at(a, 20 * PAGE)->length == PAGE);
                CHECK(c && c->n_ranges == 1);
                CHECK_EQ(res.files_mapped, 2);
                CHECK_EQ(res.bytes_cached, 6 * PAGE);
                /* nothing read: b is as uncached as before, a holds only its 4 */
                CHECK_EQ(cached(path_b), 0);
                CHECK_EQ(cached(path_a), 4);
        }

        /* again, against the first: the same pages one rank up; a page
         * cached since is new */
        munmap((void *)ma2, PAGES * PAGE);
        ma2 = hold(path_a, 40, 1);
        again = rs ? take(rs, &res) : NULL;
        a = again ? find(again, a ? a->path : path_a) : NULL;
        CHECK(a != NULL);
        /* pages 3-5 kept, 20 perhaps dropped since it is unmapped, 40 new */
        CHECK(range_at(a, 3 * PAGE) && range_at(a, 3 * PAGE)->time_us == SNAPSHOT_RANK_NEW - 1);
        CHECK(range_at(a, 40 * PAGE) && range_at(a, 40 * PAGE)->time_us == SNAPSHOT_RANK_NEW);
        CHECK(res.bytes_kept >= 5 * PAGE);   /* a's 3 and c's 2, at least */
        readset_free(again);

        /* a file changed since (its mtime) ranks as new */
        {
                struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
                CHECK_EQ(utimensat(AT_FDCWD, path_c, ts, 0), 0);
        }
        again = rs ? take(rs, &res) : NULL;
        c = again ? find(again, path_c) : NULL;
        CHECK(c != NULL);
        CHECK(range_at(c, 0) && range_at(c, 0)->time_us == SNAPSHOT_RANK_NEW);
        readset_free(again);
        readset_free(rs);
        munmap((void *)ma, PAGES * PAGE);
        munmap((void *)ma2, PAGES * PAGE);
        munmap((void *)mc, PAGES * PAGE);
}

/* A path named that is a file, one that is missing, one on a pseudo file
 * system; a snapshot of nothing but missing paths fails with their errno. */
static void test_paths(void)
{
        struct snapshot_result res;
        struct readset *rs = NULL;
        char missing[160];
        char *one[] = { path_a }, *gone[] = { missing }, *pseudo[] = { (char *)"/proc/self" };
        volatile unsigned char *m = hold(path_a, 7, 1);

        snprintf(missing, sizeof(missing), "%s/no-such", dir);
        CHECK_EQ(snapshot_take(one, 1, NULL, &rs, &res), 0);
        CHECK(rs && rs->n_files == 1);
        readset_free(rs);
        rs = NULL;
        CHECK_EQ(snapshot_take(gone, 1, NULL, &rs, &res), -ENOENT);
        CHECK(rs == NULL);
        CHECK_EQ(res.skipped[SNAPSHOT_SKIP_GONE], 1);
        CHECK_EQ(snapshot_take(pseudo, 1, NULL, &rs, &res), 0);
        CHECK(rs && rs->n_files == 0);
        CHECK_EQ(res.skipped[SNAPSHOT_SKIP_PSEUDO], 1);
        readset_free(rs);
        if (m)
                munmap((void *)m, PAGES * PAGE);
}

/* Someone who neither owns a file nor may write it is not told what of
 * it is cached (mincore says "all" to them): counted, not guessed. */
static void test_untold(void)
{
        pid_t pid;
        int st;

        if (geteuid() != 0)
                return;   /* (the caller owns the tree then) */
        pid = fork();
        if (pid == 0) {
                struct snapshot_result res;
                struct readset *rs = NULL;
                char *paths[] = { path_a };
                volatile unsigned char *m = hold(path_a, 1, 1);
                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(3);
                if (snapshot_take(paths, 1, NULL, &rs, &res) < 0 || !rs)
                        _exit(4);
                _exit(rs->n_files == 0 && res.skipped[SNAPSHOT_SKIP_UNTOLD] == 1 ? 0 : 5 + (m == NULL));
        }
        CHECK(pid > 0);
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void cleanup(void)
{
        const char *names[] = { "sub/a-link", "sub/c", "b", "link", "fifo", "null", "a" };
        char p[200];

        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
                (void)unlink(p);
        }
        snprintf(p, sizeof(p), "%s/sub", dir);
        (void)rmdir(p);
        CHECK_EQ(rmdir(dir), 0);
}

int main(void)
{
        char p[160];

        exact = !strstr(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "", "vgpreload");
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /var/tmp");
        CHECK_EQ(chmod(dir, 0755), 0);   /* test_untold's nobody walks it */
        snprintf(path_a, sizeof(path_a), "%s/a", dir);
        snprintf(path_b, sizeof(path_b), "%s/b", dir);
        snprintf(path_c, sizeof(path_c), "%s/sub/c", dir);
        snprintf(p, sizeof(p), "%s/sub", dir);
        CHECK_EQ(mkdir(p, 0755), 0);
        make_file(path_a, PAGES);
        make_file(path_b, 16);
        make_file(path_c, 8);
        snprintf(p, sizeof(p), "%s/sub/a-link", dir);
        CHECK_EQ(link(path_a, p), 0);
        snprintf(p, sizeof(p), "%s/link", dir);
        CHECK_EQ(symlink(path_b, p), 0);
        snprintf(p, sizeof(p), "%s/fifo", dir);
        CHECK_EQ(mkfifo(p, 0644), 0);
        if (geteuid() == 0) {
                snprintf(p, sizeof(p), "%s/null", dir);
                CHECK_EQ(mknod(p, S_IFCHR | 0644, makedev(1, 3)), 0);
        }
        test_tree();
        test_paths();
        test_untold();
        cleanup();
        TESTS_DONE();
}
