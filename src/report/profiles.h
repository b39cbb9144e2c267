/* SPDX-License-Identifier: MIT */
/* The device profiles the report costs reads on: the reference devices
 * shipped in profiles/ (hdd, usb, sd, nvme, share), or a file that
 * readset probe wrote. */
#pragma once

#include <stddef.h>

#include "report/costmodel.h"
#include "util/progress.h"

/* The profile file of a device's name (device/names.h: a kind is costed
 * as its reference, an alias such as "hdd" or a profile's stem is looked
 * up where the reference profiles are, a path is taken as it is).
 * -ENOENT, -ENAMETOOLONG. */
int report_profile_path(const char *name, char *buf, size_t size);
/* A profile's JSON file as a cost profile named name: -errno (-EINVAL when
 * it cannot cost reads; -EPERM, why filled, when the file is refused:
 * util/trust.h). */
int report_profile_load(const char *path, const char *name, struct cost_profile *ret, char *why, size_t why_len);

/* What to do for this machine's profile, for the device of dir. */
enum report_local {
        REPORT_LOCAL_CACHED,       /* the one probe --save kept for it (or its disk): in *ret */
        REPORT_LOCAL_PROBE_KEEP,   /* none to use: probe, and keep it at path */
        REPORT_LOCAL_PROBE_ONCE,   /* none to use, and no block device tells this file system
                                    * apart: probe, keep nothing */
        REPORT_LOCAL_NONE,         /* no profile (may_probe false, or nowhere to keep one) */
};
/* *ret_err says why a kept one was not used (0: none was kept): -ESTALE
 * measured on another device that had these numbers, -EBADMSG it cannot
 * cost reads (then REPORT_LOCAL_NONE: remove it to probe again), -EINVAL
 * no verdict, another -errno it cannot be read or none could be kept;
 * path: the kept one's, or where a probe is to be kept (its directory made). */
enum report_local report_local_profile(const char *dir, bool may_probe, char *path, size_t size,
                                       struct cost_profile *ret, int *ret_err);
/* A quick probe of dir (about 3 s), saved at save_path (NULL: nowhere;
 * the directory is made), as this machine's profile.  *ret_what: what
 * failed, for the message. */
int report_probe_profile(const char *dir, const char *save_path, progress_fn *progress, void *progress_userdata,
                         struct cost_profile *ret, const char **ret_what);
