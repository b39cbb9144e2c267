/* SPDX-License-Identifier: MIT */
/* The verbs (one file each; the table is in main.c) and what they share.
 * A verb parses its arguments, calls the modules, and prints: it returns an
 * exit status (0..255) or CMD_FAILED / CMD_USAGE (util/log.h), which only
 * main() turns into exit codes.  docs/HACKING.md has the recipe for a new
 * verb. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/device.h"
#include "replay/engine.h"
#include "replay/planner.h"
#include "replay/pace.h"
#include "replay/policy.h"
#include "util/log.h"

struct readset;

/* Read a read set, saying why not on failure (then CMD_FAILED). */
int cmd_load_readset(const char *path, struct readset **ret);
/* "cannot read 'PATH': WHY" (why NULL: r's text); returns CMD_FAILED. */
int say_cannot_read(const char *path, int r, const char *why);

/* ---- replay and run: their shared options and output (replay-cli.c) ---- */

/* Lookups on a share: paced (replay/pace.h) or warmed at once. */
enum pace_mode {
        PACE_AUTO,                /* run: paced where they lie on a share */
        PACE_OFF,                 /* warmed at once, as on a local file system */
        PACE_ON,                  /* replay --pace: paced, and replay stays until the start is through */
};

struct replay_args {
        struct replay_options policy;
        struct engine_options engine;
        bool threads_given;       /* -T: not the device's */
        bool verbose;             /* -v: name every file skipped */
        int nice;                 /* the replay's CPU niceness once it reads (0: as the caller's) */
        uint8_t *skip_reasons;    /* per file, what the engine said (replay_args_skips()) */
        enum pace_mode pace;
        pid_t follow_pid;         /* the start whose lookups pace (0: every process but readset's) */
        int wake_fd;              /* readable once the replay's give_up() should be asked (-1: none) */
        bool leave_at_give_up;    /* its results unneeded: once give_up() says so, left at once */
        const char *root;         /* --root: where a portable read set's tree is (NULL: /) */
        char *image_root;         /* bound: where the image it was packed in may be mounted */
        const struct rs_image *image;
};

#define REPLAY_OPT_ALL_LOOKUPS 0x100
#define REPLAY_OPT_MAX_EVICT 0x101
#define REPLAY_OPT_PACE 0x102
#define REPLAY_OPT_NO_PACE 0x103
#define REPLAY_OPT_ROOT 0x104
/* --allow-untrusted, of every verb that reads a read set or a profile */
#define CMD_OPT_ALLOW_UNTRUSTED 0x200
#define TRUST_LONG_OPTION { "allow-untrusted", no_argument, NULL, CMD_OPT_ALLOW_UNTRUSTED }
#define REPLAY_LONG_OPTIONS \
        { "method", required_argument, NULL, 'm' }, \
        { "queue-depth", required_argument, NULL, 'Q' }, \
        { "threads", required_argument, NULL, 'T' }, \
        { "max-bytes", required_argument, NULL, 'B' }, \
        { "no-lookups", no_argument, NULL, 'L' }, \
        { "all-lookups", no_argument, NULL, REPLAY_OPT_ALL_LOOKUPS }, \
        { "device", required_argument, NULL, 'D' }, \
        { "verbose", no_argument, NULL, 'v' }, \
        { "max-evict", required_argument, NULL, REPLAY_OPT_MAX_EVICT }, \
        { "pace", no_argument, NULL, REPLAY_OPT_PACE }, \
        { "no-pace", no_argument, NULL, REPLAY_OPT_NO_PACE }, \
        { "root", required_argument, NULL, REPLAY_OPT_ROOT }, \
        TRUST_LONG_OPTION

void replay_args_init(struct replay_args *a);
/* One of REPLAY_LONG_OPTIONS (-m, -Q, -T, --max-bytes, --no-lookups,
 * --all-lookups, --device): 1 when c was one, 0 when not, CMD_USAGE after
 * saying what is wrong with it. */
int replay_args_parse(struct replay_args *a, int c, const char *arg, const char *verb);
/* The device the replay of rs plans for, a saved profile passed over said
 * once; CMD_FAILED. */
int replay_args_device(const struct replay_args *a, const struct readset *rs, struct device_profile *ret);
/* The device and the plan a replay of rs makes with a (said on failure:
 * CMD_FAILED); dev may be NULL. */
int replay_args_plan(const struct replay_args *a, const struct readset *rs, struct device_profile *dev,
                     struct plan **ret);
/* The engine's settings that follow the device planned for (readahead
 * size; submitting threads unless -T said). */
void replay_args_for_device(struct replay_args *a, const struct device_profile *dev);
/* Have the engine say why it skipped each of rs's files (into
 * a->skip_reasons, freed by replay_args_free()); -ENOMEM. */
int replay_args_skips(struct replay_args *a, const struct readset *rs);
void replay_args_free(struct replay_args *a);   /* safe to call again */
static inline void replay_args_freep(struct replay_args *a) { replay_args_free(a); }
/* A portable read set (pack/portable.h) bound to --root (else /); --root
 * with any other is an error, said.  CMD_FAILED. */
int replay_args_bind(struct replay_args *a, struct readset *rs, const char *path);
/* Where the replay runs (its own process: descriptors are not inherited):
 * the image a bound read set was packed in, if the root is mounted from a
 * copy of it, opened for the engine to read ahead. */
void replay_args_open_image(struct replay_args *a);
/* Every file skipped, by name and reason: as info lines on stderr, or as
 * the array "skipped" ({"path", "reason"}) of an open JSON object. */
struct json;
void say_skipped(const struct replay_args *a, const struct readset *rs);
void json_skipped(struct json *j, const struct replay_args *a, const struct readset *rs);
/* Say a saved profile that was passed over (n->reason != 0), once per path. */
void say_device_note(const struct device_note *n);

/* What a replay made and did, for print_replay_stats(). */
struct replay_result {
        struct engine_stats st;
        uint64_t planned, cut;      /* bytes: the plan's, and what its budget left out */
        bool planned_ok;            /* a plan was made (else: said why; nothing replayed) */
        char fell_back[128];        /* st.fell_back points here */
        bool paced, pace_followed;  /* lookups on a share paced; by the start's own lookups (else the clock) */
        struct pace_stats pace;
};
/* Planning and replaying rs with a, in a process of its own
 * (util/bounded.h): what touches the read set's files happens there, so
 * that a share whose server is slow or gone never keeps the caller past
 * deadline_us, nor past give_up() and 1 s.  The skips land in
 * a->skip_reasons (replay_args_skips()).  With hold, the process waits once
 * it has planned until replay_job_go() (or replay_job_wait()): run plans
 * before its command starts on a disk.  NULL when no process could be had. */
struct replay_job;
struct replay_job *replay_job_start(struct replay_args *a, const struct readset *rs, bool hold, int *ret_err);
/* Wait until it has planned (or given up planning), until_us at most. */
bool replay_job_planned(struct replay_job *j, uint64_t until_us);
void replay_job_go(struct replay_job *j);
/* The process whose lookups the pacing follows, known only once the job
 * was started (before replay_job_go()). */
void replay_job_follow(struct replay_job *j, pid_t pid);
/* Its result; -ETIMEDOUT when it was left running; -ECHILD when it died
 * (said).  Frees j. */
int replay_job_wait(struct replay_job *j, uint64_t deadline_us, bool (*give_up)(void *userdata), void *userdata,
                    struct replay_result *ret);
/* Start and wait; where no process can be had, the same here. */
int replay_bounded(struct replay_args *a, const struct readset *rs, uint64_t deadline_us,
                   bool (*give_up)(void *userdata), void *userdata, struct replay_result *ret);

/* pace-cli.c, in the replay's process once it planned: pace the lookups
 * of rs that lie on a share (taken out of plan's), following the process
 * tree of follow (0: every process but this one), with BPF where it may,
 * else by the clock.  *ret NULL when there is nothing to pace; -ENOMEM. */
struct pace_run;
int pace_run_start(const struct replay_args *a, const struct readset *rs, struct plan *plan, pid_t follow,
                   struct pace_run **ret);
/* Through the sequence; or (following every process) quiet for 10 s. */
bool pace_run_done(struct pace_run *pr);
bool pace_run_following(const struct pace_run *pr);
/* Stop pacing: its figures; then free it (slow when it followed with BPF:
 * after the results are out). */
void pace_run_stop(struct pace_run *pr, struct pace_stats *ret);
void pace_run_free(struct pace_run *pr);

/* The pacing, as an info line, or as the object "paced" (when it was). */
void say_paced(const struct replay_result *res);
void json_pace(struct json *j, const struct replay_result *res);

/* replay --dry-run: the plan, as text or one JSON object, on stdout. */
void print_plan(const struct device_profile *dev, const struct plan *plan, const struct engine_options *eo,
                uint64_t plan_us, bool json);
/* What a replay did: as text on stderr, or one JSON object on stdout. */
void print_replay_stats(const struct replay_result *res, const struct replay_args *a, const struct readset *rs,
                        bool json);

int cmd_record(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_boot(int argc, char **argv);
