/* SPDX-License-Identifier: MIT */
/* readset replay: warm the page cache with a read set. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>

#include "cmd/cmd.h"
#include "replay/engine.h"
#include "model/format.h"
#include "replay/planner.h"
#include "replay/policy.h"
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
               "\n"
               "options:\n"
               "  -m, --method M        readahead (default), fadvise or read\n"
               "  -Q, --queue-depth N   requests in flight, read and fadvise (default 32)\n"
               "  -T, --threads N       readahead submitters (default: 4 per CPU, at most 16)\n"
               "      --max-bytes SIZE  replay at most SIZE bytes (K, M, G suffixes); the\n"
               "                        budget is also capped so that MemAvailable stays\n"
               "                        above 10%% of RAM\n"
               "      --all-ranges      also replay pages the recording only saw read ahead\n"
               "                        (by default only pages the start used are read;\n"
               "                        the kernel's own readahead is not needed then)\n"
               "      --no-lookups      do not stat the recorded lookup paths\n"
               "      --all-lookups     stat every one (default on a local filesystem:\n"
               "                        per directory the first, then one in 64)\n"
               "      --device KIND     plan for KIND: rotational, solid, or a profile\n"
               "                        saved by readset probe -o (default: what probe --save\n"
               "                        kept for the device, else sysfs's settings)\n"
               "      --background      return at once; the replay continues detached\n"
               "      --no-wait         return once every read is submitted, not resident\n"
               "  -n, --dry-run         plan only: print what would be read\n"
               "  -j, --json            statistics as JSON on stdout\n"
               "  -q, --quiet           no summary\n"
               "  -h, --help            show this help\n");
}

int cmd_replay(int argc, char **argv)
{
        static const struct option opts[] = {
                { "all-ranges", no_argument, NULL, 'A' },
                { "background", no_argument, NULL, 'b' },
                { "no-wait", no_argument, NULL, 'W' },
                { "dry-run", no_argument, NULL, 'n' },
                { "json", no_argument, NULL, 'j' },
                { "quiet", no_argument, NULL, 'q' },
                REPLAY_ENGINE_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_plan_ struct plan *plan = NULL;
        struct engine_options eo;
        struct engine_stats st;
        struct device_profile dev;
        bool arg_json = false, arg_quiet = false, arg_background = false, arg_accessed = true, arg_dry = false;
        uint64_t arg_max = 0, t_start = 0, t_plan = 0;
        int c, r;

        engine_options_default(&eo);
        while ((c = getopt_long(argc, argv, "+m:Q:T:njqh", opts, NULL)) >= 0) {
                r = replay_parse_option(c, optarg, "replay", &eo, &arg_max);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'A': arg_accessed = false; break;
                case 'b': arg_background = true; break;
                case 'W': eo.wait = false; break;
                case 'n': arg_dry = true; break;
                case 'j': arg_json = true; break;
                case 'q': arg_quiet = true; break;
                case 'h': replay_help(); return 0;
                default: return log_usage("replay", "invalid option");
                }
        }
        if (optind + 1 != argc)
                return log_usage("replay", optind == argc ? "missing read-set FILE" : "too many arguments");
        t_start = now_us();
        r = load_readset(argv[optind], &rs);
        if (r < 0)
                return r;
        r = replay_plan(rs, arg_max, arg_accessed, &plan, &dev);
        if (r < 0)
                return log_errno(r, "cannot plan the replay");
        eo.readahead_cap = dev.readahead_cap;
        if (arg_dry) {
                char b1[32], b2[32];
                if (arg_json) {
                        printf("{\"device\": \"%s\", \"rotational\": %s, \"measured\": %s, \"reads\": %zu, "
                               "\"metadata_reads\": %zu, \"bytes\": %" PRIu64 ", \"bytes_over_budget\": %" PRIu64
                               ", \"lookups\": %zu, \"plan_us\": %" PRIu64 "}\n", dev.name,
                               dev.rotational ? "true" : "false", dev.measured ? "true" : "false",
                               plan->n_reads, plan->n_meta, plan->bytes, plan->bytes_cut, plan->n_lookups,
                               now_us() - t_start);
                        return 0;
                }
                printf("device:    %s (%s%s; %u threads, requests up to %s, gaps under %s read through)\n",
                       dev.name, dev.rotational ? "rotational" : "solid-state",
                       dev.measured ? " as probe measured it" : "", engine_threads(&eo),
                       format_bytes(dev.max_request, b1), format_bytes(dev.bridge_bytes, b2));
                printf("plan:      %zu reads (%zu of metadata), %s; %s over the budget\n", plan->n_reads,
                       plan->n_meta, format_bytes(plan->bytes, b1), format_bytes(plan->bytes_cut, b2));
                printf("lookups:   %zu paths to stat%s", plan->n_lookups, eo.lookups ? "" : " (not done: --no-lookups)");
                if (plan->lookups_thinned)
                        printf("; %zu more left out (one per directory in 64; --all-lookups)", plan->lookups_thinned);
                printf("\n");
                return 0;
        }

        if (arg_background) {
                pid_t pid = fork();
                if (pid < 0)
                        return log_errno(-errno, "cannot fork");
                if (pid > 0)
                        return 0;
                /* detached: no terminal, no caller's pipes held open */
                setsid();
                {
                        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                        if (null >= 0) {
                                dup2(null, 0);
                                dup2(null, 1);
                                dup2(null, 2);
                        }
                }
                if (chdir("/") < 0) { /* nothing depends on the directory */ }
                arg_quiet = true;
                arg_json = false;
        }
        t_plan = now_us();
        r = engine_run(rs, plan, &eo, &st);
        if (getenv("READSET_DEBUG"))
                log_info("debug: load+plan %.1f ms, engine %.1f ms (metadata %.1f, data %.1f), "
                         "after engine %.1f ms", (t_plan - t_start) / 1e3, st.elapsed_us / 1e3, st.meta_us / 1e3,
                         st.submit_us / 1e3, (now_us() - t_plan - st.elapsed_us) / 1e3);
        if (r < 0) {
                if (arg_background)
                        _exit(1);
                return log_errno(r, "replay failed");
        }
        if (arg_background)
                _exit(0);
        if (!arg_quiet || arg_json)
                replay_print_stats(&st, plan, arg_json);
        return 0;
}
