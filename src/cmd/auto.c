/* SPDX-License-Identifier: MIT */
/* readset auto: every program start on the machine learned and replayed
 * (daemon/daemon.h): start (the daemon, in the foreground), status,
 * forget, enable, disable. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "daemon/daemon.h"
#include "daemon/programs.h"
#include "daemon/unit.h"
#include "util/signals.h"
#include "util/util.h"
#include "util/banned.h"

struct auto_args {
        const char *store, *config;
        bool json, verbose;
        uint64_t stop_after;
        char *const *rest;
        size_t n_rest;
};

static void auto_help(void)
{
        printf("usage: readset auto start [--store DIR] [--config FILE] [-v]\n"
               "       readset auto status [--json] [--store DIR]\n"
               "       readset auto forget PROGRAM...\n"
               "       readset auto enable\n"
               "       readset auto disable\n"
               "\n"
               "Make every program start on the machine fast without being asked: each\n"
               "exec is seen (fanotify), keyed by its program (and, for interpreters such\n"
               "as sh, python3 or node, by its script), recorded at its first start and\n"
               "replayed beside the later ones, each program in its own closed loop, as\n"
               "run --auto's: where replay does not make its starts faster, they run\n"
               "plain (tried again later); a program whose read set is too small to be\n"
               "worth replaying, or found cached at its exec, costs nothing more.\n"
               "start runs the daemon in the foreground, as " AUTO_UNIT " does;\n"
               "enable and disable turn that unit on and off (systemd); status says per\n"
               "program what was learned and decided; forget drops a program (its path,\n"
               "file name or script).  The kernel command-line word " AUTO_CMDLINE_OFF " keeps\n"
               "the daemon off for one boot.\n"
               "\n"
               "options:\n"
               "      --store DIR      where read sets are kept (default " AUTO_STORE_DIR ",\n"
               "                       root's alone)\n"
               "      --config FILE    rules (default " AUTO_CONFIG "): lines\n"
               "                       'only PREFIX', 'never PREFIX-OR-NAME', 'never-uid UID',\n"
               "                       'window-ms N', 'min-bytes SIZE', 'max-programs N',\n"
               "                       'max-store SIZE'\n"
               "      --stop-after N   start: end once N starts were followed (tests)\n"
               "  -j, --json           status as JSON on stdout\n"
               "  -v, --verbose        start: say every start followed, as it ends\n"
               "  -h, --help           show this help\n");
}

static void say_line(void *userdata, const char *line)
{
        (void)userdata;
        log_info("%s", line);
}

static int auto_start_cmd(const struct auto_args *a)
{
        static volatile sig_atomic_t stop;
        _cleanup_free_ char *text = NULL;
        struct daemon_options o;
        struct daemon_stats st;
        unsigned line;
        int r;

        if (geteuid() != 0)
                return log_error("auto start: the daemon sees every exec on the machine and needs root");
        if (auto_cmdline_off()) {
                log_info("the kernel command line says " AUTO_CMDLINE_OFF ": the daemon stays off this boot");
                return 0;
        }
        daemon_options_init(&o);
        o.store = a->store;
        o.stop_after = a->stop_after;
        if ((r = daemon_options_load(&o, a->config, &text, &line)) < 0)
                return line ? log_error("%s:%u: cannot read this line (see 'readset auto --help')", a->config, line)
                            : log_errno(r, "cannot read '%s'", a->config);
        o.stop = &stop;
        o.say = a->verbose ? say_line : NULL;
        signals_stop_on(&stop);
        r = daemon_run(&o, &st);
        if (r < 0)
                return log_errno(r, "auto start: cannot watch the machine's execs");
        log_info("auto: %" PRIu64 " execs, %" PRIu64 " starts: %" PRIu64 " recorded, %" PRIu64 " replayed, %" PRIu64
                 " plain, %" PRIu64 " warm, %" PRIu64 " off; %" PRIu64 " never learned, %" PRIu64 " inside another, %"
                 PRIu64 " gone before seen, %" PRIu64 " in another mount namespace, %" PRIu64 " not followed (busy)",
                 st.execs, st.starts, st.recorded, st.replayed, st.plain, st.warm, st.off, st.excluded, st.nested,
                 st.gone, st.other_ns, st.busy);
        return 0;
}

static int auto_status_cmd(const struct auto_args *a)
{
        char users[PATH_MAX];
        int r;

        if (access(a->store, R_OK | X_OK) == 0 || errno != EACCES) {
                r = programs_status(stdout, a->store, PROGRAMS_ALL_USERS, a->json);
                if (r == -ENOENT) {
                        if (a->json)
                                printf("{\"programs\":[]}\n");
                        else
                                printf("nothing learned yet (%s)\n", a->store);
                        return 0;
                }
                return r < 0 ? log_errno(r, "cannot read '%s'", a->store) : 0;
        }
        /* the store is root's: a user is told of the starts they ran, as
         * the daemon last wrote them for that user */
        if ((r = programs_users_file(a->store, getuid(), a->json, users, sizeof(users))) < 0)
                return log_errno(r, "cannot name your part of '%s'", a->store);
        r = programs_user_status_print(stdout, users, getuid());
        if (r == -ENOENT) {
                if (a->json)
                        printf("{\"programs\":[]}\n");
                else
                        printf("nothing learned of your starts yet\n");
                return 0;
        }
        return r < 0 ? log_errno(r, "cannot read '%s'", users) : 0;
}

static int auto_forget_cmd(const struct auto_args *a)
{
        int r, code = 0;

        if (a->n_rest == 0)
                return log_usage("auto", "forget: which program?");
        for (size_t i = 0; i < a->n_rest; i++) {
                r = programs_forget(a->store, a->rest[i]);
                if (r < 0)
                        code = log_errno(r, "cannot forget '%s'", a->rest[i]);
                else if (r == 0)
                        code = log_error("nothing learned of '%s'", a->rest[i]);
                else
                        log_info("forgot %d program%s of '%s'", r, r == 1 ? "" : "s", a->rest[i]);
        }
        return code;
}

static int auto_unit_cmd(bool on)
{
        int r;

        if (geteuid() != 0)
                return log_error("auto %s: needs root", on ? "enable" : "disable");
        r = auto_unit_set(on);
        if (r == -ENOMEDIUM)
                return log_error("no systemd here: run 'readset auto start' from your init instead "
                                 "(it stays in the foreground; SIGTERM ends it)");
        if (r == -EIO)
                return log_error("systemctl could not %s %s (it says why above)", on ? "enable" : "disable",
                                 AUTO_UNIT);
        if (r < 0)
                return log_errno(r, "cannot run systemctl %s %s", on ? "enable" : "disable", AUTO_UNIT);
        if (r > 0 && on) {
                log_info("%s enabled: PID 1 is not systemd now, so it starts at the next boot under", AUTO_UNIT);
                log_info("  systemd; without systemd, run 'readset auto start' from your init instead");
        } else if (r > 0)
                log_info("%s disabled (PID 1 is not systemd: nothing was running)", AUTO_UNIT);
        else
                log_info("%s %s", AUTO_UNIT, on ? "enabled and started" : "stopped and disabled");
        return 0;
}

static int auto_enable_cmd(const struct auto_args *a) { (void)a; return auto_unit_cmd(true); }
static int auto_disable_cmd(const struct auto_args *a) { (void)a; return auto_unit_cmd(false); }

static const struct {
        const char *name;
        int (*fn)(const struct auto_args *a);
        bool takes_args;
} subcommands[] = {
        { "start", auto_start_cmd, false },
        { "status", auto_status_cmd, false },
        { "forget", auto_forget_cmd, true },
        { "enable", auto_enable_cmd, false },
        { "disable", auto_disable_cmd, false },
};

const char *auto_subcommand_name(size_t i)
{
        return i < ARRAY_SIZE(subcommands) ? subcommands[i].name : NULL;
}

const char auto_short_options[] = "jvh";
const struct option auto_long_options[] = {
        { "store", required_argument, NULL, 'S' },
        { "config", required_argument, NULL, 'C' },
        { "stop-after", required_argument, NULL, 'A' },
        { "json", no_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_auto(int argc, char **argv)
{
        struct auto_args a = { .store = AUTO_STORE_DIR, .config = AUTO_CONFIG };
        const char *sub;
        int c;

        while ((c = getopt_long(argc, argv, auto_short_options, auto_long_options, NULL)) >= 0) {
                switch (c) {
                case 'S': a.store = optarg; break;
                case 'C': a.config = optarg; break;
                case 'A':
                        if (parse_u64(optarg, &a.stop_after) < 0)
                                return log_usage("auto", "invalid --stop-after '%s'", optarg);
                        break;
                case 'j': a.json = true; break;
                case 'v': a.verbose = true; break;
                case 'h': auto_help(); return 0;
                default: return CMD_OPTION_ERROR(auto, argc, argv);
                }
        }
        if (optind >= argc)
                return log_usage("auto", "missing what to do (start, status, forget, enable, disable)");
        if (a.store[0] != '/')
                return log_usage("auto", "--store wants an absolute path");
        sub = argv[optind++];
        for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++) {
                if (strcmp(sub, subcommands[i].name) != 0)
                        continue;
                a.rest = argv + optind;
                a.n_rest = (size_t)(argc - optind);
                if (a.n_rest && !subcommands[i].takes_args)
                        return log_usage("auto", "%s takes no arguments", sub);
                return subcommands[i].fn(&a);
        }
        return log_usage("auto", "unknown '%s' (start, status, forget, enable, disable)", sub);
}
