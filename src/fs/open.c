/* SPDX-License-Identifier: MIT */
#include "fs/open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "util/mounts.h"
#include "util/trust.h"
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
                [FS_SKIP_PSEUDO] = "on a pseudo filesystem",
                [FS_SKIP_UNKNOWN] = "recorded without identity",
                [FS_SKIP_CONTENT] = "content differs",
                [FS_SKIP_PRIVATE] = "not readable by the user who asked",
        };
        return why < _FS_SKIP_MAX ? names[why] : "unknown";
}

bool fs_identity_matches(const struct rs_file *f, const struct stat *s)
{
        if (f->kind == RS_FILE_BLOCKDEV)
                return S_ISBLK(s->st_mode) && s->st_rdev == f->dev;
        /* known by content (a portable read set): device and inode are
         * another copy's; the mtime is kept to the second (squashfs's) */
        if (f->flags & RS_FILE_BY_CONTENT)
                return S_ISREG(s->st_mode) && (uint64_t)s->st_size == f->size &&
                       (int64_t)s->st_mtim.tv_sec * 1000000000LL == f->mtime_ns;
        return S_ISREG(s->st_mode) && s->st_dev == f->dev && s->st_ino == f->ino &&
               (!f->size || (uint64_t)s->st_size == f->size) &&
               (!f->mtime_ns || (int64_t)s->st_mtim.tv_sec * 1000000000LL + s->st_mtim.tv_nsec == f->mtime_ns);
}

static int skip(enum fs_skip why, int err, enum fs_skip *ret_why)
{
        *ret_why = why;
        return err;
}

static enum fs_skip why_of(int err)
{
        return err == ENOENT || err == ENOTDIR ? FS_SKIP_MISSING : err == ELOOP ? FS_SKIP_NOT_REGULAR : FS_SKIP_ERROR;
}

/* A portable read set's path, joined to the root it is replayed against:
 * through no symlink at all (a recorded path is the one the kernel gave,
 * without any), so that one in the tree cannot lead out of the root. */
static int open_below(const char *path)
{
        struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

        return fd < 0 ? -1 : (int)fd;
}

static bool readable_by_invoker(const struct stat *s)
{
        uid_t u = trust_invoking_uid();

        return geteuid() != 0 || u == 0 || u == (uid_t)-1 || (s->st_mode & S_IROTH) ||
               (s->st_uid == u && (s->st_mode & S_IRUSR));
}

int fs_content_matches(int fd, const struct rs_file *f)
{
        struct content_sum sum;
        int r;

        /* the ranges and no more: the page cache's readahead would read
         * what the start does not (on squashfs, whole blocks more: on the
         * emulated USB stick, 40 MB read instead of 35, 1.98 s instead of
         * 1.74 for a start there) */
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        r = checksum_ranges(fd, f, &sum);

        if (r == -ESTALE)
                return 0;
        if (r < 0)
                return r;
        return memcmp(sum.d, f->content, sizeof(f->content)) == 0;
}

int fs_open_recorded(const struct rs_file *f, int mode, enum fs_skip *ret_why)
{
        _cleanup_close_ int pfd = -1;
        bool content = !(mode & FS_OPEN_IDENTITY_ONLY), later = mode & FS_OPEN_CONTENT_LATER;
        struct statfs sfs;
        struct stat s;
        int fd;

        mode &= ~(FS_OPEN_IDENTITY_ONLY | FS_OPEN_CONTENT_LATER);
        /* a block device is read for its metadata ranges, never written */
        if ((mode != O_RDONLY && mode != O_RDWR) || (mode == O_RDWR && f->kind == RS_FILE_BLOCKDEV))
                return skip(FS_SKIP_ERROR, -EINVAL, ret_why);
        if (f->kind != RS_FILE_REGULAR && f->kind != RS_FILE_BLOCKDEV)
                return skip(FS_SKIP_NOT_REGULAR, -EINVAL, ret_why);
        /* size and mtime unknown: nothing says it is still the file (a
         * pseudo-file recorded as 0, 0 passes every other check) */
        if (f->kind == RS_FILE_REGULAR && !f->size && !f->mtime_ns)
                return skip(FS_SKIP_UNKNOWN, -EPERM, ret_why);
        pfd = (f->flags & RS_FILE_BY_CONTENT) ? open_below(f->path) : open(f->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
                return skip(why_of(errno), -errno, ret_why);
        if (fstat(pfd, &s) < 0)
                return skip(FS_SKIP_ERROR, -errno, ret_why);
        if (f->kind == RS_FILE_BLOCKDEV ? !S_ISBLK(s.st_mode) : !S_ISREG(s.st_mode))
                return skip(FS_SKIP_NOT_REGULAR, -EINVAL, ret_why);
        /* (a block device node lies on devtmpfs: its identity is its number;
         * a pseudo-file is refused as that, whatever its identity says) */
        if (f->kind == RS_FILE_REGULAR) {
                if (fstatfs(pfd, &sfs) < 0)
                        return skip(FS_SKIP_ERROR, -errno, ret_why);
                if (mounts_is_pseudo((long)sfs.f_type, s.st_dev))
                        return skip(FS_SKIP_PSEUDO, -EPERM, ret_why);
        }
        if (!fs_identity_matches(f, &s))
                return skip(FS_SKIP_CHANGED, -ESTALE, ret_why);
        /* a portable read set's digest check would tell, file by file,
         * whether a guess of its content is right: root, asked by a user,
         * checks only what that user could read anyway (theirs, or anyone's) */
        if ((f->flags & RS_FILE_BY_CONTENT) && content && !readable_by_invoker(&s))
                return skip(FS_SKIP_PRIVATE, -EPERM, ret_why);
        /* (through /proc: a second lookup of the name could open what was
         * swapped in meanwhile, a device node's open having its effects
         * before any check) */
        fd = fd_reopen_noatime(pfd, mode | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return skip(why_of(-fd), fd, ret_why);
        if ((f->flags & RS_FILE_BY_CONTENT) && content && !later) {
                int r = fs_content_matches(fd, f);
                if (r <= 0) {
                        close(fd);
                        return r < 0 ? skip(FS_SKIP_ERROR, r, ret_why) : skip(FS_SKIP_CONTENT, -ESTALE, ret_why);
                }
        }
        *ret_why = FS_SKIP_NONE;
        return fd;
}
