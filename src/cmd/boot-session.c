/* SPDX-License-Identifier: MIT */
/* readset boot start: the boot's session (boot/session.h) run with the
 * system's sources (boot/system.h) and the replay's wiring; what it says
 * goes to stderr (the journal). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "boot/session.h"
#include "boot/state.h"
#include "boot/system.h"
#include "boot/run-loop.h"
#include "cmd/boot-cli.h"
#include "cmd/cmd.h"
#include "util/log.h"
#include "util/util.h"
#include "util/ioprio.h"
#include "util/banned.h"

/* ---- the replay's wiring ----------------------------------------------- */

static int replay_start(void *userdata, const struct readset *plan, void **ret_job)
{
        struct replay_args *ra = userdata;
        struct replay_session *job = NULL;
        int r;

        /* best effort, level 4, never realtime (the boot's own reads are
         * not starved): the replay's process inherits it */
        (void)io_priority_set(IO_PRIORITY_BEST_EFFORT);
        r = replay_session_new(&ra->opts, plan, &job);
        if (r >= 0 && (r = replay_session_start(job, false)) < 0)
                replay_session_free(TAKE_PTR(job));
        if (r < 0)
                return r;
        *ret_job = job;
        return 0;
}

static int replay_wait(void *userdata, void *job, uint64_t deadline_us, struct start_replayed *ret)
{
        struct replay_result res;
        int r = replay_session_wait(job, deadline_us, NULL, NULL);

        res = *replay_session_results(job);
        say_replay_notes(&res, r, userdata);
        replay_session_free(job);
        start_replayed_of(&res, ret);
        return r;
}

/* The boot's replay: a replay session (replay/session.h) with ra's
 * options (replay_args_init()'s). */
static void wire_replay(struct boot_replayer *rp, struct replay_args *ra)
{
        *rp = (struct boot_replayer){ .start = replay_start, .wait = replay_wait, .userdata = ra };
}

/* ---- the boot's end from stdin (--finished-from-stdin) -------------------- */

static void stdin_ready(void *userdata, bool running)
{
        (void)userdata;
        boot_notify_ready();
        if (running) {
                printf("ready\n");
                fflush(stdout);
        }
}

static int stdin_finished(void *userdata, uint64_t deadline_us, uint64_t *ret_total_us)
{
        (void)userdata;
        return boot_wait_line(0, deadline_us, ret_total_us);
}

/* (to the journal: a message is one entry, whatever its width) */
static void say(void *userdata, enum boot_say_level level, const char *text)
{
        (void)userdata;
        if (level == BOOT_SAY_WARNING)
                log_warning("%s", text);
        else
                log_info("%s", text);
}

int boot_say_refused(const char *dir, int err, const char *why)
{
        if (err == -EPERM)
                return log_error("refusing the boot state '%s': %s (docs/SECURITY.md)", dir, why);
        return log_errno(err, "cannot use '%s'", dir);
}

/* What the session did, said (the journal's last line of it) */
static void say_result(const struct boot_args *a, const struct boot_result *res)
{
        const struct start_entry *e = &res->e;
        struct boot_state p;
        char hit[64] = "";

        switch (res->outcome) {
        case BOOT_CMDLINE_OFF:
                log_info("readset=off on the kernel command line: this boot is neither replayed nor recorded");
                return;
        case BOOT_NOT_ENABLED:
                log_info("readset boot is not enabled ('readset boot enable')");
                return;
        case BOOT_NOT_ROOT:
                return;
        case BOOT_REFUSED:
                (void)boot_say_refused(a->state, res->err, res->why);
                return;
        case BOOT_LOCKED:
                boot_state_paths(a->state, &p);
                log_warning("another boot session holds '%s': this one does nothing", p.lock);
                return;
        case BOOT_RAN:
                break;
        }
        if (e->hit >= 0)
                snprintf(hit, sizeof(hit), ", %.0f%% of it warmed by the replay", e->hit * 100);
        log_info("boot (%s) in %.3f s: %.1f MB replayed, %.1f MB used%s; next plan from %zu boot%s",
                 start_mode_name(e->mode), e->total_us / 1e6, e->replayed_bytes / 1e6, e->used_bytes / 1e6, hit,
                 res->merged, res->merged == 1 ? "" : "s");
}

int boot_start(const struct boot_args *a)
{
        struct boot_session_args sa = { .state = a->state, .under = a->under, .settle_ms = a->settle_ms,
                                        .root = geteuid() == 0 };
        struct boot_env env = { .say = say };
        struct boot_result res;
        struct replay_args ra;

        boot_env_system(&env);
        if (a->from_stdin) {
                env.sys.notify_ready = stdin_ready;
                env.sys.wait_finished = stdin_finished;
        }
        replay_args_init(&ra);
        wire_replay(&env.replay, &ra);
        (void)boot_session(&sa, &env, &res);
        replay_args_free(&ra);
        say_result(a, &res);
        return 0;       /* the boot goes on, whatever failed */
}
