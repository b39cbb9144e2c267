/* SPDX-License-Identifier: MIT */
#include "fs/extents.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>

#include "fs/open.h"
#include "model/readset.h"
#include "util/util.h"
#include "util/banned.h"

void extents_clear(struct rp_layout *l)
{
        free(l->extents);
        *l = (struct rp_layout){};
}

int extents_read(int fd, struct rp_layout *ret)
{
        return extents_read_flags(fd, 0, ret, NULL);
}

int extents_read_flags(int fd, uint32_t fm_flags, struct rp_layout *ret, uint64_t *ret_odd)
{
        size_t cap = 0;
        uint64_t odd = 0;
        uint64_t start = 0;
        struct {
                struct fiemap fm;
                struct fiemap_extent ext[128];
        } q;

        *ret = (struct rp_layout){};
        for (;;) {
                bool last = false;
                memset(&q, 0, sizeof(q));
                q.fm.fm_start = start;
                q.fm.fm_length = UINT64_MAX - start;
                q.fm.fm_extent_count = ARRAY_SIZE(q.ext);
                q.fm.fm_flags = fm_flags & ~EXTENTS_ALL;
                if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) < 0) {
                        int e = errno == ENOTTY ? -EOPNOTSUPP : -errno;
                        extents_clear(ret);
                        return e;
                }
                if (q.fm.fm_mapped_extents == 0)
                        break;
                for (unsigned i = 0; i < q.fm.fm_mapped_extents; i++) {
                        const struct fiemap_extent *e = &q.ext[i];
                        if (e->fe_flags & FIEMAP_EXTENT_LAST)
                                last = true;
                        /* (an encoded extent, compressed by btrfs, is read
                         * whole from where it starts: a position to sort by) */
                        if (!(fm_flags & EXTENTS_ALL) &&
                            e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                           FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED)) {
                                odd++;
                                continue;
                        }
                        if (ret->n_extents >= EXTENTS_MAX_PER_FILE) {
                                if (fm_flags & EXTENTS_ALL) {
                                        extents_clear(ret);
                                        return -E2BIG;
                                }
                                last = true;
                                break;
                        }
                        if (grow_array(&ret->extents, &cap, ret->n_extents + 1, sizeof(*ret->extents)) < 0) {
                                extents_clear(ret);
                                return -ENOMEM;
                        }
                        ret->extents[ret->n_extents++] = (struct rp_extent){
                                e->fe_logical, e->fe_physical, e->fe_length,
                                !!(e->fe_flags & FIEMAP_EXTENT_ENCODED), e->fe_flags };
                }
                const struct fiemap_extent *tail = &q.ext[q.fm.fm_mapped_extents - 1];
                /* the end, or a map that does not move on (wrapped, or bogus) */
                if (last || tail->fe_logical + tail->fe_length <= start)
                        break;
                start = tail->fe_logical + tail->fe_length;
        }
        ret->known = true;
        if (ret_odd)
                *ret_odd = odd;
        return 0;
}

const struct rp_extent *extent_at(const struct rp_layout *l, uint64_t offset, size_t *ret_index)
{
        size_t lo = 0, hi = l->n_extents;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct rp_extent *e = &l->extents[mid];
                if (offset < e->logical)
                        hi = mid;
                else if (offset - e->logical >= e->length)
                        lo = mid + 1;
                else {
                        if (ret_index)
                                *ret_index = mid;
                        return e;
                }
        }
        if (ret_index)
                *ret_index = lo;
        return NULL;
}

int extents_read_recorded(const struct rs_file *f, struct rp_layout *ret)
{
        enum fs_skip why;
        _cleanup_close_ int fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);

        if (fd < 0)
                return fd;
        return extents_read(fd, ret);
}

int extents_table_read(const struct readset *rs, const bool *want, struct rp_layout **ret, uint64_t *ret_unknown)
{
        struct rp_layout *t = calloc(rs->n_files ? rs->n_files : 1, sizeof(*t));
        uint64_t unknown = 0;

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                int r;
                if (rs->files[i].kind != RS_FILE_REGULAR || (want && !want[i]))
                        continue;
                r = extents_read_recorded(&rs->files[i], &t[i]);
                if (r == -ENOMEM) {
                        extents_table_free(t, rs->n_files);
                        return r;
                }
                if (r < 0)
                        unknown++;
        }
        *ret = t;
        if (ret_unknown)
                *ret_unknown = unknown;
        return 0;
}

void extents_table_free(struct rp_layout *t, size_t n)
{
        for (size_t i = 0; t && i < n; i++)
                extents_clear(&t[i]);
        free(t);
}
