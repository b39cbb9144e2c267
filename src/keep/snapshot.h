/* SPDX-License-Identifier: MIT */
/* A snapshot: what the page cache holds now of the files below some paths,
 * as a read set (RS_REC_SNAPSHOT, docs/FORMAT.md), found without reading a
 * byte of any file: each file is opened (read-only, no access time) and
 * cachestat(2) passes over those with nothing cached, mincore(2) over a
 * mapping gives the pages of the others.  Each path is walked on its own file system; symlinks, FIFOs,
 * devices and sockets are never opened, only counted.  A page's rank (its
 * range's time) says how many snapshots in a row found it cached: with the
 * previous snapshot given, a page cached in both moves one rank up, so that
 * a replay whose memory budget is smaller than the snapshot reads first the
 * pages that stayed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"

/* The rank of a page found cached for the first time; one less per
 * snapshot in a row that found it again, down to 0. */
#define SNAPSHOT_RANK_NEW 15

enum snapshot_skip {
        SNAPSHOT_SKIP_SYMLINK,   /* a symlink: never followed */
        SNAPSHOT_SKIP_SPECIAL,   /* a FIFO, device node or socket: never opened */
        SNAPSHOT_SKIP_MOUNT,     /* another file system mounted below a path */
        SNAPSHOT_SKIP_PSEUDO,    /* a path on proc, sysfs, tracefs ...: no data there */
        SNAPSHOT_SKIP_UNTOLD,    /* the kernel tells only the owner (or root) what is cached */
        SNAPSHOT_SKIP_GONE,      /* removed or replaced while the walk looked at it */
        SNAPSHOT_SKIP_ERROR,     /* could not be looked at (the errno is said) */
        SNAPSHOT_SKIP_DEEP,      /* below SNAPSHOT_MAX_DEPTH directories, or a path too long */
        SNAPSHOT_SKIP_FULL,      /* past what a read set holds (FORMAT_MAX_FILES, _RANGES) */
        _SNAPSHOT_SKIP_MAX,
};

#define SNAPSHOT_MAX_DEPTH 256

/* "symlink", "FIFO, device or socket", ...; the JSON key: "symlink", "special", ... */
const char *snapshot_skip_name(enum snapshot_skip why);
const char *snapshot_skip_key(enum snapshot_skip why);

struct snapshot_options {
        /* the last snapshot of these files (NULL: none): a page cached then
         * and now moves one rank up, in a file still the same (device,
         * inode, size, mtime) */
        const struct readset *previous;
        /* each skip as it happens (NULL: counted only): the path, why, and
         * for SNAPSHOT_SKIP_ERROR the -errno */
        void (*on_skip)(void *userdata, const char *path, enum snapshot_skip why, int err);
        void *userdata;
        /* more files, after the paths (snapshot_cgroup_files()'s): each
         * looked at only if a regular file, no directory walked */
        char *const *files;
        size_t n_files;
        /* the paths are kept resolved (readset keep's): one that resolves
         * elsewhere now (a symlink on its way) is skipped, not followed */
        bool exact_paths;
};

struct snapshot_result {
        uint64_t dirs;                  /* directories walked */
        uint64_t files, bytes;          /* regular files looked at, and their sizes */
        uint64_t files_opened;          /* of them, opened (not empty) to be asked */
        uint64_t files_mapped;          /* of those, with pages cached: asked page by page */
        uint64_t files_uncached;        /* of those, with nothing cached (cachestat) */
        uint64_t files_cached, bytes_cached;  /* with pages in the cache; those pages */
        uint64_t bytes_kept;            /* of them, cached in the previous snapshot too */
        uint64_t skipped[_SNAPSHOT_SKIP_MAX];
        uint64_t cpu_us;                /* user and system time the snapshot took */
        uint64_t wall_us;
};

/* The snapshot of the n paths (files or directories; each made absolute
 * and resolved first, the only symlinks followed: those the caller named).
 * -errno only when nothing could be made (memory; not one path could be
 * looked at: that path's -errno); skips are counted in res. */
int snapshot_take(char *const *paths, size_t n, const struct snapshot_options *o, struct readset **ret,
                  struct snapshot_result *res);

/* The regular files the processes of a cgroup (the directory cgroup, of
 * any hierarchy, and its children) have open or mapped, by path, for a
 * snapshot of a service: a database opens its files lazily, so the paths
 * named come first and these add what it has open now.  Deleted files,
 * pipes and sockets left out; a file may be named twice (the snapshot
 * looks at each once).  -errno when cgroup.procs cannot be read. */
int snapshot_cgroup_files(const char *cgroup, char ***ret, size_t *ret_n);
void snapshot_paths_free(char **paths, size_t n);

