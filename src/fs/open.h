/* SPDX-License-Identifier: MIT */
/* Opening a file a read set names, only if it is still the file recorded:
 * for replay (read-only), for reading extents, for the coming layout
 * (read-write).  Never a FIFO, device, socket or symlink in its place,
 * never blocking, never a controlling terminal, no access time changed. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "model/readset.h"

/* Why a recorded file was not opened. */
enum fs_skip {
        FS_SKIP_NONE = 0,
        FS_SKIP_MISSING,       /* no longer there (ENOENT, ENOTDIR) */
        FS_SKIP_NOT_REGULAR,   /* a symlink, FIFO, device, socket or directory now */
        FS_SKIP_CHANGED,       /* identity (device, inode, size, mtime) differs */
        FS_SKIP_ERROR,         /* could not be looked at or opened (the errno returned) */
        FS_SKIP_PSEUDO,        /* on a pseudo filesystem (proc, sysfs, tracefs, devtmpfs...) */
        FS_SKIP_UNKNOWN,       /* recorded without an identity (no size, no mtime): not a pass */
        FS_SKIP_CONTENT,       /* known by content, whose bytes differ (a portable read set) */
        FS_SKIP_PRIVATE,       /* known by content, and not for the user who asked to read (under sudo) */
        _FS_SKIP_MAX,
};

/* A short name of a reason ("missing", "changed", ...). */
const char *fs_skip_name(enum fs_skip why);

/* Does st (of a path or a descriptor) describe the file f recorded?  A
 * block device by its device number; a regular file by device, inode and,
 * where recorded, size and mtime. */
bool fs_identity_matches(const struct rs_file *f, const struct stat *st);

/* Open f's path with access mode O_RDONLY or O_RDWR (a regular file only)
 * only if it is still the file recorded.  The name is first opened O_PATH
 * without following a symlink (nothing is opened for I/O yet): what it
 * names must be of the recorded kind, with the recorded identity (a file
 * recorded without size and mtime has none, and is skipped), on a real
 * filesystem; then that very inode is reopened through /proc/self/fd with
 * O_NONBLOCK | O_NOCTTY | O_NOATIME (O_NOATIME where the caller may: the
 * owner or root).  A FIFO, device node, socket, symlink or pseudo-file at
 * the name is never opened.  Without /proc, nothing is (-ENOENT: a second
 * lookup could open what was swapped in meanwhile).  Returns the descriptor
 * (O_CLOEXEC), or -errno with *ret_why saying why (-ESTALE for a changed
 * file, -EINVAL for one that is no longer regular, -EPERM for one refused).
 * A file known by content (RS_FILE_BY_CONTENT) is checked by path, size,
 * mtime and the digest of its recorded ranges, read for that through the
 * page cache (so that the replay after finds them there): one whose bytes
 * differ is changed.  FS_OPEN_IDENTITY_ONLY in mode leaves the digest
 * out (for what reads no data: extent maps). */
#define FS_OPEN_IDENTITY_ONLY (1 << 30)
/* FS_OPEN_CONTENT_LATER: the digest is left to the caller, who reads the
 * ranges first and checks them after with fs_content_matches() (a file is
 * still refused where the user who asked could not read it). */
#define FS_OPEN_CONTENT_LATER (1 << 29)
int fs_open_recorded(const struct rs_file *f, int mode, enum fs_skip *ret_why);
/* Are the bytes of f's recorded ranges in fd those its digest says?  1 yes,
 * 0 no (or shorter now), -errno.  Read through the page cache, no more than
 * the ranges. */
int fs_content_matches(int fd, const struct rs_file *f);
