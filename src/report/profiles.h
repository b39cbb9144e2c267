/* SPDX-License-Identifier: MIT */
/* The device profiles the report costs reads on: the reference devices
 * shipped in profiles/ (hdd, usb, sd, nvme, share), or a file that
 * readset probe wrote. */
#pragma once

#include <stddef.h>

#include "report/costmodel.h"

/* The file of a reference name (an alias such as "hdd", or a profile's
 * stem), looked up in $READSET_PROFILE_DIR, the installed directory and,
 * run from a build tree, the sources' profiles/; a name with a '/' or
 * ending in ".json" is a file already.  -ENOENT, -ENAMETOOLONG. */
int report_profile_path(const char *name, char *buf, size_t size);
/* A profile's JSON file as a cost profile named name: -errno (-EINVAL when
 * it cannot cost reads). */
int report_profile_load(const char *path, const char *name, struct cost_profile *ret);

/* This machine's profile for a directory's device: the one probe --save
 * kept for it (or its disk), loaded (0); -EBADMSG when that one cannot
 * cost reads (path: which).  Otherwise path is where a probe of it is to
 * be kept (its directory made) and the error why there is none to use:
 * -ENOENT none yet, -ESTALE measured on another device, -EINVAL without a
 * verdict; -ENODEV: no block device tells this file system apart (probe it
 * each time, keep nothing); another -errno: the kept one cannot be read,
 * or (path "") none could be kept. */
int report_cached_profile(const char *dir, char *path, size_t size, struct cost_profile *ret);
/* A quick probe of dir (about 3 s), saved at save_path (NULL: nowhere;
 * the directory is made), as this machine's profile.  *ret_what: what
 * failed, for the message. */
int report_probe_profile(const char *dir, const char *save_path, struct cost_profile *ret, const char **ret_what);
