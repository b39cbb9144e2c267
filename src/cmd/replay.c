/* SPDX-License-Identifier: MIT */
/* readset replay: warm the page cache with a read set. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/progress.h"
#include "util/child.h"
#include "model/readset.h"
#include "util/util.h"
#include "util/banned.h"

static void replay_help(void)
{
        printf("usage: readset replay [OPTIONS] FILE\n"
               "\n"
               "Read what the read set FILE says a cold start needs into the page cache:\n"
               "filesystem metadata and path lookups first, then file data in the order\n"
               "it was first needed, with many requests in flight.  Never writes; skips\n"
               "(and counts) files that changed since recording; reads nothing already\n"
               "cached; stays within the memory budget.  Waits until it is all resident.\n"
               "Needs no root for files the user may read.\n"
               "\n"
               "options:\n"
               "  -m, --method M        readahead (default), fadvise or read\n"
               "  -Q, --queue-depth N   requests in flight, read and fadvise (default 32)\n"
               "  -T, --threads N       readahead submitters (default: 4 per CPU, at most 16; 2\n"
               "                        on a rotational device)\n"
               "      --max-evict PCT   displace at most PCT%% of what other programs cache\n"
               "                        (default " STRINGIFY(REPLAY_DEFAULT_EVICT_PERCENT) ")\n"
               "      --max-bytes SIZE  replay at most SIZE bytes (K, M, G suffixes); the\n"
               "                        budget is also the free memory above 5%% of RAM\n"
               "                        and the --max-evict share of the page cache, and\n"
               "                        in a memory cgroup the room its limits leave\n"
               "      --all-ranges      also replay pages the recording only saw read ahead\n"
               "                        (by default only pages the start used are read;\n"
               "                        the kernel's own readahead is not needed then)\n"
               "      --no-lookups      do not stat the recorded lookup paths\n"
               "      --all-lookups     stat every one (default on a local filesystem:\n"
               "                        per directory the first, then one in 64)\n"
               "      --pace            on a share, keep the lookups of a start that comes\n"
               "                        next (readset replay --pace FILE & PROGRAM) warm\n"
               "                        while it runs, following its lookups (root, BPF) or\n"
               "                        else the recorded timeline; returns once the start\n"
               "                        is through (10 s quiet).  'readset run' does this\n"
               "                        better: it knows which process is the start\n"
               "      --no-pace         the default: warm every lookup at once\n"
               "  -d, --device NAME     plan for the device NAME (default: what probe --save\n"
               "                        kept for the device, else sysfs's settings):\n");
        print_device_names(24);
        printf("      --background      return at once; the replay continues detached\n"
               "      --no-wait         return once every read is submitted, not resident\n"
               "      --timeout SECONDS stop after SECONDS, even if a read has not returned\n"
               "                        (a share whose server is slow or gone)\n"
               "  -n, --dry-run         plan only, read nothing: print the device planned\n"
               "                        for, the plan's reads and bytes, the lookups; with\n"
               "                        -v also every read (file, offset, length) in plan\n"
               "                        order\n"
               "  -j, --json            the plan (--dry-run) or the statistics as JSON on\n"
               "                        stdout\n"
               "  -q, --quiet           no summary\n"
               "      --root DIR        a portable read set (readset pack): its paths are\n"
               "                        below DIR, where a copy of its image is mounted\n"
               "                        (default /)\n"
               "      --allow-untrusted as root, read files others can change too\n"
               "                        (docs/SECURITY.md)\n"
               "  -v, --verbose         name every file skipped, and why; with -n, list the\n"
               "                        plan\n"
               "  -h, --help            show this help\n");
}

/* The options of readset replay, as getopt reads them (main.c lists them for
 * completion and the tests). */
const char replay_short_options[] = "+m:Q:T:d:vnjqh";
const struct option replay_long_options[] = {
        { "all-ranges", no_argument, NULL, 'A' },
        { "background", no_argument, NULL, 'b' },
        { "no-wait", no_argument, NULL, 'W' },
        { "timeout", required_argument, NULL, 't' },
        { "dry-run", no_argument, NULL, 'n' },
        { "json", no_argument, NULL, 'j' },
        { "quiet", no_argument, NULL, 'q' },
        REPLAY_LONG_OPTIONS,
        { "help", no_argument, NULL, 'h' },
        {}
};

/* The replay session's progress as the line (never run's: its command
 * owns the terminal). */
static void show_progress(void *userdata, const struct replay_progress *p)
{
        if (p->done)
                progress_done(userdata);
        else
                progress_update(userdata,
                                &(struct progress_report){ NULL, PROGRESS_BYTES, p->bytes_done, p->bytes_planned });
}

int cmd_replay(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_plan_ struct plan *plan = NULL;
        struct replay_args a __attribute__((cleanup(replay_args_freep)));
        _cleanup_(replay_session_freep) struct replay_session *s = NULL;
        const struct replay_result *res;
        struct device_profile dev;
        struct progress pg;
        bool arg_json = false, arg_quiet = false, arg_background = false, arg_dry = false, parent = false;
        uint64_t t_start, timeout_s = 0;
        int c, r;

        replay_args_init(&a);
        while ((c = getopt_long(argc, argv, replay_short_options, replay_long_options, NULL)) >= 0) {
                r = replay_args_parse(&a, c, optarg, "replay");
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'A': a.opts.policy.all_ranges = true; break;
                case 'b': arg_background = true; break;
                case 'W': a.opts.engine.wait = false; break;
                case 't':
                        if (parse_u64(optarg, &timeout_s) < 0 || timeout_s < 1 || timeout_s > 86400)
                                return log_usage("replay", "invalid --timeout '%s' (1..86400 seconds)", optarg);
                        break;
                case 'n': arg_dry = true; break;
                case 'j': arg_json = true; break;
                case 'q':
                        arg_quiet = true;
                        log_set_quiet(true);
                        break;
                case 'h': replay_help(); return 0;
                default: return CMD_OPTION_ERROR(replay, argc, argv);
                }
        }
        if (optind + 1 != argc)
                return log_usage("replay", optind == argc ? "missing read-set FILE" : "too many arguments");
        if (a.opts.pace != PACE_ON)
                a.opts.pace = PACE_OFF;      /* without --pace: every lookup at once, and done */
        t_start = now_us();
        r = cmd_load_readset(argv[optind], &rs);
        if (r < 0)
                return r;
        r = replay_args_bind(&a, rs, argv[optind]);
        if (r < 0)
                return r;
        if (arg_dry) {
                r = replay_args_plan(&a, rs, &dev, &plan);
                if (r < 0)
                        return r;
                replay_session_options_for_device(&a.opts, &dev);
                print_plan(rs, &dev, plan, &a.opts.engine, now_us() - t_start, arg_json, a.verbose);
                return 0;
        }
        if (arg_background) {
                r = child_detach(&parent);
                if (r < 0)
                        return log_errno(r, "cannot fork");
                if (parent)
                        return 0;
                arg_quiet = true;
                arg_json = false;
        }
        a.opts.skips = true;
        progress_start(&pg, "replay", arg_quiet);
        a.opts.progress = show_progress;
        a.opts.progress_userdata = &pg;
        if (replay_session_new(&a.opts, rs, &s) < 0)
                return log_error("out of memory");
        /* planned and replayed in a process of its own: a share whose
         * server is slow or gone never keeps replay past its deadline */
        r = replay_session_start(s, false);
        if (r < 0)
                log_warning_errno(r, "cannot start the replay's process; replaying here");
        r = replay_session_wait(s, timeout_s ? t_start + timeout_s * 1000000 : 0, NULL, NULL);
        progress_done(&pg);
        res = replay_session_results(s);
        say_replay_notes(res, r, &a);
        if (r == -ETIMEDOUT) {
                replay_session_free(TAKE_PTR(s));
                replay_args_free(&a);
                if (!arg_background && (!arg_quiet || arg_json)) {
                        log_warning("stopped at the deadline (%" PRIu64 " s) with a read that has not returned",
                                    timeout_s);
                        log_info("  (a share whose server is slow or gone?)");
                }
                if (arg_json && !arg_background)
                        printf("{\n  \"stopped_early\": true,\n  \"read_not_returned\": true\n}\n");
                return 0;
        }
        if (getenv("READSET_DEBUG"))
                log_info("debug: load+plan+replay %.1f ms, engine %.1f ms (metadata %.1f, data %.1f)",
                         (now_us() - t_start) / 1e3, res->st.elapsed_us / 1e3, res->st.meta_us / 1e3,
                         res->st.submit_us / 1e3);
        if (arg_background || r < 0 || !res->planned_ok)
                replay_args_free(&a);
        if (r == -ECHILD)
                return CMD_FAILED;      /* said */
        if (!res->planned_ok)
                return CMD_FAILED;      /* said, by the planner */
        if (arg_background)     /* nobody to tell */
                return r < 0 ? CMD_FAILED : 0;
        if (r < 0)
                return log_errno(r, "replay failed");
        if (!arg_quiet || arg_json)
                print_replay_stats(res, &a, rs, arg_json);
        replay_args_free(&a);
        return 0;
}
