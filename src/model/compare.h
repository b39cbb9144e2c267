/* SPDX-License-Identifier: MIT */
/* Two recordings of the same start compared: how much of what the old one
 * says the start used was used again (run --auto's staleness), and what
 * the new one had to bring in itself (run --stats's misses).  Pure. */
#pragma once

#include <stdint.h>

#include "model/readset.h"

struct readset_usage {
        uint64_t old_bytes;       /* what the old read set says the start used (accessed) */
        uint64_t still_used;      /* of those, accessed again by an unchanged file */
        uint64_t new_accessed;    /* the new recording's accessed bytes */
        uint64_t new_filled;      /* ... and those it brought into the cache itself (misses) */
};

/* A file whose path, size or mtime changed is one replay skips: what the
 * old read set says of it is of no use now, and counts as unused.  Files
 * are matched by (device, inode).  -ENOMEM. */
int readset_compare(const struct readset *old, const struct readset *cur, struct readset_usage *ret);

/* The share of what the command accessed that it did not have to fetch
 * itself (1 when it accessed nothing), and the share of the old read set
 * used again (0 when it says nothing was used); 0..1. */
double readset_usage_hit_ratio(const struct readset_usage *u);
double readset_usage_used(const struct readset_usage *u);

/* Bytes of [a, b) inside the sorted, disjoint intervals iv[0..n) (pairs
 * start, end). */
uint64_t intervals_overlap(const uint64_t *iv, size_t n, uint64_t a, uint64_t b);
