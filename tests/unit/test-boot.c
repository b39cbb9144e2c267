/* SPDX-License-Identifier: MIT */
/* boot/history.c and boot/plan.c: the closed loop's decisions over a
 * history (record first, a trial of replays, off where they do not help,
 * on where they do, trying again later, stale), the history's file, and
 * the plan made from several boots (what most of them used). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/history.h"
#include "boot/run-loop.h"
#include "boot/plan.h"
#include "model/readset.h"
#include "tests.h"

static void add(struct history *h, uint32_t mode, double seconds)
{
        struct start_entry e = { .mode = mode, .total_us = (uint64_t)(seconds * 1e6), .hit = -1 };
        h->e[h->n++] = e;
}

/* as history_append() keeps it: the oldest goes when full */
static void push(struct history *h, uint32_t mode, double seconds)
{
        if (h->n == HISTORY_MAX) {
                memmove(&h->e[0], &h->e[1], (HISTORY_MAX - 1) * sizeof(h->e[0]));
                h->n--;
        }
        add(h, mode, seconds);
}

static uint32_t next(const struct loop_options *o, const struct history *h, const char *stale)
{
        struct loop_decision d;
        loop_decide(o, h, true, stale, &d);
        return d.mode;
}

static void test_loop_off_where_useless(void)
{
        struct loop_options o;
        struct history h = { .n = 0 };
        struct loop_decision d;

        loop_options_default(&o);
        loop_decide(&o, &h, false, NULL, &d);
        CHECK_EQ(d.mode, START_RECORD);
        add(&h, START_RECORD, 10.0);
        CHECK_EQ(next(&o, &h, NULL), START_REPLAY_RECORD);
        add(&h, START_REPLAY_RECORD, 10.1);
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);      /* one replay is not a trial: a plain boot between */
        add(&h, START_PLAIN, 10.0);
        CHECK_EQ(next(&o, &h, NULL), START_REPLAY_RECORD);
        add(&h, START_REPLAY_RECORD, 9.9);
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);
        add(&h, START_PLAIN, 9.8);
        loop_decide(&o, &h, true, NULL, &d);
        CHECK_EQ(d.mode, START_OFF);                              /* within 3 boots */
        CHECK(d.off);                   /* after two replayed boots */
        CHECK(strstr(d.why, "did not help") != NULL);
        /* off until retry_after boots, then tried again */
        for (unsigned i = 0; i < o.retry_after - 1; i++) {
                add(&h, START_OFF, 10.0);
                CHECK_EQ(next(&o, &h, NULL), START_OFF);
        }
        add(&h, START_OFF, 10.0);
        CHECK_EQ(next(&o, &h, NULL), START_REPLAY_RECORD);
        /* a stale read set is re-recorded whatever the loop said */
        CHECK_EQ(next(&o, &h, "packages changed"), START_REPLAY_RECORD);
}

/* a replay that found a tenth of its files changed: the next start records
 * anew, once (files that change at every start must not keep it recording) */
static void test_loop_stale_by_identity(void)
{
        struct loop_options o;
        struct history h = { .n = 0 };
        struct loop_decision d;

        loop_options_default(&o);
        add(&h, START_RECORD, 10.0);
        add(&h, START_REPLAY_RECORD, 6.0);
        h.e[1].files = 100;
        h.e[1].changed = 9;
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);    /* 9%: not stale (the trial goes on) */
        h.e[1].changed = 10;
        loop_decide(&o, &h, true, NULL, &d);
        CHECK_EQ(d.mode, START_REPLAY_RECORD);
        CHECK(strstr(d.why, "10 of its 100 files changed") != NULL);
        add(&h, START_REPLAY_RECORD, 6.0);
        h.e[2].files = 100;
        h.e[2].changed = 10;
        snprintf(h.e[2].note, sizeof(h.e[2].note), "%s", d.why);
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);             /* not stale again right after */
}

static void test_loop_on_where_it_helps(void)
{
        struct loop_options o;
        struct history h = { .n = 0 };
        unsigned replays = 0, baselines = 0;

        loop_options_default(&o);
        add(&h, START_RECORD, 10.0);
        for (int i = 0; i < 40; i++) {
                uint32_t m = next(&o, &h, NULL);
                CHECK(m != START_OFF);
                if (m == START_REPLAY_RECORD) {
                        replays++;
                        add(&h, m, 6.0);
                } else {
                        CHECK_EQ(m, START_PLAIN);   /* now and then one boot to measure against */
                        baselines++;
                        add(&h, m, 10.0);
                }
        }
        CHECK(replays >= 36);
        CHECK(baselines >= 2 && baselines <= 4);       /* one in the trial, then one in 16 */
}

/* run --auto's loop, with the options run --auto uses: no recording while
 * replaying, plain runs the baseline, a trial of three, a clearer gain */
static void test_loop_run_auto(void)
{
        struct loop_options o;
        struct history h = { .n = 0 };

        loop_options_for_run(&o);
        CHECK(!o.record_replays);
        add(&h, START_RECORD, 1.3);     /* recording costs: not what replay is judged against */
        CHECK_EQ(next(&o, &h, NULL), START_REPLAY);
        add(&h, START_REPLAY, 1.1);
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);      /* plain starts between the trial's replays */
        add(&h, START_PLAIN, 1.0);
        CHECK_EQ(next(&o, &h, NULL), START_REPLAY);
        add(&h, START_REPLAY, 1.12);
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);
        add(&h, START_PLAIN, 1.02);
        CHECK_EQ(next(&o, &h, NULL), START_REPLAY);     /* a run's trial is three replays */
        add(&h, START_REPLAY, 1.08);
        CHECK_EQ(next(&o, &h, NULL), START_PLAIN);
        add(&h, START_PLAIN, 1.01);
        CHECK_EQ(next(&o, &h, NULL), START_OFF);
}

/* run --auto keeps replay only for a clearer gain than a boot: 4% faster
 * turns it off (0.95), where a boot would keep it (0.97); off, it tries
 * again 64 runs on */
static void test_loop_run_auto_keeps(void)
{
        struct loop_options o, boot;
        struct history h = { .n = 0 };
        unsigned off = 0;

        loop_options_for_run(&o);
        loop_options_for_boot(&boot);
        add(&h, START_RECORD, 1.3);
        for (int i = 0; i < 3; i++) {
                add(&h, START_REPLAY, 0.96);
                add(&h, START_PLAIN, 1.0);
        }
        CHECK_EQ(next(&o, &h, NULL), START_OFF);
        boot.record_replays = false;
        CHECK(next(&boot, &h, NULL) != START_OFF);
        /* a clear gain: kept */
        h.n = 1;
        for (int i = 0; i < 3; i++) {
                add(&h, START_REPLAY, 0.8);
                add(&h, START_PLAIN, 1.0);
        }
        CHECK(next(&o, &h, NULL) != START_OFF);
        /* off, then tried again after 64 runs */
        h.n = 1;
        for (int i = 0; i < 3; i++) {
                add(&h, START_REPLAY, 1.0);
                add(&h, START_PLAIN, 1.0);
        }
        /* (64: the history holds as many, the retry is seen at the last) */
        while (next(&o, &h, NULL) == START_OFF && off < 100) {
                push(&h, START_OFF, 1.0);
                off++;
        }
        CHECK_EQ(off, 64u);
}

/* run --auto's loop over its history file: record, then replays without
 * recording; a replay's figures kept, what changed only from one that
 * went through; turning off said once */
static void test_run_loop(void)
{
        char dir[] = "/tmp/readset-test-run-loop.XXXXXX", file[256];
        struct start_replayed rp = { .bytes = 4096, .files = 100, .changed = 1 };
        struct run_loop l = { .t0 = 0 };
        bool record, replay, replace, off;
        struct history h;
        unsigned bad;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(file, sizeof(file), "%s/cmd.readset", dir);
        CHECK_EQ(run_loop_decide(&l, file, false, &off), 0);
        CHECK_EQ(l.d.mode, START_RECORD);
        CHECK(!off);
        run_loop_what(&l, false, &record, &replay, &replace);
        CHECK(record && !replay && !replace);
        CHECK_EQ(run_loop_note(&l, 100, 1300000, &rp), 0);
        CHECK_EQ(run_loop_decide(&l, file, true, &off), 0);
        CHECK_EQ(l.d.mode, START_REPLAY);
        run_loop_what(&l, false, &record, &replay, &replace);
        CHECK(!record && replay && !replace);
        run_loop_what(&l, true, &record, &replay, &replace);    /* --stats: both, whatever the loop says */
        CHECK(record && replay && !replace);
        CHECK_EQ(run_loop_note(&l, 101, 1000000, &rp), 0);
        CHECK_EQ(history_load(l.path, &h, &bad), 0);
        CHECK_EQ(h.n, (size_t)2);
        CHECK_EQ(h.e[0].replayed_bytes, 0u);    /* a recorded run replays nothing */
        CHECK_EQ(h.e[0].total_us, 1300000u);
        CHECK_EQ(h.e[1].replayed_bytes, 4096u);
        CHECK_EQ(h.e[1].changed, 1u);
        /* plain, replay, plain, replay (stopped: what changed unknown), plain: off */
        double s[] = { 1.0, 1.0, 1.0, 1.0, 1.0 };
        for (int i = 0; i < 5; i++) {
                CHECK_EQ(run_loop_decide(&l, file, true, &off), 0);
                CHECK(!off);
                rp.stopped = l.d.mode == START_REPLAY;
                CHECK_EQ(run_loop_note(&l, 102 + (uint64_t)i, (uint64_t)(s[i] * 1e6), &rp), 0);
        }
        CHECK_EQ(history_load(l.path, &h, &bad), 0);
        CHECK_EQ(h.e[3].mode, START_REPLAY);
        CHECK_EQ(h.e[3].replayed_bytes, 4096u);
        CHECK_EQ(h.e[3].files, 0u);
        CHECK_EQ(run_loop_decide(&l, file, true, &off), 0);
        CHECK_EQ(l.d.mode, START_OFF);
        CHECK(off);
        CHECK_EQ(run_loop_note(&l, 200, 1000000, NULL), 0);
        CHECK_EQ(run_loop_decide(&l, file, true, &off), 0);
        CHECK_EQ(l.d.mode, START_OFF);
        CHECK(!off);                    /* said once */
        /* found stale: replayed and recorded, the read set replaced */
        l.d.mode = START_REPLAY_RECORD;
        run_loop_what(&l, false, &record, &replay, &replace);
        CHECK(record && replay && replace);
        unlink(l.path);
        rmdir(dir);
}

static void test_history_file(void)
{
        char dir[] = "/tmp/readset-test-history.XXXXXX", path[256];
        struct history h = { .n = 0 }, back;
        struct start_entry e = { .at_unix = 1000, .mode = START_REPLAY_RECORD, .total_us = 1234567,
                                 .replayed_bytes = 5 << 20, .used_bytes = 7 << 20, .hit = 0.934, .dropped = 3,
                                 .changed = 2 };
        unsigned bad;
        FILE *f;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/history", dir);
        snprintf(e.note, sizeof(e.note), "a note\nwith a newline");
        for (int i = 0; i < HISTORY_MAX + 5; i++) {
                e.at_unix = 1000 + (uint64_t)i;
                CHECK_EQ(history_append(path, &h, &e), 0);
        }
        CHECK_EQ(h.n, (size_t)HISTORY_MAX);
        CHECK_EQ(history_load(path, &back, &bad), 0);
        CHECK_EQ(bad, 0u);
        CHECK_EQ(back.n, (size_t)HISTORY_MAX);
        CHECK_EQ(back.e[0].at_unix, 1005u);
        CHECK_EQ(back.e[HISTORY_MAX - 1].total_us, 1234567u);
        CHECK(back.e[0].hit > 0.933 && back.e[0].hit < 0.935);
        CHECK(strcmp(back.e[0].note, "a note with a newline") == 0);
        /* a damaged line is left out, counted */
        f = fopen(path, "a");
        CHECK(f != NULL);
        fputs("1 12 nonsense 1 2 3\ngarbage\n", f);
        fclose(f);
        CHECK_EQ(history_load(path, &back, &bad), 0);
        CHECK_EQ(bad, 2u);
        /* lines are appended; the file is written anew, the last HISTORY_MAX
         * only, once it holds twice as many */
        for (int i = 0; i < 3 * HISTORY_MAX; i++) {
                e.at_unix = 5000 + (uint64_t)i;
                CHECK_EQ(history_append(path, &back, &e), 0);
                CHECK(back.lines <= 2 * HISTORY_MAX);
        }
        CHECK_EQ(history_load(path, &back, &bad), 0);
        CHECK(back.lines <= 2 * HISTORY_MAX);
        CHECK_EQ(back.n, (size_t)HISTORY_MAX);
        CHECK_EQ(back.e[HISTORY_MAX - 1].at_unix, 5000u + 3 * HISTORY_MAX - 1);
        CHECK_EQ(back.e[0].at_unix, 5000u + 2 * HISTORY_MAX);
        unlink(path);
        CHECK_EQ(history_load(path, &back, &bad), 0);   /* missing: empty */
        CHECK_EQ(back.n, (size_t)0);
        rmdir(dir);
}

/* history's numbers are strict: a sign, a number past its type, junk after
 * it make the line damaged; blanks between fields and a note are kept */
static void test_history_numbers(void)
{
        char dir[] = "/tmp/readset-test-history.XXXXXX", path[256];
        struct history back;
        unsigned bad;
        FILE *f;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/history", dir);
        f = fopen(path, "w");
        CHECK(f != NULL);
        if (!f)
                return;
        fputs("1 10 replay 5 6 7 -1 0 0 0\n"
              "1 11 replay -5 6 7 500 0 0 0\n"
              "1 12 replay 5 6 7 +500 0 0 0\n"
              "1 13 replay 5 6 7 500 0 0 18446744073709551616\n"
              "1 14 replay 5 6 7 500 0 0 0x1 a note\n"
              "1 15 replay 5 6 7 4294967796 0 0 0\n"
              "1\t16  replay 5 6 7 1000 0 0 9   the note\n", f);
        fclose(f);
        CHECK_EQ(history_load(path, &back, &bad), 0);
        CHECK_EQ(bad, 5u);
        CHECK_EQ(back.n, (size_t)2);
        if (back.n == 2) {
                CHECK_EQ(back.e[0].at_unix, 10u);
                CHECK(back.e[0].hit < 0);
                CHECK_EQ(back.e[1].at_unix, 16u);
                CHECK_EQ(back.e[1].changed, 9u);
                CHECK(back.e[1].hit > 0.999 && back.e[1].hit < 1.001);
                CHECK(strcmp(back.e[1].note, "the note") == 0);
        }
        unlink(path);
        rmdir(dir);
}

/* one boot: /a pages [0, 8) and [16, 20) (pages of 4096), /b page 0 */
static struct readset *boot(uint64_t a_end, int64_t b_mtime)
{
        struct readset *rs = readset_new();
        struct rs_file *f = readset_add_file(rs, "/a", 1, 10);
        f->size = 1 << 20;
        f->mtime_ns = 5;
        readset_file_add_range(f, 0, a_end * 4096, 100, RS_RANGE_ACCESSED);
        readset_file_add_range(f, 16 * 4096, 4 * 4096, 50, RS_RANGE_ACCESSED);
        readset_file_add_range(f, 40 * 4096, 4096, 60, RS_RANGE_FILLED);   /* read ahead only */
        f = readset_add_file(rs, "/b", 1, 11);
        f->size = 4096;
        f->mtime_ns = b_mtime;
        readset_file_add_range(f, 0, 4096, 10, RS_RANGE_ACCESSED);
        rs->page_size = 4096;
        return rs;
}

static void test_plan_merge(void)
{
        /* newest first: /a read to page 8, 12 and 4; /b changed since the oldest two */
        struct readset *boots[3] = { boot(8, 7), boot(12, 5), boot(4, 5) };
        struct readset *plan = NULL;
        uint64_t a_bytes = 0;

        CHECK_EQ(boot_plan_merge(boots, 3, &plan), 0);
        CHECK(plan != NULL);
        CHECK_EQ(readset_validate(plan), 0);
        /* /b is the same file in one boot of three only (it changed since the older two): left out */
        CHECK_EQ(plan->n_files, (size_t)1);
        for (size_t i = 0; i < plan->n_files; i++) {
                struct rs_file *f = &plan->files[i];
                if (strcmp(f->path, "/b") == 0) {
                        CHECK(0);       /* not in most boots as the same file */
                }
                for (size_t j = 0; j < f->n_ranges; j++)
                        a_bytes += f->ranges[j].length;
                /* the range first needed earliest comes first */
                CHECK_EQ(f->ranges[0].time_us, 50u);
        }
        readset_free(plan);
        /* /a: pages [0, 8) are in 2 of 3 boots, [8, 12) in one, [16, 20) in all; page 40 only read ahead */
        CHECK_EQ(a_bytes, (uint64_t)(8 + 4) * 4096);
        /* two boots: what either used (/b from the newest) */
        CHECK_EQ(boot_plan_merge(boots, 2, &plan), 0);
        CHECK_EQ(plan->n_files, (size_t)2);
        readset_free(plan);
        for (int i = 0; i < 3; i++)
                readset_free(boots[i]);
}

int main(void)
{
        test_loop_off_where_useless();
        test_loop_stale_by_identity();
        test_loop_on_where_it_helps();
        test_loop_run_auto();
        test_loop_run_auto_keeps();
        test_run_loop();
        test_history_file();
        test_history_numbers();
        test_plan_merge();
        TESTS_DONE();
}
