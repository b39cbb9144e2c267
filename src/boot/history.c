/* SPDX-License-Identifier: MIT */
/* The history of starts and the closed loop over it. */
#include "boot/history.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

static const char *const mode_names[_START_MODE_MAX] = {
        [START_PLAIN] = "plain",
        [START_RECORD] = "record",
        [START_REPLAY] = "replay",
        [START_REPLAY_RECORD] = "replay+record",
        [START_OFF] = "off",
};

const char *start_mode_name(uint32_t mode)
{
        return mode < _START_MODE_MAX ? mode_names[mode] : "?";
}

static int mode_from_name(const char *s, uint32_t *ret)
{
        for (uint32_t m = 0; m < _START_MODE_MAX; m++)
                if (strcmp(s, mode_names[m]) == 0) {
                        *ret = m;
                        return 0;
                }
        return -EINVAL;
}

/* The next field of a line: blanks before it skipped, NUL-ended in place,
 * *p moved past the blank or newline that ended it. */
static char *next_field(char **p)
{
        char *s = *p + strspn(*p, " \t"), *e = s + strcspn(s, " \t\n");

        *p = *e ? e + 1 : e;
        *e = 0;
        return s;
}

/* One line: "1 AT MODE TOTAL_US REPLAYED USED HIT DROPPED FILES CHANGED
 * NOTE...", HIT in thousandths (-1: unknown). */
static int parse_line(char *line, struct start_entry *e)
{
        char *p = line;
        int hit;

        memset(e, 0, sizeof(*e));
        if (strcmp(next_field(&p), "1") != 0 || parse_u64(next_field(&p), &e->at_unix) < 0 ||
            mode_from_name(next_field(&p), &e->mode) < 0 || parse_u64(next_field(&p), &e->total_us) < 0 ||
            parse_u64(next_field(&p), &e->replayed_bytes) < 0 || parse_u64(next_field(&p), &e->used_bytes) < 0 ||
            parse_int(next_field(&p), &hit) < 0 || hit < -1 || hit > 1000 ||
            parse_u64(next_field(&p), &e->dropped) < 0 || parse_u64(next_field(&p), &e->files) < 0 ||
            parse_u64(next_field(&p), &e->changed) < 0)
                return -EINVAL;
        e->hit = hit < 0 ? -1 : hit / 1000.0;
        line = p + strspn(p, " ");
        line[strcspn(line, "\n")] = 0;
        snprintf(e->note, sizeof(e->note), "%s", line);
        return 0;
}

int history_load(const char *path, struct history *h, unsigned *ret_bad)
{
        _cleanup_fclose_ FILE *f = NULL;
        char line[1024];
        unsigned bad = 0;
        int fd;

        h->n = h->lines = 0;
        *ret_bad = 0;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return -errno;
        }
        while (fgets(line, sizeof(line), f)) {
                struct start_entry e;
                h->lines++;
                if (parse_line(line, &e) < 0) {
                        bad++;
                        continue;
                }
                if (h->n == HISTORY_MAX) {
                        memmove(h->e, h->e + 1, (HISTORY_MAX - 1) * sizeof(*h->e));
                        h->n--;
                }
                h->e[h->n++] = e;
        }
        *ret_bad = bad;
        return ferror(f) ? -EIO : 0;
}

/* x's line, whatever its note says (one line, cut to fit) */
static void format_line(const struct start_entry *x, char *buf, size_t size)
{
        char note[sizeof(x->note)];

        snprintf(note, sizeof(note), "%s", x->note);
        for (char *p = note; *p; p++)
                if (*p == '\n' || *p == '\r')
                        *p = ' ';
        snprintf(buf, size, "1 %" PRIu64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %ld %" PRIu64 " %" PRIu64 " %" PRIu64
                 " %s\n", x->at_unix, start_mode_name(x->mode), x->total_us, x->replayed_bytes, x->used_bytes,
                 x->hit < 0 ? -1L : (long)(x->hit * 1000 + 0.5), x->dropped, x->files, x->changed, note);
        if (buf[strlen(buf) - 1] != '\n')
                buf[size - 2] = '\n';
}

static int write_lines(FILE *f, void *userdata)
{
        const struct history *h = userdata;
        char line[512];

        for (size_t i = 0; i < h->n; i++) {
                format_line(&h->e[i], line, sizeof(line));
                fputs(line, f);
        }
        return ferror(f) ? -EIO : 0;
}

int history_append(const char *path, struct history *h, const struct start_entry *e)
{
        char line[512];
        size_t len;
        ssize_t k;
        int fd, r;

        if (h->n == HISTORY_MAX) {
                memmove(h->e, h->e + 1, (HISTORY_MAX - 1) * sizeof(*h->e));
                h->n--;
        }
        h->e[h->n++] = *e;
        if (h->lines + 1 >= 2 * HISTORY_MAX) {
                r = write_file_atomic(path, 0644, write_lines, h);
                if (r >= 0)
                        h->lines = h->n;
                return r;
        }
        format_line(e, line, sizeof(line));
        len = strlen(line);
        struct stat st;

        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EINVAL;         /* a FIFO or a device put there */
        }
        k = write(fd, line, len);       /* one write: lines of two writers do not mix */
        r = k < 0 ? -errno : (size_t)k != len ? -EIO : 0;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0)
                h->lines++;
        return r;
}

void start_entry_replayed(struct start_entry *e, const struct start_replayed *r)
{
        e->replayed_bytes = r->bytes;
        if (!r->stopped) {
                e->files = r->files;
                e->changed = r->changed;
        }
}

/* ---- the loop --------------------------------------------------------- */

void loop_options_default(struct loop_options *o)
{
        *o = (struct loop_options){ .trial = 2, .keep_below = 0.97, .retry_after = 16, .baseline_every = 16,
                                    .record_replays = true, .plain_baseline = true };
}

void loop_options_for_boot(struct loop_options *o)
{
        loop_options_default(o);
}

void loop_options_for_run(struct loop_options *o)
{
        loop_options_default(o);
        o->record_replays = false;
        o->plain_baseline = true;
        o->retry_after = 64;    /* a command runs far more often than a machine boots */
        /* a run's time varies more than a boot's (measured: +-10% for a cold
         * git status): more of them, and a clearer gain, before replay stays */
        o->trial = 3;
        o->keep_below = 0.95;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

double history_median_s(uint64_t *v, size_t n)
{
        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), cmp_u64);
        return (n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2) / 1e6;
}

/* how a decision to record anew begins */
#define STALE_WHY "the read set is stale "

static bool replayed(uint32_t m) { return m == START_REPLAY || m == START_REPLAY_RECORD; }
static bool measured_plain(uint32_t m) { return m == START_PLAIN || m == START_OFF; }

/* The median of the last 8 measured starts without replay, in seconds
 * (0: none): plain ones where o says so and there are some, else
 * recorded ones too.  *ret_plain: how many plain ones there are. */
static double baseline(const struct loop_options *o, const struct history *h, size_t *ret_plain)
{
        uint64_t v[8];
        size_t n = 0, plain = 0;

        for (size_t i = 0; i < h->n; i++)
                plain += measured_plain(h->e[i].mode) && h->e[i].total_us;
        *ret_plain = plain;
        for (int pass = o->plain_baseline && plain ? 0 : 1; pass < 2 && n == 0; pass++)
                for (size_t i = h->n; i-- > 0 && n < 8;) {
                        const struct start_entry *e = &h->e[i];
                        if (e->total_us && (measured_plain(e->mode) || (pass == 1 && e->mode == START_RECORD)))
                                v[n++] = e->total_us;
                }
        return history_median_s(v, n);
}

void loop_decide(const struct loop_options *o, const struct history *h, bool have_plan, const char *stale,
                 struct loop_decision *d)
{
        uint32_t with_replay = o->record_replays ? START_REPLAY_RECORD : START_REPLAY;
        size_t off = 0, since_base = 0, plain = 0, base_trial = 0;
        uint64_t v[8];
        size_t n = 0;
        char changed[64];

        *d = (struct loop_decision){ .mode = START_RECORD };
        if (!have_plan) {
                snprintf(d->why, sizeof(d->why), "no read set yet: this start records one");
                return;
        }
        /* (not again right after a start that recorded anew for it: files
         * that change at every start, logs, must not keep it recording) */
        if (!stale && h->n && replayed(h->e[h->n - 1].mode) && h->e[h->n - 1].files &&
            h->e[h->n - 1].changed * 10 >= h->e[h->n - 1].files &&
            strncmp(h->e[h->n - 1].note, STALE_WHY, strlen(STALE_WHY)) != 0) {
                snprintf(changed, sizeof(changed), "%" PRIu64 " of its %" PRIu64 " files changed",
                         h->e[h->n - 1].changed, h->e[h->n - 1].files);
                stale = changed;
        }
        if (stale) {
                d->mode = START_REPLAY_RECORD;
                snprintf(d->why, sizeof(d->why), STALE_WHY "(%s): replayed where it still holds, "
                         "and recorded anew", stale);
                return;
        }
        d->baseline_s = baseline(o, h, &plain);
        /* off: the starts since the one that turned it off */
        while (off < h->n && h->e[h->n - 1 - off].mode == START_OFF)
                off++;
        if (off > 0 && off < o->retry_after) {
                d->mode = START_OFF;
                d->off = true;
                snprintf(d->why, sizeof(d->why), "off since %zu starts (tries again after %u): %s", off,
                         o->retry_after, h->e[h->n - off].note[0] ? h->e[h->n - off].note : "replay did not help");
                return;
        }
        if (off >= o->retry_after) {
                d->mode = with_replay;
                snprintf(d->why, sizeof(d->why), "trying replay again after %zu starts off", off);
                return;
        }
        /* on: the replays since it was last off, and the starts without
         * replay between them (the trial's baselines: plain ones, or where
         * recording costs little, recorded ones too) */
        for (size_t i = h->n; i-- > 0 && h->e[i].mode != START_OFF;) {
                const struct start_entry *e = &h->e[i];
                if (replayed(e->mode) && e->total_us && n < 8)
                        v[n++] = e->total_us;
                if (e->total_us && (e->mode == START_PLAIN || (!o->plain_baseline && e->mode == START_RECORD)))
                        base_trial++;
        }
        for (size_t i = h->n; i-- > 0 && replayed(h->e[i].mode);)
                since_base++;
        if (d->baseline_s <= 0) {
                d->mode = START_RECORD;
                snprintf(d->why, sizeof(d->why), "no start without replay measured yet: this one is (and records)");
                return;
        }
        if (base_trial < o->trial && base_trial < n + (o->plain_baseline ? 0 : 1)) {
                /* as many starts without replay as with it, between them: one
                 * start measured alone is too few to judge by */
                d->mode = o->plain_baseline ? START_PLAIN : START_RECORD;
                snprintf(d->why, sizeof(d->why), "a start without replay, to measure what replay saves");
                return;
        }
        if (n >= o->trial) {
                d->replay_s = history_median_s(v, MIN(n, (size_t)o->trial + 1));
                if (d->replay_s >= o->keep_below * d->baseline_s) {
                        d->mode = START_OFF;
                        d->off = true;
                        snprintf(d->why, sizeof(d->why),
                                 "turned off: replay did not help (median %.3f s with it, %.3f s without)",
                                 d->replay_s, d->baseline_s);
                        return;
                }
        }
        if (since_base + 1 >= o->baseline_every) {
                d->mode = o->plain_baseline ? START_PLAIN : START_RECORD;
                snprintf(d->why, sizeof(d->why), "one start in %u without replay, to measure what replay saves",
                         o->baseline_every);
                return;
        }
        d->mode = with_replay;
        if (d->replay_s > 0)
                snprintf(d->why, sizeof(d->why), "on: median %.3f s with replay, %.3f s without", d->replay_s,
                         d->baseline_s);
        else
                snprintf(d->why, sizeof(d->why), "on: trying replay (%zu of %u starts before judging)", n + 1,
                         o->trial);
}
