/* SPDX-License-Identifier: MIT */
/* Merging recorded boots into the plan the next boot replays. */
#include "boot/plan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/banned.h"

struct fref {
        const struct rs_file *f;
        size_t boot;            /* 0: newest */
};

static int cmp_fref(const void *a, const void *b)
{
        const struct fref *x = a, *y = b;
        int c = strcmp(x->f->path, y->f->path);
        if (c)
                return c;
        return x->boot < y->boot ? -1 : x->boot > y->boot;
}

static bool same_file(const struct rs_file *a, const struct rs_file *b)
{
        return a->kind == b->kind && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime_ns == b->mtime_ns;
}

/* A range's edge: +1 at its start, -1 at its end. */
struct edge {
        uint64_t at;
        int delta;
        uint64_t time_us;
};

static int cmp_edge(const void *a, const void *b)
{
        const struct edge *x = a, *y = b;
        if (x->at != y->at)
                return x->at < y->at ? -1 : 1;
        return x->delta - y->delta;     /* ends before starts: touching ranges do not overlap */
}

static int cmp_range_time(const void *a, const void *b)
{
        const struct rs_range *x = a, *y = b;
        if (x->time_us != y->time_us)
                return x->time_us < y->time_us ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_file_time(const void *a, const void *b)
{
        const struct rs_file *x = a, *y = b;
        uint64_t tx = x->n_ranges ? x->ranges[0].time_us : UINT64_MAX;
        uint64_t ty = y->n_ranges ? y->ranges[0].time_us : UINT64_MAX;
        return tx < ty ? -1 : tx > ty;
}

/* The pages of group g[0..n) (one path; g[0] the newest) used by at least
 * need of the boots, into out. */
static int merge_file(const struct fref *g, size_t n, unsigned need, struct readset *out)
{
        const struct rs_file *ref = g[0].f;
        _cleanup_free_ struct edge *ev = NULL;
        size_t n_ev = 0, cap = 0, k;
        struct rs_file *f;
        uint64_t start = 0, t_min = UINT64_MAX;
        int depth = 0;

        for (size_t i = 0; i < n; i++) {
                if (!same_file(g[i].f, ref))
                        continue;
                for (size_t j = 0; j < g[i].f->n_ranges; j++) {
                        const struct rs_range *r = &g[i].f->ranges[j];
                        if (!(r->flags & RS_RANGE_ACCESSED))
                                continue;      /* only read ahead: replay leaves those too */
                        if (grow_array(&ev, &cap, n_ev + 2, sizeof(*ev)) < 0)
                                return -ENOMEM;
                        ev[n_ev++] = (struct edge){ r->offset, +1, r->time_us };
                        ev[n_ev++] = (struct edge){ r->offset + r->length, -1, r->time_us };
                }
        }
        if (n_ev == 0)
                return 0;
        qsort(ev, n_ev, sizeof(*ev), cmp_edge);
        f = NULL;
        for (k = 0; k < n_ev; k++) {
                int was = depth;
                depth += ev[k].delta;
                if (ev[k].delta > 0 && ev[k].time_us < t_min)
                        t_min = ev[k].time_us;
                if (was < (int)need && depth >= (int)need) {
                        start = ev[k].at;
                } else if (was >= (int)need && depth < (int)need && ev[k].at > start) {
                        if (!f) {
                                f = readset_add_file(out, ref->path, ref->dev, ref->ino);
                                if (!f)
                                        return -ENOMEM;
                                f->size = ref->size;
                                f->mtime_ns = ref->mtime_ns;
                                f->kind = ref->kind;
                                f->flags = ref->flags;
                        }
                        /* the segment's time: the earliest start among the ranges covering it */
                        if (readset_file_add_range(f, start, ev[k].at - start, t_min, RS_RANGE_ACCESSED) < 0)
                                return -ENOMEM;
                }
                if (depth == 0)
                        t_min = UINT64_MAX;
        }
        if (f)
                qsort(f->ranges, f->n_ranges, sizeof(*f->ranges), cmp_range_time);
        return 0;
}

int boot_plan_merge(struct readset *const *boots, size_t n, struct readset **ret)
{
        _cleanup_readset_ struct readset *out = readset_new();
        _cleanup_free_ struct fref *all = NULL;
        size_t n_all = 0, cap = 0;
        unsigned need = (unsigned)(n + 1) / 2;
        int r;

        if (!out)
                return -ENOMEM;
        if (n == 0)
                return -EINVAL;
        for (size_t b = 0; b < n; b++)
                for (size_t i = 0; i < boots[b]->n_files; i++) {
                        if (boots[b]->files[i].kind == RS_FILE_UNRESOLVED)
                                continue;
                        if (grow_array(&all, &cap, n_all + 1, sizeof(*all)) < 0)
                                return -ENOMEM;
                        all[n_all++] = (struct fref){ &boots[b]->files[i], b };
                }
        qsort_safe(all, n_all, sizeof(*all), cmp_fref);
        for (size_t i = 0; i < n_all;) {
                size_t j = i + 1;
                while (j < n_all && strcmp(all[j].f->path, all[i].f->path) == 0)
                        j++;
                if ((r = merge_file(all + i, j - i, need, out)) < 0)
                        return r;
                i = j;
        }
        qsort_safe(out->files, out->n_files, sizeof(*out->files), cmp_file_time);
        for (size_t i = 0; i < boots[0]->n_lookups; i++) {
                const struct rs_lookup *l = &boots[0]->lookups[i];
                if (readset_add_lookup(out, l->time_us, l->op, l->result, l->pid, l->path) < 0)
                        return -ENOMEM;
        }
        out->page_size = boots[0]->page_size;
        out->created_unix = boots[0]->created_unix;
        out->duration_us = boots[0]->duration_us;
        out->events = boots[0]->events;
        out->lost_events = boots[0]->lost_events;
        out->rec_flags = boots[0]->rec_flags;
        if (boots[0]->command && !(out->command = strdup(boots[0]->command)))
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}
