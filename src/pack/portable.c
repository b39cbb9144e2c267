/* SPDX-License-Identifier: MIT */
#include "pack/portable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "fs/open.h"
#include "pack/image.h"
#include "pack/squashfs.h"
#include "util/util.h"
#include "util/banned.h"

/* path below root (root_len bytes, no trailing slash; 0 for "/"): the rest,
 * starting with its slash, or NULL */
static const char *below(const char *path, const char *root, size_t root_len)
{
        if (root_len == 0)
                return path[0] == '/' && path[1] ? path : NULL;
        if (strncmp(path, root, root_len) != 0 || path[root_len] != '/' || !path[root_len + 1])
                return NULL;
        return path + root_len;
}

static int64_t to_second(int64_t ns)
{
        return ns - ns % 1000000000LL;
}

int portable_make(const struct readset *rs, const char *root, int64_t clamp_s, struct readset **ret,
                  struct portable_counts *c)
{
        _cleanup_readset_ struct readset *p = readset_new();
        size_t n = strlen(root);
        int r;

        *c = (struct portable_counts){ 0 };
        if (root[0] != '/')
                return -EINVAL;
        while (n > 0 && root[n - 1] == '/')
                n--;
        if (!p)
                return -ENOMEM;
        if ((r = checksum_available()) < 0)
                return r;
        p->created_unix = rs->created_unix;
        p->duration_us = rs->duration_us;
        p->page_size = rs->page_size;
        p->rec_flags = rs->rec_flags | RS_REC_PORTABLE;
        p->events = rs->events;
        p->lost_events = rs->lost_events;
        p->lookups_lost = rs->lookups_lost;
        p->lookups_unresolved = rs->lookups_unresolved;
        if (rs->command && !(p->command = strdup(rs->command)))
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                const char *rel;
                struct content_sum sum;
                struct rs_file *pf;
                enum fs_skip why;
                _cleanup_close_ int fd = -1;

                if (f->kind != RS_FILE_REGULAR || (f->flags & RS_FILE_DELETED)) {
                        c->not_files += f->kind != RS_FILE_REGULAR;
                        c->unusable += f->kind == RS_FILE_REGULAR;
                        continue;
                }
                rel = below(f->path, root, n);
                if (!rel || !readset_path_is_plain(rel)) {
                        c->outside++;
                        continue;
                }
                /* the very file recorded, unchanged */
                fd = fs_open_recorded(f, O_RDONLY, &why);
                if (fd < 0) {
                        c->unusable++;
                        continue;
                }
                pf = readset_add_file(p, rel, 0, 0);
                if (!pf)
                        return -ENOMEM;
                pf->kind = RS_FILE_REGULAR;
                pf->flags = RS_FILE_BY_CONTENT;
                pf->size = f->size;
                /* squashfs keeps whole seconds */
                pf->mtime_ns = to_second(f->mtime_ns);
                if (clamp_s >= 0 && pf->mtime_ns > clamp_s * 1000000000LL)
                        pf->mtime_ns = clamp_s * 1000000000LL;
                /* what the start read, not what the recording's file
                 * system read ahead (another medium reads ahead its own) */
                for (size_t k = 0; k < f->n_ranges; k++)
                        if ((f->ranges[k].flags & RS_RANGE_ACCESSED) &&
                            readset_file_add_range(pf, f->ranges[k].offset, f->ranges[k].length, f->ranges[k].time_us,
                                                   f->ranges[k].flags) < 0)
                                return -ENOMEM;
                /* the digest of those bytes */
                if (pf->n_ranges == 0 || checksum_ranges(fd, pf, &sum) < 0) {
                        c->unusable += pf->n_ranges > 0;
                        c->not_read += pf->n_ranges == 0;
                        readset_drop_last_file(p);
                        continue;
                }
                memcpy(pf->content, sum.d, sizeof(pf->content));
                c->files++;
        }
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                const char *rel = below(l->path, root, n);

                if (!rel || !readset_path_is_plain(rel)) {
                        c->lookups_outside++;
                        continue;
                }
                if (readset_add_lookup(p, l->time_us, l->op, l->result, l->pid, rel) < 0)
                        return -ENOMEM;
                c->lookups++;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

static int join(char **s, const char *root, size_t n)
{
        size_t k = strlen(*s);
        char *j = malloc(n + k + 1);

        if (!j)
                return -ENOMEM;
        memcpy(j, root, n);
        memcpy(j + n, *s, k + 1);
        free(*s);
        *s = j;
        return 0;
}

int portable_bind(struct readset *rs, const char *root, uint64_t dev)
{
        size_t n = root ? strlen(root) : 0;

        while (n > 0 && root[n - 1] == '/')
                n--;
        for (size_t i = 0; i < rs->n_files; i++) {
                rs->files[i].dev = dev;
                if (n && join(&rs->files[i].path, root, n) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; n && i < rs->n_lookups; i++)
                if (join(&rs->lookups[i].path, root, n) < 0)
                        return -ENOMEM;
        return 0;
}

/* An attribute of the loop device dev (its sysfs file), without its
 * newline; NULL when there is none (not a loop device). */
static char *loop_attr(dev_t dev, const char *name)
{
        char sys[128], *s = NULL;

        snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/%s", major(dev), minor(dev), name);
        if (read_small_line(sys, &s, PATH_MAX + 16) < 0)
                return NULL;
        return s;
}

/* The file root's file system is mounted from: the backing file of its
 * loop device, at offset 0, read through the page cache, a regular file;
 * an fd (O_RDONLY) and its stat, or -ENODEV not such a loop device,
 * -errno. */
static int backing_open(const char *root, struct stat *ret)
{
        _cleanup_free_ char *path = NULL, *off = NULL, *dio = NULL;
        _cleanup_close_ int pfd = -1;
        struct stat st;

        if (stat(root, &st) < 0)
                return -errno;
        path = loop_attr(st.st_dev, "backing_file");
        off = loop_attr(st.st_dev, "offset");
        /* with direct I/O the loop device reads around the page cache:
         * nothing read of the file there would be found */
        dio = loop_attr(st.st_dev, "dio");
        if (!path || path[0] != '/' || !off || strcmp(off, "0") != 0 || (dio && strcmp(dio, "1") == 0))
                return -ENODEV;
        /* only ever a regular file: looked at first (O_PATH), then that
         * very inode opened, never a FIFO or device in its place */
        pfd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENODEV;
        *ret = st;
        return fd_reopen(pfd, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

int portable_image_open(const char *root, const struct rs_image *im)
{
        struct content_sum sum;
        uint8_t head[4096];
        struct stat st;
        ssize_t k;
        int fd, r = 0;

        fd = backing_open(root, &st);
        if (fd < 0)
                return fd;
        if ((uint64_t)st.st_size != im->size) {
                close(fd);
                return -ESTALE;
        }
        k = pread(fd, head, sizeof(head), 0);
        r = k < 0 ? -errno : checksum_buf(head, (size_t)k, &sum);
        if (r >= 0 && memcmp(sum.d, im->head, sizeof(im->head)) != 0)
                r = -ESTALE;
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int portable_image_here(const char *root, const struct readset *rs, struct rs_image **ret)
{
        struct stat st;
        int fd = backing_open(root, &st), r;

        if (fd < 0)
                return fd;
        r = image_spans_here(fd, rs, strcmp(root, "/") == 0 ? 0 : strlen(root), ret);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int portable_image_compressor(const char *root)
{
        struct stat st;
        int fd = backing_open(root, &st), r;

        if (fd < 0)
                return fd;
        r = sqfs_compressor_fd(fd);
        close(fd);
        return r;
}
