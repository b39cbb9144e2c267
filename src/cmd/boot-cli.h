/* SPDX-License-Identifier: MIT */
/* What readset boot's verbs (boot.c) and its session (boot-session.c)
 * share: the arguments and the state directory's files. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "boot/history.h"

#define BOOT_STATE_DIR "/var/lib/readset/boot"
/* recording goes on this long after the boot finished (what the last
 * units started still read) */
#define BOOT_SETTLE_MS 2000
/* recorded boots the plan is made from */
#define BOOT_KEEP 3

struct boot_args {
        const char *state, *why, *under;
        bool json, from_stdin;
        unsigned last;
        uint64_t settle_ms;
};

struct state_paths {
        char dir[PATH_MAX], enabled[PATH_MAX], history[PATH_MAX], plan[PATH_MAX], stale[PATH_MAX],
             lock[PATH_MAX], boot[BOOT_KEEP][PATH_MAX];
};

void state_paths(const char *dir, struct state_paths *p);
bool state_file_exists(const char *path);
/* 0, or said (CMD_FAILED) when dir is not root's alone */
int state_check(const char *dir);
/* The stale mark's reason (in buf), or NULL when not stale. */
const char *stale_reason(const struct state_paths *p, char *buf, size_t size);
int write_file_atomic_text(const char *path, const char *text);
/* The closed loop's settings at boot. */
void loop_for_boot(struct loop_options *o);

int boot_session(const struct boot_args *a);
