/* SPDX-License-Identifier: MIT */
/* A recording session: what `record`, `run --stats/--auto` and the boot
 * recorder share.  It follows one process tree (or every process but
 * readset itself) from a private tracefs instance (page events), a BPF
 * program (path lookups) and fanotify (names), drains them in a thread of
 * its own, and turns them into a read set.  Returns -errno, never prints:
 * what went wrong beside the recording is in its status, for the command to
 * say.  Its kernel objects are also held by a guardian process, which
 * removes them however readset ends (docs/DECISIONS.md, "The guardian"),
 * and holds nothing else of readset's (no gate a command waits on). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/readset.h"
#include "record/paths.h"

struct recorder_options {
        pid_t pid;                 /* follow this process and all it starts from now on;
                                    * 0: every process but readset's own;
                                    * RECORDER_FOLLOW_LATER: the one recorder_follow() names */
        uint64_t buffer_kb;        /* trace buffer per CPU */
        bool lookups;              /* trace path lookups too (BPF) */
        uint64_t max_walk;         /* directory entries the last-resort path search may visit */
        uint64_t max_events;       /* page events kept at most (0: no limit; builder_set_limit) */
        bool clients;              /* the network clients' request counters before and after
                                    * (record/clientstats.h; record: nothing else beside the start) */
};

#define RECORDER_DEFAULT_BUFFER_KB 2048
#define RECORDER_DEFAULT_MAX_WALK 2000000
/* How often the drain thread reads the buffers (docs/DECISIONS.md: waking
 * per event slowed the recorded program down). */
#define RECORDER_DRAIN_MS 25

/* What the command may want to say after (or instead of) a recording. */
struct recorder_status {
        int lookups_error;         /* lookups not traced: why (-errno; 0: they are, or not asked for) */
        int lookups_drain_error;   /* lookup events stopped being read: they are incomplete */
        int paths_drain_error;     /* fanotify stopped being read: names came from the fallbacks */
        uint64_t lost_events;      /* page events the kernel dropped (raise buffer_kb) */
        uint64_t dropped_events;   /* page events past max_events, not kept */
        uint64_t bad_lines;        /* trace records that did not decode */
        struct paths_stats paths;
        /* set-up and finishing times, in ns (READSET_DEBUG) */
        uint64_t open_ns, tracefs_ns, bpf_ns, lookups_ns, paths_ns, build_ns;
};

struct recorder;

/* Set everything up, tracing still off.  On failure *ret_what names what
 * could not be (a trace event such as "filemap/mm_filemap_get_pages",
 * "tracefs", "fanotify", ...), and nothing is left behind. */
int recorder_open(const struct recorder_options *o, struct recorder **ret, const char **ret_what);
#define RECORDER_FOLLOW_LATER ((pid_t)-1)
/* Opened ahead (RECORDER_FOLLOW_LATER): follow pid and all it starts from
 * now on, before recorder_start().  A recorder is opened in tens of
 * milliseconds (BPF, tracefs), which readset auto's daemon cannot make a
 * start it saw wait for: it keeps one open.  -EINVAL where not opened so
 * or started already. */
int recorder_follow(struct recorder *r, pid_t pid);
/* Tracing on; from now on a thread drains the buffers every
 * RECORDER_DRAIN_MS.  The recording's time starts here. */
int recorder_start(struct recorder *r);
/* Tracing off, the rest drained.  A failure to read the page events
 * (fatal to the recording) is returned here. */
int recorder_stop(struct recorder *r);
/* The read set of what was recorded (page ranges, lookups, names; the
 * times and counters, not the command line nor the cold flag: the
 * caller's).  The kernel objects are given up to the guardian first. */
int recorder_finish(struct recorder *r, struct readset **ret);
void recorder_get_status(const struct recorder *r, struct recorder_status *ret);
/* Stop whatever still runs and give everything up (safe on NULL, at any
 * point). */
void recorder_free(struct recorder *r);

/* ---- set up beside the caller (run: the replay goes on meanwhile) ------ */

struct recorder_setup;
/* recorder_open() and recorder_start() in a thread of their own, then
 * ready(userdata) however they went (run lets its gated command go: one
 * that cannot be recorded runs unrecorded).  -errno if no thread. */
int recorder_open_async(const struct recorder_options *o, void (*ready)(void *userdata), void *userdata,
                        struct recorder_setup **ret);
/* Wait for it: the recorder, started, or NULL with *ret_err and *ret_what
 * saying why not (recorder_open's, or "tracing" when it would not start).
 * Frees s. */
struct recorder *recorder_setup_wait(struct recorder_setup *s, int *ret_err, const char **ret_what);
