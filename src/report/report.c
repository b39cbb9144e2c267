/* SPDX-License-Identifier: MIT */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "replay/pace.h"
#include "replay/planner.h"
#include "replay/policy.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

#define SMALL_RANGE (16 * 1024)

void report_free(struct report *r)
{
        if (!r)
                return;
        free(r->pieces);
        free(r->files);
        free(r->share_root);
        free(r->lookup_trips);
        free(r);
}

struct piece_sink {
        struct rp_piece *p;
        size_t n, cap;
};

static int sink_add(struct piece_sink *s, uint32_t file, uint64_t off, uint64_t len, uint64_t phys, uint64_t t)
{
        if (s->n >= RP_MAX_PIECES)
                return -E2BIG;
        if (grow_array(&s->p, &s->cap, s->n + 1, sizeof(*s->p)) < 0)
                return -ENOMEM;
        s->p[s->n++] = (struct rp_piece){ file, off, len, phys, t, false, false };
        return 0;
}

/* Cut [off, off+len) of file fi into physically contiguous pieces.  Counts
 * the extents it touches in *touched when not NULL (ext_seen marks them). */
static int map_range(const struct readset *rs, const struct rp_layout *layouts, uint32_t fi, uint64_t off,
                     uint64_t len, uint64_t t, struct piece_sink *s, uint64_t *touched, uint8_t *ext_seen)
{
        const struct rs_file *f = &rs->files[fi];
        const struct rp_layout *l = layouts ? &layouts[fi] : NULL;
        uint64_t end = off + len < off ? UINT64_MAX : off + len;

        if (f->kind == RS_FILE_BLOCKDEV)
                return sink_add(s, fi, off, len, off, t);
        if (!l || !l->known)
                return sink_add(s, fi, off, len, COST_POS_UNKNOWN, t);
        while (off < end) {
                size_t idx;
                const struct rp_extent *e = extent_at(l, off, &idx);
                uint64_t n;
                int r;

                if (!e) {
                        /* a hole or past the mapped end: up to the next extent, position unknown */
                        n = idx < l->n_extents ? MIN(end, l->extents[idx].logical) - off : end - off;
                        r = sink_add(s, fi, off, n, COST_POS_UNKNOWN, t);
                } else {
                        n = MIN(end - off, e->logical + e->length - off);
                        r = sink_add(s, fi, off, n, e->physical + (off - e->logical), t);
                        if (touched && ext_seen && !ext_seen[idx]) {
                                ext_seen[idx] = 1;
                                (*touched)++;
                        }
                }
                if (r < 0)
                        return r;
                off += n;
        }
        return 0;
}

struct rref {
        uint64_t time_us;
        uint32_t file;
        uint32_t range;
};

static int cmp_rref(const void *a, const void *b)
{
        const struct rref *x = a, *y = b;
        if (x->time_us != y->time_us)
                return x->time_us < y->time_us ? -1 : 1;
        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        return x->range < y->range ? -1 : x->range > y->range;
}

struct pairmove {
        uint32_t a, b;
        uint64_t dist;
};

static int cmp_pairmove(const void *x, const void *y)
{
        const struct pairmove *p = x, *q = y;
        if (p->a != q->a)
                return p->a < q->a ? -1 : 1;
        if (p->b != q->b)
                return p->b < q->b ? -1 : 1;
        return p->dist < q->dist ? -1 : p->dist > q->dist;
}

static int hist_bucket(uint64_t prev_end, uint64_t pos)
{
        uint64_t d;

        if (prev_end == COST_POS_UNKNOWN || pos == COST_POS_UNKNOWN)
                return RP_HIST_UNKNOWN;
        if (pos == prev_end)
                return RP_HIST_CONTIG;
        d = pos > prev_end ? pos - prev_end : prev_end - pos;
        return d < (1ULL << 20) ? RP_HIST_1M : d < (16ULL << 20) ? RP_HIST_16M :
               d < (256ULL << 20) ? RP_HIST_256M : d < (4ULL << 30) ? RP_HIST_4G : RP_HIST_FAR;
}

/* The pair of files the head moves between most often (moves of 1 MiB or
 * more: seeks). */
static int find_alternation(const struct readset *rs, struct report *r)
{
        _cleanup_free_ struct pairmove *m = NULL;
        size_t n = 0;

        if (r->n_pieces < 2)
                return 0;
        m = malloc((r->n_pieces - 1) * sizeof(*m));
        if (!m)
                return -ENOMEM;
        for (size_t i = 1; i < r->n_pieces; i++) {
                const struct rp_piece *p = &r->pieces[i - 1], *q = &r->pieces[i];
                uint64_t pe, d;
                if (p->file == q->file || p->phys == COST_POS_UNKNOWN || q->phys == COST_POS_UNKNOWN)
                        continue;
                if (rs->files[p->file].kind != RS_FILE_REGULAR || rs->files[q->file].kind != RS_FILE_REGULAR)
                        continue;       /* metadata has a finding of its own */
                pe = p->phys + p->length;
                d = q->phys > pe ? q->phys - pe : pe - q->phys;
                if (d < (1ULL << 20))
                        continue;       /* within a track or two: no seek */
                m[n++] = (struct pairmove){ MIN(p->file, q->file), MAX(p->file, q->file), d };
        }
        qsort_safe(m, n, sizeof(*m), cmp_pairmove);
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j < n && m[j].a == m[i].a && m[j].b == m[i].b)
                        j++;
                if (j - i > r->alt.switches)
                        r->alt = (struct rp_alternation){ m[i].a, m[i].b, j - i, m[i + (j - i) / 2].dist };
                i = j;
        }
        return 0;
}

static bool on_other_device(const struct readset *rs, const struct report *r, uint32_t file)
{
        return rs->files[file].kind == RS_FILE_UNRESOLVED ? false : rs->files[file].dev != r->main_dev;
}

int report_build(const struct readset *rs, const struct rp_layout *layouts, uint64_t request_bytes,
                 struct report **ret)
{
        _cleanup_(report_freep) struct report *r = calloc(1, sizeof(*r));
        _cleanup_free_ struct rref *refs = NULL;
        struct piece_sink s = {};
        size_t nr = 0, k = 0;
        uint64_t prev_end = COST_POS_UNKNOWN;
        int ret_r = 0;

        if (!r)
                return -ENOMEM;
        readset_totals(rs, &r->totals);
        r->request_bytes = request_bytes ? request_bytes : 128 << 10;
        r->pages = r->totals.bytes / (rs->page_size ? rs->page_size : 4096);
        r->files = calloc(rs->n_files ? rs->n_files : 1, sizeof(*r->files));
        if (!r->files)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++)
                nr += rs->files[i].n_ranges;
        refs = malloc((nr ? nr : 1) * sizeof(*refs));
        if (!refs)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                struct rp_file_stats *fs = &r->files[i];
                if (f->kind == RS_FILE_REGULAR)
                        r->file_bytes += f->size;
                if (layouts && layouts[i].known)
                        fs->extents = layouts[i].n_extents;
                for (size_t j = 0; j < f->n_ranges; j++) {
                        const struct rs_range *g = &f->ranges[j];
                        refs[k++] = (struct rref){ g->time_us, (uint32_t)i, (uint32_t)j };
                        fs->bytes += g->length;
                        fs->ranges++;
                        if (g->length <= SMALL_RANGE) {
                                fs->small_ranges++;
                                r->small_ranges++;
                        }
                        if (f->kind == RS_FILE_BLOCKDEV) {
                                r->meta_ranges++;
                                r->meta_bytes += g->length;
                        } else {
                                r->data_ranges++;
                                r->data_bytes += g->length;
                        }
                }
        }
        qsort_safe(refs, nr, sizeof(*refs), cmp_rref);
        ret_r = readset_main_device(rs, &r->main_dev);
        if (ret_r < 0)
                return ret_r;

        /* pieces in first-access order, and the extents they touch (one
         * flag per extent of every file) */
        _cleanup_free_ size_t *ext_base = calloc(rs->n_files ? rs->n_files : 1, sizeof(size_t));
        _cleanup_free_ uint8_t *seen = NULL;
        size_t n_ext = 0;
        if (!ext_base)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files && layouts; i++) {
                ext_base[i] = n_ext;
                if (layouts[i].known)
                        n_ext += layouts[i].n_extents;
        }
        seen = calloc(n_ext ? n_ext : 1, 1);
        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < nr; i++) {
                const struct rs_file *f = &rs->files[refs[i].file];
                const struct rs_range *g = &f->ranges[refs[i].range];
                uint64_t len = g->length, limit = readset_read_limit(rs, f);
                size_t from = s.n;
                if (g->offset >= limit)
                        continue;
                len = MIN(len, limit - g->offset);
                ret_r = map_range(rs, layouts, refs[i].file, g->offset, len, g->time_us, &s,
                                  &r->files[refs[i].file].extents_touched, seen + ext_base[refs[i].file]);
                if (ret_r < 0)
                        goto fail;
                for (size_t x = from; x < s.n; x++)
                        s.p[x].waited = (g->flags & RS_RANGE_ACCESSED) || f->kind == RS_FILE_BLOCKDEV;
        }
        for (size_t i = 0; i < rs->n_files; i++)
                r->extents_touched += r->files[i].extents_touched;

        r->pieces = s.p;
        r->n_pieces = s.n;
        s.p = NULL;
        r->pos_min = UINT64_MAX;
        for (size_t i = 0; i < r->n_pieces; i++) {
                struct rp_piece *p = &r->pieces[i];
                if (on_other_device(rs, r, p->file)) {
                        /* positions on two devices do not compare */
                        p->other_dev = true;
                        p->phys = COST_POS_UNKNOWN;
                        r->other_dev_pieces++;
                        r->other_dev_bytes += p->length;
                }
                r->files[p->file].pieces++;
                if (i > 0)
                        r->hist[hist_bucket(prev_end, p->phys)]++;
                prev_end = p->phys == COST_POS_UNKNOWN ? COST_POS_UNKNOWN : p->phys + p->length;
                if (p->phys != COST_POS_UNKNOWN) {
                        r->pos_min = MIN(r->pos_min, p->phys);
                        r->pos_max = MAX(r->pos_max, p->phys + p->length);
                }
        }
        if (r->pos_min == UINT64_MAX)
                r->pos_min = 0;
        ret_r = find_alternation(rs, r);
        if (ret_r < 0)
                return ret_r;
        *ret = TAKE_PTR(r);
        return 0;
fail:
        free(s.p);
        return ret_r;
}

/* ---- prediction ------------------------------------------------------- */

struct req_sink {
        struct cost_req *q;
        uint32_t *file;       /* the file each request belongs to (may stay NULL) */
        size_t n, cap, cap_file;
};

/* A run of len bytes at pos, read in requests of at most max_req. */
static int req_add(struct req_sink *s, uint64_t pos, uint64_t len, uint32_t file, uint64_t max_req)
{
        if (len == 0)
                return 0;
        if (grow_array(&s->q, &s->cap, s->n + 1, sizeof(*s->q)) < 0 ||
            grow_array(&s->file, &s->cap_file, s->n + 1, sizeof(*s->file)) < 0)
                return -ENOMEM;
        s->q[s->n] = (struct cost_req){ pos, len, max_req };
        s->file[s->n] = file;
        s->n++;
        return 0;
}

static int cmp_req_pos(const void *a, const void *b)
{
        const struct cost_req *x = a, *y = b;
        return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* After layout: the metadata by position, then the data in one run; what
 * a layout cannot place (no position, another device) read as the replay
 * reads it, each file's share in one piece.  Then the sequential limit:
 * the same bytes as one file read in order, the kernel keeping the next
 * readahead window in flight.  s is the caller's (emptied here). */
static int predict_layout(const struct report *r, const struct readset *rs, const struct cost_profile *p,
                          const struct device_profile *dev, const uint8_t *off, const struct cost_meta *rm,
                          struct req_sink *s, struct rp_scenarios *ret)
{
        _cleanup_free_ uint64_t *unplaced = calloc(rs->n_files ? rs->n_files : 1, sizeof(*unplaced));
        uint64_t data = 0, bytes = 0;
        int e = 0;

        if (!unplaced)
                return -ENOMEM;
        s->n = 0;
        for (size_t i = 0; i < r->n_pieces && e >= 0; i++) {
                const struct rp_piece *q = &r->pieces[i];
                if (off[q->file])
                        continue;
                bytes += q->length;
                if (q->other_dev || q->phys == COST_POS_UNKNOWN)
                        unplaced[q->file] += q->length;
                else if (rs->files[q->file].kind == RS_FILE_BLOCKDEV)
                        e = req_add(s, q->phys, q->length, q->file, q->length);
                else
                        data += q->length;
        }
        for (size_t i = 0; i < rs->n_files && e >= 0; i++)
                if (unplaced[i])
                        e = req_add(s, COST_POS_UNKNOWN, unplaced[i], (uint32_t)i,
                                    p->rotational ? dev->readahead_cap : dev->max_request);
        if (e < 0)
                return e;
        qsort_safe(s->q, s->n, sizeof(*s->q), cmp_req_pos);
        /* where a layout for cold starts puts its data: the start of the
         * device (a disk's outer, fastest tracks) */
        e = req_add(s, 0, data, 0, 1 << 20);
        if (e < 0)
                return e;
        cost_estimate(p, s->q, s->n, dev->queue_depth, rm, &ret->layout);

        s->n = 0;
        e = req_add(s, 0, bytes, 0, r->request_bytes);
        if (e < 0)
                return e;
        struct cost_meta sm = { .opens = 1, .parallel = 1 };
        cost_estimate(p, s->q, s->n, 2, &sm, &ret->sequential);
        return 0;
}

/* The files a column leaves out (1 each; *ret_opens: the regular files it
 * keeps): with main_only, those not on the main device (on_share: not on
 * the share); where the lookups are costed, the block device's metadata.
 * NULL: out of memory. */
static uint8_t *column_files(const struct report *r, const struct readset *rs, bool main_only, bool on_share,
                             bool lookups_costed, uint64_t *ret_opens)
{
        uint8_t *off = calloc(rs->n_files ? rs->n_files : 1, 1);

        *ret_opens = 0;
        if (!off)
                return NULL;
        for (size_t i = 0; i < rs->n_files; i++) {
                off[i] = (lookups_costed && rs->files[i].kind == RS_FILE_BLOCKDEV) ||
                         (main_only && (on_share ? rs->files[i].kind == RS_FILE_UNRESOLVED ||
                                                   rs->files[i].dev != r->share_dev :
                                                   on_other_device(rs, r, (uint32_t)i)));
                *ret_opens += rs->files[i].kind == RS_FILE_REGULAR && !off[i];
        }
        return off;
}

/* Is a directory that failed lookups went through there now? */
static bool dir_exists(void *userdata, const char *path)
{
        struct stat st;
        (void)userdata;
        return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0 && S_ISDIR(st.st_mode);
}

/* The share's client's round trips for rs's lookups below root (client.h),
 * each lookup's kept in r->lookup_trips for the findings (file_shares). */
static int cost_lookups(struct report *r, const struct readset *rs, const struct cost_profile *p,
                        const struct plan *plan, const char *root, bool file_shares, struct rp_scenarios *ret)
{
        const struct client_exists ex = { dir_exists, NULL };

        if (file_shares && !r->lookup_trips && rs->n_lookups &&
            !(r->lookup_trips = calloc(rs->n_lookups, sizeof(*r->lookup_trips))))
                return -ENOMEM;
        return client_cost(rs, plan, p, root, &ex, file_shares ? r->lookup_trips : NULL, &ret->lookups_plain,
                           &ret->lookups_replay, &ret->lookups_warmed);
}

/* readset run: the start waits for the replay at most, and for what its
 * client asks anyway, one round trip after another. */
static void predict_run(const struct cost_profile *p, struct rp_scenarios *ret)
{
        const struct client_cost *lr = &ret->lookups_replay;
        double rtt = p->lat_us / 1e6, setup, files, pacer;

        ret->run = (struct cost_result){ .seconds = ret->replay.seconds };
        if (!ret->lookups_costed)
                return;
        /* on a share run's replay opens and reads the files; the lookups
         * are the pacer's, made beside the start by its threads
         * (replay/pace.h), while the start asks what no warming answers;
         * all three go on beside each other, and beside the replay's
         * transfer, once run has set up (measured on the emulated share:
         * the boot-shaped tree at 2 ms, the start's own 6.2 s of opens
         * with the replay's 1.8 s of opens and requests beside them, took
         * 6.8 s on nfs and, once the pacer's window no longer ran a second
         * ahead of the start, 7.9 s on smb; at 0.2 ms, 2.3 s of transfer,
         * the start 2.3 s) */
        setup = ret->replay.host_s;
        files = ret->replay.positioning_s +
                (double)lr->file_round_trips * rtt / cost_parallel(p, COST_REPLAY_THREADS);
        /* the pacer makes the lookups worth it (a round trip each at
         * most: the replay's count, made cold, is the most), the start
         * the others, answered at once by its listings */
        pacer = (double)MIN(lr->round_trips - lr->file_round_trips, ret->lookups_warmed.paced) * rtt /
                cost_parallel(p, PACE_DEFAULT_THREADS);
        /* enough to pace: the pacer follows the start through BPF, whose
         * program run loads first (as root); too few, and the replay's
         * engine makes them at once */
        if (ret->lookups_warmed.paced >= PACE_MIN)
                setup += COST_RUN_FOLLOW_US / 1e6;
        ret->run.metadata_s = ret->lookups_warmed.seconds;
        ret->run.seconds = MAX(ret->replay.transfer_s, setup + MAX(files, MAX(pacer, ret->lookups_warmed.seconds)));
}

int report_predict(struct report *r, const struct readset *rs, const struct rp_layout *layouts,
                   const struct cost_profile *p, const struct plan *plan, const struct device_profile *dev,
                   bool main_only, bool file_shares, struct rp_scenarios *ret)
{
        struct req_sink s = {};
        struct piece_sink ps = {};
        uint64_t opens = 0, prev_end = 0, unpositioned = 0;
        /* the column's device: with main_only, the main device's files (a
         * remote profile's: the share's, where one was found) */
        bool on_share = main_only && p->remote && r->share_root;
        _cleanup_free_ uint8_t *off = NULL;
        int e = 0;

        /* on a share whose lookups were recorded, what its client asks for
         * them (client.h) stands for the metadata: no block device's
         * inode tables are read there */
        ret->lookups_costed = p->remote && (rs->rec_flags & RS_REC_LOOKUPS);
        off = column_files(r, rs, main_only, on_share, ret->lookups_costed, &opens);
        if (!off)
                return -ENOMEM;
        ret->plain_bytes = 0;
        for (size_t i = 0; i < r->n_pieces; i++)
                ret->plain_bytes += r->pieces[i].length;
        ret->layout_bytes = ret->sequential_bytes = ret->plain_bytes;

        /* plain: the program's order, in requests of the readahead size.  A
         * piece that continues the previous one in the same file and on the
         * device was brought in by the same readahead: one request.  Where
         * neither has a position (not written back yet, no FIEMAP), the
         * file is taken to lie in one piece, as the planner takes it: the
         * same, so that a replay is never costed worse for want of them.  Where
         * requests can overlap (not a disk's single head), readahead the
         * program never touched was served beside it: not waited for. */
        for (size_t i = 0; i < r->n_pieces && e >= 0;) {
                const struct rp_piece *q = &r->pieces[i];
                uint64_t len = q->length;
                size_t j = i + 1;
                if (off[q->file] || (!p->rotational && !q->waited)) {
                        i++;
                        continue;
                }
                while (j < r->n_pieces && r->pieces[j].file == q->file && r->pieces[j].offset == q->offset + len &&
                       !off[r->pieces[j].file] &&
                       (q->phys == COST_POS_UNKNOWN ? r->pieces[j].phys == COST_POS_UNKNOWN
                                                    : r->pieces[j].phys == q->phys + len))
                        len += r->pieces[j++].length;
                e = req_add(&s, q->phys, len, q->file, r->request_bytes);
                i = j;
        }
        if (e < 0)
                goto out;
        /* the share's client's round trips for the lookups (client.h); else
         * the program opens its files one after the other, and the dentry
         * cache absorbs most of its other lookups (not counted) */
        if (ret->lookups_costed && (e = cost_lookups(r, rs, p, plan, on_share ? r->share_root : "/",
                                                     file_shares, ret)) < 0)
                goto out;
        struct cost_meta pm = { .opens = opens, .parallel = 1 };
        if (ret->lookups_costed)
                pm = (struct cost_meta){ .counted_s = ret->lookups_plain.seconds, .parallel = 1 };
        cost_estimate(p, s.q, s.n, 1, &pm, &ret->plain);
        ret->plain_meta_requests = 0;
        for (size_t i = 0; i < s.n; i++)
                if (rs->files[s.file[i]].kind == RS_FILE_BLOCKDEV)
                        ret->plain_meta_requests += s.q[i].len / s.q[i].chunk + (s.q[i].len % s.q[i].chunk != 0);
        if (file_shares) {
                struct cost_head h = COST_HEAD_INIT;
                for (size_t i = 0; i < rs->n_files; i++)
                        r->files[i].plain_s = 0;
                for (size_t i = 0; i < s.n; i++) {
                        double a, b;
                        cost_run(p, &h, &s.q[i], &a, &b);
                        r->files[s.file[i]].plain_s += (a + b) / 1e6;
                }
        }

        /* replay: readset's own plan, request by request; a read without a
         * position that continues the one before in its file continues it
         * on the device too (as in the plain start's: the file in one
         * piece), not a random read of its own */
        s.n = 0;
        for (size_t i = 0; i < plan->n_reads && e >= 0; i++) {
                const struct plan_read *pr = &plan->reads[i];
                bool other = on_other_device(rs, r, pr->file);
                if (off[pr->file])
                        continue;
                ps.n = 0;
                e = map_range(rs, layouts, pr->file, pr->offset, pr->length, 0, &ps, NULL, NULL);
                for (size_t j = 0; j < ps.n && e >= 0; j++) {
                        uint64_t pos = other ? COST_POS_UNKNOWN : ps.p[j].phys;
                        if (pos == COST_POS_UNKNOWN)
                                unpositioned += ps.p[j].length;
                        if (pos == COST_POS_UNKNOWN && s.n > 0 && s.q[s.n - 1].pos == COST_POS_UNKNOWN &&
                            s.file[s.n - 1] == pr->file && prev_end == ps.p[j].offset)
                                s.q[s.n - 1].len += ps.p[j].length;
                        else
                                e = req_add(&s, pos, ps.p[j].length, pr->file,
                                            p->rotational ? dev->readahead_cap : dev->max_request);
                        prev_end = ps.p[j].offset + ps.p[j].length;
                }
        }
        if (e < 0)
                goto out;
        /* the replay opens every file and looks up every other path it
         * recorded (the plan's lookups leave out its files), with its threads */
        struct cost_meta rm = { opens, plan->n_lookups, COST_REPLAY_THREADS, 0 };
        if (ret->lookups_costed)
                rm = (struct cost_meta){ .counted_s = ret->lookups_replay.seconds, .parallel = 1 };
        cost_estimate(p, s.q, s.n, dev->queue_depth, &rm, &ret->replay);
        ret->replay_bytes = plan->bytes;
        ret->replay.host_s = (COST_REPLAY_FIXED_US + COST_REPLAY_FILE_US * (double)opens +
                              COST_REPLAY_LOOKUP_US * (double)plan->n_lookups) / 1e6;
        ret->replay.seconds += ret->replay.host_s;
        /* On a disk, what the replay's sort gains over the start's own
         * order cannot be judged for reads without a position (not written
         * back yet, no FIEMAP, another device): for their share of the
         * bytes, the replay is not predicted slower than the plain start
         * (its overhead, where it gains nothing visible, is not counted) */
        ret->replay_unpositioned_bytes = unpositioned;
        if (p->rotational && unpositioned && ret->replay.bytes && ret->replay.seconds > ret->plain.seconds)
                ret->replay.seconds = ret->plain.seconds + (ret->replay.seconds - ret->plain.seconds) *
                                      (double)(ret->replay.bytes - MIN(unpositioned, ret->replay.bytes)) /
                                      (double)ret->replay.bytes;

        predict_run(p, ret);
        e = predict_layout(r, rs, p, dev, off, &rm, &s, ret);
out:
        free(s.q);
        free(s.file);
        free(ps.p);
        return e;
}

int report_predict_replay(struct report *r, const struct readset *rs, const struct rp_layout *layouts,
                          const struct cost_profile *p, const struct replay_options *o,
                          const struct device_profile *dev, bool main_only, bool file_shares,
                          struct rp_scenarios *ret)
{
        _cleanup_plan_ struct plan *plan = NULL;
        int e = replay_plan(rs, dev, o, layouts, &plan);

        if (e < 0)
                return e;
        return report_predict(r, rs, layouts, p, plan, dev, main_only, file_shares, ret);
}

/* The share most recorded lookups went to (replay_on_share(): a network
 * file system's mount, or FUSE's), where it is mounted now. */
static int find_share_root(const struct readset *rs, struct report *r)
{
        _cleanup_(mounts_free) struct mounts mt = {};
        _cleanup_free_ uint64_t *hits = NULL;
        size_t best = SIZE_MAX;

        if (rs->n_lookups == 0 || mounts_read(&mt) < 0 || mt.n == 0)
                return 0;       /* not known: the lookups are not told apart */
        hits = calloc(mt.n, sizeof(*hits));
        if (!hits)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const char *p = rs->lookups[i].path;
                const struct mount_ent *m;
                if (p[0] != '/' || !replay_on_share(&mt, p))
                        continue;
                m = mounts_holding(&mt, p, strlen(p));
                hits[m - mt.m]++;
                if (best == SIZE_MAX || hits[m - mt.m] > hits[best])
                        best = (size_t)(m - mt.m);
        }
        if (best == SIZE_MAX)
                return 0;
        r->share_root = strdup(mt.m[best].mnt);
        r->share_dev = mt.m[best].dev;
        return r->share_root ? 0 : -ENOMEM;
}

int report_analyse(const struct readset *rs, uint64_t request_bytes, struct rp_layout **ret_layouts,
                   struct extents_counts *ret_counts, struct report **ret)
{
        struct rp_layout *layouts = NULL;
        int e;

        *ret_layouts = NULL, *ret = NULL;
        /* a fresh file is written back first where the caller may: the
         * positions it will have, not none */
        e = extents_table_read(rs, NULL, EXTENTS_TABLE_SYNC, &layouts, ret_counts);
        if (e < 0)
                return e;
        e = report_build(rs, layouts, request_bytes, ret);
        if (e >= 0 && (e = find_share_root(rs, *ret)) < 0) {
                report_free(*ret);
                *ret = NULL;
        }
        if (e < 0) {
                extents_table_free(layouts, rs->n_files);
                return e;
        }
        *ret_layouts = layouts;
        return 0;
}

int report_predict_here(const struct readset *rs, const struct cost_profile *p, const struct replay_options *o,
                        const struct device_profile *dev, struct rp_scenarios *ret)
{
        struct rp_layout *layouts = NULL;
        struct report *r = NULL;
        int e = report_analyse(rs, MIN(dev->readahead_cap, dev->max_request), &layouts, NULL, &r);

        if (e < 0)
                return e;
        e = report_predict_replay(r, rs, layouts, p, o, dev, true, false, ret);
        report_free(r);
        extents_table_free(layouts, rs->n_files);
        return e;
}
