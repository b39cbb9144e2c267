/* SPDX-License-Identifier: MIT */
#include "pack/image.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/child.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

static const char *const compress_names[_PACK_COMPRESS_MAX] = {
        [PACK_ZSTD] = "zstd", [PACK_XZ] = "xz", [PACK_LZ4] = "lz4", [PACK_GZIP] = "gzip",
};

int pack_image_from_name(const char *s)
{
        if (strcmp(s, "squashfs") == 0)
                return PACK_SQUASHFS;
        if (strcmp(s, "erofs") == 0)
                return PACK_EROFS;
        return -EINVAL;
}

int pack_compress_from_name(const char *s)
{
        for (int i = 0; i < _PACK_COMPRESS_MAX; i++)
                if (strcmp(s, compress_names[i]) == 0)
                        return i;
        return -EINVAL;
}

const char *pack_compress_name(enum pack_compress c)
{
        return c < _PACK_COMPRESS_MAX ? compress_names[c] : "?";
}

/* mksquashfs reads a name up to the first blank, a backslash taking the
 * next character as it is; a line starting with # is a comment */
static int put_escaped(FILE *f, const char *s, bool at_start)
{
        for (; *s; s++, at_start = false) {
                if (isspace((unsigned char)*s) || *s == '\\' || (at_start && *s == '#'))
                        if (fputc('\\', f) == EOF)
                                return -EIO;
                if (fputc(*s, f) == EOF)
                        return -EIO;
        }
        return 0;
}

int pack_order_write(FILE *f, const struct readset *p, const char *prefix, struct pack_order_counts *c)
{
        long prio = PACK_DISTINCT_PRIORITIES;

        *c = (struct pack_order_counts){ 0 };
        for (size_t i = 0; i < p->n_files; i++) {
                /* relative names: without the leading slash */
                const char *name = p->files[i].path + (prefix[0] ? 0 : 1);

                if (strchr(name, '\n')) {
                        c->unnamable++;
                        continue;
                }
                if (put_escaped(f, prefix, true) < 0 || put_escaped(f, name, !prefix[0]) < 0 ||
                    fprintf(f, " %ld\n", prio) < 0)
                        return -EIO;
                c->listed++;
                if (prio > 1)
                        prio--;
        }
        return ferror(f) ? -EIO : 0;
}

static int run(char **argv)
{
        int r = child_run(argv, NULL, 0, false, 0);

        if (r == -ENOENT)
                return r;
        if (r < 0)
                return log_errno(r, "cannot run %s", argv[0]);
        return r == 0 ? 0 : -EIO;
}

int pack_build_image(const struct pack_build *b)
{
        char when[32], comp[32], uuid[40];

        snprintf(when, sizeof(when), "%u", b->mkfs_time);
        if (b->image == PACK_SQUASHFS) {
                char *argv[] = { "mksquashfs", (char *)b->tree, (char *)b->out, "-noappend", "-quiet", "-no-progress",
                                 "-reproducible", "-mkfs-time", when, "-comp", (char *)pack_compress_name(b->compress),
                                 "-sort", (char *)b->sort_file, NULL };
                if (!b->sort_file)
                        argv[11] = NULL;
                return run(argv);
        }
        /* erofs-utils 1.5: lz4 alone (lz4hc: the same decompressor, better packed) */
        if (b->compress != PACK_LZ4)
                return -EINVAL;
        snprintf(comp, sizeof(comp), "-zlz4hc");
        snprintf(uuid, sizeof(uuid), "-U%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b->uuid[0], b->uuid[1], b->uuid[2], b->uuid[3], b->uuid[4], b->uuid[5], b->uuid[6], b->uuid[7],
                 b->uuid[8], b->uuid[9], b->uuid[10], b->uuid[11], b->uuid[12], b->uuid[13], b->uuid[14], b->uuid[15]);
        {
                /* (no -T: it sets every file's time; the build's comes from
                 * SOURCE_DATE_EPOCH, which the caller sets) */
                char *argv[] = { "mkfs.erofs", "--quiet", comp, uuid, (char *)b->out, (char *)b->tree, NULL };
                return run(argv);
        }
}
