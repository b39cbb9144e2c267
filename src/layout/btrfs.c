/* SPDX-License-Identifier: MIT */
#include "layout/btrfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "fs/extents.h"
#include "fs/open.h"
#include "util/util.h"
#include "util/banned.h"

static uint64_t blayout_pieces(const struct layout *l, bool after);

int blayout_compress_from_name(const char *s)
{
        if (strcmp(s, "zstd") == 0)
                return BLAYOUT_ZSTD;
        if (strcmp(s, "lzo") == 0)
                return BLAYOUT_LZO;
        if (strcmp(s, "zlib") == 0)
                return BLAYOUT_ZLIB;
        return -EINVAL;
}

const char *blayout_compress_name(int c)
{
        return c == BLAYOUT_ZSTD ? "zstd" : c == BLAYOUT_LZO ? "lzo" : c == BLAYOUT_ZLIB ? "zlib" : "?";
}

static bool any_flag(const struct rp_layout *x, uint32_t flag)
{
        for (size_t i = 0; i < x->n_extents; i++)
                if (x->extents[i].flags & flag)
                        return true;
        return false;
}

static bool all_encoded(const struct rp_layout *x)
{
        size_t data = 0;

        for (size_t i = 0; i < x->n_extents; i++) {
                if (x->extents[i].flags & FIEMAP_EXTENT_DATA_INLINE)
                        continue;
                if (!(x->extents[i].flags & FIEMAP_EXTENT_ENCODED))
                        return false;
                data++;
        }
        return data > 0;
}

static uint64_t count_encoded(const struct rp_layout *x)
{
        uint64_t n = 0;

        for (size_t i = 0; i < x->n_extents; i++)
                n += !!(x->extents[i].flags & FIEMAP_EXTENT_ENCODED);
        return n;
}

/* fd's extents with their flags (delayed allocations made first) */
static int read_extents(int fd, struct rp_layout *ret)
{
        return extents_read_flags(fd, FIEMAP_FLAG_SYNC | EXTENTS_ALL, ret, NULL);
}

static int survey_file(struct layout *l, struct layout_file *bf, const struct rs_file *f)
{
        enum fs_skip why;
        _cleanup_close_ int fd = -1;
        unsigned flags = 0;
        struct stat st;
        int r;

        if (f->n_ranges == 0) {
                bf->skip = LAYOUT_SKIP_NOT_READ;
                return 0;
        }
        fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);
        if (fd < 0) {
                bf->err = fd;
                bf->skip = (uint8_t)layout_skip_of(why);
                return 0;
        }
        if (fstat(fd, &st) < 0) {
                bf->err = -errno;
                bf->skip = LAYOUT_SKIP_ERROR;
                return 0;
        }
        bf->size = (uint64_t)st.st_size;
        if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
                if (flags & FS_IMMUTABLE_FL)
                        bf->skip = LAYOUT_SKIP_IMMUTABLE;
                else if (flags & FS_APPEND_FL)
                        bf->skip = LAYOUT_SKIP_APPEND_ONLY;
                else if (flags & FS_NOCOW_FL)
                        bf->skip = LAYOUT_SKIP_NOCOW;
                else if (flags & FS_VERITY_FL)
                        bf->skip = LAYOUT_SKIP_VERITY;
                if (bf->skip)
                        return 0;
        }
        r = read_extents(fd, &bf->before);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                bf->err = r;
                bf->skip = LAYOUT_SKIP_ERROR;
                return 0;
        }
        if (bf->before.n_extents == 0) {
                bf->skip = LAYOUT_SKIP_EMPTY;
                return 0;
        }
        if (bf->before.n_extents == 1 && (bf->before.extents[0].flags & FIEMAP_EXTENT_DATA_INLINE)) {
                bf->skip = LAYOUT_SKIP_INLINE;    /* in the metadata: read with it */
                return 0;
        }
        /* the kernel's defragment leaves an extent compressed to its
         * maximum (128 KiB) where it is: rewriting the rest of such a
         * file would scatter it, not gather it (a second run, a file
         * system mounted compress) */
        if (all_encoded(&bf->before)) {
                bf->skip = LAYOUT_SKIP_COMPRESSED;
                return 0;
        }
        if (!l->unshare && any_flag(&bf->before, FIEMAP_EXTENT_SHARED)) {
                bf->skip = LAYOUT_SKIP_SHARED;
                return 0;
        }
        if (layout_open_for_writing(fd) > 0) {
                bf->skip = LAYOUT_SKIP_OPEN_WRITE;
                return 0;
        }
        return 0;
}

/* Every file the survey kept is rewritten. */
static void decide(struct layout *l)
{
        l->move_files = l->move_bytes = l->encoded_before = 0;
        for (size_t i = 0; i < l->n_files; i++) {
                struct layout_file *bf = &l->files[i];
                bf->move = !bf->skip && !bf->duplicate;
                if (!bf->move)
                        continue;
                l->move_files++;
                l->move_bytes += bf->size;
                l->encoded_before += count_encoded(&bf->before);
        }
        l->movable_files = l->fit_files = l->move_files;
        l->pieces_now = blayout_pieces(l, false);
}

/* Does y follow x on the device?  An extent written compressed takes at
 * most its logical length there (FIEMAP says no more); a page of slack. */
static bool follows(const struct rp_extent *x, const struct rp_extent *y)
{
        uint64_t span = x->length + 4096;
        if (x->flags & FIEMAP_EXTENT_DATA_INLINE)
                return true;
        return y->physical >= x->physical && y->physical - x->physical <= span;
}

/* Runs of consecutive data the movable files lie in, in first-access order
 * (a compressed extent follows one that starts at most its logical length
 * before it): before, or after the run. */
static uint64_t blayout_pieces(const struct layout *l, bool after)
{
        const struct rp_extent *prev = NULL;
        uint64_t pieces = 0;

        for (size_t i = 0; i < l->n_files; i++) {
                const struct layout_file *bf = &l->files[i];
                const struct rp_extent *x = after ? bf->after.extents : bf->before.extents;
                size_t n = after ? bf->after.n_extents : bf->before.n_extents;

                if (bf->skip || bf->duplicate || (after && !bf->moved))
                        continue;
                for (size_t k = 0; k < n; k++) {
                        if (x[k].flags & FIEMAP_EXTENT_DATA_INLINE)
                                continue;
                        if (!prev || !follows(prev, &x[k]))
                                pieces++;
                        prev = &x[k];
                }
        }
        return pieces;
}

static int rewrite(const struct layout *l, int fd)
{
        struct btrfs_ioctl_defrag_range_args a = {
                .start = 0,
                .len = (uint64_t)-1,
                /* writeback started now: allocated in the order asked */
                .flags = BTRFS_DEFRAG_RANGE_COMPRESS | BTRFS_DEFRAG_RANGE_START_IO,
                .extent_thresh = UINT32_MAX,   /* every extent, whatever its size */
                .compress_type = (uint32_t)l->compress,
        };
        return ioctl(fd, BTRFS_IOC_DEFRAG_RANGE, &a) < 0 ? -errno : 0;
}

static int run(struct layout *l, const struct layout_options *o)
{
        uint64_t checked = 0, files_done = 0, bytes_done = 0;
        _cleanup_close_ int mfd = open(l->fs.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ struct content_sum *sums = calloc(l->n_files ? l->n_files : 1, sizeof(*sums));
        int r;

        if (mfd < 0)
                return -errno;
        if (!sums)
                return -ENOMEM;
        /* one layout at a time on a file system (ext4's takes the same lock) */
        if (flock(mfd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        for (size_t i = 0; i < l->n_files && !l->stopped; i++) {
                struct layout_file *bf = &l->files[i];
                const struct rs_file *f = &l->rs->files[bf->file];
                enum fs_skip why;
                _cleanup_close_ int fd = -1;
                struct stat st;

                if (bf->skip || bf->duplicate)
                        continue;
                if (o->stop && *o->stop) {
                        l->stopped = -EINTR;
                        break;
                }
                if (o->progress)
                        o->progress(o->userdata, l, files_done, bytes_done);
                files_done++;           /* (before it is done: a file skipped now is done too) */
                bytes_done += bf->size;
                /* checked again: read-only is enough for root (and lets a
                 * running program be rewritten: its mapped pages stay) */
                fd = fs_open_recorded(f, O_RDONLY, &why);
                if (fd < 0) {
                        bf->skip = (uint8_t)layout_skip_of(why);
                        l->skipped[bf->skip]++;
                        continue;
                }
                if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != bf->size || layout_open_for_writing(fd) > 0) {
                        bf->skip = LAYOUT_SKIP_CHANGED;
                        l->skipped[bf->skip]++;
                        continue;
                }
                r = checksum_fd(fd, bf->size, false, &sums[i]);
                if (r < 0) {
                        bf->skip = LAYOUT_SKIP_ERROR, bf->err = r;
                        l->skipped[bf->skip]++;
                        continue;
                }
                r = rewrite(l, fd);
                if (r == -ENOSPC) {
                        l->stopped = r, l->stop_file = i;
                        break;
                }
                if (r < 0) {
                        bf->skip = LAYOUT_SKIP_REFUSED, bf->err = r;
                        l->skipped[bf->skip]++;
                        continue;
                }
                bf->moved = true;
                l->moved_files++;
                l->moved_bytes += bf->size;
                if (o->fail_after && l->moved_files == o->fail_after)
                        raise(o->fail_signal);
        }
        if (o->progress)
                o->progress(o->userdata, l, files_done, bytes_done);
        if (syncfs(mfd) < 0) {
                l->sync_failed = true;
                l->stopped = -errno;
        }
        /* each rewritten file read back from the device */
        for (size_t i = 0; i < l->n_files; i++) {
                struct layout_file *bf = &l->files[i];
                struct content_sum now;
                enum fs_skip why;
                _cleanup_close_ int fd = -1;

                if (!bf->moved)
                        continue;
                fd = fs_open_recorded(&l->rs->files[bf->file], O_RDONLY, &why);
                if (fd < 0)
                        continue;       /* gone since: nothing of ours to check */
                (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
                r = checksum_fd(fd, bf->size, true, &now);
                if (r < 0 || memcmp(now.d, sums[i].d, sizeof(now.d)) != 0 ||
                    (o->fail_corrupt && ++checked == o->fail_corrupt)) {
                        /* btrfs checks its own checksums on read: a rewrite
                         * never changes the content; a writer did, or the
                         * device failed */
                        if (!l->stopped)
                                l->stopped = -EIO, l->stop_file = i;
                        continue;
                }
                bf->verified = true;
                l->verified_files++;
                r = read_extents(fd, &bf->after);
                if (r == -ENOMEM)
                        return r;
                l->encoded_after += count_encoded(&bf->after);
        }
        l->pieces_measured = blayout_pieces(l, true);
        return 0;
}

const struct layout_ops layout_btrfs_ops = {
        .name = "btrfs",
        .magic = BTRFS_SUPER_MAGIC,
        .compresses = true,
        .survey_file = survey_file,
        .decide = decide,
        .run = run,
};
