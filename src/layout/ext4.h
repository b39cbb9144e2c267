/* SPDX-License-Identifier: MIT */
/* What ext4 offers a layout: the atomic extent exchange (EXT4_IOC_MOVE_EXT),
 * a donor of free blocks to exchange with, and the inode flags that make the
 * kernel refuse an exchange.  No policy here: layout.c decides. */
#pragma once

#include <stdint.h>

/* Why the kernel would refuse to exchange a file's extents, from its inode
 * flags (FS_IOC_GETFLAGS): a LAYOUT_SKIP_* of layout.h, or 0 when none. */
int ext4_flags_refusal(unsigned flags);

/* Exchange len blocks of fd from block orig with those of donor from block
 * at (both files on one ext4, fd and donor open for writing).  The file's
 * data is copied to the donor's blocks and the file then owns them; the
 * donor owns the file's old blocks (and their old contents).  Each call is
 * atomic in the journal.  *ret_moved: the blocks exchanged (also on
 * failure).  -errno: the kernel's. */
int ext4_exchange(int fd, int donor, uint64_t orig, uint64_t at, uint64_t len, uint64_t *ret_moved);

/* A donor of blocks bytes' worth of free space on the file system of the
 * directory dirfd: an O_TMPFILE (never a name, so that no crash leaves one
 * behind: the kernel frees an unlinked inode on close, and an orphan's
 * blocks at the next mount), fallocated in one call so that the allocator
 * looks for one run.  -ENOSPC when it does not fit. */
int ext4_donor_open(int dirfd, uint64_t bytes, int *ret_fd);
