/* SPDX-License-Identifier: MIT */
/* fs/extents.c: the extent holding an offset; a real file's map. */
#include <errno.h>
#include <linux/fiemap.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/extents.h"
#include "tests.h"

#define K 1024ULL

static void test_extent_at(void)
{
        /* [0, 8K) at 100K, a hole, [16K, 20K) at 40K, [20K, 28K) at 500K */
        struct rp_extent e[] = { { 0, 100 * K, 8 * K }, { 16 * K, 40 * K, 4 * K }, { 20 * K, 500 * K, 8 * K } };
        struct rp_layout l = { e, 3, true }, none = { NULL, 0, true };
        size_t idx = 99;

        CHECK(extent_at(&l, 0, &idx) == &e[0]);
        CHECK_EQ(idx, 0);
        CHECK(extent_at(&l, 8 * K - 1, &idx) == &e[0]);
        /* in the hole: none, and the index of the next one */
        CHECK(extent_at(&l, 8 * K, &idx) == NULL);
        CHECK_EQ(idx, 1);
        CHECK(extent_at(&l, 16 * K, &idx) == &e[1]);
        CHECK(extent_at(&l, 20 * K, &idx) == &e[2]);
        CHECK_EQ(idx, 2);
        CHECK(extent_at(&l, 27 * K, NULL) == &e[2]);
        /* past the end */
        CHECK(extent_at(&l, 28 * K, &idx) == NULL);
        CHECK_EQ(idx, 3);
        CHECK(extent_at(&l, UINT64_MAX, &idx) == NULL);
        CHECK(extent_at(&none, 0, &idx) == NULL);
        CHECK_EQ(idx, 0);
}

static void test_real_file(void)
{
        char dir[] = "/var/tmp/readset-test.XXXXXX", path[64];
        char buf[4096];
        struct rp_layout l;
        int fd, r;

        if (!mkdtemp(dir))
                TEST_SKIP("cannot create a directory in /var/tmp");
        snprintf(path, sizeof(path), "%s/f", dir);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        memset(buf, 'x', sizeof(buf));
        for (int i = 0; i < 64; i++)
                CHECK_EQ(write(fd, buf, sizeof(buf)), sizeof(buf));
        CHECK_EQ(fsync(fd), 0);
        r = extents_read(fd, &l);
        if (r == -EOPNOTSUPP)
                printf("real file: not checked, no FIEMAP on /var/tmp's file system\n");
        else {
                uint64_t mapped = 0;
                CHECK_EQ(r, 0);
                CHECK(l.known);
                for (size_t i = 0; i < l.n_extents; i++) {
                        mapped += l.extents[i].length;
                        CHECK(i == 0 || l.extents[i].logical >= l.extents[i - 1].logical + l.extents[i - 1].length);
                }
                CHECK(mapped >= 64 * 4096);
                CHECK(extent_at(&l, 0, NULL) != NULL);
                extents_clear(&l);
                CHECK(!l.known && l.n_extents == 0);
                /* every extent with its flags (EXTENTS_ALL is ours, never
                 * the kernel's): the last one says it is */
                uint64_t odd = 1;
                CHECK_EQ(extents_read_flags(fd, FIEMAP_FLAG_SYNC | EXTENTS_ALL, &l, &odd), 0);
                CHECK(l.known && l.n_extents > 0);
                CHECK_EQ(odd, 0);
                CHECK(l.n_extents && (l.extents[l.n_extents - 1].flags & FIEMAP_EXTENT_LAST));
                for (size_t i = 0; i + 1 < l.n_extents; i++)
                        CHECK(!(l.extents[i].flags & FIEMAP_EXTENT_LAST));
                extents_clear(&l);
        }
        close(fd);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        test_extent_at();
        test_real_file();
        TESTS_DONE();
}
