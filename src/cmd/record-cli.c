/* SPDX-License-Identifier: MIT */
#include "cmd/record-cli.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/json.h"
#include "util/util.h"
#include "util/banned.h"

char *record_default_output(char *const *cmd)
{
        const char *base = strrchr(cmd[0], '/');
        char *s;

        base = base ? base + 1 : cmd[0];
        if (asprintf(&s, "%s.readset", *base ? base : "cmd") < 0)
                return NULL;
        return s;
}

int record_exec_unrecorded(char *const *cmd)
{
        int e;

        execvp(cmd[0], cmd);
        e = errno;
        log_errno(-e, "cannot run '%s'", cmd[0]);
        return e == ENOENT ? 127 : 126;
}

int record_wait_unrecorded(struct child *c, char *const *cmd)
{
        int e, code, r = child_wait(c);

        if (r < 0)
                return log_errno(r, "cannot wait for '%s'", cmd[0]);
        code = child_exit_code(c, &e);
        if (e)
                log_errno(-e, "cannot run '%s'", cmd[0]);
        return code;
}

void say_recorder_setup_failed(int r, const char *what, bool warn)
{
        char text[256];

        if (r == -ENOENT && what && strncmp(what, "filemap/", 8) == 0)
                snprintf(text, sizeof(text), "this kernel has no trace event '%s' (needs Linux >= 6.x filemap "
                         "events)", what);
        else if (what && strcmp(what, "tracefs") == 0)
                snprintf(text, sizeof(text), "tracefs is not available (mount -t tracefs nodev /sys/kernel/tracing)");
        else
                snprintf(text, sizeof(text), "cannot set up %s: %s", what ? what : "tracing", strerror(-r));
        /* (a warning where the command runs all the same) */
        if (warn)
                log_warning("%s", text);
        else
                log_error("%s", text);
}

void say_recorder_warnings(const struct recorder_status *st, bool setup)
{
        if (setup) {
                if (st->lookups_error < 0)
                        log_warning_errno(st->lookups_error, "path lookups not traced (BPF; READSET_DEBUG=1 tells why)");
                return;
        }
        if (st->paths_drain_error < 0)
                log_warning_errno(st->paths_drain_error, "cannot read fanotify events; names came from the fallbacks");
        if (st->lookups_drain_error < 0)
                log_warning_errno(st->lookups_drain_error, "cannot read lookup events; lookups are incomplete");
}

int record_describe(struct readset *rs, char *const *cmd, bool cold)
{
        if (cold)
                rs->rec_flags |= RS_REC_COLD;
        return readset_set_command(rs, cmd);
}

static void say_debug(const struct recorder_status *st)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        log_info("debug: readset itself used %.1f ms user, %.1f ms system; %" PRIu64 " trace records undecoded; "
                 "fanotify %" PRIu64 " events, %" PRIu64 " marks, %" PRIu64 " overflows; resolved %" PRIu64
                 " by handle, %" PRIu64 " by walk (%" PRIu64 " entries)",
                 ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
                 ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3, st->bad_lines, st->paths.fanotify_events,
                 st->paths.marks, st->paths.fanotify_overflows, st->paths.handle_resolved, st->paths.walk_resolved,
                 st->paths.walked);
        log_info("debug: set-up %.1f ms (tracefs %.1f, bpf %.1f beside it); lookups %.1f, paths %.1f, build %.1f",
                 st->open_ns / 1e6, st->tracefs_ns / 1e6, st->bpf_ns / 1e6, st->lookups_ns / 1e6, st->paths_ns / 1e6,
                 st->build_ns / 1e6);
}

void say_recorded(const struct readset *rs, const struct recorder_status *st, const char *output, bool quiet,
                  bool json)
{
        struct readset_totals t;
        char b1[32], b2[32], path[4 * PATH_MAX + 8];
        uint64_t known;
        double resolved;

        readset_totals(rs, &t);
        known = t.regular_bytes + t.blockdev_bytes;
        resolved = t.bytes ? 100.0 * (double)known / (double)t.bytes : 100.0;
        if (getenv("READSET_DEBUG"))
                say_debug(st);
        if (json) {
                struct json j;
                fflush(stderr);
                json_begin(&j, stderr, false);
                json_object_open(&j, NULL);
                json_string(&j, "output", output);
                json_u64(&j, "files", t.files);
                json_u64(&j, "ranges", t.ranges);
                json_u64(&j, "bytes", t.bytes);
                json_u64(&j, "metadata_bytes", t.blockdev_bytes);
                json_u64(&j, "duration_us", rs->duration_us);
                json_double(&j, "resolved_percent", resolved);
                json_u64(&j, "unresolved_files", t.unresolved_files);
                json_u64(&j, "lost_events", rs->lost_events);
                json_bool(&j, "lookups_traced", rs->rec_flags & RS_REC_LOOKUPS);
                json_u64(&j, "lookups", t.lookups);
                json_u64(&j, "lookups_failed", t.lookups_failed);
                json_u64(&j, "lost_lookups", rs->lookups_lost);
                json_u64(&j, "unresolved_lookups", rs->lookups_unresolved);
                json_object_close(&j);
                json_end(&j);
                return;
        }
        if (quiet)
                return;
        log_info("recorded %" PRIu64 " files, %" PRIu64 " ranges, %s in %.3f s", t.files, t.ranges,
                 format_bytes(t.bytes, b1), rs->duration_us / 1e6);
        log_info("  %s of it metadata; %" PRIu64 " events lost%s", format_bytes(t.blockdev_bytes, b2),
                 rs->lost_events, rs->lost_events ? " (raise --buffer-size)" : "");
        log_info("resolved %.1f%% of bytes to paths (%" PRIu64 " files unresolved)", resolved, t.unresolved_files);
        if (rs->rec_flags & RS_REC_LOOKUPS)
                log_info("path lookups: %" PRIu64 " (%" PRIu64 " failed), %" PRIu64 " lost, %" PRIu64 " unresolved",
                         t.lookups, t.lookups_failed, rs->lookups_lost, rs->lookups_unresolved);
        log_info("wrote '%s'", cmd_fit(output, 17, path, sizeof(path)));
}
