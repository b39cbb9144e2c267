/* SPDX-License-Identifier: MIT */
/* fs/extents.c: the extent holding an offset; a real file's map; a file
 * not written back yet, and who may have it written back. */
#include <errno.h>
#include <linux/fiemap.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "fs/extents.h"
#include "model/readset.h"
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

/* Whose writeback readset may force: root itself any file's; a user only
 * their own; under sudo root's and the invoking user's, no one else's. */
static void test_sync_allowed(void)
{
        const uid_t root = 0, alice = 1000, bob = 1001, none = (uid_t)-1;

        CHECK(extents_sync_allowed(bob, root, none));
        CHECK(extents_sync_allowed(root, root, none));
        CHECK(extents_sync_allowed(alice, alice, alice));
        CHECK(!extents_sync_allowed(bob, alice, alice));
        CHECK(!extents_sync_allowed(root, alice, alice));
        CHECK(extents_sync_allowed(alice, root, alice));     /* sudo, alice's file */
        CHECK(extents_sync_allowed(root, root, alice));      /* sudo, root's */
        CHECK(!extents_sync_allowed(bob, root, alice));      /* sudo, another user's */
        /* a set-user-ID caller: its effective user, not the real one's others */
        CHECK(extents_sync_allowed(bob, bob, alice));
        CHECK(!extents_sync_allowed(1002, bob, alice));
}

/* A file just written on ext4 (delayed allocation: no block yet) has no
 * position until it is written back: without sync none and said so, with
 * sync (root may) known; through the table too. */
static void test_fresh_file(void)
{
        char dir[] = "/var/tmp/readset-test.XXXXXX", path[64];
        char buf[4096];
        struct readset *rs;
        struct rs_file *f;
        struct rp_layout l, *t = NULL;
        struct extents_counts n;
        struct statfs sfs;
        struct stat st;
        bool unwritten = false;
        int fd;

        if (geteuid() != 0) {
                printf("fresh file: not checked, not root\n");
                return;
        }
        if (statfs("/var/tmp", &sfs) < 0 || sfs.f_type != EXT4_SUPER_MAGIC || !mkdtemp(dir)) {
                printf("fresh file: not checked, /var/tmp is not ext4\n");
                return;
        }
        snprintf(path, sizeof(path), "%s/f", dir);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        memset(buf, 'x', sizeof(buf));
        for (int i = 0; i < 16; i++)
                CHECK_EQ(write(fd, buf, sizeof(buf)), sizeof(buf));
        CHECK_EQ(fstat(fd, &st), 0);
        rs = readset_new();
        f = readset_add_file(rs, path, st.st_dev, st.st_ino);
        f->kind = RS_FILE_REGULAR;
        f->size = (uint64_t)st.st_size;
        f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;

        CHECK_EQ(extents_read_positions(fd, false, &l, &unwritten), 0);
        if (!unwritten)
                /* (mounted nodelalloc, or written back by someone's sync meanwhile) */
                printf("fresh file: not checked, already written back\n");
        else {
                CHECK(l.known);
                CHECK_EQ(l.n_extents, 0);
                extents_clear(&l);
                CHECK_EQ(extents_table_read(rs, NULL, 0, &t, &n), 0);
                CHECK_EQ(n.unwritten, 1);
                CHECK_EQ(n.unknown, 0);
                CHECK(t[0].known && t[0].n_extents == 0);
                extents_table_free(t, rs->n_files);
                /* the table with sync: written back, positions known */
                CHECK_EQ(extents_table_read(rs, NULL, EXTENTS_TABLE_SYNC, &t, &n), 0);
                CHECK_EQ(n.unwritten, 0);
                CHECK(t[0].known && t[0].n_extents > 0);
                CHECK(extent_at(&t[0], 60 * K, NULL) != NULL);
                extents_table_free(t, rs->n_files);
                CHECK_EQ(extents_read_positions(fd, false, &l, &unwritten), 0);
                CHECK(!unwritten && l.n_extents > 0);
                extents_clear(&l);
        }
        readset_free(rs);
        close(fd);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        test_extent_at();
        test_real_file();
        test_sync_allowed();
        test_fresh_file();
        TESTS_DONE();
}
