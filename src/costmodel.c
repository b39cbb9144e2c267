/* SPDX-License-Identifier: MIT */
#include "costmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "util.h"
#include "banned.h"

/* A forward skip shorter than this on a rotational disk passes under the
 * head (the drive reads ahead into its buffer): it costs its bytes' time,
 * not a seek. */
#define ROT_SKIP_BYTES (1024 * 1024)

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
        v = jv_get(root, "random_4k_iops");
        for (size_t i = 0; i < ARRAY_SIZE(qd); i++) {
                double x = jv_number(jv_get(v, qd[i]), 0);
                p.iops[i] = x > 0 && x < 1e9 ? x : 0;
        }
        v = jv_get(root, "seek_cost");
        if (v && v->type == JV_ARRAY)
                for (size_t i = 0; i < v->n_items && p.n_seek < COST_MAX_SEEK; i++) {
                        double d = jv_number(jv_get(&v->items[i], "distance_bytes"), -1);
                        double us = jv_number(jv_get(&v->items[i], "latency_us"), -1);
                        if (d <= 0 || d > 1e18 || us <= 0 || us > 1e7)
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
                double us = jv_number(jv_get(v, "open_stat_us"), 0);
                p.open_stat_us = us > 0 && us < 1e7 ? us : 0;
        }
        /* A profile without sequential figures measured only metadata: a
         * read-only directory, in practice a network share. */
        p.remote = !jv_get(root, "random_4k_iops") && p.open_stat_us > 0;
        if (!(p.lat_us > 0 && p.lat_us < 1e7) || !(p.seq_bps > 0 && p.seq_bps < 1e12))
                return -EINVAL;
        *ret = p;
        return 0;
}

/* Seek cost at distance d: log-linear between measured points, linear
 * from zero up to the first, flat after the last. */
static double seek_curve(const struct cost_profile *p, uint64_t d)
{
        if (d <= p->seek_dist[0])
                return p->seek_us[0] * (double)d / (double)p->seek_dist[0];
        for (size_t i = 1; i < p->n_seek; i++)
                if (d <= p->seek_dist[i]) {
                        double a = log((double)p->seek_dist[i - 1]), b = log((double)p->seek_dist[i]);
                        double t = (log((double)d) - a) / (b - a);
                        return p->seek_us[i - 1] + t * (p->seek_us[i] - p->seek_us[i - 1]);
                }
        return p->seek_us[p->n_seek - 1];
}

double cost_positioning_us(const struct cost_profile *p, uint64_t prev_end, uint64_t pos)
{
        if (!p->rotational)
                return p->lat_us;   /* every request pays the device's command cost */
        if (pos == COST_POS_UNKNOWN || prev_end == COST_POS_UNKNOWN)
                return p->lat_us;
        if (pos >= prev_end && pos - prev_end < ROT_SKIP_BYTES)
                return (double)(pos - prev_end) / p->seq_bps * 1e6;
        if (p->n_seek == 0)
                return p->lat_us;
        return seek_curve(p, pos > prev_end ? pos - prev_end : prev_end - pos);
}

/* Random reads per second with `depth` in flight. */
static double iops_at(const struct cost_profile *p, uint32_t depth)
{
        static const uint32_t depths[4] = { 1, 4, 16, 64 };
        double best = 1e6 / p->lat_us;

        if (p->remote)  /* round trips overlap; the link's rate bounds them below */
                return best * depth;
        for (size_t i = 0; i < ARRAY_SIZE(depths); i++)
                if (p->iops[i] > 0 && depths[i] <= depth && p->iops[i] > best)
                        best = p->iops[i];
        return best;
}

void cost_estimate(const struct cost_profile *p, const struct cost_req *reqs, size_t n,
                   uint32_t queue_depth, uint64_t n_opens, struct cost_result *ret)
{
        struct cost_result c = {};
        uint64_t prev_end = COST_POS_UNKNOWN;
        double pos_us = 0;

        if (queue_depth < 1)
                queue_depth = 1;
        for (size_t i = 0; i < n; i++) {
                bool moved = reqs[i].pos == COST_POS_UNKNOWN || reqs[i].pos != prev_end;
                if (p->rotational || queue_depth == 1)
                        pos_us += cost_positioning_us(p, prev_end, reqs[i].pos);
                c.moves += moved;
                c.bytes += reqs[i].len;
                prev_end = reqs[i].pos == COST_POS_UNKNOWN ? COST_POS_UNKNOWN : reqs[i].pos + reqs[i].len;
        }
        c.requests = n;
        c.transfer_s = (double)c.bytes / p->seq_bps;
        if (p->rotational || queue_depth == 1) {
                /* one request at a time (a disk's head serves one anyway) */
                c.positioning_s = pos_us / 1e6;
                c.seconds = c.positioning_s + c.transfer_s;
        } else {
                /* requests overlap: the device is bound by its request rate or
                 * its bandwidth, whichever is reached first */
                c.positioning_s = (double)n / iops_at(p, queue_depth);
                c.seconds = MAX(c.positioning_s, c.transfer_s) + (n ? p->lat_us / 1e6 : 0);
        }
        if (p->remote && n_opens) {
                double per = p->open_stat_us > 0 ? p->open_stat_us : 2 * p->lat_us;
                c.metadata_s = (double)n_opens * per / 1e6 / (double)MIN(queue_depth, 16u);
                c.seconds += c.metadata_s;
        }
        *ret = c;
}
