/* SPDX-License-Identifier: MIT */
/* The boot's session (readset boot start): decides with the closed loop
 * what this boot does, replays the plan and records every process but
 * readset's, until the boot finished (and settle_ms more); then keeps the
 * recording, makes the next plan from the last BOOT_KEEP boots and writes
 * the boot's line of history.  Whatever fails, the session does not: it
 * is said (say()) and in the line's note, and the boot goes on.  Never
 * prints.  What comes from outside is the environment's: systemd, the
 * kernel's command line and the clock (boot/system.h gives the real
 * ones), the recorder and the replay. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/history.h"

struct readset;

/* recording goes on this long after the boot finished (what the last
 * units started still read) */
#define BOOT_SETTLE_MS 2000
/* how long a boot may take before the recording ends anyway */
#define BOOT_MAX_S 300
/* a replay still going when the boot finished is of no use any more: it
 * is given this long, then told to stop (what it read is still counted) */
#define BOOT_REPLAY_GRACE_US 500000

/* systemd's, the kernel's and the clock's */
struct boot_system {
        /* the kernel command line turns readset off for this boot */
        bool (*cmdline_off)(void *userdata);
        /* the session is set up (sd_notify's READY=1); said also when it
         * does nothing (running false) */
        void (*notify_ready)(void *userdata, bool running);
        /* Wait until the boot finished, deadline_us (now_us's clock) at
         * most: 0 and the boot's total in *ret_total_us (0: unknown),
         * -ETIMEDOUT, or -errno. */
        int (*wait_finished)(void *userdata, uint64_t deadline_us, uint64_t *ret_total_us);
        uint64_t (*now_us)(void *userdata);     /* monotonic */
        uint64_t (*now_unix)(void *userdata);   /* the line's date */
        void (*sleep_us)(void *userdata, uint64_t us);
        void *userdata;
};

/* The recorder (boot/system.h: the real one, every process but readset's). */
struct boot_recorder {
        /* Set up, tracing still off: 0, or -errno with *ret_what naming what
         * could not be; *ret_lookups_err: lookups not recorded (-errno) */
        int (*open)(void *userdata, void **ret_rec, const char **ret_what, int *ret_lookups_err);
        /* tracing on: 0 or -errno (then rec is freed) */
        int (*start)(void *userdata, void *rec);
        /* Tracing off: the recording in *ret (0), or -errno; the events
         * past its bound or lost in *ret_dropped.  rec is freed. */
        int (*finish)(void *userdata, void *rec, struct readset **ret, uint64_t *ret_dropped);
        void *userdata;
};

/* The replay, in a process of its own (a read there may never return),
 * at best-effort I/O priority. */
struct boot_replayer {
        /* started: 0, or -errno */
        int (*start)(void *userdata, const struct readset *plan, void **ret_job);
        /* Waited for until deadline_us, then told to stop: what it did in
         * *ret; 0, -ETIMEDOUT (left), or -errno.  job is freed. */
        int (*wait)(void *userdata, void *job, uint64_t deadline_us, struct start_replayed *ret);
        void *userdata;
};

enum boot_say_level { BOOT_SAY_INFO, BOOT_SAY_WARNING };

struct boot_env {
        struct boot_system sys;
        struct boot_recorder rec;
        struct boot_replayer replay;
        /* what the session has to say as it goes (one line, no newline) */
        void (*say)(void *userdata, enum boot_say_level level, const char *text);
        void *say_userdata;
};

struct boot_session_args {
        const char *state;       /* the state directory (boot/state.h) */
        const char *under;       /* keep only files below (NULL: all) */
        uint64_t settle_ms;      /* recorded this long after the boot finished (at most 60000) */
        bool root;               /* the session runs as root (else it does nothing) */
};

enum boot_outcome {
        BOOT_RAN,                /* the boot's line written (or said why not) */
        BOOT_CMDLINE_OFF,        /* readset=off on the kernel command line */
        BOOT_NOT_ENABLED,
        BOOT_NOT_ROOT,
        BOOT_REFUSED,            /* the state directory: err, why (boot_state_check()) */
        BOOT_LOCKED,             /* another session holds the lock */
};

struct boot_result {
        enum boot_outcome outcome;
        int err;
        char why[512];
        struct start_entry e;    /* BOOT_RAN: the boot's line */
        size_t merged;           /* boots the next plan was made from (0: none made) */
};

/* The session, start to end: 0 (every outcome in *ret), never fails. */
int boot_session(const struct boot_session_args *a, const struct boot_env *env, struct boot_result *ret);
