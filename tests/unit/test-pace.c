/* SPDX-License-Identifier: MIT */
/* replay/pace.c: the sequence (repeats within a lifetime folded; listings
 * and what the recorded start had at once left out), following the start
 * (forward only, no far jumps), the window, warming again what expired.
 * No check depends on how fast this machine is: the waits are for
 * something to happen at all, bounded by a generous deadline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/readset.h"
#include "replay/pace.h"
#include "util/util.h"
#include "tests.h"

#define N 40            /* lookups worth warming */

static void path_of(char *buf, size_t size, int i)
{
        snprintf(buf, size, "/nonexistent-readset-test/d%d/p%02d", i % 4, i);
}

/* N stats 1 ms apart (the start waited for each), each after a stat of a
 * neighbour it had at once (10 us before it: found, as a listing's entry
 * is), then a listing, a repeat of
 * the first within the lifetime, and a name that is not absolute */
static struct readset *make(void)
{
        struct readset *rs = readset_new();
        char p[128];
        uint64_t t = 0;

        if (!rs)
                return NULL;
        for (int i = 0; i < N; i++) {
                path_of(p, sizeof(p), i);
                strcat(p, ".at-once");
                CHECK_EQ(readset_add_lookup(rs, t, RS_LOOKUP_STAT, 0, 7, p), 0);
                path_of(p, sizeof(p), i);
                CHECK_EQ(readset_add_lookup(rs, t + 10, RS_LOOKUP_STAT, -2, 7, p), 0);
                t += 1000;
        }
        CHECK_EQ(readset_add_lookup(rs, t, RS_LOOKUP_READDIR, 0, 7, "/nonexistent-readset-test/d0"), 0);
        path_of(p, sizeof(p), 0);
        CHECK_EQ(readset_add_lookup(rs, t + 1000, RS_LOOKUP_STAT, -2, 7, p), 0);    /* folded */
        CHECK_EQ(readset_add_lookup(rs, t + 2000, RS_LOOKUP_STAT, -2, 7, "relative"), 0); /* never paced */
        return rs;
}

static void sleep_ms(long ms)
{
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
}

/* make()'s read set and a pacer on it, or false (checks failed, nothing left) */
static bool start(const struct pace_options *o, struct readset **rs, struct pacer **p)
{
        *rs = make();
        *p = NULL;
        CHECK(*rs != NULL);
        if (!*rs)
                return false;
        CHECK_EQ(pace_start(*rs, o, p), 0);
        CHECK(*p != NULL);
        if (!*p) {
                readset_free(*rs);
                return false;
        }
        return true;
}

/* A pacer on rs, or NULL (checks failed, rs freed) */
static struct pacer *pace_on(struct readset *rs, const struct pace_options *o)
{
        struct pacer *p = NULL;

        CHECK_EQ(pace_start(rs, o, &p), 0);
        CHECK(p != NULL);
        if (!p)
                readset_free(rs);
        return p;
}

static void test_sequence_and_following(void)
{
        struct readset *rs;
        /* window 8: a lookup moves the start at most 32 positions on */
        struct pace_options o = { .threads = 4, .window = 8, .lifetime_us = 1000000, .follow = true };
        struct pace_stats st;
        struct pacer *p;
        char path[128];

        if (!start(&o, &rs, &p))
                return;
        CHECK(!pace_finished(p));
        /* the start made lookup 10: it is past the first 11 */
        path_of(path, sizeof(path), 10);
        CHECK(pace_observed(p, path, false));
        /* one far ahead (position 79, more than 32 on): not where it is */
        path_of(path, sizeof(path), 39);
        CHECK(!pace_observed(p, path, false));
        /* one behind: it never goes back */
        path_of(path, sizeof(path), 3);
        CHECK(!pace_observed(p, path, false));
        /* a listing of a path only stat'ed is not that stat */
        path_of(path, sizeof(path), 11);
        CHECK(!pace_observed(p, path, true));
        /* nor a path it never made */
        CHECK(!pace_observed(p, "/nonexistent-readset-test/other", false));
        pace_snapshot(p, &st);
        /* 40 + 40 at once + the listing; the repeat folded, the relative one left out */
        CHECK_EQ(st.sequence, 2 * N + 1);
        CHECK_EQ(st.skipped, N + 1);
        CHECK_EQ(st.observed, 1);
        CHECK_EQ(st.reached, 2 * 10 + 2);      /* positions: each neighbour, then its stat */
        /* from there, step by step to the end */
        for (int i = 11; i < N; i++) {
                path_of(path, sizeof(path), i);
                pace_observed(p, path, false);
        }
        pace_observed(p, "/nonexistent-readset-test/d0", true);
        CHECK(pace_finished(p));
        pace_stop(p, &st);
        CHECK_EQ(st.reached, st.sequence);
        CHECK_EQ(st.observed, 1 + (N - 11) + 1);
        readset_free(rs);
}

static void test_window_and_rewarming(void)
{
        struct readset *rs;
        struct pace_options o = { .threads = 4, .window = 8, .lifetime_us = 20000, .follow = true };
        struct pace_stats st = { 0 };
        struct pacer *p;
        uint64_t until = now_us() + 20000000;

        if (!start(&o, &rs, &p))
                return;
        /* a start that makes nothing: it stays at 0 */
        /* its window is warmed, and warmed again once the answers expire */
        while (now_us() < until) {
                pace_snapshot(p, &st);
                if (st.rewarmed >= 8)
                        break;
                sleep_ms(10);
        }
        pace_stop(p, &st);
        CHECK(st.rewarmed >= 8);
        /* what was warmed for the first time lies in the window (8
         * positions, 4 of them neighbours the start had at once) */
        CHECK(st.warmed - st.rewarmed <= 4);
        CHECK(st.warmed > st.rewarmed);
        CHECK_EQ(st.reached, 0);
        readset_free(rs);
}

/* A directory stat'ed before each of 20 files, 300 ms apart: the
 * recording holds it again only once a lifetime (1 s) has passed since
 * (at the 5th file, the 9th, the 13th and the 17th).  The start, sped up,
 * stats it before every file: that is no sign that it is at the
 * recording's next one. */
static void test_repeated_path(void)
{
        struct readset *rs = readset_new();
        struct pace_options o = { .threads = 2, .window = 8, .lifetime_us = 1000000, .follow = true };
        const char *dir = "/nonexistent-readset-test/dir";
        struct pace_stats st;
        struct pacer *p = NULL;
        char path[128];

        CHECK(rs != NULL);
        if (!rs)
                return;
        for (int i = 0; i < 20; i++) {
                uint64_t t = (uint64_t)i * 300000;
                path_of(path, sizeof(path), i);
                CHECK_EQ(readset_add_lookup(rs, t, RS_LOOKUP_STAT, 0, 7, dir), 0);
                CHECK_EQ(readset_add_lookup(rs, t + 1000, RS_LOOKUP_STAT, -2, 7, path), 0);
        }
        if (!(p = pace_on(rs, &o)))
                return;
        pace_snapshot(p, &st);
        /* 20 files, the directory at 0, 1.2, 2.4, 3.6 and 4.8 s */
        CHECK_EQ(st.sequence, 20 + 5);
        CHECK(pace_observed(p, dir, false));
        path_of(path, sizeof(path), 0);
        CHECK(pace_observed(p, path, false));
        pace_snapshot(p, &st);
        CHECK_EQ(st.reached, 2);
        /* the directory again, before the second file: the start stays
         * where it is, not 4 files on, where the recording has it next */
        CHECK(pace_observed(p, dir, false));
        pace_snapshot(p, &st);
        CHECK_EQ(st.reached, 2);
        CHECK_EQ(st.observed, 2);
        /* each file moves it on, the directory between them never (past
         * its last position in the recording, it is not one of the
         * sequence's any more) */
        for (int i = 1; i < 20; i++) {
                path_of(path, sizeof(path), i);
                CHECK_EQ(pace_observed(p, dir, false), i <= 16);
                CHECK(pace_observed(p, path, false));
        }
        pace_stop(p, &st);
        CHECK_EQ(st.reached, st.sequence);
        CHECK_EQ(st.observed, 21);
        readset_free(rs);
}

/* The same, the start's repeat further behind it than the window: what
 * tells it from the recording's next one is that its answer, warmed a
 * moment ago, is still kept (30 s here). */
static void test_repeated_path_warmed(void)
{
        struct readset *rs = readset_new();
        struct pace_options o = { .threads = 2, .window = 2, .lifetime_us = 30000000, .follow = true };
        const char *dir = "/nonexistent-readset-test/dir";
        uint64_t until = now_us() + 20000000;
        struct pace_stats st = { 0 };
        struct pacer *p = NULL;
        char path[128];

        CHECK(rs != NULL);
        if (!rs)
                return;
        /* dir at 0 s, 20 files every 4 s, dir again at 33 s: positions
         * dir, f0..f7, dir, f8..f19 */
        CHECK_EQ(readset_add_lookup(rs, 0, RS_LOOKUP_STAT, 0, 7, dir), 0);
        for (int i = 0; i < 20; i++) {
                path_of(path, sizeof(path), i);
                if (i == 8)
                        CHECK_EQ(readset_add_lookup(rs, 33000000, RS_LOOKUP_STAT, 0, 7, dir), 0);
                CHECK_EQ(readset_add_lookup(rs, (uint64_t)(i + 1) * 4000000, RS_LOOKUP_STAT, -2, 7, path), 0);
        }
        if (!(p = pace_on(rs, &o)))
                return;
        /* the window (positions 0 and 1) warmed */
        while (now_us() < until) {
                pace_snapshot(p, &st);
                if (st.warmed >= 2)
                        break;
                sleep_ms(1);
        }
        CHECK(st.warmed >= 2);
        CHECK_EQ(st.sequence, 22);
        path_of(path, sizeof(path), 6);
        CHECK(pace_observed(p, path, false));      /* f6: position 7 */
        pace_snapshot(p, &st);
        CHECK_EQ(st.reached, 8);
        /* dir again: 8 behind the start, more than the window, but warmed
         * at 0 less than a lifetime ago: not its place at 9 */
        CHECK(pace_observed(p, dir, false));
        pace_snapshot(p, &st);
        CHECK_EQ(st.reached, 8);
        pace_stop(p, &st);
        readset_free(rs);
}

/* A slow start gets a window of what it goes through in half a lifetime:
 * one lookup in a quarter of a second is a window of the least, 16, not
 * the 64 asked for, so that nothing is warmed that would expire before
 * the start got there. */
static void test_window_from_pace(void)
{
        struct readset *rs = readset_new();
        struct pace_options o = { .threads = 2, .window = 64, .lifetime_us = 20000, .follow = true };
        uint64_t until = now_us() + 20000000;
        struct pace_stats st = { 0 };
        struct pacer *p = NULL;
        char path[128];

        CHECK(rs != NULL);
        if (!rs)
                return;
        for (int i = 0; i < 100; i++) {
                snprintf(path, sizeof(path), "/nonexistent-readset-test/w%d", i);
                CHECK_EQ(readset_add_lookup(rs, (uint64_t)i * 100000, RS_LOOKUP_STAT, -2, 7, path), 0);
        }
        if (!(p = pace_on(rs, &o)))
                return;
        /* the first 64 warmed at once: nothing is known of its pace */
        while (now_us() < until) {
                pace_snapshot(p, &st);
                if (st.warmed - st.rewarmed >= 64)
                        break;
                sleep_ms(1);
        }
        CHECK_EQ(st.warmed - st.rewarmed, 64);
        sleep_ms(250);
        CHECK(pace_observed(p, "/nonexistent-readset-test/w0", false));        /* 1 in 250 ms */
        CHECK(pace_observed(p, "/nonexistent-readset-test/w60", false));
        /* the window [61, 77): 13 more warmed for the first time, not 36 */
        while (now_us() < until) {
                pace_snapshot(p, &st);
                if (st.warmed - st.rewarmed >= 77)
                        break;
                sleep_ms(1);
        }
        sleep_ms(50);
        pace_stop(p, &st);
        CHECK_EQ(st.warmed - st.rewarmed, 77);
        readset_free(rs);
}

static void test_too_few(void)
{
        struct readset *rs = readset_new();
        struct pace_options o = { 0 };
        struct pacer *p = (struct pacer *)1;

        CHECK(rs != NULL);
        if (!rs)
                return;
        for (int i = 0; i < PACE_MIN - 1; i++) {
                char path[128];
                path_of(path, sizeof(path), i);
                CHECK_EQ(readset_add_lookup(rs, (uint64_t)i * 1000, RS_LOOKUP_STAT, 0, 7, path), 0);
        }
        /* fewer than PACE_MIN worth it: no pacer (the engine makes them at once) */
        CHECK_EQ(pace_start(rs, &o, &p), 0);
        CHECK(p == NULL);
        readset_free(rs);
}

static void test_worth(void)
{
        struct readset *rs = make();
        bool *w;

        CHECK(rs != NULL);
        if (!rs)
                return;
        w = calloc(rs->n_lookups, sizeof(bool));
        CHECK(w != NULL);
        if (w) {
                CHECK_EQ(pace_worth(rs, w), 0);
                CHECK(!w[0]);           /* the neighbour, 10 us before the next */
                CHECK(w[1]);            /* waited for (990 us to the next) */
                CHECK(!w[2 * N]);       /* the listing */
                CHECK(w[2 * N + 2]);    /* the last of its process: waited for, as far as anyone knows */
        }
        free(w);
        readset_free(rs);

        /* a failed lookup the start had at once (below a directory that
         * was not there, found so a moment before) is warmed all the same */
        rs = readset_new();
        CHECK(rs != NULL);
        if (!rs)
                return;
        CHECK_EQ(readset_add_lookup(rs, 0, RS_LOOKUP_STAT, -2, 7, "/nonexistent-readset-test/no/a"), 0);
        CHECK_EQ(readset_add_lookup(rs, 10, RS_LOOKUP_STAT, -2, 7, "/nonexistent-readset-test/no/b"), 0);
        CHECK_EQ(readset_add_lookup(rs, 1000, RS_LOOKUP_STAT, 0, 7, "/nonexistent-readset-test/c"), 0);
        CHECK_EQ(readset_add_lookup(rs, 1010, RS_LOOKUP_STAT, 0, 7, "/nonexistent-readset-test/d"), 0);
        w = calloc(rs->n_lookups, sizeof(bool));
        CHECK(w != NULL);
        if (w) {
                CHECK_EQ(pace_worth(rs, w), 0);
                CHECK(w[0]);            /* failed, at once */
                CHECK(!w[2]);           /* found, at once */
        }
        free(w);
        readset_free(rs);
}

/* A client that keeps no failed lookup: for each, its directory is warmed
 * (the walk the start makes through it), once a lifetime for all of its
 * failed lookups; a directory that is not there, the one above it.  One
 * thread: in order. */
static void test_failed_lookups_directory(void)
{
        char top[] = "/tmp/readset-test-pace-XXXXXX", p[256];
        struct pace_options o = { .threads = 1, .lifetime_us = 60000000, .follow = true,
                                  .negatives = PACE_NEGATIVES_NOT_KEPT };
        struct readset *rs;
        struct pacer *pc;
        struct pace_stats st = { 0 };
        uint64_t t = 0, until = now_us() + 20000000;
        FILE *f;

        CHECK(mkdtemp(top) != NULL);
        snprintf(p, sizeof(p), "%s/a", top);
        CHECK_EQ(mkdir(p, 0700), 0);
        snprintf(p, sizeof(p), "%s/a/found", top);
        CHECK((f = fopen(p, "w")) != NULL);
        if (f)
                fclose(f);
        rs = readset_new();
        CHECK(rs != NULL);
        if (!rs)
                goto out;
        CHECK_EQ(readset_add_lookup(rs, t, RS_LOOKUP_STAT, 0, 7, p), 0);
        for (int i = 0; i < 8; i++) {
                snprintf(p, sizeof(p), "%s/a/nope%d", top, i);
                CHECK_EQ(readset_add_lookup(rs, t += 1000, RS_LOOKUP_STAT, -2, 7, p), 0);
        }
        for (int i = 0; i < 8; i++) {
                snprintf(p, sizeof(p), "%s/missing/nope%d", top, i);
                CHECK_EQ(readset_add_lookup(rs, t += 1000, RS_LOOKUP_STAT, -2, 7, p), 0);
        }
        if (!(pc = pace_on(rs, &o)))
                goto out;
        /* the start makes nothing: the whole sequence lies ahead of it */
        while (now_us() < until) {
                pace_snapshot(pc, &st);
                if (st.warmed == 1 && st.skipped == 16)
                        break;
                sleep_ms(10);
        }
        pace_stop(pc, &st);
        CHECK_EQ(st.warmed, 1);                 /* the file found */
        CHECK_EQ(st.skipped, 16);               /* the failed lookups left to the start */
        CHECK_EQ(st.negatives_kept, 0);
        /* a/ for its 8; missing/ once (not there), then the top for the rest */
        CHECK_EQ(st.dirs_warmed, 3);
        readset_free(rs);
out:
        snprintf(p, sizeof(p), "%s/a/found", top);
        unlink(p);
        snprintf(p, sizeof(p), "%s/a", top);
        rmdir(p);
        rmdir(top);
}

int main(void)
{
        test_sequence_and_following();
        test_window_and_rewarming();
        test_repeated_path();
        test_repeated_path_warmed();
        test_window_from_pace();
        test_too_few();
        test_worth();
        test_failed_lookups_directory();
        TESTS_DONE();
}
