/* SPDX-License-Identifier: MIT */
/* Paced lookups: on a share, a client keeps the answer to a lookup only
 * for a while (NFS 3 s for attributes, SMB and FUSE 1 s), so that warming
 * every recorded lookup at the start is lost on a start that lasts longer.
 * The pacer keeps warm a window of the lookups the start is about to make,
 * just ahead of where it is: it follows the start's progress (the recorded
 * lookups it was seen making, pace_observed(); or, where nothing is
 * observed, the recorded timeline from its beginning), warms what lies
 * ahead in parallel, and warms again what expired before the start got
 * there.  It warms what the recorded start waited for: neither listings
 * (no client modelled keeps them: the start's own costs the same) nor what
 * the client answered at once (a listing's entries where the listing
 * brings their attributes); once it has seen that the client keeps no
 * failed lookup (looked up again at once, one costs a round trip again),
 * it warms a failed lookup's directory instead (the start pays for the
 * name that is not there whatever was done, but not for the directories
 * it walks through: a search path's).  Its threads only stat; a server
 * that stops answering
 * leaves them waiting, which is why it runs in the replay's own process
 * (util/bounded.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/readset.h"

struct pace_options {
        uint32_t threads;         /* warming threads (0: PACE_DEFAULT_THREADS) */
        uint32_t window;          /* lookups ahead of the start kept warm, at most (0:
                                   * PACE_DEFAULT_WINDOW; fewer for a start slow enough
                                   * that they would expire before it got there) */
        uint64_t lifetime_us;     /* how long the client keeps an answer (0: PACE_DEFAULT_LIFETIME_US) */
        /* whether the client keeps a failed lookup, where the caller
         * knows: PACE_NEGATIVES_LEARN (0) learns it from the first
         * failed lookups warmed */
        enum { PACE_NEGATIVES_LEARN, PACE_NEGATIVES_KEPT, PACE_NEGATIVES_NOT_KEPT } negatives;
        bool follow;              /* follow pace_observed() from the first moment, not the clock until
                                   * pace_follow() */
        /* which of rs's lookups to pace (by index; NULL: every absolute one) */
        bool (*wanted)(void *userdata, size_t lookup);
        void *wanted_userdata;
};

/* 32 lookups in flight: a 2 ms round trip then warms 16 000 a second,
 * faster than a start makes them */
#define PACE_DEFAULT_THREADS 32
#define PACE_DEFAULT_WINDOW 512
/* the shortest of the clients' defaults (SMB actimeo, libfuse's timeouts);
 * a longer one only makes some warming a cache hit */
#define PACE_DEFAULT_LIFETIME_US 1000000

struct pace_stats {
        uint64_t sequence;        /* lookups paced (repeats within a lifetime folded) */
        uint64_t warmed;          /* stats and listings made, re-warming included */
        uint64_t rewarmed;        /* of them, again after the answer expired */
        uint64_t observed;        /* lookups of the start that moved where it is (a path it
                                   * made again not long ago is matched, but moves nothing) */
        uint64_t reached;         /* how far the start got: index into the sequence */
        uint64_t skipped;         /* not warmed: listings, what the recorded start had at once, and
                                   * failed lookups where the client keeps none (their
                                   * directories are, dirs_warmed) */
        uint64_t dirs_warmed;     /* stats of a failed lookup's directory, where the client
                                   * keeps none (left to the start, their directories warmed) */
        int negatives_kept;       /* the client keeps failed lookups: 1, 0, -1 not learnt */
};

struct pacer;

/* Build the sequence from rs (which must outlive the pacer) and start the
 * threads, the clock at 0, following the recorded timeline.  -ENOMEM; 0
 * with *ret NULL when fewer than PACE_MIN lookups are worth warming (then
 * they are best made at once). */
#define PACE_MIN 16
int pace_start(const struct readset *rs, const struct pace_options *o, struct pacer **ret);
/* Which of rs's lookups are worth warming on a share (n_lookups entries):
 * not listings, nor what the recorded start had at once.  -ENOMEM. */
int pace_worth(const struct readset *rs, bool *worth);
/* How many lookups a pacer on rs would warm: those wanted (wanted[i] for
 * each of rs's lookups; NULL: every absolute one), folded as pace_start()
 * folds them, less what it leaves to the start (fewer than PACE_MIN: no
 * pacer).  -ENOMEM. */
int pace_count(const struct readset *rs, const bool *wanted, size_t *ret);
/* From now on, follow the start's progress from pace_observed(). */
void pace_follow(struct pacer *p);
/* The start looked path up, or listed it (absolute, as the recorder makes
 * it).  Was it one of the sequence's, where the start may be? */
bool pace_observed(struct pacer *p, const char *path, bool listing);
/* Has the start gone through the whole sequence? */
bool pace_finished(struct pacer *p);
/* Its figures so far. */
void pace_snapshot(struct pacer *p, struct pace_stats *ret);
/* Stop the threads and wait for them (a thread stuck on a server that does
 * not answer keeps this waiting: call it in a process that can be left). */
void pace_stop(struct pacer *p, struct pace_stats *ret);
