/* SPDX-License-Identifier: MIT */
#include "record/recorder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/builder.h"
#include "record/clientstats.h"
#include "record/lookups.h"
#include "record/paths.h"
#include "record/tracer.h"
#include "util/util.h"
#include "util/banned.h"

struct recorder {
        struct recorder_options opt;
        struct tracer *tracer;
        struct lookups *lookups;
        struct paths *paths;
        struct rs_builder *builder;
        int guardian;              /* our end of the guardian's pipe, -1 without one */
        int reaper;                /* our end of the reaper's pipe, -1 without one */
        int wake;                  /* eventfd: tells the drain thread to stop */
        atomic_bool stopping;      /* ... and so does this, should writing to it fail */
        pthread_t thread;
        bool thread_running, started;
        bool paths_later;          /* recorder_follow(): fanotify opened at the start */
        atomic_int drain_error;    /* fatal: the page events could not be read */
        uint64_t start_ns, end_ns;
        struct clientstats clients;  /* the network mounts' counters (opt.clients) */
        struct recorder_status st;
};

/* The guardian and the recorder's threads take no signal: those are for
 * the thread that stands in for the command. */
static void block_all_signals(void)
{
        sigset_t all;

        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
}

/* ---- the guardian -------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
        int x = *(const int *)a, y = *(const int *)b;
        return x < y ? -1 : x > y;
}

/* In a child forked beside other threads (readset auto's daemon): every
 * descriptor closed but the n of keep (sorted), by close_range(2) alone --
 * no /proc listed: a lock another thread held at the fork (the
 * allocator's) stays taken in the child, and opendir allocates. */
static void close_all_but(const int *keep, size_t n)
{
        unsigned from = 0;

        for (size_t i = 0; i < n; i++) {
                if (keep[i] < 0 || (unsigned)keep[i] < from)
                        continue;
                if ((unsigned)keep[i] > from)
                        (void)close_range(from, (unsigned)keep[i] - 1, 0);
                from = (unsigned)keep[i] + 1;
        }
        (void)close_range(from, ~0U, 0);
}

/* Fork a child tied to readset by a pipe: readset keeps the write end,
 * which closes on every exit, SIGKILL included; the child, its signals
 * blocked, keeps the read end and reads EOF then.  Returns the child's pid
 * (0 in the child) with *ret_fd the end this side keeps, or -errno. */
static pid_t fork_tied(int *ret_fd)
{
        int p[2];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int e = -errno;
                close(p[0]);
                close(p[1]);
                return e;
        }
        if (pid == 0) {
                block_all_signals();
                close(p[1]);
                *ret_fd = p[0];
                return 0;
        }
        close(p[0]);
        *ret_fd = p[1];
        return pid;
}

/* Wait for the EOF fork_tied()'s child reads when readset is gone. */
static void wait_untied(int fd)
{
        char c;

        while (read(fd, &c, 1) < 0 && errno == EINTR)
                ;
}

/* A process forked before anything is made in the kernel, holding nothing
 * but its pipe: when readset is gone (its end of the pipe closed, SIGKILL
 * included), it removes every readset tracefs instance whose owner is dead
 * and that no guardian holds.  It covers the milliseconds between the
 * instance's mkdir and the guardian's fork, where a SIGKILL used to leave
 * an instance (and its ring buffer) behind until the next recording.
 * Forked twice, so that init, not readset, reaps it. */
static int start_reaper(struct recorder *r)
{
        pid_t pid, parent = getpid();
        int fd, status;

        pid = fork_tied(&fd);
        if (pid < 0)
                return (int)pid;
        if (pid == 0) {
                setsid();
                /* its pipe as descriptor 3, nothing else (no /proc lookups:
                 * a system-wide recording would see them) */
                if (fd != 3 && (dup2(fd, 3) < 0 || close(fd) < 0))
                        _exit(1);
                (void)close_range(4, ~0U, 0);
                if (fork() != 0)
                        _exit(0);
                wait_untied(3);
                tracer_remove_stale_after(parent);
                _exit(0);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        r->reaper = fd;
        return 0;
}

/* A process forked once the tracefs instance and the BPF programs exist,
 * holding them too.  It waits until readset closes its end of a pipe, which
 * happens on every exit, SIGKILL included, and then removes them.  Removing
 * an instance and detaching BPF programs each wait for RCU grace periods
 * (~50 ms apiece here); the guardian does that off the critical path, after
 * readset has written the read set and returned.  It takes no signal but
 * SIGKILL: a signal for readset's command is not for it. */
static int start_guardian(struct recorder *r)
{
        int fd, keep[128];
        size_t n = r->lookups ? lookups_own_fds(r->lookups, keep, ARRAY_SIZE(keep) - 16) : 0;
        const char *instance = tracer_instance_path(r->tracer);
        int dirfd;
        pid_t pid;

        /* what it holds, known before the fork: its own instance's
         * descriptors and BPF objects, no other recorder's (readset auto
         * records several starts at once: a guardian that kept those would
         * hold them, attached and busy, for as long as it lives) */
        n += tracer_own_fds(r->tracer, keep + n, ARRAY_SIZE(keep) - 1 - n);
        qsort(keep, n, sizeof(*keep), cmp_int);
        dirfd = tracer_dir_fd(r->tracer);
        pid = fork_tied(&fd);
        if (pid < 0)
                return (int)pid;
        if (pid == 0) {
                size_t at = n;
                int null;

                setsid();   /* out of the terminal's process group */
                /* its pipe's end among them, in order */
                while (at > 0 && keep[at - 1] > fd) {
                        keep[at] = keep[at - 1];
                        at--;
                }
                keep[at] = fd;
                n++;
                close_all_but(keep, n);
                null = open("/dev/null", O_RDWR | O_CLOEXEC);
                for (int i = 0; null >= 0 && i < 3; i++) {
                        bool kept = false;
                        for (size_t k = 0; k < n; k++)
                                kept = kept || keep[k] == i;
                        if (!kept && i != null)
                                dup2(null, i);
                }
                wait_untied(fd);
                /* system calls alone (see close_all_but()); its BPF objects
                 * go with its descriptors as it exits */
                tracer_remove(instance, dirfd);
                _exit(0);
        }
        r->guardian = fd;
        /* recording every process, its lookups are not the system's */
        if (r->lookups && r->opt.pid == 0)
                (void)lookups_ignore(r->lookups, pid);
        return 0;
}

/* Stop tracing: with a guardian, drop our references and let it remove the
 * kernel objects (closing its pipe tells it to); without one, remove them
 * here.  Safe to call again. */
static void release_tracing(struct recorder *r)
{
        if (r->guardian >= 0) {
                tracer_forget(TAKE_PTR(r->tracer));
                lookups_close(TAKE_PTR(r->lookups));
                close(TAKE_FD(r->guardian));
        } else {
                tracer_close(TAKE_PTR(r->tracer));
                lookups_close(TAKE_PTR(r->lookups));
        }
}

/* ---- set-up ----------------------------------------------------------- */

struct bpf_job {
        const struct recorder_options *opt;
        struct lookups *l;
        uint64_t ns;
        int r;
};

static void *open_lookups_thread(void *arg)
{
        struct bpf_job *j = arg;
        uint64_t t0 = now_ns();

        /* (RECORDER_FOLLOW_LATER: nobody yet, its programs attached once
         * it follows someone) */
        j->r = lookups_open_as(&j->l, j->opt->pid == 0, j->opt->pid != RECORDER_FOLLOW_LATER);
        if (j->r >= 0 && j->opt->pid > 0) {
                j->r = lookups_follow(j->l, j->opt->pid);
                if (j->r < 0)
                        lookups_close(TAKE_PTR(j->l));
        }
        j->ns = now_ns() - t0;
        return NULL;
}

static int open_tracer(struct recorder *r, const char **ret_what)
{
        uint64_t t0 = now_ns();
        int e = tracer_open(&r->tracer, r->opt.buffer_kb, ret_what);

        if (e >= 0 && r->opt.pid == RECORDER_FOLLOW_LATER)
                ;       /* (recorder_follow()) */
        else if (e >= 0) {
                *ret_what = r->opt.pid > 0 ? "following the command's processes" : "leaving out readset's own";
                e = r->opt.pid > 0 ? tracer_follow(r->tracer, r->opt.pid) : tracer_exclude(r->tracer, getpid());
        }
        r->st.tracefs_ns = now_ns() - t0;
        return e;
}

int recorder_open(const struct recorder_options *o, struct recorder **ret, const char **ret_what)
{
        struct recorder *r = calloc(1, sizeof(*r));
        struct bpf_job bpf = { o, NULL, 0, 0 };
        pthread_t bpf_thread;
        bool bpf_started = false;
        const char *root;
        uint64_t t0 = now_ns();
        int e;

        *ret_what = "the recorder";
        if (!r)
                return -ENOMEM;
        r->opt = *o;
        r->guardian = r->wake = r->reaper = -1;
        *ret_what = "tracefs";
        e = tracer_tracefs_root(&root);       /* mounts tracefs if needed, before anything looks for it */
        if (e < 0)
                goto fail;
        tracer_remove_stale();
        *ret_what = "the reaper (fork)";
        e = start_reaper(r);
        if (e < 0)
                goto fail;
        *ret_what = "the recorder";
        r->builder = builder_new();
        r->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (!r->builder || r->wake < 0) {
                e = r->wake < 0 ? -errno : -ENOMEM;
                goto fail;
        }
        builder_set_limit(r->builder, o->max_events);
        /* (a recorder opened ahead watches opens only once it follows a
         * start: until then fanotify would queue every open on the machine) */
        *ret_what = "path resolution (fanotify)";
        e = paths_open(&r->paths, o->pid != RECORDER_FOLLOW_LATER);
        if (e < 0)
                goto fail;
        /* Loading the BPF programs and creating the tracefs instance each
         * take milliseconds of kernel work: side by side. */
        if (o->lookups && pthread_create(&bpf_thread, NULL, open_lookups_thread, &bpf) == 0)
                bpf_started = true;
        else if (o->lookups)
                open_lookups_thread(&bpf);
        e = open_tracer(r, ret_what);
        if (bpf_started)
                pthread_join(bpf_thread, NULL);
        r->lookups = TAKE_PTR(bpf.l);
        if (r->lookups && o->max_events)
                lookups_set_limit(r->lookups, o->max_events);
        r->st.bpf_ns = bpf.ns;
        /* pages are the read set; lookups a bonus, whose absence is said */
        r->st.lookups_error = o->lookups ? bpf.r : 0;
        if (e < 0)
                goto fail;
        *ret_what = "the guardian (fork)";
        e = start_guardian(r);
        if (e < 0)
                goto fail;
        r->st.open_ns = now_ns() - t0;
        *ret_what = NULL;
        *ret = r;
        return 0;
fail:
        recorder_free(r);
        return e;
}

int recorder_follow(struct recorder *r, pid_t pid)
{
        int e;

        if (r->opt.pid != RECORDER_FOLLOW_LATER || r->started || pid <= 0)
                return -EINVAL;
        if ((e = tracer_follow(r->tracer, pid)) < 0)
                return e;
        r->opt.pid = pid;
        r->paths_later = true;
        return 0;
}

/* ---- draining ------------------------------------------------------------ */

static int on_event(void *userdata, const struct rs_event *ev)
{
        return builder_add(userdata, ev);
}

/* One pass over the buffers.  Names and lookups are helpers: losing them
 * costs precision, never the recording. */
static int drain(struct recorder *r)
{
        int e = tracer_drain(r->tracer, on_event, r->builder);

        if (e < 0)
                return e;
        if (!r->st.paths_drain_error && (e = paths_drain(r->paths)) < 0)
                r->st.paths_drain_error = e;
        if (r->lookups && !r->st.lookups_drain_error && (e = lookups_drain(r->lookups)) < 0)
                r->st.lookups_drain_error = e;
        return 0;
}

static void *drain_thread(void *arg)
{
        struct recorder *r = arg;

        block_all_signals();
        for (;;) {
                /* wake every RECORDER_DRAIN_MS, or when told to stop: events
                 * queue in kernel buffers meanwhile */
                struct pollfd pfd = { .fd = r->wake, .events = POLLIN };
                int n = poll(&pfd, 1, RECORDER_DRAIN_MS);
                int e;

                if (n < 0 && errno != EINTR) {
                        atomic_store(&r->drain_error, -errno);
                        break;
                }
                if (n > 0 || atomic_load(&r->stopping))
                        break;      /* stop: recorder_stop drains the rest */
                e = drain(r);
                if (e < 0) {
                        atomic_store(&r->drain_error, e);
                        break;
                }
        }
        return NULL;
}

/* The network clients' counters, last thing before the start; the files
 * readset opens on those mounts to name them counted from now on (the
 * events of its own reads of the counters read first, uncounted: the
 * emulator answers its file without a request). */
static void clients_begin(struct recorder *r)
{
        if (!r->opt.clients || clientstats_begin(&r->clients) < 0)
                return;
        if (!r->clients.n)
                return;
        if (paths_drain(r->paths) < 0) {
                clientstats_free(&r->clients);
                return;
        }
        for (size_t i = 0; i < r->clients.n; i++)
                if (paths_count_opens(r->paths, r->clients.m[i].dev) < 0)
                        clientstats_free(&r->clients);  /* none rather than wrong */
}

static uint64_t own_opens(uint64_t dev, void *userdata)
{
        return paths_opens(userdata, dev);
}

int recorder_start(struct recorder *r)
{
        int e;

        clients_begin(r);
        r->start_ns = now_ns();
        e = tracer_start(r->tracer, r->start_ns);
        if (e < 0)
                return e;
        if (r->lookups)
                lookups_set_start(r->lookups, r->start_ns);
        /* followed once opened: opens watched from now on (marking every
         * file system took 5 ms, which the start's first reads do not wait
         * for) */
        if (r->paths_later) {
                struct paths *p = NULL;

                if (r->lookups && ((e = lookups_attach(r->lookups)) < 0 || (e = lookups_follow(r->lookups, r->opt.pid)) < 0)) {
                        lookups_close(TAKE_PTR(r->lookups));
                        r->st.lookups_error = e;
                }
                if (paths_open(&p, true) >= 0) {
                        paths_close(r->paths);
                        r->paths = p;
                }
                r->paths_later = false;
        }
        r->started = true;
        e = pthread_create(&r->thread, NULL, drain_thread, r);
        if (e != 0) {
                tracer_stop(r->tracer);
                r->started = false;
                return -e;
        }
        r->thread_running = true;
        return 0;
}

static void stop_thread(struct recorder *r)
{
        uint64_t one = 1;

        if (!r->thread_running)
                return;
        atomic_store(&r->stopping, true);
        if (write(r->wake, &one, sizeof(one)) != sizeof(one)) { /* the flag ends it within RECORDER_DRAIN_MS */ }
        pthread_join(r->thread, NULL);
        r->thread_running = false;
}

int recorder_stop(struct recorder *r)
{
        int e;

        if (!r->started)
                return -EINVAL;
        stop_thread(r);
        r->end_ns = now_ns();
        /* before anything of readset's own touches the mounts (the last
         * events' descriptors, the names resolved) */
        clientstats_end(&r->clients, own_opens, r->paths);
        tracer_stop(r->tracer);
        r->started = false;
        e = atomic_load(&r->drain_error);
        if (e < 0)
                return e;
        return drain(r);
}

/* ---- the read set --------------------------------------------------------- */

int recorder_finish(struct recorder *r, struct readset **ret)
{
        _cleanup_readset_ struct readset *rs = readset_new();
        uint64_t t = now_ns();
        int e;

        if (!rs)
                return -ENOMEM;
        if (r->started || !r->tracer)
                return -EINVAL;     /* stop first, and once */
        rs->lost_events = r->st.lost_events = tracer_lost(r->tracer);
        r->st.bad_lines = tracer_bad_lines(r->tracer);
        r->st.dropped_events = builder_n_dropped(r->builder);
        if (r->lookups) {
                rs->rec_flags |= RS_REC_LOOKUPS;
                e = lookups_finish(r->lookups, rs);
                if (e < 0)
                        return e;
        }
        /* our copies go; the guardian removes the kernel objects */
        release_tracing(r);
        r->st.lookups_ns = now_ns() - t;
        t = now_ns();
        e = paths_prepare(r->paths, r->builder, r->opt.max_walk);
        if (e < 0)
                return e;
        r->st.paths_ns = now_ns() - t;
        t = now_ns();
        e = builder_finish(r->builder, rs, (uint32_t)sysconf(_SC_PAGESIZE), paths_resolve, r->paths);
        if (e < 0)
                return e;
        r->st.build_ns = now_ns() - t;
        paths_get_stats(r->paths, &r->st.paths);
        e = clientstats_store(&r->clients, rs);
        if (e < 0)
                return e;
        rs->created_unix = (uint64_t)time(NULL);
        rs->duration_us = (r->end_ns - r->start_ns) / 1000;
        *ret = TAKE_PTR(rs);
        return 0;
}

void recorder_get_status(const struct recorder *r, struct recorder_status *ret)
{
        *ret = r->st;
}

void recorder_free(struct recorder *r)
{
        if (!r)
                return;
        stop_thread(r);
        if (r->started && r->tracer)
                tracer_stop(r->tracer);
        release_tracing(r);
        paths_close(r->paths);
        clientstats_free(&r->clients);
        builder_free(r->builder);
        if (r->wake >= 0)
                close(r->wake);
        if (r->reaper >= 0)
                close(r->reaper);
        free(r);
}

/* ---- set up beside the caller ------------------------------------------- */

struct recorder_setup {
        struct recorder_options opt;
        void (*ready)(void *userdata);
        void *userdata;
        struct recorder *rec;
        const char *what;
        int err;
        pthread_t thread;
};

static void *setup_thread(void *arg)
{
        struct recorder_setup *s = arg;

        block_all_signals();
        s->err = recorder_open(&s->opt, &s->rec, &s->what);
        if (s->err >= 0 && (s->err = recorder_start(s->rec)) < 0) {
                s->what = "tracing";
                recorder_free(TAKE_PTR(s->rec));
        }
        s->ready(s->userdata);
        return NULL;
}

int recorder_open_async(const struct recorder_options *o, void (*ready)(void *userdata), void *userdata,
                        struct recorder_setup **ret)
{
        struct recorder_setup *s = calloc(1, sizeof(*s));
        int e;

        if (!s)
                return -ENOMEM;
        *s = (struct recorder_setup){ .opt = *o, .ready = ready, .userdata = userdata };
        e = pthread_create(&s->thread, NULL, setup_thread, s);
        if (e != 0) {
                free(s);
                return -e;
        }
        *ret = s;
        return 0;
}

struct recorder *recorder_setup_wait(struct recorder_setup *s, int *ret_err, const char **ret_what)
{
        struct recorder *r;

        pthread_join(s->thread, NULL);
        r = s->rec;
        *ret_err = s->err;
        *ret_what = s->what;
        free(s);
        return r;
}
