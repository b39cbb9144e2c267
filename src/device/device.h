/* SPDX-License-Identifier: MIT */
/* What a storage device wants from a replay: how many requests in flight,
 * how large, whether seeks dominate.  Derived from the block layer's
 * settings, with the rotational flag trusted only as a hint, unless readset
 * probe measured the device and its profile was saved (probe --save, or
 * report's own probe): then the measured verdict decides. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/names.h"

struct device_profile {
        char name[64];           /* e.g. "vda" or a reference profile's name */
        bool measured;           /* rotational is readset probe's verdict, not sysfs's */
        bool rotational;         /* seeks dominate: sort by position inside time windows */
        uint32_t queue_depth;    /* requests to keep in flight */
        uint64_t max_request;    /* bytes per request */
        uint64_t bridge_bytes;   /* read through gaps smaller than this */
        uint64_t window_us;      /* reads in a window of recorded time are reordered: by
                                  * position if rotational, else by file and offset */
        uint64_t readahead_cap;  /* what one readahead(2) call reads at most */
        uint32_t submitters;     /* threads issuing the reads (0: the engine's default) */
};

/* A profile for a non-rotational device (SSD, NVMe, virtual disk). */
void device_profile_solid(struct device_profile *p);
/* A profile for a single-actuator disk. */
void device_profile_rotational(struct device_profile *p);
/* A saved probe profile that was passed over, and why: for the command to
 * say (once).  reason 0: none was, or none worth a word (there is none, or
 * it names no device: saved before profiles named theirs). */
struct device_note {
        int reason;             /* -ESTALE, -EINVAL, -EBADF or another -errno */
        char path[4096];
};
/* What reason means, in words ("measured on another device ..."). */
const char *device_note_text(const struct device_note *n);

/* The profile of the block device holding path: sysfs queue settings, and
 * the saved probe profile of the device (or of its whole disk) if any; one
 * passed over is noted in *note (may be NULL). */
int device_profile_for_path(const char *path, struct device_profile *ret, struct device_note *note);
/* Where probe profiles are saved: $READSET_CACHE_DIR (default
 * /var/cache/readset)/probe-MAJOR:MINOR.json; -ENAMETOOLONG. */
int device_probe_cache_path(dev_t dev, char *buf, size_t size);
/* The same path, with the directory it goes in made; -errno also when that
 * cannot be written. */
int device_probe_cache_prepare(dev_t dev, char *buf, size_t size);
/* Who the block device with these numbers is: its size and what sysfs tells
 * apart (WWID, serial, CID, model, dm/md UUID, a loop device's backing
 * file).  Numbers are reused (loop devices, one USB disk plugged in after
 * another): a saved profile counts only on the device it measured.
 * -ENODEV for tmpfs, overlayfs and the like, which nothing tells apart. */
int device_identity(dev_t dev, char *buf, size_t size);
/* The profile probe --save kept for dev, else for the disk dev is a
 * partition of (path: the file found), if measured on the device now there:
 * 0; -ENOENT none; -ESTALE another device's; -ENOKEY one that names no
 * device; -ENODEV dev cannot be told apart; -EINVAL no verdict; -EBADF not
 * a regular file. */
int device_saved_profile(dev_t dev, char *path, size_t size, struct device_profile *ret);
/* The planner's profile from a profile saved by readset probe: its
 * "rotational" verdict.  -EINVAL when it has none (metadata only); -EPERM
 * (and why, why_len bytes, filled) when the file is refused (util/trust.h). */
int device_profile_from_probe(const char *path, struct device_profile *ret, char *why, size_t why_len);
/* The planner's profile of a device's name (device/names.h): a kind's
 * settings, a reference profile's "rotational" (not measured here), a
 * file's as device_profile_from_probe() reads it.  Its errors. */
int device_name_profile(const struct device_name *n, struct device_profile *ret, char *why, size_t why_len);
