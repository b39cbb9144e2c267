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
#define COST_MAX_PAR 4

/* The caches of a network file system's client: how long it keeps each
 * answer, in seconds (0: not kept).  The models are docs/SLOWDEV.md's,
 * from the clients' documented defaults (mount.cifs(8), nfs(5)). */
struct cost_client {
        char name[16];               /* "strict", "smb", "nfs" */
        double names_s;              /* a name found (a positive lookup) */
        double file_attrs_s;         /* a file's attributes */
        double dir_attrs_s;          /* a directory's */
        double negative_s;           /* a failed lookup */
        bool listing_attrs;          /* a listing brings its entries' names and attributes */
        bool access_cached;          /* access(2) answered from the attributes, not asked */
};

/* The model of that name: -EINVAL when there is none. */
int cost_client_by_name(const char *name, struct cost_client *ret);

struct cost_profile {
        char name[96];
        double lat_us;               /* one small random read at queue depth 1 */
        double iops[4];              /* random 4 KiB reads/s at depths 1, 4, 16, 64; 0 = not measured */
        double seq_bps;              /* sequential bytes per second */
        double zone_bps[3];          /* ... at the start, middle and end of region_bytes (0: not measured) */
        uint64_t region_bytes;
        size_t n_seek;               /* seek cost against distance, ascending */
        uint64_t seek_dist[COST_MAX_SEEK];
        double seek_us[COST_MAX_SEEK];
        bool rotational;             /* positioning depends on distance */
        bool remote;                 /* every open and stat is a round trip (network share) */
        double open_stat_us;         /* open + stat of a file not seen before; 0 = not measured */
        /* remote: round trips served in the time of one with par_depth[k]
         * in flight (readset probe's metadata "parallel": files opened at
         * once); n_par 0: not measured, as many as are in flight */
        size_t n_par;
        double par_depth[COST_MAX_PAR], par_speedup[COST_MAX_PAR];
        struct cost_client client;   /* remote: what its client keeps ("client" in the profile;
                                      * strict when it names none) */
};

/* One read request: where it starts on the device (COST_POS_UNKNOWN when
 * not known) and how many bytes; a run longer than chunk (when not 0) is
 * that many requests one after the other, costed without listing them. */
struct cost_req {
        uint64_t pos;
        uint64_t len;
        uint64_t chunk;
};

/* What readset replay itself spends besides the device (measured on a 2-CPU
 * VM: docs/DECISIONS.md): starting and planning, then per file opened and
 * per path looked up. */
#define COST_REPLAY_FIXED_US 8000.0
#define COST_REPLAY_FILE_US 15.0
#define COST_REPLAY_LOOKUP_US 6.0
/* readset run pacing a start's lookups on a share: the recorder's BPF
 * program loaded and attached to follow it (6-10 ms in bpf() calls on a
 * 2-CPU VM, measured with strace -T), CPU that the start and the pacer
 * beside it wait for. */
#define COST_RUN_FOLLOW_US 10000.0
/* Threads readset replay opens files and looks up paths with (4 per CPU). */
#define COST_REPLAY_THREADS 8

struct cost_result {
        double seconds;           /* the whole estimate */
        double host_s;            /* the replaying process's own work (replay only) */
        double positioning_s;     /* per-request cost: seeks, rotation, command overhead, round trips */
        double transfer_s;        /* bytes / sequential rate */
        double metadata_s;        /* opens and stats the device serves as separate round trips */
        uint64_t requests;
        uint64_t bytes;
        uint64_t moves;           /* requests that did not continue where the previous one ended */
        uint64_t seeks;           /* on a disk: moves that cost a seek (not a skip or a buffer hit) */
};

/* Fill p from the JSON text of a probe profile (readset probe -o, or
 * profiles/ *.json).  -EINVAL when it has no usable latency and rate, or
 * a figure out of bounds (a seek cost, an open at depth). */
int cost_profile_parse(const char *json, const char *name, struct cost_profile *ret);
/* On a share, how many round trips it serves in the time of one with
 * depth in flight: depth where the probe measured nothing, else between
 * the depths it measured in proportion, and beyond the deepest as
 * much of each one more in flight as there. */
double cost_parallel(const struct cost_profile *p, uint32_t depth);

/* Where a disk's head is: the end of the last read, and how far back the
 * data that passed under it since its last seek reaches (the drive's
 * buffer).  COST_POS_UNKNOWN before the first read. */
struct cost_head {
        uint64_t at, stream_lo;
        uint64_t seeks;       /* requests that moved the head (or went to an unknown place) */
};
#define COST_HEAD_INIT ((struct cost_head){ COST_POS_UNKNOWN, COST_POS_UNKNOWN, 0 })

/* A disk's buffer: what it streamed since its last seek, up to this much,
 * is served without moving (desktop drives have 8-256 MiB). */
#define COST_DRIVE_BUFFER (8ULL << 20)

/* One request at queue depth 1 (pos may be COST_POS_UNKNOWN): what it costs
 * before its transfer and the transfer itself, in us; moves the head.  A run
 * of contiguous requests costs what one request of its length does on a
 * disk; on other devices, each further request adds lat_us. */
void cost_request(const struct cost_profile *p, struct cost_head *h, uint64_t pos, uint64_t len,
                  double *ret_positioning_us, double *ret_transfer_us);
/* The same for a request list entry (a run of q->chunk sized requests);
 * returns how many requests it is. */
uint64_t cost_run(const struct cost_profile *p, struct cost_head *h, const struct cost_req *q,
                  double *ret_positioning_us, double *ret_transfer_us);

/* Metadata a remote device serves as round trips of its own (on a local
 * device, inode and directory blocks are requests in the list). */
struct cost_meta {
        uint64_t opens;       /* files opened: open_stat_us each */
        uint64_t lookups;     /* other paths looked up: one round trip each */
        uint32_t parallel;    /* served this many at a time */
        double counted_s;     /* round trips counted by the caller (report/client.h), as they are */
};

/* Requests served in the given order with up to queue_depth in flight,
 * plus the metadata round trips (remote profiles only; meta may be NULL). */
void cost_estimate(const struct cost_profile *p, const struct cost_req *reqs, size_t n,
                   uint32_t queue_depth, const struct cost_meta *meta, struct cost_result *ret);
