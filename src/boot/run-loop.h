/* SPDX-License-Identifier: MIT */
/* run --auto's closed loop (boot/history.h): the history beside the read
 * set, one line a run; a run replays without recording, records only when
 * there is no read set or it went stale, and where replay does not make
 * the command faster than plain runs it runs plain, trying again later. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "boot/history.h"
#include "replay/session.h"

struct run_loop {
        char path[PATH_MAX];     /* FILE.history */
        struct history h;
        struct loop_decision d;
        uint64_t t0;             /* when the command started (now_us()) */
};

/* Load FILE's history and decide this run with loop_options_for_run();
 * have_plan: FILE is there.  0, or the history's -errno (then a new
 * history starts).  *ret_turned_off: the loop turns replay off with this
 * run (said once: d.why says why). */
int run_loop_decide(struct run_loop *l, const char *file, bool have_plan, bool *ret_turned_off);
/* The same over the history l holds already (l->path its file; noted by
 * run_loop_note() since): a caller that keeps it between starts (readset
 * auto's daemon) decides without reading it again. */
void run_loop_decide_again(struct run_loop *l, bool have_plan, bool *ret_turned_off);
/* What the decision makes of a run: record it, replay it, and whether a
 * new recording replaces the read set however much of it is still used
 * (the loop found it stale).  stats: --stats, which replays and records
 * whatever the loop says (and leaves its history alone). */
void run_loop_what(const struct run_loop *l, bool stats, bool *ret_record, bool *ret_replay, bool *ret_replace);
/* The read set turned out unusable: this run records a new one. */
void run_loop_record_instead(struct run_loop *l);
/* What a replay session did, as a start's line keeps it (run --auto's,
 * the boot's, readset auto's). */
void start_replayed_of(const struct replay_result *res, struct start_replayed *ret);
/* The line of a run that went to its end, at at_unix, end_us (now_us()'s
 * clock); r: what its replay did (NULL: none).  0 or -errno. */
int run_loop_note(struct run_loop *l, uint64_t at_unix, uint64_t end_us, const struct start_replayed *r);
