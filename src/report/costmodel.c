/* SPDX-License-Identifier: MIT */
#include "report/costmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/json.h"
#include "util/util.h"
#include "util/banned.h"

/* A forward skip shorter than this on a rotational disk passes under the
 * head (the drive reads ahead into its buffer): it costs its bytes' time,
 * not a seek. */
#define ROT_SKIP_BYTES (1024 * 1024)

/* docs/SLOWDEV.md, "Client models": the table there and why each lifetime
 * is what it is.  strict is the misbehaving client of the field report
 * (docs/FIELD.md): nothing kept past a second, no failed lookup kept, every
 * access(2) asked. */
static const struct cost_client clients[] = {
        { "strict", 1, 1, 1, 0, false, false },
        { "smb", 1, 1, 1, 1, true, true },
        { "nfs", 30, 3, 30, 30, true, true },
};

int cost_client_by_name(const char *name, struct cost_client *ret)
{
        for (size_t i = 0; i < ARRAY_SIZE(clients); i++)
                if (strcmp(name, clients[i].name) == 0) {
                        *ret = clients[i];
                        return 0;
                }
        return -EINVAL;
}

int cost_profile_parse(const char *json, const char *name, struct cost_profile *ret)
{
        _cleanup_jv_ struct jv *root = NULL;
        const struct jv *v;
        struct cost_profile p = {};
        static const char *const qd[] = { "qd1", "qd4", "qd16", "qd64" };
        int r;

        r = jv_parse(json, &root);
        if (r < 0)
                return r;
        if (root->type != JV_OBJECT)
                return -EINVAL;
        snprintf(p.name, sizeof(p.name), "%s", name ? name : "");
        p.lat_us = jv_number(jv_get(root, "latency_qd1_us"), 0);
        p.seq_bps = jv_number(jv_get(root, "sequential_mbps"), 0) * 1e6;
        v = jv_get(root, "sequential_zones_mbps");
        if (v && v->type == JV_ARRAY && v->n_items == 3)
                for (size_t i = 0; i < 3; i++) {
                        double x = jv_number(&v->items[i], 0) * 1e6;
                        p.zone_bps[i] = x >= 1e3 && x < 1e12 ? x : 0;
                }
        {
                double region = jv_number(jv_get(root, "region_bytes"), 0);
                p.region_bytes = region > 0 && region < 1e18 ? (uint64_t)region : 0;
        }
        v = jv_get(root, "random_4k_iops");
        for (size_t i = 0; i < ARRAY_SIZE(qd); i++) {
                double x = jv_number(jv_get(v, qd[i]), 0);
                p.iops[i] = x >= 1 && x < 1e9 ? x : 0;
        }
        v = jv_get(root, "seek_cost");
        if (v && v->type == JV_ARRAY)
                for (size_t i = 0; i < v->n_items && p.n_seek < COST_MAX_SEEK; i++) {
                        double d = jv_number(jv_get(&v->items[i], "distance_bytes"), -1);
                        double us = jv_number(jv_get(&v->items[i], "latency_us"), -1);
                        if (!(d >= 1 && d <= 1e18) || !(us >= 0.1 && us <= 1e7))
                                return -EINVAL;
                        if (p.n_seek > 0 && (uint64_t)d <= p.seek_dist[p.n_seek - 1])
                                return -EINVAL;  /* ascending distances only */
                        p.seek_dist[p.n_seek] = (uint64_t)d;
                        p.seek_us[p.n_seek] = us;
                        p.n_seek++;
                }
        v = jv_get(root, "rotational");
        p.rotational = v && v->type == JV_BOOL && v->b;
        v = jv_get(root, "metadata");
        if (v) {
                const struct jv *par = jv_get(v, "parallel");
                double us = jv_number(jv_get(v, "open_stat_us"), 0);
                p.open_stat_us = us >= 0.1 && us < 1e7 ? us : 0;
                /* files opened at once per second, against one at a time:
                 * how many round trips overlap */
                if (par && par->type == JV_ARRAY && p.open_stat_us > 0)
                        for (size_t i = 0; i < par->n_items && p.n_par < COST_MAX_PAR; i++) {
                                double d = jv_number(jv_get(&par->items[i], "depth"), -1);
                                double rate = jv_number(jv_get(&par->items[i], "open_stat_per_s"), -1);
                                if (!(d >= 2 && d <= 4096) || !(rate > 0 && rate < 1e9) ||
                                    (p.n_par > 0 && d <= p.par_depth[p.n_par - 1]))
                                        return -EINVAL;
                                p.par_depth[p.n_par] = d;
                                p.par_speedup[p.n_par++] = MIN(d, MAX(1.0, rate * p.open_stat_us / 1e6));
                        }
        }
        /* A profile without sequential figures measured only metadata: a
         * read-only directory, in practice a network share. */
        p.remote = !jv_get(root, "random_4k_iops") && p.open_stat_us > 0;
        v = jv_get(root, "client");
        if (v && (v->type != JV_STRING || cost_client_by_name(v->s, &p.client) < 0))
                return -EINVAL;
        if (!v)
                cost_client_by_name("strict", &p.client);
        /* a profile without both (a metadata-only probe of a read-only
         * directory) cannot cost reads */
        if (!(p.lat_us >= 0.1 && p.lat_us < 1e7) || !(p.seq_bps >= 1e3 && p.seq_bps < 1e12))
                return -EINVAL;
        *ret = p;
        return 0;
}

/* Seek cost at distance d, between the measured points: linear in the
 * square root of the distance (an arm accelerates then decelerates: seek
 * time grows with sqrt(distance) over short and middle distances; Ruemmler
 * and Wilkes, "An introduction to disk drive modeling", 1994), linear from
 * zero up to the first point, flat after the last. */
static double seek_curve(const struct cost_profile *p, uint64_t d)
{
        if (d <= p->seek_dist[0])
                return p->seek_us[0] * (double)d / (double)p->seek_dist[0];
        for (size_t i = 1; i < p->n_seek; i++)
                if (d <= p->seek_dist[i]) {
                        double a = __builtin_sqrt((double)p->seek_dist[i - 1]), b = __builtin_sqrt((double)p->seek_dist[i]);
                        double t = (__builtin_sqrt((double)d) - a) / (b - a);
                        return p->seek_us[i - 1] + t * (p->seek_us[i] - p->seek_us[i - 1]);
                }
        return p->seek_us[p->n_seek - 1];
}

/* The sequential rate at a position: a disk's outer tracks pass more bytes
 * per turn (the probe's zones, linear between start, middle and end). */
static double rate_at(const struct cost_profile *p, uint64_t pos)
{
        double x;

        if (!p->rotational || pos == COST_POS_UNKNOWN || p->region_bytes == 0 ||
            !(p->zone_bps[0] > 0 && p->zone_bps[1] > 0 && p->zone_bps[2] > 0))
                return p->seq_bps;
        x = MIN((double)pos / (double)p->region_bytes, 1.0);
        if (x < 0.5)
                return p->zone_bps[0] + (p->zone_bps[1] - p->zone_bps[0]) * x * 2;
        return p->zone_bps[1] + (p->zone_bps[2] - p->zone_bps[1]) * (x - 0.5) * 2;
}

void cost_request(const struct cost_profile *p, struct cost_head *h, uint64_t pos, uint64_t len,
                  double *ret_positioning_us, double *ret_transfer_us)
{
        *ret_transfer_us = (double)len / rate_at(p, pos) * 1e6;
        if (!p->rotational) {
                *ret_positioning_us = p->lat_us;   /* every request pays the device's command cost */
                return;
        }
        if (pos == COST_POS_UNKNOWN) {
                *ret_positioning_us = p->lat_us;  /* a random read, and the head is lost */
                h->at = h->stream_lo = COST_POS_UNKNOWN;
                h->seeks++;
                return;
        }
        if (h->at == COST_POS_UNKNOWN) {
                *ret_positioning_us = p->lat_us;
                h->stream_lo = pos;
                h->seeks++;
        } else if (pos >= h->stream_lo && pos + len <= h->at) {
                *ret_positioning_us = 0;          /* in the drive's buffer: the head stays */
                return;
        } else if (pos >= h->stream_lo && pos < h->at) {
                *ret_positioning_us = 0;          /* from the buffer on into what follows */
        } else if (pos >= h->at && pos - h->at < ROT_SKIP_BYTES) {
                /* a little further along: the platter brings it round */
                *ret_positioning_us = (double)(pos - h->at) / rate_at(p, h->at) * 1e6;
        } else {
                *ret_positioning_us = p->n_seek ? seek_curve(p, pos > h->at ? pos - h->at : h->at - pos) : p->lat_us;
                h->stream_lo = pos;
                h->seeks++;
        }
        h->at = pos + len < pos ? UINT64_MAX - 1 : pos + len;
        if (h->at - h->stream_lo > COST_DRIVE_BUFFER)
                h->stream_lo = h->at - COST_DRIVE_BUFFER;
}

uint64_t cost_run(const struct cost_profile *p, struct cost_head *h, const struct cost_req *q,
                  double *ret_positioning_us, double *ret_transfer_us)
{
        uint64_t k = q->chunk ? q->len / q->chunk + (q->len % q->chunk != 0) : 1;

        cost_request(p, h, q->pos, q->len, ret_positioning_us, ret_transfer_us);
        if (!p->rotational)
                *ret_positioning_us += (double)(k - 1) * p->lat_us;
        return k;
}

double cost_parallel(const struct cost_profile *p, uint32_t depth)
{
        double d0 = 1, s0 = 1;

        if (depth <= 1)
                return 1;
        if (p->n_par == 0)
                return depth;
        for (size_t k = 0; k < p->n_par; k++) {
                if (depth <= p->par_depth[k])
                        return s0 + (p->par_speedup[k] - s0) * ((double)depth - d0) / (p->par_depth[k] - d0);
                d0 = p->par_depth[k];
                s0 = p->par_speedup[k];
        }
        /* deeper than measured: as much of each one more in flight as at
         * the deepest (a probe with too few files left measured 8 only) */
        return s0 * (double)depth / d0;
}

/* Random reads per second with `depth` in flight. */
static double iops_at(const struct cost_profile *p, uint32_t depth)
{
        static const uint32_t depths[4] = { 1, 4, 16, 64 };
        double best = 1e6 / p->lat_us;

        if (p->remote)  /* each of the replay's threads waits for its round trip */
                return best * cost_parallel(p, MIN(depth, (uint32_t)COST_REPLAY_THREADS));
        for (size_t i = 0; i < ARRAY_SIZE(depths); i++)
                if (p->iops[i] > 0 && depths[i] <= depth && p->iops[i] > best)
                        best = p->iops[i];
        return best;
}

void cost_estimate(const struct cost_profile *p, const struct cost_req *reqs, size_t n,
                   uint32_t queue_depth, const struct cost_meta *meta, struct cost_result *ret)
{
        struct cost_result c = {};
        struct cost_head h = COST_HEAD_INIT;
        uint64_t prev_end = COST_POS_UNKNOWN;
        double pos_us = 0, xfer_us = 0;

        if (queue_depth < 1)
                queue_depth = 1;
        for (size_t i = 0; i < n; i++) {
                double a, b;
                c.requests += cost_run(p, &h, &reqs[i], &a, &b);
                pos_us += a;
                xfer_us += b;
                c.moves += reqs[i].pos == COST_POS_UNKNOWN || reqs[i].pos != prev_end;
                c.bytes += reqs[i].len;
                prev_end = reqs[i].pos == COST_POS_UNKNOWN ? COST_POS_UNKNOWN : reqs[i].pos + reqs[i].len;
        }
        c.seeks = p->rotational ? h.seeks : 0;
        c.transfer_s = xfer_us / 1e6;
        if (p->remote && meta) {
                /* an open without a measured figure: a lookup and an open */
                double per = p->open_stat_us > 0 ? p->open_stat_us : 2 * p->lat_us;
                c.metadata_s = ((double)meta->opens * per + (double)meta->lookups * p->lat_us) / 1e6 /
                               cost_parallel(p, meta->parallel) + meta->counted_s;
        }
        if (p->rotational || queue_depth == 1) {
                /* one request at a time (a disk's head serves one anyway) */
                c.positioning_s = pos_us / 1e6;
                c.seconds = c.positioning_s + c.transfer_s + c.metadata_s;
        } else {
                /* requests overlap, and round trips with transfers: the device
                 * is bound by its request rate or its bandwidth, whichever is
                 * reached first */
                c.positioning_s = (double)c.requests / iops_at(p, queue_depth);
                c.seconds = MAX(c.positioning_s + c.metadata_s, c.transfer_s) + (n ? p->lat_us / 1e6 : 0);
        }
        *ret = c;
}
