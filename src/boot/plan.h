/* SPDX-License-Identifier: MIT */
/* The boot's read set from the last few recorded boots: what most of them
 * used, so that one unusual boot does not spoil it.  Pure. */
#pragma once

#include <stddef.h>

#include "model/readset.h"

/* boots[0] is the newest.  A page goes in when at least half of the boots
 * (rounded up) used it; a file's pages count only from the boots where it
 * was the same file as in the newest that has it (device, inode, size,
 * mtime).  Files in first-access order, each range at the earliest time a
 * boot first needed it; the lookups are the newest boot's.  -ENOMEM. */
int boot_plan_merge(struct readset *const *boots, size_t n, struct readset **ret);
