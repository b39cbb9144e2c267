/* SPDX-License-Identifier: MIT */
/* The command readset runs (util/child.h): its exit status passed on as a
 * shell would, the gate, the signals readset gets passed on, and the
 * helper programs run to their end or a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "util/child.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-child.XXXXXX";

/* Run argv to its end; its exit code as child_exit_code() gives it. */
static int run(char **argv, bool gated, int *exec_errno)
{
        struct child c;
        int code;

        CHECK_EQ(child_start(&c, argv, gated), 0);
        if (gated)
                CHECK_EQ(child_release(&c), 0);
        CHECK_EQ(child_wait(&c), 0);
        CHECK(child_done(&c));
        code = child_exit_code(&c, exec_errno);
        child_close(&c);
        return code;
}

static void test_exit_status(void)
{
        char *ok[] = { (char *)"sh", (char *)"-c", (char *)"exit 0", NULL };
        char *three[] = { (char *)"sh", (char *)"-c", (char *)"exit 3", NULL };
        char *term[] = { (char *)"sh", (char *)"-c", (char *)"kill -TERM $$", NULL };
        struct child c;
        int e = -1;

        CHECK_EQ(run(ok, false, &e), 0);
        CHECK_EQ(e, 0);
        CHECK_EQ(run(three, false, NULL), 3);
        CHECK_EQ(run(three, true, NULL), 3);
        /* 128 + the signal that ended it, and cut short */
        CHECK_EQ(child_start(&c, term, false), 0);
        CHECK_EQ(child_wait(&c), 0);
        CHECK_EQ(child_exit_code(&c, NULL), 128 + SIGTERM);
        CHECK(child_cut_short(&c));
        CHECK(!child_signal_passed_on());
        child_close(&c);
}

/* A shell's way of saying a signal ended what it ran: 128 + N, but 255. */
static void test_cut_short(void)
{
        char *e130[] = { (char *)"sh", (char *)"-c", (char *)"exit 130", NULL };
        char *e255[] = { (char *)"sh", (char *)"-c", (char *)"exit 255", NULL };
        char *e1[] = { (char *)"sh", (char *)"-c", (char *)"exit 1", NULL };
        struct child c;

        CHECK_EQ(child_start(&c, e130, false), 0);
        CHECK_EQ(child_wait(&c), 0);
        CHECK(child_cut_short(&c));
        child_close(&c);
        CHECK_EQ(child_start(&c, e255, false), 0);
        CHECK_EQ(child_wait(&c), 0);
        CHECK_EQ(child_exit_code(&c, NULL), 255);
        CHECK(!child_cut_short(&c));
        child_close(&c);
        CHECK_EQ(child_start(&c, e1, false), 0);
        CHECK_EQ(child_wait(&c), 0);
        CHECK(!child_cut_short(&c));
        child_close(&c);
}

/* 127 not found, 126 not executable, with the reason. */
static void test_exec_fails(void)
{
        char p[128];
        char *missing[] = { p, NULL };
        char *noexec[] = { p, NULL };
        int fd, e = 0;

        snprintf(p, sizeof(p), "%s/none", dir);
        CHECK_EQ(run(missing, false, &e), 127);
        CHECK_EQ(e, ENOENT);
        snprintf(p, sizeof(p), "%s/noexec", dir);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        if (fd >= 0)
                close(fd);
        /* root may run what has no x bit for it only if someone may: nobody here */
        CHECK_EQ(run(noexec, false, &e), 126);
        CHECK_EQ(e, EACCES);
        unlink(p);
}

/* Gated: nothing runs before the release; closed, never at all. */
static void test_gate(void)
{
        char script[256], marker[128];
        char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
        struct child c;

        snprintf(marker, sizeof(marker), "%s/ran", dir);
        snprintf(script, sizeof(script), "echo > %s", marker);
        CHECK_EQ(child_start(&c, argv, true), 0);
        CHECK(!child_done(&c));
        CHECK_EQ(access(marker, F_OK), -1);
        CHECK_EQ(child_release(&c), 0);
        CHECK_EQ(child_wait(&c), 0);
        CHECK_EQ(child_exit_code(&c, NULL), 0);
        CHECK_EQ(access(marker, F_OK), 0);
        child_close(&c);
        unlink(marker);

        /* the gate closed (readset gone): 127, it never ran */
        CHECK_EQ(child_start(&c, argv, true), 0);
        child_close(&c);
        CHECK_EQ(child_wait(&c), 0);
        CHECK_EQ(child_exit_code(&c, NULL), 127);
        CHECK_EQ(access(marker, F_OK), -1);

        /* killed while gated */
        CHECK_EQ(child_start(&c, argv, true), 0);
        child_kill(&c);
        CHECK(child_done(&c));
        child_close(&c);
        CHECK_EQ(access(marker, F_OK), -1);
}

/* A signal readset gets (not the terminal's) reaches the command; once
 * closed, readset's own disposition is back.  The signal is sent once the
 * command runs (it says so by a file): under valgrind, one that reaches the
 * child between its fork and its exec can be lost. */
static void test_signal_passed_on(void)
{
        char marker[128], script[256];
        char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
        struct sigaction sa;
        struct child c;

        snprintf(marker, sizeof(marker), "%s/running", dir);
        snprintf(script, sizeof(script), "echo > %s; exec sleep 100000", marker);
        CHECK_EQ(child_start(&c, argv, false), 0);
        while (access(marker, F_OK) < 0 && !child_done(&c))
                usleep(1000);
        CHECK_EQ(raise(SIGTERM), 0);
        CHECK(child_signal_passed_on());
        CHECK_EQ(child_wait(&c), 0);
        CHECK_EQ(child_exit_code(&c, NULL), 128 + SIGTERM);
        CHECK(child_cut_short(&c));
        child_close(&c);
        CHECK_EQ(sigaction(SIGTERM, NULL, &sa), 0);
        CHECK(sa.sa_handler == SIG_DFL);
        unlink(marker);
}

/* A signal readset was started ignoring stays ignored, and is not passed. */
static void test_ignored_stays(void)
{
        char *argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 0", NULL };
        struct sigaction sa;
        struct child c;

        signal(SIGHUP, SIG_IGN);
        CHECK_EQ(child_start(&c, argv, false), 0);
        CHECK_EQ(sigaction(SIGHUP, NULL, &sa), 0);
        CHECK(sa.sa_handler == SIG_IGN);
        CHECK_EQ(child_wait(&c), 0);
        child_close(&c);
        signal(SIGHUP, SIG_DFL);
}

static void test_run(void)
{
        char *echo[] = { (char *)"sh", (char *)"-c", (char *)"echo hello; exit 4", NULL };
        char *missing[] = { (char *)"/nonexistent/readset-helper", NULL };
        char *forever[] = { (char *)"sleep", (char *)"100000", NULL };
        char *shorter[] = { (char *)"sh", (char *)"-c", (char *)"echo abcdefgh", NULL };
        char out[64], small[4];

        CHECK_EQ(child_run(echo, out, sizeof(out), true, 0), 4);
        CHECK(strcmp(out, "hello\n") == 0);
        CHECK_EQ(child_run(echo, NULL, 0, true, 0), 4);
        CHECK_EQ(child_run(missing, out, sizeof(out), true, 0), -ENOENT);
        /* cut to fit */
        CHECK_EQ(child_run(shorter, small, sizeof(small), true, 0), 0);
        CHECK(strcmp(small, "abc") == 0);
        /* past its deadline: killed */
        CHECK_EQ(child_run(forever, NULL, 0, true, now_us() + 100000), -ETIMEDOUT);
        CHECK_EQ(child_run(forever, out, sizeof(out), true, now_us() + 100000), -ETIMEDOUT);
}

/* Watched: told while it runs (here the tick ends it), its status. */
static void stop_it(void *userdata, pid_t pid)
{
        (*(unsigned *)userdata)++;
        kill(pid, SIGTERM);
}

static void count(void *userdata, pid_t pid)
{
        (void)pid;
        (*(unsigned *)userdata)++;
}

static void test_run_watched(void)
{
        char *forever[] = { (char *)"sleep", (char *)"100000", NULL };
        char *four[] = { (char *)"sh", (char *)"-c", (char *)"exit 4", NULL };
        char *missing[] = { (char *)"/nonexistent/readset-helper", NULL };
        unsigned ticks = 0, none = 0;

        CHECK_EQ(child_run_watched(forever, true, stop_it, &ticks), 128 + SIGTERM);
        CHECK(ticks >= 1);
        CHECK_EQ(child_run_watched(missing, true, count, &none), -ENOENT);
        CHECK_EQ(child_run_watched(four, true, count, &none), 4);
}

/* Detached: a session of its own, in /, no terminal. */
static void test_detach(void)
{
        int p[2], status = 0;
        bool parent = true;
        char got[2] = { 0 };
        pid_t pid;

        CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
        pid = getpid();
        CHECK_EQ(child_detach(&parent), 0);
        if (!parent) {
                char cwd[PATH_MAX];
                char r[2] = { getsid(0) == getpid() && getpid() != pid ? 's' : '-',
                              getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") == 0 ? '/' : '-' };
                if (write(p[1], r, 2) < 0) { /* the parent's check fails */ }
                _exit(0);
        }
        close(p[1]);
        CHECK_EQ(read_full(p[0], got, 2), 2);
        CHECK(got[0] == 's');
        CHECK(got[1] == '/');
        close(p[0]);
        /* (its own child still, to reap) */
        while (waitpid(-1, &status, 0) < 0 && errno == EINTR)
                ;
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        /* a command that was not ended as it should fails the test */
        alarm(600);
        test_exit_status();
        test_cut_short();
        test_exec_fails();
        test_gate();
        test_signal_passed_on();
        test_ignored_stays();
        test_run();
        test_run_watched();
        test_detach();
        rmdir(dir);
        TESTS_DONE();
}
