/* SPDX-License-Identifier: MIT */
/* The boot's state directory: its files (enabled, history, the plan, the
 * stale mark, the lock, the last BOOT_KEEP recordings), who may own it,
 * and the boots' rotation that makes the next plan. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "boot/history.h"
#include "model/readset.h"

#define BOOT_STATE_DIR "/var/lib/readset/boot"
/* recorded boots the plan is made from */
#define BOOT_KEEP 3

struct boot_state {
        char dir[PATH_MAX], enabled[PATH_MAX], history[PATH_MAX], plan[PATH_MAX], stale[PATH_MAX],
             lock[PATH_MAX], boot[BOOT_KEEP][PATH_MAX];
};

void boot_state_paths(const char *dir, struct boot_state *p);
/* path is a regular file (no link followed) */
bool boot_state_has(const char *path);
/* dir and its parent (/var/lib/readset), 0755.  0 or -errno. */
int boot_state_make_dir(const char *dir);
/* dir is root's alone (a directory others can write would let them choose
 * what root reads at boot): 0, -EPERM with why, or -errno. */
int boot_state_check(const char *dir, char *why, size_t size);
/* The stale mark's first line (in buf; "marked stale" when empty), or
 * NULL when not stale. */
const char *boot_state_stale(const struct boot_state *p, char *buf, size_t size);
/* The enabled file, made unless there: 0 or -errno. */
int boot_state_enable(const struct boot_state *p);
/* The stale mark, why in it (NULL: "marked stale"): 0 or -errno. */
int boot_state_mark_stale(const struct boot_state *p, const char *why);
/* What readset made in the directory removed by name (anything else
 * stays), then the directory.  failed(path, -errno) for each file that
 * would not go; 0 or the last such -errno; *ret_dir_err: the directory's
 * rmdir (0, or -errno but -ENOENT). */
int boot_state_remove(const struct boot_state *p, void (*failed)(void *userdata, const char *path, int err),
                      void *userdata, int *ret_dir_err);
/* The lock held by one session at a time: the descriptor, or -errno
 * (-EWOULDBLOCK: another session holds it). */
int boot_state_lock(const struct boot_state *p);
/* Keep rs as the newest boot (boot.0, the others moved down; all of them
 * dropped first when stale) and make the plan from what is kept.
 * left_out(path, why) for a kept boot that does not read; *ret_merged:
 * the boots the plan was made from.  0 or -errno. */
int boot_state_keep(const struct boot_state *p, const struct readset *rs, bool stale,
                    void (*left_out)(void *userdata, const char *path, const char *why), void *userdata,
                    size_t *ret_merged);

/* What `boot status` shows: whether it is on, the plan, the stale mark,
 * the history and what the next boot does. */
struct boot_status {
        bool enabled, have_plan;  /* have_plan: one that reads */
        const char *stale;        /* the stale mark's reason (stale_buf), or NULL */
        char stale_buf[512];
        struct readset_totals t;  /* the plan's */
        struct history h;
        unsigned bad;             /* the history's lines that did not parse */
        struct loop_decision d;   /* the next boot */
};
/* 0, or the history's -errno. */
int boot_state_status(const struct boot_state *p, struct boot_status *ret);
