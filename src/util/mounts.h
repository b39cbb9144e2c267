/* SPDX-License-Identifier: MIT */
/* The mount table, from /proc/self/mountinfo. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

struct mount_ent {
        uint64_t dev;     /* st_dev of files on it */
        char *mnt;        /* mount point, unescaped */
        char *fstype;
        char *root;       /* the mounted directory of the filesystem */
        char *source;     /* what was mounted ("/dev/loop0", "tmpfs", ...) */
        char *super;      /* the super block's options ("rw,data=journal", ...; "" none) */
};

struct mounts {
        struct mount_ent *m;
        size_t n;
};

/* One line of mountinfo (changed in place): 1 and *ret filled, 0 for a
 * line that is not one, -ENOMEM. */
int mounts_parse_line(char *line, struct mount_ent *ret);
/* Free what mounts_parse_line() filled in. */
void mount_ent_free(struct mount_ent *m);
/* Is want one of the comma-separated options opts (may be NULL)? */
bool mounts_has_option(const char *opts, const char *want);
/* mountinfo's octal escapes (\040 for a space...) undone, in place. */
void mounts_unescape(char *s);

/* Is a filesystem of this statfs f_type (and device, for tmpfs, which
 * devtmpfs shares) a pseudo filesystem, whose files are not data on a
 * device: proc, sysfs, tracefs, debugfs, devtmpfs, cgroup, bpf, ... */
bool mounts_is_pseudo(long f_type, dev_t dev);

/* A descriptor of the table that polls POLLPRI when a mount comes or goes
 * (-errno). */
int mounts_watch_open(void);
/* Read the table (in mount order); mounts_free() in any case. */
int mounts_read(struct mounts *ret);
void mounts_free(struct mounts *mt);
/* The mount holding path (len bytes, absolute, no trailing slash): the
 * last-mounted of those whose point is the longest prefix of it; NULL. */
const struct mount_ent *mounts_holding(const struct mounts *mt, const char *path, size_t len);

/* The paths of the active swap areas, from /proc/swaps (unescaped; files
 * and devices): *ret, *ret_n; none where it cannot be read.  -ENOMEM. */
int mounts_read_swaps(char ***ret, size_t *ret_n);
void mounts_swaps_free(char **v, size_t n);
/* One line of /proc/swaps (changed in place): its path, or NULL (the
 * heading, a line that is not one). */
char *mounts_parse_swap_line(char *line);
