/* SPDX-License-Identifier: MIT */
/* Work in a process of its own (util/bounded.h): its result and shared
 * bytes, the stop it is asked for, the child that never returns left
 * behind, a crash told from a terminal's signal.  No test here depends on
 * how fast anything runs: a deadline is either none, passed already, or
 * one that work which never returns cannot meet. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tests.h"
#include "util/bounded.h"
#include "util/util.h"

struct shared {
        int zero;
        char text[32];
};

/* Start fn, wait for it (no deadline unless given), free it. */
static int run(int (*fn)(void *, void *), void *userdata, uint64_t deadline_us, uint64_t grace_us, int *sig)
{
        struct bounded *b;
        int err = 0, r;

        b = bounded_start(fn, userdata, sizeof(struct shared), &err);
        CHECK(b != NULL);
        if (!b)
                return err;
        r = bounded_wait(b, deadline_us, NULL, NULL, grace_us, sig);
        bounded_free(b);
        return r;
}

static int answer(void *userdata, void *shared)
{
        struct shared *s = shared;

        (void)userdata;
        if (s->zero != 0)
                return -EBADMSG;
        snprintf(s->text, sizeof(s->text), "from the child");
        return 42;
}

static int fails(void *userdata, void *shared)
{
        (void)userdata;
        (void)shared;
        return -EIO;
}

static void test_result(void)
{
        struct bounded *b;
        int err = 0, sig = -1;

        b = bounded_start(answer, NULL, sizeof(struct shared), &err);
        CHECK(b != NULL);
        if (!b)
                return;
        CHECK_EQ(bounded_wait(b, 0, NULL, NULL, 0, &sig), 42);
        CHECK_EQ(sig, 0);
        CHECK(strcmp(((struct shared *)bounded_shared(b))->text, "from the child") == 0);
        bounded_free(b);
        CHECK_EQ(run(fails, NULL, 0, 0, &sig), -EIO);
}

/* It holds none of the caller's descriptors but 0, 1 and 2. */
static int holds_fd(void *userdata, void *shared)
{
        (void)shared;
        return fcntl(*(int *)userdata, F_GETFD) >= 0;
}

static void test_descriptors(void)
{
        int p[2], sig;

        CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
        CHECK_EQ(run(holds_fd, &p[1], 0, 0, &sig), 0);
        close(p[0]);
        close(p[1]);
}

/* Work that never returns, asked to stop or not: left. */
static int forever(void *userdata, void *shared)
{
        (void)userdata;
        (void)shared;
        for (;;)
                pause();
        return 0;
}

/* Work that stops when asked. */
static int until_stopped(void *userdata, void *shared)
{
        (void)userdata;
        while (!bounded_stopping(shared))
                usleep(1000);
        return -ECANCELED;
}

static void test_deadline(void)
{
        int sig;

        /* a deadline passed already: asked to stop, it does, within a grace
         * it cannot fail to meet */
        CHECK_EQ(run(until_stopped, NULL, now_us(), 3600ULL * 1000000, &sig), -ECANCELED);
        /* never returning: left, whatever the grace */
        CHECK_EQ(run(forever, NULL, now_us(), 0, &sig), -ETIMEDOUT);
        CHECK_EQ(run(forever, NULL, now_us() + 1000, 1000, &sig), -ETIMEDOUT);
}

/* The caller's give_up(): asked while waiting, it stops the work. */
static bool give_up_on_third(void *userdata)
{
        return ++*(int *)userdata >= 3;
}

static void test_give_up(void)
{
        struct bounded *b;
        int err = 0, sig, asked = 0;

        b = bounded_start(until_stopped, NULL, sizeof(struct shared), &err);
        CHECK(b != NULL);
        if (!b)
                return;
        CHECK_EQ(bounded_wait(b, 0, give_up_on_third, &asked, 3600ULL * 1000000, &sig), -ECANCELED);
        CHECK_EQ(asked, 3);
        bounded_free(b);
}

/* A step said, the caller's go awaited. */
static int steps(void *userdata, void *shared)
{
        (void)userdata;
        bounded_say_ready(shared);
        bounded_wait_go(shared);
        return bounded_stopping(shared) ? -ECANCELED : 7;
}

static bool go_when_ready(void *userdata)
{
        struct bounded *b = *(struct bounded **)userdata;

        if (bounded_ready(b))
                bounded_go(b);
        return false;
}

static void test_ready_go(void)
{
        struct bounded *b;
        int err = 0, sig;

        b = bounded_start(steps, NULL, sizeof(struct shared), &err);
        CHECK(b != NULL);
        if (!b)
                return;
        CHECK_EQ(bounded_wait(b, 0, go_when_ready, &b, 0, &sig), 7);
        CHECK(bounded_ready(b));
        bounded_free(b);
}

/* Done said, the rest is its own: the caller does not wait for its exit. */
static int done_then_slow(void *userdata, void *shared)
{
        (void)userdata;
        snprintf(((struct shared *)shared)->text, sizeof(((struct shared *)shared)->text), "final");
        bounded_say_done(shared, 5);
        bounded_wait_go(shared);
        return 6;
}

static void test_done_early(void)
{
        struct bounded *b;
        int err = 0, sig, p[2], out = dup(STDOUT_FILENO), errfd = dup(STDERR_FILENO);
        struct pollfd pf;

        /* the caller's stdout and stderr a pipe, as in run -- make 2>&1 | tee */
        CHECK(out >= 0 && errfd >= 0);
        CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
        CHECK_EQ(dup2(p[1], STDOUT_FILENO), STDOUT_FILENO);
        CHECK_EQ(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
        close(p[1]);
        b = bounded_start(done_then_slow, NULL, sizeof(struct shared), &err);
        CHECK(b != NULL);
        if (b)
                CHECK_EQ(bounded_wait(b, 0, NULL, NULL, 0, &sig), 5);
        fflush(NULL);
        dup2(out, STDOUT_FILENO);
        dup2(errfd, STDERR_FILENO);
        close(out);
        close(errfd);
        if (!b) {
                close(p[0]);
                return;
        }
        CHECK(strcmp(((struct shared *)bounded_shared(b))->text, "final") == 0);
        /* the child, done but not gone (it waits for the go), holds no end
         * of that pipe: whoever reads it sees its end now */
        pf = (struct pollfd){ p[0], POLLIN, 0 };
        CHECK_EQ(poll(&pf, 1, 0), 1);
        CHECK(pf.revents & POLLHUP);
        close(p[0]);
        bounded_go(b);   /* and now it may end */
        bounded_free(b);
}

/* A crash: -ECHILD and its signal; a terminal's signal: -EINTR. */
static int crashes(void *userdata, void *shared)
{
        struct rlimit none = { 0, 0 };

        (void)userdata;
        (void)shared;
        setrlimit(RLIMIT_CORE, &none);  /* no core file left behind */
        abort();
}

static int terminated(void *userdata, void *shared)
{
        sigset_t term;

        (void)userdata;
        (void)shared;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigprocmask(SIG_UNBLOCK, &term, NULL);
        raise(SIGTERM);
        return 0;
}

static void test_signals(void)
{
        int sig = 0;

        CHECK_EQ(run(crashes, NULL, 0, 0, &sig), -ECHILD);
        CHECK_EQ(sig, SIGABRT);
        CHECK_EQ(run(terminated, NULL, 0, 0, &sig), -EINTR);
        CHECK_EQ(sig, 0);
}

int main(void)
{
        /* a wait that does not end fails the test */
        alarm(600);
        test_result();
        test_descriptors();
        test_deadline();
        test_give_up();
        test_ready_go();
        test_done_early();
        test_signals();
        TESTS_DONE();
}
