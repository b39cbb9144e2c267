/* SPDX-License-Identifier: MIT */
#include "model/compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/banned.h"

static int cmp_u64p(const void *a, const void *b)
{
        const uint64_t *x = a, *y = b;
        return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int cmp_file_id(const void *a, const void *b)
{
        const struct rs_file *x = *(const struct rs_file *const *)a, *y = *(const struct rs_file *const *)b;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

uint64_t intervals_overlap(const uint64_t *iv, size_t n, uint64_t a, uint64_t b)
{
        size_t lo = 0, hi = n;
        uint64_t sum = 0;

        while (lo < hi) {   /* first interval ending after a */
                size_t mid = lo + (hi - lo) / 2;
                if (iv[2 * mid + 1] <= a)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t m = lo; m < n && iv[2 * m] < b; m++) {
                uint64_t x = MAX(a, iv[2 * m]), y = MIN(b, iv[2 * m + 1]);
                if (y > x)
                        sum += y - x;
        }
        return sum;
}

/* The accessed ranges of g as sorted, merged intervals. */
static int accessed_intervals(const struct rs_file *g, uint64_t **ret, size_t *ret_n)
{
        uint64_t *iv = malloc((g->n_ranges ? g->n_ranges : 1) * 2 * sizeof(uint64_t));
        size_t n = 0, m = 0;

        if (!iv)
                return -ENOMEM;
        for (size_t k = 0; k < g->n_ranges; k++) {
                if (!(g->ranges[k].flags & RS_RANGE_ACCESSED))
                        continue;
                iv[2 * n] = g->ranges[k].offset;
                iv[2 * n + 1] = g->ranges[k].offset + g->ranges[k].length;
                n++;
        }
        qsort_safe(iv, n, 2 * sizeof(uint64_t), cmp_u64p);
        /* merged, so that overlapping ranges (a hostile file) count once */
        for (size_t k = 0; k < n; k++) {
                if (m > 0 && iv[2 * k] <= iv[2 * m - 1]) {
                        iv[2 * m - 1] = MAX(iv[2 * m - 1], iv[2 * k + 1]);
                        continue;
                }
                iv[2 * m] = iv[2 * k];
                iv[2 * m + 1] = iv[2 * k + 1];
                m++;
        }
        *ret = iv;
        *ret_n = m;
        return 0;
}

double readset_usage_hit_ratio(const struct readset_usage *u)
{
        return u->new_accessed ? 1.0 - (double)MIN(u->new_filled, u->new_accessed) / (double)u->new_accessed : 1.0;
}

double readset_usage_used(const struct readset_usage *u)
{
        return u->old_bytes ? (double)MIN(u->still_used, u->old_bytes) / (double)u->old_bytes : 0.0;
}

int readset_compare(const struct readset *old, const struct readset *cur, struct readset_usage *u)
{
        _cleanup_free_ const struct rs_file **byid = malloc((cur->n_files ? cur->n_files : 1) * sizeof(*byid));

        *u = (struct readset_usage){ 0 };
        if (!byid)
                return -ENOMEM;
        for (size_t i = 0; i < cur->n_files; i++)
                for (size_t k = 0; k < cur->files[i].n_ranges; k++) {
                        const struct rs_range *r = &cur->files[i].ranges[k];
                        if (r->flags & RS_RANGE_ACCESSED)
                                u->new_accessed += r->length;
                        if (r->flags & RS_RANGE_FILLED)
                                u->new_filled += r->length;
                }
        for (size_t i = 0; i < cur->n_files; i++)
                byid[i] = &cur->files[i];
        qsort_safe(byid, cur->n_files, sizeof(*byid), cmp_file_id);

        for (size_t i = 0; i < old->n_files; i++) {
                const struct rs_file *f = &old->files[i], *key = f, **hit, *g;
                _cleanup_free_ uint64_t *iv = NULL;
                size_t n = 0;

                /* what the start read, not what readahead brought along */
                for (size_t k = 0; k < f->n_ranges; k++)
                        if (f->ranges[k].flags & RS_RANGE_ACCESSED)
                                u->old_bytes += f->ranges[k].length;
                hit = cur->n_files ? bsearch(&key, byid, cur->n_files, sizeof(*byid), cmp_file_id) : NULL;
                if (!hit)
                        continue;
                g = *hit;
                if (g->size != f->size || g->mtime_ns != f->mtime_ns || strcmp(g->path, f->path) != 0 ||
                    g->n_ranges == 0)
                        continue;
                if (accessed_intervals(g, &iv, &n) < 0)
                        return -ENOMEM;
                for (size_t k = 0; k < f->n_ranges; k++)
                        if (f->ranges[k].flags & RS_RANGE_ACCESSED)
                                u->still_used += intervals_overlap(iv, n, f->ranges[k].offset,
                                                                   f->ranges[k].offset + f->ranges[k].length);
        }
        return 0;
}
