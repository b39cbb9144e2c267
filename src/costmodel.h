/* SPDX-License-Identifier: MIT */
/* The cost model: how long a device takes to serve a list of read
 * requests, from a profile that readset probe measured (or a shipped
 * reference).  Pure arithmetic; docs/DECISIONS.md ("The cost model")
 * explains each term and where it was checked. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COST_POS_UNKNOWN UINT64_MAX
#define COST_MAX_SEEK 8

struct cost_profile {
        char name[96];
        double lat_us;               /* one small random read at queue depth 1 */
        double iops[4];              /* random 4 KiB reads/s at depths 1, 4, 16, 64; 0 = not measured */
        double seq_bps;              /* sequential bytes per second */
        size_t n_seek;               /* seek cost against distance, ascending */
        uint64_t seek_dist[COST_MAX_SEEK];
        double seek_us[COST_MAX_SEEK];
        bool rotational;             /* positioning depends on distance */
        bool remote;                 /* every open and stat is a round trip (network share) */
        double open_stat_us;         /* open + stat of a file not seen before; 0 = not measured */
};

/* One read request: where it starts on the device (COST_POS_UNKNOWN when
 * not known) and how many bytes. */
struct cost_req {
        uint64_t pos;
        uint64_t len;
};

/* What readset replay itself spends besides the device (measured with warm
 * caches on a 2-CPU VM: docs/DECISIONS.md): starting and planning, then per
 * file opened and per path looked up. */
#define COST_REPLAY_FIXED_US 8000.0
#define COST_REPLAY_FILE_US 15.0
#define COST_REPLAY_LOOKUP_US 10.0

struct cost_result {
        double seconds;           /* the whole estimate */
        double host_s;            /* the replaying process's own work (replay only) */
        double positioning_s;     /* per-request cost: seeks, rotation, command overhead, round trips */
        double transfer_s;        /* bytes / sequential rate */
        double metadata_s;        /* opens and stats the device serves as separate round trips */
        uint64_t requests;
        uint64_t bytes;
        uint64_t moves;           /* requests that did not continue where the previous one ended */
};

/* Fill p from the JSON text of a probe profile (readset probe -o, or
 * profiles/ *.json).  -EINVAL when it has no usable latency and rate. */
int cost_profile_parse(const char *json, const char *name, struct cost_profile *ret);

/* What one request costs before its transfer when it starts at pos and the
 * previous one ended at prev_end (either may be COST_POS_UNKNOWN), in us. */
double cost_positioning_us(const struct cost_profile *p, uint64_t prev_end, uint64_t pos);

/* Requests served in the given order with up to queue_depth in flight,
 * plus n_opens opens that the device serves as round trips (remote
 * profiles only; local metadata reads are requests in the list). */
void cost_estimate(const struct cost_profile *p, const struct cost_req *reqs, size_t n,
                   uint32_t queue_depth, uint64_t n_opens, struct cost_result *ret);
