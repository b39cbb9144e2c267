/* SPDX-License-Identifier: MIT */
/* What readset remembers of past starts (boots, or one command's runs
 * under run --auto) and the closed loop that decides from it what the
 * next start does: record, replay, both, or nothing (docs/DECISIONS.md,
 * "The closed loop").  The loop is pure; the history is a small text
 * file, one line a start, rewritten whole. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum start_mode {
        START_PLAIN = 0,        /* neither: the start only measured (a baseline) */
        START_RECORD = 1,       /* recorded, nothing replayed (a baseline too) */
        START_REPLAY = 2,       /* replayed, not recorded */
        START_REPLAY_RECORD = 3,/* replayed and recorded (hit ratio known) */
        START_OFF = 4,          /* neither, because the loop turned replay off (a baseline too) */
        _START_MODE_MAX,
};

struct start_entry {
        uint64_t at_unix;
        uint32_t mode;           /* enum start_mode */
        uint64_t total_us;       /* how long the start took (boot: systemd's "Startup finished"); 0: unknown */
        uint64_t replayed_bytes; /* what the replay read */
        uint64_t used_bytes;     /* what the start accessed (recorded) */
        double hit;              /* share of used_bytes the replay had warmed; < 0: unknown */
        uint64_t dropped;        /* events past the recorder's bound */
        uint64_t files;          /* files the replay was to read */
        uint64_t changed;        /* of those, skipped as changed (or gone) since they were recorded */
        char note[256];          /* what happened, in words ("" when nothing to say) */
};

/* What a start's replay did, as its line keeps it. */
struct start_replayed {
        uint64_t bytes;          /* read */
        uint64_t files;          /* files it was to read */
        uint64_t changed;        /* of those, changed or gone since recorded */
        bool stopped;            /* told to stop before its end */
};
/* e's replay figures from r: what changed only from a replay that went
 * through (one stopped may not have looked at every file). */
void start_entry_replayed(struct start_entry *e, const struct start_replayed *r);

/* The history kept: the last HISTORY_MAX starts. */
#define HISTORY_MAX 64

struct history {
        struct start_entry e[HISTORY_MAX];
        size_t n;                /* oldest first */
        size_t lines;            /* in the file, older ones and bad ones too */
};

/* Read path (missing: empty); lines that do not parse are left out and
 * counted in *ret_bad.  -errno. */
int history_load(const char *path, struct history *h, unsigned *ret_bad);
/* Append e (the oldest goes when full): one line added at the end of path
 * (0644; no link followed; not synced: a line torn by a crash is left out
 * when read, as a bad one), the file written anew, whole, once it holds
 * twice HISTORY_MAX lines. */
int history_append(const char *path, struct history *h, const struct start_entry *e);
const char *start_mode_name(uint32_t mode);
/* The median of n durations in microseconds (v sorted in place), in
 * seconds; 0 for none. */
double history_median_s(uint64_t *v, size_t n);

/* The loop's settings. */
struct loop_options {
        unsigned trial;          /* starts with replay before judging it (2) */
        double keep_below;       /* replay stays on while its median is below this share of the
                                  * baseline's (0.97) */
        unsigned retry_after;    /* starts off before trying again (16) */
        unsigned baseline_every; /* while on, one start in this many without replay (16) */
        bool record_replays;     /* record while replaying (boot: yes; run --auto: no) */
        bool plain_baseline;     /* the baseline is plain starts, where there are any, not recorded
                                  * ones (recording costs a fast start time: measured 20-40 ms of a
                                  * 0.12 s container boot) */
};
void loop_options_default(struct loop_options *o);
/* The settings the boot runs the loop with, and run --auto's: the one
 * place either is given. */
void loop_options_for_boot(struct loop_options *o);
void loop_options_for_run(struct loop_options *o);

struct loop_decision {
        uint32_t mode;           /* enum start_mode */
        bool off;                /* mode is START_OFF */
        double baseline_s, replay_s; /* the medians judged (0: none) */
        char why[200];
};

/* What the next start does, given h; have_plan: there is a read set to
 * replay; stale: it was marked stale (why says by what, or NULL).  A read
 * set is stale too when the last replay found a tenth or more of its files
 * changed: the start after it replays and records anew. */
void loop_decide(const struct loop_options *o, const struct history *h, bool have_plan, const char *stale,
                 struct loop_decision *d);
