/* SPDX-License-Identifier: MIT */
#include "layout/btrfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "fs/open.h"
#include "util/util.h"
#include "util/banned.h"

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

void blayout_free(struct blayout *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n_files; i++) {
                free(l->files[i].before);
                free(l->files[i].after);
        }
        free(l->files);
        free(l);
}

/* fd's extents with their flags (FIEMAP, delayed allocations made first). */
#define FIEMAP_BATCH 128
static int read_extents(int fd, struct bextent **ret, size_t *ret_n)
{
        _cleanup_free_ struct fiemap *fm = malloc(sizeof(*fm) + FIEMAP_BATCH * sizeof(struct fiemap_extent));
        struct bextent *v = NULL;
        size_t n = 0, cap = 0;
        uint64_t start = 0;
        bool last = false;

        *ret = NULL, *ret_n = 0;
        if (!fm)
                return -ENOMEM;
        while (!last) {
                memset(fm, 0, sizeof(*fm));
                fm->fm_start = start;
                fm->fm_length = FIEMAP_MAX_OFFSET - start;
                fm->fm_flags = FIEMAP_FLAG_SYNC;
                fm->fm_extent_count = FIEMAP_BATCH;
                if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
                        int e = -errno;
                        free(v);
                        return e;
                }
                if (fm->fm_mapped_extents == 0)
                        break;
                for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
                        const struct fiemap_extent *x = &fm->fm_extents[i];
                        if (n >= EXTENTS_MAX_PER_FILE) {
                                free(v);
                                return -E2BIG;
                        }
                        if (grow_array(&v, &cap, n + 1, sizeof(*v)) < 0) {
                                free(v);
                                return -ENOMEM;
                        }
                        v[n++] = (struct bextent){ x->fe_logical, x->fe_physical, x->fe_length, x->fe_flags };
                        start = x->fe_logical + x->fe_length;
                        last |= x->fe_flags & FIEMAP_EXTENT_LAST;
                }
        }
        *ret = v, *ret_n = n;
        return 0;
}

static bool any_flag(const struct bextent *x, size_t n, uint32_t flag)
{
        for (size_t i = 0; i < n; i++)
                if (x[i].flags & flag)
                        return true;
        return false;
}

static bool all_encoded(const struct bextent *x, size_t n)
{
        size_t data = 0;

        for (size_t i = 0; i < n; i++) {
                if (x[i].flags & FIEMAP_EXTENT_DATA_INLINE)
                        continue;
                if (!(x[i].flags & FIEMAP_EXTENT_ENCODED))
                        return false;
                data++;
        }
        return data > 0;
}

static int survey_file(struct blayout *l, struct blayout_file *bf, const struct rs_file *f)
{
        enum fs_skip why;
        _cleanup_close_ int fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);
        unsigned flags = 0;
        struct stat st;
        int r;

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
        r = read_extents(fd, &bf->before, &bf->n_before);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                bf->err = r;
                bf->skip = LAYOUT_SKIP_ERROR;
                return 0;
        }
        if (bf->n_before == 0) {
                bf->skip = LAYOUT_SKIP_EMPTY;
                return 0;
        }
        if (bf->n_before == 1 && (bf->before[0].flags & FIEMAP_EXTENT_DATA_INLINE)) {
                bf->skip = LAYOUT_SKIP_INLINE;    /* in the metadata: read with it */
                return 0;
        }
        /* the kernel's defragment leaves an extent compressed to its
         * maximum (128 KiB) where it is: rewriting the rest of such a
         * file would scatter it, not gather it (a second run, a file
         * system mounted compress) */
        if (all_encoded(bf->before, bf->n_before)) {
                bf->skip = LAYOUT_SKIP_COMPRESSED;
                return 0;
        }
        if (!l->unshare && any_flag(bf->before, bf->n_before, FIEMAP_EXTENT_SHARED)) {
                bf->skip = LAYOUT_SKIP_SHARED;
                return 0;
        }
        if (layout_open_for_writing(fd) > 0) {
                bf->skip = LAYOUT_SKIP_OPEN_WRITE;
                return 0;
        }
        return 0;
}

struct ino_at {
        uint64_t ino;
        size_t at;        /* index in the layout's files */
};

static int cmp_ino_at(const void *a, const void *b)
{
        const struct ino_at *x = a, *y = b;
        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return x->at < y->at ? -1 : x->at > y->at;
}

int blayout_survey(const struct readset *rs, const struct layout_fs *fs, int compress, bool unshare,
                   struct blayout **ret)
{
        _cleanup_(blayout_freep) struct blayout *l = calloc(1, sizeof(*l));
        _cleanup_free_ struct ino_at *seen = NULL;
        size_t n_seen = 0, under = strlen(fs->under);
        int r;

        if (!l)
                return -ENOMEM;
        l->rs = rs, l->fs = *fs, l->compress = compress, l->unshare = unshare;
        l->files = calloc(rs->n_files ? rs->n_files : 1, sizeof(*l->files));
        seen = calloc(rs->n_files ? rs->n_files : 1, sizeof(*seen));
        if (!l->files || !seen)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                struct blayout_file *bf;

                if (f->kind == RS_FILE_BLOCKDEV)
                        continue;
                if (under && f->kind == RS_FILE_REGULAR &&
                    !(strncmp(f->path, fs->under, under) == 0 && f->path[under] == '/')) {
                        l->outside_files++;
                        continue;
                }
                bf = &l->files[l->n_files++];
                bf->file = (uint32_t)i;
                if (f->kind != RS_FILE_REGULAR)
                        bf->skip = LAYOUT_SKIP_UNRESOLVED;
                else if (f->flags & RS_FILE_DELETED)
                        bf->skip = LAYOUT_SKIP_DELETED;
                else if (f->dev != fs->dev)
                        bf->skip = LAYOUT_SKIP_OTHER_FS;
                else if (f->n_ranges == 0)
                        bf->skip = LAYOUT_SKIP_NOT_READ;
                else if ((r = survey_file(l, bf, f)) < 0)
                        return r;
                if (!bf->skip)
                        seen[n_seen++] = (struct ino_at){ f->ino, l->n_files - 1 };
        }
        /* a hard link of one earlier in the order: rewritten with it */
        qsort_safe(seen, n_seen, sizeof(*seen), cmp_ino_at);
        for (size_t k = 1; k < n_seen; k++)
                if (seen[k].ino == seen[k - 1].ino)
                        l->files[seen[k].at].duplicate = true;
        for (size_t i = 0; i < l->n_files; i++) {
                struct blayout_file *bf = &l->files[i];
                if (bf->duplicate)
                        continue;
                l->skipped[bf->skip]++;
                if (!bf->skip) {
                        l->move_files++;
                        l->move_bytes += bf->size;
                        for (size_t k = 0; k < bf->n_before; k++)
                                l->encoded_before += !!(bf->before[k].flags & FIEMAP_EXTENT_ENCODED);
                }
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* Does y follow x on the device?  An extent written compressed takes at
 * most its logical length there (FIEMAP says no more); a page of slack. */
static bool follows(const struct bextent *x, const struct bextent *y)
{
        uint64_t span = x->length + 4096;
        if (x->flags & FIEMAP_EXTENT_DATA_INLINE)
                return true;
        return y->physical >= x->physical && y->physical - x->physical <= span;
}

uint64_t blayout_pieces(const struct blayout *l, bool after)
{
        const struct bextent *prev = NULL;
        uint64_t pieces = 0;

        for (size_t i = 0; i < l->n_files; i++) {
                const struct blayout_file *bf = &l->files[i];
                const struct bextent *x = after ? bf->after : bf->before;
                size_t n = after ? bf->n_after : bf->n_before;

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

static int rewrite(const struct blayout *l, int fd)
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

int blayout_run(struct blayout *l, const struct layout_options *o)
{
        uint64_t checked = 0;
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
                struct blayout_file *bf = &l->files[i];
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
        if (syncfs(mfd) < 0) {
                l->sync_failed = true;
                l->stopped = -errno;
        }
        /* each rewritten file read back from the device */
        for (size_t i = 0; i < l->n_files; i++) {
                struct blayout_file *bf = &l->files[i];
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
                r = read_extents(fd, &bf->after, &bf->n_after);
                if (r == -ENOMEM)
                        return r;
                for (size_t k = 0; k < bf->n_after; k++)
                        l->encoded_after += !!(bf->after[k].flags & FIEMAP_EXTENT_ENCODED);
        }
        return 0;
}
