/* SPDX-License-Identifier: MIT */
/* Opening a file a read set names, only if it is still the file recorded:
 * for replay (read-only), for reading extents, for the coming layout
 * (read-write).  Never a FIFO, device, socket or symlink in its place,
 * never blocking, never a controlling terminal, no access time changed. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "model/readset.h"

/* Why a recorded file was not opened. */
enum fs_skip {
        FS_SKIP_NONE = 0,
        FS_SKIP_MISSING,       /* no longer there (ENOENT, ENOTDIR) */
        FS_SKIP_NOT_REGULAR,   /* a symlink, FIFO, device, socket or directory now */
        FS_SKIP_CHANGED,       /* identity (device, inode, size, mtime) differs */
        FS_SKIP_ERROR,         /* could not be looked at or opened (the errno returned) */
        _FS_SKIP_MAX,
};

/* A short name of a reason ("missing", "changed", ...). */
const char *fs_skip_name(enum fs_skip why);

/* Does st (of a path or a descriptor) describe the file f recorded?  A
 * block device by its device number; a regular file by device, inode and,
 * where recorded, size and mtime. */
bool fs_identity_matches(const struct rs_file *f, const struct stat *st);

/* Open f's path with access mode O_RDONLY or O_RDWR (a regular file only)
 * only if it is still the file recorded: lstat first (a FIFO, device node or symlink there is never
 * opened), then open with O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_NOATIME
 * (O_NOATIME where the caller may: the owner or root), then fstat: what was
 * opened must be the very inode checked, or it is closed unused.  Returns
 * the descriptor (O_CLOEXEC), or -errno with *ret_why saying why (-ESTALE
 * for a changed file, -EINVAL for one that is no longer regular). */
int fs_open_recorded(const struct rs_file *f, int mode, enum fs_skip *ret_why);
