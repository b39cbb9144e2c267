/* SPDX-License-Identifier: MIT */
/* readset keep: a service's page-cache working set kept across its
 * restarts (keep/keep.h): enable, disable, status, and what the units run,
 * save and restore. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "keep/keep.h"
#include "util/ioprio.h"
#include "util/json.h"
#include "util/util.h"
#include "util/banned.h"

#ifndef READSET_BINDIR
#define READSET_BINDIR "/usr/bin"
#endif

struct keep_args {
        const char *state, *unit_dir;
        bool json;
        char unit[256];
        char *const *paths;
        size_t n_paths;
};

static void keep_help(void)
{
        printf("usage: readset keep enable UNIT PATH...\n"
               "       readset keep disable UNIT\n"
               "       readset keep status [--json] [UNIT]\n"
               "       readset keep save UNIT\n"
               "       readset keep restore UNIT\n"
               "\n"
               "Keep a service's page-cache working set across its restarts: what the\n"
               "page cache holds of the files below each PATH, and of those the unit's\n"
               "processes have open or mapped, is saved (readset snapshot) every five\n"
               "minutes while it runs and when it stops, and read back in one sweep,\n"
               "at idle I/O priority and no more than the unit's memory cgroup has room\n"
               "for, as it starts.\n"
               "enable writes a systemd drop-in beside the unit (UNIT.d/" KEEP_DROPIN ");\n"
               "the unit's own files are not changed.  save and restore are what the\n"
               "units run; status says, per unit, the last save and the last restore.\n"
               "\n"
               "options:\n"
               "      --state DIR      where the snapshots are kept (default\n"
               "                       " KEEP_STATE_DIR ")\n"
               "      --unit-dir DIR   where the drop-in goes (default " KEEP_UNIT_DIR ")\n"
               "  -j, --json           status as JSON on stdout\n"
               "  -h, --help           show this help\n");
}

/* refused for want of root: say so, and how (the state and the drop-ins
 * are root's) */
static int keep_errno(int r, const char *verb, const char *what, const char *unit)
{
        if ((r == -EACCES || r == -EPERM) && geteuid() != 0)
                return log_error("%s '%s': %s (readset keep %s needs root: sudo readset keep %s %s ...)", what, unit,
                                 strerror(-r), verb, verb, unit);
        return log_errno(r, "%s '%s'", what, unit);
}

static int keep_enable_cmd(const struct keep_args *a)
{
        int r;

        if (!a->n_paths)
                return log_usage("keep", "enable: which files? (enable UNIT PATH...: the service's data directory)");
        r = keep_enable(a->state, a->unit_dir, READSET_BINDIR, a->unit, a->paths, a->n_paths);
        if (r < 0)
                return keep_errno(r, "enable", "cannot keep", a->unit);
        r = keep_reload_systemd(a->unit_dir);
        if (r < 0)
                log_warning_errno(r, "systemctl daemon-reload failed: the drop-in counts from systemd's next reload");
        log_info("kept: %s; its working set is saved every 5 minutes and when it stops, read back when it starts",
                 a->unit);
        return 0;
}

static int keep_disable_cmd(const struct keep_args *a)
{
        int r = keep_disable(a->state, a->unit_dir, a->unit);

        if (r == -ENOENT)
                return log_error("'%s' is not kept", a->unit);
        if (r < 0)
                return keep_errno(r, "disable", "cannot stop keeping", a->unit);
        r = keep_reload_systemd(a->unit_dir);
        if (r < 0)
                log_warning_errno(r, "systemctl daemon-reload failed: the drop-in is gone from systemd's next reload");
        log_info("not kept any more: %s (its drop-in and snapshot removed)", a->unit);
        return 0;
}

static int keep_save_cmd(const struct keep_args *a)
{
        struct snapshot_result res;
        char b[32];
        int r;

        (void)io_priority_set(IO_PRIORITY_IDLE);
        r = keep_save(a->state, a->unit, &res);
        if (r == -ENOENT)
                return log_error("'%s' is not kept (readset keep enable %s PATH...)", a->unit, a->unit);
        if (r < 0)
                return keep_errno(r, "save", "cannot save the working set of", a->unit);
        log_info("saved %s of %s: %" PRIu64 " files", format_bytes(res.bytes_cached, b), a->unit, res.files_cached);
        return 0;
}

static int keep_restore_cmd(const struct keep_args *a)
{
        struct keep_restored res;
        char b[32], b2[32];
        int r;

        (void)io_priority_set(IO_PRIORITY_IDLE);
        r = keep_restore(a->state, a->unit, &res);
        if (r == -ENOENT)
                return log_error("'%s' is not kept (readset keep enable %s PATH...)", a->unit, a->unit);
        if (r < 0)
                return keep_errno(r, "restore", "cannot read back the working set of", a->unit);
        if (!res.had_snapshot) {
                log_info("nothing saved of %s yet: nothing to read back", a->unit);
                return 0;
        }
        if (res.status_error < 0)
                log_warning_errno(res.status_error, "cannot write the status of '%s'", a->unit);
        if (res.fell_back[0])
                log_warning("io_uring is unavailable: %s; read back with readahead(2), whose queue the "
                            "service's own reads may wait behind", res.fell_back);
        log_info("read back %s of %s in %.2f s (%" PRIu64 " files changed since the save, skipped; %s of its "
                 "memory cgroup left to the service itself)",
                 format_bytes(res.bytes, b), a->unit, (double)res.us / 1e6, res.files_changed,
                 format_bytes(res.reserved, b2));
        return 0;
}

static void status_unit_json(struct json *j, const struct keep_unit *u)
{
        json_object_open(j, NULL);
        json_string(j, "unit", u->name);
        json_array_open(j, "paths");
        for (size_t i = 0; i < u->n_paths; i++)
                json_string(j, NULL, u->paths[i]);
        json_array_close(j);
        json_u64(j, "saved_unix", u->st.saved_unix);
        json_u64(j, "saved_bytes", u->st.saved_bytes);
        json_u64(j, "saved_files", u->st.saved_files);
        json_u64(j, "save_cpu_us", u->st.save_cpu_us);
        json_u64(j, "saved_skipped", u->st.saved_skipped);
        json_u64(j, "restored_unix", u->st.restored_unix);
        json_u64(j, "restored_bytes", u->st.restored_bytes);
        json_u64(j, "restore_us", u->st.restore_us);
        json_u64(j, "service_bytes", u->st.service_bytes);
        json_object_close(j);
}

static const char *when(uint64_t unix_s, char *buf, size_t size)
{
        time_t t = (time_t)unix_s;
        struct tm tm;

        if (!unix_s || !localtime_r(&t, &tm))
                return "never";
        strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
        return buf;
}

static void status_unit_text(const struct keep_unit *u)
{
        char w1[64], w2[64], b1[32], b2[32];

        printf("%s\n", u->name);
        for (size_t i = 0; i < u->n_paths; i++)
                printf("  path:     %s\n", u->paths[i]);
        printf("  saved:    %s, %s in %" PRIu64 " files (%.2f s of CPU)\n", when(u->st.saved_unix, w1, sizeof(w1)),
               format_bytes(u->st.saved_bytes, b1), u->st.saved_files, (double)u->st.save_cpu_us / 1e6);
        printf("  restored: %s, %s read in %.2f s\n", when(u->st.restored_unix, w2, sizeof(w2)),
               format_bytes(u->st.restored_bytes, b2), (double)u->st.restore_us / 1e6);
}

static int keep_status_cmd(const struct keep_args *a)
{
        char **names = NULL;
        size_t n = 0;
        struct json j;
        int r = a->unit[0] ? 0 : keep_list(a->state, &names, &n);

        if (r < 0)
                return log_errno(r, "cannot list '%s'", a->state);
        if (a->json) {
                json_begin(&j, stdout, true);
                json_array_open(&j, NULL);
        }
        for (size_t i = 0; i < (a->unit[0] ? 1 : n); i++) {
                struct keep_unit u;
                const char *name = a->unit[0] ? a->unit : names[i];
                r = keep_load(a->state, name, &u);
                if (r == -ENOENT && a->unit[0] && !a->json)
                        log_info("'%s' is not kept", name);
                if (r < 0)
                        continue;
                if (a->json)
                        status_unit_json(&j, &u);
                else
                        status_unit_text(&u);
                keep_unit_free(&u);
        }
        if (a->json) {
                json_array_close(&j);
                json_end(&j);
        } else if (!a->unit[0] && n == 0) {
                log_info("no unit is kept (readset keep enable UNIT PATH...)");
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return 0;
}

static const struct {
        const char *name;
        int (*fn)(const struct keep_args *a);
        bool needs_unit;
} subcommands[] = {
        { "enable", keep_enable_cmd, true },
        { "disable", keep_disable_cmd, true },
        { "status", keep_status_cmd, false },
        { "save", keep_save_cmd, true },
        { "restore", keep_restore_cmd, true },
};

const char *keep_subcommand_name(size_t i)
{
        return i < ARRAY_SIZE(subcommands) ? subcommands[i].name : NULL;
}

const char keep_short_options[] = "jh";
const struct option keep_long_options[] = {
        { "state", required_argument, NULL, 'S' },
        { "unit-dir", required_argument, NULL, 'U' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_keep(int argc, char **argv)
{
        struct keep_args a = { .state = KEEP_STATE_DIR, .unit_dir = KEEP_UNIT_DIR };
        const char *sub;
        int c;

        while ((c = getopt_long(argc, argv, keep_short_options, keep_long_options, NULL)) >= 0) {
                switch (c) {
                case 'S': a.state = optarg; break;
                case 'U': a.unit_dir = optarg; break;
                case 'j': a.json = true; break;
                case 'h': keep_help(); return 0;
                default: return CMD_OPTION_ERROR(keep, argc, argv);
                }
        }
        if (optind >= argc)
                return log_usage("keep", "missing what to do (enable, disable, status, save, restore)");
        if (a.state[0] != '/' || a.unit_dir[0] != '/')
                return log_usage("keep", "--state and --unit-dir want absolute paths");
        sub = argv[optind++];
        for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++) {
                if (strcmp(sub, subcommands[i].name) != 0)
                        continue;
                if (optind < argc && keep_unit_name(argv[optind], a.unit, sizeof(a.unit)) < 0)
                        return log_usage("keep", "'%s' is not a service's name", argv[optind]);
                if (optind < argc)
                        optind++;
                else if (subcommands[i].needs_unit)
                        return log_usage("keep", "%s: which unit?", sub);
                a.paths = argv + optind;
                a.n_paths = (size_t)(argc - optind);
                if (a.n_paths && strcmp(sub, "enable") != 0)
                        return log_usage("keep", "%s takes one unit, no paths", sub);
                return subcommands[i].fn(&a);
        }
        return log_usage("keep", "unknown '%s' (enable, disable, status, save, restore)", sub);
}
