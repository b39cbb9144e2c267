/* SPDX-License-Identifier: MIT */
/* model/compare.c: what of an old read set a new recording used again. */
#include "model/compare.h"
#include "tests.h"

#define K 1024ULL

static void test_overlap(void)
{
        const uint64_t iv[] = { 0, 10, 20, 30, 40, 50 };

        CHECK_EQ(intervals_overlap(iv, 3, 0, 50), 30);
        CHECK_EQ(intervals_overlap(iv, 3, 5, 25), 10);   /* 5..10, 20..25 */
        CHECK_EQ(intervals_overlap(iv, 3, 10, 20), 0);   /* exactly a gap */
        CHECK_EQ(intervals_overlap(iv, 3, 45, 1000), 5);
        CHECK_EQ(intervals_overlap(iv, 3, 50, 60), 0);
        CHECK_EQ(intervals_overlap(iv, 0, 0, 100), 0);
        CHECK_EQ(intervals_overlap(iv, 1, 9, 11), 1);
}

static struct rs_file *add(struct readset *rs, const char *path, uint64_t ino, uint64_t size)
{
        struct rs_file *f = readset_add_file(rs, path, 1, ino);
        f->kind = RS_FILE_REGULAR;
        f->size = size;
        f->mtime_ns = 1000;
        return f;
}

static void test_compare(void)
{
        struct readset *old = readset_new(), *cur = readset_new();
        struct readset_usage u;
        struct rs_file *a, *b, *c;

        /* old: a [0, 64K) used, [64K, 128K) only read ahead; b [0, 16K) */
        a = add(old, "/a", 1, 1 << 20);
        CHECK_EQ(readset_file_add_range(a, 0, 64 * K, 0, RS_RANGE_ACCESSED), 0);
        CHECK_EQ(readset_file_add_range(a, 64 * K, 64 * K, 5, RS_RANGE_FILLED), 0);
        b = add(old, "/b", 2, 1 << 20);
        CHECK_EQ(readset_file_add_range(b, 0, 16 * K, 10, RS_RANGE_ACCESSED), 0);
        /* new: a used again in part, b changed (its size), c new and fetched by the command */
        a = add(cur, "/a", 1, 1 << 20);
        CHECK_EQ(readset_file_add_range(a, 32 * K, 64 * K, 0, RS_RANGE_ACCESSED), 0);
        CHECK_EQ(readset_file_add_range(a, 8 * K, 8 * K, 1, RS_RANGE_ACCESSED), 0);
        b = add(cur, "/b", 2, 2 << 20);
        CHECK_EQ(readset_file_add_range(b, 0, 16 * K, 1, RS_RANGE_ACCESSED), 0);
        c = add(cur, "/c", 3, 1 << 20);
        CHECK_EQ(readset_file_add_range(c, 0, 4 * K, 2, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);

        CHECK_EQ(readset_compare(old, cur, &u), 0);
        CHECK_EQ(u.old_bytes, 80 * K);                  /* readahead does not count */
        CHECK_EQ(u.still_used, 8 * K + 32 * K);          /* [8K, 16K) and [32K, 64K) of a; b changed */
        CHECK_EQ(u.new_accessed, 64 * K + 8 * K + 16 * K + 4 * K);
        CHECK_EQ(u.new_filled, 4 * K);
        /* the same recording compared with itself: all used */
        CHECK_EQ(readset_compare(cur, cur, &u), 0);
        CHECK_EQ(u.still_used, u.old_bytes);
        /* an empty recording uses nothing */
        readset_free(cur);
        cur = readset_new();
        CHECK_EQ(readset_compare(old, cur, &u), 0);
        CHECK_EQ(u.still_used, 0);
        CHECK_EQ(u.old_bytes, 80 * K);
        readset_free(old);
        readset_free(cur);
}

int main(void)
{
        test_overlap();
        test_compare();
        TESTS_DONE();
}
