/* SPDX-License-Identifier: MIT */
/* Which bytes of a file are in the page cache, asked so that the answer is
 * true for every caller.  cachestat(2) answers only callers who may write
 * the file (or own it); mincore(2) answers the others as if every page were
 * cached.  So for a file this caller may only read, the pages are read with
 * RWF_NOWAIT, which succeeds only where they are cached -- and where one is
 * not, starts reading it in (the kernel's readahead), as the replay asking
 * would do next anyway. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum residency_kind {
        RESIDENCY_PRESENT,    /* in the cache, perhaps still being read in (cachestat's count) */
        RESIDENCY_UPTODATE,   /* read in completely (mincore's count) */
};

/* Bytes of [off, off + len) of fd in the page cache, all counted.  -errno
 * when none of the ways can tell (a file system without RWF_NOWAIT, for a
 * caller who may not write the file).  Asked by reading, a range partly
 * missing may count pages the asking brought in: exact when all of it or
 * none of it is there. */
int64_t residency_count(int fd, uint64_t off, uint64_t len, enum residency_kind kind);

/* Whether the cache of fd is asked by reading (this caller may only read
 * the file): a question then starts reading what it finds missing, and a
 * second question about the same range may find there what the first one
 * fetched.  False for root without a system call. */
bool residency_by_reading(int fd);

/* The same where only "is all of it there?" matters: len when it is, less
 * when not (counting may stop at the first page missing, so that a cold
 * range costs one question, not one per page). */
int64_t residency_check(int fd, uint64_t off, uint64_t len, enum residency_kind kind);

/* For what must not read (a snapshot): the pages of fd cached, by
 * cachestat(2) alone: -ENOSYS where the kernel lacks it, -EPERM where it
 * will not tell this caller. */
int64_t residency_cached_pages(int fd);
/* Does mincore(2) tell this caller the truth about fd (root, the file's
 * owner, a writer)?  To others it says every page is cached. */
bool residency_mincore_truthful(int fd);
