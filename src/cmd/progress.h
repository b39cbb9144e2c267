/* SPDX-License-Identifier: MIT */
/* The progress line of a long operation (probe, pack, replay, layout), as
 * fio's and dd status=progress's: on standard error, only when it is a
 * terminal and the user did not ask for quiet, redrawn in place (\r) a few
 * times a second, never wider than the terminal, cleared at the end:
 *
 *     replay: 1.2 GiB of 3.4 GiB (35%), 120.0 MiB/s, 18 s left
 *
 * What the modules tell (util/progress.h) made into that line.  Never
 * used by run: a command it starts owns the terminal. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/progress.h"

#define PROGRESS_REDRAW_US 200000       /* at most five lines a second */

struct progress {
        bool on;                  /* drawing at all */
        FILE *out;
        int fd;                   /* out's terminal, asked for its width (-1: width fixed) */
        unsigned width;           /* columns (when fd < 0, or the terminal does not say) */
        const char *what;         /* the verb: "replay" */
        uint64_t (*clock)(void *userdata);      /* microseconds (tests inject one) */
        void *clock_userdata;
        /* the step now, and where it began (rate and time left are of it) */
        const char *step;
        enum progress_unit unit;
        uint64_t step_us, step_done;
        uint64_t last_us;         /* last drawn */
        bool drawn;               /* a line is on the screen */
        size_t shown;             /* its length */
};

/* On standard error if it is a terminal and !quiet (else nothing at all). */
void progress_start(struct progress *p, const char *what, bool quiet);
/* On out, width columns, with clock: for tests. */
void progress_start_on(struct progress *p, const char *what, FILE *out, unsigned width,
                       uint64_t (*clock)(void *userdata), void *clock_userdata);
/* Where it stands: drawn at once on the first call and when the step
 * changes, else at most every PROGRESS_REDRAW_US. */
void progress_update(struct progress *p, const struct progress_report *r);
/* The line cleared (before anything else is said); again: nothing. */
void progress_done(struct progress *p);
/* A module's callback (util/progress.h) with a struct progress as cookie. */
void progress_report_to(void *userdata, const struct progress_report *r);

/* The line, at most width - 1 characters (the last column left free: a
 * terminal wraps there): "WHAT: STEP, DONE of TOTAL (P%), RATE, T left",
 * the rate and time left from elapsed_us of the step and step_done, what
 * was done when it began.  Its length. */
size_t progress_format(char *buf, size_t size, unsigned width, const char *what, const struct progress_report *r,
                       uint64_t elapsed_us, uint64_t step_done);
