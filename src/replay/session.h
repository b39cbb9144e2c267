/* SPDX-License-Identifier: MIT */
/* A replay session: what `replay`, `run` and the boot share (and a daemon
 * will).  It plans a read set's replay and replays it (replay/policy.h,
 * engine.h), with the lookups that lie on a share paced beside it
 * (pace-run.c), in a process of its own (util/bounded.h): what touches the
 * read set's files happens there, so that a share whose server is slow or
 * gone never keeps the caller past its deadline, nor past give_up() and
 * 1 s.  Returns -errno, never prints: what the caller may want to say is in
 * its result.  Reentrant: no state but the session's, so one process may
 * run several at once (each from the thread that started it: its process
 * ends with that thread, PR_SET_PDEATHSIG). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/device.h"
#include "model/readset.h"
#include "replay/engine.h"
#include "replay/follow.h"
#include "replay/pace.h"
#include "replay/policy.h"

/* Lookups on a share: paced (replay/pace.h) or warmed at once. */
enum pace_mode {
        PACE_AUTO,                /* run: paced where they lie on a share */
        PACE_OFF,                 /* warmed at once, as on a local file system */
        PACE_ON,                  /* replay --pace: paced, and the session stays until the start is through */
};

/* Where the replay stands, for the progress callback. */
struct replay_progress {
        bool planned;             /* a plan was made (bytes_planned is its) */
        bool done;                /* the replay is over (the counts are final) */
        bool update;              /* how far it is while it replays (planned, not done): said again
                                   * and again, where planned and done are said once each */
        uint64_t bytes_planned;
        uint64_t bytes_done;      /* of those, dealt with so far: requested, found cached or skipped */
        uint64_t bytes;           /* requested (the engine counts at its end: 0 until done) */
        uint64_t reads;           /* requests issued so far (likewise) */
};

/* What a caller asks. */
struct replay_session_options {
        struct replay_options policy;
        struct engine_options engine;   /* (stop, stop_userdata and skip_reasons are the session's) */
        bool threads_given;       /* engine.threads stands (else the device's submitters) */
        int nice;                 /* the replay's CPU niceness once it reads (0: as the caller's) */
        /* It runs beside a program's own reads (keep's restore beside its
         * service's start), not before them: where the device is solid
         * state, a few requests at a time (ENGINE_READ, REPLAY_BESIDE_DEPTH
         * in flight): the program's reads wait behind those few, not
         * behind a deep queue of readahead; where seeks dominate, the
         * plan's sweep as it is (what it saves is a seek for each of the
         * program's misses) */
        bool beside;
        enum pace_mode pace;
        pid_t follow_pid;         /* the start whose lookups pace (0: every process but the session's) */
        const struct replay_follower_ops *follower;     /* NULL: pacing by the recorded timeline */
        int wake_fd;              /* readable once give_up() should be asked (-1: none) */
        bool leave_at_give_up;    /* its results unneeded: once give_up() says so, left at once */
        bool skips;               /* keep why each file was skipped (replay_result.skips) */
        /* a portable read set bound to a root (pack/portable.h): the image
         * it was packed in, where that root may be mounted from a copy,
         * opened in the replay's process by open_image (the caller's:
         * portable_image_open(); -ESTALE another image) and read ahead */
        const char *image_root;
        const struct rs_image *image;
        int (*open_image)(const char *root, const struct rs_image *image);
        /* where there is none, or the root is mounted from another: an fd
         * of the image the root is mounted from and the spans the read
         * set's ranges lie in there (the caller's: portable_image_here()),
         * read ahead too, its files checked by content after their reads */
        int (*image_here)(const char *root, const struct readset *rs, struct rs_image **ret);
        /* Called from replay_session_wait(), in the caller's thread, when
         * the replay has planned, every 10 ms while it replays in a process
         * of its own, and when it is over (NULL: not). */
        void (*progress)(void *userdata, const struct replay_progress *p);
        void *progress_userdata;
};

void replay_session_options_init(struct replay_session_options *o);
/* Requests in flight of a replay beside a program on a solid-state device */
#define REPLAY_BESIDE_DEPTH 4
/* The engine's settings that follow the device planned for (readahead
 * size; submitting threads unless threads_given). */
void replay_session_options_for_device(struct replay_session_options *o, const struct device_profile *dev);

/* What a session made and did, and what the caller may want to say. */
struct replay_result {
        struct engine_stats st;
        uint64_t planned, cut;      /* bytes: the plan's, and what its budget left out */
        bool planned_ok;            /* a plan was made (else: plan_error says why; nothing replayed) */
        int plan_error;             /* planning failed: -errno, ... */
        char plan_what[48];         /* ... at this step ("cannot find the read set's device", "cannot plan
                                     * the replay") */
        struct device_note note;    /* a saved profile passed over (note.reason != 0) */
        char fell_back[128];        /* st.fell_back points here */
        bool paced, pace_followed;  /* lookups on a share paced; by the start's own lookups (else the clock) */
        struct pace_stats pace;
        bool pace_no_memory;        /* the lookups are not paced: out of memory */
        bool image_other;           /* the root is mounted from another image than the one packed */
        int no_process;             /* replayed in the caller's thread: why no process was used (-errno;
                                     * -ECHILD: the session was never started) */
        int signal;                 /* the replay's process was killed by this signal (wait: -ECHILD) */
        bool left;                  /* left as asked at give_up (leave_at_give_up): nothing more known */
        const uint8_t *skips;       /* with options.skips: per file of the read set, an enum fs_skip */
};

struct replay_session;

/* A session replaying rs (which must outlive it) as o asks; nothing runs
 * yet.  -ENOMEM. */
int replay_session_new(const struct replay_session_options *o, const struct readset *rs,
                       struct replay_session **ret);
/* Plan and replay in a process of its own; with hold, it waits once it has
 * planned until replay_session_go() (or replay_session_wait()): run plans
 * before its command starts on a disk.  -errno when no process could be
 * had: replay_session_wait() then plans and replays in the caller's thread
 * (stopped by the same rules, but a read that does not return holds it). */
int replay_session_start(struct replay_session *s, bool hold);
/* Wait until it has planned (or given up planning), until_us (now_us())
 * at most.  True once it has. */
bool replay_session_planned(struct replay_session *s, uint64_t until_us);
void replay_session_go(struct replay_session *s);
/* The process whose lookups the pacing follows, and a descriptor readable
 * once it ends (wake_fd, -1: none), known only once the session was started
 * (before replay_session_go()). */
void replay_session_follow(struct replay_session *s, pid_t pid, int wake_fd);
/* Let it go and wait for it: until it is done, or deadline_us (now_us(); 0:
 * none) has passed, or give_up(userdata) (NULL: never; asked every 10 ms)
 * or replay_session_cancel() says so; then it is told to stop and given 1 s
 * more (none with leave_at_give_up).  Started or not (not: it is replayed
 * here).  0 with the result to read (replay_session_results()); -ETIMEDOUT
 * when it was left running (with a read that has not returned); -ECHILD
 * when its process died (result.signal); the engine's -errno.  Once. */
int replay_session_wait(struct replay_session *s, uint64_t deadline_us, bool (*give_up)(void *userdata),
                        void *userdata);
/* Ask it to stop, from any thread (or a callback of its): a wait under way
 * stops it within 10 ms; one to come stops it at once. */
void replay_session_cancel(struct replay_session *s);
/* What it made and did (valid until replay_session_free()). */
const struct replay_result *replay_session_results(const struct replay_session *s);
/* The device of path (run: the read set's first file, before the command
 * starts), asked in a process of its own, as the session's planning is:
 * 0; -ETIMEDOUT when it had not answered by deadline_us (a share whose
 * server is slow or gone; *ret then solid state, no note).  Where no
 * process can be had, asked here. */
int replay_peek_device(const struct replay_options *o, const char *path, uint64_t deadline_us,
                       struct device_profile *ret, struct device_note *note);

/* Safe on NULL; a session started and not waited for is stopped first. */
void replay_session_free(struct replay_session *s);
static inline void replay_session_freep(struct replay_session **s) { replay_session_free(*s); }
