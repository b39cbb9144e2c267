/* SPDX-License-Identifier: MIT */
/* The boot's session. */
#include "boot/session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/state.h"
#include "model/compare.h"
#include "model/format.h"
#include "model/readset.h"
#include "util/util.h"
#include "util/banned.h"

struct session {
        const struct boot_session_args *a;
        const struct boot_env *env;
        struct boot_state p;
        struct history h;
        struct loop_decision d;
        struct start_entry *e;
        struct readset *plan;
        const char *stale;
        char stale_buf[512];
        void *rec, *job;
        bool recording, replaying;
};

static void say(const struct session *s, enum boot_say_level level, const char *fmt, ...) _printf_(3, 4);
static void say(const struct session *s, enum boot_say_level level, const char *fmt, ...)
{
        char text[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        s->env->say(s->env->say_userdata, level, text);
}

static void note_add(struct start_entry *e, const char *fmt, ...) _printf_(2, 3);
static void note_add(struct start_entry *e, const char *fmt, ...)
{
        size_t len = strlen(e->note);
        va_list ap;

        if (len + 3 >= sizeof(e->note))
                return;
        if (len)
                len += (size_t)snprintf(e->note + len, sizeof(e->note) - len, "; ");
        va_start(ap, fmt);
        vsnprintf(e->note + len, sizeof(e->note) - len, fmt, ap);
        va_end(ap);
}

/* What the history, the plan and the stale mark say this boot does. */
static void decide(struct session *s)
{
        struct loop_options lo;
        char why[256];
        unsigned bad;
        int r;

        s->e->at_unix = s->env->sys.now_unix(s->env->sys.userdata);
        s->stale = boot_state_stale(&s->p, s->stale_buf, sizeof(s->stale_buf));
        if ((r = history_load(s->p.history, &s->h, &bad)) < 0) {
                say(s, BOOT_SAY_WARNING, "cannot read '%s' (%s): starting a new history", s->p.history, strerror(-r));
                s->h.n = 0;
        }
        if (boot_state_has(s->p.plan) && format_read(s->p.plan, &s->plan, why, sizeof(why)) < 0) {
                say(s, BOOT_SAY_WARNING, "the boot's read set '%s' is unusable (%s): this boot records a new one",
                    s->p.plan, why);
                s->plan = NULL;
        }
        loop_options_for_boot(&lo);
        loop_decide(&lo, &s->h, s->plan != NULL, s->stale, &s->d);
        s->e->mode = s->d.mode;
        snprintf(s->e->note, sizeof(s->e->note), "%s", s->d.why);
        say(s, BOOT_SAY_INFO, "this boot: %s (%s)", start_mode_name(s->d.mode), s->d.why);
        s->recording = s->d.mode == START_RECORD || s->d.mode == START_REPLAY_RECORD;
        s->replaying = s->d.mode == START_REPLAY || s->d.mode == START_REPLAY_RECORD;
}

/* The recorder first: what it starts (the replay's process) is readset's
 * own, left out of the recording.  What does not start is left out of
 * the boot's mode. */
static void start(struct session *s)
{
        const struct boot_env *env = s->env;
        const char *what = NULL;
        int r, lookups_err = 0;

        if (s->recording) {
                r = env->rec.open(env->rec.userdata, &s->rec, &what, &lookups_err);
                if (r < 0) {
                        what = what ? what : "recorder";
                        say(s, BOOT_SAY_WARNING, "cannot record this boot: %s: %s", what, strerror(-r));
                        note_add(s->e, "not recorded: %s: %s", what, strerror(-r));
                        s->rec = NULL;
                        s->recording = false;
                        s->e->mode = s->replaying ? START_REPLAY : START_PLAIN;
                } else if (lookups_err)
                        note_add(s->e, "lookups not recorded: %s", strerror(-lookups_err));
        }
        if (s->replaying && (r = env->replay.start(env->replay.userdata, s->plan, &s->job)) < 0) {
                note_add(s->e, "not replayed: %s", strerror(-r));
                s->job = NULL;
                s->replaying = false;
                s->e->mode = s->recording ? START_RECORD : START_PLAIN;
        }
        if (s->recording && (r = env->rec.start(env->rec.userdata, s->rec)) < 0) {
                note_add(s->e, "not recorded: tracing would not start: %s", strerror(-r));
                s->rec = NULL;
                s->recording = false;
                s->e->mode = s->replaying ? START_REPLAY : START_PLAIN;
        }
}

/* Until the boot finished (BOOT_MAX_S at most) and settle_ms more; the
 * replay stopped, the recording taken. */
static struct readset *wait_end(struct session *s)
{
        const struct boot_system *sys = &s->env->sys;
        struct start_replayed rp = { 0 };
        struct readset *rs = NULL;
        uint64_t total_us = 0;
        int r;

        r = sys->wait_finished(sys->userdata, sys->now_us(sys->userdata) + (uint64_t)BOOT_MAX_S * 1000000, &total_us);
        if (r == -ETIMEDOUT)
                note_add(s->e, "the boot had not finished after %d s: recording ended then", BOOT_MAX_S);
        else if (r < 0)
                note_add(s->e, "cannot tell when the boot finished: %s", strerror(-r));
        s->e->total_us = r == 0 ? total_us : 0;
        if (s->recording)
                sys->sleep_us(sys->userdata, MIN(s->a->settle_ms, 60000) * 1000);
        if (s->job) {
                r = s->env->replay.wait(s->env->replay.userdata, TAKE_PTR(s->job),
                                        sys->now_us(sys->userdata) + BOOT_REPLAY_GRACE_US, &rp);
                if (r >= 0)
                        start_entry_replayed(s->e, &rp);
                if (r == -ETIMEDOUT || rp.stopped)
                        note_add(s->e, "replay still going when the boot finished: stopped");
        }
        if (s->rec) {
                r = s->env->rec.finish(s->env->rec.userdata, TAKE_PTR(s->rec), &rs, &s->e->dropped);
                if (r < 0) {
                        note_add(s->e, "recording failed: %s", strerror(-r));
                        readset_free(rs);
                        rs = NULL;
                }
        }
        return rs;
}

/* The boot's recording: only what lies below under (and the metadata of
 * its device) when given.  *ret: the part (NULL: rs whole). */
static int below_under(const char *under, struct readset *rs, struct readset **ret)
{
        struct stat st;

        *ret = NULL;
        if (!under)
                return 0;
        if (stat(under, &st) < 0)
                return -errno;
        /* a container's processes name their files as they see them: below
         * under here, where the same inode is */
        for (size_t i = 0; i < rs->n_files; i++) {
                struct rs_file *f = &rs->files[i];
                char *host = NULL;
                struct stat fst;
                if (f->kind != RS_FILE_REGULAR || f->dev != st.st_dev || f->path[0] != '/' ||
                    strncmp(f->path, under, strlen(under)) == 0)
                        continue;
                if (asprintf(&host, "%s%s", under, f->path) < 0)
                        return -ENOMEM;
                if (lstat(host, &fst) == 0 && fst.st_ino == f->ino && fst.st_dev == f->dev) {
                        free(f->path);
                        f->path = host;
                        f->flags &= ~(uint32_t)RS_FILE_DELETED;
                } else
                        free(host);
        }
        return readset_part(rs, st.st_dev, under, ret);
}

static void left_out(void *userdata, const char *path, const char *why)
{
        say(userdata, BOOT_SAY_WARNING, "left out '%s' of the plan: %s", path, why);
}

/* The recording kept (the boots rotated, the next plan made), measured
 * against the plan; *ret_merged: the boots the plan was made from. */
static void keep(struct session *s, struct readset *rs, size_t *ret_merged)
{
        _cleanup_readset_ struct readset *part = NULL;
        char *argv[] = { "boot", NULL };
        struct readset_totals t;
        struct readset_usage u;
        struct readset *kept;
        int r;

        if ((r = below_under(s->a->under, rs, &part)) < 0) {
                note_add(s->e, "cannot keep the recording: %s", strerror(-r));
                return;
        }
        kept = part ? part : rs;
        (void)readset_set_command(kept, argv);
        kept->rec_flags |= RS_REC_COLD;
        readset_totals(kept, &t);
        s->e->used_bytes = t.accessed_bytes;
        if (s->replaying && s->plan && readset_compare(s->plan, kept, &u) >= 0)
                s->e->hit = readset_usage_hit_ratio(&u);
        if ((r = boot_state_keep(&s->p, kept, s->stale != NULL, left_out, s, ret_merged)) < 0) {
                say(s, BOOT_SAY_WARNING, "cannot keep this boot's recording in '%s': %s", s->a->state, strerror(-r));
                note_add(s->e, "recording not kept: %s", strerror(-r));
        } else if (s->stale)
                (void)unlink(s->p.stale);
}

/* Nothing to do this boot: systemd told so at once. */
static int nothing(const struct boot_env *env, struct boot_result *ret, enum boot_outcome outcome, int err)
{
        env->sys.notify_ready(env->sys.userdata, false);
        ret->outcome = outcome;
        ret->err = err;
        return 0;
}

int boot_session(const struct boot_session_args *a, const struct boot_env *env, struct boot_result *ret)
{
        struct session s = { .a = a, .env = env, .e = &ret->e };
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_close_ int lock = -1;
        int r;

        *ret = (struct boot_result){ .outcome = BOOT_RAN, .e.hit = -1 };
        boot_state_paths(a->state, &s.p);
        if (env->sys.cmdline_off(env->sys.userdata))
                return nothing(env, ret, BOOT_CMDLINE_OFF, 0);
        if (!boot_state_has(s.p.enabled))
                return nothing(env, ret, BOOT_NOT_ENABLED, 0);
        if (!a->root)
                return nothing(env, ret, BOOT_NOT_ROOT, 0);
        if ((r = boot_state_check(a->state, ret->why, sizeof(ret->why))) < 0)
                return nothing(env, ret, BOOT_REFUSED, r);
        if ((lock = boot_state_lock(&s.p)) < 0)
                return nothing(env, ret, BOOT_LOCKED, lock);

        decide(&s);
        start(&s);
        env->sys.notify_ready(env->sys.userdata, true);
        rs = wait_end(&s);
        if (rs)
                keep(&s, rs, &ret->merged);
        if (ret->e.dropped)
                note_add(&ret->e, "%" PRIu64 " events past the recorder's bound dropped", ret->e.dropped);
        if ((r = history_append(s.p.history, &s.h, &ret->e)) < 0)
                say(&s, BOOT_SAY_WARNING, "cannot write '%s': %s (a read-only root?)", s.p.history, strerror(-r));
        readset_free(s.plan);
        return 0;
}
