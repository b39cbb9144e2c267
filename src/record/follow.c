/* SPDX-License-Identifier: MIT */
#include "record/follow.h"

#include <errno.h>

#include "record/lookups.h"
#include "util/banned.h"

static int follow_open(pid_t pid, void **ret)
{
        struct lookups *l;
        int r = lookups_open(&l, pid == 0);

        if (r < 0)
                return r;
        if (pid > 0 && (r = lookups_follow(l, pid)) < 0) {
                lookups_close(l);
                return r;
        }
        *ret = l;
        return 0;
}

static int follow_drain(void *follower, replay_observed_fn fn, void *userdata)
{
        lookups_observe(follower, fn, userdata);
        return lookups_drain(follower);
}

static void follow_close(void *follower) { lookups_close(follower); }

const struct replay_follower_ops record_follower = { follow_open, follow_drain, follow_close };
