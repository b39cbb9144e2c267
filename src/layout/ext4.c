/* SPDX-License-Identifier: MIT */
#include "layout/ext4.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "layout/layout.h"
#include "util/util.h"
#include "util/banned.h"

/* fs/ext4/ext4.h: the ioctl's argument (blocks, not bytes) */
struct ext4_move_extent {
        uint32_t reserved;
        uint32_t donor_fd;
        uint64_t orig_start;
        uint64_t donor_start;
        uint64_t len;
        uint64_t moved_len;
};
#define EXT4_IOC_MOVE_EXT _IOWR('f', 15, struct ext4_move_extent)

#ifndef FS_DAX_FL
#define FS_DAX_FL 0x02000000
#endif
#ifndef FS_VERITY_FL
#define FS_VERITY_FL 0x00100000
#endif

int ext4_flags_refusal(unsigned flags)
{
        /* the checks of the kernel's mext_check_arguments(), in its order */
        if (flags & FS_IMMUTABLE_FL)
                return LAYOUT_SKIP_IMMUTABLE;
        if (flags & FS_APPEND_FL)
                return LAYOUT_SKIP_APPEND_ONLY;
        if (flags & FS_ENCRYPT_FL)
                return LAYOUT_SKIP_ENCRYPTED;
        if (flags & FS_DAX_FL)
                return LAYOUT_SKIP_DAX;
        if (flags & FS_JOURNAL_DATA_FL)
                return LAYOUT_SKIP_JOURNAL_DATA;
        if (flags & FS_VERITY_FL)
                return LAYOUT_SKIP_VERITY;
        if (flags & FS_INLINE_DATA_FL)
                return LAYOUT_SKIP_INLINE;
        if (!(flags & FS_EXTENT_FL))
                return LAYOUT_SKIP_NOT_EXTENTS;
        return 0;
}

int ext4_exchange(int fd, int donor, uint64_t orig, uint64_t at, uint64_t len, uint64_t *ret_moved)
{
        struct ext4_move_extent m = {
                .donor_fd = (uint32_t)donor,
                .orig_start = orig,
                .donor_start = at,
                .len = len,
        };
        int r = ioctl(fd, EXT4_IOC_MOVE_EXT, &m);

        *ret_moved = m.moved_len;
        if (r < 0)
                return errno == ENOTTY ? -EOPNOTSUPP : -errno;
        return 0;
}

int ext4_donor_open(int dirfd, uint64_t bytes, int *ret_fd)
{
        _cleanup_close_ int fd = -1;

        if (bytes > (uint64_t)INT64_MAX)
                return -EFBIG;
        fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (bytes && fallocate(fd, 0, 0, (off_t)bytes) < 0)
                return -errno;
        *ret_fd = fd;
        fd = -1;
        return 0;
}
