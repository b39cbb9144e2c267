/* SPDX-License-Identifier: MIT */
/* replay/warm.c on a replay's state of its own (steps.h): the metadata
 * reads touch no data file; the warmers make each planned lookup once
 * between them, once let go, and none when the stop callback says so. */
#include <errno.h>

#include "fs/open.h"
#include "replay/warm.h"
#include "replay-fixture.h"

/* "m" a block device's ranges (a regular file now: skipped), "d" data. */
static void test_metadata_only(void)
{
        struct fixture x;
        struct readset *rs = readset_new();
        struct engine_options o;
        struct engine_stats st = { 0 };
        uint8_t why[2] = { 0, 0 };
        uint32_t m, d;
        struct plan *p;
        struct eng e;

        fixture_init(&x);
        fixture_file(&x, "m", 64 * K);
        fixture_file(&x, "d", 8 * K);
        m = fixture_record(rs, &x, "m", RS_FILE_BLOCKDEV);
        fixture_range(rs, m, 0, 4 * K, 10);
        d = fixture_record(rs, &x, "d", RS_FILE_REGULAR);
        fixture_range(rs, d, 0, 8 * K, 0);
        p = fixture_plan(rs);
        CHECK_EQ(p->n_meta, 1);
        fixture_options(&o, why);
        CHECK_EQ(engine_state_init(&e, rs, p, &o, &st), 0);
        warm_metadata(&e, &st);
        CHECK_EQ(why[m], FS_SKIP_NOT_REGULAR);
        CHECK_EQ(st.files_not_regular, 1);
        CHECK_EQ(st.bytes_skipped, 4 * K);
        CHECK_EQ(engine_fd(&e, d), FD_UNTRIED);
        CHECK_EQ(st.files_opened, 0);
        CHECK_EQ(st.reads, 0);
        engine_close_files(&e, false);
        engine_state_free(&e);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* A read set of one file and three lookups besides, planned. */
static struct readset *with_lookups(struct fixture *x, struct plan **p)
{
        struct readset *rs = readset_new();
        char path[128];

        fixture_file(x, "f", 4 * K);
        fixture_range(rs, fixture_record(rs, x, "f", RS_FILE_REGULAR), 0, 4 * K, 0);
        CHECK_EQ(readset_add_lookup(rs, 1, RS_LOOKUP_STAT, -ENOENT, 1, fixture_path(x, "a", path, sizeof(path))), 0);
        CHECK_EQ(readset_add_lookup(rs, 2, RS_LOOKUP_STAT, -ENOENT, 1, fixture_path(x, "b", path, sizeof(path))), 0);
        CHECK_EQ(readset_add_lookup(rs, 3, RS_LOOKUP_READDIR, 0, 1, x->dir), 0);
        *p = fixture_plan(rs);
        CHECK_EQ((*p)->n_lookups, 3);
        return rs;
}

/* Asking the cache first, no data found cold: the warmers wait for the
 * fill to end, then make the lookups, each by one of them. */
static void test_lookups_once_let_go(void)
{
        struct fixture x;
        struct readset *rs;
        struct engine_options o;
        struct engine_stats st = { 0 };
        struct warmers *w;
        struct plan *p;
        struct eng e;

        fixture_init(&x);
        rs = with_lookups(&x, &p);
        fixture_options(&o, NULL);
        o.skip_cached = true;
        CHECK_EQ(engine_state_init(&e, rs, p, &o, &st), 0);
        w = warmers_start(&e, 2);
        CHECK(w != NULL);
        atomic_store(&e.workers_done, true);
        engine_wake_warmers(&e);
        warmers_join(w, &st);
        CHECK_EQ(st.lookups, 3);
        engine_state_free(&e);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

static bool stop_now(void *userdata)
{
        (void)userdata;
        return true;
}

/* The fill done, a stop callback that says stop: asked by the warmers
 * themselves, no lookup made. */
static void test_stopped(void)
{
        struct fixture x;
        struct readset *rs;
        struct engine_options o;
        struct engine_stats st = { 0 };
        struct warmers *w;
        struct plan *p;
        struct eng e;

        fixture_init(&x);
        rs = with_lookups(&x, &p);
        fixture_options(&o, NULL);
        o.skip_cached = true;
        o.stop = stop_now;
        CHECK_EQ(engine_state_init(&e, rs, p, &o, &st), 0);
        atomic_store(&e.workers_done, true);
        w = warmers_start(&e, 2);
        warmers_join(w, &st);
        CHECK_EQ(st.lookups, 0);
        engine_state_free(&e);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

int main(void)
{
        test_metadata_only();
        test_lookups_once_let_go();
        test_stopped();
        TESTS_DONE();
}
