/* SPDX-License-Identifier: MIT */
/* The patterns that multiply a start's lookups on a share, named with
 * their count, their cost on the profile and what a user can change:
 * the same paths looked up again, every parent directory walked for
 * each file, failed lookups along a search path, attribute calls per
 * file, the same directory listed again.  Pure: from the recorded
 * lookups and the round trips client.h costed each of them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"
#include "report/costmodel.h"

#define PATTERN_TEXT_MAX 640

enum pattern_kind {
        PATTERN_REPEATED,        /* the same path looked up again */
        PATTERN_PARENT_WALK,     /* every parent directory looked up before a file */
        PATTERN_SEARCH_PATH,     /* a name looked for in one directory after another */
        PATTERN_ATTRIBUTES,      /* several attribute calls for one file */
        PATTERN_LISTINGS,        /* the same directory listed again */
        _PATTERN_MAX,
};

struct pattern {
        enum pattern_kind kind;
        uint64_t count;           /* lookups (listings) that make it */
        uint64_t round_trips;     /* what they cost on the profile */
        double seconds;
        char text[PATTERN_TEXT_MAX];
};

/* A pattern is named where it costs at least this part of the start. */
#define PATTERN_MIN_SHARE 0.05

/* The patterns of rs's lookups on the share (below root: client.h's
 * client_on_share()) that cost at least PATTERN_MIN_SHARE of plain_s on
 * p, trips[i] the round trips lookup i cost there (client_cost()), most
 * costly first, into ret[_PATTERN_MAX].  Returns how many; -ENOMEM. */
int patterns_find(const struct readset *rs, const uint32_t *trips, const struct cost_profile *p, const char *root,
                  double plain_s, struct pattern ret[static _PATTERN_MAX]);
