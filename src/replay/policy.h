/* SPDX-License-Identifier: MIT */
/* Replay policy: what a replay of a read set reads, in what order, for
 * which device -- the one place that decides it, for readset replay, run
 * and the report's predictions alike.  Gathers what the pure planner needs
 * (the device's profile, the memory budget, which lookups a local file
 * system needs, the files' positions on a disk) and calls it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "device/device.h"
#include "fs/extents.h"
#include "model/readset.h"
#include "replay/planner.h"
#include "util/mounts.h"

struct replay_options {
        uint64_t max_bytes;       /* at most this many bytes (0: the memory budget only) */
        uint32_t max_evict_percent; /* of what others keep in the page cache, what the replay may
                                   * displace (REPLAY_DEFAULT_EVICT_PERCENT) */
        bool all_ranges;          /* also the pages the recording only saw read ahead */
        bool all_lookups;         /* every recorded lookup, also on a local file system */
        bool have_device;         /* device was given (--device): planned for, whatever the read set's is */
        struct device_profile device;
};

void replay_options_init(struct replay_options *o);

/* --device ARG: a device's name (device/names.h: a kind, a reference
 * profile, a profile file readset probe saved; its verdict).  -ENOENT no
 * such name (device_name_parse), -errno (the profile's) when it cannot be
 * used; -EPERM with why filled when the file is refused (util/trust.h). */
int replay_options_set_device(struct replay_options *o, const char *arg, char *why, size_t why_len);

/* The device a replay of data on path plans for: the given one, else
 * path's (the profile probe --save kept for it, else sysfs's settings),
 * else solid state.  A saved profile passed over is noted (may be NULL). */
void replay_device_for_path(const struct replay_options *o, const char *path, struct device_profile *ret,
                            struct device_note *note);
/* The same for rs: the device most of its bytes come from (a program on
 * the system disk reading its data from a USB disk is planned for the USB
 * disk), through a file of it still there.  -ENOMEM. */
int replay_device(const struct readset *rs, const struct replay_options *o, struct device_profile *ret,
                  struct device_note *note);

/* What a replay may add to the page cache: the free memory above a reserve
 * (5% of MemTotal), plus evict_percent of the file pages cached now (what
 * other programs are using, or used last).  A read set larger than memory
 * stops there, instead of emptying everyone else's cache.  0 when nothing
 * may.  bench/evict measured the default. */
#define REPLAY_DEFAULT_EVICT_PERCENT 25
struct meminfo {
        uint64_t total, free, available, file_cached;   /* bytes */
};
int replay_meminfo(struct meminfo *ret);
uint64_t replay_budget_of(const struct meminfo *m, uint32_t evict_percent);
int replay_memory_budget(uint32_t evict_percent, uint64_t *ret);
/* The least room the memory cgroups of a process leave (self_cgroup: its
 * /proc/PID/cgroup; sysfs: where the hierarchies are mounted, v1's memory
 * controller at SYSFS/memory, v2's at SYSFS): at each level up to the
 * root that has a limit, the limit less what the group uses, plus
 * evict_percent of its file pages.  UINT64_MAX where none has a limit.
 * replay_memory_budget() takes the smaller of this and the machine's. */
uint64_t replay_cgroup_room(const char *self_cgroup, const char *sysfs, uint32_t evict_percent);
/* What the memory cgroup of self_cgroup holds that is not file pages (its
 * processes' memory, shared memory counted as theirs): 0 where unknown. */
uint64_t replay_cgroup_own(const char *self_cgroup, const char *sysfs);

/* How many lookups of a directory the plan keeps (planner's lookup_stride):
 * on a share (NFS, SMB, 9p, FUSE...: every lookup a round trip) all of
 * them, on a local file system the first and one in 64 (a stat brings in
 * the directory's blocks and its neighbours' inodes).  The mount holding
 * dir is the last-mounted one whose point is the longest prefix of it. */
uint32_t replay_lookup_stride(const struct mounts *mt, const char *dir, size_t len);
/* Is path on such a share (where a lookup's answer is kept only briefly:
 * paced, replay/pace.h)? */
bool replay_on_share(const struct mounts *mt, const char *path);

/* The plan of a replay of rs on dev with o: within the memory budget and
 * o->max_bytes, lookups thinned where the file system is local, sorted by
 * position where dev is rotational (layouts: the files' extent maps, or
 * NULL to have them read here when they are needed). */
int replay_plan(const struct readset *rs, const struct device_profile *dev, const struct replay_options *o,
                const struct rp_layout *layouts, struct plan **ret);
/* Only the metadata reads of that plan (no file asked where it lies): what
 * a disk reads before the plan's FIEMAP of every file, which would read
 * the same inode blocks one synchronous request at a time.  *ret NULL
 * where the read set holds no metadata. */
int replay_plan_metadata(const struct readset *rs, const struct device_profile *dev,
                         const struct replay_options *o, struct plan **ret);
