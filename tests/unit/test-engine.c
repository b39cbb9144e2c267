/* SPDX-License-Identifier: MIT */
/* replay/engine.c through the null fill method: what it counts, what it
 * skips and why, when it stops, its windows and its lookups. */
#include <errno.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "fs/open.h"
#include "replay/residency.h"
#include "replay-fixture.h"

static void test_null_not_named(void)
{
        CHECK(strcmp(engine_method_name(ENGINE_NULL), "null") == 0);
        CHECK_EQ(engine_method_from_name("null"), -EINVAL);
        CHECK_EQ(engine_method_from_name("readahead"), ENGINE_READAHEAD);
}

/* Files, reads and bytes as planned; nothing skipped. */
static void test_counts(void)
{
        struct fixture x;
        struct readset *rs = readset_new();
        struct engine_options o;
        struct engine_stats st;
        struct plan *p;
        _Atomic uint64_t done = 0;
        uint32_t a, b, c;

        fixture_init(&x);
        fixture_file(&x, "a", 4 * K);
        fixture_file(&x, "b", 12 * K);
        fixture_file(&x, "c", 8 * K);
        a = fixture_record(rs, &x, "a", RS_FILE_REGULAR);
        b = fixture_record(rs, &x, "b", RS_FILE_REGULAR);
        c = fixture_record(rs, &x, "c", RS_FILE_REGULAR);
        fixture_range(rs, a, 0, 4 * K, 10);
        fixture_range(rs, b, 0, 4 * K, 20);
        fixture_range(rs, b, 8 * K, 4 * K, 30);
        fixture_range(rs, c, 0, 8 * K, 40);
        p = fixture_plan(rs);
        CHECK_EQ(p->n_reads, 4);
        fixture_options(&o, NULL);
        o.progress_bytes = &done;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(done, p->bytes);       /* how far it was, as it went: all of it */
        CHECK_EQ(st.files, 3);
        CHECK_EQ(st.files_opened, 3);
        CHECK_EQ(st.reads, 4);
        CHECK_EQ(st.bytes, 20 * K);
        CHECK_EQ(st.bytes, p->bytes);
        CHECK_EQ(st.bytes_skipped + st.bytes_cached + st.bytes_missing, 0);
        CHECK_EQ(st.windows, 1);
        CHECK(!st.stopped);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* One file recorded as "f" (8 KiB, one range), then changed by change(),
 * replayed: its skip reason; *st the replay's stats. */
static enum fs_skip replay_changed(void (*change)(const struct fixture *x, const struct rs_file *f),
                                   struct engine_stats *st)
{
        struct fixture x;
        struct readset *rs = readset_new();
        struct engine_options o;
        uint8_t why = 0xff;
        _Atomic uint64_t done = 0;
        struct plan *p;

        fixture_init(&x);
        fixture_file(&x, "f", 8 * K);
        fixture_range(rs, fixture_record(rs, &x, "f", RS_FILE_REGULAR), 0, 8 * K, 0);
        p = fixture_plan(rs);
        change(&x, &rs->files[0]);
        fixture_options(&o, &why);
        o.progress_bytes = &done;
        CHECK_EQ(engine_run(rs, p, &o, st), 0);
        CHECK_EQ(done, 8 * K);          /* skipped: dealt with too */
        CHECK_EQ(st->files_opened, 0);
        CHECK_EQ(st->bytes, 0);
        CHECK_EQ(st->reads, 0);
        CHECK_EQ(st->bytes_skipped, 8 * K);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
        return (enum fs_skip)why;
}

/* the recorded mtime given back to path */
static void set_mtime(const char *path, const struct rs_file *f)
{
        struct timespec ts[2] = { { 0, UTIME_OMIT }, { f->mtime_ns / 1000000000LL, f->mtime_ns % 1000000000LL } };
        CHECK_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void gone(const struct fixture *x, const struct rs_file *f)
{
        (void)x;
        CHECK_EQ(unlink(f->path), 0);
}

static void grown(const struct fixture *x, const struct rs_file *f)
{
        (void)x;
        CHECK_EQ(truncate(f->path, (off_t)f->size + 1), 0);
        set_mtime(f->path, f);          /* the size alone differs */
}

static void touched(const struct fixture *x, const struct rs_file *f)
{
        struct timespec ts[2] = { { 0, UTIME_OMIT }, { f->mtime_ns / 1000000000LL + 1, 0 } };
        (void)x;
        CHECK_EQ(utimensat(AT_FDCWD, f->path, ts, 0), 0);
}

static void replaced(const struct fixture *x, const struct rs_file *f)
{
        char path[128];

        fixture_file(x, "f.new", f->size);
        CHECK_EQ(rename(fixture_path(x, "f.new", path, sizeof(path)), f->path), 0);
        set_mtime(f->path, f);          /* the inode alone differs */
}

static void fifo(const struct fixture *x, const struct rs_file *f)
{
        (void)x;
        CHECK_EQ(unlink(f->path), 0);
        CHECK_EQ(mkfifo(f->path, 0644), 0);
}

static void symlinked(const struct fixture *x, const struct rs_file *f)
{
        char path[128];

        fixture_file(x, "g", f->size);
        CHECK_EQ(unlink(f->path), 0);
        CHECK_EQ(symlink(fixture_path(x, "g", path, sizeof(path)), f->path), 0);
}

static void test_missing(void)
{
        struct engine_stats st;

        CHECK_EQ(replay_changed(gone, &st), FS_SKIP_MISSING);
        CHECK_EQ(st.files_missing, 1);
}

/* size, mtime or inode: each alone makes another file */
static void test_changed(void)
{
        void (*changes[])(const struct fixture *, const struct rs_file *) = { grown, touched, replaced };

        for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
                struct engine_stats st;
                CHECK_EQ(replay_changed(changes[i], &st), FS_SKIP_CHANGED);
                CHECK_EQ(st.files_changed, 1);
        }
}

/* a FIFO or a symlink where the file was: never opened */
static void test_not_regular(void)
{
        struct engine_stats st;

        CHECK_EQ(replay_changed(fifo, &st), FS_SKIP_NOT_REGULAR);
        CHECK_EQ(st.files_not_regular, 1);
        CHECK_EQ(replay_changed(symlinked, &st), FS_SKIP_NOT_REGULAR);
        CHECK_EQ(st.files_not_regular, 1);
}

struct stopper {
        unsigned calls, stop_at;
};

static bool stop_at(void *userdata)
{
        struct stopper *s = userdata;
        return ++s->calls >= s->stop_at;
}

/* One file of n ranges, one read each. */
static struct readset *one_file_of(struct fixture *x, unsigned n)
{
        struct readset *rs = readset_new();
        uint32_t f;

        fixture_file(x, "f", n * 8 * K);
        f = fixture_record(rs, x, "f", RS_FILE_REGULAR);
        for (unsigned i = 0; i < n; i++)
                fixture_range(rs, f, i * 8 * K, 4 * K, i);
        return rs;
}

/* Stopped at once: nothing opened, nothing issued. */
static void test_stop_at_once(void)
{
        struct fixture x;
        struct readset *rs;
        struct stopper s = { 0, 1 };
        struct engine_options o;
        struct engine_stats st;
        struct plan *p;

        fixture_init(&x);
        rs = one_file_of(&x, 4);
        p = fixture_plan(rs);
        fixture_options(&o, NULL);
        o.stop = stop_at;
        o.stop_userdata = &s;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK(st.stopped);
        CHECK_EQ(s.calls, 1);
        CHECK_EQ(st.files_opened, 0);
        CHECK_EQ(st.reads, 0);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* Stopped while filling: some of the reads, not all. */
static void test_stop_midway(void)
{
        struct fixture x;
        struct readset *rs;
        struct stopper s = { 0, 3 };
        struct engine_options o;
        struct engine_stats st;
        struct plan *p;

        fixture_init(&x);
        rs = one_file_of(&x, 200);
        p = fixture_plan(rs);
        CHECK_EQ(p->n_reads, 200);
        fixture_options(&o, NULL);
        o.lookups = false;
        o.stop = stop_at;
        o.stop_userdata = &s;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK(st.stopped);
        CHECK(st.reads > 0);
        CHECK(st.reads < 200);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* No stop callback, or one that never stops: all of it. */
static void test_not_stopped(void)
{
        struct fixture x;
        struct readset *rs;
        struct stopper s = { 0, UINT32_MAX };
        struct engine_options o;
        struct engine_stats st;
        struct plan *p;

        fixture_init(&x);
        rs = one_file_of(&x, 200);
        p = fixture_plan(rs);
        fixture_options(&o, NULL);
        o.stop = stop_at;
        o.stop_userdata = &s;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK(!st.stopped);
        CHECK(s.calls > 0);
        CHECK_EQ(st.reads, 200);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* At most 2 files open at once: 5 files in 3 windows; "a", read first and
 * last, is opened twice and counted once. */
static void test_windows(void)
{
        static const char *const names[] = { "a", "b", "c", "d", "e" };
        struct fixture x;
        struct readset *rs = readset_new();
        struct engine_options o;
        struct engine_stats st;
        struct plan *p;

        fixture_init(&x);
        for (unsigned i = 0; i < 5; i++) {
                fixture_file(&x, names[i], 128 * K);
                fixture_range(rs, fixture_record(rs, &x, names[i], RS_FILE_REGULAR), 0, 4 * K, i);
        }
        fixture_range(rs, 0, 64 * K, 4 * K, 100);
        p = fixture_plan(rs);
        CHECK_EQ(p->n_reads, 6);
        fixture_options(&o, NULL);
        o.max_open_files = 2;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(st.windows, 3);
        CHECK_EQ(st.files, 5);
        CHECK_EQ(st.files_opened, 5);
        CHECK_EQ(st.reads, 6);
        CHECK_EQ(st.bytes, 24 * K);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* The planned lookups (a file, a path not there, a directory listed) are
 * each made once; none with lookups off. */
static void test_lookups(void)
{
        struct fixture x;
        struct readset *rs = readset_new();
        struct engine_options o;
        struct engine_stats st;
        char path[128];
        struct plan *p;

        fixture_init(&x);
        fixture_file(&x, "f", 4 * K);
        fixture_file(&x, "other", 4 * K);
        fixture_range(rs, fixture_record(rs, &x, "f", RS_FILE_REGULAR), 0, 4 * K, 0);
        CHECK_EQ(readset_add_lookup(rs, 1, RS_LOOKUP_STAT, 0, 1, fixture_path(&x, "other", path, sizeof(path))), 0);
        CHECK_EQ(readset_add_lookup(rs, 2, RS_LOOKUP_OPEN, -ENOENT, 1, fixture_path(&x, "none", path, sizeof(path))),
                 0);
        CHECK_EQ(readset_add_lookup(rs, 3, RS_LOOKUP_READDIR, 0, 1, x.dir), 0);
        p = fixture_plan(rs);
        CHECK_EQ(p->n_lookups, 3);
        fixture_options(&o, NULL);
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(st.lookups, 3);
        o.lookups = false;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(st.lookups, 0);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* The metadata before any data file is opened: at every poll of the stop
 * callback, the data file ("d", missing) tried only once the metadata
 * ("m", a block device's ranges; a regular file now) was. */
struct order {
        const uint8_t *why;
        uint32_t m, d;
        unsigned polls, between, wrong;
};

static bool watch_order(void *userdata)
{
        struct order *w = userdata;

        w->polls++;
        if (w->why[w->d] != FS_SKIP_NONE && w->why[w->m] == FS_SKIP_NONE)
                w->wrong++;
        if (w->why[w->m] != FS_SKIP_NONE && w->why[w->d] == FS_SKIP_NONE)
                w->between++;
        return false;
}

static void test_metadata_first(void)
{
        struct fixture x;
        struct readset *rs = readset_new();
        struct engine_options o;
        struct engine_stats st;
        uint8_t why[2] = { 0, 0 };
        struct order w = { .why = why };
        char path[128];
        struct plan *p;

        fixture_init(&x);
        fixture_file(&x, "m", 64 * K);
        fixture_file(&x, "d", 64 * 8 * K);
        w.m = fixture_record(rs, &x, "m", RS_FILE_BLOCKDEV);
        fixture_range(rs, w.m, 0, 4 * K, 1000);     /* needed last, read first */
        w.d = fixture_record(rs, &x, "d", RS_FILE_REGULAR);
        for (unsigned i = 0; i < 64; i++)
                fixture_range(rs, w.d, i * 8 * K, 4 * K, i);
        CHECK_EQ(unlink(fixture_path(&x, "d", path, sizeof(path))), 0);
        p = fixture_plan(rs);
        CHECK_EQ(p->n_meta, 1);
        fixture_options(&o, why);
        o.lookups = false;      /* the callback polled from this thread alone */
        o.stop = watch_order;
        o.stop_userdata = &w;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(why[w.m], FS_SKIP_NOT_REGULAR);
        CHECK_EQ(why[w.d], FS_SKIP_MISSING);
        CHECK(w.polls > 0);
        CHECK(w.between > 0);
        CHECK_EQ(w.wrong, 0);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

/* Resident bytes of a file (the replay's own question). */
static uint64_t resident_bytes(const char *path)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        int64_t n = fd >= 0 ? residency_count(fd, 0, 64 * K, RESIDENCY_UPTODATE) : -1;

        CHECK(n >= 0);
        if (fd >= 0)
                close(fd);
        return n > 0 ? (uint64_t)n : 0;
}

/* A snapshot's pages marked used once back: those of the plan, resident;
 * a range the budget left out, evicted, is not read in for it (a
 * one-page file's page counted like the others); the null method marks
 * nothing. */
static void test_mark_used(void)
{
        struct fixture x;
        struct readset *rs = readset_new();
        struct device_profile d;
        struct plan_options po = { .max_bytes = 68 * K };
        struct engine_options o;
        struct engine_stats st;
        struct plan *p = NULL;
        char path[128];
        uint64_t before;
        uint32_t a, b, c;
        int fd;

        fixture_init(&x);
        fixture_file(&x, "a", 64 * K);
        fixture_file(&x, "b", 64 * K);
        fixture_file(&x, "c", 4 * K);
        /* b out of the cache: the budget leaves it out, and so must the marks */
        fd = open(fixture_path(&x, "b", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0 && fsync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
        if (fd >= 0)
                close(fd);
        before = resident_bytes(path);   /* (DONTNEED may leave a few pages) */
        CHECK(before < 64 * K);
        a = fixture_record(rs, &x, "a", RS_FILE_REGULAR);
        b = fixture_record(rs, &x, "b", RS_FILE_REGULAR);
        c = fixture_record(rs, &x, "c", RS_FILE_REGULAR);
        fixture_range(rs, a, 0, 64 * K, 0);        /* ranks: a and c first, b the newest */
        fixture_range(rs, c, 0, 4 * K, 0);
        fixture_range(rs, b, 0, 64 * K, 15);
        rs->rec_flags = RS_REC_SNAPSHOT;
        device_profile_solid(&d);
        d.bridge_bytes = 0;
        CHECK_EQ(planner_build(rs, &d, &po, &p), 0);
        CHECK_EQ(p->bytes, 68 * K);
        engine_options_default(&o);
        o.threads = 1;
        o.mark_used = true;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(st.bytes_marked, 68 * K);
        CHECK(resident_bytes(path) <= before);
        /* the null method reads nothing, and marks nothing */
        o.method = ENGINE_NULL;
        CHECK_EQ(engine_run(rs, p, &o, &st), 0);
        CHECK_EQ(st.bytes_marked, 0);
        plan_free(p);
        readset_free(rs);
        fixture_done(&x);
}

int main(void)
{
        test_null_not_named();
        test_counts();
        test_missing();
        test_changed();
        test_not_regular();
        test_stop_at_once();
        test_stop_midway();
        test_not_stopped();
        test_windows();
        test_lookups();
        test_metadata_first();
        test_mark_used();
        TESTS_DONE();
}
