/* SPDX-License-Identifier: MIT */
#include "replay/session.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "replay/pace-run.h"
#include "util/bounded.h"
#include "util/util.h"
#include "util/banned.h"

/* The bytes the replay's process shares with the caller. */
struct job_out {
        struct replay_result res;
        pid_t follow_pid;           /* set by the caller before go */
        _Atomic uint64_t done_bytes; /* the engine's progress_bytes */
        uint8_t skips[];
};

struct replay_session {
        struct replay_session_options o;
        const struct readset *rs;
        size_t n_files;             /* rs's (the caller may have freed rs once it started) */
        struct bounded *b;          /* NULL: not started, or no process could be had */
        bool hold, waited;
        int start_error;
        atomic_bool cancel;
        /* while waiting */
        uint64_t deadline_us;
        bool (*give_up)(void *userdata);
        void *give_up_userdata;
        bool said_planned;
        struct replay_result res;
        uint8_t *skips;             /* o.skips: rs->n_files entries */
        int image_fd;               /* opened by open_image() here (-1: none) */
        struct rs_image *here;      /* the spans of the image found mounted (image_here()) */
        struct engine_stats pre;    /* the metadata read before planning (metadata_first()) */
};

void replay_session_options_init(struct replay_session_options *o)
{
        *o = (struct replay_session_options){ .pace = PACE_AUTO, .wake_fd = -1 };
        replay_options_init(&o->policy);
        engine_options_default(&o->engine);
}

void replay_session_options_for_device(struct replay_session_options *o, const struct device_profile *dev)
{
        o->engine.readahead_cap = dev->readahead_cap;
        if (!o->threads_given && dev->submitters)
                o->engine.threads = dev->submitters;
        if (o->beside && !dev->rotational) {
                /* measured beside a database's start on this machine's
                 * disk: readahead's 4 MiB calls from 8 threads made its
                 * start 0.35 s instead of 0.24; four 1 MiB reads in
                 * flight left it at 0.24 (DECISIONS.md, Keep) */
                o->engine.method = ENGINE_READ;
                o->engine.queue_depth = REPLAY_BESIDE_DEPTH;
                o->engine.request_bytes = 1 << 20;
        }
}

int replay_session_new(const struct replay_session_options *o, const struct readset *rs,
                       struct replay_session **ret)
{
        struct replay_session *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->o = *o;
        s->rs = rs;
        s->n_files = rs->n_files;
        s->image_fd = -1;
        s->o.engine.skip_reasons = NULL;
        s->o.engine.stop = NULL;
        s->o.engine.progress_bytes = NULL;
        /* a snapshot's pages were a service's hot ones: marked so once back */
        s->o.engine.mark_used = rs->rec_flags & RS_REC_SNAPSHOT;
        if (o->skips && !(s->skips = calloc(rs->n_files ? rs->n_files : 1, 1))) {
                free(s);
                return -ENOMEM;
        }
        atomic_init(&s->cancel, false);
        *ret = s;
        return 0;
}

/* On a disk, the read set's metadata before the plan: planning asks
 * every file where its data lies (FIEMAP), and each question reads the
 * file's inode, one synchronous request at a time in the order of the
 * files; the recorded metadata holds those blocks, and read ahead
 * together, in device order, they are one sweep (python's 207 files on the
 * emulated 7200 rpm disk, cold: planning 130 ms, or 20-50 ms of metadata
 * and then 8 ms).  What it read is added to the replay's figures after. */
static void metadata_first(struct replay_session *s, const struct device_profile *dev,
                           bool (*stop)(void *userdata), void *userdata)
{
        _cleanup_plan_ struct plan *meta = NULL;
        struct engine_options eo = s->o.engine;

        if (!dev->rotational || replay_plan_metadata(s->rs, dev, &s->o.policy, &meta) < 0 || !meta)
                return;
        eo.stop = stop;
        eo.stop_userdata = userdata;
        eo.skip_reasons = NULL;     /* (the replay after says why, once) */
        eo.progress_bytes = NULL;
        eo.image_fd = -1;
        eo.image = NULL;
        eo.lookups = false;
        eo.wait = true;
        if (engine_run(s->rs, meta, &eo, &s->pre) < 0)
                s->pre = (struct engine_stats){ 0 };
}

/* The replay's figures with what metadata_first() read: its reads and
 * bytes, found cached by the replay after it. */
static void add_metadata_first(const struct engine_stats *pre, struct engine_stats *st)
{
        uint64_t moved = MIN(pre->bytes, st->bytes_cached);

        st->reads += pre->reads;
        st->bytes += moved;     /* (each planned byte counted once: read, cached or skipped) */
        st->bytes_cached -= moved;
        st->meta_us += pre->elapsed_us;
        st->elapsed_us += pre->elapsed_us;
}

/* The device and the plan; why not in res.  (stop: as the engine's) */
static int plan_it(struct replay_session *s, struct replay_result *res, bool (*stop)(void *userdata),
                   void *userdata, struct plan **ret)
{
        struct device_profile dev;
        struct device_note note;
        int r = replay_device(s->rs, &s->o.policy, &dev, &note);

        if (r < 0) {
                res->plan_error = r;
                snprintf(res->plan_what, sizeof(res->plan_what), "cannot find the read set's device");
                return r;
        }
        res->note = note;
        metadata_first(s, &dev, stop, userdata);
        r = replay_plan(s->rs, &dev, &s->o.policy, NULL, ret);
        if (r < 0) {
                res->plan_error = r;
                snprintf(res->plan_what, sizeof(res->plan_what), "cannot plan the replay");
                return r;
        }
        replay_session_options_for_device(&s->o, &dev);
        res->planned_ok = true;
        res->planned = (*ret)->bytes;
        res->cut = (*ret)->bytes_cut;
        return 0;
}

/* A portable read set's image, where the root is mounted from a copy of it:
 * its ranges read ahead beside the files, in its order. */
static void open_image(struct replay_session *s, struct replay_result *res)
{
        struct device_profile idev;
        char p[64];
        int fd = -ENODEV;

        if (!s->o.image_root || s->o.engine.image_fd >= 0)
                return;
        if (s->o.image && s->o.open_image) {
                fd = s->o.open_image(s->o.image_root, s->o.image);
                if (fd >= 0)
                        s->o.engine.image = s->o.image;
                else if (fd == -ESTALE)
                        res->image_other = true;
        }
        /* another image of the files (or one the read set has no spans
         * of): the spans they lie in there, read as well, their files
         * checked after (a default-order squashfs on the emulated 7200 rpm
         * disk: its files' reads alone ran 3.2 s against 2.6 s plain) */
        if (fd < 0 && (!s->o.image || res->image_other) && s->o.image_here &&
            (fd = s->o.image_here(s->o.image_root, s->rs, &s->here)) >= 0) {
                s->o.engine.image = s->here;
                s->o.engine.image_unverified = true;
        }
        if (fd < 0)
                return;
        s->o.engine.image_fd = s->image_fd = fd;
        /* read as the device the image lies on wants it, not the one
         * mounted from it: a readahead(2) call there reads at most that
         * device's window (2.5 MB asked of the emulated disk below, 128 KiB
         * read) */
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        if (device_profile_for_path(p, &idev, NULL) == 0) {
                s->o.engine.image_cap = idev.readahead_cap;
                s->o.engine.image_bridge = idev.bridge_bytes;
        }
}

static bool stop_asked(void *shared) { return bounded_stopping(shared); }

/* The engine over plan, stopped by stop(userdata), the skips into skips
 * (NULL: not named); io_uring's fallback said as text in res->fell_back
 * (res->st.fell_back left NULL: a pointer of whichever process ran it). */
static int run_engine(struct replay_session *s, const struct plan *plan, bool (*stop)(void *userdata),
                      void *userdata, uint8_t *skips, struct replay_result *res)
{
        int r;

        s->o.engine.stop = stop;
        s->o.engine.stop_userdata = userdata;
        s->o.engine.skip_reasons = skips;
        open_image(s, res);
        r = engine_run(s->rs, plan, &s->o.engine, &res->st);
        add_metadata_first(&s->pre, &res->st);
        if (res->st.fell_back)
                snprintf(res->fell_back, sizeof(res->fell_back), "%s", res->st.fell_back);
        res->st.fell_back = NULL;
        return r;
}

/* In the replay's own process. */
static int job_main(void *userdata, void *shared)
{
        struct replay_session *s = userdata;
        struct job_out *out = shared;
        _cleanup_plan_ struct plan *plan = NULL;
        struct pace_run *pace = NULL;
        int r;

        r = plan_it(s, &out->res, stop_asked, shared, &plan);
        bounded_say_ready(shared);
        if (r < 0)
                return 0;       /* (planned_ok false: nothing replayed) */
        if (s->hold)
                bounded_wait_go(shared);
        if (bounded_stopping(shared)) {
                out->res.st.stopped = true;     /* cancelled before it went: nothing read */
                return 0;
        }
        if (s->o.nice > 0)
                (void)setpriority(PRIO_PROCESS, 0, s->o.nice);
        /* the lookups on a share, paced beside the replay and after it */
        if (pace_run_start(&s->o, s->rs, plan, out->follow_pid ? out->follow_pid : s->o.follow_pid, &pace) < 0)
                out->res.pace_no_memory = true;
        s->o.engine.progress_bytes = &out->done_bytes;
        r = run_engine(s, plan, stop_asked, shared, s->skips ? out->skips : NULL, &out->res);
        if (pace) {
                /* until the caller stops it (run: the command ended), or
                 * the start is through */
                while (!bounded_stopping(shared) && !pace_run_done(pace)) {
                        struct timespec ts = { 0, 2 * 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
                out->res.paced = true;
                out->res.pace_followed = pace_run_following(pace);
                pace_run_stop(pace, &out->res.pace);
                out->res.st.lookups += out->res.pace.warmed;
                bounded_say_done(shared, r);    /* the caller need not wait for this: */
                pace_run_free(pace);
        }
        return r;
}

int replay_session_start(struct replay_session *s, bool hold)
{
        size_t size = sizeof(struct job_out) + (s->skips ? s->n_files : 0);

        if (s->b || s->waited)
                return -EALREADY;
        s->hold = hold;
        s->b = bounded_start(job_main, s, size, &s->start_error);
        return s->b ? 0 : s->start_error;
}

bool replay_session_planned(struct replay_session *s, uint64_t until_us)
{
        if (!s->b)
                return false;
        while (!bounded_ready(s->b) && now_us() < until_us) {
                struct timespec ts = { 0, 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return bounded_ready(s->b);
}

void replay_session_go(struct replay_session *s)
{
        if (s->b)
                bounded_go(s->b);
}

void replay_session_follow(struct replay_session *s, pid_t pid, int wake_fd)
{
        s->o.follow_pid = pid;
        s->o.wake_fd = wake_fd;
        if (s->b)
                ((struct job_out *)bounded_shared(s->b))->follow_pid = pid;
}

void replay_session_cancel(struct replay_session *s) { atomic_store(&s->cancel, true); }

/* Planned (neither done nor update), an update with how far it is, or done. */
static void progress(struct replay_session *s, const struct replay_result *res, bool done, bool update,
                     uint64_t done_bytes)
{
        struct replay_progress p = { .planned = res->planned_ok, .done = done, .bytes_planned = res->planned,
                                     .bytes_done = done_bytes, .update = update };

        if (!s->o.progress)
                return;
        if (done) {
                p.bytes = res->st.bytes;
                p.reads = res->st.reads;
                p.bytes_done = res->st.bytes + res->st.bytes_cached + res->st.bytes_skipped;
        }
        s->o.progress(s->o.progress_userdata, &p);
}

/* Planned: said once, as soon as the caller's side sees it. */
static void say_planned(struct replay_session *s)
{
        const struct job_out *out;

        if (s->said_planned || !s->b || !bounded_ready(s->b))
                return;
        out = bounded_shared(s->b);
        s->said_planned = true;
        if (out->res.planned_ok)
                progress(s, &out->res, false, false, 0);
}

/* How far it is, while it replays. */
static void say_how_far(struct replay_session *s)
{
        const struct job_out *out;

        if (!s->said_planned || !s->o.progress || !s->b)
                return;
        out = bounded_shared(s->b);
        if (out->res.planned_ok)
                progress(s, &out->res, false, true, atomic_load_explicit(&out->done_bytes, memory_order_relaxed));
}

/* Asked by bounded_wait() every 10 ms. */
static bool give_up_waiting(void *userdata)
{
        struct replay_session *s = userdata;

        say_planned(s);
        say_how_far(s);
        if (atomic_load(&s->cancel))
                return true;
        return s->give_up && s->give_up(s->give_up_userdata);
}

/* In the caller's process: stopped by the same rules. */
static bool stopping_here(void *userdata)
{
        struct replay_session *s = userdata;

        return atomic_load(&s->cancel) || (s->deadline_us && now_us() >= s->deadline_us) ||
               (s->give_up && s->give_up(s->give_up_userdata));
}

/* No process could be had: here, but a read that does not return holds it. */
static int replay_here(struct replay_session *s)
{
        _cleanup_plan_ struct plan *plan = NULL;
        int r;

        /* (never started: no process was asked for, and none used) */
        s->res = (struct replay_result){ .st.stopped = true,
                                         .no_process = s->start_error ? s->start_error : -ECHILD };
        if (plan_it(s, &s->res, stopping_here, s, &plan) < 0)
                return 0;       /* (planned_ok false: nothing replayed) */
        s->res.st.stopped = false;
        progress(s, &s->res, false, false, 0);
        r = run_engine(s, plan, stopping_here, s, s->skips, &s->res);
        s->res.st.fell_back = s->res.fell_back[0] ? s->res.fell_back : NULL;
        return r;
}

/* What planning had to say, whatever became of the process after. */
static void keep_planning_notes(struct replay_result *res, const struct replay_result *out)
{
        res->plan_error = out->plan_error;
        memcpy(res->plan_what, out->plan_what, sizeof(res->plan_what));
        res->note = out->note;
}

int replay_session_wait(struct replay_session *s, uint64_t deadline_us, bool (*give_up)(void *userdata),
                        void *userdata)
{
        const struct job_out *out;
        bool leave = s->o.leave_at_give_up;
        int sig, r;

        if (s->waited)
                return -EALREADY;
        s->waited = true;
        s->deadline_us = deadline_us;
        s->give_up = give_up;
        s->give_up_userdata = userdata;
        if (!s->b) {
                r = replay_here(s);
                s->res.skips = s->skips;
                progress(s, &s->res, true, false, 0);
                return r;
        }
        out = bounded_shared(s->b);
        say_planned(s);
        if (!atomic_load(&s->cancel))
                bounded_go(s->b);       /* (held or not: it goes now) */
        if (s->o.wake_fd >= 0)
                bounded_watch_fd(s->b, s->o.wake_fd);
        r = bounded_wait(s->b, deadline_us, give_up_waiting, s, leave ? 0 : 1000000, &sig);
        s->res = (struct replay_result){ .st.stopped = true };
        if (bounded_ready(s->b))
                keep_planning_notes(&s->res, &out->res);
        if (r == -ETIMEDOUT && leave && give_up_waiting(s) && !(deadline_us && now_us() >= deadline_us)) {
                /* left as asked (it ends with the caller): nothing to report */
                s->res.planned_ok = out->res.planned_ok;
                s->res.left = true;
                r = 0;
        } else if (r >= 0) {
                s->res = out->res;
                s->res.st.fell_back = s->res.fell_back[0] ? s->res.fell_back : NULL;
                if (s->skips)
                        memcpy(s->skips, out->skips, s->n_files);
        } else if (r == -EINTR)
                r = 0;
        else if (r == -ECHILD)
                s->res.signal = sig;
        s->res.skips = s->skips;
        bounded_free(s->b);
        s->b = NULL;
        if (r >= 0 && !s->res.left) {
                if (!s->said_planned && s->res.planned_ok)
                        progress(s, &s->res, false, false, 0);
                progress(s, &s->res, true, false, 0);
        }
        return r;
}

struct peek {
        const struct replay_options *o;
        const char *path;
};

struct peeked {
        struct device_profile dev;
        struct device_note note;
};

static int peek_main(void *userdata, void *shared)
{
        const struct peek *pk = userdata;
        struct peeked *p = shared;

        replay_device_for_path(pk->o, pk->path, &p->dev, &p->note);
        return 0;
}

int replay_peek_device(const struct replay_options *o, const char *path, uint64_t deadline_us,
                       struct device_profile *ret, struct device_note *note)
{
        struct peek pk = { o, path };
        struct bounded *b;
        int r, sig;

        b = bounded_start(peek_main, &pk, sizeof(struct peeked), &r);
        if (b) {
                const struct peeked *p = bounded_shared(b);
                r = bounded_wait(b, deadline_us, NULL, NULL, 0, &sig);
                if (r >= 0) {
                        *ret = p->dev;
                        *note = p->note;
                }
                bounded_free(b);
                if (r >= 0)
                        return 0;
                if (r == -ETIMEDOUT) {
                        device_profile_solid(ret);
                        note->reason = 0;
                        return r;
                }
        }
        replay_device_for_path(o, path, ret, note);     /* no process could be had */
        return 0;
}

const struct replay_result *replay_session_results(const struct replay_session *s) { return &s->res; }

void replay_session_free(struct replay_session *s)
{
        if (!s)
                return;
        if (s->b) {
                /* started, never waited for: stopped now */
                s->o.leave_at_give_up = false;
                s->o.progress = NULL;
                replay_session_cancel(s);
                (void)replay_session_wait(s, 1, NULL, NULL);
        }
        if (s->image_fd >= 0)
                close(s->image_fd);
        rs_image_free(s->here);
        free(s->skips);
        free(s);
}
