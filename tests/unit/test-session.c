/* SPDX-License-Identifier: MIT */
/* replay/session.c: a session replaying small files with readahead(2)
 * (unprivileged): its figures, skips with their reasons, cancel, the
 * progress callback, a plan that fails, two sessions at once, a session
 * replayed in the caller's thread; the device peek. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/open.h"
#include "replay/session.h"
#include "util/util.h"
#include "tests.h"

#define N_FILES 3
#define FILE_BYTES (64 << 10)

static char dir[] = "/var/tmp/readset-session.XXXXXX";

static int make_file(const char *path, size_t len)
{
        static const char block[4096] = { 1 };
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        if (fd < 0)
                return -errno;
        for (size_t off = 0; off < len; off += sizeof(block))
                if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
                        close(fd);
                        return -EIO;
                }
        return close(fd) < 0 ? -errno : 0;
}

static void file_path(char *buf, size_t size, const char *set, int i)
{
        snprintf(buf, size, "%s/%s-%d", dir, set, i);
}

/* N_FILES files of FILE_BYTES named after set, and a read set of them all
 * (recorded as they are now). */
static struct readset *make_set(const char *set)
{
        struct readset *rs = readset_new();
        char path[128];

        CHECK(rs != NULL);
        for (int i = 0; rs && i < N_FILES; i++) {
                struct rs_file *f;
                struct stat st;
                file_path(path, sizeof(path), set, i);
                CHECK_EQ(make_file(path, FILE_BYTES), 0);
                CHECK_EQ(stat(path, &st), 0);
                f = readset_add_file(rs, path, st.st_dev, st.st_ino);
                CHECK(f != NULL);
                if (!f)
                        break;
                f->kind = RS_FILE_REGULAR;
                f->size = (uint64_t)st.st_size;
                f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
                CHECK_EQ(readset_file_add_range(f, 0, FILE_BYTES, 0, RS_RANGE_ACCESSED), 0);
        }
        return rs;
}

static void remove_set(const char *set)
{
        char path[128];

        for (int i = 0; i < N_FILES; i++) {
                file_path(path, sizeof(path), set, i);
                (void)unlink(path);
        }
}

/* Every byte asked for (the files are cached: not asked of the cache),
 * on a solid-state device, the lookups and the pacing off. */
static void options(struct replay_session_options *o)
{
        char why[64];

        replay_session_options_init(o);
        CHECK_EQ(replay_options_set_device(&o->policy, "solid", why, sizeof(why)), 0);
        o->engine.method = ENGINE_READAHEAD;
        o->engine.threads = 1;
        o->threads_given = true;
        o->engine.skip_cached = false;
        o->engine.lookups = false;
        o->pace = PACE_OFF;
}

static int replay(const struct replay_session_options *o, const struct readset *rs, struct replay_result *ret)
{
        struct replay_session *s;
        int r = replay_session_new(o, rs, &s);

        if (r < 0)
                return r;
        r = replay_session_start(s, false);
        if (r >= 0)
                r = replay_session_wait(s, 0, NULL, NULL);
        *ret = *replay_session_results(s);
        ret->skips = NULL;      /* (the session's) */
        replay_session_free(s);
        return r;
}

static void test_counts(void)
{
        struct replay_session_options o;
        struct replay_result res;
        struct readset *rs = make_set("counts");

        options(&o);
        CHECK_EQ(replay(&o, rs, &res), 0);
        CHECK(res.planned_ok);
        CHECK_EQ(res.plan_error, 0);
        CHECK_EQ(res.planned, N_FILES * FILE_BYTES);
        CHECK_EQ(res.st.files_opened, N_FILES);
        CHECK_EQ(res.st.bytes, N_FILES * FILE_BYTES);
        CHECK(res.st.reads >= 1);
        CHECK(!res.st.stopped);
        CHECK_EQ(res.no_process, 0);
        readset_free(rs);
        remove_set("counts");
}

/* Beside a program's start: on a solid-state device a few reads at a time,
 * all of the plan still read; where seeks dominate, the plan's sweep. */
static void test_beside(void)
{
        struct replay_session_options o;
        struct replay_result res;
        struct device_profile dev;
        struct readset *rs = make_set("beside");

        options(&o);
        o.beside = true;
        device_profile_rotational(&dev);
        replay_session_options_for_device(&o, &dev);
        CHECK_EQ(o.engine.method, ENGINE_READAHEAD);
        device_profile_solid(&dev);
        replay_session_options_for_device(&o, &dev);
        CHECK_EQ(o.engine.method, ENGINE_READ);
        CHECK_EQ(o.engine.queue_depth, REPLAY_BESIDE_DEPTH);
        o.beside = false;
        o.engine.method = ENGINE_READAHEAD;
        replay_session_options_for_device(&o, &dev);
        CHECK_EQ(o.engine.method, ENGINE_READAHEAD);

        /* the session applies it to the device it plans for */
        options(&o);
        o.beside = true;
        o.engine.skip_cached = true;
        for (int i = 0; i < N_FILES; i++) {
                char path[PATH_MAX];
                int fd;

                file_path(path, sizeof(path), "beside", i);
                fd = open(path, O_RDONLY);
                CHECK(fd >= 0);
                CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
                close(fd);
        }
        CHECK_EQ(replay(&o, rs, &res), 0);
        CHECK(res.planned_ok);
        CHECK_EQ(res.planned, N_FILES * FILE_BYTES);
        CHECK_EQ(res.st.files_opened, N_FILES);
        CHECK_EQ(res.st.bytes + res.st.bytes_cached, N_FILES * FILE_BYTES);
        CHECK(res.st.reads >= 1 || res.st.bytes == 0);
        readset_free(rs);
        remove_set("beside");
}

/* One file changed since, one gone: each skipped, and why. */
static void test_skips(void)
{
        struct replay_session_options o;
        struct replay_session *s;
        const struct replay_result *res;
        struct readset *rs = make_set("skips");
        char path[128];

        file_path(path, sizeof(path), "skips", 0);
        CHECK_EQ(make_file(path, 2 * FILE_BYTES), 0);
        file_path(path, sizeof(path), "skips", 2);
        CHECK_EQ(unlink(path), 0);
        options(&o);
        o.skips = true;
        CHECK_EQ(replay_session_new(&o, rs, &s), 0);
        CHECK_EQ(replay_session_start(s, false), 0);
        CHECK_EQ(replay_session_wait(s, 0, NULL, NULL), 0);
        res = replay_session_results(s);
        CHECK_EQ(res->st.files_opened, 1);
        CHECK_EQ(res->st.files_changed, 1);
        CHECK_EQ(res->st.files_missing, 1);
        CHECK_EQ(res->st.bytes, FILE_BYTES);
        CHECK(res->skips != NULL);
        if (res->skips) {
                CHECK_EQ(res->skips[0], FS_SKIP_CHANGED);
                CHECK_EQ(res->skips[1], FS_SKIP_NONE);
                CHECK_EQ(res->skips[2], FS_SKIP_MISSING);
        }
        replay_session_free(s);
        readset_free(rs);
        remove_set("skips");
}

struct progress_seen {
        unsigned calls, planned, done;
        uint64_t bytes_planned, bytes;
        uint64_t bytes_done;            /* the last said: never more than planned, never less than before */
        unsigned updates, wrong;
        struct replay_session *cancel;  /* cancelled from the callback, once planned */
};

static void on_progress(void *userdata, const struct replay_progress *p)
{
        struct progress_seen *seen = userdata;

        if (p->bytes_done > p->bytes_planned || p->bytes_done < seen->bytes_done || (p->update && !p->planned))
                seen->wrong++;
        seen->bytes_done = p->bytes_done;
        if (p->update) {
                seen->updates++;        /* (as many as 10 ms allow: none on a quick replay) */
                return;
        }
        seen->calls++;
        seen->planned += p->planned && !p->done;
        seen->done += p->done;
        seen->bytes_planned = p->bytes_planned;
        seen->bytes = p->bytes;
        if (seen->cancel && p->planned)
                replay_session_cancel(seen->cancel);
}

/* Planned, then done: each said once, with the figures. */
static void test_progress(void)
{
        struct replay_session_options o;
        struct progress_seen seen = { 0 };
        struct replay_result res;
        struct readset *rs = make_set("progress");

        options(&o);
        o.progress = on_progress;
        o.progress_userdata = &seen;
        CHECK_EQ(replay(&o, rs, &res), 0);
        CHECK_EQ(seen.calls, 2);
        CHECK_EQ(seen.planned, 1);
        CHECK_EQ(seen.done, 1);
        CHECK_EQ(seen.bytes_planned, N_FILES * FILE_BYTES);
        CHECK_EQ(seen.bytes, N_FILES * FILE_BYTES);
        CHECK_EQ(seen.bytes_done, N_FILES * FILE_BYTES);
        CHECK_EQ(seen.wrong, 0);
        readset_free(rs);
        remove_set("progress");
}

/* Held once planned and cancelled then (from another thread's point of
 * view: before the wait; and from its own callback): nothing read. */
static void test_cancel(void)
{
        struct replay_session_options o;
        struct progress_seen seen = { 0 };
        struct replay_session *s;
        const struct replay_result *res;
        struct readset *rs = make_set("cancel");

        options(&o);
        CHECK_EQ(replay_session_new(&o, rs, &s), 0);
        CHECK_EQ(replay_session_start(s, true), 0);
        CHECK(replay_session_planned(s, now_us() + 60000000));
        replay_session_cancel(s);
        CHECK_EQ(replay_session_wait(s, 0, NULL, NULL), 0);
        res = replay_session_results(s);
        CHECK(res->planned_ok);
        CHECK(res->st.stopped);
        CHECK_EQ(res->st.bytes, 0);
        CHECK_EQ(res->st.files_opened, 0);
        replay_session_free(s);

        o.progress = on_progress;
        o.progress_userdata = &seen;
        CHECK_EQ(replay_session_new(&o, rs, &s), 0);
        seen.cancel = s;
        CHECK_EQ(replay_session_start(s, true), 0);
        CHECK(replay_session_planned(s, now_us() + 60000000));
        CHECK_EQ(replay_session_wait(s, 0, NULL, NULL), 0);
        res = replay_session_results(s);
        CHECK(res->st.stopped);
        CHECK_EQ(res->st.bytes, 0);
        CHECK_EQ(seen.done, 1);
        replay_session_free(s);
        readset_free(rs);
        remove_set("cancel");
}

/* Never started (as where no process can be had): replayed in the
 * caller's thread, with the same figures, skips and progress. */
static void test_here(void)
{
        struct replay_session_options o;
        struct progress_seen seen = { 0 };
        struct replay_session *s;
        const struct replay_result *res;
        struct readset *rs = make_set("here");
        char path[128];

        file_path(path, sizeof(path), "here", 1);
        CHECK_EQ(unlink(path), 0);
        options(&o);
        o.skips = true;
        o.progress = on_progress;
        o.progress_userdata = &seen;
        CHECK_EQ(replay_session_new(&o, rs, &s), 0);
        CHECK_EQ(replay_session_wait(s, 0, NULL, NULL), 0);
        res = replay_session_results(s);
        CHECK(res->planned_ok);
        CHECK(!res->st.stopped);
        CHECK_EQ(res->no_process, -ECHILD);     /* never started: no process used */
        CHECK_EQ(res->st.files_opened, N_FILES - 1);
        CHECK_EQ(res->st.bytes, (N_FILES - 1) * FILE_BYTES);
        CHECK(res->skips && res->skips[1] == FS_SKIP_MISSING);
        CHECK_EQ(seen.planned, 1);
        CHECK_EQ(seen.done, 1);
        CHECK_EQ(seen.bytes, (N_FILES - 1) * FILE_BYTES);
        replay_session_free(s);
        readset_free(rs);
        remove_set("here");
}

/* A plan that cannot be made: why, as data, and nothing replayed.  (The
 * planner refuses more than UINT32_MAX lookups before it looks at them.) */
static void test_plan_fails(void)
{
        struct replay_session_options o;
        struct replay_result res;
        struct readset *rs = make_set("plan");
        struct rs_lookup *lookups = rs->lookups;
        size_t n = rs->n_lookups;

        options(&o);
        rs->n_lookups = (size_t)UINT32_MAX + 1;
        CHECK_EQ(replay(&o, rs, &res), 0);
        rs->n_lookups = n;
        rs->lookups = lookups;
        CHECK(!res.planned_ok);
        CHECK_EQ(res.plan_error, -E2BIG);
        CHECK(strcmp(res.plan_what, "cannot plan the replay") == 0);
        CHECK_EQ(res.st.bytes, 0);
        readset_free(rs);
        remove_set("plan");
}

struct concurrent {
        const char *set;
        int turn;                 /* its place in the order of the starts */
        struct readset *rs;
        int r;
        struct replay_result res;
};

/* The sessions are started one after the other, once both threads are
 * made and waiting (past the sanitizer's own start of a thread), each
 * while every other thread waits (a fork while another thread
 * is inside the sanitizer's allocator -- making a thread is -- leaves the
 * child waiting for its lock for good: GCC 12's ASan does not take it
 * across fork), and replay at once. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int started, arrived;
static bool go;

static void *concurrent_main(void *arg)
{
        struct concurrent *c = arg;
        struct replay_session_options o;
        struct replay_session *s = NULL;

        options(&o);
        pthread_mutex_lock(&start_lock);
        arrived++;
        pthread_cond_broadcast(&start_cond);
        while (!go || arrived < 2 || started != c->turn)
                pthread_cond_wait(&start_cond, &start_lock);
        c->r = replay_session_new(&o, c->rs, &s);
        if (c->r >= 0)
                c->r = replay_session_start(s, false);
        started++;
        pthread_cond_broadcast(&start_cond);
        while (started < 2)
                pthread_cond_wait(&start_cond, &start_lock);
        pthread_mutex_unlock(&start_lock);
        if (c->r >= 0)
                c->r = replay_session_wait(s, 0, NULL, NULL);
        if (s) {
                c->res = *replay_session_results(s);
                c->res.skips = NULL;    /* (the session's) */
        }
        replay_session_free(s);
        return NULL;
}

/* Two sessions at once, from two threads: each its own figures. */
static void test_two_at_once(void)
{
        struct concurrent c[2] = { { .set = "one", .turn = 0 }, { .set = "two", .turn = 1 } };
        pthread_t t[2];

        for (int i = 0; i < 2; i++)
                c[i].rs = make_set(c[i].set);
        /* (a file of the second set gone: its figures are not the first's) */
        {
                char path[128];
                file_path(path, sizeof(path), "two", 1);
                CHECK_EQ(unlink(path), 0);
        }
        for (int i = 0; i < 2; i++)
                CHECK_EQ(pthread_create(&t[i], NULL, concurrent_main, &c[i]), 0);
        pthread_mutex_lock(&start_lock);
        go = true;
        pthread_cond_broadcast(&start_cond);
        pthread_mutex_unlock(&start_lock);
        for (int i = 0; i < 2; i++)
                CHECK_EQ(pthread_join(t[i], NULL), 0);
        CHECK_EQ(c[0].r, 0);
        CHECK_EQ(c[1].r, 0);
        CHECK_EQ(c[0].res.st.files_opened, N_FILES);
        CHECK_EQ(c[0].res.st.bytes, N_FILES * FILE_BYTES);
        CHECK_EQ(c[1].res.st.files_opened, N_FILES - 1);
        CHECK_EQ(c[1].res.st.files_missing, 1);
        CHECK_EQ(c[1].res.st.bytes, (N_FILES - 1) * FILE_BYTES);
        for (int i = 0; i < 2; i++) {
                readset_free(c[i].rs);
                remove_set(c[i].set);
        }
}

/* The device, asked in a process of its own: what it says comes back. */
static void test_peek(void)
{
        struct replay_options o;
        struct device_profile d = { 0 };
        struct device_note note = { 0 };
        char why[64];

        replay_options_init(&o);
        CHECK_EQ(replay_options_set_device(&o, "rotational", why, sizeof(why)), 0);
        CHECK_EQ(replay_peek_device(&o, dir, now_us() + 60000000, &d, &note), 0);
        CHECK(d.rotational);    /* (the option wins over the device) */
        CHECK_EQ(note.reason, 0);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot create a directory in /var/tmp");
        test_counts();
        test_beside();
        test_skips();
        test_progress();
        test_cancel();
        test_here();
        test_plan_fails();
        test_two_at_once();
        test_peek();
        (void)rmdir(dir);
        TESTS_DONE();
}
