/* SPDX-License-Identifier: MIT */
/* readset keep: a service's page-cache working set kept across its
 * restarts.  Enabling a unit writes its paths in the state directory and
 * a systemd drop-in beside the unit (never the unit's own files) that
 * wants readset-keep-restore@UNIT.service (read back in the background,
 * at idle I/O priority, as the service starts) and
 * readset-keep-save@UNIT.timer (a snapshot every few minutes while it
 * runs), and saves once more when it stops.  Saving is a snapshot
 * (keep/snapshot.h) of the unit's paths and of the files its cgroup's
 * processes have open or mapped, written atomically under the state
 * directory, ranked by the last one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keep/snapshot.h"

#define KEEP_STATE_DIR "/var/lib/readset/keep"
#define KEEP_UNIT_DIR "/etc/systemd/system"
#define KEEP_DROPIN "50-readset-keep.conf"

/* A unit's name as keep takes it: a service ("NAME" becomes
 * "NAME.service"), of the characters systemd allows in a unit's name, at
 * most 255 bytes: 0, or -EINVAL. */
int keep_unit_name(const char *arg, char *buf, size_t size);
/* The name as a template's instance (systemd-escape): 0, or -ENAMETOOLONG. */
int keep_escape(const char *unit, char *buf, size_t size);

struct keep_status {
        uint64_t saved_unix, saved_bytes, saved_files, save_cpu_us, saved_skipped;
        uint64_t restored_unix, restored_bytes, restore_us;
        uint64_t service_bytes;   /* the unit's own memory (not file pages) at the last save while it ran */
};

struct keep_unit {
        char name[256];
        char **paths;
        size_t n_paths;
        struct keep_status st;
        bool have_snapshot;
};
void keep_unit_free(struct keep_unit *u);

/* state/UNIT.FILE ("paths", "readset", "status"). */
int keep_file(const char *state, const char *unit, const char *file, char *buf, size_t size);

/* Kept from now on: the paths (resolved: each must exist) and the drop-in, in
 * unit_dir/UNIT.d/ (bindir: where readset is, for the drop-in's commands).
 * Enabling again replaces the paths.  0 or -errno. */
int keep_enable(const char *state, const char *unit_dir, const char *bindir, const char *unit, char *const *paths,
                size_t n);
/* The drop-in and everything kept of unit removed: 0, -ENOENT (not kept). */
int keep_disable(const char *state, const char *unit_dir, const char *unit);
/* systemctl daemon-reload, where systemd runs and unit_dir is the
 * system's (KEEP_UNIT_DIR): 0, or -errno (-EIO: it failed). */
int keep_reload_systemd(const char *unit_dir);
/* What is kept of unit: -ENOENT when it is not. */
int keep_load(const char *state, const char *unit, struct keep_unit *ret);
/* The units kept, sorted (free each, then the array). */
int keep_list(const char *state, char ***ret, size_t *ret_n);
/* The unit's cgroup (what systemd says, where it runs; else where it puts
 * a system service) as the lines of a /proc/PID/cgroup would name it in
 * the v1 memory and the v2 hierarchies (replay_cgroup_room). */
void keep_unit_cgroup(const char *unit, char *buf, size_t size);

/* A snapshot of the unit's paths and of what its cgroup's processes have
 * open or mapped, ranked by the last one, written over it; the status
 * updated.  -errno. */
int keep_save(const char *state, const char *unit, struct snapshot_result *res);
int keep_status_write(const char *state, const char *unit, const struct keep_status *st);

/* What a restore did. */
struct keep_restored {
        bool had_snapshot;        /* false: nothing saved yet, nothing read */
        uint64_t bytes, us;       /* read, and how long it took */
        uint64_t files_changed;   /* skipped: changed since the save */
        uint64_t reserved;        /* of the cgroup's room, left to the service's own memory */
        int status_error;         /* the status could not be written (-errno), or 0 */
        char fell_back[128];      /* why io_uring could not be used (read ahead instead), or "" */
};
/* The last save read back (a replay session, readset replay's), no more
 * than the unit's memory cgroup has room for; the status updated.
 * -ENOENT: not kept; -errno. */
int keep_restore(const char *state, const char *unit, struct keep_restored *ret);

