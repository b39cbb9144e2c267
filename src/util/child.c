/* SPDX-License-Identifier: MIT */
#include "util/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/signals.h"
#include "util/util.h"
#include "util/banned.h"

/* The handler's state: the one child being stood in for. */
static const int passed_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static volatile sig_atomic_t pass_fd = -1, pass_pid, session_leader, passed_on;

/* A signal from the terminal (SI_KERNEL) reached the command's process
 * group already: many programs take a second ^C as "quit now".  A hangup is
 * the exception when readset leads the session.  A signal to the whole
 * process group or cgroup arrives twice: readset cannot tell it from one
 * sent to it alone (docs/DECISIONS.md). */
static void pass_on(int sig, siginfo_t *si, void *ctx)
{
        int saved = errno;
        long r = -1;

        (void)ctx;
        if (si->si_code == SI_KERNEL && !(sig == SIGHUP && session_leader))
                goto out;
        if (pass_fd >= 0)
                r = syscall(SYS_pidfd_send_signal, (int)pass_fd, sig, NULL, 0);
        else if (pass_pid > 0)       /* no pidfd (seccomp, old kernel): by PID while not reaped */
                r = kill((pid_t)pass_pid, sig);
        if (r == 0)
                passed_on = 1;
out:
        errno = saved;
}

/* Called with the signals blocked; a signal readset was started ignoring
 * stays ignored (the command inherited that). */
static void start_passing(struct child *c)
{
        struct sigaction sa = { .sa_sigaction = pass_on, .sa_flags = SA_SIGINFO | SA_RESTART };

        pass_fd = c->pidfd;
        pass_pid = c->pid;
        passed_on = 0;
        session_leader = getsid(0) == getpid();
        signals_install(passed_signals, ARRAY_SIZE(passed_signals), &sa, true);
}

static void stop_passing(void)
{
        struct sigaction sa = { .sa_handler = SIG_DFL }, old;

        pass_fd = -1;
        pass_pid = 0;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ARRAY_SIZE(passed_signals); i++)
                if (sigaction(passed_signals[i], NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO) &&
                    old.sa_sigaction == pass_on)
                        (void)sigaction(passed_signals[i], &sa, NULL);
}

static void close_pair(int p[2])
{
        if (p[0] >= 0)
                close(p[0]);
        if (p[1] >= 0)
                close(p[1]);
}

int child_start(struct child *c, char **argv, bool gated)
{
        int gate[2] = { -1, -1 }, err[2] = { -1, -1 };
        sigset_t block, oldmask;
        int e;

        *c = (struct child){ .pid = -1, .pidfd = -1, .gate = -1, .errpipe = -1 };
        if ((gated && pipe2(gate, O_CLOEXEC) < 0) || pipe2(err, O_CLOEXEC) < 0) {
                e = -errno;
                close_pair(gate);
                return e;
        }
        sigemptyset(&block);
        for (size_t i = 0; i < ARRAY_SIZE(passed_signals); i++)
                sigaddset(&block, passed_signals[i]);
        sigprocmask(SIG_BLOCK, &block, &oldmask);
        c->pid = fork();
        if (c->pid == 0) {
                char x;
                ssize_t k;

                close(err[0]);
                if (gated) {
                        close(gate[1]);
                        do
                                k = read(gate[0], &x, 1);
                        while (k < 0 && errno == EINTR);
                        if (k != 1)
                                _exit(127);     /* readset is gone: never run unrecorded by surprise */
                }
                /* the command gets the signal mask and dispositions readset was started with */
                sigprocmask(SIG_SETMASK, &oldmask, NULL);
                execvp(argv[0], argv);
                e = errno;
                if (write(err[1], &e, sizeof(e)) < 0) { /* nothing more to do */ }
                _exit(e == ENOENT ? 127 : 126);
        }
        e = c->pid < 0 ? -errno : 0;
        if (gated)
                close(gate[0]);
        close(err[1]);
        if (e < 0) {
                sigprocmask(SIG_SETMASK, &oldmask, NULL);
                if (gated)
                        close(gate[1]);
                close(err[0]);
                c->pid = -1;
                return e;
        }
        c->gate = gated ? gate[1] : -1;
        c->errpipe = err[0];
        c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
        start_passing(c);
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        return 0;
}

int child_release(struct child *c)
{
        int fd = TAKE_FD(c->gate), e = 0;

        if (fd < 0)
                return 0;
        if (write(fd, "x", 1) != 1)
                e = -errno;
        close(fd);
        return e;
}

/* Reaped: its PID may be anyone's now (the pidfd still names the one
 * that was, so that a late signal reaches nobody). */
static void reaped(struct child *c)
{
        c->exited = true;
        pass_pid = 0;
}

bool child_done(struct child *c)
{
        if (!c->exited && c->pid > 0 && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
                reaped(c);
        return c->exited;
}

int child_wait(struct child *c)
{
        while (!c->exited) {
                if (waitpid(c->pid, &c->status, 0) == c->pid)
                        reaped(c);
                else if (errno != EINTR)
                        return -errno;
        }
        return 0;
}

int child_exit_code(struct child *c, int *ret_exec_errno)
{
        int e = 0;

        if (c->errpipe >= 0 && read(c->errpipe, &e, sizeof(e)) != sizeof(e))
                e = 0;
        if (ret_exec_errno)
                *ret_exec_errno = e;
        if (e)
                return e == ENOENT ? 127 : 126;
        return WIFEXITED(c->status) ? WEXITSTATUS(c->status) : WIFSIGNALED(c->status) ? 128 + WTERMSIG(c->status) : 1;
}

bool child_signal_passed_on(void)
{
        return passed_on;
}

bool child_cut_short(const struct child *c)
{
        int s = c->status;

        return passed_on || WIFSIGNALED(s) ||
               (WIFEXITED(s) && WEXITSTATUS(s) > 128 && WEXITSTATUS(s) < 128 + SIGRTMAX + 1);
}

void child_kill(struct child *c)
{
        if (c->pid <= 0 || c->exited)
                return;
        if (c->gate >= 0)
                close(TAKE_FD(c->gate));   /* a command still gated never runs: it exits 127 */
        kill(c->pid, SIGKILL);
        while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
                ;
        reaped(c);
}

void child_close(struct child *c)
{
        stop_passing();
        if (c->gate >= 0)
                close(TAKE_FD(c->gate));
        if (c->errpipe >= 0)
                close(TAKE_FD(c->errpipe));
        if (c->pidfd >= 0)
                close(TAKE_FD(c->pidfd));
}

int child_detach(bool *ret_parent)
{
        pid_t pid = fork();
        int null;

        if (pid < 0)
                return -errno;
        *ret_parent = pid > 0;
        if (pid > 0)
                return 0;
        setsid();
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
        }
        if (chdir("/") < 0) { /* nothing depends on the directory */ }
        return 0;
}

/* argv started, its stdin /dev/null, its stdout out_fd (-1: /dev/null),
 * its stderr readset's unless quiet: its pid, or -errno. */
static pid_t spawn(char *const *argv, int out_fd, bool quiet)
{
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null >= 0) {
                        dup2(null, 0);
                        dup2(out_fd >= 0 ? out_fd : null, 1);
                        if (quiet)
                                dup2(null, 2);
                }
                execvp(argv[0], argv);
                _exit(127);
        }
        return pid;
}

/* A wait status as child_run() returns it. */
static int run_status(int status)
{
        if (WIFEXITED(status))
                return WEXITSTATUS(status) == 127 ? -ENOENT : WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
}

int child_run_watched(char *const *argv, bool quiet, void (*tick)(void *userdata, pid_t pid), void *userdata)
{
        pid_t pid = spawn(argv, -1, quiet), w;
        int status;

        if (pid < 0)
                return pid;
        for (;;) {
                w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        return run_status(status);
                if (w < 0 && errno != EINTR)
                        return -errno;
                tick(userdata, pid);
                usleep(50000);
        }
}

int child_run(char *const *argv, char *out, size_t out_size, bool quiet, uint64_t deadline_us)
{
        int p[2] = { -1, -1 }, status, e = 0;
        size_t n = 0;
        pid_t pid;

        if (out && pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = spawn(argv, out ? p[1] : -1, quiet);
        if (pid < 0) {
                e = pid;
                if (out) {
                        close(p[0]);
                        close(p[1]);
                }
                return e;
        }
        if (out) {
                close(p[1]);
                /* to its end (EOF), or the deadline */
                for (;;) {
                        struct pollfd pf = { .fd = p[0], .events = POLLIN };
                        ssize_t k;
                        if (deadline_us && now_us() >= deadline_us)
                                break;
                        if (poll(&pf, 1, 50) <= 0)
                                continue;
                        k = read(p[0], out + n, out_size - 1 - n);
                        if (k <= 0 && !(k < 0 && errno == EINTR))
                                break;
                        if (k > 0)
                                n += (size_t)k;
                        if (n == out_size - 1)
                                break;
                }
                out[n] = 0;
                close(p[0]);
        }
        for (;;) {
                pid_t w = waitpid(pid, &status, deadline_us ? WNOHANG : 0);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return -errno;
                if (deadline_us && now_us() >= deadline_us) {
                        kill(pid, SIGKILL);
                        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                                ;
                        return -ETIMEDOUT;
                }
                if (w == 0)
                        usleep(50000);
        }
        return run_status(status);
}
