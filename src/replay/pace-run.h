/* SPDX-License-Identifier: MIT */
/* The session's pacing (session.c, in the replay's own process once it
 * planned): the lookups of rs that lie on a share, taken out of the plan's,
 * paced (pace.h) following the process tree of follow (0: every process but
 * this one) through the follower the caller gave, else by the clock. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "replay/session.h"

struct pace_run;
/* *ret NULL when there is nothing to pace; -ENOMEM. */
int pace_run_start(const struct replay_session_options *o, const struct readset *rs, struct plan *plan,
                   pid_t follow, struct pace_run **ret);
/* Through the sequence; or (following every process) quiet for 10 s. */
bool pace_run_done(struct pace_run *pr);
bool pace_run_following(const struct pace_run *pr);
/* Stop pacing: its figures; then free it (slow when it followed with BPF:
 * after the results are out). */
void pace_run_stop(struct pace_run *pr, struct pace_stats *ret);
void pace_run_free(struct pace_run *pr);
