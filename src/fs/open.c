/* SPDX-License-Identifier: MIT */
#include "fs/open.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

const char *fs_skip_name(enum fs_skip why)
{
        static const char *const names[_FS_SKIP_MAX] = {
                [FS_SKIP_NONE] = "opened",
                [FS_SKIP_MISSING] = "missing",
                [FS_SKIP_NOT_REGULAR] = "not a regular file",
                [FS_SKIP_CHANGED] = "changed",
                [FS_SKIP_ERROR] = "unreadable",
        };
        return why < _FS_SKIP_MAX ? names[why] : "unknown";
}

bool fs_identity_matches(const struct rs_file *f, const struct stat *s)
{
        if (f->kind == RS_FILE_BLOCKDEV)
                return S_ISBLK(s->st_mode) && s->st_rdev == f->dev;
        return S_ISREG(s->st_mode) && s->st_dev == f->dev && s->st_ino == f->ino &&
               (!f->size || (uint64_t)s->st_size == f->size) &&
               (!f->mtime_ns || (int64_t)s->st_mtim.tv_sec * 1000000000LL + s->st_mtim.tv_nsec == f->mtime_ns);
}

static int skip(enum fs_skip why, int err, enum fs_skip *ret_why)
{
        *ret_why = why;
        return err;
}

int fs_open_recorded(const struct rs_file *f, int mode, enum fs_skip *ret_why)
{
        int flags = mode | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        struct stat s, s2;
        int fd;

        /* a block device is read for its metadata ranges, never written */
        if ((mode != O_RDONLY && mode != O_RDWR) || (mode == O_RDWR && f->kind == RS_FILE_BLOCKDEV))
                return skip(FS_SKIP_ERROR, -EINVAL, ret_why);
        if (f->kind != RS_FILE_REGULAR && f->kind != RS_FILE_BLOCKDEV)
                return skip(FS_SKIP_NOT_REGULAR, -EINVAL, ret_why);
        if (fstatat(AT_FDCWD, f->path, &s, AT_SYMLINK_NOFOLLOW) < 0)
                return skip(errno == ENOENT || errno == ENOTDIR ? FS_SKIP_MISSING : FS_SKIP_ERROR, -errno, ret_why);
        if (f->kind == RS_FILE_BLOCKDEV ? !S_ISBLK(s.st_mode) : !S_ISREG(s.st_mode))
                return skip(FS_SKIP_NOT_REGULAR, -EINVAL, ret_why);
        if (!fs_identity_matches(f, &s))
                return skip(FS_SKIP_CHANGED, -ESTALE, ret_why);
        /* O_NOATIME: only the owner (or a capable caller) may; EPERM otherwise */
        fd = open(f->path, flags | O_NOATIME);
        if (fd < 0 && errno == EPERM)
                fd = open(f->path, flags);
        if (fd < 0)
                return skip(errno == ENOENT || errno == ENOTDIR ? FS_SKIP_MISSING :
                            errno == ELOOP ? FS_SKIP_NOT_REGULAR : FS_SKIP_ERROR, -errno, ret_why);
        /* only a file swapped in between the two checks gets here unchecked */
        if (fstat(fd, &s2) < 0 || s2.st_dev != s.st_dev || s2.st_ino != s.st_ino || !fs_identity_matches(f, &s2)) {
                close(fd);
                return skip(FS_SKIP_CHANGED, -ESTALE, ret_why);
        }
        *ret_why = FS_SKIP_NONE;
        return fd;
}
