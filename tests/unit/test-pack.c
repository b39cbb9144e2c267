/* SPDX-License-Identifier: MIT */
/* Portable read sets and the sort file (pack/portable.h, pack/image.h):
 * what a read set becomes below a root, bound again to another, and the
 * order mksquashfs is given. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "pack/image.h"
#include "pack/portable.h"
#include "tests.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-pack.XXXXXX";

/* path as a recording would name it now. */
static struct rs_file *add_recorded(struct readset *rs, const char *path)
{
        struct stat st;
        struct rs_file *f;

        CHECK_EQ(stat(path, &st), 0);
        f = readset_add_file(rs, path, st.st_dev, st.st_ino);
        CHECK(f != NULL);
        if (f) {
                f->size = (uint64_t)st.st_size;
                f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        }
        return f;
}

static void test_make(void)
{
        char a[128], b[128], c[128], gone[128], root[128];
        _cleanup_readset_ struct readset *rs = readset_new(), *p = NULL;
        struct portable_counts n;
        struct content_sum want;
        char page[4096];
        struct rs_file *f;

        CHECK(rs != NULL);
        if (!rs)
                return;
        snprintf(a, sizeof(a), "%s/tree/a", dir);
        snprintf(b, sizeof(b), "%s/tree/b", dir);
        snprintf(c, sizeof(c), "%s/outside", dir);
        snprintf(gone, sizeof(gone), "%s/tree/gone", dir);
        snprintf(page, sizeof(page), "%s/tree", dir);
        CHECK_EQ(mkdir(page, 0755), 0);
        test_fill_file(a, 3 * 4096, 'a');
        test_fill_file(b, 4096, 'b');
        test_fill_file(c, 4096, 'c');
        test_fill_file(gone, 4096, 'g');
        rs->page_size = 4096;
        rs->rec_flags = RS_REC_COLD;
        /* a: read at its second page, read ahead at its third */
        if ((f = add_recorded(rs, a))) {
                CHECK_EQ(readset_file_add_range(f, 4096, 4096, 10, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
                CHECK_EQ(readset_file_add_range(f, 8192, 4096, 11, RS_RANGE_FILLED), 0);
        }
        /* b: only read ahead */
        if ((f = add_recorded(rs, b)))
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 12, RS_RANGE_FILLED), 0);
        if ((f = add_recorded(rs, c)))
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 13, RS_RANGE_ACCESSED), 0);
        if ((f = add_recorded(rs, gone)))
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 14, RS_RANGE_ACCESSED), 0);
        unlink(gone);
        if ((f = readset_add_file(rs, "/dev/vda", 0, 0))) {
                f->kind = RS_FILE_BLOCKDEV;
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 15, RS_RANGE_ACCESSED), 0);
        }
        snprintf(root, sizeof(root), "%s/tree/", dir);
        CHECK_EQ(portable_make(rs, "tree", -1, &p, &n), -EINVAL);
        CHECK_EQ(portable_make(rs, root, -1, &p, &n), 0);
        if (!p)
                goto out;
        CHECK(readset_is_portable(p));
        CHECK(p->rec_flags & RS_REC_COLD);
        CHECK_EQ(n.files, 1);
        CHECK_EQ(n.not_read, 1);
        CHECK_EQ(n.outside, 1);
        CHECK_EQ(n.unusable, 1);
        CHECK_EQ(n.not_files, 1);
        CHECK_EQ(p->n_files, 1);
        if (p->n_files != 1)
                goto out;
        f = &p->files[0];
        CHECK(strcmp(f->path, "/a") == 0);
        CHECK(f->flags & RS_FILE_BY_CONTENT);
        CHECK_EQ(f->dev, 0);
        CHECK_EQ(f->ino, 0);
        CHECK_EQ(f->size, 3 * 4096);
        CHECK_EQ(f->mtime_ns % 1000000000LL, 0);
        /* the page read, not the one read ahead */
        CHECK_EQ(f->n_ranges, 1);
        CHECK_EQ(f->ranges[0].offset, 4096);
        memset(page, 'a', sizeof(page));
        CHECK_EQ(checksum_buf(page, sizeof(page), &want), 0);
        CHECK(memcmp(f->content, want.d, sizeof(f->content)) == 0);
        CHECK_EQ(readset_validate(p), 0);
        readset_free(p);
        p = NULL;

        /* mtimes after the clamp are the clamp's */
        CHECK_EQ(portable_make(rs, root, 1000, &p, &n), 0);
        if (p && p->n_files == 1)
                CHECK_EQ(p->files[0].mtime_ns, 1000 * 1000000000LL);
out:
        unlink(a);
        unlink(b);
        unlink(c);
        rmdir(root);
}

/* Bound to a root: its paths joined to it, its files on its device. */
static void test_bind(void)
{
        _cleanup_readset_ struct readset *p = readset_new();
        struct rs_file *f;

        CHECK(p != NULL);
        if (!p)
                return;
        p->rec_flags = RS_REC_PORTABLE;
        f = readset_add_file(p, "/usr/bin/x", 0, 0);
        CHECK(f != NULL);
        CHECK_EQ(readset_add_lookup(p, 0, RS_LOOKUP_OPEN, 0, 1, "/usr/lib"), 0);
        CHECK_EQ(portable_bind(p, "/mnt/img/", 42), 0);
        CHECK(strcmp(p->files[0].path, "/mnt/img/usr/bin/x") == 0);
        CHECK_EQ(p->files[0].dev, 42);
        CHECK(strcmp(p->lookups[0].path, "/mnt/img/usr/lib") == 0);
        /* "/" and none: as it is */
        CHECK_EQ(portable_bind(p, "/", 7), 0);
        CHECK(strcmp(p->files[0].path, "/mnt/img/usr/bin/x") == 0);
        CHECK_EQ(p->files[0].dev, 7);
        CHECK_EQ(portable_bind(p, NULL, 8), 0);
        CHECK(strcmp(p->files[0].path, "/mnt/img/usr/bin/x") == 0);
}

/* The sort file's text for p, prefix. */
static char *order_text(const struct readset *p, const char *prefix, struct pack_order_counts *c, int *r)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        CHECK(f != NULL);
        if (!f)
                return NULL;
        *r = pack_order_write(f, p, prefix, c);
        fclose(f);
        return text;
}

static void test_order(void)
{
        _cleanup_readset_ struct readset *p = readset_new();
        struct pack_order_counts c;
        char *text;
        int r = -1;

        CHECK(p != NULL);
        if (!p)
                return;
        CHECK(readset_add_file(p, "/usr/bin/x", 0, 0) != NULL);
        CHECK(readset_add_file(p, "/a b\\c", 0, 0) != NULL);
        CHECK(readset_add_file(p, "/new\nline", 0, 0) != NULL);
        CHECK(readset_add_file(p, "/#hash", 0, 0) != NULL);
        text = order_text(p, "", &c, &r);
        CHECK_EQ(r, 0);
        CHECK(text && strcmp(text, "usr/bin/x 32767\na\\ b\\\\c 32766\n\\#hash 32765\n") == 0);
        CHECK_EQ(c.listed, 3);
        CHECK_EQ(c.unnamable, 1);
        free(text);
        /* the tree's path before each (a # inside a name is no comment) */
        text = order_text(p, "/srv/#t", &c, &r);
        CHECK_EQ(r, 0);
        CHECK(text && strncmp(text, "/srv/#t/usr/bin/x 32767\n", 24) == 0);
        CHECK(text && strstr(text, "/srv/#t/#hash 32765\n") != NULL);
        free(text);
}

/* Past the distinct priorities, the rest share 1. */
static void test_order_many(void)
{
        _cleanup_readset_ struct readset *p = readset_new();
        struct pack_order_counts c;
        char name[32], *text, *last;
        int r = -1;

        CHECK(p != NULL);
        if (!p)
                return;
        for (int i = 0; i < PACK_DISTINCT_PRIORITIES + 2; i++) {
                snprintf(name, sizeof(name), "/f%d", i);
                CHECK(readset_add_file(p, name, 0, 0) != NULL);
        }
        text = order_text(p, "", &c, &r);
        CHECK_EQ(r, 0);
        CHECK_EQ(c.listed, PACK_DISTINCT_PRIORITIES + 2);
        if (text) {
                CHECK(strstr(text, "f32766 1\n") != NULL);
                last = strrchr(text, 'f');
                CHECK(last && strcmp(last, "f32768 1\n") == 0);
        }
        free(text);
}

static void test_names(void)
{
        for (int i = 0; i < _PACK_COMPRESS_MAX; i++)
                CHECK_EQ(pack_compress_from_name(pack_compress_name((enum pack_compress)i)), i);
        CHECK_EQ(pack_compress_from_name("zstd"), PACK_ZSTD);
        CHECK(pack_compress_from_name("lzma") < 0);
        CHECK_EQ(pack_image_from_name("squashfs"), PACK_SQUASHFS);
        CHECK_EQ(pack_image_from_name("erofs"), PACK_EROFS);
        CHECK(pack_image_from_name("ext4") < 0);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        test_bind();
        test_order();
        test_order_many();
        test_names();
        if (checksum_available() == 0)
                test_make();
        else
                printf("portable_make not tried: no libcrypto\n");
        rmdir(dir);
        TESTS_DONE();
}
