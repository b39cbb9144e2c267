/* SPDX-License-Identifier: MIT */
/* report/patterns.c: the patterns that multiply a start's lookups on a
 * share, named with their counts and costs (docs/DECISIONS.md, "Lookups
 * on a share"); the round trips from report/client.c or set by hand. */
#include <errno.h>
#include <string.h>

#include "model/readset.h"
#include "report/client.h"
#include "report/costmodel.h"
#include "report/patterns.h"
#include "share-tests.h"

#include "util/banned.h"

#define N_FILES 20


static void add(struct readset *rs, uint64_t time_us, uint32_t op, int32_t result, uint32_t pid, const char *path)
{
        CHECK_EQ(readset_add_lookup(rs, time_us, op, result, pid, path), 0);
}

/* rs's round trips on the share (below /s) into trips; its plain seconds */
static double costed(const struct readset *rs, const struct cost_profile *p, uint32_t *trips)
{
        struct client_cost plain, replay, warmed;

        CHECK_EQ(client_cost(rs, NULL, p, "/s", NULL, trips, &plain, &replay, &warmed), 0);
        return plain.seconds;
}

/* For each file, a stat of each parent from the root down, then the file
 * four times (the field report's security suite); 2 s apart, so that
 * strict asks every directory again for every file.  mixed: the parents
 * stat'ed by two processes in turn, neither the file's. */
static struct readset *parent_walk(bool mixed)
{
        static const char *const dirs[] = { "/s", "/s/a", "/s/a/b", "/s/a/b/c" };
        struct readset *rs = test_lookups_readset();
        char path[64];

        for (unsigned i = 0; i < N_FILES; i++) {
                uint64_t t = (uint64_t)i * 2 * S;
                for (unsigned d = 0; d < 4; d++)
                        add(rs, t + d * MS, RS_LOOKUP_STAT, 0, mixed ? 2 + d % 2 : 1, dirs[d]);
                snprintf(path, sizeof(path), "/s/a/b/c/f%02u", i);
                for (unsigned k = 0; k < 4; k++)
                        add(rs, t + (4 + k) * MS, RS_LOOKUP_STAT, 0, 1, path);
        }
        return rs;
}

static void test_parent_walk(void)
{
        _cleanup_readset_ struct readset *rs = parent_walk(false);
        _cleanup_readset_ struct readset *other = parent_walk(true);
        struct cost_profile p = test_share("strict", 2000);
        struct pattern pat[_PATTERN_MAX];
        uint32_t trips[N_FILES * 8];
        double plain_s;
        int n;

        CHECK_EQ(rs->n_lookups, N_FILES * 8);
        plain_s = costed(rs, &p, trips);
        /* a, b, c and the file's name each time; the root pinned */
        CHECK(plain_s > N_FILES * 4 * 0.002 - 1e-9 && plain_s < N_FILES * 4 * 0.002 + 1e-9);
        n = patterns_find(rs, trips, &p, "/s", plain_s, pat);
        CHECK_EQ(n, 1);         /* the file's repeats cost nothing within 1 s */
        /* the whole walk: the parents and the file's four, every round
         * trip of them, 60 of them the parents' */
        CHECK_EQ(pat[0].kind, PATTERN_PARENT_WALK);
        CHECK_EQ(pat[0].count, N_FILES * 8);
        CHECK_EQ(pat[0].round_trips, N_FILES * 4);
        CHECK(pat[0].seconds > N_FILES * 4 * 0.002 - 1e-9 && pat[0].seconds < N_FILES * 4 * 0.002 + 1e-9);
        CHECK(strstr(pat[0].text, "160 lookups reach 20 paths by walking every parent directory first "
                                  "(4.0 per path), each path then asked 4.0 times: 80 round trips") != NULL);
        CHECK(strstr(pat[0].text, "60 of them for the parents and the repeats") != NULL);
        CHECK(strstr(pat[0].text, "100% of the predicted time") != NULL);
        CHECK(strstr(pat[0].text, "actimeo") != NULL);
        /* nfs keeps the directories 30 s: the walk asks them at the
         * first file and again at the 16th (30 s later) */
        p = test_share("nfs", 2000);
        plain_s = costed(rs, &p, trips);
        n = patterns_find(rs, trips, &p, "/s", plain_s, pat);
        CHECK_EQ(n, 1);
        CHECK_EQ(pat[0].kind, PATTERN_PARENT_WALK);
        CHECK_EQ(pat[0].count, N_FILES * 8);
        CHECK_EQ(pat[0].round_trips, 6 + N_FILES);     /* and each file's name once */
        /* stats by other processes are no walk */
        p = test_share("strict", 2000);
        plain_s = costed(other, &p, trips);
        n = patterns_find(other, trips, &p, "/s", plain_s, pat);
        for (int i = 0; i < n; i++)
                CHECK(pat[i].kind != PATTERN_PARENT_WALK);
        /* but the same directories asked for their attributes again (19
         * times each, the three below the root a trip each time): the
         * attribute calls' finding, not also the repeated paths' */
        CHECK_EQ(n, 1);
        CHECK_EQ(pat[0].kind, PATTERN_ATTRIBUTES);
        CHECK_EQ(pat[0].round_trips, 3 * 19);
        CHECK_EQ(pat[0].count, 4 * N_FILES + 4 * N_FILES - 4 - N_FILES);  /* after each path's first */
        /* the same lookups off the share: nothing */
        n = patterns_find(rs, trips, &p, "/t", plain_s, pat);
        CHECK_EQ(n, 0);
        CHECK_EQ(patterns_find(rs, NULL, &p, "/s", plain_s, pat), 0);
}

/* A walk is every parent, top down: one directory asked again, or the
 * parents bottom up, is none (but the same path asked again is). */
static void test_walk_top_down(void)
{
        _cleanup_readset_ struct readset *again = test_lookups_readset();
        _cleanup_readset_ struct readset *up = test_lookups_readset();
        struct cost_profile p = test_share("strict", 2000);
        struct pattern pat[_PATTERN_MAX];
        uint32_t trips[N_FILES * 8];
        char path[64];
        double plain_s;
        int n;

        for (unsigned i = 0; i < 10; i++) {
                uint64_t t = (uint64_t)i * 2 * S;
                for (unsigned k = 0; k < 3; k++)
                        add(again, t + k * MS, RS_LOOKUP_STAT, 0, 1, "/s/a");
                snprintf(path, sizeof(path), "/s/a/f%u", i);
                add(again, t + 3 * MS, RS_LOOKUP_OPEN, 0, 1, path);
                add(up, t, RS_LOOKUP_STAT, 0, 1, "/s/a/b/c");
                add(up, t + 1 * MS, RS_LOOKUP_STAT, 0, 1, "/s/a/b");
                add(up, t + 2 * MS, RS_LOOKUP_STAT, 0, 1, "/s/a");
                snprintf(path, sizeof(path), "/s/a/b/c/f%u", i);
                add(up, t + 3 * MS, RS_LOOKUP_OPEN, 0, 1, path);
        }
        plain_s = costed(again, &p, trips);
        n = patterns_find(again, trips, &p, "/s", plain_s, pat);
        CHECK(n >= 1);
        for (int i = 0; i < n; i++)
                CHECK(pat[i].kind != PATTERN_PARENT_WALK);
        CHECK_EQ(pat[0].kind, PATTERN_ATTRIBUTES);     /* /s/a three times a file */
        plain_s = costed(up, &p, trips);
        n = patterns_find(up, trips, &p, "/s", plain_s, pat);
        for (int i = 0; i < n; i++)
                CHECK(pat[i].kind != PATTERN_PARENT_WALK);
        /* nor are two directories far above the file (it skips some) */
        _cleanup_readset_ struct readset *gap = test_lookups_readset();
        for (unsigned i = 0; i < 10; i++) {
                uint64_t t = (uint64_t)i * 2 * S;
                add(gap, t, RS_LOOKUP_STAT, 0, 1, "/s/a");
                add(gap, t + 1 * MS, RS_LOOKUP_STAT, 0, 1, "/s/a/b");
                snprintf(path, sizeof(path), "/s/a/b/c/d/f%u", i);
                add(gap, t + 2 * MS, RS_LOOKUP_OPEN, 0, 1, path);
        }
        plain_s = costed(gap, &p, trips);
        n = patterns_find(gap, trips, &p, "/s", plain_s, pat);
        for (int i = 0; i < n; i++)
                CHECK(pat[i].kind != PATTERN_PARENT_WALK);
}

/* A pattern is named where it costs at least 5% of the start. */
static void test_min_share(void)
{
        _cleanup_readset_ struct readset *rs = parent_walk(false);
        struct cost_profile p = test_share("strict", 2000);
        struct pattern pat[_PATTERN_MAX];
        uint32_t trips[N_FILES * 8];

        costed(rs, &p, trips);
        /* the walk: 80 trips, 0.16 s */
        CHECK_EQ(patterns_find(rs, trips, &p, "/s", 3.0, pat), 1);     /* 5.3% */
        CHECK_EQ(patterns_find(rs, trips, &p, "/s", 4.0, pat), 0);     /* 4% */
        CHECK_EQ(patterns_find(rs, trips, &p, "/s", 0, pat), 0);
}

/* Modules looked for in nine directories in turn: m00..m09 found in the
 * 7th, m10 and m11 in the 2nd, m12 and m13 nowhere. */
static void test_search_path(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct cost_profile p = test_share("strict", 2000);
        struct pattern pat[_PATTERN_MAX];
        uint32_t trips[128];
        uint64_t t = 0;
        char path[64];
        double plain_s;
        int n;

        for (unsigned m = 0; m < 14; m++) {
                unsigned found = m < 10 ? 7 : m < 12 ? 2 : 0;
                for (unsigned d = 1; d <= 9; d++) {
                        snprintf(path, sizeof(path), "/s/p%u/m%02u.pm", d, m);
                        add(rs, t, RS_LOOKUP_STAT, d == found ? 0 : -ENOENT, 1, path);
                        t += MS;
                        if (d == found)
                                break;
                }
        }
        CHECK_EQ(rs->n_lookups, 92);
        plain_s = costed(rs, &p, trips);
        /* 80 failed (one trip each, p2's name once more), 13 names found */
        CHECK(plain_s > 94 * 0.002 - 1e-9 && plain_s < 94 * 0.002 + 1e-9);
        n = patterns_find(rs, trips, &p, "/s", plain_s, pat);
        CHECK_EQ(n, 1);
        CHECK_EQ(pat[0].kind, PATTERN_SEARCH_PATH);
        CHECK_EQ(pat[0].count, 80);
        CHECK_EQ(pat[0].round_trips, 81);
        CHECK(strstr(pat[0].text, "80 failed lookups along a search path of 9 directories") != NULL);
        CHECK(strstr(pat[0].text, "(5.7 per name looked for; most in /s/p1 (14),") != NULL);
        /* p1, p3..p6, p8, p9: nothing ever found there */
        CHECK(strstr(pat[0].text, "in 7 of them no name was ever found") != NULL);
        CHECK(strstr(pat[0].text, "saves 66 failed lookups") != NULL);
        /* every module found in the first directory it is looked for in:
         * no failed lookup, no search path */
        {
                _cleanup_readset_ struct readset *ok = test_lookups_readset();
                for (unsigned m = 0; m < 20; m++) {
                        snprintf(path, sizeof(path), "/s/p%u/m%02u.pm", m % 3, m);
                        add(ok, m * MS, RS_LOOKUP_STAT, 0, 1, path);
                }
                plain_s = costed(ok, &p, trips);
                CHECK_EQ(patterns_find(ok, trips, &p, "/s", plain_s, pat), 0);
        }
}

/* Listings of the same directory again; the most costly pattern first
 * (round trips set by hand). */
static void test_sorted_listings(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct cost_profile p = test_share("strict", 2000);
        struct pattern pat[_PATTERN_MAX];
        uint32_t trips[9];
        int n;

        add(rs, 0, RS_LOOKUP_READDIR, 0, 1, "/s/d");
        add(rs, 1 * MS, RS_LOOKUP_READDIR, 0, 1, "/s/d");
        add(rs, 2 * MS, RS_LOOKUP_READDIR, 0, 1, "/s/d");
        for (unsigned k = 0; k < 2; k++) {
                add(rs, (3 + k * 3) * MS, RS_LOOKUP_STAT, 0, 1, "/s/g1");
                add(rs, (4 + k * 3) * MS, RS_LOOKUP_STAT, 0, 1, "/s/g2");
                add(rs, (5 + k * 3) * MS, RS_LOOKUP_STAT, 0, 1, "/s/g3");
        }
        /* the listings again 10 trips, the stats again 3 */
        uint32_t a[9] = { 1, 5, 5, 1, 1, 1, 1, 1, 1 };
        memcpy(trips, a, sizeof(a));
        n = patterns_find(rs, trips, &p, "/s", 0.05, pat);
        CHECK_EQ(n, 2);
        CHECK_EQ(pat[0].kind, PATTERN_LISTINGS);
        CHECK_EQ(pat[0].count, 2);
        CHECK_EQ(pat[0].round_trips, 10);
        CHECK(strstr(pat[0].text, "1 directory was listed again (2 listings more than once each)") != NULL);
        CHECK_EQ(pat[1].kind, PATTERN_REPEATED);
        CHECK_EQ(pat[1].count, 3);
        CHECK_EQ(pat[1].round_trips, 3);
        CHECK(pat[0].seconds > pat[1].seconds);
        /* the listings again 2, the stats again 12 */
        uint32_t b[9] = { 1, 1, 1, 1, 1, 1, 4, 4, 4 };
        memcpy(trips, b, sizeof(b));
        n = patterns_find(rs, trips, &p, "/s", 0.05, pat);
        CHECK_EQ(n, 2);
        CHECK_EQ(pat[0].kind, PATTERN_REPEATED);
        CHECK_EQ(pat[0].round_trips, 12);
        CHECK_EQ(pat[1].kind, PATTERN_LISTINGS);
        CHECK_EQ(pat[1].round_trips, 2);
        /* a listing made once is no pattern */
        uint32_t c[9] = { 1, 0, 0, 1, 1, 1, 4, 4, 4 };
        memcpy(trips, c, sizeof(c));
        n = patterns_find(rs, trips, &p, "/s", 0.05, pat);
        CHECK_EQ(n, 1);
        CHECK_EQ(pat[0].kind, PATTERN_REPEATED);
}

/* Opens asked again are no repeated lookup (close-to-open asks anyway);
 * failed lookups asked again are; a path stat'ed three times or more is
 * asked for its attributes again (that finding's, not also the repeated
 * paths'); one stat'ed twice is a repeated path. */
static void test_repeated(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct cost_profile p = test_share("smb", 2000);
        struct pattern pat[_PATTERN_MAX];
        uint32_t trips[15];
        int n;

        for (unsigned k = 0; k < 5; k++)
                add(rs, k * MS, RS_LOOKUP_OPEN, 0, 1, "/s/o");
        for (unsigned k = 0; k < 5; k++)
                add(rs, (5 + k) * MS, RS_LOOKUP_STAT, 0, 1, "/s/t");
        for (unsigned k = 0; k < 3; k++)
                add(rs, (10 + k) * MS, RS_LOOKUP_STAT, -ENOENT, 1, "/s/x");
        for (unsigned k = 0; k < 2; k++)
                add(rs, (13 + k) * MS, RS_LOOKUP_STAT, 0, 1, "/s/y");
        for (size_t i = 0; i < 15; i++)
                trips[i] = 1;
        n = patterns_find(rs, trips, &p, "/s", 0.05, pat);
        CHECK_EQ(n, 2);
        for (int i = 0; i < n; i++) {
                if (pat[i].kind == PATTERN_REPEATED) {
                        CHECK_EQ(pat[i].count, 3);          /* x twice again, y once */
                        CHECK_EQ(pat[i].round_trips, 3);
                        CHECK(strstr(pat[i].text, "3 lookups repeat a path the start looked up before (4 paths, "
                                                  "up to 5 times each): 3 round trips") != NULL);
                } else {
                        CHECK_EQ(pat[i].kind, PATTERN_ATTRIBUTES);
                        CHECK_EQ(pat[i].count, 4);          /* the calls after the first */
                        CHECK_EQ(pat[i].round_trips, 4);
                        CHECK(strstr(pat[i].text, "were asked for their attributes 5.0 times each") != NULL);
                }
        }
        CHECK_EQ(pat[0].kind, PATTERN_ATTRIBUTES);
        /* the opens alone: nothing */
        for (size_t i = 5; i < 15; i++)
                trips[i] = 0;
        CHECK_EQ(patterns_find(rs, trips, &p, "/s", 0.05, pat), 0);
}

int main(void)
{
        test_parent_walk();
        test_walk_top_down();
        test_min_share();
        test_search_path();
        test_sorted_listings();
        test_repeated();
        TESTS_DONE();
}
