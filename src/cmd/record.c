/* SPDX-License-Identifier: MIT */
/* readset record: run a command and record the read set of its start. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "cmd/cmd.h"
#include "model/format.h"
#include "record/lookups.h"
#include "record/paths.h"
#include "model/readset.h"
#include "record/builder.h"
#include "record/tracer.h"
#include "util/util.h"
#include "util/banned.h"

#define DEFAULT_BUFFER_KB 2048
#define DEFAULT_MAX_WALK 2000000
#define DRAIN_MS 25

static void record_help(void)
{
        printf("usage: readset record [OPTIONS] -- CMD [ARGS...]\n"
               "\n"
               "Run CMD and record every file page it and its descendants access\n"
               "(read(2), mmap faults) or bring into the page cache, the filesystem\n"
               "metadata read for them, and the path lookups they make.  Needs root.\n"
               "Exits with CMD's exit status.\n"
               "\n"
               "options:\n"
               "  -o, --output FILE      where to write the read set (default: CMD.readset)\n"
               "      --cold             drop the page cache first (sync; drop_caches)\n"
               "      --buffer-size KB   trace buffer per CPU (default %d)\n"
               "      --no-lookups       do not trace path lookups (open, stat, ...)\n"
               "      --max-walk N       directory entries the fallback path search may\n"
               "                         visit (default %d)\n"
               "  -q, --quiet            no summary on stderr\n"
               "      --fallback-run     if tracing cannot be set up, run CMD unrecorded\n"
               "                         (readset run --stats/--auto use this)\n"
               "  -h, --help             show this help\n",
               DEFAULT_BUFFER_KB, DEFAULT_MAX_WALK);
}

struct rec_ctx {
        struct rs_builder *builder;
};

static int on_event(void *userdata, const struct rs_event *ev)
{
        struct rec_ctx *c = userdata;
        return builder_add(c->builder, ev);
}

/* The guardian: a process forked once the tracefs instance and the BPF
 * programs exist, holding them too.  It waits until readset closes its end of
 * a pipe, which happens on every exit, SIGKILL included, and then removes
 * them.  Removing an instance and detaching BPF programs each wait for RCU
 * grace periods (~50 ms apiece here); the guardian does that off the critical
 * path, after readset has written the read set and returned. */
static int start_guardian(struct tracer *t, struct lookups *l, const int *close_fds, size_t n_close)
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
                int null;
                char c;

                close(p[1]);
                setsid();   /* out of the terminal's process group: Ctrl-C is not for us */
                for (size_t i = 0; i < n_close; i++)
                        if (close_fds[i] >= 0)
                                close(close_fds[i]);
                null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null >= 0) {
                        dup2(null, 0);
                        dup2(null, 1);
                        dup2(null, 2);
                }
                while (read(p[0], &c, 1) < 0 && errno == EINTR)
                        ;
                tracer_close(t);
                lookups_close(l);
                _exit(0);
        }
        close(p[0]);
        return p[1];
}

/* Stop tracing: with a guardian, drop our references and let it remove the
 * kernel objects (closing its pipe tells it to); without one, remove them
 * here.  Safe to call again. */
static void release_tracing(struct tracer **t, struct lookups **l, int *guardian)
{
        if (*guardian >= 0) {
                tracer_forget(TAKE_PTR(*t));
                lookups_close(TAKE_PTR(*l));
                close(TAKE_FD(*guardian));
        } else {
                tracer_close(TAKE_PTR(*t));
                lookups_close(TAKE_PTR(*l));
        }
}

struct bpf_job {
        uint64_t ns;        /* how long it took */
        pid_t pid;
        struct lookups *l;
        int r;
};

static void *open_lookups_thread(void *arg)
{
        struct bpf_job *j = arg;
        uint64_t t0 = now_ns();

        j->r = lookups_open(&j->l);
        if (j->r >= 0) {
                j->r = lookups_follow(j->l, j->pid);
                if (j->r < 0) {
                        lookups_close(j->l);
                        j->l = NULL;
                }
        }
        j->ns = now_ns() - t0;
        return NULL;
}

/* Phase timings for READSET_DEBUG. */
struct phases {
        uint64_t last_ns;
        char text[512];
};

static void phase(struct phases *ph, const char *name)
{
        uint64_t now = now_ns();
        size_t n = strlen(ph->text);

        if (ph->last_ns && n < sizeof(ph->text))
                snprintf(ph->text + n, sizeof(ph->text) - n, " %s %.1f", name, (now - ph->last_ns) / 1e6);
        ph->last_ns = now;
}

/* The command line, as stored in the read set: at most 4 KiB of it. */
#define COMMAND_MAX 4096

static char *join_argv(char **argv)
{
        char *s = malloc(COMMAND_MAX + 1);
        size_t len = 0;

        if (!s)
                return NULL;
        for (char **a = argv; *a; a++) {
                size_t n = strlen(*a);
                if (len + n + 1 > COMMAND_MAX - 4) {
                        memcpy(s + len, " ...", 4);
                        len += 4;
                        break;
                }
                if (len)
                        s[len++] = ' ';
                memcpy(s + len, *a, n);
                len += n;
        }
        s[len] = 0;
        return s;
}

/* Fork CMD stopped at a gate: it execs only once tracing follows it.  Exec
 * failures come back through a close-on-exec pipe. */
static pid_t spawn_gated(char **argv, const sigset_t *oldmask, int *ret_gate, int *ret_errpipe)
{
        int gate[2], err[2];
        pid_t pid;

        if (pipe2(gate, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(err, O_CLOEXEC) < 0) {
                int e = -errno;
                close(gate[0]);
                close(gate[1]);
                return e;
        }
        pid = fork();
        if (pid < 0) {
                int e = -errno;
                close(gate[0]); close(gate[1]); close(err[0]); close(err[1]);
                return e;
        }
        if (pid == 0) {
                char c;
                int e;
                ssize_t k;

                close(gate[1]);
                close(err[0]);
                /* the command gets the signal mask and dispositions readset
                 * was started with (readset installs no handlers) */
                sigprocmask(SIG_SETMASK, oldmask, NULL);
                do
                        k = read(gate[0], &c, 1);
                while (k < 0 && errno == EINTR);
                if (k != 1)
                        _exit(127);
                execvp(argv[0], argv);
                e = errno;
                if (write(err[1], &e, sizeof(e)) < 0) { /* nothing more to do */ }
                _exit(e == ENOENT ? 127 : 126);
        }
        close(gate[0]);
        close(err[1]);
        *ret_gate = gate[1];
        *ret_errpipe = err[0];
        return pid;
}

int cmd_record(int argc, char **argv)
{
        static const struct option opts[] = {
                { "output", required_argument, NULL, 'o' },
                { "cold", no_argument, NULL, 'C' },
                { "buffer-size", required_argument, NULL, 'B' },
                { "no-lookups", no_argument, NULL, 'L' },
                { "max-walk", required_argument, NULL, 'W' },
                { "quiet", no_argument, NULL, 'q' },
                { "fallback-run", no_argument, NULL, 'F' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_free_ char *arg_output = NULL, *cmdline = NULL;
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_builder_ struct rs_builder *builder = NULL;
        _cleanup_close_ int sfd = -1, gate = -1, errpipe = -1;
        bool arg_cold = false, arg_quiet = false, arg_lookups = true, arg_fallback = false;
        uint64_t arg_buffer_kb = DEFAULT_BUFFER_KB, arg_max_walk = DEFAULT_MAX_WALK;
        struct tracer *tracer = NULL;
        struct paths *paths = NULL;
        struct lookups *lookups = NULL;
        struct paths_stats pst;
        struct readset_totals tot;
        struct rec_ctx ctx;
        struct phases ph = { 0 };
        struct bpf_job bpf_job = { 0, 0, NULL, 0 };
        pthread_t bpf_thread;
        bool bpf_started = false;
        sigset_t mask, oldmask;
        const char *what = NULL;
        uint64_t start_ns, end_ns, bad_lines = 0, tracefs_ns = 0;
        bool paths_failed = false, lookups_failed = false;
        int c, r, status = 0, exit_code = 0, exec_errno = 0, guardian = -1;
        pid_t child = -1;
        char **cmd;

        while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) >= 0) {
                switch (c) {
                case 'o':
                        free(arg_output);
                        arg_output = strdup(optarg);
                        if (!arg_output)
                                return log_errno(-ENOMEM, "out of memory");
                        break;
                case 'C': arg_cold = true; break;
                case 'B':
                        if (parse_u64(optarg, &arg_buffer_kb) < 0 || arg_buffer_kb < 64 || arg_buffer_kb > (1u << 22))
                                return log_usage("record", "invalid --buffer-size '%s' (64..4194304 KiB)", optarg);
                        break;
                case 'L': arg_lookups = false; break;
                case 'W':
                        if (parse_u64(optarg, &arg_max_walk) < 0)
                                return log_usage("record", "invalid --max-walk '%s'", optarg);
                        break;
                case 'q': arg_quiet = true; break;
                case 'F': arg_fallback = true; break;
                case 'h': record_help(); return 0;
                default: return log_usage("record", "invalid option");
                }
        }
        if (optind >= argc)
                return log_usage("record", "missing command to record (readset record -- CMD ARGS...)");
        cmd = argv + optind;
        if (!arg_output) {
                const char *base = strrchr(cmd[0], '/');
                base = base ? base + 1 : cmd[0];
                if (asprintf(&arg_output, "%s.readset", *base ? base : "cmd") < 0) {
                        arg_output = NULL;
                        return log_errno(-ENOMEM, "out of memory");
                }
        }
        cmdline = join_argv(cmd);
        if (!cmdline)
                return log_errno(-ENOMEM, "out of memory");

        if (geteuid() != 0) {
                log_error("recording needs root (tracefs, fanotify and BPF); try 'sudo readset record ...'");
                if (!arg_fallback)
                        return -1;
                {
                        int e;
                        execvp(cmd[0], cmd);
                        e = errno;
                        log_errno(-e, "cannot run '%s'", cmd[0]);
                        return e == ENOENT ? 127 : 126;
                }
        }

        /* Signals: handled synchronously through a signalfd, so that every
         * path out of here removes the tracefs instance. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, &oldmask) < 0)
                return log_errno(-errno, "cannot block signals");
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                r = log_errno(-errno, "cannot create signalfd");
                goto out;
        }

        phase(&ph, "main");
        {
                const char *root;
                /* mounts tracefs if needed, before anything looks for it */
                if (tracer_tracefs_root(&root) < 0) {
                        r = log_error("tracefs is not available (mount -t tracefs nodev /sys/kernel/tracing)");
                        goto setup_failed;
                }
        }
        tracer_remove_stale();
        builder = builder_new();
        rs = readset_new();
        if (!builder || !rs) {
                r = log_errno(-ENOMEM, "out of memory");
                goto setup_failed;
        }
        ctx.builder = builder;

        if (arg_cold) {
                r = drop_caches();
                if (r < 0) {
                        r = log_errno(r, "cannot drop the page cache (/proc/sys/vm/drop_caches)");
                        goto setup_failed;
                }
        }

        /* The command's process first, while readset is small and forks
         * fast; it waits at the gate until everything follows it. */
        child = spawn_gated(cmd, &oldmask, &gate, &errpipe);
        if (child < 0) {
                r = log_errno(child, "cannot fork");
                child = -1;
                goto setup_failed;
        }
        bpf_job.pid = child;

        phase(&ph, "stale+fork");
        r = paths_open(&paths, true);
        if (r < 0) {
                r = log_errno(r, "cannot set up path resolution");
                goto setup_failed;
        }
        phase(&ph, "fanotify");
        /* Loading the BPF programs and creating the tracefs instance each
         * take milliseconds of kernel work: do them side by side. */
        if (arg_lookups && pthread_create(&bpf_thread, NULL, open_lookups_thread, &bpf_job) == 0)
                bpf_started = true;
        else if (arg_lookups)
                open_lookups_thread(&bpf_job);
        tracefs_ns = now_ns();
        r = tracer_open(&tracer, arg_buffer_kb, &what);
        if (r >= 0) {
                what = "following the command's processes";
                r = tracer_follow(tracer, child);
        }
        tracefs_ns = now_ns() - tracefs_ns;
        if (bpf_started) {
                pthread_join(bpf_thread, NULL);
                bpf_started = false;
        }
        lookups = TAKE_PTR(bpf_job.l);
        if (r < 0) {
                if (r == -ENOENT && what && strncmp(what, "filemap/", 8) == 0)
                        r = log_error("this kernel has no trace event '%s' (needs Linux >= 6.x filemap events)", what);
                else if (r == -ENOENT)
                        r = log_error("tracefs is not available (mount -t tracefs nodev /sys/kernel/tracing)");
                else
                        r = log_errno(r, "cannot set up %s", what ? what : "tracing");
                goto setup_failed;
        }

        phase(&ph, "tracefs+bpf");
        if (arg_lookups && bpf_job.r < 0)
                /* Pages are the read set; lookups are a bonus we say we lack. */
                log_warning_errno(bpf_job.r, "path lookups not traced (BPF; READSET_DEBUG=1 tells why)");

        {
                int fds[] = { sfd, paths_fd(paths), gate, errpipe };
                guardian = start_guardian(tracer, lookups, fds, ARRAY_SIZE(fds));
                if (guardian < 0) {
                        r = log_errno(guardian, "cannot fork");
                        goto setup_failed;
                }
        }
        phase(&ph, "guardian");
        start_ns = now_ns();
        r = tracer_start(tracer, start_ns);
        if (r < 0) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
                child = -1;
                r = log_errno(r, "cannot start tracing");
                goto setup_failed;
        }
        if (lookups)
                lookups_set_start(lookups, start_ns);
        if (write(gate, "x", 1) != 1) {
                r = log_errno(-errno, "cannot start the command");
                goto out;
        }
        close(TAKE_FD(gate));

        /* Consume events until the command exits. */
        for (;;) {
                /* Wake on signals (SIGCHLD ends the loop at once) or every
                 * DRAIN_MS: events queue in kernel buffers meanwhile, so the
                 * recorded program is not interrupted by one wake-up per event. */
                struct pollfd pfd = { .fd = sfd, .events = POLLIN };
                struct signalfd_siginfo si;
                bool exited = false;

                if (poll(&pfd, 1, DRAIN_MS) < 0 && errno != EINTR) {
                        r = log_errno(-errno, "poll failed");
                        goto out;
                }
                while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                        if (si.ssi_signo == SIGCHLD)
                                continue;
                        /* Terminal signals already reached the command; pass on the rest. */
                        if (signal_to_pass_on((int)si.ssi_signo, si.ssi_code, getsid(0) == getpid()) && child > 0)
                                kill(child, (int)si.ssi_signo);
                }
                if (waitpid(child, &status, WNOHANG) == child)
                        exited = true;
                r = tracer_drain(tracer, on_event, &ctx);
                if (r < 0) {
                        r = log_errno(r, "cannot read trace events");
                        goto out;
                }
                /* Names and lookups are helpers: losing them costs precision,
                 * not the recording, and never the command. */
                if (!paths_failed && (r = paths_drain(paths)) < 0) {
                        log_warning_errno(r, "cannot read fanotify events; names will come from the fallbacks");
                        paths_failed = true;
                }
                if (lookups && !lookups_failed && (r = lookups_drain(lookups)) < 0) {
                        log_warning_errno(r, "cannot read lookup events; lookups are incomplete");
                        lookups_failed = true;
                }
                if (exited)
                        break;
        }
        child = -1;
        phase(&ph, "run");
        end_ns = now_ns();
        tracer_stop(tracer);
        r = tracer_drain(tracer, on_event, &ctx);
        if (r < 0) {
                r = log_errno(r, "cannot read trace events");
                goto out;
        }
        if (read(errpipe, &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
                exec_errno = 0;
        if (WIFEXITED(status))
                exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
                exit_code = 128 + WTERMSIG(status);
        if (exec_errno) {
                r = log_errno(-exec_errno, "cannot run '%s'", cmd[0]);
                r = exec_errno == ENOENT ? 127 : 126;
                goto out;
        }

        rs->lost_events = tracer_lost(tracer);
        bad_lines = tracer_bad_lines(tracer);
        if (lookups) {
                rs->rec_flags |= RS_REC_LOOKUPS;
                r = lookups_finish(lookups, rs);
                if (r < 0) {
                        r = log_errno(r, "cannot collect path lookups");
                        goto out;
                }
        }
        /* Our copies go; the guardian removes the kernel objects. */
        release_tracing(&tracer, &lookups, &guardian);

        phase(&ph, "drain");
        r = paths_prepare(paths, builder, arg_max_walk);
        if (r < 0) {
                r = log_errno(r, "cannot resolve paths");
                goto out;
        }
        phase(&ph, "paths");
        r = builder_finish(builder, rs, (uint32_t)sysconf(_SC_PAGESIZE), paths_resolve, paths);
        if (r < 0) {
                r = log_errno(r, "cannot build the read set");
                goto out;
        }
        rs->command = TAKE_PTR(cmdline);
        rs->created_unix = (uint64_t)time(NULL);
        rs->duration_us = (end_ns - start_ns) / 1000;
        if (arg_cold)
                rs->rec_flags |= RS_REC_COLD;

        phase(&ph, "build");
        r = format_write(rs, arg_output);
        if (r < 0) {
                r = log_errno(r, "cannot write '%s'", arg_output);
                goto out;
        }
        phase(&ph, "write");
        readset_totals(rs, &tot);
        paths_get_stats(paths, &pst);
        if (getenv("READSET_DEBUG")) {
                struct rusage ru;
                getrusage(RUSAGE_SELF, &ru);
                log_info("debug: readset itself used %.1f ms user, %.1f ms system; %" PRIu64
                         " trace lines unparsed; fanotify %" PRIu64 " events, %" PRIu64 " marks, %" PRIu64
                         " overflows; resolved %" PRIu64 " by handle, %" PRIu64 " by walk (%" PRIu64 " entries)",
                         ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
                         ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3, bad_lines,
                         pst.fanotify_events, pst.marks, pst.fanotify_overflows, pst.handle_resolved,
                         pst.walk_resolved, pst.walked);
                log_info("debug: phases (ms):%s; of which tracefs %.1f, bpf %.1f", ph.text,
                         tracefs_ns / 1e6, bpf_job.ns / 1e6);
        }
        if (!arg_quiet) {
                char b1[32], b2[32];
                uint64_t known = tot.regular_bytes + tot.blockdev_bytes;
                log_info("recorded %" PRIu64 " files, %" PRIu64 " ranges, %s (%s metadata) in %.3f s",
                         tot.files, tot.ranges, format_bytes(tot.bytes, b1),
                         format_bytes(tot.blockdev_bytes, b2), rs->duration_us / 1e6);
                log_info("resolved %.1f%% of bytes to paths (%" PRIu64 " files unresolved); %" PRIu64
                         " events lost%s",
                         tot.bytes ? 100.0 * (double)known / (double)tot.bytes : 100.0,
                         tot.unresolved_files, rs->lost_events,
                         rs->lost_events ? " (raise --buffer-size)" : "");
                if (rs->rec_flags & RS_REC_LOOKUPS)
                        log_info("path lookups: %" PRIu64 " (%" PRIu64 " failed), %" PRIu64 " lost", tot.lookups,
                                 tot.lookups_failed, rs->lookups_lost);
                log_info("wrote '%s'", arg_output);
        }
        /* the command's status, whatever signal readset saw and passed on */
        r = exit_code;
        goto out;

setup_failed:
        if (arg_fallback) {
                /* for readset run: the command runs, recorded or not */
                log_warning("cannot record here; running '%s' unrecorded", cmd[0]);
                release_tracing(&tracer, &lookups, &guardian);
                if (child > 0 && gate >= 0 && write(gate, "x", 1) == 1) {
                        close(TAKE_FD(gate));
                        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                                ;
                        child = -1;
                        r = WIFEXITED(status) ? WEXITSTATUS(status) :
                            WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
                        goto out;
                }
                if (child <= 0) {
                        sigprocmask(SIG_SETMASK, &oldmask, NULL);
                        int e;
                        execvp(cmd[0], cmd);
                        e = errno;
                        log_errno(-e, "cannot run '%s'", cmd[0]);
                        r = e == ENOENT ? 127 : 126;
                }
        }
        goto out;

out:
        /* A command still gated never runs (the gate closes: it exits 127);
         * one already running is stopped. */
        if (child > 0) {
                if (gate >= 0)
                        close(TAKE_FD(gate));
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
        }
        release_tracing(&tracer, &lookups, &guardian);
        paths_close(paths);
        /* Signals that arrived and were passed on are consumed here, so that
         * restoring the mask does not deliver them to readset itself. */
        if (sfd >= 0) {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof(si)) == sizeof(si))
                        ;
        }
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        return r;
}
