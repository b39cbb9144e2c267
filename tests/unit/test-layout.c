/* SPDX-License-Identifier: MIT */
/* layout/survey.c's pure parts: the spans of a file (whole, or the ranges
 * read), the pieces a map puts them in, and the decision (what moves, what
 * stays, what does not fit, when nothing gains); the backend chosen by the
 * file system's type, the verdict; the prediction layout shares with
 * report. */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout/layout.h"
#include "replay/policy.h"
#include "report/report.h"
#include "tests.h"

#define BS 4096ULL

static struct rs_file *rs_file_with(struct readset *rs, const char *path, uint64_t size)
{
        struct rs_file *f = readset_add_file(rs, path, 1, rs->n_files + 10);
        f->size = size;
        return f;
}

static void test_spans(void)
{
        struct readset *rs = readset_new();
        struct rs_file *f = rs_file_with(rs, "/a", 100 * BS + 10);
        struct layout_file lf = { .size = 100 * BS + 10 };

        /* whole: every block to the end, the partial last one too */
        CHECK_EQ(layout_spans(&lf, f, LAYOUT_FILES, BS), 0);
        CHECK_EQ(lf.n_spans, 1);
        CHECK_EQ(lf.spans[0].start, 0);
        CHECK_EQ(lf.spans[0].len, 101);
        /* ranges: read and read ahead, sorted, merged across gaps under
         * 64 KiB, cut at the end of the file */
        readset_file_add_range(f, 60 * BS, 4 * BS, 1, RS_RANGE_ACCESSED);
        readset_file_add_range(f, 0, 2 * BS, 2, RS_RANGE_ACCESSED);
        readset_file_add_range(f, 10 * BS, 2 * BS, 3, RS_RANGE_ACCESSED);   /* 8 blocks apart: bridged */
        readset_file_add_range(f, 40 * BS, 2 * BS, 4, RS_RANGE_FILLED);     /* read ahead: moved too */
        readset_file_add_range(f, 98 * BS, 8 * BS, 5, RS_RANGE_ACCESSED);   /* past the end: cut */
        CHECK_EQ(layout_spans(&lf, f, LAYOUT_RANGES, BS), 0);
        CHECK_EQ(lf.n_spans, 4);
        CHECK_EQ(lf.spans[0].start, 0);
        CHECK_EQ(lf.spans[0].len, 12);
        CHECK_EQ(lf.spans[1].start, 40);
        CHECK_EQ(lf.spans[1].len, 2);
        CHECK_EQ(lf.spans[2].start, 60);
        CHECK_EQ(lf.spans[2].len, 4);
        CHECK_EQ(lf.spans[3].start, 98);
        CHECK_EQ(lf.spans[3].len, 3);
        /* auto: these ranges are 21 of 101 blocks: the ranges */
        CHECK_EQ(layout_spans(&lf, f, LAYOUT_AUTO, BS), 0);
        CHECK_EQ(lf.n_spans, 4);
        /* a file read 7/8 or more: whole */
        struct rs_file *g = rs_file_with(rs, "/b", 16 * BS);
        struct layout_file lg = { .size = 16 * BS };
        readset_file_add_range(g, 0, 6 * BS, 1, RS_RANGE_ACCESSED);
        readset_file_add_range(g, 8 * BS, 8 * BS, 2, RS_RANGE_ACCESSED);
        CHECK_EQ(layout_spans(&lg, g, LAYOUT_AUTO, BS), 0);
        CHECK_EQ(lg.n_spans, 1);
        CHECK_EQ(lg.spans[0].len, 16);
        /* no range at all: nothing */
        struct rs_file *h = rs_file_with(rs, "/c", 16 * BS);
        struct layout_file lh = { .size = 16 * BS };
        CHECK_EQ(layout_spans(&lh, h, LAYOUT_AUTO, BS), 0);
        CHECK_EQ(lh.n_spans, 0);
        free(lf.spans);
        free(lg.spans);
        free(lh.spans);
        readset_free(rs);
}

static void test_pieces(void)
{
        /* blocks [0,4) at 100, a hole [4,6), [6,10) at 200, [10,12) at 204 */
        struct rp_extent e[] = { { 0, 100 * BS, 4 * BS }, { 6 * BS, 200 * BS, 4 * BS }, { 10 * BS, 204 * BS, 2 * BS } };
        struct rp_layout map = { e, 3, true };
        struct layout_span sp[] = { { 2, 6 }, { 9, 3 } };   /* [2,8) and [9,12) */
        struct layout_file lf = { .spans = sp, .n_spans = 2, .size = 12 * BS };
        struct layout_iter it = {};
        uint64_t b, p, n;

        CHECK(layout_next_piece(&lf, &map, BS, &it, &b, &p, &n));
        CHECK_EQ(b, 2);
        CHECK_EQ(p, 102 * BS);
        CHECK_EQ(n, 2);
        /* the hole is left out */
        CHECK(layout_next_piece(&lf, &map, BS, &it, &b, &p, &n));
        CHECK_EQ(b, 6);
        CHECK_EQ(p, 200 * BS);
        CHECK_EQ(n, 2);
        CHECK(layout_next_piece(&lf, &map, BS, &it, &b, &p, &n));
        CHECK_EQ(b, 9);
        CHECK_EQ(p, 203 * BS);
        CHECK_EQ(n, 1);
        CHECK(layout_next_piece(&lf, &map, BS, &it, &b, &p, &n));
        CHECK_EQ(b, 10);
        CHECK_EQ(p, 204 * BS);
        CHECK_EQ(n, 2);
        CHECK(!layout_next_piece(&lf, &map, BS, &it, &b, &p, &n));
}

/* n files of 4 blocks each, file i at physical position pos[i] (blocks) */
struct fixture {
        struct readset *rs;
        struct layout l;
        struct rp_extent ext[8];
        struct layout_span span[8];
        struct layout_file files[8];
};

static void fixture(struct fixture *x, size_t n, const uint64_t *pos)
{
        memset(x, 0, sizeof(*x));
        x->rs = readset_new();
        x->l.rs = x->rs;
        x->l.fs.block_size = BS;
        x->l.files = x->files;
        x->l.n_files = n;
        for (size_t i = 0; i < n; i++) {
                rs_file_with(x->rs, "/f", 4 * BS);
                x->ext[i] = (struct rp_extent){ 0, pos[i] * BS, 4 * BS };
                x->span[i] = (struct layout_span){ 0, 4 };
                x->files[i] = (struct layout_file){ .file = (uint32_t)i, .size = 4 * BS, .blocks = 4, .pieces = 1,
                                                    .spans = &x->span[i], .n_spans = 1,
                                                    .before = { &x->ext[i], 1, true } };
        }
}

static void test_decide(void)
{
        struct fixture x;

        /* scattered: all move, one run after */
        fixture(&x, 4, (uint64_t[]){ 100, 50, 300, 10 });
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.pieces_now, 4);
        CHECK_EQ(x.l.move_files, 4);
        CHECK_EQ(x.l.move_blocks, 16);
        CHECK_EQ(x.l.keep_files, 0);
        CHECK_EQ(x.l.pieces_after, 1);
        CHECK(!x.l.no_gain);
        readset_free(x.rs);

        /* already in order: nothing gains, nothing moves */
        fixture(&x, 4, (uint64_t[]){ 100, 104, 108, 112 });
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.pieces_now, 1);
        CHECK(x.l.no_gain);
        for (size_t i = 0; i < 4; i++)
                CHECK(!x.files[i].move);
        readset_free(x.rs);

        /* most in order (a layout run again after files changed): the
         * chain stays, the others move into one run after it */
        fixture(&x, 5, (uint64_t[]){ 100, 104, 108, 900, 20 });
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.pieces_now, 3);
        CHECK_EQ(x.l.keep_files, 3);
        CHECK_EQ(x.l.move_files, 2);
        CHECK(x.files[3].move && x.files[4].move && !x.files[0].move && x.files[0].keep);
        CHECK_EQ(x.l.pieces_after, 2);
        CHECK(!x.l.no_gain);
        readset_free(x.rs);

        /* one file out of place at the end: moving it would leave it a run
         * of its own elsewhere: no gain */
        fixture(&x, 4, (uint64_t[]){ 100, 104, 108, 900 });
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.pieces_now, 2);
        CHECK_EQ(x.l.pieces_after, 2);
        CHECK(x.l.no_gain);
        CHECK(!x.files[3].move);
        readset_free(x.rs);

        /* not enough room: a prefix of the start moves, the rest waits */
        fixture(&x, 4, (uint64_t[]){ 100, 50, 300, 10 });
        layout_decide(&x.l, 9);
        CHECK_EQ(x.l.move_files, 2);
        CHECK(x.files[0].move && x.files[1].move && !x.files[2].move && !x.files[3].move);
        CHECK_EQ(x.files[2].skip, LAYOUT_SKIP_NO_SPACE);
        CHECK_EQ(x.files[3].skip, LAYOUT_SKIP_NO_SPACE);
        CHECK_EQ(x.l.skipped[LAYOUT_SKIP_NO_SPACE], 2);
        CHECK_EQ(x.l.pieces_now, 2);
        CHECK_EQ(x.l.pieces_after, 1);
        readset_free(x.rs);

        /* a chain of less than half the data moves too */
        fixture(&x, 4, (uint64_t[]){ 100, 104, 900, 20 });
        x.files[2].blocks = x.files[3].blocks = 8;
        x.ext[2].length = x.ext[3].length = 8 * BS;
        x.span[2].len = x.span[3].len = 8;
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.keep_files, 0);
        CHECK_EQ(x.l.move_files, 4);
        readset_free(x.rs);

        /* a kept chain and too little room for the rest: the rest waits,
         * and since what fits would not gain, nothing moves, counted so */
        fixture(&x, 5, (uint64_t[]){ 100, 104, 108, 900, 20 });
        layout_decide(&x.l, 3);
        CHECK_EQ(x.l.keep_files, 3);
        CHECK_EQ(x.l.fit_files, 0);
        CHECK_EQ(x.l.skipped[LAYOUT_SKIP_NO_SPACE], 2);
        CHECK(x.l.no_gain);
        CHECK_EQ(x.l.move_files, 0);
        CHECK_EQ(x.l.move_blocks, 0);
        readset_free(x.rs);

        /* skipped and duplicate files count nowhere */
        fixture(&x, 3, (uint64_t[]){ 100, 50, 300 });
        x.files[1].skip = LAYOUT_SKIP_RUNNING;
        x.files[2].duplicate = true;
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.movable_files, 1);
        CHECK_EQ(x.l.pieces_now, 1);
        CHECK(x.l.no_gain);
        readset_free(x.rs);
}

/* blocks smaller than a page: files that follow within less than a page
 * (the page alignment a layout leaves) are one run */
static void test_small_blocks(void)
{
        struct fixture x;
        long page = sysconf(_SC_PAGESIZE);

        fixture(&x, 3, (uint64_t[]){ 0, 0, 0 });
        x.l.fs.block_size = 1024;
        for (size_t i = 0; i < 3; i++) {
                /* 4 blocks of 1 KiB each, the next file 2 KiB after */
                x.ext[i] = (struct rp_extent){ 0, 1000 * 1024 + i * 6 * 1024, 4 * 1024 };
                x.files[i].size = 4 * 1024;
        }
        layout_decide(&x.l, 1000);
        CHECK_EQ(x.l.pieces_now, page > 2048 ? 1 : 3);
        if (page > 2048)
                CHECK(x.l.no_gain);
        readset_free(x.rs);
}

static void test_names(void)
{
        for (int w = 0; w < _LAYOUT_SKIP_MAX; w++)
                CHECK(strcmp(layout_skip_name(w), "?") != 0);
        CHECK(strcmp(layout_skip_name(_LAYOUT_SKIP_MAX), "?") == 0);
        CHECK(layout_skip_advice(LAYOUT_SKIP_RUNNING) != NULL);
        CHECK(layout_skip_advice(LAYOUT_SKIP_EMPTY) == NULL);
}

static void test_ops_choice(void)
{
        CHECK(layout_ops_find("ext4", EXT4_SUPER_MAGIC) == &layout_ext4_ops);
        CHECK(layout_ops_find("btrfs", BTRFS_SUPER_MAGIC) == &layout_btrfs_ops);
        /* the type and the magic must agree: ext2/3 share ext4's magic */
        CHECK(layout_ops_find("ext3", EXT4_SUPER_MAGIC) == NULL);
        CHECK(layout_ops_find("ext4", BTRFS_SUPER_MAGIC) == NULL);
        CHECK(layout_ops_find("xfs", XFS_SUPER_MAGIC) == NULL);
        CHECK(layout_btrfs_ops.compresses && !layout_ext4_ops.compresses);
        CHECK(layout_ext4_ops.leaves_rescue && !layout_btrfs_ops.leaves_rescue);
        /* ext4 refuses data=journal, whole */
        struct layout_fs fs = { .ops = &layout_ext4_ops, .data_journal = true };
        CHECK_EQ(layout_ext4_ops.accept(&fs), -EOPNOTSUPP);
        fs.data_journal = false;
        CHECK_EQ(layout_ext4_ops.accept(&fs), 0);
}

static void test_verdict(void)
{
        struct fixture x;

        fixture(&x, 4, (uint64_t[]){ 100, 50, 300, 10 });
        layout_decide(&x.l, 1000);
        CHECK_EQ(layout_verdict(&x.l, false, false), LAYOUT_VERDICT_MOVE);
        CHECK_EQ(layout_verdict(&x.l, true, false), LAYOUT_VERDICT_SOLID_STATE);
        CHECK_EQ(layout_verdict(&x.l, true, true), LAYOUT_VERDICT_MOVE);
        CHECK(strcmp(layout_verdict_name(LAYOUT_VERDICT_SOLID_STATE), "solid-state") == 0);
        /* not even the first file fits */
        layout_decide(&x.l, 3);
        CHECK_EQ(layout_verdict(&x.l, false, false), LAYOUT_VERDICT_NO_SPACE);
        CHECK(strcmp(layout_verdict_name(LAYOUT_VERDICT_NO_SPACE), "no-space") == 0);
        readset_free(x.rs);
        /* in order already: nothing gains, forced or not */
        fixture(&x, 3, (uint64_t[]){ 10, 14, 18 });
        layout_decide(&x.l, 1000);
        CHECK_EQ(layout_verdict(&x.l, false, true), LAYOUT_VERDICT_NO_GAIN);
        readset_free(x.rs);
        /* every file skipped */
        fixture(&x, 2, (uint64_t[]){ 100, 10 });
        x.files[0].skip = x.files[1].skip = LAYOUT_SKIP_RUNNING;
        layout_decide(&x.l, 1000);
        CHECK_EQ(layout_verdict(&x.l, false, false), LAYOUT_VERDICT_NOTHING_MOVABLE);
        CHECK(strcmp(layout_verdict_name(LAYOUT_VERDICT_NOTHING_MOVABLE), "nothing-movable") == 0);
        readset_free(x.rs);
        CHECK(layout_stop_name(0) == NULL);
        CHECK(strcmp(layout_stop_name(-EINTR), "interrupted") == 0);
}

/* btrfs's decision: every file kept by the survey is rewritten; the runs
 * its extents lie in (a compressed extent followed within its logical
 * length), its compressed extents counted. */
static void test_btrfs_decide(void)
{
        struct rp_extent e[5] = {
                { 0, 1000 * BS, 32 * BS, FIEMAP_EXTENT_ENCODED },
                { 32 * BS, 1010 * BS, 32 * BS, FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_LAST },  /* follows */
                { 0, 5000 * BS, 4 * BS, FIEMAP_EXTENT_LAST },            /* elsewhere */
                { 0, 0, 100, FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_LAST },
                { 0, 9000 * BS, 4 * BS, FIEMAP_EXTENT_SHARED | FIEMAP_EXTENT_LAST },
        };
        struct layout_file f[4] = {
                { .file = 0, .size = 64 * BS, .before = { &e[0], 2, true } },
                { .file = 1, .size = 4 * BS, .before = { &e[2], 1, true } },
                { .file = 2, .size = 100, .before = { &e[3], 1, true } },
                { .file = 3, .size = 4 * BS, .skip = LAYOUT_SKIP_SHARED, .before = { &e[4], 1, true } },
        };
        struct layout l = { .files = f, .n_files = 4 };

        layout_btrfs_ops.decide(&l);
        CHECK_EQ(l.move_files, 3);
        CHECK_EQ(l.move_bytes, 68 * BS + 100);
        CHECK_EQ(l.encoded_before, 2);
        CHECK_EQ(l.movable_files, 3);
        CHECK_EQ(l.pieces_now, 2);
        CHECK(f[0].move && f[1].move && !f[3].move);
        CHECK_EQ(layout_verdict(&l, false, false), LAYOUT_VERDICT_MOVE);
        f[0].skip = f[1].skip = f[2].skip = LAYOUT_SKIP_COMPRESSED;
        layout_btrfs_ops.decide(&l);
        CHECK_EQ(l.move_files, 0);
        CHECK_EQ(layout_verdict(&l, false, false), LAYOUT_VERDICT_NOTHING_MOVABLE);
}

/* What layout predicts (report_predict_here) is what report predicts from
 * the same analysis: the device's request size, the main device only. */
static void test_shared_prediction(void)
{
        struct readset *rs = readset_new();
        struct rs_file *a = readset_add_file(rs, "/nonexistent/readset-test/a", 1, 1);
        struct rs_file *b = readset_add_file(rs, "/nonexistent/readset-test/b", 2, 2);
        struct rs_file *m = readset_add_file(rs, "/dev/sda1", 1, 0);
        struct cost_profile hdd = { .lat_us = 12000, .seq_bps = 100e6, .rotational = true };
        struct replay_options o;
        struct device_profile dev;
        struct rp_layout *lay = NULL;
        struct report *r = NULL;
        struct rp_scenarios here, by_hand;
        struct extents_counts counts = {};

        a->kind = b->kind = RS_FILE_REGULAR;
        a->size = b->size = 1 << 20;
        m->kind = RS_FILE_BLOCKDEV;
        for (uint64_t i = 0; i < 8; i++) {
                CHECK_EQ(readset_file_add_range(a, i * 131072, 131072, 10 * i, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
                CHECK_EQ(readset_file_add_range(b, i * 65536, 65536, 10 * i + 5, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
                CHECK_EQ(readset_file_add_range(m, i << 30, 65536, 10 * i + 7, RS_RANGE_FILLED), 0);
        }
        replay_options_init(&o);
        device_profile_rotational(&dev);
        dev.readahead_cap = 16384;
        dev.max_request = 1 << 20;
        CHECK_EQ(report_predict_here(rs, &hdd, &o, &dev, &here), 0);
        /* report's way: one analysis, then the replay's prediction */
        CHECK_EQ(report_analyse(rs, 16384, &lay, &counts, &r), 0);
        CHECK_EQ(counts.unknown, 2);
        CHECK_EQ(counts.unwritten, 0);
        CHECK(lay && !lay[0].known && !lay[1].known);
        CHECK_EQ(report_predict_replay(r, rs, lay, &hdd, &o, &dev, true, false, &by_hand), 0);
        CHECK(here.plain.seconds > 0);
        CHECK(here.plain.seconds == by_hand.plain.seconds);
        CHECK(here.replay.seconds == by_hand.replay.seconds);
        CHECK(here.layout.seconds == by_hand.layout.seconds);
        CHECK_EQ(here.plain.requests, by_hand.plain.requests);
        report_free(r);
        extents_table_free(lay, rs->n_files);
        readset_free(rs);
}

int main(void)
{
        test_spans();
        test_pieces();
        test_decide();
        test_small_blocks();
        test_names();
        test_ops_choice();
        test_verdict();
        test_btrfs_decide();
        test_shared_prediction();
        TESTS_DONE();
}
