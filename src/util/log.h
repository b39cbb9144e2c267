/* SPDX-License-Identifier: MIT */
/* Messages to the user, for the commands (src/cmd/, main.c) only: modules
 * return reasons, commands say them once.  "readset: error: ..." on
 * standard error, lowercase, no full stop, user input in quotes. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

/* What a verb returns to main() when it does not return an exit status
 * (0..255: record and run pass on their command's).  Outside -errno's range
 * (-4095..-1), so that a -errno a verb lets through by mistake is caught by
 * main() as the bug it is, never taken for "usage". */
#define CMD_FAILED (-10001)     /* exit 1: the message was said */
#define CMD_USAGE (-10002)      /* exit 2: a usage error, said with "see --help" */

#define _log_printf_(a, b) __attribute__((format(printf, a, b)))

void log_info(const char *fmt, ...) _log_printf_(1, 2);
/* -q/--quiet: info lines unsaid from then on, in this process (warnings and
 * errors are still said) */
void log_set_quiet(bool quiet);
bool log_quiet(void);
void log_warning(const char *fmt, ...) _log_printf_(1, 2);
void log_warning_errno(int err, const char *fmt, ...) _log_printf_(2, 3);
int log_error(const char *fmt, ...) _log_printf_(1, 2);             /* returns CMD_FAILED */
int log_errno(int err, const char *fmt, ...) _log_printf_(2, 3);     /* err < 0; returns CMD_FAILED */
/* "readset VERB: ..." then "see 'readset VERB --help'" (verb NULL: of
 * readset itself); returns CMD_USAGE */
int log_usage(const char *verb, const char *fmt, ...) _log_printf_(2, 3);

/* Debugging output of a library readset uses (libbpf's, the BPF verifier's
 * log), with READSET_DEBUG=1 only: the one thing a module may hand here. */
int log_debugv(const char *fmt, va_list ap);
