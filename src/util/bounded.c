/* SPDX-License-Identifier: MIT */
#include "util/bounded.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

/* How often the caller looks, waiting: at the clock and give_up(); once it
 * asked the child to stop, more often. */
#define POLL_MS 10
#define POLL_STOPPING_MS 1

/* Before the caller's bytes: what the two processes say to each other. */
struct header {
        atomic_bool stop, done, ready, go;
        int r;
        uint64_t pad;   /* the caller's bytes start 8-aligned */
};

struct bounded {
        struct header *h;
        size_t size;
        pid_t pid;
        int pidfd;
        int watch_fd;           /* readable: ask give_up() at once (-1: none) */
};

static struct header *header_of(const void *shared)
{
        return (struct header *)((uint8_t *)shared - sizeof(struct header));
}

bool bounded_stopping(const void *shared) { return atomic_load(&header_of(shared)->stop); }
void bounded_say_ready(void *shared) { atomic_store(&header_of(shared)->ready, true); }

/* In the child: its descriptors from fd to last on /dev/null.  It reads
 * nothing and writes only messages (libbpf's with READSET_DEBUG, a
 * sanitizer's), and a descriptor it holds of a pipe the caller's output
 * goes to keeps whoever reads that pipe waiting until the child is gone
 * (readset run -- make 2>&1 | tee: until the replay's process has torn
 * its BPF program down, some 70 ms after make ended, or, on a share that
 * stopped answering, longer). */
static void drop_stdio(int fd, int last)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (null < 0)
                return;
        for (; fd <= last; fd++)
                (void)dup2(null, fd);
        if (null > 2)
                close(null);
}

void bounded_say_done(void *shared, int r)
{
        /* nothing it does from now on is anyone's to read */
        drop_stdio(STDERR_FILENO, STDERR_FILENO);
        header_of(shared)->r = r;
        atomic_store(&header_of(shared)->done, true);
}
bool bounded_ready(struct bounded *b) { return atomic_load(&b->h->ready); }
void bounded_go(struct bounded *b) { atomic_store(&b->h->go, true); }
void *bounded_shared(struct bounded *b) { return b->h + 1; }

void bounded_wait_go(const void *shared)
{
        const struct header *h = header_of(shared);

        while (!atomic_load(&h->go) && !atomic_load(&h->stop)) {
                struct timespec ts = { 0, 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

struct bounded *bounded_start(int (*fn)(void *userdata, void *shared), void *userdata, size_t shared_size,
                              int *ret_err)
{
        struct bounded *b = calloc(1, sizeof(*b));
        pid_t parent = getpid();

        if (!b) {
                *ret_err = -ENOMEM;
                return NULL;
        }
        b->size = sizeof(struct header) + shared_size;
        b->h = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (b->h == MAP_FAILED) {
                *ret_err = -errno;
                free(b);
                return NULL;
        }
        fflush(NULL);   /* what is buffered is written once, by the caller */
        b->pid = fork();
        if (b->pid < 0) {
                *ret_err = -errno;
                munmap(b->h, b->size);
                free(b);
                return NULL;
        }
        if (b->pid == 0) {
                sigset_t all;
                int r;

                /* it ends with its caller; signals are the caller's to pass
                 * on; no descriptor of the caller's stays open in it */
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                /* alone now: a stream another thread of the caller held
                 * locked as it forked stays locked here for good (fork()
                 * resets only stdio's list), so these are used unlocked,
                 * and no other is flushed */
                __fsetlocking(stdout, FSETLOCKING_BYCALLER);
                __fsetlocking(stderr, FSETLOCKING_BYCALLER);
                sigfillset(&all);
                sigdelset(&all, SIGSEGV);
                sigdelset(&all, SIGBUS);
                sigdelset(&all, SIGABRT);
                pthread_sigmask(SIG_BLOCK, &all, NULL);
                (void)close_range(3, ~0U, 0);
                drop_stdio(STDIN_FILENO, STDOUT_FILENO);        /* its stderr stays until it is done */
                r = fn(userdata, b->h + 1);
                if (!atomic_load(&b->h->done))
                        bounded_say_done(b->h + 1, r);
                fflush(stdout);
                fflush(stderr);
                _exit(0);
        }
        b->pidfd = (int)syscall(SYS_pidfd_open, b->pid, 0);
        b->watch_fd = -1;
        return b;
}

int bounded_wait(struct bounded *b, uint64_t deadline_us, bool (*give_up)(void *userdata), void *give_up_userdata,
                 uint64_t grace_us, int *ret_signal)
{
        uint64_t until = 0;
        int status = 0;

        *ret_signal = 0;
        for (;;) {
                uint64_t now;

                if (waitpid(b->pid, &status, WNOHANG) == b->pid)
                        break;
                /* its results are final: what is left is its exit, which
                 * its own teardown may make slow (releasing BPF programs
                 * waits for RCU grace periods); it ends alone */
                if (atomic_load(&b->h->done))
                        return b->h->r;
                if (b->pidfd >= 0) {
                        /* readable when it ends (or when what give_up()
                         * watches does): no 10 ms lost on every replay */
                        struct pollfd p[2] = { { b->pidfd, POLLIN, 0 }, { b->watch_fd, POLLIN, 0 } };
                        (void)poll(p, b->watch_fd >= 0 ? 2 : 1, until ? POLL_STOPPING_MS : POLL_MS);
                } else {
                        struct timespec ts = { 0, (until ? POLL_STOPPING_MS : POLL_MS) * 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
                if (atomic_load(&b->h->done))
                        continue;
                now = now_us();
                if (!until && ((deadline_us && now >= deadline_us) || (give_up && give_up(give_up_userdata)))) {
                        atomic_store(&b->h->stop, true);
                        until = now + grace_us;
                }
                if (until && now >= until && !atomic_load(&b->h->done)) {
                        /* ended if it can be; not waited for */
                        kill(b->pid, SIGKILL);
                        return -ETIMEDOUT;
                }
        }
        if (atomic_load(&b->h->done))
                return b->h->r;
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
                        return -EINTR;
                *ret_signal = sig;
        }
        return -ECHILD;
}

void bounded_watch_fd(struct bounded *b, int fd) { b->watch_fd = fd; }

void bounded_free(struct bounded *b)
{
        if (!b)
                return;
        if (b->pidfd >= 0)
                close(b->pidfd);
        munmap(b->h, b->size);   /* (a child left running keeps its own mapping) */
        free(b);
}
