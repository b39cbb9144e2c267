/* SPDX-License-Identifier: MIT */
#include "fs/extents.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* extents_read_flags(), and in *ret_unwritten the extents left out that
 * have no place on the device yet (delayed allocation) */
static int read_map(int fd, uint32_t fm_flags, struct rp_layout *ret, uint64_t *ret_odd, uint64_t *ret_unwritten)
{
        size_t cap = 0;
        uint64_t odd = 0, unwritten = 0;
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
                                unwritten += !!(e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC));
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
                                e->fe_logical, e->fe_physical, e->fe_length, e->fe_flags };
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
        if (ret_unwritten)
                *ret_unwritten = unwritten;
        return 0;
}

int extents_read_flags(int fd, uint32_t fm_flags, struct rp_layout *ret, uint64_t *ret_odd)
{
        return read_map(fd, fm_flags, ret, ret_odd, NULL);
}

bool extents_sync_allowed(uid_t owner, uid_t euid, uid_t invoker)
{
        if (euid == 0 && invoker == (uid_t)-1)
                return true;    /* root itself */
        /* the caller's own, and under sudo the invoking user's */
        return owner == euid || (euid == 0 && owner == invoker);
}

int extents_read_positions(int fd, bool sync, struct rp_layout *ret, bool *ret_unwritten)
{
        uint64_t unwritten = 0;
        struct stat st;
        int r = read_map(fd, 0, ret, NULL, &unwritten);

        if (r >= 0 && unwritten && sync && fstat(fd, &st) == 0 &&
            extents_sync_allowed(st.st_uid, geteuid(), invoking_uid())) {
                /* written back first, then asked again */
                extents_clear(ret);
                r = read_map(fd, FIEMAP_FLAG_SYNC, ret, NULL, &unwritten);
        }
        if (ret_unwritten)
                *ret_unwritten = r >= 0 && unwritten;
        return r;
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

static int read_recorded(const struct rs_file *f, bool sync, struct rp_layout *ret, bool *ret_unwritten)
{
        enum fs_skip why;
        _cleanup_close_ int fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);

        if (fd < 0)
                return fd;
        return extents_read_positions(fd, sync, ret, ret_unwritten);
}

int extents_read_recorded(const struct rs_file *f, struct rp_layout *ret)
{
        return read_recorded(f, false, ret, NULL);
}

int extents_table_read(const struct readset *rs, const bool *want, unsigned flags, struct rp_layout **ret,
                       struct extents_counts *ret_counts)
{
        struct rp_layout *t = calloc(rs->n_files ? rs->n_files : 1, sizeof(*t));
        struct extents_counts n = {};

        /* file systems found to keep no map (squashfs): their other files
         * are not opened to be asked (each open there is a lookup and an
         * inode read; the 624 files of a packed image on the emulated
         * 7200 rpm disk took 0.4 s so, with nothing to show for it) */
        dev_t nomap[8];
        size_t n_nomap = 0;

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                bool unwritten = false, skip = false;
                int r;
                if (rs->files[i].kind != RS_FILE_REGULAR || (want && !want[i]))
                        continue;
                for (size_t k = 0; k < n_nomap && !skip; k++)
                        skip = nomap[k] == rs->files[i].dev;
                if (skip) {
                        n.unknown++;
                        continue;
                }
                r = read_recorded(&rs->files[i], flags & EXTENTS_TABLE_SYNC, &t[i], &unwritten);
                if (r == -ENOMEM) {
                        extents_table_free(t, rs->n_files);
                        return r;
                }
                if (r == -EOPNOTSUPP && n_nomap < ARRAY_SIZE(nomap))
                        nomap[n_nomap++] = rs->files[i].dev;
                if (r < 0)
                        n.unknown++;
                n.unwritten += unwritten;
        }
        *ret = t;
        if (ret_counts)
                *ret_counts = n;
        return 0;
}

void extents_table_free(struct rp_layout *t, size_t n)
{
        for (size_t i = 0; t && i < n; i++)
                extents_clear(&t[i]);
        free(t);
}
