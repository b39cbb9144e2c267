/* SPDX-License-Identifier: MIT */
/* readset run: start a command at once and replay its read set beside it;
 * with --stats or --auto, record it meanwhile. */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "boot/run-loop.h"
#include "cmd/boot-cli.h"
#include "cmd/cmd.h"
#include "cmd/record-cli.h"
#include "cmd/run-cli.h"
#include "model/compare.h"
#include "model/format.h"
#include "model/readset.h"
#include "model/store.h"
#include "record/recorder.h"
#include "util/child.h"
#include "util/util.h"
#include "util/banned.h"

#define DEFAULT_STALE_PERCENT 50
#define DEFAULT_NICE 10   /* the replay's CPU priority: below the command's */
/* On a rotational device, plan before the command starts only a read set
 * of this many bytes or more (the 7.6 s against 4.0 s were 260 MB; a
 * program of a few MB waited 2-3 ms for its plan and gained nothing) */
#define PLAN_FIRST_MIN_BYTES (16ULL << 20)

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
               "run records it (root), later runs replay it without recording, and each\n"
               "run's time is kept beside it; where replay does not make the command\n"
               "faster than a plain run, later runs are plain (tried again 64 runs on).\n"
               "A replay that finds a tenth of the files changed has the next run record\n"
               "again; with --stats every run records, and the read set is replaced when\n"
               "less than --stale-below percent of it is still used.\n"
               "\n"
               "options:\n"
               "      --auto DIR          keep the read set in DIR (see above)\n"
               "      --stale-below PCT   re-record below this share still used (default %d)\n"
               "  -s, --stats             report what the replay covered: bytes replayed,\n"
               "                          bytes CMD still fetched itself, hit ratio (root:\n"
               "                          CMD is recorded meanwhile)\n"
               "  -j, --json              what run did as one JSON object, the last line of\n"
               "                          standard error (standard output is CMD's): the\n"
               "                          replay's figures as replay --json's, CMD's\n"
               "                          exit_status; with --stats, those of --stats\n"
               "      --nice N            CPU niceness of readset once CMD started (default\n"
               "                          %d): the replay mostly waits for the device, and\n"
               "                          where it would compete with CMD for the CPU,\n"
               "                          CMD wins\n"
               "  -m, --method M          read, fadvise or readahead (default)\n"
               "  -Q, --queue-depth N     requests in flight (default 32)\n"
               "      --max-evict PCT     displace at most PCT%% of what other programs cache\n"
               "                          (default " STRINGIFY(REPLAY_DEFAULT_EVICT_PERCENT) ")\n"
               "      --max-bytes SIZE    replay at most SIZE bytes\n"
               "  -T, --threads N         replay threads (default: 4 per CPU, at most 16; 2 on\n"
               "                          a rotational device)\n"
               "      --no-lookups        do not stat the recorded lookup paths\n"
               "      --pace              the default: on a share, pace the lookups as below\n"
               "      --no-pace           on a share, warm every lookup at once instead of\n"
               "                          keeping those CMD is about to make warm while it\n"
               "                          runs (followed through BPF as root, else by the\n"
               "                          recorded timeline)\n"
               "      --all-lookups       stat every one (default on a local filesystem:\n"
               "                          per directory the first, then one in 64)\n"
               "  -d, --device NAME       plan for the device NAME (default: what probe\n"
               "                          --save kept for the device, else sysfs's\n"
               "                          settings):\n",
               DEFAULT_STALE_PERCENT, DEFAULT_NICE);
        print_device_names(26);
        printf("      --root DIR          a portable read set (readset pack): its paths are\n"
               "                          below DIR, where a copy of its image is mounted\n"
               "                          (default /)\n"
               "      --allow-untrusted   as root, read files others can change too\n"
               "                          (docs/SECURITY.md)\n"
               "  -v, --verbose           name every file the replay skipped, and why; say how\n"
               "                          the lookups on a share were paced\n"
               "  -q, --quiet             nothing on stderr but a warning when readset cannot\n"
               "                          help, and errors (no notes, no --stats text)\n"
               "  -h, --help              show this help\n");
}

/* The options of readset run, as getopt reads them (main.c lists them for
 * completion and the tests). */
#define RUN_OPT_AUTO 0x110
/* -a: --auto for this release (cmd_old_letter) */
const char run_short_options[] = "+a:sjm:Q:T:d:vqh";
const struct option run_long_options[] = {
        { "auto", required_argument, NULL, RUN_OPT_AUTO },
        { "stale-below", required_argument, NULL, 'S' },
        { "stats", no_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "nice", required_argument, NULL, 'N' },
        { "quiet", no_argument, NULL, 'q' },
        REPLAY_LONG_OPTIONS,
        { "help", no_argument, NULL, 'h' },
        {}
};

static bool command_done(void *userdata) { return child_done(userdata); }
static void release_command(void *userdata) { (void)child_release(userdata); }

/* What run's options say (the replay's own in a). */
struct run_opts {
        const char *auto_dir, *file;
        bool stats, json;
        uint64_t stale, nice;
        char **cmd;
};

/* 0, or CMD_USAGE (said); --help: 1 */
static int run_parse(int argc, char **argv, struct replay_args *a, struct run_opts *o)
{
        int c, r;

        *o = (struct run_opts){ .stale = DEFAULT_STALE_PERCENT, .nice = DEFAULT_NICE };
        while ((c = getopt_long(argc, argv, run_short_options, run_long_options, NULL)) >= 0) {
                r = replay_args_parse(a, c, optarg, "run");
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'a':
                        say_old_letter("run", c);
                        /* fall through */
                case RUN_OPT_AUTO: o->auto_dir = optarg; break;
                case 'q': log_set_quiet(true); break;
                case 'S':
                        if (parse_u64(optarg, &o->stale) < 0 || o->stale > 100)
                                return log_usage("run", "invalid --stale-below '%s' (0..100)", optarg);
                        break;
                case 's': o->stats = true; break;
                case 'j': o->json = true; break;
                case 'N':
                        if (parse_u64(optarg, &o->nice) < 0 || o->nice > 19)
                                return log_usage("run", "invalid --nice '%s' (0..19)", optarg);
                        break;
                case 'h': run_help(); return 1;
                default: return CMD_OPTION_ERROR(run, argc, argv);
                }
        }
        if (!o->auto_dir && optind >= argc)
                return log_usage("run", "missing read-set FILE");
        if (!o->auto_dir)
                o->file = argv[optind++];
        if (optind < argc && strcmp(argv[optind], "--") == 0)
                optind++;
        if (optind >= argc)
                return log_usage("run", "missing command (readset run FILE -- CMD ARGS...)");
        o->cmd = argv + optind;
        return 0;
}

/* --auto's closed loop (boot/run-loop.h) decides this run: said when it
 * turns replay off; a run that records removes what killed ones left */
static void run_loop_start(struct run_loop *l, struct run_opts *o, bool *ret_record, bool *ret_replay)
{
        bool off, replace;
        int r;

        if ((r = run_loop_decide(l, o->file, access(o->file, F_OK) == 0, &off)) < 0)
                log_warning_errno(r, "cannot read '%s': starting a new history", l->path);
        if (off)
                log_info("%s", l->d.why);      /* said once, when it turns off */
        run_loop_what(l, o->stats, ret_record, ret_replay, &replace);
        if (replace)
                o->stale = 101;
        if (*ret_record)        /* (only a run that records lists the store) */
                run_auto_remove_left(o->auto_dir, o->file);
}

/* A replay session for rs, the files it skips named where memory allows. */
static int run_session(struct replay_args *a, const struct readset *rs, struct replay_session **ret)
{
        a->opts.skips = true;
        if (replay_session_new(&a->opts, rs, ret) >= 0)
                return 0;
        log_warning("out of memory: skips are counted, not named");
        a->opts.skips = false;
        return replay_session_new(&a->opts, rs, ret);
}

/* The replay waited for until the command ends (in a process of its own,
 * or here where none could be had), what it says said */
static void run_wait_replay(struct replay_session *s, struct replay_args *a, struct child *child,
                            struct replay_result *res)
{
        int r = replay_session_wait(s, 0, command_done, child);

        *res = *replay_session_results(s);
        say_replay_notes(res, r, a);
        if (r == -ETIMEDOUT) {
                log_warning("the replay was left with a read that has not returned");
                log_info("  (a share whose server is slow or gone?)");
        } else if (r < 0 && r != -ECHILD)
                log_warning_errno(r, "replay failed");
        else if (r >= 0 && !res->planned_ok && !res->left)
                /* (not where the command ended before the plan was made:
                 * the replay was left, as asked, with nothing to say) */
                log_warning("the command ran without a replay");
}

int cmd_run(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_free_ char *auto_file = NULL;
        struct run_loaded ld = { 0 };
        struct run_recording rr = { 0 };
        struct run_opts o;
        struct replay_args a __attribute__((cleanup(replay_args_freep)));
        struct replay_result res = { .st.stopped = false };
        _cleanup_(replay_session_freep) struct replay_session *s = NULL;
        struct child child = { .pid = -1 };
        struct run_loop loop = { .d.mode = START_REPLAY };
        bool record, replay = true, said = false;
        int r, code, exec_errno;

        replay_args_init(&a);
        a.opts.engine.wait = false;
        if ((r = run_parse(argc, argv, &a, &o)) != 0)
                return r > 0 ? 0 : r;
        /* a launcher always launches: whatever readset cannot do, said
         * once, the command runs (plain where readset cannot help at all) */
        if (o.auto_dir && geteuid() != 0) {
                log_warning("--auto records the command and needs root: it runs without readset");
                return run_plain(o.cmd, o.json);
        }
        if (o.stats && geteuid() != 0) {
                log_warning("--stats records the command and needs root: it runs with a replay, without figures%s",
                            o.json ? " (--json: the replay's)" : "");
                o.stats = false;
        }
        if (o.auto_dir && run_auto_prepare(o.auto_dir, o.cmd, &auto_file) < 0)
                return run_plain(o.cmd, o.json);
        o.file = o.auto_dir ? auto_file : o.file;

        /* Loaded, its header checked, and where the replay will read known
         * before anything runs: a damaged read set is said and left out
         * (with --auto, recorded anew).  On a rotational device the plan comes first (it
         * asks FIEMAP of every file: starting the command meanwhile, both
         * compete for the head; measured 7.6 s against 4.0 s): the replay's
         * process plans, then waits for the command to start, 10 s at most. */
        record = o.stats;
        /* decided first: a plain run reads nothing of readset's (a read set
         * found unusable below is recorded anew) */
        if (o.auto_dir)
                run_loop_start(&loop, &o, &record, &replay);
        else if (!record && run_waits_for_cpu(&a))
                return run_plain(o.cmd, o.json);
        if (replay || record) {
                (void)run_load(o.file, &a, o.auto_dir != NULL, &ld);
                if (o.auto_dir && !ld.buf && !record) {
                        /* unusable after all: this run records a new one */
                        run_loop_record_instead(&loop);
                        run_auto_remove_left(o.auto_dir, o.file);
                        record = true;
                        replay = false;
                }
        }
        a.opts.nice = (int)o.nice;
        /* nobody to tell what it did: once the command ends, run does too
         * (--auto keeps what the replay found changed: it is told to stop
         * when the command ends, and says) */
        a.opts.leave_at_give_up = !o.stats && !a.verbose && !o.auto_dir && !o.json;
        if (ld.plan_first) {
                struct readset_totals t;
                (void)run_decode(&ld, o.auto_dir != NULL, &rs);
                /* a small read set: the head has little to be fought over,
                 * and the command's start is not put off for the plan */
                if (rs) {
                        readset_totals(rs, &t);
                        ld.plan_first = t.regular_bytes >= PLAN_FIRST_MIN_BYTES;
                }
        }
        if (ld.plan_first && rs && run_session(&a, rs, &s) >= 0) {
                if (replay_session_start(s, true) < 0)
                        replay_session_free(TAKE_PTR(s));
                else if (!replay_session_planned(s, now_us() + 10000000))
                        log_warning("planning the replay takes more than 10 s: the command starts meanwhile");
        }
        /* otherwise the command starts first and never waits for the replay */
        loop.t0 = now_us();
        r = child_start(&child, o.cmd, record);
        if (r < 0) {
                replay_session_free(TAKE_PTR(s));
                run_loaded_free(&ld);
                return log_errno(r, "cannot fork");
        }
        /* the lookups on a share are paced by the command's own; its end
         * is noticed at once */
        a.opts.follow_pid = child.pid;
        a.opts.wake_fd = child.pidfd;
        if (s)
                replay_session_follow(s, child.pid, child.pidfd);
        /* the replay (and, after the start, its decoding and planning) runs
         * at a lower CPU priority: it mostly waits for the device, and where
         * it would compete for the CPU, the command wins */
        if (ld.buf && o.nice > 0)
                (void)setpriority(PRIO_PROCESS, 0, (int)o.nice);
        /* (a recording needs the old read set, to tell whether it went
         * stale, even if the command is done already) */
        if (ld.buf && !ld.plan_first && (record || !child_done(&child)))
                (void)run_decode(&ld, o.auto_dir != NULL, &rs);
        /* planned (unless it was) and replayed in a process of its own: the
         * files are touched there, so that a share whose server is slow or
         * gone never keeps run past the command's end (1 s after it, the
         * replay is left).  Its process is forked before the recorder's
         * set-up thread exists: a fork beside a running thread may copy a
         * lock that thread holds (ASan's allocator's did: the replay's
         * process waited on it forever, once in ten runs). */
        if (!replay && rs) {
                readset_free(rs);       /* kept to judge the recording by, not replayed */
                rs = NULL;
        }
        if (!s && rs && !ld.plan_first && !child_done(&child) && run_session(&a, rs, &s) >= 0 &&
            (r = replay_session_start(s, false)) < 0)
                log_warning_errno(r, "cannot start the replay's process; replaying here");
        if (record)
                run_record_start(&rr, &child, release_command);
        if (s)
                run_wait_replay(s, &a, &child, &res);
        r = child_wait(&child);
        if (r < 0)
                child_kill(&child);
        code = child_exit_code(&child, &exec_errno);
        if (exec_errno)
                log_errno(-exec_errno, "cannot run '%s'", o.cmd[0]);
        if (o.auto_dir && !o.stats && !exec_errno && r >= 0 && !child_cut_short(&child)) {
                struct start_replayed x;
                start_replayed_of(&res, &x);
                if ((r = run_loop_note(&loop, (uint64_t)time(NULL), now_us(), &x)) < 0)
                        log_warning_errno(r, "cannot write '%s'", loop.path);
        }
        /* once the command is over, before --json's line (it is the last) */
        if (a.verbose && rs)
                say_skipped(&res, rs);
        if (a.verbose && res.paced)
                say_paced(&res);
        /* the recording finished while signals still go to the command (it
         * is gone: they reach nobody), then they stop readset again */
        if (rr.on)
                said = run_record_finish(&rr, &child, o.cmd, !exec_errno, rs, o.auto_dir ? o.file : NULL, o.stale,
                                  o.stats ? &res : NULL, &a, o.json, code);
        /* --json without --stats (or where they could not be had): what
         * run did, the last line */
        if (o.json && !said)
                say_run_json(s ? &res : NULL, rs, code);
        replay_args_free(&a);
        child_close(&child);
        run_loaded_free(&ld);
        return code;
}
