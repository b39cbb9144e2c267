/* SPDX-License-Identifier: MIT */
#include "util/bounded.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

/* Before the caller's bytes: what the two processes say to each other. */
struct header {
        atomic_bool stop, done;
        int r;
        uint64_t pad;   /* the caller's bytes start 8-aligned */
};

static struct header *header_of(const void *shared)
{
        return (struct header *)((uint8_t *)shared - sizeof(struct header));
}

bool bounded_stopping(const void *shared)
{
        return atomic_load(&header_of(shared)->stop);
}

void bounded_free(void *shared, size_t shared_size)
{
        if (shared)
                munmap(header_of(shared), sizeof(struct header) + shared_size);
}

int bounded_run(int (*fn)(void *userdata, void *shared), void *userdata, size_t shared_size, uint64_t deadline_us,
                bool (*give_up)(void *userdata), void *give_up_userdata, uint64_t grace_us, void **ret_shared)
{
        size_t size = sizeof(struct header) + shared_size;
        struct header *h;
        uint64_t until = 0;
        pid_t parent = getpid(), pid;

        *ret_shared = NULL;
        h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (h == MAP_FAILED)
                return -ENOMEM;
        atomic_init(&h->stop, false);
        atomic_init(&h->done, false);
        fflush(NULL);   /* what is buffered is written once, by the caller */
        pid = fork();
        if (pid < 0) {
                int e = -errno;
                munmap(h, size);
                return e;
        }
        if (pid == 0) {
                sigset_t all;

                /* it ends with its caller; signals are the caller's to pass on */
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                sigfillset(&all);
                pthread_sigmask(SIG_BLOCK, &all, NULL);
                h->r = fn(userdata, h + 1);
                atomic_store(&h->done, true);
                fflush(NULL);
                _exit(0);
        }
        for (;;) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                int status;
                uint64_t now;

                if (waitpid(pid, &status, WNOHANG) == pid)
                        break;
                nanosleep(&ts, NULL);
                now = now_us();
                if (!until && ((deadline_us && now >= deadline_us) || (give_up && give_up(give_up_userdata)))) {
                        atomic_store(&h->stop, true);
                        until = now + grace_us;
                }
                if (until && now >= until) {
                        /* ended if it can be; not waited for, nor unmapped */
                        kill(pid, SIGKILL);
                        return -ETIMEDOUT;
                }
        }
        if (!atomic_load(&h->done)) {
                munmap(h, size);
                return -EINTR;
        }
        *ret_shared = h + 1;
        return h->r;
}
