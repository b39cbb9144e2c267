/* SPDX-License-Identifier: MIT */
/* What a network share's client asks its server for a start's path
 * lookups: the recorded lookups replayed through the client's caches
 * (costmodel.h's struct cost_client: names, attributes and failed lookups
 * each kept for their lifetime, what a listing brings, access(2)), every
 * question the caches cannot answer one round trip.  Pure: the caller
 * says which paths lie on the share.  docs/DECISIONS.md ("Lookups on a
 * share") explains each rule and what it was measured against. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"
#include "report/costmodel.h"
#include "replay/planner.h"

/* What a round trip asked. */
enum client_ask {
        CLIENT_NAME,        /* a name looked up (a component walked through, or the last) */
        CLIENT_ATTR,        /* a file's or directory's attributes again (their lifetime over) */
        CLIENT_FAILED,      /* a name that is not there */
        CLIENT_OPEN,        /* an open (every open asks: close-to-open) */
        CLIENT_LISTING,     /* 64 KiB of a listing */
        CLIENT_ACCESS,      /* access(2) asked of the server */
        CLIENT_READLINK,
        _CLIENT_ASK_MAX,
};

/* A listing's reply: up to this many bytes a round trip; an entry of
 * names only and one with its attributes (FUSE's dirent and direntplus,
 * about the size of NFS's READDIR and READDIRPLUS entries). */
#define CLIENT_LISTING_CHUNK (64u << 10)
#define CLIENT_ENTRY_BYTES 40u
#define CLIENT_ENTRY_ATTR_BYTES 160u

struct client_cost {
        uint64_t trips[_CLIENT_ASK_MAX];
        uint64_t round_trips;     /* all of them */
        uint64_t file_round_trips; /* the replay's: of them, to open its files (the rest: its lookups) */
        uint64_t lookups;         /* recorded lookups on the share */
        uint64_t paced;           /* the warmed start's: of them, those run's pacer warms
                                   * (pace_count(): repeats within a lifetime folded, not
                                   * listings, nor what the recorded start had at once) */
        double seconds;           /* the round trips one after another (the start's), or
                                   * COST_REPLAY_THREADS at a time (the replay's: as many as
                                   * the share serves at that depth, cost_parallel()) */
};

/* The paths on the share: below root ("/": every path, as if the whole
 * tree were there), never /proc, /sys, /dev or /run. */
bool client_on_share(const char *root, const char *path);

/* Whether a directory is there, for one that the recording never found
 * but failed lookups went through: a missing directory fails every name
 * below it at once (and a client keeping failed lookups keeps that one),
 * an existing one fails each name of its own.  Asked of at most
 * CLIENT_MAX_EXISTS directories; NULL (or fn NULL): not there. */
struct client_exists {
        bool (*fn)(void *userdata, const char *path);
        void *userdata;
};
#define CLIENT_MAX_EXISTS 20000

/* What the client asks, from rs's lookups on the share (below root):
 *  plain: the start alone, its lookups in their recorded order, the clock
 *         (their recorded times) running on by each round trip, as a start
 *         that waits for each; per_lookup (rs->n_lookups entries, may be
 *         NULL): the round trips each made (0 for those not on the share);
 *  replay: readset replay's own, opening the files plan reads and looking
 *         up its lookups (listing the listings), all within one lifetime and
 *         at once (a listing answers none of the lookups beside it),
 *         COST_REPLAY_THREADS at a time (cost_parallel());
 *  warmed: the start replayed by readset run, the pacer keeping warm just
 *         ahead of it what the client keeps: what it asks anyway is every
 *         open, listing and readlink, and what the client never keeps
 *         (failed lookups, access(2) where it asks).
 * -ENOMEM. */
int client_cost(const struct readset *rs, const struct plan *plan, const struct cost_profile *p, const char *root,
                const struct client_exists *ex, uint32_t *per_lookup, struct client_cost *ret_plain, struct client_cost *ret_replay,
                struct client_cost *ret_warmed);
