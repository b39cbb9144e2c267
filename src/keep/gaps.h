/* SPDX-License-Identifier: MIT */
/* A restore's pages that are not the snapshot's: on a rotational device the
 * replay reads through short gaps between a snapshot's ranges (one request
 * instead of two, bridged), and those pages would take the service's
 * memory from its working set.  What was cached of the gaps before the
 * restore is noted; after it, what the restore added there is dropped
 * again (POSIX_FADV_DONTNEED: clean pages only, never data). */
#pragma once

#include <stdint.h>

#include "model/readset.h"

struct keep_gaps;

/* The residency of the gaps between each regular file's ranges, now; NULL
 * where there are none or it cannot be told (mincore answers this caller
 * falsely, out of memory): nothing is dropped then. */
struct keep_gaps *keep_gaps_note(const struct readset *rs);
/* Drops the gap pages cached now that were not before; returns their
 * bytes (0 for NULL). */
uint64_t keep_gaps_drop(const struct keep_gaps *g, const struct readset *rs);
void keep_gaps_free(struct keep_gaps *g);
static inline void keep_gaps_freep(struct keep_gaps **g) { keep_gaps_free(*g); }
