/* SPDX-License-Identifier: MIT */
/* readset auto's daemon: every exec on the machine seen (daemon/execs.h),
 * keyed (daemon/key.h), and each start run through its own closed loop
 * (boot/run-loop.h, as run --auto's): recorded when it has no read set or
 * it went stale, replayed beside the start when it has one, plain now and
 * then as the baseline, off where replay does not make it faster.  One
 * thread a start followed, bounded; the recordings and replays are the
 * library's (record/recorder.h, replay/session.h).  Never prints: what
 * happens is told through o->say. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTO_STORE_DIR "/var/lib/readset/auto"
#define AUTO_CONFIG "/etc/readset/auto.conf"
#define AUTO_DEFAULT_WINDOW_MS 10000      /* a start followed at most this long */
#define AUTO_DEFAULT_MIN_BYTES (256u << 10)  /* smaller read sets are not replayed (docs/DECISIONS.md) */
#define AUTO_DEFAULT_MAX_STARTS 32        /* followed at once */
#define AUTO_DEFAULT_MAX_RECORDINGS 4     /* recorded at once */
#define AUTO_DEFAULT_MAX_KEYS 10000       /* programs kept in the store */
#define AUTO_DEFAULT_MAX_STORE_BYTES (256ULL << 20)
#define AUTO_MAX_RULES 64

struct daemon_options {
        const char *store;         /* AUTO_STORE_DIR */
        /* programs and scripts learned: below these (none: all) and never
         * these (a path prefix, or a program's file name) */
        const char *only[AUTO_MAX_RULES];
        size_t n_only;
        const char *never[AUTO_MAX_RULES];
        size_t n_never;
        uint32_t never_uid[AUTO_MAX_RULES];   /* users whose starts are never learned */
        size_t n_never_uid;
        uint64_t window_ms, min_bytes, max_keys, max_store_bytes;
        unsigned max_starts, max_recordings;
        uint64_t stop_after;       /* starts noted, then the daemon ends (0: never; tests) */
        volatile sig_atomic_t *stop;   /* set by a signal: the daemon ends */
        void (*say)(void *userdata, const char *line);
        void *say_userdata;
};

void daemon_options_init(struct daemon_options *o);
/* Apply the configuration file at path (lines "only PREFIX", "never
 * PREFIX-OR-NAME", "never-uid UID", "window-ms N", "min-bytes SIZE",
 * "max-programs N", "max-store SIZE", "#" comments); a missing file is none.  -EINVAL with *ret_line the bad
 * line's number.  The strings are kept in *ret_text (free it after). */
int daemon_options_load(struct daemon_options *o, const char *path, char **ret_text, unsigned *ret_line);

struct daemon_stats {
        uint64_t execs;            /* exec events read */
        uint64_t starts;           /* starts keyed */
        uint64_t gone;             /* the process ended (or exec'd again) before it could be keyed */
        uint64_t other_ns;         /* in another mount namespace: skipped */
        uint64_t excluded;         /* never learned (configuration, readset itself, package managers) */
        uint64_t nested;           /* part of a start already followed, or of a readset run */
        uint64_t launchers;        /* env, nice ...: the program they ran was keyed instead */
        uint64_t busy;             /* past max_starts or max_recordings: not followed */
        uint64_t off;              /* the loop has replay off, or the read set is too small */
        uint64_t recorded, replayed, plain;
        uint64_t warm;             /* found cached at the exec: neither learned nor judged */
        uint64_t overflows;        /* exec events the kernel dropped */
        uint64_t evicted;          /* programs dropped from the store (its bounds) */
};

/* Run until *o->stop (or o->stop_after starts).  -errno when it cannot
 * start (-EPERM: not root). */
int daemon_run(const struct daemon_options *o, struct daemon_stats *ret);
