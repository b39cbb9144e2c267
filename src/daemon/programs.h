/* SPDX-License-Identifier: MIT */
/* readset auto's store: per program learned (daemon/key.h's name), its
 * read set NAME.readset, the loop's history NAME.readset.history
 * (boot/run-loop.h) and what it is, NAME.info: the program, its script,
 * who ran it, the program's identity when it was recorded, and whether it
 * was found too small to replay.  The directory is root's, 0700.  Bounded
 * in count and bytes: the programs started longest ago go first. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "boot/history.h"
#include "daemon/key.h"

/* The info file's format: a newer one (a later readset's) is not read,
 * and the program is learned anew; an older one is read as far as it
 * goes (a line not known is passed over), and written anew. */
#define PROGRAMS_FORMAT 1

struct program_info {
        char exe[PATH_MAX], script[PATH_MAX];
        uint32_t uid;
        uint64_t dev, ino, size, mtime_ns;   /* the program's identity when it was recorded */
        bool small;              /* its read set too small to replay: off for good */
        uint64_t read_set_bytes; /* what its read set reads */
        uint64_t last_unix;      /* its last start */
};

/* The store made (0700, root's) or checked: a directory of root's that no
 * one else can change, no symlink.  -errno with why. */
int programs_prepare(const char *store, char *why, size_t why_len);
/* dir/NAME.SUFFIX into buf; -ENAMETOOLONG. */
int programs_file(const char *store, const char *name, const char *suffix, char *buf, size_t size);
int programs_info_load(const char *store, const char *name, struct program_info *ret);
int programs_info_save(const char *store, const char *name, const struct program_info *p);
/* Is key k's program the one recorded? */
bool programs_same_program(const struct program_info *p, const struct start_key *k);

/* Every program of the store, by name, to fn (which returns < 0 to stop).
 * -errno. */
int programs_each(const char *store, int (*fn)(void *userdata, const char *name), void *userdata);
/* Forget the programs whose program path, script or name is what (a path,
 * or a file name): their files removed.  How many were. */
int programs_forget(const char *store, const char *what);
/* Within max_keys programs and max_bytes bytes of files: the programs
 * started longest ago removed, keep (the one just written) never.  How
 * many were. */
int programs_bound(const char *store, uint64_t max_keys, uint64_t max_bytes, const char *keep);

/* What status says of a program, from its history. */
struct program_summary {
        unsigned starts, recorded, replayed, plain, off;
        const char *last_mode;   /* start_mode_name() of the last start */
        uint64_t last_replayed_bytes;   /* what the last start's replay read (its own counter) */
        double last_s;           /* how long the last start took (0: unknown) */
        double plain_s, replay_s; /* medians (0: none) */
        double saved_s;          /* (plain - replayed median) * replayed starts, >= 0 */
        struct loop_decision next;   /* what the loop does next, and why */
};
int programs_summary(const char *store, const char *name, const struct program_info *p,
                     struct program_summary *ret);

/* Status, as `readset auto status` says it: every program of the store
 * (uid PROGRAMS_ALL_USERS) or those the user uid started, as text or as
 * one JSON object ({"programs": [...]}).  -ENOENT: no store. */
#define PROGRAMS_ALL_USERS ((uid_t)-1)
int programs_status(FILE *f, const char *store, uid_t uid, bool json);
/* Where a user's own status is kept beside the store (the store is root's
 * alone): STORE-users/UID.json or UID.txt, the user's, 0400. */
int programs_users_file(const char *store, uid_t uid, bool json, char *buf, size_t size);
/* Write both of uid's files anew (the daemon, now and then). */
int programs_users_write(const char *store, uid_t uid);
/* Copy a user's file to f, if it is the user's (or root's) own, regular,
 * reached through no symlink.  -ENOENT: none yet. */
int programs_user_status_print(FILE *f, const char *path, uid_t uid);
