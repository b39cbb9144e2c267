/* SPDX-License-Identifier: MIT */
#include "replay/planner.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/banned.h"

void plan_free(struct plan *p)
{
        if (!p)
                return;
        free(p->reads);
        free(p->lookups);
        free(p);
}

struct seg {
        uint64_t start, end, time_us;
};

static int cmp_seg_offset(const void *a, const void *b)
{
        const struct seg *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->time_us < y->time_us ? -1 : x->time_us > y->time_us;
}

struct pctx {
        const struct readset *rs;
        const struct device_profile *dev;
        const struct plan_options *opt;
        struct plan *p;
        size_t cap;
        uint64_t bridge;          /* gaps read through: at most this long */
        bool snapshot;            /* the read set is a snapshot (ranks, not times) */
};

static int emit(struct pctx *c, uint32_t file, uint64_t off, uint64_t len, uint64_t t)
{
        if (grow_array(&c->p->reads, &c->cap, c->p->n_reads + 1, sizeof(*c->p->reads)) < 0)
                return -ENOMEM;
        c->p->reads[c->p->n_reads++] = (struct plan_read){ file, off, len, t };
        return 0;
}

/* Where a read starts on its device: in the extent that holds the offset;
 * in a hole, where the data after it lies; past the last extent, or with
 * no map, unknown (UINT64_MAX). */
static uint64_t position(const struct rp_layout *layouts, uint32_t file, uint64_t offset)
{
        const struct rp_layout *l = layouts ? &layouts[file] : NULL;
        const struct rp_extent *e;
        size_t next;

        if (!l || !l->known)
                return UINT64_MAX;
        e = extent_at(l, offset, &next);
        if (e)
                return e->flags & FIEMAP_EXTENT_ENCODED ? e->physical : e->physical + (offset - e->logical);
        return next < l->n_extents ? l->extents[next].physical : UINT64_MAX;
}

/* On a disk, does reading from end on to next read through bytes that lie
 * between them on the device?  Without a table of maps: assumed (a file
 * mostly lies in one piece).  With one: only if next lies gap bytes after
 * end's last byte, so that a gap whose data lies elsewhere (a layout that
 * moved only the ranges a start reads, a fragmented file) is not read
 * through: that would send the head away and back.  A file whose file
 * system keeps no map (squashfs: compressed, in blocks of its own) is not
 * read through either: the gap is blocks to find and decompress that the
 * start never needs, where an image's reads (a portable read set's) have
 * read only the start's (packed zstd image on the emulated 7200 rpm disk:
 * replay alone 0.84 s with the gaps, 106 MB planned of 68 MB). */
static bool contiguous_gap(const struct pctx *c, uint32_t fi, uint64_t end, uint64_t next)
{
        uint64_t a, b;

        /* (only a disk's head is sent away: on solid state a gap costs
         * its bytes wherever they lie) */
        if (next <= end || !c->dev->rotational || !c->opt->layouts)
                return true;
        if (!c->opt->layouts[fi].known)
                return c->rs->files[fi].kind != RS_FILE_REGULAR;   /* (a block device's: never asked) */
        a = position(c->opt->layouts, fi, end - 1);
        b = position(c->opt->layouts, fi, next);
        if (a == UINT64_MAX || b == UINT64_MAX)
                return true;
        return b > a && b - a - 1 == next - end;
}

/* One file: merge its ranges by position, read through small gaps, split
 * what is larger than a request.  A piece keeps the earliest time of the
 * ranges it covers. */
static int plan_file(struct pctx *c, uint32_t fi)
{
        const struct rs_file *f = &c->rs->files[fi];
        _cleanup_free_ struct seg *s = NULL;
        _cleanup_free_ uint64_t *tmin = NULL;
        uint64_t page = c->rs->page_size ? c->rs->page_size : 4096;
        uint64_t bridge = c->bridge, maxreq = MAX(c->dev->max_request, page), limit, cap_t = 0;
        size_t n = 0;

        /* Where reads are sorted by position, one per readahead(2) call, each
         * placed by its own position: a long read issued piece by piece while
         * the sweep moves on would pull the head back and forth. */
        if (c->dev->rotational)
                maxreq = MAX(MIN(maxreq, MAX(c->dev->readahead_cap, 128ULL << 10)), page);

        if (f->n_ranges == 0)
                return 0;
        s = malloc(f->n_ranges * sizeof(*s));
        if (!s)
                return -ENOMEM;
        limit = readset_read_limit(c->rs, f);
        for (size_t i = 0; i < f->n_ranges; i++) {
                const struct rs_range *r = &f->ranges[i];
                uint64_t a = r->offset, b;
                /* metadata pages are read through buffer heads and only ever
                 * seen being brought in: keep them whatever the option says */
                if (c->opt->accessed_only && f->kind == RS_FILE_REGULAR && !(r->flags & RS_RANGE_ACCESSED))
                        continue;
                if (a >= limit)
                        continue;
                b = r->length > limit - a ? limit : a + r->length;
                s[n++] = (struct seg){ a, b, r->time_us };
                c->p->bytes_recorded += b - a;
        }
        qsort_safe(s, n, sizeof(*s), cmp_seg_offset);

        for (size_t i = 0; i < n;) {
                /* a run of ranges closer than `bridge` to each other */
                uint64_t start = s[i].start, end = s[i].end, pieces;
                size_t j = i + 1;

                /* (a snapshot's ranks are not merged: a request takes its
                 * best rank to the budget, and one rank-0 page would carry
                 * new ones ahead of every older page elsewhere) */
                while (j < n && s[j].start <= end + bridge && contiguous_gap(c, fi, end, s[j].start) &&
                       (!c->snapshot || s[j].time_us == s[i].time_us)) {
                        end = MAX(end, s[j].end);
                        j++;
                }
                /* cut it into requests, each with the earliest time of the
                 * ranges it covers: one pass over the ranges, each marking
                 * the pieces it overlaps */
                pieces = (end - start + maxreq - 1) / maxreq;
                if (pieces > cap_t) {
                        uint64_t *q = realloc(tmin, pieces * sizeof(*tmin));
                        if (!q)
                                return -ENOMEM;
                        tmin = q;
                        cap_t = pieces;
                }
                for (uint64_t m = 0; m < pieces; m++)
                        tmin[m] = UINT64_MAX;
                for (size_t k = i; k < j; k++) {
                        uint64_t first = (s[k].start - start) / maxreq, last = (s[k].end - 1 - start) / maxreq;
                        for (uint64_t m = first; m <= last; m++)
                                tmin[m] = MIN(tmin[m], s[k].time_us);
                }
                for (uint64_t m = 0; m < pieces; m++) {
                        uint64_t off = start + m * maxreq, len = MIN(maxreq, end - off);
                        if (tmin[m] == UINT64_MAX)
                                continue;   /* only bridged gap: nothing needed here */
                        if (emit(c, fi, off, len, tmin[m]) < 0)
                                return -ENOMEM;
                }
                i = j;
        }
        return 0;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* A snapshot's gaps are read through only up to a third of its bytes, the
 * shortest first: its pages are scattered over files that may be far
 * larger than memory (a restore in a service's memory cgroup), and the
 * device's bridge alone read 40 times the snapshot's bytes on the emulated
 * disk, in no less time (bench/results/snapshot-restore.md; a half read
 * 1.57 times them with the file system's own blocks).  And only in the
 * room the budget leaves beyond the snapshot's own bytes: a gap read in a
 * budget the snapshot fills takes the place of a page the service will
 * use (a restore in PostgreSQL's 192 MB cgroup bridged 31 MiB and left 36
 * MiB of the snapshot out; bench/keep's load began 30% below its warm
 * throughput).  The longest gap that fits. */
static int snapshot_bridge(const struct pctx *c, uint64_t *ret)
{
        _cleanup_free_ uint64_t *gaps = NULL;
        size_t n = 0, cap = 0;
        uint64_t data = 0, sum = 0, limit = 0, allow;

        *ret = 0;
        if (!c->dev->bridge_bytes)
                return 0;
        for (size_t i = 0; i < c->rs->n_files; i++) {
                const struct rs_file *f = &c->rs->files[i];
                _cleanup_free_ struct seg *s = NULL;
                size_t m = 0;

                if (f->kind != RS_FILE_REGULAR || !f->n_ranges)
                        continue;
                s = malloc(f->n_ranges * sizeof(*s));
                if (!s)
                        return -ENOMEM;
                for (size_t j = 0; j < f->n_ranges; j++) {
                        s[m++] = (struct seg){ f->ranges[j].offset, f->ranges[j].offset + f->ranges[j].length, 0 };
                        data += f->ranges[j].length;
                }
                qsort_safe(s, m, sizeof(*s), cmp_seg_offset);
                for (size_t j = 1; j < m; j++) {
                        uint64_t g = s[j].start > s[j - 1].end ? s[j].start - s[j - 1].end : 0;
                        if (!g || g > c->dev->bridge_bytes || !contiguous_gap(c, (uint32_t)i, s[j - 1].end, s[j].start))
                                continue;
                        if (grow_array(&gaps, &cap, n + 1, sizeof(*gaps)) < 0)
                                return -ENOMEM;
                        gaps[n++] = g;
                }
        }
        qsort_safe(gaps, n, sizeof(*gaps), cmp_u64);
        allow = data / 3;
        if (c->opt->max_bytes)
                allow = c->opt->max_bytes > data ? MIN(allow, c->opt->max_bytes - data) : 0;
        size_t i = 0;
        for (; i < n && sum + gaps[i] <= allow; i++) {
                sum += gaps[i];
                limit = gaps[i];
        }
        /* every gap up to the limit is bridged: where the first one left
         * out is as long as the limit, the limit is the longest shorter one */
        if (i < n && gaps[i] == limit) {
                while (i > 0 && gaps[i - 1] == limit)
                        i--;
                limit = i > 0 ? gaps[i - 1] : 0;
        }
        *ret = limit;
        return 0;
}

static int cmp_time(const void *a, const void *b)
{
        const struct plan_read *x = a, *y = b;
        if (x->time_us != y->time_us)
                return x->time_us < y->time_us ? -1 : 1;
        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Sort reads that are in (file, offset) order by their time slice
 * ((time - earliest) / slice), stably: with slice 1 that is cmp_time()'s
 * order, with a larger slice each slice's reads stay in (file, offset)
 * order.  A radix sort, a byte of the key a pass, as many passes as the
 * keys' span needs (qsort was a third of planning a million reads). */
static int sort_by_slice(struct plan_read *r, size_t n, uint64_t slice)
{
        _cleanup_free_ struct plan_read *tmp = NULL;
        struct plan_read *src = r, *dst;
        uint64_t lo = UINT64_MAX, hi = 0;
        size_t pos[256];

        if (n < 2)
                return 0;
        for (size_t i = 0; i < n; i++) {
                lo = MIN(lo, r[i].time_us);
                hi = MAX(hi, r[i].time_us);
        }
        if (slice == 1 && n < 256) {
                qsort_safe(r, n, sizeof(*r), cmp_time);
                return 0;
        }
        tmp = malloc(n * sizeof(*tmp));
        if (!tmp)
                return -ENOMEM;
        dst = tmp;
#define KEY(x) (((x).time_us - lo) / slice)
        for (unsigned shift = 0; shift < 64 && (((hi - lo) / slice) >> shift) != 0; shift += 8) {
                size_t sum = 0;
                memset(pos, 0, sizeof(pos));
                for (size_t i = 0; i < n; i++)
                        pos[(KEY(src[i]) >> shift) & 0xff]++;
                for (size_t d = 0; d < 256; d++) {
                        size_t k = pos[d];
                        pos[d] = sum;
                        sum += k;
                }
                for (size_t i = 0; i < n; i++)
                        dst[pos[(KEY(src[i]) >> shift) & 0xff]++] = src[i];
                SWAP(src, dst);
        }
#undef KEY
        if (src != r)
                memcpy(r, src, n * sizeof(*r));
        return 0;
}

static int cmp_offset(const void *a, const void *b)
{
        const struct plan_read *x = a, *y = b;
        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Position of a read on the device: from the layouts where known, else
 * (device, inode, offset) as a stand-in for "near each other": after the
 * positioned reads, each file's reads together (a file not written back
 * yet has no position until it is). */
struct keyed {
        uint64_t k1, k2, k3;
        struct plan_read r;
};

static int cmp_keyed(const void *a, const void *b)
{
        const struct keyed *x = a, *y = b;
        if (x->k1 != y->k1)
                return x->k1 < y->k1 ? -1 : 1;
        if (x->k2 != y->k2)
                return x->k2 < y->k2 ? -1 : 1;
        return x->k3 < y->k3 ? -1 : x->k3 > y->k3;
}

static int sort_window(struct pctx *c, struct plan_read *r, size_t n)
{
        _cleanup_free_ struct keyed *k = malloc((n ? n : 1) * sizeof(*k));

        if (!k)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct rs_file *f = &c->rs->files[r[i].file];
                uint64_t ph = f->kind == RS_FILE_REGULAR ? position(c->opt->layouts, r[i].file, r[i].offset) : UINT64_MAX;
                /* positions are per filesystem: never interleave two */
                if (ph != UINT64_MAX)
                        k[i] = (struct keyed){ 2 * f->dev, ph, 0, r[i] };
                else
                        k[i] = (struct keyed){ 2 * f->dev + 1, f->ino, r[i].offset, r[i] };
        }
        qsort_safe(k, n, sizeof(*k), cmp_keyed);
        for (size_t i = 0; i < n; i++)
                r[i] = k[i].r;
        return 0;
}

static int cmp_u32_path(const void *a, const void *b, void *userdata)
{
        const struct readset *rs = userdata;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        int c = strcmp(rs->lookups[x].path, rs->lookups[y].path);
        if (c)
                return c;
        return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t dir_len(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? (size_t)(slash - path) : 0;
}

struct dir_sort {
        const struct readset *rs;
        const size_t *dlen;     /* per lookup: dir_len of its path, worked out once */
};

/* by directory (the path up to its last slash), then by first use */
static int cmp_u32_dir(const void *a, const void *b, void *userdata)
{
        const struct dir_sort *d = userdata;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        size_t lx = d->dlen[x], ly = d->dlen[y];
        int c = memcmp(d->rs->lookups[x].path, d->rs->lookups[y].path, MIN(lx, ly));

        if (c)
                return c;
        if (lx != ly)
                return lx < ly ? -1 : 1;
        return x < y ? -1 : x > y;
}

/* On a local filesystem a stat of one name brings in the directory's
 * blocks and, with the inode table read ahead around it, the inodes of its
 * neighbours: keep every listing, and of the other lookups the first of
 * each directory and one in the caller's stride for it after that. */
static int thin_lookups(struct pctx *c)
{
        const struct readset *rs = c->rs;
        uint32_t *l = c->p->lookups, stride = 1;
        size_t n = c->p->n_lookups, kept = 0, in_dir = 0;
        _cleanup_free_ size_t *dlen = malloc((rs->n_lookups ? rs->n_lookups : 1) * sizeof(*dlen));
        struct dir_sort d = { rs, dlen };

        if (!dlen)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                dlen[l[i]] = dir_len(rs->lookups[l[i]].path);
        if (n > 1)
                qsort_r(l, n, sizeof(*l), cmp_u32_dir, &d);
        for (size_t i = 0; i < n; i++) {
                const char *p = rs->lookups[l[i]].path;
                size_t len = dlen[l[i]];
                if (i == 0 || len != dlen[l[i - 1]] || memcmp(p, rs->lookups[l[i - 1]].path, len) != 0) {
                        in_dir = 0;
                        stride = MAX(c->opt->lookup_stride(c->opt->lookup_stride_userdata, p, len), 1u);
                }
                if (rs->lookups[l[i]].op == RS_LOOKUP_READDIR || in_dir++ % stride == 0)
                        l[kept++] = l[i];
        }
        c->p->lookups_thinned = n - kept;
        c->p->n_lookups = kept;
        return 0;
}

/* Distinct lookup paths (a stat of each warms the dentry cache, positive or
 * negative), in the order of their first use; not the files the plan reads,
 * whose opening warms them anyway. */
static int plan_lookups(struct pctx *c)
{
        const struct readset *rs = c->rs;
        _cleanup_free_ uint32_t *idx = NULL;
        _cleanup_free_ const char **planned = NULL;
        _cleanup_free_ uint8_t *seen = NULL;
        size_t n = 0, n_planned = 0;

        if (rs->n_lookups == 0)
                return 0;
        if (rs->n_lookups > UINT32_MAX)
                return -E2BIG;
        idx = malloc(rs->n_lookups * sizeof(*idx));
        if (!idx)
                return -ENOMEM;
        planned = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*planned));
        seen = calloc(rs->n_files ? rs->n_files : 1, 1);
        if (!planned || !seen)
                return -ENOMEM;
        for (size_t i = 0; i < c->p->n_reads; i++) {
                uint32_t f = c->p->reads[i].file;
                if (!seen[f] && rs->files[f].kind == RS_FILE_REGULAR) {
                        seen[f] = 1;
                        planned[n_planned++] = rs->files[f].path;
                }
        }
        qsort_safe(planned, n_planned, sizeof(*planned), cmp_str);
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const char *path = rs->lookups[i].path;
                if (path[0] != '/')
                        continue;
                if (n_planned && bsearch(&path, planned, n_planned, sizeof(*planned), cmp_str))
                        continue;
                idx[n++] = (uint32_t)i;
        }
        if (n > 1)
                qsort_r(idx, n, sizeof(*idx), cmp_u32_path, (void *)rs);
        c->p->lookups = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!c->p->lookups)
                return -ENOMEM;
        /* one per path, the first use; but a directory that was listed is
         * kept as a listing, so that replay reads its blocks too */
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && strcmp(rs->lookups[idx[i]].path, rs->lookups[idx[i - 1]].path) == 0) {
                        uint32_t *last = &c->p->lookups[c->p->n_lookups - 1];
                        if (rs->lookups[idx[i]].op == RS_LOOKUP_READDIR && rs->lookups[*last].op != RS_LOOKUP_READDIR)
                                *last = idx[i];
                        continue;
                }
                c->p->lookups[c->p->n_lookups++] = idx[i];
        }
        if (c->opt->lookup_stride) {
                int r = thin_lookups(c);
                if (r < 0)
                        return r;
        }
        qsort_safe(c->p->lookups, c->p->n_lookups, sizeof(uint32_t), cmp_u32);
        return 0;
}

int planner_build(const struct readset *rs, const struct device_profile *dev,
                  const struct plan_options *opt, struct plan **ret)
{
        static const struct plan_options none = { 0 };
        struct pctx c = { .rs = rs, .dev = dev, .opt = opt ? opt : &none };
        size_t n_meta;
        bool snapshot;
        int r;

        if (rs->n_files > UINT32_MAX)
                return -E2BIG;
        c.p = calloc(1, sizeof(*c.p));
        if (!c.p)
                return -ENOMEM;

        c.bridge = dev->bridge_bytes;
        snapshot = c.snapshot = rs->rec_flags & RS_REC_SNAPSHOT;
        if (snapshot && (r = snapshot_bridge(&c, &c.bridge)) < 0)
                goto fail;

        /* 1. Filesystem metadata first: every open and stat needs it. */
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_BLOCKDEV && (r = plan_file(&c, (uint32_t)i)) < 0)
                        goto fail;
        n_meta = c.p->n_reads;
        /* by position: it is one device, and small */
        qsort_safe(c.p->reads, n_meta, sizeof(*c.p->reads), cmp_offset);

        /* 2. File data, in the order the start first needed it. */
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR && (r = plan_file(&c, (uint32_t)i)) < 0)
                        goto fail;
        /* plan_file() emits a file's reads by offset, and files go in index
         * (first-access) order: the data is in (file, offset) order here.
         * On solid state, reads in the same slice of recorded time stay so:
         * the kernel then finds each file's page-cache tree and extent map
         * warm from the read before.
         * A snapshot's times are ranks (keep/snapshot.h): strictly by them,
         * so that the budget below keeps the pages that stayed longest. */
        r = sort_by_slice(c.p->reads + n_meta, c.p->n_reads - n_meta,
                          !snapshot && !dev->rotational && dev->window_us > 0 ? dev->window_us : 1);
        if (r < 0)
                goto fail;

        /* 3. The byte budget: keep what is needed first. */
        {
                uint64_t total = 0;
                size_t keep = c.p->n_reads;
                for (size_t i = 0; i < c.p->n_reads; i++) {
                        if (c.opt->max_bytes && total + c.p->reads[i].length > c.opt->max_bytes) {
                                /* the read that crosses the budget is cut to it (whole
                                 * pages): one long range is not all or nothing */
                                uint64_t room = (c.opt->max_bytes - total) & ~(uint64_t)4095;
                                keep = i;
                                if (room > 0) {
                                        c.p->bytes_cut += c.p->reads[i].length - room;
                                        c.p->reads[i].length = room;
                                        total += room;
                                        keep = i + 1;
                                }
                                break;
                        }
                        total += c.p->reads[i].length;
                }
                for (size_t i = keep; i < c.p->n_reads; i++)
                        c.p->bytes_cut += c.p->reads[i].length;
                c.p->n_reads = keep;
                c.p->bytes = total;
                c.p->n_meta = MIN(n_meta, keep);
        }

        /* 4. Where seeks dominate, sort the data by position inside time
         * windows (the metadata is in device order already).  A snapshot
         * has no timeline: what the budget kept is one window, one sweep
         * (by file and offset where seeks cost nothing). */
        if (snapshot && dev->rotational) {
                c.p->by_position = true;
                r = sort_window(&c, c.p->reads + c.p->n_meta, c.p->n_reads - c.p->n_meta);
                if (r < 0)
                        goto fail;
        } else if (snapshot) {
                qsort_safe(c.p->reads + c.p->n_meta, c.p->n_reads - c.p->n_meta, sizeof(*c.p->reads), cmp_offset);
        } else if (dev->rotational && dev->window_us > 0) {
                size_t i = c.p->n_meta;
                c.p->by_position = true;
                while (i < c.p->n_reads) {
                        size_t j = i;
                        uint64_t t0 = c.p->reads[i].time_us;
                        while (j < c.p->n_reads && c.p->reads[j].time_us - t0 < dev->window_us)
                                j++;
                        r = sort_window(&c, c.p->reads + i, j - i);
                        if (r < 0)
                                goto fail;
                        i = j;
                }
        }

        r = plan_lookups(&c);
        if (r < 0)
                goto fail;
        *ret = c.p;
        return 0;
fail:
        plan_free(c.p);
        return r;
}
