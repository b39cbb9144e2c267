/* SPDX-License-Identifier: MIT */
/* The builder: pages -> ranges in first-access order. */
#include <string.h>

#include "model/readset.h"
#include "record/builder.h"
#include "util/util.h"
#include "tests.h"

#define P 4096

static void add(struct rs_builder *b, uint64_t t, uint64_t ino, uint64_t first, uint64_t end, uint32_t kind)
{
        struct rs_event ev = { .time_us = t, .kdev = (254u << 20) | 1, .ino = ino,
                               .first_page = first, .end_page = end, .kind = kind };
        CHECK_EQ(builder_add(b, &ev), 0);
}

static int resolve(void *ud, uint32_t kdev, uint64_t ino, struct rs_identity *ret)
{
        static char path[64];
        (void)ud;
        (void)kdev;
        if (ino == 99) {  /* unknown */
                *ret = (struct rs_identity){ .kind = RS_FILE_UNRESOLVED };
                return 0;
        }
        snprintf(path, sizeof(path), "/f%llu", (unsigned long long)ino);
        *ret = (struct rs_identity){ .path = path, .kind = RS_FILE_REGULAR, .size = ino == 3 ? 3 * P + 10 : 0 };
        return 0;
}

static const struct rs_file *find(const struct readset *rs, const char *path)
{
        for (size_t i = 0; i < rs->n_files; i++)
                if (strcmp(rs->files[i].path, path) == 0)
                        return &rs->files[i];
        return NULL;
}

static void test_first_access_order(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();
        const struct rs_file *f;

        /* file 1: pages 10-11 read first, then 0-3, then 2-13 again (only 4-9 and 12-13 are new) */
        add(b, 100, 1, 10, 12, RS_EV_ACCESS);
        add(b, 200, 1, 0, 4, RS_EV_ACCESS);
        add(b, 300, 1, 2, 14, RS_EV_ACCESS);
        /* file 2 first touched before file 1's second read */
        add(b, 150, 2, 0, 1, RS_EV_ACCESS);
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        CHECK_EQ(rs->n_files, 2);
        CHECK(strcmp(rs->files[0].path, "/f1") == 0);   /* first access at 100 */
        CHECK(strcmp(rs->files[1].path, "/f2") == 0);
        f = find(rs, "/f1");
        CHECK(f != NULL);
        if (f) {
                /* 10-11 first; then 0-3 (t=200) and its continuation 4-9 (t=300)
                 * become one read; then 12-13 */
                CHECK_EQ(f->n_ranges, 3);
                CHECK_EQ(f->ranges[0].offset, 10 * P);
                CHECK_EQ(f->ranges[0].length, 2 * P);
                CHECK_EQ(f->ranges[0].time_us, 100);
                CHECK_EQ(f->ranges[1].offset, 0);
                CHECK_EQ(f->ranges[1].length, 10 * P);
                CHECK_EQ(f->ranges[1].time_us, 200);
                CHECK_EQ(f->ranges[2].offset, 12 * P);
                CHECK_EQ(f->ranges[2].length, 2 * P);
                CHECK_EQ(f->ranges[2].time_us, 300);
        }
        CHECK_EQ(readset_validate(rs), 0);
        builder_free(b);
        readset_free(rs);
}

static void test_fill_vs_access(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();
        const struct rs_file *f;
        struct readset_totals t;

        /* readahead brings in 0-31 at t=10; the program reads 0-3 at t=10 and 8 at t=50 */
        add(b, 10, 5, 0, 32, RS_EV_FILL);
        add(b, 10, 5, 0, 4, RS_EV_ACCESS);
        add(b, 50, 5, 8, 9, RS_EV_ACCESS);
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        f = find(rs, "/f5");
        CHECK(f != NULL);
        if (f) {
                uint64_t acc = 0, total = 0;
                for (size_t i = 0; i < f->n_ranges; i++) {
                        total += f->ranges[i].length;
                        if (f->ranges[i].flags & RS_RANGE_ACCESSED)
                                acc += f->ranges[i].length;
                }
                CHECK_EQ(total, 32 * P);
                CHECK_EQ(acc, 5 * P);
                CHECK_EQ(f->ranges[0].offset, 0);
                CHECK_EQ(f->ranges[0].length, 4 * P);
                CHECK(f->ranges[0].flags == (RS_RANGE_ACCESSED | RS_RANGE_FILLED));
                /* page 8 is needed at t=50: after the readahead-only pages (t=10) */
                CHECK_EQ(f->ranges[f->n_ranges - 1].offset, 8 * P);
                CHECK_EQ(f->ranges[f->n_ranges - 1].time_us, 50);
        }
        readset_totals(rs, &t);
        CHECK_EQ(t.accessed_bytes, 5 * P);
        builder_free(b);
        readset_free(rs);
}

static void test_clamp_and_unresolved(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();
        const struct rs_file *f;
        struct readset_totals t;

        /* file 3 is 3 pages + 10 bytes long: a read of 0-255 is clamped to 4 pages */
        add(b, 1, 3, 0, 256, RS_EV_ACCESS);
        /* beyond EOF entirely: dropped */
        add(b, 2, 3, 300, 301, RS_EV_ACCESS);
        add(b, 3, 99, 0, 2, RS_EV_ACCESS);
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        f = find(rs, "/f3");
        CHECK(f && f->n_ranges == 1 && f->ranges[0].length == 4 * P);
        readset_totals(rs, &t);
        CHECK_EQ(t.unresolved_files, 1);
        CHECK_EQ(t.unresolved_bytes, 2 * P);
        CHECK(find(rs, "254:1:99") != NULL);   /* kept and labelled, not dropped */
        builder_free(b);
        readset_free(rs);
}

static void test_sequential_merge(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();

        for (uint64_t i = 0; i < 1000; i++)
                add(b, 10 + i, 7, i, i + 1, RS_EV_ACCESS);
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        CHECK_EQ(rs->n_files, 1);
        CHECK_EQ(rs->files[0].n_ranges, 1);
        CHECK_EQ(rs->files[0].ranges[0].length, 1000 * P);
        CHECK_EQ(rs->files[0].ranges[0].time_us, 10);
        builder_free(b);
        readset_free(rs);
}

static void test_many_keys(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();

        /* many files and a block device with scattered ranges */
        for (uint64_t i = 0; i < 20000; i++)
                add(b, i, 1000 + (i % 5000), (i * 7919) % 100000, (i * 7919) % 100000 + 1, i % 2);
        CHECK_EQ(builder_n_keys(b), 5000);
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        CHECK_EQ(rs->n_files, 5000);
        CHECK_EQ(readset_validate(rs), 0);
        for (size_t i = 1; i < rs->n_files; i++)
                CHECK(rs->files[i - 1].ranges[0].time_us <= rs->files[i].ranges[0].time_us);
        builder_free(b);
        readset_free(rs);
}

/* Events come per CPU, not in time order; and a file read slowly keeps the
 * times of its pieces. */
static void test_order_and_gaps(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();
        const struct rs_file *f;

        add(b, 100, 8, 0, 10, RS_EV_ACCESS);
        add(b, 50, 8, 2, 3, RS_EV_ACCESS);          /* earlier, from another CPU */
        add(b, 0, 9, 0, 1, RS_EV_ACCESS);
        add(b, 5000000, 9, 1, 2, RS_EV_ACCESS);     /* the next page, 5 s later */
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        f = find(rs, "/f8");
        CHECK(f != NULL);
        if (f) {
                bool page2_early = false;
                for (size_t i = 0; i < f->n_ranges; i++)
                        if (f->ranges[i].offset <= 2 * P && f->ranges[i].offset + f->ranges[i].length > 2 * P)
                                page2_early = f->ranges[i].time_us == 50;
                CHECK(page2_early);
        }
        f = find(rs, "/f9");
        CHECK(f && f->n_ranges == 2);
        if (f && f->n_ranges == 2)
                CHECK_EQ(f->ranges[1].time_us, 5000000);
        builder_free(b);
        readset_free(rs);
}

/* A bound on what is kept: the first events stay, the rest are counted */
static void test_limit(void)
{
        struct rs_builder *b = builder_new();
        struct readset *rs = readset_new();
        uint64_t bytes = 0;

        builder_set_limit(b, 10);
        /* 100 reads of one page each, every other page: none merges */
        for (uint64_t i = 0; i < 100; i++)
                add(b, 1000 * i, 1 + i % 2, 2 * i, 2 * i + 1, RS_EV_ACCESS);   /* files of unknown size */
        CHECK_EQ(builder_n_events(b), 100);
        CHECK_EQ(builder_n_dropped(b), 90);
        CHECK_EQ(builder_finish(b, rs, P, resolve, NULL), 0);
        for (size_t i = 0; i < rs->n_files; i++)
                for (size_t j = 0; j < rs->files[i].n_ranges; j++)
                        bytes += rs->files[i].ranges[j].length;
        CHECK_EQ(bytes, 10 * P);
        builder_free(b);
        readset_free(rs);
}

int main(void)
{
        test_limit();
        test_order_and_gaps();
        test_first_access_order();
        test_fill_vs_access();
        test_clamp_and_unresolved();
        test_sequential_merge();
        test_many_keys();
        TESTS_DONE();
}
