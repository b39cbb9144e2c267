/* SPDX-License-Identifier: MIT */
/* run's steps around the modules it drives (format, policy, recorder,
 * store, compare): each says what went wrong itself, so that cmd_run reads
 * as the order of events. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "record/recorder.h"
#include "util/child.h"

/* The read set's file, loaded before anything runs. */
struct run_loaded {
        const char *file;
        uint8_t *buf;              /* NULL: no read set to replay (none yet, or unusable) */
        size_t len;
        bool plan_first;           /* its data is on a rotational device: plan before the start */
        struct replay_args *a;
};

/* Would a replay beside the command only compete with it?  Where --root is
 * mounted from an xz-compressed squashfs image (said with -v). */
bool run_waits_for_cpu(const struct replay_args *a);

/* --auto DIR: made if need be; *ret the command's read set in it.  -errno
 * when it cannot be used (said, as a warning: the command runs without
 * readset). */
int run_auto_prepare(const char *dir, char *const *cmd, char **ret);
/* What runs of file killed outright while recording left in dir, removed
 * (said): by a run that records (the others do not list the directory, which
 * may hold thousands of programs' read sets, before the command). */
void run_auto_remove_left(const char *dir, const char *file);
/* Load file (with --auto, a missing one is no read set yet), check its
 * header, find where its data lies.  A read set that cannot be used is
 * said once, as a warning, and left out (ld->buf NULL): the command runs
 * without a replay or, with --auto, is recorded anew.  0. */
int run_load(const char *file, struct replay_args *a, bool is_auto, struct run_loaded *ld);
/* Decode what run_load() kept (*ret_rs NULL when it cannot be: said, as a
 * warning; the command runs without a replay).  0. */
int run_decode(struct run_loaded *ld, bool is_auto, struct readset **ret_rs);
void run_loaded_free(struct run_loaded *ld);

/* Recording the command beside the replay (--stats, --auto). */
struct run_recording {
        bool on;
        struct recorder_setup *setup;
};
/* Set up in a thread of its own; release(c) lets the gated command go once
 * it follows it (or could not: the command then runs unrecorded). */
void run_record_start(struct run_recording *rr, struct child *c, void (*release)(void *userdata));
/* After the command ended (ran: it could be run at all): its recording
 * compared with old (may be NULL), with --auto (auto_file) kept as the read
 * set when that was stale (below stale_percent still used) or missing,
 * and --stats said (stats not NULL; as JSON too: the last line, with the
 * files the replay skipped, from a).  Joins
 * the set-up thread: before child_close().  Whether stats were said. */
bool run_record_finish(struct run_recording *rr, const struct child *c, char *const *cmd, bool ran,
                       const struct readset *old, const char *auto_file, uint64_t stale_percent,
                       const struct replay_result *stats, const struct replay_args *a, bool json, int code);
/* run --json without --stats: what run did, one JSON object on the last
 * line of standard error: whether it replayed, the command's exit status
 * and (res, rs: replayed) the replay's figures, as replay --json's. */
void say_run_json(const struct replay_result *res, const struct readset *rs, int code);
/* The command run plain, where readset cannot help at all: exec'd, or
 * with --json (json) run and waited for, so that what run did is said.
 * Its exit status (126, 127: it could not be run, said). */
int run_plain(char **cmd, bool json);
