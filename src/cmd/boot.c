/* SPDX-License-Identifier: MIT */
/* readset boot: record the boot, replay it at the next one, keep it
 * fresh, and turn itself off where it does not help (the closed loop:
 * boot/history.h).  `boot start` is what readset-boot.service runs before
 * sysinit; enable, disable, status and stale are the user's and dpkg's. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boot/history.h"
#include "boot/session.h"
#include "boot/state.h"
#include "boot/system.h"
#include "cmd/boot-cli.h"
#include "cmd/cmd.h"
#include "util/json.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

static void boot_help(void)
{
        printf("usage: readset boot enable|disable|status|stale [OPTIONS]\n"
               "       readset boot start [OPTIONS]          (what readset-boot.service runs)\n"
               "\n"
               "Make boots fast: the next boot is recorded, later boots replay what the last\n"
               "few read (pages most of them used), before sysinit, with the device's plan,\n"
               "at best-effort I/O priority, while recording again.  Every boot's duration\n"
               "(systemd's \"Startup finished\") and hit ratio are kept; where replay does\n"
               "not make boots faster, it turns itself off and tries again 16 boots later.\n"
               "A package upgrade marks the read set stale (a dpkg trigger); the next boot\n"
               "records anew.  'readset=off' on the kernel command line turns readset off\n"
               "for one boot.  Needs root.\n"
               "\n"
               "  enable     boot with readset from the next boot on (readset-boot.service)\n"
               "  disable    back to a plain boot: the unit disabled, every read set and the\n"
               "             history removed\n"
               "  status     whether it is on, what the next boot does and why, the last boots\n"
               "  stale      mark the read set stale (--why TEXT says why)\n"
               "  start      the boot's session: replay and/or record until the boot finished\n"
               "\n"
               "options:\n"
               "      --state DIR      keep the read sets and history in DIR (default\n"
               "                       " BOOT_STATE_DIR ")\n"
               "  -j, --json           status as JSON on stdout\n"
               "      --last N         status: the last N boots (default 10)\n"
               "      --why TEXT       stale: why\n"
               "      --under DIR      start: keep only files below DIR (a boot driven from\n"
               "                       outside, e.g. a container's root)\n"
               "      --finished-from-stdin\n"
               "                       start: say \"ready\" on stdout once set up, and take\n"
               "                       the boot as finished at a line on stdin (its duration\n"
               "                       in seconds, or empty) instead of asking systemd\n"
               "      --settle MS      start: record MS more after the boot finished\n"
               "                       (default %d)\n"
               "  -h, --help           show this help\n", BOOT_SETTLE_MS);
}

/* 0, or said (CMD_FAILED) when dir is not root's alone */
static int check_state(const char *dir)
{
        char why[512];
        int r = boot_state_check(dir, why, sizeof(why));

        return r < 0 ? boot_say_refused(dir, r, why) : 0;
}

/* ---- enable, disable, stale ------------------------------------------ */

static int boot_enable(const struct boot_args *a)
{
        struct boot_state p;
        int r;

        boot_state_paths(a->state, &p);
        if (geteuid() != 0)
                return log_error("readset boot enable needs root");
        if ((r = boot_state_make_dir(a->state)) < 0)
                return log_errno(r, "cannot create '%s'", a->state);
        if ((r = check_state(a->state)) != 0)
                return r;
        if ((r = boot_state_enable(&p)) < 0)
                return log_errno(r, "cannot write '%s'", p.enabled);
        if (boot_unit_enable(a->state) < 0) {
                unlink(p.enabled);
                return log_error("systemctl enable %s failed (is readset installed with its units?)", BOOT_UNIT);
        }
        cmd_info_wrapped("enabled: the next boot is recorded, later boots replay it ('readset boot status')");
        return 0;
}

static void say_not_removed(void *userdata, const char *path, int err)
{
        (void)userdata;
        (void)log_errno(err, "cannot remove '%s'", path);
}

static int boot_disable(const struct boot_args *a)
{
        struct boot_state p;
        int r = 0, dir_err;

        boot_state_paths(a->state, &p);
        if (geteuid() != 0)
                return log_error("readset boot disable needs root");
        boot_unit_disable(a->state);
        /* what readset made there, by name; anything else stays */
        r = boot_state_remove(&p, say_not_removed, NULL, &dir_err) < 0 ? CMD_FAILED : 0;
        if (dir_err < 0)
                log_warning("left '%s': %s (files readset did not make)", a->state, strerror(-dir_err));
        if (r == 0)
                log_info("disabled: boots are plain again; its read sets and history are removed");
        return r;
}

static int boot_stale(const struct boot_args *a)
{
        struct boot_state p;
        int r;

        boot_state_paths(a->state, &p);
        if (!boot_state_has(p.enabled))
                return 0;       /* nothing to mark: dpkg calls this whatever the state */
        if ((r = check_state(a->state)) != 0)
                return r;
        if ((r = boot_state_mark_stale(&p, a->why)) < 0)
                return log_errno(r, "cannot write '%s'", p.stale);
        return 0;
}

/* ---- status ------------------------------------------------------------ */

static void format_when(uint64_t t, char *buf, size_t size)
{
        time_t tt = (time_t)t;
        struct tm tm;

        if (!gmtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
                snprintf(buf, size, "?");
}

static void status_json(const struct boot_args *a, bool enabled, const struct boot_status *st, size_t from)
{
        const struct history *h = &st->h;
        const struct loop_decision *d = &st->d;
        const struct readset_totals *t = &st->t;
        struct json j;

        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_bool(&j, "enabled", enabled);
        json_string(&j, "state", a->state);
        json_string(&j, "next", enabled ? start_mode_name(d->mode) : "disabled");
        json_string(&j, "why", enabled ? d->why : "readset boot is not enabled");
        json_bool(&j, "off", enabled && d->off);
        json_bool(&j, "stale", st->stale != NULL);
        if (st->stale)
                json_string(&j, "stale_why", st->stale);
        json_object_open(&j, "read_set");
        json_bool(&j, "present", st->have_plan);
        json_u64(&j, "files", t->files);
        json_u64(&j, "bytes", t->bytes);
        json_object_close(&j);
        json_u64(&j, "history_malformed_lines", st->bad);
        json_array_open(&j, "boots");
        for (size_t i = from; i < h->n; i++) {
                const struct start_entry *e = &h->e[i];
                json_object_open(&j, NULL);
                json_u64(&j, "at", e->at_unix);
                json_string(&j, "mode", start_mode_name(e->mode));
                json_double(&j, "seconds", e->total_us / 1e6);
                json_u64(&j, "bytes_read", e->replayed_bytes);
                json_u64(&j, "used_bytes", e->used_bytes);
                if (e->hit >= 0)
                        json_double(&j, "hit_ratio", e->hit);
                json_u64(&j, "lost_events", e->dropped);
                json_u64(&j, "files_changed", e->changed);
                json_string(&j, "note", e->note);
                json_object_close(&j);
        }
        json_array_close(&j);
        json_object_close(&j);
        json_end(&j);
}

/* One boot of the table, its note last (on lines of its own where it
 * does not fit) */
static void print_boot_row(const struct start_entry *e)
{
        char when[32], hit[16], sec[16];
        int n;

        format_when(e->at_unix, when, sizeof(when));
        snprintf(hit, sizeof(hit), e->hit >= 0 ? "%.0f%%" : "-", e->hit * 100);
        snprintf(sec, sizeof(sec), e->total_us ? "%.3f" : "-", e->total_us / 1e6);
        n = printf("%-16s  %-13s  %8s  %7.1f MB  %5s", when, start_mode_name(e->mode), sec,
                   e->replayed_bytes / 1e6, hit);
        if (!e->note[0])
                printf("\n");
        else if ((size_t)n + 2 + strlen(e->note) <= CMD_COLUMNS)
                printf("  %s\n", e->note);
        else {
                printf("\n");
                cmd_printf_wrapped("    ", "    %s", e->note);
        }
}

static void status_text(bool enabled, const struct boot_status *st, size_t from)
{
        const struct history *h = &st->h;
        const struct loop_decision *d = &st->d;
        const struct readset_totals *t = &st->t;

        printf("readset boot: %s\n", enabled ? "enabled" : "disabled");
        if (!enabled)
                return;
        cmd_printf_wrapped("              ", "next boot:    %s (%s)", start_mode_name(d->mode), d->why);
        if (st->have_plan)
                printf("read set:     %" PRIu64 " files, %.1f MB%s\n", t->files, t->bytes / 1e6,
                       st->stale ? " (stale)" : "");
        else
                printf("read set:     none yet\n");
        if (h->n == 0) {
                printf("no boot measured yet\n");
                return;
        }
        printf("\n%-16s  %-13s  %8s  %9s  %5s  %s\n", "boot (UTC)", "mode", "seconds", "replayed", "hit", "note");
        for (size_t i = from; i < h->n; i++)
                print_boot_row(&h->e[i]);
        if (st->bad)
                printf("(%u line%s of the history did not parse and were left out)\n", st->bad, st->bad == 1 ? "" : "s");
}

static int boot_status(const struct boot_args *a)
{
        struct boot_state p;
        struct boot_status st;
        size_t from;
        bool enabled;
        int r;

        boot_state_paths(a->state, &p);
        enabled = boot_state_has(p.enabled);
        if (enabled && (r = check_state(a->state)) != 0)
                return r;
        if ((r = boot_state_status(&p, &st)) < 0)
                return log_errno(r, "cannot read '%s'", p.history);
        from = st.h.n > a->last ? st.h.n - a->last : 0;
        if (a->json)
                status_json(a, enabled, &st, from);
        else
                status_text(enabled, &st, from);
        return 0;
}

/* ---- the verb ------------------------------------------------------------ */

/* What readset boot does: cmd_boot runs the one named, main.c's
 * completion offers their names. */
static const struct {
        const char *name;
        int (*fn)(const struct boot_args *a);
} subcommands[] = {
        { "enable", boot_enable },
        { "disable", boot_disable },
        { "status", boot_status },
        { "stale", boot_stale },
        { "start", boot_start },
};

const char *boot_subcommand_name(size_t i)
{
        return i < ARRAY_SIZE(subcommands) ? subcommands[i].name : NULL;
}

/* "enable, disable, ..." */
static const char *subcommand_list(char *buf, size_t size)
{
        size_t n = 0;

        buf[0] = 0;
        for (size_t i = 0; i < ARRAY_SIZE(subcommands) && n < size; i++)
                n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", subcommands[i].name);
        return buf;
}

/* The options of readset boot, as getopt reads them (main.c lists them for
 * completion and the tests). */
/* -n: --last for this release (cmd_old_letter) */
const char boot_short_options[] = "jn:h";
const struct option boot_long_options[] = {
        { "state", required_argument, NULL, 'S' },
        { "json", no_argument, NULL, 'j' },
        { "last", required_argument, NULL, 'L' },
        { "why", required_argument, NULL, 'W' },
        { "under", required_argument, NULL, 'U' },
        { "finished-from-stdin", no_argument, NULL, 'F' },
        { "settle", required_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_boot(int argc, char **argv)
{
        struct boot_args a = { .state = BOOT_STATE_DIR, .last = 10, .settle_ms = BOOT_SETTLE_MS };
        const char *sub;
        char list[128];
        uint64_t v;
        int c;

        while ((c = getopt_long(argc, argv, boot_short_options, boot_long_options, NULL)) >= 0) {
                switch (c) {
                case 'S': a.state = optarg; break;
                case 'j': a.json = true; break;
                case 'n':
                        say_old_letter("boot", c);
                        /* fall through */
                case 'L':
                        if (parse_u64(optarg, &v) < 0 || v == 0 || v > HISTORY_MAX)
                                return log_usage("boot", "invalid --last '%s' (1..%d)", optarg, HISTORY_MAX);
                        a.last = (unsigned)v;
                        break;
                case 'W': a.why = optarg; break;
                case 'U': a.under = optarg; break;
                case 'F': a.from_stdin = true; break;
                case 's':
                        if (parse_u64(optarg, &a.settle_ms) < 0 || a.settle_ms > 60000)
                                return log_usage("boot", "invalid --settle '%s' (0..60000 ms)", optarg);
                        break;
                case 'h': boot_help(); return 0;
                default: return CMD_OPTION_ERROR(boot, argc, argv);
                }
        }
        if (optind >= argc)
                return log_usage("boot", "missing what to do (%s)", subcommand_list(list, sizeof(list)));
        if (optind != argc - 1)
                return log_usage("boot", "one thing to do at a time");
        if (a.state[0] != '/')
                return log_usage("boot", "--state wants an absolute path");
        if (a.under && a.under[0] != '/')
                return log_usage("boot", "--under wants an absolute path");
        sub = argv[optind];
        for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
                if (strcmp(sub, subcommands[i].name) == 0)
                        return subcommands[i].fn(&a);
        return log_usage("boot", "unknown '%s' (%s)", sub, subcommand_list(list, sizeof(list)));
}
