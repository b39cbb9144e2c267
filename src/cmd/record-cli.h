/* SPDX-License-Identifier: MIT */
/* What record and run (--stats, --auto) share about recording a command:
 * its messages, and running it when it cannot be recorded. */
#pragma once

#include <stdbool.h>

#include "model/readset.h"
#include "record/recorder.h"
#include "util/child.h"

/* "CMD.readset", after the command's base name; NULL: out of memory. */
char *record_default_output(char *const *cmd);
/* Run the command in readset's place, unrecorded; returns only when that
 * fails (127 or 126, said). */
int record_exec_unrecorded(char *const *cmd);
/* Wait for a command already started, unrecorded: its exit status. */
int record_wait_unrecorded(struct child *c, char *const *cmd);
/* Why the recorder could not be set up (recorder_open's what and error):
 * an error, or a warning where the command runs all the same. */
void say_recorder_setup_failed(int r, const char *what, bool warn);
/* What a recording lacks: after the set-up (setup: lookups not traced), or
 * after the end (events that stopped being read). */
void say_recorder_warnings(const struct recorder_status *st, bool setup);
/* The read set's description: the command line and how it was recorded. */
int record_describe(struct readset *rs, char *const *cmd, bool cold);
/* The summary of a recording written to output: text on stderr, or (json)
 * one JSON object, the last line of stderr (stdout is the command's); and
 * with READSET_DEBUG the recorder's own costs. */
void say_recorded(const struct readset *rs, const struct recorder_status *st, const char *output, bool quiet,
                  bool json);
