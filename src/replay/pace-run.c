/* SPDX-License-Identifier: MIT */
/* Pacing the lookups of a start on a share (replay/pace.h), in the replay's
 * own process: which lookups are paced, and how the start's progress is
 * followed -- its lookups as it makes them, from the follower the caller
 * gave (replay/follow.h; the recorder's BPF program, as root): those of one
 * process tree (run: the command's), or of every process but readset's own
 * (replay --pace: a program started beside it); without it, the recorded
 * timeline from the start. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay/pace-run.h"
#include "replay/pace.h"
#include "replay/policy.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

/* replay --pace: the start seen doing nothing of its read set for this
 * long is over (or never came) */
#define PACE_IDLE_US 10000000
#define FOLLOW_POLL_MS 2

struct pace_run {
        struct pacer *pacer;
        const struct replay_follower_ops *fo;
        void *follower;           /* NULL: by the clock */
        pthread_t thread;
        bool follower_started;
        atomic_bool stop;
        atomic_uint_fast64_t last_seen_us;
        uint64_t started_us;
        bool until_idle;
        bool *on_share;           /* per lookup */
};

static bool wanted(void *userdata, size_t i) { return ((const bool *)userdata)[i]; }

static void observed(void *userdata, uint32_t op, int32_t result, const char *path)
{
        struct pace_run *pr = userdata;
        /* (following every process, the others' lookups are not the start's) */
        if (pace_observed(pr->pacer, path, op == RS_LOOKUP_READDIR && result == 0))
                atomic_store(&pr->last_seen_us, now_us());
}

static void *follow_main(void *arg)
{
        struct pace_run *pr = arg;

        while (!atomic_load(&pr->stop)) {
                struct timespec ts = { 0, FOLLOW_POLL_MS * 1000000L };
                (void)pr->fo->drain(pr->follower, observed, pr);
                nanosleep(&ts, NULL);
        }
        /* what the start did up to its end is in the ring already */
        (void)pr->fo->drain(pr->follower, observed, pr);
        return NULL;
}

/* Which of rs's lookups lie on a share; how many. */
static size_t mark_shared(const struct readset *rs, bool *on_share)
{
        _cleanup_(mounts_free) struct mounts mt = { 0 };
        size_t n = 0;

        if (mounts_read(&mt) < 0)
                return 0;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                /* consecutive lookups mostly share a directory: ask once per run of one */
                const char *p = rs->lookups[i].path, *q = i ? rs->lookups[i - 1].path : NULL;
                const char *slash = strrchr(p, '/');
                size_t dl = slash ? (size_t)(slash - p) : 0;
                if (p[0] != '/')
                        continue;
                if (q && strncmp(p, q, dl + 1) == 0 && !strchr(q + dl + 1, '/'))
                        on_share[i] = on_share[i - 1];
                else
                        on_share[i] = replay_on_share(&mt, p);
                n += on_share[i];
        }
        return n;
}

int pace_run_start(const struct replay_session_options *o, const struct readset *rs, struct plan *plan,
                   pid_t follow, struct pace_run **ret)
{
        struct pace_run *pr;
        struct pace_options po = { .wanted = wanted };
        size_t kept = 0;
        int r;

        *ret = NULL;
        if (o->pace == PACE_OFF || !o->engine.lookups || rs->n_lookups == 0)
                return 0;
        pr = calloc(1, sizeof(*pr));
        if (!pr || !(pr->on_share = calloc(rs->n_lookups, sizeof(bool)))) {
                free(pr);
                return -ENOMEM;
        }
        po.wanted_userdata = pr->on_share;
        /* all local: the engine warms them at once */
        if (mark_shared(rs, pr->on_share) == 0) {
                free(pr->on_share);
                free(pr);
                return 0;
        }
        r = pace_start(rs, &po, &pr->pacer);
        if (r < 0) {
                free(pr->on_share);
                free(pr);
                return r;
        }
        /* the plan's own lookups on a share are the pacer's now; with too
         * few worth pacing, the engine makes those at once (not the rest:
         * a listing, or what the start had at once, costs a round trip for
         * nothing, and gets in the way of the start's own listing) */
        if (!pr->pacer) {
                _cleanup_free_ bool *worth = malloc(rs->n_lookups * sizeof(bool));
                if (!worth || pace_worth(rs, worth) < 0) {
                        free(pr->on_share);
                        free(pr);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < plan->n_lookups; i++)
                        if (!pr->on_share[plan->lookups[i]] || worth[plan->lookups[i]])
                                plan->lookups[kept++] = plan->lookups[i];
                plan->n_lookups = kept;
                free(pr->on_share);
                free(pr);
                return 0;
        }
        for (size_t i = 0; i < plan->n_lookups; i++)
                if (!pr->on_share[plan->lookups[i]])
                        plan->lookups[kept++] = plan->lookups[i];
        plan->n_lookups = kept;
        pr->until_idle = follow == 0;
        pr->started_us = now_us();
        atomic_store(&pr->last_seen_us, pr->started_us);
        /* the start's own lookups, where they can be followed (meanwhile,
         * and else, the recorded timeline) */
        pr->fo = o->follower;
        if (pr->fo && pr->fo->open(follow, &pr->follower) < 0)
                pr->follower = NULL;
        if (pr->follower) {
                pace_follow(pr->pacer);
                pr->follower_started = pthread_create(&pr->thread, NULL, follow_main, pr) == 0;
        }
        *ret = pr;
        return 0;
}

bool pace_run_done(struct pace_run *pr)
{
        if (!pr || !pr->pacer || pace_finished(pr->pacer))
                return true;
        /* replay --pace, following: the start went quiet, or never came */
        return pr->until_idle && pr->follower && now_us() - atomic_load(&pr->last_seen_us) > PACE_IDLE_US;
}

bool pace_run_following(const struct pace_run *pr) { return pr && pr->follower; }

void pace_run_stop(struct pace_run *pr, struct pace_stats *ret)
{
        *ret = (struct pace_stats){ 0 };
        if (!pr || !pr->pacer)
                return;
        atomic_store(&pr->stop, true);
        if (pr->follower_started)
                pthread_join(pr->thread, NULL);
        pr->follower_started = false;
        pace_stop(pr->pacer, ret);
        pr->pacer = NULL;
}

void pace_run_free(struct pace_run *pr)
{
        struct pace_stats ignored;

        if (!pr)
                return;
        pace_run_stop(pr, &ignored);
        if (pr->follower)       /* slow: BPF programs are released after RCU grace periods */
                pr->fo->close(pr->follower);
        free(pr->on_share);
        free(pr);
}
