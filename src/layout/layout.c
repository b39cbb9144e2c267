/* SPDX-License-Identifier: MIT */
/* A layout's front door: the file system a read set's files lie on and the
 * backend that lays it out (the table of layout_ops), the survey of every
 * file through that backend, the run, and the verdict.  The backends
 * (move.c: ext4's, btrfs.c) use survey.c's shared steps and never call
 * back here. */
#include "layout/layout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

int layout_find_fs(const struct readset *rs, const char *under, struct layout_fs *ret)
{
        struct mounts mt = {};
        const char *first;
        char real[4096];
        struct statfs sf;
        struct statvfs sv;
        struct stat st;
        size_t best = 0;
        int r;

        *ret = (struct layout_fs){};
        if (under) {
                if (!realpath(under, real))
                        return -errno;
                if (strlen(real) >= sizeof(ret->under))
                        return -ENAMETOOLONG;
                if (stat(real, &st) < 0)
                        return -errno;
                if (!S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                snprintf(ret->under, sizeof(ret->under), "%s", strcmp(real, "/") == 0 ? "" : real);
                first = real;
        } else {
                r = readset_main_file(rs, &first);
                if (r < 0)
                        return r;
                if (!first)
                        return -ENOENT;
        }
        if (stat(first, &st) < 0)
                return -errno;
        ret->dev = st.st_dev;
        /* the mount point: the last mounted whose point is the longest
         * prefix of the file's path (not by device number: btrfs's
         * mountinfo numbers are not its files' st_dev) */
        r = mounts_read(&mt);
        if (r < 0) {
                mounts_free(&mt);
                return r;
        }
        for (size_t i = 0; i < mt.n; i++) {
                size_t n = strlen(mt.m[i].mnt);
                if (n < best || n >= sizeof(ret->mnt))
                        continue;
                if (strcmp(mt.m[i].mnt, "/") != 0 &&
                    (strncmp(first, mt.m[i].mnt, n) != 0 || (first[n] != '/' && first[n] != '\0')))
                        continue;
                best = n;
                snprintf(ret->mnt, sizeof(ret->mnt), "%s", mt.m[i].mnt);
                snprintf(ret->fstype, sizeof(ret->fstype), "%s", mt.m[i].fstype);
                /* data=journal is a super-block option */
                ret->data_journal = mounts_has_option(mt.m[i].super, "data=journal");
        }
        mounts_free(&mt);
        if (!ret->mnt[0])
                return -ENOENT;
        if (statfs(ret->mnt, &sf) < 0 || statvfs(ret->mnt, &sv) < 0)
                return -errno;
        ret->ops = layout_ops_find(ret->fstype, (long)sf.f_type);
        if (!ret->ops)
                return -EMEDIUMTYPE;
        /* the mount point found by path must be the file system's */
        if (stat(ret->mnt, &st) < 0)
                return -errno;
        if (st.st_dev != ret->dev)
                return -ENXIO;
        ret->block_size = (uint32_t)sv.f_frsize;
        ret->blocks = sv.f_blocks;
        ret->free_blocks = sv.f_bavail;
        ret->read_only = sv.f_flag & ST_RDONLY;
        if (ret->read_only)
                return -EROFS;
        return ret->ops->accept ? ret->ops->accept(ret) : 0;
}

const struct layout_ops *layout_ops_find(const char *fstype, long magic)
{
        static const struct layout_ops *const backends[] = { &layout_ext4_ops, &layout_btrfs_ops };

        for (size_t i = 0; i < ARRAY_SIZE(backends); i++)
                if (backends[i]->magic == magic && strcmp(backends[i]->name, fstype) == 0)
                        return backends[i];
        return NULL;
}

int layout_run(struct layout *l, const struct layout_options *o)
{
        return l->fs.ops->run(l, o);
}

enum layout_verdict layout_verdict(const struct layout *l, bool solid_state, bool force)
{
        if (!l->fit_files && l->skipped[LAYOUT_SKIP_NO_SPACE])
                return LAYOUT_VERDICT_NO_SPACE;
        if (!l->movable_files)
                return LAYOUT_VERDICT_NOTHING_MOVABLE;
        if (l->no_gain)
                return LAYOUT_VERDICT_NO_GAIN;
        if (solid_state && !force)
                return LAYOUT_VERDICT_SOLID_STATE;
        return LAYOUT_VERDICT_MOVE;
}

const char *layout_verdict_name(enum layout_verdict v)
{
        static const char *const names[] = {
                [LAYOUT_VERDICT_MOVE] = "move",
                [LAYOUT_VERDICT_NO_SPACE] = "no-space",
                [LAYOUT_VERDICT_NOTHING_MOVABLE] = "nothing-movable",
                [LAYOUT_VERDICT_NO_GAIN] = "no-gain",
                [LAYOUT_VERDICT_SOLID_STATE] = "solid-state",
        };
        return (unsigned)v < ARRAY_SIZE(names) ? names[v] : "?";
}

const char *layout_stop_name(int stopped)
{
        switch (stopped) {
        case 0: return NULL;
        case -EINTR: return "interrupted";
        case -ENOSPC: return "file system full";
        case -EIO: return "failed check";
        case -EOPNOTSUPP: return "refused by the kernel";
        default: return "error";
        }
}

struct link_key {
        uint64_t ino;
        size_t index;
};

static int cmp_link_key(const void *a, const void *b)
{
        const struct link_key *x = a, *y = b;
        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

static bool below(const struct layout_fs *fs, const char *path)
{
        size_t n = strlen(fs->under);
        return !n || (strncmp(path, fs->under, n) == 0 && path[n] == '/');
}

/* The files of rs a layout of fs considers (regular, there, not deleted)
 * that name an inode an earlier one names too (hard links): moved with
 * that one.  One sort.  -ENOMEM. */
static int mark_hard_links(const struct readset *rs, const struct layout_fs *fs, bool *dup)
{
        _cleanup_free_ struct link_key *k = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*k));
        size_t n = 0;

        if (!k)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR && rs->files[i].dev == fs->dev &&
                    !(rs->files[i].flags & RS_FILE_DELETED) && below(fs, rs->files[i].path))
                        k[n++] = (struct link_key){ rs->files[i].ino, i };
        qsort_safe(k, n, sizeof(*k), cmp_link_key);
        for (size_t i = 1; i < n; i++)
                if (k[i].ino == k[i - 1].ino)
                        dup[k[i].index] = true;
        return 0;
}

int layout_survey(const struct readset *rs, const struct layout_fs *fs, const struct layout_request *req,
                  struct layout **ret)
{
        _cleanup_free_ bool *dup = calloc(rs->n_files ? rs->n_files : 1, sizeof(bool));
        struct layout *l = calloc(1, sizeof(*l));
        int r;

        if (!l || !dup) {
                free(l);
                return -ENOMEM;
        }
        l->rs = rs;
        l->fs = *fs;
        l->what = req->what;
        l->compress = req->compress;
        l->unshare = req->unshare;
        l->files = calloc(rs->n_files ? rs->n_files : 1, sizeof(*l->files));
        r = l->files ? mark_hard_links(rs, fs, dup) : -ENOMEM;
        if (r >= 0 && fs->ops->busy_files)
                r = layout_busy_files(&l->busy, &l->n_busy, &l->swap, &l->n_swap);
        for (size_t i = 0; i < rs->n_files && r >= 0; i++) {
                const struct rs_file *f = &rs->files[i];
                struct layout_file *lf;
                if (f->kind == RS_FILE_BLOCKDEV) {
                        l->meta_ranges += f->n_ranges;
                        for (size_t k = 0; k < f->n_ranges; k++)
                                l->meta_bytes += f->ranges[k].length;
                        continue;
                }
                if (!below(fs, f->path)) {
                        l->outside_files++;
                        continue;
                }
                lf = &l->files[l->n_files++];
                lf->file = (uint32_t)i;
                if (f->kind == RS_FILE_UNRESOLVED)
                        lf->skip = LAYOUT_SKIP_UNRESOLVED;
                else if (f->flags & RS_FILE_DELETED)
                        lf->skip = LAYOUT_SKIP_DELETED;
                else if (f->dev != fs->dev)
                        lf->skip = LAYOUT_SKIP_OTHER_FS;
                else if (dup[i]) {
                        lf->duplicate = true;
                        continue;
                } else
                        r = fs->ops->survey_file(l, lf, f);
                if (lf->skip)
                        l->skipped[lf->skip]++;
        }
        if (r < 0) {
                layout_free(l);
                return r;
        }
        fs->ops->decide(l);
        *ret = l;
        return 0;
}
