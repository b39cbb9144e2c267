/* SPDX-License-Identifier: MIT */
/* readset run: start a command at once and replay its read set beside it. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <zlib.h>

#include "cmd/cmd.h"
#include "replay/engine.h"
#include "model/format.h"
#include "replay/planner.h"
#include "replay/policy.h"
#include "util/util.h"
#include "util/banned.h"

#define DEFAULT_STALE_PERCENT 50
#define DEFAULT_NICE 10   /* the replay's CPU priority: below the command's */

static void run_help(void)
{
        printf("usage: readset run [OPTIONS] FILE -- CMD [ARGS...]\n"
               "       readset run [OPTIONS] --auto DIR -- CMD [ARGS...]\n"
               "\n"
               "Start CMD at once and replay the read set FILE beside it, first-needed\n"
               "first, so that CMD finds in the page cache what it would otherwise wait\n"
               "for.  Exits with CMD's exit status; signals sent to readset (INT, TERM,\n"
               "HUP, QUIT) are passed on to CMD.\n"
               "\n"
               "With --auto, the read set lives in DIR, named after the command: the first\n"
               "run records it (root), later runs replay it and record again, and the\n"
               "read set is replaced when less than --stale-below percent of it is still\n"
               "used (the program or its files changed).\n"
               "\n"
               "options:\n"
               "  -a, --auto DIR          keep the read set in DIR (see above)\n"
               "      --stale-below PCT   re-record below this share still used (default %d)\n"
               "  -s, --stats             report what the replay covered: bytes replayed,\n"
               "                          bytes CMD still fetched itself, hit ratio (root:\n"
               "                          CMD is recorded meanwhile)\n"
               "      --nice N            CPU niceness of readset once CMD started (default\n"
               "                          %d): the replay mostly waits for the device, and\n"
               "                          where it would compete with CMD for the CPU,\n"
               "                          CMD wins\n"
               "  -m, --method M          read, fadvise or readahead (default)\n"
               "  -Q, --queue-depth N     requests in flight (default 32)\n"
               "      --max-bytes SIZE    replay at most SIZE bytes\n"
               "  -T, --threads N         replay threads (default: 4 per CPU, at most 16)\n"
               "      --no-lookups        do not stat the recorded lookup paths\n"
               "      --all-lookups       stat every one (default on a local filesystem:\n"
               "                          per directory the first, then one in 64)\n"
               "      --device KIND       plan for KIND: rotational, solid, or a profile\n"
               "                          saved by readset probe -o (default: what probe --save\n"
               "                          kept for the device, else sysfs's settings)\n"
               "  -h, --help              show this help\n", DEFAULT_STALE_PERCENT, DEFAULT_NICE);
}

struct child_state {
        pid_t pid;
        int status;
        bool exited;
};

static bool child_done(void *userdata)
{
        struct child_state *c = userdata;
        if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
                c->exited = true;
        return c->exited;
}

/* readset run stands in for the command: a signal sent to readset (kill, a
 * supervisor stopping it) is passed on, and readset goes on waiting for the
 * command and exits with its status, as without readset.  Signals from the
 * terminal reached the command already (the whole foreground process group
 * gets them): they are not sent twice.  Sent through a pidfd, so that once
 * the command is reaped a late signal cannot reach a process that took its
 * PID. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static volatile sig_atomic_t forward_fd = -1, forward_pid, session_leader;
static volatile sig_atomic_t signal_forwarded;

static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
        int saved = errno;
        long r = -1;

        (void)ctx;
        if (!signal_to_pass_on(sig, si->si_code, session_leader))
                goto out;
        if (forward_fd >= 0)
                r = syscall(SYS_pidfd_send_signal, (int)forward_fd, sig, NULL, 0);
        else if (forward_pid > 0)       /* no pidfd (seccomp, old kernel): by PID while not reaped */
                r = kill((pid_t)forward_pid, sig);
        if (r == 0)
                signal_forwarded = 1;
out:
        errno = saved;
}

/* Called with the signals blocked (see spawn); a signal readset was started
 * ignoring stays ignored (the command inherited that). */
static void forward_signals(pid_t pid, int pidfd)
{
        struct sigaction sa = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO | SA_RESTART }, old;

        forward_fd = pidfd;
        forward_pid = pid;
        session_leader = getsid(0) == getpid();
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded_signals); i++)
                if (sigaction(forwarded_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
                        (void)sigaction(forwarded_signals[i], &sa, NULL);
}

/* The command is gone: signals stop readset again, as they would have before. */
static void stop_forwarding(void)
{
        struct sigaction sa = { .sa_handler = SIG_DFL }, old;

        forward_fd = -1;
        forward_pid = 0;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded_signals); i++)
                if (sigaction(forwarded_signals[i], NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO) &&
                    old.sa_sigaction == forward_signal)
                        (void)sigaction(forwarded_signals[i], &sa, NULL);
}

/* The command, started with the signals to forward blocked (*oldmask: the
 * mask before), so that none arrives between the fork and forward_signals();
 * the command gets readset's original mask back before exec. */
static pid_t spawn(char **argv, const sigset_t *oldmask)
{
        pid_t pid = fork();

        if (pid == 0) {
                sigprocmask(SIG_SETMASK, oldmask, NULL);
                execvp(argv[0], argv);
                fprintf(stderr, "readset: error: cannot run '%s': %s\n", argv[0], strerror(errno));
                _exit(errno == ENOENT ? 127 : 126);
        }
        return pid < 0 ? -errno : pid;
}

/* The read set's name in --auto DIR: the command's base name and a hash of
 * its arguments and working directory. */
static int auto_path(const char *dir, char **cmd, char **ret)
{
        char cwd[PATH_MAX];
        const char *base = strrchr(cmd[0], '/');
        uLong h = crc32(0L, Z_NULL, 0);
        char clean[64];
        size_t n = 0;

        base = base ? base + 1 : cmd[0];
        for (const char *p = base; *p && n + 1 < sizeof(clean); p++)
                clean[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ? *p : '_');
        clean[n] = 0;
        if (!getcwd(cwd, sizeof(cwd)))
                cwd[0] = 0;
        h = crc32(h, (const Bytef *)cwd, (uInt)strlen(cwd) + 1);
        for (char **a = cmd; *a; a++)
                h = crc32(h, (const Bytef *)*a, (uInt)strlen(*a) + 1);
        if (asprintf(ret, "%s/%s-%08lx.readset", dir, n ? clean : "cmd", (unsigned long)h) < 0)
                return -ENOMEM;
        return 0;
}

/* What an --auto run killed outright (SIGKILL, a power cut) left in dir:
 * its recording in progress, "NAME.new.PID" (and the writer's own
 * "NAME.new.PID.tmp.XXXXXX"), whose PID is gone.  Removed; a file of a run
 * still going, or of a PID reused since, is left alone. */
static void remove_stale_recordings(const char *dir, const char *auto_file)
{
        _cleanup_free_ char *prefix = NULL;
        const char *base = strrchr(auto_file, '/');
        DIR *d;
        struct dirent *de;

        base = base ? base + 1 : auto_file;
        if (asprintf(&prefix, "%s.new.", base) < 0) {
                prefix = NULL;
                return;
        }
        d = opendir(dir);
        if (!d)
                return;
        while ((de = readdir(d))) {
                char *end;
                long pid;

                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
                        continue;
                errno = 0;
                pid = strtol(de->d_name + strlen(prefix), &end, 10);
                if (errno || pid <= 0 || pid > INT_MAX || end == de->d_name + strlen(prefix) ||
                    (*end && strncmp(end, ".tmp.", 5) != 0))
                        continue;
                if (kill((pid_t)pid, 0) < 0 && errno == ESRCH && unlinkat(dirfd(d), de->d_name, 0) == 0)
                        log_info("removed '%s/%s', left by a run that was killed", dir, de->d_name);
        }
        closedir(d);
}

/* A read set that cannot be used (r, why: from format_load/decode): with
 * --auto it is recorded anew (0); otherwise refused before the command
 * starts (-1), or, once it has, reported while it runs without a replay. */
static int unusable(const char *file, int r, const char *why, bool arg_auto, bool started)
{
        if (arg_auto)
                log_warning("'%s' is unusable (%s): recording it again", file, why ? why : strerror(-r));
        else if (started)
                log_error("cannot read '%s': %s; the command runs without a replay", file, why ? why : strerror(-r));
        else
                return why ? log_error("cannot read '%s': %s", file, why) : log_errno(r, "cannot read '%s'", file);
        return 0;
}

/* argv for "readset record -q -o OUT -- CMD..." (this very binary). */
static char **record_argv(const char *out, char **cmd)
{
        size_t n = 0;
        char **v;

        while (cmd[n])
                n++;
        v = calloc(n + 8, sizeof(char *));
        if (!v)
                return NULL;
        v[0] = (char *)"/proc/self/exe";
        v[1] = (char *)"record";
        v[2] = (char *)"-q";
        v[3] = (char *)"--fallback-run";   /* if tracing fails, run the command all the same */
        v[4] = (char *)"-o";
        v[5] = (char *)out;
        v[6] = (char *)"--";
        for (size_t i = 0; i < n; i++)
                v[7 + i] = cmd[i];
        return v;
}

/* Pages of `old` the new recording still accessed, and what the command
 * brought in itself while running (misses). */
struct usage {
        uint64_t old_bytes, still_used, new_accessed, new_filled;
};

static int cmp_u64p(const void *a, const void *b)
{
        const uint64_t *x = a, *y = b;
        return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int cmp_file_id(const void *a, const void *b)
{
        const struct rs_file *x = *(const struct rs_file *const *)a, *y = *(const struct rs_file *const *)b;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The bytes of [a, b) inside the sorted, disjoint intervals iv[0..n). */
static uint64_t overlap(const uint64_t *iv, size_t n, uint64_t a, uint64_t b)
{
        size_t lo = 0, hi = n;
        uint64_t sum = 0;

        while (lo < hi) {   /* first interval ending after a */
                size_t mid = (lo + hi) / 2;
                if (iv[2 * mid + 1] <= a)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t m = lo; m < n && iv[2 * m] < b; m++) {
                uint64_t x = MAX(a, iv[2 * m]), y = MIN(b, iv[2 * m + 1]);
                if (y > x)
                        sum += y - x;
        }
        return sum;
}

static void compare(const struct readset *old, const struct readset *cur, struct usage *u)
{
        _cleanup_free_ const struct rs_file **byid = malloc((cur->n_files ? cur->n_files : 1) * sizeof(*byid));

        *u = (struct usage){ 0 };
        for (size_t i = 0; i < cur->n_files; i++)
                for (size_t k = 0; k < cur->files[i].n_ranges; k++) {
                        const struct rs_range *r = &cur->files[i].ranges[k];
                        if (r->flags & RS_RANGE_ACCESSED)
                                u->new_accessed += r->length;
                        if (r->flags & RS_RANGE_FILLED)
                                u->new_filled += r->length;
                }
        if (!byid)
                return;
        for (size_t i = 0; i < cur->n_files; i++)
                byid[i] = &cur->files[i];
        qsort_safe(byid, cur->n_files, sizeof(*byid), cmp_file_id);

        for (size_t i = 0; i < old->n_files; i++) {
                const struct rs_file *f = &old->files[i], *key = f, **hit;
                const struct rs_file *g;
                _cleanup_free_ uint64_t *iv = NULL;
                size_t n = 0;

                /* what the start read, not what readahead brought along */
                for (size_t k = 0; k < f->n_ranges; k++)
                        if (f->ranges[k].flags & RS_RANGE_ACCESSED)
                                u->old_bytes += f->ranges[k].length;
                /* the same file, unchanged: a file that changed is skipped by
                 * replay, so what the read set says of it is of no use now */
                hit = cur->n_files ? bsearch(&key, byid, cur->n_files, sizeof(*byid), cmp_file_id) : NULL;
                if (!hit)
                        continue;
                g = *hit;
                if (g->size != f->size || g->mtime_ns != f->mtime_ns || strcmp(g->path, f->path) != 0 ||
                    g->n_ranges == 0)
                        continue;
                iv = malloc(g->n_ranges * 2 * sizeof(uint64_t));
                if (!iv)
                        continue;
                for (size_t k = 0; k < g->n_ranges; k++) {
                        if (!(g->ranges[k].flags & RS_RANGE_ACCESSED))
                                continue;
                        iv[2 * n] = g->ranges[k].offset;
                        iv[2 * n + 1] = g->ranges[k].offset + g->ranges[k].length;
                        n++;
                }
                qsort_safe(iv, n, 2 * sizeof(uint64_t), cmp_u64p);
                for (size_t k = 0; k < f->n_ranges; k++)
                        if (f->ranges[k].flags & RS_RANGE_ACCESSED)
                                u->still_used += overlap(iv, n, f->ranges[k].offset,
                                                         f->ranges[k].offset + f->ranges[k].length);
        }
}

int cmd_run(int argc, char **argv)
{
        static const struct option opts[] = {
                { "auto", required_argument, NULL, 'a' },
                { "stale-below", required_argument, NULL, 'S' },
                { "stats", no_argument, NULL, 's' },
                { "nice", required_argument, NULL, 'N' },
                REPLAY_ENGINE_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ char *auto_file = NULL, *tmp_out = NULL, *tmp_dir = NULL;
        _cleanup_free_ char **rec = NULL;
        _cleanup_free_ uint8_t *rs_buf = NULL;  /* the read set's file, until decoded */
        size_t rs_len = 0;
        const char *arg_auto = NULL, *file = NULL, *why = NULL;
        bool arg_stats = false, recording, have_file, plan_first = false;
        uint64_t arg_max = 0, arg_stale = DEFAULT_STALE_PERCENT, arg_nice = DEFAULT_NICE;
        struct engine_options eo;
        struct engine_stats st = { 0 };
        struct device_profile dev;
        struct child_state child = { 0 };
        _cleanup_close_ int pidfd = -1;
        sigset_t block, oldmask;
        char **cmd;
        int c, r, exit_code;

        engine_options_default(&eo);
        eo.method = ENGINE_READAHEAD;
        eo.wait = false;
        while ((c = getopt_long(argc, argv, "+a:sm:Q:T:h", opts, NULL)) >= 0) {
                r = replay_parse_option(c, optarg, "run", &eo, &arg_max);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'a': arg_auto = optarg; break;
                case 'S':
                        if (parse_u64(optarg, &arg_stale) < 0 || arg_stale > 100)
                                return log_usage("run", "invalid --stale-below '%s' (0..100)", optarg);
                        break;
                case 's': arg_stats = true; break;
                case 'N':
                        if (parse_u64(optarg, &arg_nice) < 0 || arg_nice > 19)
                                return log_usage("run", "invalid --nice '%s' (0..19)", optarg);
                        break;
                case 'h': run_help(); return 0;
                default: return log_usage("run", "invalid option");
                }
        }
        if (!arg_auto) {
                if (optind >= argc)
                        return log_usage("run", "missing read-set FILE");
                file = argv[optind++];
        }
        if (optind < argc && strcmp(argv[optind], "--") == 0)
                optind++;
        if (optind >= argc)
                return log_usage("run", "missing command (readset run FILE -- CMD ARGS...)");
        cmd = argv + optind;

        if (arg_auto) {
                if (mkdir(arg_auto, 0755) < 0 && errno != EEXIST)
                        return log_errno(-errno, "cannot create '%s'", arg_auto);
                r = auto_path(arg_auto, cmd, &auto_file);
                if (r < 0)
                        return log_errno(r, "out of memory");
                file = auto_file;
                remove_stale_recordings(arg_auto, auto_file);
        }
        /* Where the replay will read, from the read set's first file: on a
         * rotational device the plan comes first (below); elsewhere the
         * command starts before the read set is even decoded.  A read set
         * whose header is bad, or that is truncated, is refused here, before
         * anything runs (with --auto, it is recorded anew). */
        have_file = !arg_auto || access(file, F_OK) == 0;
        if (have_file) {
                _cleanup_free_ char *first = NULL;
                struct device_profile peeked;

                /* loaded once: peeked at now, decoded below */
                r = format_load(file, &rs_buf, &rs_len, &why);
                if (r >= 0)
                        r = format_peek_first_file_buf(rs_buf, rs_len, &first, &why);
                if (r < 0) {
                        if (unusable(file, r, why, arg_auto, false) < 0)
                                return -1;
                        have_file = false;
                } else {
                        /* the first file's device: the program's own.  The
                         * plan is for the device most bytes come from, which
                         * needs the whole read set decoded; when that one is
                         * a disk and the program's is not, the command starts
                         * while FIEMAP is asked (a known cost, not measured) */
                        replay_device_for(first, &peeked);
                        plan_first = peeked.rotational;
                }
        }

        /* On a rotational device the command waits for the plan, which asks
         * FIEMAP of every file: measured on the emulated disk, planning first
         * and sweeping gives 4.0 s, starting the command during the planning
         * 7.6 s, as both then compete for the head. */
        if (have_file && plan_first) {
                why = NULL;
                r = format_decode(rs_buf, rs_len, &rs, &why);
                free(TAKE_PTR(rs_buf));
                if (r >= 0) {
                        r = replay_plan(rs, arg_max, true, &plan, &dev);
                        if (r < 0 && !arg_auto)
                                return log_errno(r, "cannot plan the replay");
                        if (r < 0)
                                log_warning_errno(r, "cannot plan the replay; the command runs without it");
                } else if (unusable(file, r, why, arg_auto, false) < 0)
                        return -1;
        }

        /* Recording alongside: for --stats, and for --auto (to learn, or to
         * notice the read set went stale). */
        recording = arg_stats || arg_auto;
        if (recording) {
                if (geteuid() != 0)
                        return log_error("--stats and --auto record the command and need root");
                if (arg_auto) {
                        if (asprintf(&tmp_out, "%s.new.%d", auto_file, (int)getpid()) < 0) {
                                tmp_out = NULL;
                                return log_errno(-ENOMEM, "out of memory");
                        }
                } else {
                        /* a private directory: nobody can plant a file there */
                        char tmpl[] = "/tmp/readset-run.XXXXXX";
                        if (!mkdtemp(tmpl))
                                return log_errno(-errno, "cannot create a temporary directory");
                        if (asprintf(&tmp_out, "%s/run.readset", tmpl) < 0) {
                                tmp_out = NULL;
                                return log_errno(-ENOMEM, "out of memory");
                        }
                        tmp_dir = strdup(tmpl);
                }
                rec = record_argv(tmp_out, cmd);
                if (!rec)
                        return log_errno(-ENOMEM, "out of memory");
        }

        /* Otherwise the command starts first and never waits for the replay. */
        sigemptyset(&block);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded_signals); i++)
                sigaddset(&block, forwarded_signals[i]);
        sigprocmask(SIG_BLOCK, &block, &oldmask);
        child.pid = spawn(recording ? rec : cmd, &oldmask);
        if (child.pid < 0) {
                sigprocmask(SIG_SETMASK, &oldmask, NULL);
                return log_errno(child.pid, "cannot fork");
        }
        pidfd = (int)syscall(SYS_pidfd_open, child.pid, 0);
        forward_signals(child.pid, pidfd);
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        /* The command comes first: the replay (and, when it comes after the
         * start, its decoding and planning) runs at a lower CPU priority; it
         * mostly waits for the device, and where it would compete for the
         * CPU, the command wins. */
        if (have_file && arg_nice > 0)
                (void)setpriority(PRIO_PROCESS, 0, (int)arg_nice);
        /* (a recording needs the read set afterwards, to tell whether it
         * went stale, even if the command is done already) */
        if (have_file && !plan_first && (recording || !child_done(&child))) {
                why = NULL;
                r = format_decode(rs_buf, rs_len, &rs, &why);
                free(TAKE_PTR(rs_buf));
                if (r < 0)   /* damage past the header: the command runs all the same */
                        (void)unusable(file, r, why, arg_auto, true);
                else if (!child_done(&child)) {
                        r = replay_plan(rs, arg_max, true, &plan, &dev);
                        if (r < 0)
                                log_warning_errno(r, "cannot plan the replay; the command runs without it");
                }
        }
        if (plan && !child_done(&child)) {
                eo.readahead_cap = dev.readahead_cap;
                eo.stop = child_done;
                eo.stop_userdata = &child;
                r = engine_run(rs, plan, &eo, &st);
                if (r < 0)
                        log_warning_errno(r, "replay failed");
                if (getenv("READSET_DEBUG"))
                        log_info("debug: replay %.1f ms (metadata %.1f, data %.1f)%s",
                                 st.elapsed_us / 1e3, st.meta_us / 1e3, st.submit_us / 1e3,
                                 st.stopped ? ", stopped" : "");
        }
        while (!child.exited) {
                if (waitpid(child.pid, &child.status, 0) == child.pid)
                        child.exited = true;
                else if (errno != EINTR)
                        return log_errno(-errno, "cannot wait for the command");
        }
        stop_forwarding();
        /* (the PID fallback could reach a reused PID between the reap, in
         * child_done or above, and here: only where pidfd_open fails) */
        exit_code = WIFEXITED(child.status) ? WEXITSTATUS(child.status) :
                    WIFSIGNALED(child.status) ? 128 + WTERMSIG(child.status) : 1;

        if (recording) {
                _cleanup_readset_ struct readset *cur = NULL;
                struct usage u = { 0 };
                bool replace;

                r = format_read(tmp_out, &cur, &why);
                if (r < 0) {
                        unlink(tmp_out);
                        if (tmp_dir)
                                rmdir(tmp_dir);
                        log_warning("the command ran, but could not be recorded (see above)");
                        return exit_code;
                }
                if (rs)
                        compare(rs, cur, &u);
                replace = arg_auto && (!rs || u.old_bytes == 0 || u.still_used * 100 < arg_stale * u.old_bytes);
                /* A start cut short records only part of what it needs.  The
                 * child is readset record, which exits 128+N when the command
                 * died of signal N, as shells report it (255, a common
                 * "failed", is no signal's). */
                if (replace && (signal_forwarded || WIFSIGNALED(child.status) ||
                                (WIFEXITED(child.status) && WEXITSTATUS(child.status) > 128 &&
                                 WEXITSTATUS(child.status) < 128 + SIGRTMAX + 1))) {
                        log_info("the command was interrupted: its recording is not kept");
                        replace = false;
                }
                if (arg_stats) {
                        char b1[32], b2[32], b3[32];
                        double hit = u.new_accessed ? 1.0 - (double)MIN(u.new_filled, u.new_accessed) / (double)u.new_accessed : 1.0;
                        fprintf(stderr, "readset: replayed %s (%s already cached) in %.1f ms%s\n",
                                format_bytes(st.bytes, b1), format_bytes(st.bytes_cached, b2), st.elapsed_us / 1e3,
                                st.stopped ? ", stopped when the command exited" : "");
                        fprintf(stderr, "readset: the command still fetched %s itself (misses); hit ratio %.1f%%\n",
                                format_bytes(u.new_filled, b3), rs ? 100.0 * hit : 0.0);
                        if (rs)
                                fprintf(stderr, "readset: %.1f%% of the read set was used this time\n",
                                        u.old_bytes ? 100.0 * (double)u.still_used / (double)u.old_bytes : 0.0);
                }
                if (replace) {
                        if (rename(tmp_out, auto_file) < 0)
                                log_errno(-errno, "cannot save '%s'", auto_file);
                        else if (rs)
                                log_info("read set was stale (%.0f%% used): recorded anew into '%s'",
                                         u.old_bytes ? 100.0 * (double)u.still_used / (double)u.old_bytes : 0.0, auto_file);
                        else
                                log_info("recorded '%s'; later runs replay it", auto_file);
                } else
                        unlink(tmp_out);
                if (tmp_dir)
                        rmdir(tmp_dir);
        }
        return exit_code;
}
