/* SPDX-License-Identifier: MIT */
/* Signal handlers set for a list of signals in one place. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* sa for each of sigs[n]; with unless_ignored, a signal the process was
 * started ignoring stays ignored.  sa's mask is emptied first. */
void signals_install(const int *sigs, size_t n, struct sigaction *sa, bool unless_ignored);

/* sig ignored (SIGIO: a read lease broken while it is checked). */
void signals_ignore(int sig);

/* A stop asked by a signal: SIGINT, SIGTERM and SIGHUP set *flag, once (a
 * second one acts as by default: ends the process). */
void signals_stop_on(volatile sig_atomic_t *flag);
