/* SPDX-License-Identifier: MIT */
#include "pack/make.h"

#include <errno.h>
#include <fts.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "model/format.h"
#include "util/util.h"
#include "util/banned.h"

bool pack_inside_tree(const char *path, const char *root)
{
        _cleanup_free_ char *copy = strdup(path), *real = NULL;
        char *slash = copy ? strrchr(copy, '/') : NULL;
        size_t n = strlen(root);

        if (!copy)
                return false;
        if (slash)
                *slash = 0;
        real = realpath(slash ? (copy[0] ? copy : "/") : ".", NULL);
        return real && strncmp(real, root, n) == 0 && (real[n] == '/' || !real[n] || n == 1);
}

int pack_private_dir_beside(const char *path, char **ret)
{
        _cleanup_free_ char *copy = strdup(path);
        char *slash, *t = NULL;

        if (!copy)
                return -ENOMEM;
        slash = strrchr(copy, '/');
        if (asprintf(&t, "%s/.%s.pack.XXXXXX", slash ? (slash == copy ? "/" : (*slash = 0, copy)) : ".",
                     slash ? slash + 1 : copy) < 0)
                return -ENOMEM;
        if (!mkdtemp(t)) {
                int e = -errno;
                free(t);
                return e;
        }
        *ret = t;
        return 0;
}

int pack_newest_mtime(const char *root, uint64_t *ret)
{
        char *argv[2] = { (char *)root, NULL };
        FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
        FTSENT *e;
        uint64_t newest = 0;

        if (!fts)
                return -errno;
        while ((e = fts_read(fts)))
                if (e->fts_statp && e->fts_info != FTS_NS && e->fts_info != FTS_DP && e->fts_statp->st_mtim.tv_sec > 0 &&
                    (uint64_t)e->fts_statp->st_mtim.tv_sec > newest)
                        newest = (uint64_t)e->fts_statp->st_mtim.tv_sec;
        fts_close(fts);
        *ret = newest;
        return 0;
}

uint32_t pack_mkfs_time(int64_t source_date_epoch, uint64_t created_unix)
{
        return (uint32_t)MIN(source_date_epoch >= 0 ? (uint64_t)source_date_epoch : created_unix, (uint64_t)UINT32_MAX);
}

int pack_image_uuid(const struct readset *p, uint8_t uuid[16])
{
        _cleanup_free_ uint8_t *enc = NULL;
        struct content_sum sum;
        size_t len = 0;
        int r;

        r = format_encode(p, &enc, &len);
        if (r >= 0)
                r = checksum_buf(enc, len, &sum);
        if (r < 0)
                return r;
        memcpy(uuid, sum.d, 16);
        uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x50);   /* a name-based UUID */
        uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
        return 0;
}

static int write_sort(FILE *f, void *userdata)
{
        const void *const *w = userdata;
        struct pack_order_counts c;
        return pack_order_write(f, w[0], w[1], &c);
}

/* r (< 0) as the failure of step. */
static int fail(struct pack_make_result *res, enum pack_make_step step, int r)
{
        res->failed = step;
        res->error = r;
        return r;
}

/* The image's time; for EROFS without SOURCE_DATE_EPOCH, the tree's newest
 * mtime as SOURCE_DATE_EPOCH: mkfs.erofs 1.5 takes the time of every file
 * from -T, and keeps a file's own only below SOURCE_DATE_EPOCH: given the
 * newest of the tree, it clamps none. */
static int set_epoch(const struct pack_make_options *o, struct pack_make_result *res)
{
        char s[32];
        uint64_t newest;
        int r;

        res->mkfs_time = pack_mkfs_time(o->source_date_epoch, o->created_unix);
        if (o->image != PACK_EROFS || o->source_date_epoch >= 0)
                return 0;
        r = pack_newest_mtime(o->root, &newest);
        if (r < 0)
                return fail(res, PACK_MAKE_TREE, r);
        res->tool_epoch = MAX(newest, (uint64_t)1);
        snprintf(s, sizeof(s), "%" PRIu64, res->tool_epoch);
        if (setenv("SOURCE_DATE_EPOCH", s, 1) < 0)
                return fail(res, PACK_MAKE_EPOCH, -errno);
        return 0;
}

/* The image tool run into img; tool and package named. */
static int build(const struct pack_make_options *o, const struct readset *p, const char *img, const char *sort,
                 struct pack_make_result *res)
{
        struct pack_build b = { .image = o->image, .compress = o->compress, .block_size = o->block_size,
                                .tree = o->root, .out = img, .mkfs_time = res->mkfs_time,
                                .progress = o->progress, .progress_userdata = o->progress_userdata };
        int r;

        r = pack_image_uuid(p, b.uuid);
        if (r < 0)
                return fail(res, PACK_MAKE_ENCODE, r);
        b.sort_file = o->image == PACK_SQUASHFS ? sort : NULL;
        if (o->tool_starts)
                o->tool_starts(o, o->userdata);
        r = pack_build_image(&b);
        if (r == -ENOENT)
                return fail(res, PACK_MAKE_TOOL_MISSING, r);
        if (r == -EIO)
                return fail(res, PACK_MAKE_TOOL_FAILED, r);
        if (r < 0)
                return fail(res, PACK_MAKE_TOOL_RUN, r);
        return 0;
}

/* Made in a directory of readset's own beside out, renamed over it once
 * whole: never written through a symlink, never half there. */
int pack_make(const struct pack_make_options *o, struct readset *p, struct pack_make_result *res)
{
        _cleanup_free_ char *dir = NULL, *img = NULL, *sort = NULL;
        struct stat st;
        int r;

        *res = (struct pack_make_result){
                .tool = o->image == PACK_EROFS ? "mkfs.erofs" : "mksquashfs",
                .package = o->image == PACK_EROFS ? "erofs-utils" : "squashfs-tools",
        };
        if (pack_inside_tree(o->out, o->root))
                return fail(res, PACK_MAKE_INSIDE, -EINVAL);
        r = pack_private_dir_beside(o->out, &dir);
        if (r < 0)
                return fail(res, PACK_MAKE_PRIVATE_DIR, r);
        /* (asprintf leaves its pointer undefined when it fails) */
        if (asprintf(&img, "%s/image", dir) < 0)
                img = NULL;
        if (asprintf(&sort, "%s/sort", dir) < 0)
                sort = NULL;
        if (asprintf(&res->side, "%s.readset", o->out) < 0)
                res->side = NULL;
        if (!img || !sort || !res->side) {
                r = fail(res, PACK_MAKE_PATHS, -ENOMEM);
                goto out;
        }
        {
                const void *w[2] = { p, o->root };
                r = write_file_atomic(sort, 0600, write_sort, (void *)w);
                if (r < 0) {
                        fail(res, PACK_MAKE_SORT, r);
                        goto out;
                }
        }
        r = set_epoch(o, res);
        if (r >= 0)
                r = build(o, p, img, sort, res);
        if (r < 0)
                goto out;
        /* (spans of an image made before from the same read set are not
         * this one's) */
        rs_image_free(p->image);
        p->image = NULL;
        /* where in the image the start's bytes lie, for a replay of the
         * image itself (squashfs; metadata that readset can read) */
        if (o->image == PACK_SQUASHFS) {
                r = pack_image_spans(img, p, &p->image);
                if (r == -EOPNOTSUPP)
                        res->files_only = true;
                else if (r < 0) {
                        fail(res, PACK_MAKE_READ_BACK, r);
                        goto out;
                }
        }
        /* the read set first: an image is never there without its read set */
        r = format_write(p, res->side);
        if (r < 0) {
                fail(res, PACK_MAKE_WRITE_READSET, r);
                goto out;
        }
        if (rename(img, o->out) < 0) {
                r = fail(res, PACK_MAKE_RENAME, -errno);
                goto out;
        }
        if (stat(o->out, &st) == 0) {
                res->have_size = true;
                res->size = (uint64_t)st.st_size;
        }
        res->ordered = o->image == PACK_SQUASHFS ? MIN(p->n_files, (size_t)PACK_DISTINCT_PRIORITIES) : 0;
        r = 0;
out:
        if (img)
                (void)unlink(img);
        if (sort)
                (void)unlink(sort);
        if (dir)
                (void)rmdir(dir);
        return r;
}

void pack_make_result_done(struct pack_make_result *res)
{
        free(res->side);
        res->side = NULL;
}
