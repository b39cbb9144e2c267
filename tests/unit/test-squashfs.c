/* SPDX-License-Identifier: MIT */
/* The squashfs reader (pack/squashfs.h) and the image's spans a start reads
 * (pack/image.h's pack_image_spans), on images mksquashfs builds here: in
 * one whose data is stored uncompressed, a file's spans hold its very
 * bytes.  Skipped where mksquashfs is not installed. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "pack/image.h"
#include "pack/squashfs.h"
#include "tests.h"
#include "util/child.h"
#include "util/util.h"

#define BLOCK 131072u   /* mksquashfs's default block size */

static char dir[] = "/tmp/readset-test-squashfs.XXXXXX";
static char tree[128], big[160], small[160], deep[160], sub[160];
static uint8_t *big_data;

static void write_bytes(const char *path, const void *p, size_t n)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(write(fd, p, n), (long long)n);
                close(fd);
        }
}

/* mksquashfs tree out, and what more is asked: 0, or -ENOENT when it is
 * not installed. */
static int build(const char *out, const char *more1, const char *more2, const char *more3, const char *more4)
{
        char *argv[16] = { (char *)"mksquashfs", tree, (char *)out, (char *)"-noappend", (char *)"-quiet",
                           (char *)"-no-progress", (char *)"-no-xattrs", (char *)"-mkfs-time", (char *)"0" };
        const char *more[] = { more1, more2, more3, more4 };
        int n = 9;

        for (size_t i = 0; i < ARRAY_SIZE(more) && more[i]; i++)
                argv[n++] = (char *)more[i];
        return child_run(argv, NULL, 0, true, 0);
}

/* The image's bytes [off, off + len), NULL when unreadable. */
static uint8_t *image_bytes(const char *img, uint64_t off, uint64_t len)
{
        uint8_t *p = malloc(len ? len : 1);
        int fd = open(img, O_RDONLY | O_CLOEXEC);

        if (!p || fd < 0 || pread(fd, p, len, (off_t)off) != (ssize_t)len) {
                free(p);
                p = NULL;
        }
        if (fd >= 0)
                close(fd);
        return p;
}

/* Data stored as it is: a file's spans hold its bytes, in file order. */
static void test_spans_hold_the_bytes(const char *img)
{
        _cleanup_sqfs_ struct sqfs *s = NULL;
        struct rs_span *v = NULL;
        size_t n = 0, cap = 0, total = 0;
        uint8_t *bytes;
        uint64_t t0 = 0, t1 = 0;
        struct stat st;

        CHECK_EQ(sqfs_open(img, &s), 0);
        if (!s)
                return;
        CHECK_EQ(stat(img, &st), 0);
        sqfs_tables(s, &t0, &t1);
        CHECK(t0 < t1);
        CHECK(t1 <= (uint64_t)st.st_size);

        /* one page of the second block: that block, whole */
        CHECK_EQ(sqfs_file_spans(s, "/big", BLOCK, 4096, &v, &n, &cap), 0);
        CHECK_EQ(n, 1);
        if (n == 1) {
                CHECK_EQ(v[0].length, BLOCK);
                bytes = image_bytes(img, v[0].offset, v[0].length);
                CHECK(bytes && memcmp(bytes, big_data + BLOCK, BLOCK) == 0);
                free(bytes);
        }
        /* all of it, appended after what is there */
        CHECK_EQ(sqfs_file_spans(s, "/big", 0, 3 * BLOCK, &v, &n, &cap), 0);
        CHECK_EQ(n, 2);         /* (its blocks lie one after the other: one span) */
        for (size_t i = 1; i < n; i++) {
                bytes = image_bytes(img, v[i].offset, v[i].length);
                CHECK(bytes && total + v[i].length <= 3 * BLOCK && memcmp(bytes, big_data + total, v[i].length) == 0);
                free(bytes);
                total += v[i].length;
        }
        CHECK_EQ(total, 3 * BLOCK);

        /* a small file's bytes: within its fragment block */
        n = 0;
        CHECK_EQ(sqfs_file_spans(s, "/small", 0, 4096, &v, &n, &cap), 0);
        CHECK_EQ(n, 1);
        if (n == 1) {
                bytes = image_bytes(img, v[0].offset, v[0].length);
                CHECK(bytes && memmem(bytes, v[0].length, "small file's bytes", 18) != NULL);
                free(bytes);
        }
        /* below a directory */
        n = 0;
        CHECK_EQ(sqfs_file_spans(s, "/sub/deep", 0, 4096, &v, &n, &cap), 0);
        CHECK_EQ(n, 1);
        if (n == 1) {
                bytes = image_bytes(img, v[0].offset, v[0].length);
                CHECK(bytes && memmem(bytes, v[0].length, "deep down", 9) != NULL);
                free(bytes);
        }
        /* not a regular file of the image */
        n = 0;
        CHECK_EQ(sqfs_file_spans(s, "/none", 0, 4096, &v, &n, &cap), -ENOENT);
        CHECK_EQ(sqfs_file_spans(s, "/sub", 0, 4096, &v, &n, &cap), -ENOENT);
        CHECK_EQ(sqfs_file_spans(s, "/big/x", 0, 4096, &v, &n, &cap), -ENOENT);
        CHECK_EQ(n, 0);
        free(v);
}

/* A portable read set of big's first page and small, as pack gives it. */
static struct readset *portable(bool with_missing)
{
        struct readset *p = readset_new();
        struct rs_file *f;

        CHECK(p != NULL);
        if (!p)
                return NULL;
        p->rec_flags = RS_REC_PORTABLE;
        if ((f = readset_add_file(p, "/big", 0, 0)))
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 0, RS_RANGE_ACCESSED), 0);
        if ((f = readset_add_file(p, "/small", 0, 0)))
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 1, RS_RANGE_ACCESSED), 0);
        if (with_missing && (f = readset_add_file(p, "/gone", 0, 0)))
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 2, RS_RANGE_ACCESSED), 0);
        return p;
}

/* The tables first, then the data by position, merged across small gaps;
 * the image's size, head and the spans' digest with them. */
static void test_image_spans(const char *img)
{
        _cleanup_readset_ struct readset *p = portable(false), *bad = portable(true);
        struct rs_image *im = NULL;
        struct content_sum sum;
        uint8_t *head;
        uint64_t t0 = 0, t1 = 0;
        struct stat st;
        int fd;

        if (!p || !bad)
                return;
        CHECK_EQ(pack_image_spans(img, p, &im), 0);
        if (!im)
                return;
        CHECK_EQ(stat(img, &st), 0);
        CHECK_EQ(im->size, st.st_size);
        head = image_bytes(img, 0, 4096);
        CHECK(head != NULL);
        if (head) {
                CHECK_EQ(checksum_buf(head, 4096, &sum), 0);
                CHECK(memcmp(im->head, sum.d, sizeof(im->head)) == 0);
                free(head);
        }
        CHECK(im->n_spans >= 1);
        {
                _cleanup_sqfs_ struct sqfs *s = NULL;
                CHECK_EQ(sqfs_open(img, &s), 0);
                if (s)
                        sqfs_tables(s, &t0, &t1);
        }
        CHECK_EQ(im->spans[0].offset, t0);
        CHECK(im->spans[0].length >= t1 - t0);
        for (size_t i = 0; i < im->n_spans; i++)
                CHECK(im->spans[i].offset + im->spans[i].length <= im->size);
        for (size_t i = 2; i < im->n_spans; i++)
                CHECK(im->spans[i].offset > im->spans[i - 1].offset + im->spans[i - 1].length + PACK_SPAN_GAP);
        fd = open(img, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(checksum_spans(fd, im->spans, im->n_spans, &sum), 0);
                CHECK(memcmp(im->digest, sum.d, sizeof(im->digest)) == 0);
                close(fd);
        }
        rs_image_free(im);
        im = NULL;
        /* a file the image does not hold */
        CHECK_EQ(pack_image_spans(img, bad, &im), -ENOENT);
        CHECK(im == NULL);
}

static void test_not_an_image(const char *path, const char *img)
{
        struct sqfs *s = NULL;
        uint64_t t0 = 0, t1 = 0;
        uint8_t junk[8192], *head;

        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (uint8_t)(i * 7 + 3);
        write_bytes(path, junk, sizeof(junk));
        CHECK_EQ(sqfs_open(path, &s), -EBADMSG);
        CHECK_EQ(sqfs_open(img, &s), 0);
        if (s)
                sqfs_tables(s, &t0, &t1);
        sqfs_close(s);
        s = NULL;
        CHECK(t1 > 4096);
        /* an image cut short: its superblock says more than there is */
        head = image_bytes(img, 0, 4096);
        CHECK(head != NULL);
        if (head) {
                write_bytes(path, head, 4096);
                CHECK_EQ(sqfs_open(path, &s), -EBADMSG);
                free(head);
        }
        /* ... or by a byte only */
        head = image_bytes(img, 0, t1 - 1);
        CHECK(head != NULL);
        if (head) {
                write_bytes(path, head, t1 - 1);
                CHECK_EQ(sqfs_open(path, &s), -EBADMSG);
                free(head);
        }
        sqfs_close(s);
        unlink(path);
}

int main(void)
{
        char plain[160], gz[160], junk[160], xz[160], lz4[160], lzo[160];
        _cleanup_sqfs_ struct sqfs *s = NULL;
        bool skip = false;
        int r;

        unsetenv("SOURCE_DATE_EPOCH");  /* (mksquashfs then refuses -mkfs-time) */
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        snprintf(tree, sizeof(tree), "%s/tree", dir);
        snprintf(big, sizeof(big), "%s/big", tree);
        snprintf(small, sizeof(small), "%s/small", tree);
        snprintf(sub, sizeof(sub), "%s/sub", tree);
        snprintf(deep, sizeof(deep), "%s/sub/deep", tree);
        snprintf(plain, sizeof(plain), "%s/plain.img", dir);
        snprintf(gz, sizeof(gz), "%s/gzip.img", dir);
        snprintf(xz, sizeof(xz), "%s/xz.img", dir);
        snprintf(lz4, sizeof(lz4), "%s/lz4.img", dir);
        snprintf(lzo, sizeof(lzo), "%s/lzo.img", dir);
        snprintf(junk, sizeof(junk), "%s/junk.img", dir);
        CHECK_EQ(mkdir(tree, 0755), 0);
        CHECK_EQ(mkdir(sub, 0755), 0);
        big_data = malloc(3 * BLOCK);
        CHECK(big_data != NULL);
        if (!big_data)
                goto out;
        /* every block unlike the others */
        for (size_t i = 0; i < 3 * BLOCK; i++)
                big_data[i] = (uint8_t)((i * 2654435761u) >> 11);
        write_bytes(big, big_data, 3 * BLOCK);
        write_bytes(small, "the small file's bytes", 22);
        write_bytes(deep, "deep down", 9);

        r = build(plain, "-noI", "-noD", "-noF", NULL);
        if (r == -ENOENT) {
                skip = true;
                goto out;
        }
        CHECK_EQ(r, 0);
        test_spans_hold_the_bytes(plain);
        CHECK_EQ(build(gz, "-comp", "gzip", NULL, NULL), 0);
        test_image_spans(gz);
        test_not_an_image(junk, gz);
        /* every compressor pack writes is read back */
        CHECK_EQ(build(xz, "-comp", "xz", NULL, NULL), 0);
        test_image_spans(xz);
        CHECK_EQ(build(lz4, "-comp", "lz4", NULL, NULL), 0);
        test_image_spans(lz4);
        /* metadata compressed with what readset cannot read */
        if (build(lzo, "-comp", "lzo", NULL, NULL) == 0)
                CHECK_EQ(sqfs_open(lzo, &s), -EOPNOTSUPP);
out:
        free(big_data);
        unlink(plain);
        unlink(gz);
        unlink(xz);
        unlink(lz4);
        unlink(lzo);
        unlink(big);
        unlink(small);
        unlink(deep);
        rmdir(sub);
        rmdir(tree);
        rmdir(dir);
        if (skip)
                TEST_SKIP("mksquashfs is not installed");
        TESTS_DONE();
}
