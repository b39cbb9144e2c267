/* SPDX-License-Identifier: MIT */
/* Turning the (device, inode) pairs of kernel events into paths: fanotify
 * open events while recording, a bounded walk of the mounts afterwards. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "record/builder.h"

struct paths;

struct paths_stats {
        uint64_t fanotify_events;  /* open events read */
        uint64_t fanotify_overflows;
        uint64_t marks;            /* filesystems watched */
        uint64_t walked;           /* directory entries visited by the fallback walk */
        uint64_t walk_resolved;    /* keys resolved by the walk */
        uint64_t handle_resolved;  /* keys resolved by open_by_handle_at */
        uint64_t unresolved;
};

/* Watch every filesystem for opens.  Without fanotify (no privilege, old
 * kernel) this still succeeds and only the walk is used. */
int paths_open(struct paths **ret, bool watch);
int paths_fd(struct paths *p);     /* fanotify fd to poll, or -1 */
int paths_drain(struct paths *p);  /* read pending open events */
/* From now on, count the files opened on the filesystem dev to hand
 * readset fanotify's events (a descriptor each: an open, a request on a
 * network file system); paths_opens(): how many so far.  -ENOMEM. */
int paths_count_opens(struct paths *p, uint64_t dev);
uint64_t paths_opens(const struct paths *p, uint64_t dev);
/* Remember an open file from elsewhere (tests; files opened by readset). */
int paths_learn(struct paths *p, uint64_t dev, uint64_t ino, const char *path);
/* Remember the files a list names, a line each: "MAJOR:MINOR INODE /PATH"
 * (empty lines and '#' comments skipped).  -EBADMSG for a line that is not
 * one (*ret_line: which), -errno when the file cannot be read. */
int paths_learn_list(struct paths *p, const char *file, unsigned *ret_line);
/* Resolve all keys before builder_finish, once: inodes that fanotify did
 * not name are asked for by file handle, then searched for by a walk of
 * their filesystem's mounts, bounded by max_walk entries and
 * PATHS_WALK_SECONDS. */
#define PATHS_WALK_SECONDS 2
int paths_prepare(struct paths *p, struct rs_builder *b, uint64_t max_walk);
/* rs_resolve_fn for builder_finish; userdata is the struct paths. */
int paths_resolve(void *userdata, uint32_t kdev, uint64_t ino, struct rs_identity *ret);
void paths_get_stats(struct paths *p, struct paths_stats *ret);
void paths_close(struct paths *p);

/* Map a kernel dev_t (major << 20 | minor) to the userspace encoding. */
uint64_t paths_kdev_to_dev(uint32_t kdev);
