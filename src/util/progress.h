/* SPDX-License-Identifier: MIT */
/* How far a long operation is, as a module tells it to the command that
 * shows it (cmd/progress.h draws the line; modules never print): a
 * function and its cookie in the module's options, called as the work goes
 * (as often as it likes: the command draws a few times a second). */
#pragma once

#include <stdint.h>

enum progress_unit {
        PROGRESS_BYTES,
        PROGRESS_FILES,
        PROGRESS_US,              /* time: the step lasts a planned time */
};

struct progress_report {
        const char *step;         /* what is being done now ("writing a scratch file"); NULL: the whole */
        enum progress_unit unit;
        uint64_t done;
        uint64_t total;           /* 0: not known */
        uint64_t files, files_total;    /* besides bytes: files dealt with, of files_total (0: not said) */
};

typedef void progress_fn(void *userdata, const struct progress_report *r);
