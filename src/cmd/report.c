/* SPDX-License-Identifier: MIT */
/* readset report: what a cold start read, where it lies on the device, what
 * it costs there and on a reference device, and what stands out. */
#include <getopt.h>
#include <limits.h>

#include "cmd/cmd.h"
#include "cmd/report-cli.h"
#include "fs/extents.h"
#include "report/profiles.h"
#include "report/render.h"
#include "report/report.h"
#include "report/summary.h"
#include "report/svg.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

static void report_help(void)
{
        printf("usage: readset report [OPTIONS] FILE\n"
               "\n"
               "Show why the cold start recorded in FILE is slow: what was read (totals, top\n"
               "files and directories), where it lies on the device (FIEMAP: extents, moves\n"
               "of the head in first-access order, seek distances, fragmentation), what it\n"
               "costs on this machine and on a reference device now, with readset replay (the\n"
               "very plan readset replay makes) and after a contiguous layout, and\n"
               "plain-language findings.\n"
               "\n"
               "options:\n"
               "  -d, --device NAME    the reference device (default hdd):\n");
        print_device_names(23);
        printf("  -p, --profile NAME   this machine's profile (readset probe -o writes one; any\n"
               "                       NAME --device takes); replay is predicted as readset\n"
               "                       replay --device NAME plans it.  Default: the one cached\n"
               "                       for the device, else a quick probe, cached\n"
               "      --no-probe       never probe: predict for the reference device only\n"
               "                       unless a profile is given or cached\n"
               "      --top N          files and directories listed (default 5)\n"
               "  -j, --json           the report as JSON on stdout\n"
               "      --svg OUT        also draw the disk access graph to OUT (SVG)\n"
               "  -q, --quiet          no notes on stderr (errors and warnings still)\n"
               "      --allow-untrusted\n"
               "                       as root, read files others can change too\n"
               "                       (docs/SECURITY.md)\n"
               "  -h, --help           show this help\n"
               "\n"
               "Reference profiles live in %s.\n", READSET_PROFILEDIR);
}

enum { OPT_TOP = 0x100, OPT_SVG };

/* The options of readset report, as getopt reads them (main.c lists them for
 * completion and the tests). */
/* -n and -s: --top and --svg for this release (cmd_old_letter) */
const char report_short_options[] = "d:p:n:js:qh";
const struct option report_long_options[] = {
        { "device", required_argument, NULL, 'd' },
        { "profile", required_argument, NULL, 'p' },
        { "no-probe", no_argument, NULL, 'P' },
        { "top", required_argument, NULL, OPT_TOP },
        { "json", no_argument, NULL, 'j' },
        { "svg", required_argument, NULL, OPT_SVG },
        { "quiet", no_argument, NULL, 'q' },
        TRUST_LONG_OPTION,
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_report(int argc, char **argv)
{
        const char *arg_device = "hdd", *arg_profile = NULL, *arg_svg = NULL, *first = NULL;
        bool arg_json = false, arg_probe = true;
        uint64_t arg_top = 5;
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_report_ struct report *r = NULL;
        struct rp_layout *layouts = NULL;
        struct extents_counts counts = {};
        struct report_column cols[2] = {};
        struct report_summary sum = {};
        struct report_doc doc = {};
        struct replay_args here;        /* how readset replay would plan here */
        struct replay_options ref_opts;
        struct device_profile local_dev, here_dev, ref_dev;
        struct device_name name;
        char path[PATH_MAX], why[512] = "";
        int c, ret = CMD_FAILED, e;

        while ((c = getopt_long(argc, argv, report_short_options, report_long_options, NULL)) >= 0) {
                switch (c) {
                case 'd':
                        if (cmd_device_name("report", "--device", optarg, &name) < 0)
                                return CMD_USAGE;
                        arg_device = optarg;
                        break;
                case 'p':
                        if (cmd_device_name("report", "--profile", optarg, &name) < 0)
                                return CMD_USAGE;
                        arg_profile = optarg;
                        break;
                case 'P': arg_probe = false; break;
                case 'j': arg_json = true; break;
                case 's':
                        say_old_letter("report", c);
                        /* fall through */
                case OPT_SVG: arg_svg = optarg; break;
                case 'q': log_set_quiet(true); break;
                case 'n':
                        say_old_letter("report", c);
                        /* fall through */
                case OPT_TOP:
                        if (parse_u64(optarg, &arg_top) < 0 || arg_top < 1 || arg_top > 1000)
                                return log_usage("report", "invalid --top '%s' (1..1000)", optarg);
                        break;
                case CMD_OPT_ALLOW_UNTRUSTED: trust_allow_untrusted(); break;
                case 'h': report_help(); return 0;
                default: return CMD_OPTION_ERROR(report, argc, argv);
                }
        }
        if (optind + 1 != argc)
                return log_usage("report", optind == argc ? "missing read set file" : "too many arguments");
        doc.path = argv[optind];
        if (cmd_load_readset(doc.path, &rs) < 0)
                return CMD_FAILED;

        /* the reference first: a bad option fails before any work */
        if ((e = report_profile_path(arg_device, path, sizeof(path))) < 0)
                return log_errno(e, "cannot find the profile '%s'%s", arg_device,
                                 e == -ENOENT ? " (a reference profile: not installed in " READSET_PROFILEDIR ")" : "");
        e = report_profile_load(path, arg_device, &cols[1].profile, why, sizeof(why));
        if (e == -EPERM && why[0])
                return say_cannot_read(path, e, why);
        if (e < 0)
                return log_errno(e, "cannot use the profile '%s' (%s)", arg_device, path);
        snprintf(cols[1].profile.name, sizeof(cols[1].profile.name), "%.60s", rp_tail(arg_device, 40, path, sizeof(path)));

        /* this machine: the device most bytes come from, planned as readset
         * replay would (--profile FILE: as replay --device FILE), costed by
         * its profile when one is known */
        replay_args_init(&here);
        if (readset_main_file(rs, &first) < 0)
                return log_errno(-ENOMEM, "out of memory");
        if (replay_args_device(&here, rs, &local_dev) < 0)
                return CMD_FAILED;
        if (arg_profile) {
                if ((e = report_profile_path(arg_profile, path, sizeof(path))) < 0)
                        return log_errno(e, "cannot find the profile '%s'%s", arg_profile,
                                         e == -ENOENT ? " (a reference profile: not installed in " READSET_PROFILEDIR ")" :
                                                        "");
                e = report_profile_load(path, "this machine", &cols[0].profile, why, sizeof(why));
                if (e == -EPERM && why[0])
                        return say_cannot_read(path, e, why);
                if (e < 0)
                        return log_errno(e, "cannot use the profile '%s'", arg_profile);
                doc.n_cols = 1;
                if (replay_options_set_device(&here.opts.policy, arg_profile, why, sizeof(why)) < 0)
                        log_warning("'%s' has no rotational verdict: replay is planned for %s", arg_profile, local_dev.name);
        } else if (first) {
                _cleanup_free_ char *dir = strndup(first, (size_t)(strrchr(first, '/') - first));
                if (!dir)
                        return log_errno(-ENOMEM, "out of memory");
                e = say_local_profile(*dir ? dir : "/", arg_probe, &cols[0].profile);
                if (e >= 0)
                        doc.n_cols = 1;
                else if (arg_probe) {
                        log_warning_errno(e, "no profile of this machine's device");
                        log_info("  (predicted for the reference device only)");
                }
        }
        /* the device readset replay plans for here: --profile's verdict, else the one found */
        here_dev = here.opts.policy.have_device ? here.opts.policy.device : local_dev;
        if (doc.n_cols == 1)
                snprintf(cols[0].profile.name, sizeof(cols[0].profile.name), "this machine (%.40s)",
                         first ? local_dev.name : "?");
        cols[doc.n_cols++] = cols[1];

        /* positions, once: the analysis, the graph and the plans use them */
        e = report_analyse(rs, MIN(local_dev.readahead_cap, local_dev.max_request), &layouts, &counts, &r);
        doc.extent_skipped = counts.unknown;
        doc.unwritten = counts.unwritten;
        if (e == -E2BIG)
                log_error("the read set is too large to analyse (more than %u pieces)", RP_MAX_PIECES);
        else if (e < 0)
                log_errno(e, "cannot analyse the read set");
        for (size_t i = 0; e >= 0 && i < doc.n_cols; i++) {
                bool reference = i == doc.n_cols - 1;
                if (reference) {
                        replay_options_init(&ref_opts);
                        if (cols[i].profile.rotational)
                                device_profile_rotational(&ref_dev);
                        else
                                device_profile_solid(&ref_dev);
                }
                e = report_predict_replay(r, rs, layouts, &cols[i].profile, reference ? &ref_opts : &here.opts.policy,
                                          reference ? &ref_dev : &here_dev, !reference, reference, &cols[i].s);
                if (e < 0)
                        log_errno(e, "cannot predict the cost");
        }
        if (e >= 0 && (e = report_summarize(rs, r, &cols[doc.n_cols - 1], &sum)) < 0)
                log_errno(e, "out of memory");
        if (e >= 0 && arg_svg && (e = report_svg_write(arg_svg, rs, r)) < 0)
                log_errno(e, "cannot write '%s'", arg_svg);
        if (e >= 0) {
                doc.rs = rs;
                doc.r = r;
                doc.cols = cols;
                doc.top = arg_top;
                doc.sum = &sum;
                (arg_json ? report_write_json : report_write_text)(stdout, &doc);
                ret = 0;
        }
        report_summary_free(&sum);
        extents_table_free(layouts, rs->n_files);
        return ret;
}
