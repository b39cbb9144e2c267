/* SPDX-License-Identifier: MIT */
/* The requests a network file system's client sends, from the counters it
 * exposes: NFS's /proc/self/mountstats, CIFS's /proc/fs/cifs/Stats, the
 * share emulator's MNT/.slowdev-stats (bench/slowdev-share.c).  Read just
 * before a start and just after it, their difference is what the start
 * made the client send: beside the lookups recorded, the amplification
 * (`readset report`, "client_requests"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"
#include "util/mounts.h"

/* ---- the parsers: text in, a count out; never a crash on any text ------ */

/* The requests the NFS mount at mnt has sent: the "ops" column of its
 * "per-op statistics", summed.  -ENOENT: no NFS mount at mnt in text;
 * -EBADMSG: its block is malformed or cut short. */
int clientstats_parse_nfs(const char *text, const char *mnt, uint64_t *ret);
/* The requests sent on the CIFS share a mount of source ("//server/share"
 * or below it, as mountinfo names it) uses: its "SMBs" count, or without
 * one the sum of its per-command counts.  -ENOENT, -EBADMSG as above. */
int clientstats_parse_cifs(const char *text, const char *source, uint64_t *ret);
/* The emulator's "round_trips".  -EBADMSG without a well-formed one. */
int clientstats_parse_slowdev(const char *text, uint64_t *ret);

/* Whose counters a mount has (enum rs_client_kind), 0 for none: nfs and
 * nfs4; cifs and smb3; the emulator's FUSE mount (fuse.slowdev-share,
 * mounted by root: no other FUSE daemon's file is ever read). */
uint32_t clientstats_kind(const struct mount_ent *m);

/* ---- before and after a start ------------------------------------------ */

struct clientstats_mount {
        char *mnt;
        char *source;
        uint64_t dev;
        uint32_t kind;
        bool have_before, have_after;
        uint64_t before, after;
        uint64_t opens;         /* files readset opened there meanwhile */
};

struct clientstats {
        struct clientstats_mount *m;
        size_t n;
};

/* The network mounts of this mount namespace and their counters now
 * ("before"); a mount whose counters cannot be read is kept without them.
 * -errno when the mount table cannot be read. */
int clientstats_begin(struct clientstats *s);
/* Their counters again ("after"), and how many files readset itself has
 * opened on each since "before": opens(dev, userdata) (fanotify's event
 * descriptors; opens may be NULL: none). */
void clientstats_end(struct clientstats *s, uint64_t (*opens)(uint64_t dev, void *userdata), void *userdata);
/* Each mount read both times, into rs (readset_add_client): after - before,
 * less the requests of readset's own opens.  -ENOMEM. */
int clientstats_store(const struct clientstats *s, struct readset *rs);
void clientstats_free(struct clientstats *s);
