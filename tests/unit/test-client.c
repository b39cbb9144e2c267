/* SPDX-License-Identifier: MIT */
/* report/client.c: a read set's lookups through a share client's caches,
 * round trips counted by kind (docs/DECISIONS.md, "Lookups on a share"). */
#include <errno.h>
#include <string.h>

#include "model/readset.h"
#include "replay/planner.h"
#include "report/client.h"
#include "report/costmodel.h"
#include "share-tests.h"

#include "util/banned.h"


static void add(struct readset *rs, uint64_t time_us, uint32_t op, int32_t result, const char *path)
{
        CHECK_EQ(readset_add_lookup(rs, time_us, op, result, 7, path), 0);
}

struct run {
        struct client_cost plain, replay, warmed;
        uint32_t per[512];
};

/* rs's lookups below root on a share of that client (1 ms a trip). */
static void cost_ex(const struct readset *rs, const struct plan *plan, const char *client, double lat_us, const char *root,
                    const struct client_exists *ex, struct run *r)
{
        struct cost_profile p = test_share(client, lat_us);

        CHECK(rs->n_lookups <= 512);
        memset(r->per, 0xff, sizeof(r->per));
        CHECK_EQ(client_cost(rs, plan, &p, root, ex, r->per, &r->plain, &r->replay, &r->warmed), 0);
}

static void cost(const struct readset *rs, const char *client, struct run *r)
{
        cost_ex(rs, NULL, client, 1000, "/s", NULL, r);
}

/* round_trips is the sum of the kinds */
static void check_sum(const struct client_cost *c)
{
        uint64_t sum = 0;

        for (int i = 0; i < _CLIENT_ASK_MAX; i++)
                sum += c->trips[i];
        CHECK_EQ(sum, c->round_trips);
}

static void test_on_share(void)
{
        CHECK(client_on_share("/s", "/s"));
        CHECK(client_on_share("/s", "/s/a/b"));
        CHECK(client_on_share("/s/", "/s/a"));
        CHECK(!client_on_share("/s", "/s2/a"));
        CHECK(!client_on_share("/s", "/t/a"));
        CHECK(!client_on_share("/s", "s/a"));
        CHECK(client_on_share("/", "/usr/lib/x.so"));
        CHECK(client_on_share("/", "/processes"));
        CHECK(client_on_share("/", "/device"));
        CHECK(!client_on_share("/", "/proc"));
        CHECK(!client_on_share("/", "/proc/self/maps"));
        CHECK(!client_on_share("/", "/sys/kernel"));
        CHECK(!client_on_share("/", "/dev/null"));
        CHECK(!client_on_share("/", "/run/user/0"));
        CHECK(!client_on_share("/", "relative"));
        /* a share mounted below /run (udisks, gvfs) is a share */
        CHECK(client_on_share("/run/media/u/s", "/run/media/u/s/f"));
        CHECK(!client_on_share("/", "/run/media/u/s/f"));
}

/* A name walked once is held for its lifetime, asked again past it. */
static void test_lifetime(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/a/f");
        add(rs, 500 * MS, RS_LOOKUP_STAT, 0, "/s/a/f");     /* within strict's 1 s */
        add(rs, 2 * S, RS_LOOKUP_STAT, 0, "/s/a/f");        /* past it */
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.lookups, 3);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 4);
        CHECK_EQ(r.plain.trips[CLIENT_ATTR], 0);
        CHECK_EQ(r.plain.round_trips, 4);
        CHECK(r.plain.seconds > 0.0039 && r.plain.seconds < 0.0041);
        CHECK_EQ(r.per[0], 2);
        CHECK_EQ(r.per[1], 0);
        CHECK_EQ(r.per[2], 2);
        check_sum(&r.plain);
        /* nfs keeps names 30 s, file attributes 3 s: the third asks ATTR */
        cost(rs, "nfs", &r);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 2);
        CHECK_EQ(r.plain.trips[CLIENT_ATTR], 0);
        CHECK_EQ(r.per[2], 0);
}

/* The clock runs on by each round trip where the start's waits take it
 * past its recorded times: at 300 ms a trip, three walks recorded at once
 * end at 1.8 s, and the lookup recorded at 0.1 s comes after them, past
 * the 1 s its first walk's names were kept for (from their replies, at
 * 0.3 and 0.6 s).  Where the recorded gap is the longer (a start recorded
 * on the share has its waits in it), the recorded time stands. */
static void test_clock_runs_on(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        _cleanup_readset_ struct readset *slow = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/a/f");
        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/b/g");
        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/c/h");
        add(rs, 100 * MS, RS_LOOKUP_STAT, 0, "/s/a/f");
        cost_ex(rs, NULL, "strict", 300 * MS, "/s", NULL, &r);
        CHECK_EQ(r.per[0], 2);
        CHECK_EQ(r.per[3], 2);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 8);
        CHECK(r.plain.seconds > 2.39 && r.plain.seconds < 2.41);
        /* recorded 0.7 s apart, the second walk's waits (0.6 s) inside */
        add(slow, 0, RS_LOOKUP_STAT, 0, "/s/a/f");
        add(slow, 700 * MS, RS_LOOKUP_STAT, 0, "/s/a/f");
        cost_ex(slow, NULL, "strict", 300 * MS, "/s", NULL, &r);
        CHECK_EQ(r.per[1], 0);          /* at 0.7 s: a held until 1.3 s, f until 1.6 s */
        /* the same at 1 ms: held */
        cost(rs, "strict", &r);
        CHECK_EQ(r.per[3], 0);
}

/* The mount root is pinned: never asked, its attributes neither. */
static void test_root_pinned(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s");
        add(rs, 5 * S, RS_LOOKUP_STAT, 0, "/s/");
        add(rs, 10 * S, RS_LOOKUP_STAT, 0, "/s/x");
        add(rs, 100 * S, RS_LOOKUP_STAT, 0, "/s/./x");
        cost(rs, "strict", &r);
        CHECK_EQ(r.per[0], 0);
        CHECK_EQ(r.per[1], 0);
        CHECK_EQ(r.per[2], 1);
        CHECK_EQ(r.per[3], 1);
        CHECK_EQ(r.plain.round_trips, 2);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 2);
        cost(rs, "nfs", &r);
        CHECK_EQ(r.plain.round_trips, 2);   /* x's name expired after 30 s; the root never */
        /* the root "/" pinned as well */
        cost_ex(rs, NULL, "nfs", 1000, "/", NULL, &r);
        CHECK_EQ(r.per[0], 1);              /* /s below / */
        CHECK_EQ(r.per[2], 1);              /* /s/x */
        CHECK_EQ(r.plain.round_trips, 4);   /* both again after 100 s */
        /* the root is there even when no lookup below it found anything:
         * three failed names fail at their own names, not at the root */
        _cleanup_readset_ struct readset *none = test_lookups_readset();
        add(none, 0, RS_LOOKUP_STAT, -ENOENT, "/s/x");
        add(none, 1 * MS, RS_LOOKUP_STAT, -ENOENT, "/s/y");
        add(none, 2 * MS, RS_LOOKUP_STAT, -ENOENT, "/s/z");
        cost(none, "nfs", &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 3);
        CHECK_EQ(r.per[0], 1);
        CHECK_EQ(r.per[1], 1);
        CHECK_EQ(r.per[2], 1);
}

/* nfs: a stat whose name is held but whose attributes are not (files 3 s,
 * directories 30 s) asks ATTR. */
static void test_nfs_attributes(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/d/f");
        add(rs, 5 * S, RS_LOOKUP_STAT, 0, "/s/d/f");    /* f's attributes gone, its name held */
        add(rs, 6500 * MS, RS_LOOKUP_STAT, 0, "/s/d/f"); /* within 3 s of the ATTR */
        add(rs, 10 * S, RS_LOOKUP_STAT, 0, "/s/d");     /* a directory's: 30 s */
        add(rs, 40 * S, RS_LOOKUP_STAT, 0, "/s/d");     /* name gone too: a LOOKUP brings them */
        cost(rs, "nfs", &r);
        CHECK_EQ(r.per[0], 2);
        CHECK_EQ(r.per[1], 1);
        CHECK_EQ(r.per[2], 0);
        CHECK_EQ(r.per[3], 0);
        CHECK_EQ(r.per[4], 1);
        CHECK_EQ(r.plain.trips[CLIENT_ATTR], 1);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 3);
        check_sum(&r.plain);
        /* strict: f's name gone after 1 s, each stat past it a LOOKUP */
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_ATTR], 0);
        CHECK_EQ(r.per[1], 2);
        CHECK_EQ(r.per[2], 2);
        CHECK_EQ(r.per[3], 1);
}

/* A failed lookup is kept by smb (1 s) and nfs (30 s), not by strict. */
static void test_failed_kept(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/d/f");
        add(rs, 100 * MS, RS_LOOKUP_STAT, -ENOENT, "/s/d/x");
        add(rs, 200 * MS, RS_LOOKUP_OPEN, -ENOENT, "/s/d/x");
        add(rs, 3 * S, RS_LOOKUP_STAT, -ENOENT, "/s/d/x");
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 3);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 3);        /* d, f; d again at 3 s */
        CHECK_EQ(r.per[2], 1);
        CHECK_EQ(r.per[3], 2);
        cost(rs, "smb", &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 2);
        CHECK_EQ(r.per[1], 1);
        CHECK_EQ(r.per[2], 0);
        CHECK_EQ(r.per[3], 2);
        CHECK_EQ(r.plain.round_trips, 5);
        cost(rs, "nfs", &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 1);
        CHECK_EQ(r.per[3], 0);
        CHECK_EQ(r.plain.round_trips, 3);
        check_sum(&r.plain);
}

struct asked {
        int n;
        char path[64];
        bool answer;
};

static bool exists_fn(void *userdata, const char *path)
{
        struct asked *a = userdata;

        a->n++;
        snprintf(a->path, sizeof(a->path), "%s", path);
        return a->answer;
}

/* A failed lookup below a directory never found fails at that directory
 * (kept there by nfs: one trip for every module), unless the file system
 * says the directory is there. */
static void test_missing_directory(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct asked a = {};
        struct client_exists ex = { exists_fn, &a };
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/ok/f");
        add(rs, 1 * MS, RS_LOOKUP_STAT, -ENOENT, "/s/lib/a.pm");
        add(rs, 2 * MS, RS_LOOKUP_STAT, -ENOENT, "/s/lib/b.pm");
        add(rs, 3 * MS, RS_LOOKUP_STAT, -ENOENT, "/s/lib/c.pm");
        cost(rs, "nfs", &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 1);
        CHECK_EQ(r.per[1], 1);
        CHECK_EQ(r.per[2], 0);
        CHECK_EQ(r.per[3], 0);
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 3);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 2);        /* ok, f: lib never asked */
        /* a callback that says no changes nothing; asked about lib only
         * (ok was found, a.pm is no directory) */
        cost_ex(rs, NULL, "nfs", 1000, "/s", &ex, &r);
        CHECK_EQ(a.n, 1);
        CHECK(strcmp(a.path, "/s/lib") == 0);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 1);
        /* lib is there: walked once, each module failed on its own */
        a = (struct asked){ .answer = true };
        cost_ex(rs, NULL, "nfs", 1000, "/s", &ex, &r);
        CHECK_EQ(a.n, 1);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 3);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 3);
        CHECK_EQ(r.per[1], 2);
        CHECK_EQ(r.per[2], 1);
        CHECK_EQ(r.per[3], 1);
        /* NULL fn: not there */
        ex.fn = NULL;
        cost_ex(rs, NULL, "nfs", 1000, "/s", &ex, &r);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 1);
}

/* Every open of a file is a trip (close-to-open); a directory's is not. */
static void test_opens(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_OPEN, 0, "/s/d/f");
        add(rs, 10 * MS, RS_LOOKUP_OPEN, 0, "/s/d/f");
        add(rs, 20 * MS, RS_LOOKUP_EXEC, 0, "/s/d/f");
        add(rs, 30 * MS, RS_LOOKUP_OPEN, 0, "/s/d");
        for (int pass = 0; pass < 2; pass++) {
                cost(rs, pass ? "nfs" : "strict", &r);
                CHECK_EQ(r.per[0], 3);
                CHECK_EQ(r.per[1], 1);
                CHECK_EQ(r.per[2], 1);
                CHECK_EQ(r.per[3], 0);
                CHECK_EQ(r.plain.trips[CLIENT_OPEN], 3);
                CHECK_EQ(r.plain.trips[CLIENT_NAME], 2);
                /* warmed: the opens of the file ask anyway, the directory's not */
                CHECK_EQ(r.warmed.trips[CLIENT_OPEN], 3);
                CHECK_EQ(r.warmed.round_trips, 3);
                CHECK_EQ(r.warmed.lookups, 4);
        }
}

/* A listing: a trip per 64 KiB of the entries the start named below it;
 * smb's and nfs's bring the entries' names and attributes. */
static void test_listings(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        _cleanup_readset_ struct readset *big = test_lookups_readset();
        struct run r;
        char path[64];

        add(rs, 0, RS_LOOKUP_READDIR, 0, "/s/d");
        add(rs, 1 * MS, RS_LOOKUP_STAT, 0, "/s/d/f1");
        add(rs, 2 * MS, RS_LOOKUP_OPEN, 0, "/s/d/f2");
        add(rs, 3 * MS, RS_LOOKUP_STAT, 0, "/s/d/f3");
        cost(rs, "strict", &r);
        CHECK_EQ(r.per[0], 2);
        CHECK_EQ(r.per[1], 1);
        CHECK_EQ(r.per[2], 2);
        CHECK_EQ(r.per[3], 1);
        CHECK_EQ(r.plain.trips[CLIENT_LISTING], 1);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 4);
        for (int pass = 0; pass < 2; pass++) {
                cost(rs, pass ? "nfs" : "smb", &r);
                CHECK_EQ(r.per[0], 2);
                CHECK_EQ(r.per[1], 0);
                CHECK_EQ(r.per[2], 1);          /* the open asks anyway */
                CHECK_EQ(r.per[3], 0);
                CHECK_EQ(r.plain.trips[CLIENT_LISTING], 1);
                CHECK_EQ(r.plain.trips[CLIENT_NAME], 1);
                CHECK_EQ(r.warmed.trips[CLIENT_LISTING], 1);
        }
        /* 410 entries: 65 600 bytes with attributes (two trips), 16 400
         * without (one) */
        add(big, 0, RS_LOOKUP_READDIR, 0, "/s/big");
        for (int i = 0; i < 410; i++) {
                snprintf(path, sizeof(path), "/s/big/f%03d", i);
                add(big, 1 * MS, RS_LOOKUP_STAT, 0, path);
        }
        cost(big, "nfs", &r);
        CHECK_EQ(r.plain.trips[CLIENT_LISTING], 2);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 1);        /* big; its entries from the listing */
        CHECK_EQ(r.warmed.trips[CLIENT_LISTING], 2);
        cost(big, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_LISTING], 1);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 411);
        /* names that were not there are no entries: the same listing with
         * the 410 failing is one trip (and they fail at their own names) */
        _cleanup_readset_ struct readset *gone = test_lookups_readset();
        add(gone, 0, RS_LOOKUP_READDIR, 0, "/s/big");
        for (int i = 0; i < 410; i++) {
                snprintf(path, sizeof(path), "/s/big/f%03d", i);
                add(gone, 1 * MS, RS_LOOKUP_STAT, -ENOENT, path);
        }
        cost(gone, "nfs", &r);
        CHECK_EQ(r.plain.trips[CLIENT_LISTING], 1);
        CHECK_EQ(r.plain.trips[CLIENT_FAILED], 410);
}

/* access(2) asks the server on strict, is a stat on smb and nfs; a
 * readlink always asks. */
static void test_access_readlink(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_ACCESS, 0, "/s/f");
        add(rs, 1 * MS, RS_LOOKUP_ACCESS, 0, "/s/f");
        add(rs, 2 * MS, RS_LOOKUP_READLINK, 0, "/s/l");
        add(rs, 3 * MS, RS_LOOKUP_READLINK, 0, "/s/l");
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_ACCESS], 2);
        CHECK_EQ(r.plain.trips[CLIENT_READLINK], 2);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 2);
        CHECK_EQ(r.per[1], 1);
        CHECK_EQ(r.per[3], 1);
        CHECK_EQ(r.warmed.trips[CLIENT_ACCESS], 2);
        CHECK_EQ(r.warmed.trips[CLIENT_READLINK], 2);
        CHECK_EQ(r.warmed.round_trips, 4);
        for (int pass = 0; pass < 2; pass++) {
                cost(rs, pass ? "nfs" : "smb", &r);
                CHECK_EQ(r.plain.trips[CLIENT_ACCESS], 0);
                CHECK_EQ(r.plain.trips[CLIENT_ATTR], 0);
                CHECK_EQ(r.plain.trips[CLIENT_READLINK], 2);
                CHECK_EQ(r.per[1], 0);
                CHECK_EQ(r.per[3], 1);
                CHECK_EQ(r.warmed.trips[CLIENT_ACCESS], 0);
                CHECK_EQ(r.warmed.round_trips, 2);
        }
}

/* Lookups off the share cost nothing and count nowhere. */
static void test_off_share(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_OPEN, 0, "/t/f");
        add(rs, 1 * MS, RS_LOOKUP_STAT, -ENOENT, "/s2/x");
        add(rs, 2 * MS, RS_LOOKUP_OPEN, 0, "/proc/self/maps");
        add(rs, 3 * MS, RS_LOOKUP_OPEN, 0, "/s/f");
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.lookups, 1);
        CHECK_EQ(r.warmed.lookups, 1);
        CHECK_EQ(r.per[0], 0);
        CHECK_EQ(r.per[1], 0);
        CHECK_EQ(r.per[2], 0);
        CHECK_EQ(r.per[3], 2);
        CHECK_EQ(r.plain.round_trips, 2);
        /* the whole tree the share: all but /proc */
        cost_ex(rs, NULL, "strict", 1000, "/", NULL, &r);
        CHECK_EQ(r.plain.lookups, 3);
        CHECK_EQ(r.per[2], 0);
        /* NULL per_lookup */
        {
                struct cost_profile p = test_share("nfs", 1000);
                struct client_cost a, b, c;
                CHECK_EQ(client_cost(rs, NULL, &p, "/s", NULL, NULL, &a, &b, &c), 0);
                CHECK_EQ(a.round_trips, 2);
                CHECK_EQ(b.round_trips, 0);     /* no plan: no replay */
        }
}

/* readset replay's own: each planned file opened once (walked as a
 * recorded lookup of it is), each plan lookup made once, the clock standing,
 * COST_REPLAY_THREADS at a time. */
static void test_replay(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct plan_read reads[5] = {};
        uint32_t lookups[3];
        struct plan plan = { .reads = reads, .n_reads = 5, .lookups = lookups, .n_lookups = 3 };
        struct run r;

        CHECK(readset_add_file(rs, "/s/d/a", 1, 1) != NULL);
        CHECK(readset_add_file(rs, "/s/d/b", 1, 2) != NULL);
        CHECK(readset_add_file(rs, "/s/d/c", 1, 3) != NULL);      /* no recorded lookup */
        CHECK(readset_add_file(rs, "/usr/lib/x.so", 2, 4) != NULL);
        reads[0].file = 0;
        reads[1].file = 1;
        reads[2].file = 0;      /* a file read twice is opened once */
        reads[3].file = 2;
        reads[4].file = 3;      /* not on the share */
        add(rs, 0, RS_LOOKUP_OPEN, 0, "/s/d/a");
        add(rs, 5 * S, RS_LOOKUP_OPEN, 0, "/s/d/a");
        add(rs, 10 * S, RS_LOOKUP_OPEN, 0, "/s/d/b");
        add(rs, 11 * S, RS_LOOKUP_STAT, 0, "/s/e/g");
        add(rs, 12 * S, RS_LOOKUP_READDIR, 0, "/s/d");
        add(rs, 13 * S, RS_LOOKUP_OPEN, 0, "/usr/lib/x.so");
        lookups[0] = 3;
        lookups[1] = 4;
        lookups[2] = 5;         /* not on the share */
        cost_ex(rs, &plan, "strict", 1000, "/s", NULL, &r);
        CHECK_EQ(r.replay.trips[CLIENT_OPEN], 3);
        /* d, a, b; c; e, g */
        CHECK_EQ(r.replay.trips[CLIENT_NAME], 6);
        CHECK_EQ(r.replay.trips[CLIENT_LISTING], 1);
        CHECK_EQ(r.replay.trips[CLIENT_ATTR], 0);
        CHECK_EQ(r.replay.round_trips, 10);
        CHECK_EQ(r.replay.lookups, 2);
        CHECK(r.replay.seconds > 10 * 0.001 / COST_REPLAY_THREADS - 1e-9 &&
              r.replay.seconds < 10 * 0.001 / COST_REPLAY_THREADS + 1e-9);
        check_sum(&r.replay);
        /* the plain start, spread over 12 s, walked d four times */
        CHECK_EQ(r.plain.trips[CLIENT_OPEN], 3);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 9);
        CHECK_EQ(r.plain.trips[CLIENT_LISTING], 1);
        /* nfs: the listing brings nothing the replay has not asked */
        cost_ex(rs, &plan, "nfs", 1000, "/s", NULL, &r);
        CHECK_EQ(r.replay.round_trips, 10);
        /* a plan lookup of a path replay opened is no name more */
        lookups[0] = 0;
        cost_ex(rs, &plan, "strict", 1000, "/s", NULL, &r);
        CHECK_EQ(r.replay.trips[CLIENT_NAME], 4);
        CHECK_EQ(r.replay.round_trips, 8);
}

/* The start under readset run: what no warming answers. */
static void test_warmed(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        struct run r;

        add(rs, 0, RS_LOOKUP_STAT, 0, "/s/d/f");
        add(rs, 1 * S, RS_LOOKUP_STAT, 0, "/s/d/g");
        add(rs, 2 * S, RS_LOOKUP_STAT, -ENOENT, "/s/d/x");
        add(rs, 3 * S, RS_LOOKUP_STAT, -ENOENT, "/s/d/x");
        add(rs, 4 * S, RS_LOOKUP_ACCESS, 0, "/s/d/f");
        add(rs, 5 * S, RS_LOOKUP_OPEN, 0, "/s/d/f");
        add(rs, 6 * S, RS_LOOKUP_OPEN, 0, "/s/d");
        add(rs, 7 * S, RS_LOOKUP_READDIR, 0, "/s/d");
        add(rs, 8 * S, RS_LOOKUP_READLINK, 0, "/s/d/l");
        cost(rs, "strict", &r);
        CHECK_EQ(r.warmed.lookups, 9);
        CHECK_EQ(r.warmed.trips[CLIENT_NAME], 0);
        CHECK_EQ(r.warmed.trips[CLIENT_ATTR], 0);
        CHECK_EQ(r.warmed.trips[CLIENT_FAILED], 2);
        CHECK_EQ(r.warmed.trips[CLIENT_ACCESS], 1);
        CHECK_EQ(r.warmed.trips[CLIENT_OPEN], 1);
        CHECK_EQ(r.warmed.trips[CLIENT_LISTING], 1);
        CHECK_EQ(r.warmed.trips[CLIENT_READLINK], 1);
        CHECK_EQ(r.warmed.round_trips, 6);
        CHECK(r.warmed.seconds > 0.0059 && r.warmed.seconds < 0.0061);
        check_sum(&r.warmed);
        CHECK(r.plain.round_trips > r.warmed.round_trips);
        for (int pass = 0; pass < 2; pass++) {
                cost(rs, pass ? "nfs" : "smb", &r);
                CHECK_EQ(r.warmed.trips[CLIENT_FAILED], 0);
                CHECK_EQ(r.warmed.trips[CLIENT_ACCESS], 0);
                CHECK_EQ(r.warmed.round_trips, 3);
        }
}

/* Files read with no open recorded, where the recording lost lookups:
 * each a name and an open (at most as many as were lost); where it lost
 * none, they were opened by another of their names. */
static void test_lost_opens(void)
{
        _cleanup_readset_ struct readset *rs = test_lookups_readset();
        static const char *const paths[] = { "/s/a", "/s/b", "/s/c", "/t/d" };
        struct run r;

        for (unsigned i = 0; i < 4; i++) {
                struct rs_file *f = readset_add_file(rs, paths[i], 1, 10 + i);
                CHECK(f != NULL);
                if (f)
                        f->kind = RS_FILE_REGULAR;
        }
        add(rs, 0, RS_LOOKUP_OPEN, 0, "/s/a");
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_OPEN], 1);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 1);
        rs->lookups_lost = 1;
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_OPEN], 2);
        CHECK_EQ(r.plain.trips[CLIENT_NAME], 2);
        CHECK_EQ(r.warmed.trips[CLIENT_OPEN], 2);
        check_sum(&r.plain);
        rs->lookups_lost = 100;         /* /s/b and /s/c; /t/d is not on the share */
        cost(rs, "strict", &r);
        CHECK_EQ(r.plain.trips[CLIENT_OPEN], 3);
        CHECK_EQ(r.plain.round_trips, 6);
}

int main(void)
{
        test_lost_opens();
        test_on_share();
        test_lifetime();
        test_clock_runs_on();
        test_root_pinned();
        test_nfs_attributes();
        test_failed_kept();
        test_missing_directory();
        test_opens();
        test_listings();
        test_access_readlink();
        test_off_share();
        test_replay();
        test_warmed();
        TESTS_DONE();
}
