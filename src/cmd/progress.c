/* SPDX-License-Identifier: MIT */
#include "cmd/progress.h"

#include <inttypes.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

static uint64_t real_clock(void *userdata)
{
        (void)userdata;
        return now_us();
}

void progress_start_on(struct progress *p, const char *what, FILE *out, unsigned width,
                       uint64_t (*clock)(void *userdata), void *clock_userdata)
{
        *p = (struct progress){ .on = out != NULL, .out = out, .fd = -1, .width = width ? width : 80, .what = what,
                                .clock = clock ? clock : real_clock, .clock_userdata = clock_userdata };
}

void progress_start(struct progress *p, const char *what, bool quiet)
{
        bool tty = !quiet && !log_quiet() && isatty(STDERR_FILENO);

        progress_start_on(p, what, tty ? stderr : NULL, 80, NULL, NULL);
        p->fd = tty ? STDERR_FILENO : -1;
}

/* "18 s", "2:05", "1:02:05"; fine: "4.2 s" under 10 s (a probe's steps).
 * Cut down, or up (what is left). */
static void put_duration(char *buf, size_t size, uint64_t us, bool fine, bool up)
{
        uint64_t s = (us + (up ? 999999 : 0)) / 1000000;

        if (fine && us < 10000000)
                snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " s", (us + (up ? 99999 : 0)) / 1000000,
                         (us + (up ? 99999 : 0)) / 100000 % 10);
        else if (s < 60)
                snprintf(buf, size, "%" PRIu64 " s", s);
        else if (s < 3600)
                snprintf(buf, size, "%" PRIu64 ":%02" PRIu64, s / 60, s % 60);
        else
                snprintf(buf, size, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64, s / 3600, s / 60 % 60, s % 60);
}

/* One measure of the unit: "1.2 GiB", "120", "4.0 s" */
static const char *put_amount(char buf[static 32], enum progress_unit unit, uint64_t v)
{
        if (unit == PROGRESS_BYTES)
                return format_bytes(v, buf);
        if (unit == PROGRESS_US)
                put_duration(buf, 32, v, true, false);
        else
                snprintf(buf, 32, "%" PRIu64, v);
        return buf;
}

size_t progress_format(char *buf, size_t size, unsigned width, const char *what, const struct progress_report *r,
                       uint64_t elapsed_us, uint64_t step_done)
{
        char a[32], b[32], rate[48] = "", left[48] = "", files[48] = "", amount[80];
        uint64_t done = r->total && r->done > r->total ? r->total : r->done;
        double per_s = 0;
        size_t n, max;

        if (size == 0)
                return 0;
        /* the rate of the step so far, once it has run a second */
        if (r->unit != PROGRESS_US && elapsed_us >= 1000000 && done > step_done)
                per_s = (double)(done - step_done) * 1e6 / (double)elapsed_us;
        if (per_s > 0 && r->unit == PROGRESS_BYTES)
                snprintf(rate, sizeof(rate), ", %s/s", format_bytes((uint64_t)per_s, a));
        else if (per_s > 0)
                snprintf(rate, sizeof(rate), ", %.0f files/s", per_s);
        if (r->total && r->unit == PROGRESS_US) {
                put_duration(b, sizeof(b), r->total - done, true, true);
                snprintf(left, sizeof(left), ", %s left", b);
        } else if (r->total && per_s > 0) {
                /* (a crawl's estimate held under 100 days: the cast of a
                 * larger double is undefined) */
                double us = (double)(r->total - done) / per_s * 1e6;
                put_duration(b, sizeof(b), us < 8.64e12 ? (uint64_t)us : (uint64_t)8.64e12, false, true);
                snprintf(left, sizeof(left), ", %s left", b);
        }
        if (r->files_total && r->unit != PROGRESS_FILES)
                snprintf(files, sizeof(files), "%" PRIu64 "/%" PRIu64 " files, ", r->files, r->files_total);
        put_amount(a, r->unit, done);
        if (r->total)
                snprintf(amount, sizeof(amount), "%s of %s%s (%" PRIu64 "%%)", a, put_amount(b, r->unit, r->total),
                         r->unit == PROGRESS_FILES ? " files" : "", done * 100 / r->total);
        else
                snprintf(amount, sizeof(amount), "%s%s", a, r->unit == PROGRESS_FILES ? " files" : "");
        /* never as wide as the terminal (it would wrap, and \r then
         * redraws only the last of the lines): narrower by what matters
         * least, the rate, then the step, then cut */
        max = width > 1 ? width - 1 : 0;
        for (int drop = 0; drop < 3; drop++) {
                const char *st = drop < 2 ? r->step : NULL;

                snprintf(buf, size, "%s: %s%s%s%s%s%s", what, st ? st : "", st ? ", " : "", files, amount,
                         drop ? "" : rate, left);
                if (strlen(buf) <= max)
                        break;
        }
        n = strlen(buf);
        if (n > max) {
                n = max;
                while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
                        n--;    /* not inside a character */
                buf[n] = 0;
        }
        return n;
}

static unsigned columns(const struct progress *p)
{
        struct winsize ws;

        if (p->fd >= 0 && ioctl(p->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
                return ws.ws_col;
        return p->width;
}

static void draw(struct progress *p, const struct progress_report *r, uint64_t now)
{
        char line[512];
        size_t n = progress_format(line, sizeof(line), columns(p), p->what, r, now - p->step_us, p->step_done);

        /* over the last one, its tail blanked */
        fprintf(p->out, "\r%s%*s", line, p->shown > n ? (int)(p->shown - n) : 0, "");
        fflush(p->out);
        p->shown = n;
        p->drawn = true;
        p->last_us = now;
}

static bool same_step(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

void progress_update(struct progress *p, const struct progress_report *r)
{
        uint64_t now;

        if (!p->on)
                return;
        now = p->clock(p->clock_userdata);
        if (!p->drawn || !same_step(p->step, r->step) || p->unit != r->unit) {
                p->step = r->step;
                p->unit = r->unit;
                p->step_us = now;
                p->step_done = r->done;
        } else if (now - p->last_us < PROGRESS_REDRAW_US)
                return;
        draw(p, r, now);
}

void progress_report_to(void *userdata, const struct progress_report *r)
{
        progress_update(userdata, r);
}

void progress_done(struct progress *p)
{
        if (!p->on || !p->drawn)
                return;
        fprintf(p->out, "\r%*s\r", (int)p->shown, "");
        fflush(p->out);
        p->drawn = false;
        p->shown = 0;
}
