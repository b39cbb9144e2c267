/* SPDX-License-Identifier: MIT */
/* boot/session.c: whole boot sessions, boot after boot, with a fake
 * systemd, a fake clock, a fake recorder and a fake replay: the first
 * boot records, replay trials alternate with plain boots, the judgment
 * keeps replay where it helps and turns it off where it does not;
 * readset=off on the command line, a boot that never finishes (the
 * bound), a stale mark, a replay that would not start.  The history
 * file's lines are read back.  boot/system.c's parser of the boot's
 * seconds too. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/history.h"
#include "boot/session.h"
#include "boot/state.h"
#include "boot/system.h"
#include "model/readset.h"
#include "util/util.h"
#include "tests.h"

struct fake {
        uint64_t now, unix_now;  /* the clock */
        bool cmdline_off;
        bool never_finishes;     /* systemd: the boot goes on past any deadline */
        uint64_t boot_us;        /* this boot's total, as systemd gives it */
        uint64_t finish_deadline, replay_deadline;
        unsigned notified, running, recorded, replayed, tracing;
        int replay_err;          /* the replay's start fails so */
        char said[4096];
};

static bool f_cmdline_off(void *u) { return ((struct fake *)u)->cmdline_off; }
static void f_notify(void *u, bool running) { ((struct fake *)u)->notified++; ((struct fake *)u)->running += running; }
static uint64_t f_now(void *u) { return ((struct fake *)u)->now; }
static uint64_t f_unix(void *u) { return ((struct fake *)u)->unix_now; }
static void f_sleep(void *u, uint64_t us) { ((struct fake *)u)->now += us; }

static int f_wait_finished(void *u, uint64_t deadline_us, uint64_t *ret_total_us)
{
        struct fake *f = u;

        f->finish_deadline = deadline_us;
        *ret_total_us = 0;
        if (f->never_finishes) {
                f->now = deadline_us;
                return -ETIMEDOUT;
        }
        f->now += f->boot_us;
        *ret_total_us = f->boot_us;
        return 0;
}

static int f_rec_open(void *u, void **ret_rec, const char **ret_what, int *ret_lookups_err)
{
        (void)ret_what;
        *ret_rec = u;
        *ret_lookups_err = 0;
        return 0;
}

static int f_rec_start(void *u, void *rec)
{
        CHECK(rec == u);
        ((struct fake *)u)->tracing++;
        return 0;
}

/* what every boot reads: /a pages [0, 8), /b page 0 */
static int f_rec_finish(void *u, void *rec, struct readset **ret, uint64_t *ret_dropped)
{
        struct readset *rs = readset_new();
        struct rs_file *a, *b;

        CHECK(rec == u);
        ((struct fake *)u)->recorded++;
        a = readset_add_file(rs, "/a", 1, 10);
        a->size = 1 << 20;
        a->mtime_ns = 5;
        readset_file_add_range(a, 0, 8 * 4096, 100, RS_RANGE_ACCESSED);
        b = readset_add_file(rs, "/b", 1, 11);
        b->size = 4096;
        b->mtime_ns = 5;
        readset_file_add_range(b, 0, 4096, 10, RS_RANGE_ACCESSED);
        rs->page_size = 4096;
        *ret = rs;
        *ret_dropped = 0;
        return 0;
}

static int f_replay_start(void *u, const struct readset *plan, void **ret_job)
{
        struct fake *f = u;

        CHECK(plan != NULL);
        if (f->replay_err)
                return f->replay_err;
        *ret_job = f;
        return 0;
}

static int f_replay_wait(void *u, void *job, uint64_t deadline_us, struct start_replayed *ret)
{
        struct fake *f = u;

        CHECK(job == u);
        f->replayed++;
        f->replay_deadline = deadline_us;
        *ret = (struct start_replayed){ .bytes = 9 * 4096, .files = 2 };
        return 0;
}

static void f_say(void *u, enum boot_say_level level, const char *text)
{
        struct fake *f = u;
        size_t n = strlen(f->said);

        (void)level;
        snprintf(f->said + n, sizeof(f->said) - n, "%s\n", text);
}

static void env_of(struct fake *f, struct boot_env *env)
{
        *env = (struct boot_env){
                .sys = { .cmdline_off = f_cmdline_off, .notify_ready = f_notify, .wait_finished = f_wait_finished,
                         .now_us = f_now, .now_unix = f_unix, .sleep_us = f_sleep, .userdata = f },
                .rec = { .open = f_rec_open, .start = f_rec_start, .finish = f_rec_finish, .userdata = f },
                .replay = { .start = f_replay_start, .wait = f_replay_wait, .userdata = f },
                .say = f_say, .say_userdata = f,
        };
}

/* One boot of boot_s seconds: the mode it ran in */
static uint32_t boot(const char *dir, struct fake *f, double boot_s, struct boot_result *res)
{
        struct boot_session_args a = { .state = dir, .settle_ms = 100, .root = true };
        struct boot_env env;

        env_of(f, &env);
        f->boot_us = (uint64_t)(boot_s * 1e6);
        f->unix_now += 60;
        f->said[0] = 0;
        CHECK_EQ(boot_session(&a, &env, res), 0);
        CHECK_EQ(res->outcome, BOOT_RAN);
        return res->e.mode;
}

static void not_removed(void *userdata, const char *path, int err)
{
        (void)userdata;
        fprintf(stderr, "cannot remove '%s': %s\n", path, strerror(-err));
        CHECK(0);
}

/* A state directory of the test's own: in the build tree (as root, the
 * session refuses one below /tmp, which others can write) */
static void make_state(char *dir, struct boot_state *p)
{
        const char *base = getenv("BUILDDIR");

        snprintf(dir, PATH_MAX, "%s/readset-test-boot-session.XXXXXX", base ? base : "/tmp");
        CHECK(mkdtemp(dir) != NULL);
        boot_state_paths(dir, p);
        CHECK_EQ(boot_state_enable(p), 0);
}

static void remove_state(const struct boot_state *p)
{
        int dir_err;

        CHECK_EQ(boot_state_remove(p, not_removed, NULL, &dir_err), 0);
        CHECK_EQ(dir_err, 0);
}

/* the history file's modes, oldest first, as one string ("record plain ...") */
static void modes_in_file(const char *path, char *buf, size_t size)
{
        struct history h;
        unsigned bad = 0;
        size_t n = 0;

        buf[0] = 0;
        CHECK_EQ(history_load(path, &h, &bad), 0);
        CHECK_EQ(bad, 0u);
        for (size_t i = 0; i < h.n; i++)
                n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? " " : "", start_mode_name(h.e[i].mode));
}

/* where replay helps: record, trials between plain boots, kept on */
static void test_session_helps(void)
{
        char dir[PATH_MAX], modes[512];
        struct fake f = { .now = 1000000, .unix_now = 1700000000 };
        struct boot_state p;
        struct boot_result res;
        struct history h;
        unsigned bad;

        make_state(dir, &p);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_RECORD);
        CHECK(strstr(f.said, "this boot: record (no read set yet") != NULL);
        CHECK_EQ(f.notified, 1u);
        CHECK_EQ(f.recorded, 1u);
        CHECK_EQ(f.replayed, 0u);
        CHECK_EQ(res.merged, (size_t)1);
        CHECK(res.e.hit < 0);
        CHECK_EQ(res.e.total_us, 10000000u);
        CHECK(boot_state_has(p.plan) && boot_state_has(p.boot[0]));
        /* the bound asked of systemd: BOOT_MAX_S from the start */
        CHECK_EQ(f.finish_deadline, 1000000u + (uint64_t)BOOT_MAX_S * 1000000);

        CHECK_EQ(boot(dir, &f, 6.0, &res), START_REPLAY_RECORD);
        CHECK_EQ(f.replayed, 1u);
        CHECK_EQ(f.recorded, 2u);
        CHECK_EQ(res.e.replayed_bytes, 9u * 4096);
        CHECK(res.e.hit > 0.99);        /* the plan is what the boot read */
        CHECK_EQ(res.merged, (size_t)2);
        /* the replay was given its grace after the boot and the settling */
        CHECK_EQ(f.replay_deadline, f.now + BOOT_REPLAY_GRACE_US);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_PLAIN);
        CHECK_EQ(f.recorded, 2u);       /* a plain boot is measured only */
        CHECK_EQ(f.replayed, 1u);
        CHECK_EQ(boot(dir, &f, 6.2, &res), START_REPLAY_RECORD);
        CHECK_EQ(boot(dir, &f, 9.9, &res), START_PLAIN);   /* as many without replay as with it */
        CHECK_EQ(boot(dir, &f, 6.1, &res), START_REPLAY_RECORD);   /* judged: on */
        CHECK(strstr(res.e.note, "on: median") != NULL);
        CHECK_EQ(res.merged, (size_t)BOOT_KEEP);
        CHECK(!boot_state_has(p.stale));

        modes_in_file(p.history, modes, sizeof(modes));
        CHECK(strcmp(modes, "record replay+record plain replay+record plain replay+record") == 0);
        CHECK_EQ(history_load(p.history, &h, &bad), 0);
        CHECK_EQ(h.n, (size_t)6);
        CHECK_EQ(h.e[0].at_unix, 1700000060u);
        CHECK_EQ(h.e[2].total_us, 10000000u);
        CHECK_EQ(h.e[1].replayed_bytes, 9u * 4096);
        CHECK_EQ(h.e[1].files, 2u);
        CHECK(h.e[0].hit < 0 && h.e[1].hit > 0.99);
        CHECK(strstr(h.e[0].note, "no read set yet") != NULL);

        /* a stale mark: replayed and recorded anew, the older boots dropped */
        CHECK_EQ(boot_state_mark_stale(&p, "test upgrade"), 0);
        CHECK_EQ(boot(dir, &f, 6.0, &res), START_REPLAY_RECORD);
        CHECK(strstr(res.e.note, "test upgrade") != NULL);
        CHECK(!boot_state_has(p.stale));
        CHECK(!boot_state_has(p.boot[1]));
        CHECK_EQ(res.merged, (size_t)1);
        remove_state(&p);
}

/* where replay does not help: turned off after the trial, nothing
 * replayed or recorded while off */
static void test_session_off(void)
{
        char dir[PATH_MAX], modes[512];
        struct fake f = { .now = 1, .unix_now = 1700000000 };
        struct boot_state p;
        struct boot_result res;
        struct boot_status st;

        make_state(dir, &p);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_RECORD);
        CHECK_EQ(boot(dir, &f, 10.1, &res), START_REPLAY_RECORD);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_PLAIN);
        CHECK_EQ(boot(dir, &f, 9.9, &res), START_REPLAY_RECORD);
        CHECK_EQ(boot(dir, &f, 9.8, &res), START_PLAIN);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_OFF);
        CHECK(strstr(res.e.note, "did not help") != NULL);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_OFF);
        CHECK_EQ(f.recorded, 3u);
        CHECK_EQ(f.replayed, 2u);
        CHECK_EQ(f.tracing, 3u);
        CHECK_EQ(f.notified, 7u);
        CHECK_EQ(f.running, 7u);
        modes_in_file(p.history, modes, sizeof(modes));
        CHECK(strcmp(modes, "record replay+record plain replay+record plain off off") == 0);
        /* what boot status shows */
        CHECK_EQ(boot_state_status(&p, &st), 0);
        CHECK(st.enabled && st.have_plan && !st.stale);
        CHECK_EQ(st.h.n, (size_t)7);
        CHECK_EQ(st.d.mode, START_OFF);
        CHECK_EQ(st.t.files, 2u);
        remove_state(&p);
}

/* readset=off on the command line; not enabled; not root: systemd told,
 * nothing else */
static void test_session_nothing(void)
{
        char dir[PATH_MAX];
        struct fake f = { .now = 1, .cmdline_off = true };
        struct boot_session_args a = { .state = dir, .root = true };
        struct boot_state p;
        struct boot_result res;
        struct boot_env env;

        make_state(dir, &p);
        env_of(&f, &env);
        CHECK_EQ(boot_session(&a, &env, &res), 0);
        CHECK_EQ(res.outcome, BOOT_CMDLINE_OFF);
        CHECK_EQ(f.notified, 1u);
        CHECK(!boot_state_has(p.history));
        CHECK(!boot_state_has(p.lock));
        f.cmdline_off = false;
        a.root = false;
        CHECK_EQ(boot_session(&a, &env, &res), 0);
        CHECK_EQ(res.outcome, BOOT_NOT_ROOT);
        CHECK_EQ(unlink(p.enabled), 0);
        a.root = true;
        CHECK_EQ(boot_session(&a, &env, &res), 0);
        CHECK_EQ(res.outcome, BOOT_NOT_ENABLED);
        CHECK_EQ(f.notified, 3u);
        CHECK_EQ(f.running, 0u);        /* ready, but doing nothing */
        CHECK_EQ(f.recorded + f.tracing + f.replayed, 0u);
        CHECK(!boot_state_has(p.history));
        remove_state(&p);
}

/* systemd never says the boot finished: the recording ends at the bound,
 * the line says so, with no total */
static void test_session_never_finishes(void)
{
        char dir[PATH_MAX];
        struct fake f = { .now = 5, .unix_now = 1700000000 };
        struct boot_state p;
        struct boot_result res;
        struct history h;
        unsigned bad;

        make_state(dir, &p);
        f.never_finishes = true;
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_RECORD);
        CHECK_EQ(f.finish_deadline, 5u + (uint64_t)BOOT_MAX_S * 1000000);
        CHECK_EQ(res.e.total_us, 0u);
        CHECK(strstr(res.e.note, "the boot had not finished after 300 s") != NULL);
        CHECK_EQ(f.recorded, 1u);       /* what it recorded until then is kept */
        CHECK(boot_state_has(p.plan));
        CHECK_EQ(history_load(p.history, &h, &bad), 0);
        CHECK_EQ(h.n, (size_t)1);
        CHECK(strstr(h.e[0].note, "had not finished") != NULL);
        remove_state(&p);
}

/* a replay that will not start: the boot records only, and says so */
static void test_session_replay_fails(void)
{
        char dir[PATH_MAX];
        struct fake f = { .now = 1, .unix_now = 1700000000 };
        struct boot_state p;
        struct boot_result res;

        make_state(dir, &p);
        CHECK_EQ(boot(dir, &f, 10.0, &res), START_RECORD);
        f.replay_err = -ENOMEM;
        CHECK_EQ(boot(dir, &f, 6.0, &res), START_RECORD);
        CHECK(strstr(res.e.note, "not replayed: ") != NULL);
        CHECK(strstr(f.said, "this boot: replay+record") != NULL);
        CHECK(res.e.hit < 0);
        CHECK_EQ(f.replayed, 0u);
        remove_state(&p);
}

/* another session holds the lock: this one does nothing (but tell systemd) */
static void test_session_locked(void)
{
        char dir[PATH_MAX];
        struct fake f = { .now = 1 };
        struct boot_session_args a = { .state = dir, .root = true };
        struct boot_state p;
        struct boot_result res;
        struct boot_env env;
        int fd;

        make_state(dir, &p);
        env_of(&f, &env);
        fd = boot_state_lock(&p);
        CHECK(fd >= 0);
        CHECK_EQ(boot_session(&a, &env, &res), 0);
        CHECK_EQ(res.outcome, BOOT_LOCKED);
        CHECK_EQ(res.err, -EWOULDBLOCK);
        CHECK_EQ(f.notified, 1u);
        CHECK_EQ(f.recorded + f.tracing + f.replayed, 0u);
        CHECK(!boot_state_has(p.history));
        close(fd);
        remove_state(&p);
}

/* the boot's seconds from a line (--finished-from-stdin) */
static void test_parse_seconds(void)
{
        uint64_t us = 7;

        CHECK_EQ(boot_parse_seconds("2.5", &us), 0);
        CHECK_EQ(us, 2500000u);
        CHECK_EQ(boot_parse_seconds(" 12 \n", &us), 0);
        CHECK_EQ(us, 12000000u);
        CHECK_EQ(boot_parse_seconds("0.0000019", &us), 0);      /* past microseconds: cut */
        CHECK_EQ(us, 1u);
        CHECK_EQ(boot_parse_seconds("2.100", &us), 0);
        CHECK_EQ(us, 2100000u);
        CHECK(boot_parse_seconds("", &us) < 0);
        CHECK(boot_parse_seconds("0", &us) < 0);
        CHECK(boot_parse_seconds("-1", &us) < 0);
        CHECK(boot_parse_seconds(".5", &us) < 0);
        CHECK(boot_parse_seconds("1e3", &us) < 0);
        CHECK(boot_parse_seconds("2.5s", &us) < 0);
        CHECK(boot_parse_seconds("1000000", &us) < 0);
        CHECK(boot_parse_seconds("999999.9", &us) == 0);
}

int main(void)
{
        test_session_helps();
        test_session_off();
        test_session_nothing();
        test_session_never_finishes();
        test_session_replay_fails();
        test_session_locked();
        test_parse_seconds();
        TESTS_DONE();
}
