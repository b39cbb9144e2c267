/* SPDX-License-Identifier: MIT */
/* readset boot start: the boot's session.  Decides with the closed loop
 * what this boot does, replays the plan in a bounded process of its own
 * and records every process but readset's, until systemd says the boot
 * finished (and BOOT_SETTLE_MS more); then keeps the recording, makes the
 * next plan from the last BOOT_KEEP boots and writes the boot's line of
 * history.  Whatever fails, the unit does not: it is said on stderr (the
 * journal) and in the history's note, and the boot goes on. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "boot/history.h"
#include "boot/plan.h"
#include "cmd/boot-cli.h"
#include "cmd/cmd.h"
#include "model/compare.h"
#include "model/format.h"
#include "model/store.h"
#include "record/recorder.h"
#include "util/child.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

/* what one boot's recording keeps at most: about 40 MB (the rest counted) */
#define BOOT_MAX_EVENTS (1u << 20)
/* how long a boot may take before the recording ends anyway */
#define BOOT_MAX_S 300
/* a replay still going when the boot finished is of no use any more: it
 * is given this long, then told to stop (what it read is still counted) */
#define BOOT_REPLAY_GRACE_US 500000

/* systemd's readiness protocol (sd_notify(3)): one datagram to
 * $NOTIFY_SOCKET.  Nothing when not started by systemd. */
static void notify_ready(void)
{
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len;
        int fd;

        if (!path || (path[0] != '/' && path[0] != '@') || (len = strlen(path)) >= sizeof(sa.sun_path))
                return;
        memcpy(sa.sun_path, path, len);
        if (sa.sun_path[0] == '@')
                sa.sun_path[0] = 0;     /* abstract namespace */
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        (void)sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&sa,
                     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
        close(fd);
}

static bool cmdline_says_off(void)
{
        _cleanup_free_ char *s = NULL;
        char *save = NULL;

        if (read_small_file("/proc/cmdline", &s, 65536) < 0)
                return false;
        for (char *w = strtok_r(s, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
                if (strcmp(w, "readset=off") == 0 || strcmp(w, "readset=0") == 0)
                        return true;
        return false;
}

/* Wait until systemd reports the boot finished (systemctl
 * is-system-running --wait: it waits on systemd's own bus, no polling
 * here), deadline_us at most.  0, -ETIMEDOUT, or -errno. */
static int wait_systemd(uint64_t deadline_us)
{
        char *argv[] = { "systemctl", "is-system-running", "--wait", NULL };
        struct stat st;
        int r;

        if (stat("/run/systemd/system", &st) < 0)
                return -EHOSTDOWN;      /* not booted by systemd */
        r = child_run(argv, NULL, 0, false, deadline_us);
        return r > 0 ? 0 : r;           /* running, or degraded (a unit failed): finished either way */
}

/* The boot's total as systemd's "Startup finished" line gives it, in us
 * (firmware and loader included, when it knows them); 0 when unknown. */
static uint64_t systemd_total_us(void)
{
        char *argv[] = { "systemctl", "show", "-p", "FinishTimestampMonotonic", "-p", "FirmwareTimestampMonotonic",
                         NULL };
        char buf[1024];
        uint64_t finish = 0, firmware = 0;

        if (child_run(argv, buf, sizeof(buf), false, now_us() + 10000000) != 0)
                return 0;
        for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "FinishTimestampMonotonic=", 25) == 0)
                        (void)parse_u64(line + 25, &finish);
                else if (strncmp(line, "FirmwareTimestampMonotonic=", 27) == 0)
                        (void)parse_u64(line + 27, &firmware);
        }
        return finish ? finish + firmware : 0;
}

/* From outside: a line on stdin, the boot's seconds (or nothing). */
static int wait_stdin(uint64_t deadline_us, uint64_t *ret_total_us)
{
        char line[128];
        size_t n = 0;

        *ret_total_us = 0;
        for (;;) {
                struct pollfd pf = { .fd = 0, .events = POLLIN };
                uint64_t now = now_us();
                ssize_t k;
                int r;

                if (now >= deadline_us)
                        return -ETIMEDOUT;
                r = poll(&pf, 1, (int)MIN((deadline_us - now) / 1000 + 1, 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                k = read(0, line + n, sizeof(line) - 1 - n);
                if (k < 0 && errno != EINTR && errno != EAGAIN)
                        return -errno;
                if (k <= 0 || memchr(line + n, '\n', (size_t)k) || n + (size_t)k >= sizeof(line) - 1) {
                        double s;
                        n += k > 0 ? (size_t)k : 0;
                        line[n] = 0;
                        if (sscanf(line, "%lf", &s) == 1 && s > 0 && s < 1e6)
                                *ret_total_us = (uint64_t)(s * 1e6);
                        return 0;
                }
                n += (size_t)k;
        }
}

/* The boot's recording: only what lies below under (and the metadata of
 * its device) when given. */
static int keep_recording(const struct boot_args *a, struct readset *rs, struct readset **ret)
{
        _cleanup_readset_ struct readset *part = NULL;
        struct stat st;
        int r;

        if (a->under) {
                if (stat(a->under, &st) < 0)
                        return -errno;
                /* a container's processes name their files as they see them:
                 * below under here, where the same inode is */
                for (size_t i = 0; i < rs->n_files; i++) {
                        struct rs_file *f = &rs->files[i];
                        char *host = NULL;
                        struct stat fst;
                        if (f->kind != RS_FILE_REGULAR || f->dev != st.st_dev || f->path[0] != '/' ||
                            strncmp(f->path, a->under, strlen(a->under)) == 0)
                                continue;
                        if (asprintf(&host, "%s%s", a->under, f->path) < 0)
                                return -ENOMEM;
                        if (lstat(host, &fst) == 0 && fst.st_ino == f->ino && fst.st_dev == f->dev) {
                                free(f->path);
                                f->path = host;
                                f->flags &= ~(uint32_t)RS_FILE_DELETED;
                        } else
                                free(host);
                }
                if ((r = readset_part(rs, st.st_dev, a->under, &part)) < 0)
                        return r;
                rs = part;
        }
        *ret = part ? TAKE_PTR(part) : NULL;
        return 0;
}

/* boot.0 .. boot.K-1: the newest first.  The new recording goes in at 0
 * (all of them dropped first when the plan went stale), the plan is made
 * from what is there.  -errno. */
static int keep_boot(const struct state_paths *p, const struct readset *rs, bool stale, size_t *ret_merged)
{
        struct readset *boots[BOOT_KEEP] = { 0 };
        _cleanup_readset_ struct readset *plan = NULL;
        size_t n = 0;
        int r;

        *ret_merged = 0;
        if (stale)
                for (int i = 0; i < BOOT_KEEP; i++)
                        (void)unlink(p->boot[i]);
        else
                for (int i = BOOT_KEEP - 1; i > 0; i--)
                        if (rename(p->boot[i - 1], p->boot[i]) < 0 && errno != ENOENT)
                                return -errno;
        if ((r = store_keep(p->boot[0], rs)) < 0)
                return r;
        for (int i = 0; i < BOOT_KEEP; i++) {
                char why[256];
                if (!state_file_exists(p->boot[i]))
                        continue;
                if (format_read(p->boot[i], &boots[n], why, sizeof(why)) < 0) {
                        log_warning("left out '%s' of the plan: %s", p->boot[i], why);
                        continue;
                }
                n++;
        }
        r = n ? boot_plan_merge(boots, n, &plan) : -ENOENT;
        for (size_t i = 0; i < n; i++)
                readset_free(boots[i]);
        if (r < 0)
                return r;
        if ((r = store_keep(p->plan, plan)) < 0)
                return r;
        *ret_merged = n;
        return 0;
}

static void note_add(struct start_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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

int boot_session(const struct boot_args *a)
{
        struct state_paths p;
        struct history h;
        struct loop_options lo;
        struct loop_decision d;
        struct start_entry e = { .hit = -1 };
        struct replay_args ra;
        struct replay_result res = { 0 };
        struct replay_session *job = NULL;
        struct recorder *rec = NULL;
        struct recorder_options ro = { .buffer_kb = RECORDER_DEFAULT_BUFFER_KB, .lookups = true,
                                       .max_walk = RECORDER_DEFAULT_MAX_WALK, .max_events = BOOT_MAX_EVENTS };
        _cleanup_readset_ struct readset *plan = NULL, *rs = NULL, *part = NULL;
        _cleanup_close_ int lock = -1;
        char stale_buf[512], why[256];
        const char *stale, *what = NULL;
        uint64_t deadline, total_us = 0;
        unsigned bad;
        size_t merged = 0;
        bool recording, replaying;
        int r;

        state_paths(a->state, &p);
        if (cmdline_says_off()) {
                notify_ready();
                log_info("readset=off on the kernel command line: this boot is neither replayed nor recorded");
                return 0;
        }
        if (!state_file_exists(p.enabled)) {
                notify_ready();
                log_info("readset boot is not enabled ('readset boot enable')");
                return 0;
        }
        if (geteuid() != 0 || state_check(a->state) != 0) {
                notify_ready();
                return 0;       /* said */
        }
        lock = open(p.lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
                notify_ready();
                log_warning("another boot session holds '%s': this one does nothing", p.lock);
                return 0;
        }
        e.at_unix = (uint64_t)time(NULL);
        stale = stale_reason(&p, stale_buf, sizeof(stale_buf));
        r = history_load(p.history, &h, &bad);
        if (r < 0) {
                log_warning("cannot read '%s' (%s): starting a new history", p.history, strerror(-r));
                h.n = 0;
        }
        if (state_file_exists(p.plan) && (r = format_read(p.plan, &plan, why, sizeof(why))) < 0) {
                log_warning("the boot's read set '%s' is unusable (%s): this boot records a new one", p.plan, why);
                plan = NULL;
        }
        loop_for_boot(&lo);
        loop_decide(&lo, &h, plan != NULL, stale, &d);
        e.mode = d.mode;
        snprintf(e.note, sizeof(e.note), "%s", d.why);
        log_info("this boot: %s (%s)", start_mode_name(d.mode), d.why);
        recording = d.mode == START_RECORD || d.mode == START_REPLAY_RECORD;
        replaying = d.mode == START_REPLAY || d.mode == START_REPLAY_RECORD;

        /* the recorder first: what it starts (the replay's process) is
         * readset's own, left out of the recording */
        if (recording) {
                r = recorder_open(&ro, &rec, &what);
                if (r < 0) {
                        log_warning("cannot record this boot: %s: %s", what ? what : "recorder", strerror(-r));
                        note_add(&e, "not recorded: %s: %s", what ? what : "recorder", strerror(-r));
                        recording = false;
                        e.mode = replaying ? START_REPLAY : START_PLAIN;
                } else {
                        struct recorder_status st;
                        recorder_get_status(rec, &st);
                        if (st.lookups_error)
                                note_add(&e, "lookups not recorded: %s", strerror(-st.lookups_error));
                }
        }
        replay_args_init(&ra);
        if (replaying) {
                /* best effort, never realtime: the boot's own reads are not starved */
                (void)syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, (2 << 13) | 4);
                if ((r = replay_session_new(&ra.opts, plan, &job)) >= 0 && (r = replay_session_start(job, false)) < 0)
                        replay_session_free(TAKE_PTR(job));
                if (!job) {
                        note_add(&e, "not replayed: %s", strerror(-r));
                        replaying = false;
                        e.mode = recording ? START_RECORD : START_PLAIN;
                }
        }
        if (recording && (r = recorder_start(rec)) < 0) {
                note_add(&e, "not recorded: tracing would not start: %s", strerror(-r));
                recorder_free(TAKE_PTR(rec));
                recording = false;
                e.mode = replaying ? START_REPLAY : START_PLAIN;
        }
        notify_ready();
        if (a->from_stdin) {
                printf("ready\n");
                fflush(stdout);
        }

        deadline = now_us() + (uint64_t)BOOT_MAX_S * 1000000;
        if (a->from_stdin)
                r = wait_stdin(deadline, &total_us);
        else {
                r = wait_systemd(deadline);
                total_us = r == 0 ? systemd_total_us() : 0;
        }
        if (r == -ETIMEDOUT)
                note_add(&e, "the boot had not finished after %d s: recording ended then", BOOT_MAX_S);
        else if (r < 0)
                note_add(&e, "cannot tell when the boot finished: %s", strerror(-r));
        e.total_us = total_us;
        if (recording)
                usleep((useconds_t)MIN(a->settle_ms, 60000) * 1000);

        if (job) {
                r = replay_session_wait(job, now_us() + BOOT_REPLAY_GRACE_US, NULL, NULL);
                res = *replay_session_results(job);
                say_replay_notes(&res, r, &ra);
                replay_session_free(TAKE_PTR(job));
                if (r >= 0) {
                        e.replayed_bytes = res.st.bytes;
                        if (!res.st.stopped) {  /* (one stopped may not have looked at every file) */
                                e.files = res.st.files;
                                e.changed = res.st.files_changed + res.st.files_missing;
                        }
                }
                if (r == -ETIMEDOUT || res.st.stopped)
                        note_add(&e, "replay still going when the boot finished: stopped");
        }
        if (rec) {
                struct recorder_status st;
                if ((r = recorder_stop(rec)) < 0 || (r = recorder_finish(rec, &rs)) < 0) {
                        note_add(&e, "recording failed: %s", strerror(-r));
                        readset_free(rs);
                        rs = NULL;
                }
                recorder_get_status(rec, &st);
                e.dropped = st.dropped_events + st.lost_events;
                recorder_free(TAKE_PTR(rec));
        }
        if (rs) {
                struct readset_totals t;
                if ((r = keep_recording(a, rs, &part)) < 0)
                        note_add(&e, "cannot keep the recording: %s", strerror(-r));
                else {
                        struct readset *kept = part ? part : rs;
                        char *argv[] = { "boot", NULL };
                        (void)readset_set_command(kept, argv);
                        kept->rec_flags |= RS_REC_COLD;
                        readset_totals(kept, &t);
                        e.used_bytes = t.accessed_bytes;
                        if (plan) {
                                struct readset_usage u;
                                if (readset_compare(plan, kept, &u) >= 0 && replaying)
                                        e.hit = readset_usage_hit_ratio(&u);
                        }
                        if ((r = keep_boot(&p, kept, stale != NULL, &merged)) < 0) {
                                log_warning("cannot keep this boot's recording in '%s': %s", a->state, strerror(-r));
                                note_add(&e, "recording not kept: %s", strerror(-r));
                        } else if (stale)
                                (void)unlink(p.stale);
                }
        }
        if (e.dropped)
                note_add(&e, "%" PRIu64 " events past the recorder's bound dropped", e.dropped);
        if ((r = history_append(p.history, &h, &e)) < 0)
                log_warning("cannot write '%s': %s (a read-only root?)", p.history, strerror(-r));
        if (e.hit >= 0)
                snprintf(why, sizeof(why), ", %.0f%% of it warmed by the replay", e.hit * 100);
        else
                why[0] = 0;
        log_info("boot (%s) in %.3f s: %.1f MB replayed, %.1f MB used%s; next plan from %zu boot%s",
                 start_mode_name(e.mode), e.total_us / 1e6, e.replayed_bytes / 1e6, e.used_bytes / 1e6, why, merged,
                 merged == 1 ? "" : "s");
        replay_args_free(&ra);
        return 0;
}
