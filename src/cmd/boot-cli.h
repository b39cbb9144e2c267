/* SPDX-License-Identifier: MIT */
/* What readset boot's verbs (boot.c) and its session's wiring
 * (boot-session.c) share: the arguments. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "boot/history.h"

struct replay_result;

struct boot_args {
        const char *state, *why, *under;
        bool json, from_stdin;
        unsigned last;
        uint64_t settle_ms;
};

/* boot start: the session (boot/session.h) with the system's environment
 * and the replay's wiring, what it says printed.  0: the boot goes on
 * whatever failed. */
int boot_start(const struct boot_args *a);
/* What boot_state_check() refused, said: CMD_FAILED. */
int boot_say_refused(const char *dir, int err, const char *why);
