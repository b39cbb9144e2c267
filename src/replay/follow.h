/* SPDX-License-Identifier: MIT */
/* How the pacer (replay/pace-run.c) follows a start's progress: the path
 * lookups a process tree makes, as it makes them.  An interface, so that
 * replay/ needs nothing of record/: record/follow.c implements it with the
 * recorder's BPF program, and the command hands it to the session
 * (replay/session.h).  The callbacks run in the replay's own process. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One lookup observed: op an RS_LOOKUP_* (model/readset.h), result its
 * outcome (0 or -errno), path absolute. */
typedef void (*replay_observed_fn)(void *userdata, uint32_t op, int32_t result, const char *path);

struct replay_follower_ops {
        /* Follow the tree of pid (pid > 0) or every process but this one
         * (pid 0).  -errno (-EOPNOTSUPP: not here; then the pacer goes by
         * the recorded timeline). */
        int (*open)(pid_t pid, void **ret);
        /* Hand every lookup seen since the last drain to fn.  -errno. */
        int (*drain)(void *follower, replay_observed_fn fn, void *userdata);
        /* Give it up (may be slow: after the results are out). */
        void (*close)(void *follower);
};
