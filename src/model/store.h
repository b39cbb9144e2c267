/* SPDX-License-Identifier: MIT */
/* Where read sets are kept between runs: run --auto's directory, one read
 * set per command (its base name and a hash of its arguments and working
 * directory), each recording written beside it first (NAME.new.PID) and
 * put in its place whole. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/compare.h"

/* The directory made if need be (0755), and its missing parents, one by
 * one through no symbolic link, below the nearest directory there, which
 * must be the caller's own (or, as root under sudo, the invoking user's:
 * what is made is then theirs) and pass trust_check_dir() (util/trust.h):
 * nothing is made below another user's or a directory others could change.
 * 0, or -errno with why (why_len bytes) saying what is wrong (-EPERM: an
 * owner; -ENOTDIR: a file in the way). */
int store_prepare(const char *dir, char *why, size_t why_len);
/* The read set's path in dir for the command cmd run from the current
 * directory; -ENOMEM. */
int store_path(const char *dir, char *const *cmd, char **ret);
/* Where this process writes its new recording of path: "PATH.new.PID". */
int store_new_path(const char *path, char **ret);
/* Remove what runs killed outright (SIGKILL, a power cut) left in dir
 * beside path: their recordings in progress, "NAME.new.PID" and the
 * writer's "NAME.new.PID.tmp.XXXXXX", whose PID is gone (a file of a run
 * still going, or of a PID reused since, is left alone).  Returns how many
 * were removed. */
unsigned store_remove_left(const char *dir, const char *path);
/* What becomes of a new recording. */
enum store_verdict {
        STORE_KEEP_OLD,         /* the read set is still good */
        STORE_REPLACE,          /* there is none, or it went stale */
        STORE_CUT_SHORT,        /* it would replace it, but the start was cut short (a signal):
                                 * it holds only part of what the start needs */
};
/* Stale: less than stale_percent of what the read set says the start used
 * was used again. */
enum store_verdict store_judge(bool have_old, const struct readset_usage *u, uint64_t stale_percent, bool cut_short);
/* Put rs in path's place, whole: written as store_new_path() names it, then
 * renamed.  Nothing is left on failure. */
int store_keep(const char *path, const struct readset *rs);
