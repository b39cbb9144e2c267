/* SPDX-License-Identifier: MIT */
/* The builder: raw page events of a recording -> the files and ranges of a
 * read set, in first-access order. */
#include "record/builder.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

/* Events that merge with the previous one of the same key when they extend
 * it within this many microseconds (a sequential read). */
#define MERGE_WINDOW_US 1000

struct pev {
        uint64_t start, end;  /* pages, [start, end) */
        uint64_t time_us;
        uint32_t kind;
};

struct bkey {
        uint32_t kdev;
        uint64_t ino;
        struct pev *ev;
        size_t n_ev, cap_ev;
};

struct rs_builder {
        struct bkey *keys;
        size_t n_keys, cap_keys;
        uint32_t *table;      /* open addressing: key index + 1, 0 = empty */
        size_t table_size;    /* power of two */
        uint64_t n_events;
        uint64_t max_stored;  /* events kept at most (0: no limit) */
        uint64_t n_stored, n_dropped;
};

struct rs_builder *builder_new(void)
{
        return calloc(1, sizeof(struct rs_builder));
}

void builder_free(struct rs_builder *b)
{
        if (!b)
                return;
        for (size_t i = 0; i < b->n_keys; i++)
                free(b->keys[i].ev);
        free(b->keys);
        free(b->table);
        free(b);
}

static uint64_t key_hash(uint32_t kdev, uint64_t ino)
{
        uint64_t h = ino * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)kdev * 0xC2B2AE3D27D4EB4FULL);
        return h ^ (h >> 29);
}

static int table_rehash(struct rs_builder *b)
{
        size_t n = b->table_size ? b->table_size * 2 : 1024;
        uint32_t *t = calloc(n, sizeof(*t));

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_keys; i++) {
                size_t h = key_hash(b->keys[i].kdev, b->keys[i].ino) & (n - 1);
                while (t[h])
                        h = (h + 1) & (n - 1);
                t[h] = (uint32_t)(i + 1);
        }
        free(b->table);
        b->table = t;
        b->table_size = n;
        return 0;
}

static struct bkey *builder_get_key(struct rs_builder *b, uint32_t kdev, uint64_t ino)
{
        size_t h;

        if (b->n_keys + 1 > b->table_size / 2 && table_rehash(b) < 0)
                return NULL;
        h = key_hash(kdev, ino) & (b->table_size - 1);
        while (b->table[h]) {
                struct bkey *k = &b->keys[b->table[h] - 1];
                if (k->kdev == kdev && k->ino == ino)
                        return k;
                h = (h + 1) & (b->table_size - 1);
        }
        if (b->n_keys >= UINT32_MAX - 1)
                return NULL;
        if (grow_array(&b->keys, &b->cap_keys, b->n_keys + 1, sizeof(*b->keys)) < 0)
                return NULL;
        b->keys[b->n_keys] = (struct bkey){ .kdev = kdev, .ino = ino };
        b->table[h] = (uint32_t)(++b->n_keys);
        return &b->keys[b->n_keys - 1];
}

int builder_add(struct rs_builder *b, const struct rs_event *ev)
{
        struct bkey *k;

        if (ev->end_page <= ev->first_page || ev->kind > RS_EV_FILL)
                return -EINVAL;
        if (b->max_stored && b->n_stored >= b->max_stored) {
                /* full: what is kept stays, the rest is counted */
                b->n_events++;
                b->n_dropped++;
                return 0;
        }
        k = builder_get_key(b, ev->kdev, ev->ino);
        if (!k)
                return -ENOMEM;
        b->n_events++;
        if (k->n_ev > 0) {
                struct pev *last = &k->ev[k->n_ev - 1];
                if (last->kind == ev->kind) {
                        /* Already covered by an earlier event of the same kind. */
                        /* Events arrive per CPU, so not quite in time order:
                         * only a later event may be folded into an earlier one. */
                        if (ev->time_us >= last->time_us && ev->first_page >= last->start && ev->end_page <= last->end)
                                return 0;
                        /* A sequential continuation. */
                        if (ev->first_page == last->end && ev->time_us >= last->time_us &&
                            ev->time_us - last->time_us <= MERGE_WINDOW_US) {
                                last->end = ev->end_page;
                                return 0;
                        }
                }
        }
        if (grow_array(&k->ev, &k->cap_ev, k->n_ev + 1, sizeof(*k->ev)) < 0)
                return -ENOMEM;
        k->ev[k->n_ev++] = (struct pev){ ev->first_page, ev->end_page, ev->time_us, ev->kind };
        b->n_stored++;
        return 0;
}

void builder_set_limit(struct rs_builder *b, uint64_t max_events) { b->max_stored = max_events; }
uint64_t builder_n_dropped(const struct rs_builder *b) { return b->n_dropped; }

uint64_t builder_n_events(const struct rs_builder *b) { return b->n_events; }
size_t builder_n_keys(const struct rs_builder *b) { return b->n_keys; }

void builder_key(const struct rs_builder *b, size_t i, uint32_t *ret_kdev, uint64_t *ret_ino)
{
        *ret_kdev = b->keys[i].kdev;
        *ret_ino = b->keys[i].ino;
}

/* A min-heap of event indices ordered by time. */
struct heap {
        size_t *v;
        size_t n, cap;
};

static bool heap_less(const struct pev *ev, size_t a, size_t b)
{
        return ev[a].time_us < ev[b].time_us || (ev[a].time_us == ev[b].time_us && a < b);
}

static int heap_push(struct heap *h, const struct pev *ev, size_t x)
{
        size_t i;

        if (grow_array(&h->v, &h->cap, h->n + 1, sizeof(*h->v)) < 0)
                return -ENOMEM;
        i = h->n++;
        h->v[i] = x;
        while (i > 0 && heap_less(ev, h->v[i], h->v[(i - 1) / 2])) {
                size_t p = (i - 1) / 2, t = h->v[p];
                h->v[p] = h->v[i];
                h->v[i] = t;
                i = p;
        }
        return 0;
}

static void heap_pop(struct heap *h, const struct pev *ev)
{
        size_t i = 0;

        h->v[0] = h->v[--h->n];
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i, t;
                if (l < h->n && heap_less(ev, h->v[l], h->v[m]))
                        m = l;
                if (r < h->n && heap_less(ev, h->v[r], h->v[m]))
                        m = r;
                if (m == i)
                        break;
                t = h->v[m];
                h->v[m] = h->v[i];
                h->v[i] = t;
                i = m;
        }
}

/* Drop events that ended at or before pos from the top of the heap. */
static void heap_expire(struct heap *h, const struct pev *ev, uint64_t pos)
{
        while (h->n > 0 && ev[h->v[0]].end <= pos)
                heap_pop(h, ev);
}

static int cmp_start(const void *a, const void *b)
{
        const struct pev *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        if (x->time_us != y->time_us)
                return x->time_us < y->time_us ? -1 : 1;
        return 0;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

struct seg {
        uint64_t start, end, time_us;
        uint32_t flags;
};

static int cmp_seg_time(const void *a, const void *b)
{
        const struct seg *x = a, *y = b;
        if (x->time_us != y->time_us)
                return x->time_us < y->time_us ? -1 : 1;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return 0;
}

/* The sweep: for every page covered by some event, its first-needed time is
 * the earliest access covering it, or the earliest fill if it was never
 * accessed.  Produces ranges in first-access order. */
static int key_to_ranges(struct bkey *k, struct rs_file *f, uint32_t page_size, uint64_t max_pages)
{
        _cleanup_free_ uint64_t *bounds = NULL;
        _cleanup_free_ struct seg *segs = NULL;
        struct heap acc = { 0 }, fill = { 0 };
        size_t n_bounds = 0, n_segs = 0, cap_segs = 0, next = 0;
        int r = 0;

        if (k->n_ev == 0)
                return 0;
        qsort_safe(k->ev, k->n_ev, sizeof(*k->ev), cmp_start);
        bounds = malloc(2 * k->n_ev * sizeof(*bounds));
        if (!bounds)
                return -ENOMEM;
        for (size_t i = 0; i < k->n_ev; i++) {
                bounds[n_bounds++] = k->ev[i].start;
                bounds[n_bounds++] = k->ev[i].end;
        }
        qsort_safe(bounds, n_bounds, sizeof(*bounds), cmp_u64);

        for (size_t j = 0; j + 1 < n_bounds; j++) {
                uint64_t pos = bounds[j], end = bounds[j + 1];
                struct seg s;

                if (pos == end)
                        continue;
                if (pos >= max_pages)
                        break;
                while (next < k->n_ev && k->ev[next].start <= pos) {
                        struct heap *h = k->ev[next].kind == RS_EV_ACCESS ? &acc : &fill;
                        r = heap_push(h, k->ev, next++);
                        if (r < 0)
                                goto out;
                }
                heap_expire(&acc, k->ev, pos);
                heap_expire(&fill, k->ev, pos);
                if (acc.n == 0 && fill.n == 0)
                        continue;
                s.start = pos;
                s.end = MIN(end, max_pages);
                if (acc.n > 0) {
                        s.time_us = k->ev[acc.v[0]].time_us;
                        s.flags = RS_RANGE_ACCESSED | (fill.n > 0 ? RS_RANGE_FILLED : 0);
                } else {
                        s.time_us = k->ev[fill.v[0]].time_us;
                        s.flags = RS_RANGE_FILLED;
                }
                if (n_segs > 0) {
                        struct seg *p = &segs[n_segs - 1];
                        if (p->end == s.start && p->time_us == s.time_us && p->flags == s.flags) {
                                p->end = s.end;
                                continue;
                        }
                }
                r = grow_array(&segs, &cap_segs, n_segs + 1, sizeof(*segs));
                if (r < 0)
                        goto out;
                segs[n_segs++] = s;
        }

        qsort_safe(segs, n_segs, sizeof(*segs), cmp_seg_time);
        uint64_t last_t = 0;
        for (size_t i = 0; i < n_segs; i++) {
                struct seg *s = &segs[i];
                /* Contiguous in position and, within the merge window, in time
                 * (a sequential read): one range with the first time. */
                if (f->n_ranges > 0) {
                        struct rs_range *p = &f->ranges[f->n_ranges - 1];
                        if (p->offset + p->length == s->start * page_size && p->flags == s->flags &&
                            s->time_us - last_t <= MERGE_WINDOW_US) {
                                p->length += (s->end - s->start) * page_size;
                                last_t = s->time_us;
                                continue;
                        }
                }
                last_t = s->time_us;
                r = readset_file_add_range(f, s->start * page_size, (s->end - s->start) * page_size,
                                           s->time_us, s->flags);
                if (r < 0)
                        goto out;
        }
out:
        free(acc.v);
        free(fill.v);
        return r;
}

static int cmp_file_first(const void *a, const void *b)
{
        const struct rs_file *x = a, *y = b;
        uint64_t tx = x->n_ranges ? x->ranges[0].time_us : UINT64_MAX;
        uint64_t ty = y->n_ranges ? y->ranges[0].time_us : UINT64_MAX;
        if (tx != ty)
                return tx < ty ? -1 : 1;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int builder_finish(struct rs_builder *b, struct readset *rs, uint32_t page_size,
                   rs_resolve_fn resolve, void *userdata)
{
        size_t first = rs->n_files;

        if (page_size == 0 || (page_size & (page_size - 1)))
                return -EINVAL;
        rs->page_size = page_size;
        rs->events += b->n_events;
        for (size_t i = 0; i < b->n_keys; i++) {
                struct bkey *k = &b->keys[i];
                struct rs_identity id = { .kind = RS_FILE_UNRESOLVED };
                uint64_t max_pages = UINT64_MAX / page_size;
                char label[64];
                struct rs_file *f;
                int r;

                if (resolve) {
                        r = resolve(userdata, k->kdev, k->ino, &id);
                        if (r < 0)
                                return r;
                }
                if (!id.path) {
                        /* Keep it, labelled by its identity, so it is counted. */
                        snprintf(label, sizeof(label), "%u:%u:%" PRIu64,
                                 k->kdev >> 20, k->kdev & 0xfffff, k->ino);
                        id.kind = RS_FILE_UNRESOLVED;
                        id.path = label;
                }
                if (id.kind == RS_FILE_REGULAR && id.size > 0)
                        max_pages = (id.size + page_size - 1) / page_size;
                f = readset_add_file(rs, id.path, id.dev, k->ino);
                if (!f)
                        return -ENOMEM;
                f->kind = id.kind;
                f->flags = id.flags;
                f->size = id.size;
                f->mtime_ns = id.mtime_ns;
                r = key_to_ranges(k, f, page_size, max_pages);
                if (r < 0)
                        return r;
                if (f->n_ranges == 0) {
                        /* Everything was past the end of the file. */
                        free(f->path);
                        free(f->ranges);
                        rs->n_files--;
                }
        }
        qsort_safe(rs->files + first, rs->n_files - first, sizeof(*rs->files), cmp_file_first);
        return 0;
}
