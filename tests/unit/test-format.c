/* SPDX-License-Identifier: MIT */
/* format.c: round trip, and every kind of damage gives one clean error. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "model/format.h"
#include "model/readset.h"
#include "util/util.h"
#include "tests.h"
#include "util/trust.h"

static struct readset *sample(size_t nfiles, size_t nranges)
{
        struct readset *rs = readset_new();
        char path[64];

        rs->command = strdup("clang -O2 -c x.c");
        rs->created_unix = 1790000000;
        rs->duration_us = 412345;
        rs->page_size = 4096;
        rs->rec_flags = RS_REC_COLD | RS_REC_LOOKUPS;
        rs->events = 12345;
        rs->lost_events = 3;
        for (size_t i = 0; i < nfiles; i++) {
                struct rs_file *f;
                snprintf(path, sizeof(path), "/usr/lib/file-%zu.so", i);
                f = readset_add_file(rs, path, 0xfe01, 1000 + i);
                f->size = 1 << 20;
                f->mtime_ns = -5 + (int64_t)i;
                f->kind = i % 3 == 0 ? RS_FILE_REGULAR : i % 3 == 1 ? RS_FILE_BLOCKDEV : RS_FILE_UNRESOLVED;
                f->flags = i % 2 ? RS_FILE_DELETED : 0;
                for (size_t j = 0; j < nranges; j++)
                        readset_file_add_range(f, (nranges - j) * 8192, 4096 * (j + 1), i * 10 + j,
                                               j % 2 ? RS_RANGE_ACCESSED : RS_RANGE_FILLED);
        }
        readset_add_lookup(rs, 5, RS_LOOKUP_OPEN, 0, 42, "/etc/ld.so.cache");
        readset_add_lookup(rs, 7, RS_LOOKUP_STAT, -ENOENT, 42, "/usr/lib/python3/nothere.py");
        readset_add_lookup(rs, 6, RS_LOOKUP_READDIR, 0, 43, "/usr/lib");   /* time may go back */
        return rs;
}

static void check_equal(const struct readset *a, const struct readset *b)
{
        CHECK(strcmp(a->command, b->command) == 0);
        CHECK_EQ(a->created_unix, b->created_unix);
        CHECK_EQ(a->duration_us, b->duration_us);
        CHECK_EQ(a->page_size, b->page_size);
        CHECK_EQ(a->rec_flags, b->rec_flags);
        CHECK_EQ(a->events, b->events);
        CHECK_EQ(a->lost_events, b->lost_events);
        CHECK_EQ(a->n_files, b->n_files);
        for (size_t i = 0; i < a->n_files && i < b->n_files; i++) {
                const struct rs_file *x = &a->files[i], *y = &b->files[i];
                CHECK(strcmp(x->path, y->path) == 0);
                CHECK_EQ(x->dev, y->dev);
                CHECK_EQ(x->ino, y->ino);
                CHECK_EQ(x->size, y->size);
                CHECK_EQ(x->mtime_ns, y->mtime_ns);
                CHECK_EQ(x->kind, y->kind);
                CHECK_EQ(x->flags, y->flags);
                CHECK_EQ(x->n_ranges, y->n_ranges);
                for (size_t j = 0; j < x->n_ranges && j < y->n_ranges; j++) {
                        CHECK_EQ(x->ranges[j].offset, y->ranges[j].offset);
                        CHECK_EQ(x->ranges[j].length, y->ranges[j].length);
                        CHECK_EQ(x->ranges[j].time_us, y->ranges[j].time_us);
                        CHECK_EQ(x->ranges[j].flags, y->ranges[j].flags);
                }
        }
        CHECK_EQ(a->n_lookups, b->n_lookups);
        for (size_t i = 0; i < a->n_lookups && i < b->n_lookups; i++) {
                CHECK(strcmp(a->lookups[i].path, b->lookups[i].path) == 0);
                CHECK_EQ(a->lookups[i].time_us, b->lookups[i].time_us);
                CHECK_EQ(a->lookups[i].op, b->lookups[i].op);
                CHECK_EQ(a->lookups[i].result, b->lookups[i].result);
                CHECK_EQ(a->lookups[i].pid, b->lookups[i].pid);
        }
}

static void test_round_trip(void)
{
        struct readset *rs = sample(7, 5), *back = NULL;
        uint8_t *buf = NULL;
        size_t len = 0;
        const char *why = NULL;

        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), 0);
        CHECK(why == NULL);
        if (back)
                check_equal(rs, back);
        readset_free(back);
        free(buf);
        readset_free(rs);
}

/* Where libzstd.so cannot be opened the payload is stored as it is: the
 * same read set back, the header's flag clear and raw_len == stored_len;
 * where it can (every Debian system), compressed. */
static void test_uncompressed(void)
{
        struct readset *rs = sample(7, 5), *back = NULL;
        uint8_t *raw = NULL, *z = NULL;
        size_t raw_len = 0, z_len = 0;

        CHECK_EQ(format_encode_as(rs, false, &raw, &raw_len), 0);
        CHECK(raw_len > FORMAT_HEADER_SIZE && raw[12] == 0);
        CHECK_EQ(format_decode(raw, raw_len, &back, NULL), 0);
        if (back)
                check_equal(rs, back);
        readset_free(back);
        CHECK(format_compresses());
        CHECK_EQ(format_encode(rs, &z, &z_len), 0);
        CHECK(z_len > FORMAT_HEADER_SIZE && z[12] == 1);
        CHECK(z_len < raw_len);
        free(raw);
        free(z);
        readset_free(rs);
}

static void test_empty(void)
{
        struct readset *rs = readset_new(), *back = NULL;
        uint8_t *buf = NULL;
        size_t len = 0;

        rs->page_size = 4096;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, NULL), 0);
        CHECK(back && back->n_files == 0 && back->n_lookups == 0);
        readset_free(back);
        free(buf);
        readset_free(rs);
}

/* Recompute both checksums after editing the payload, so that the parser's
 * structural checks (not just the CRC) are exercised. */
static void refresh_header(uint8_t *buf, size_t len)
{
        uLong c = crc32(0L, Z_NULL, 0);
        (void)len;
        c = crc32(c, buf, 36);
        for (int i = 0; i < 4; i++)
                buf[36 + i] = (uint8_t)(c >> (8 * i));
}

static void test_corruption(void)
{
        struct readset *rs = sample(3, 4), *back = NULL;
        uint8_t *buf = NULL, *copy;
        size_t len = 0;
        const char *why;
        int r;

        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        copy = malloc(len);

        /* Every truncation. */
        for (size_t n = 0; n < len; n++) {
                why = NULL;
                r = format_decode(buf, n, &back, &why);
                CHECK(r < 0);
                CHECK(why != NULL);
                CHECK(back == NULL);
        }
        /* Every single-byte change. */
        for (size_t i = 0; i < len; i++) {
                memcpy(copy, buf, len);
                copy[i] ^= 0x5a;
                r = format_decode(copy, len, &back, &why);
                CHECK(r < 0);
                if (r == 0) {
                        fprintf(stderr, "byte %zu flip accepted\n", i);
                        readset_free(back);
                        back = NULL;
                }
        }
        /* Trailing garbage. */
        {
                uint8_t *big = malloc(len + 1);
                memcpy(big, buf, len);
                big[len] = 0;
                CHECK_EQ(format_decode(big, len + 1, &back, &why), -EBADMSG);
                free(big);
        }
        /* Foreign file. */
        CHECK_EQ(format_decode((const uint8_t *)"\x7f" "ELF\2\1\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                               40, &back, &why), -ENOMSG);
        /* A future major version, with a valid header checksum. */
        memcpy(copy, buf, len);
        copy[8] = FORMAT_MAJOR + 1;
        refresh_header(copy, len);
        CHECK_EQ(format_decode(copy, len, &back, &why), -EPROTONOSUPPORT);
        CHECK(why && strstr(why, "newer"));
        /* A huge declared size, with a valid header checksum. */
        memcpy(copy, buf, len);
        copy[23] = 0x7f;
        refresh_header(copy, len);
        CHECK_EQ(format_decode(copy, len, &back, &why), -EBADMSG);

        free(copy);
        free(buf);
        readset_free(rs);
}

/* A read set the size of a boot: 100 000 ranges stays compact. */
static void test_big(void)
{
        struct readset *rs = sample(1000, 100), *back = NULL;
        uint8_t *buf = NULL;
        size_t len = 0;

        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK(len < 100000 * 8);
        CHECK_EQ(format_decode(buf, len, &back, NULL), 0);
        if (back)
                check_equal(rs, back);
        readset_free(back);
        free(buf);
        readset_free(rs);
}

static void test_file_io(void)
{
        char dir[] = "/tmp/readset-test-XXXXXX", path[128];
        struct readset *rs = sample(2, 2), *back = NULL;
        char why[256];
        FILE *f;

        if (!mkdtemp(dir))
                TEST_SKIP("cannot create a temporary directory");
        snprintf(path, sizeof(path), "%s/x.readset", dir);
        CHECK_EQ(format_write(rs, path), 0);
        CHECK_EQ(format_read(path, &back, why, sizeof(why)), 0);
        if (back)
                check_equal(rs, back);
        readset_free(back);
        back = NULL;
        CHECK_EQ(format_read(dir, &back, why, sizeof(why)), -EISDIR);
        f = fopen(path, "w");
        fputs("hello", f);
        fclose(f);
        CHECK_EQ(format_read(path, &back, why, sizeof(why)), -ENOMSG);
        unlink(path);
        CHECK_EQ(format_read(path, &back, why, sizeof(why)), -ENOENT);
        rmdir(dir);
        readset_free(rs);
}

static void write_bytes(const char *path, const uint8_t *buf, size_t len)
{
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (!f)
                return;
        CHECK_EQ(fwrite(buf, 1, len, f), len);
        fclose(f);
}

/* format_peek_main_file_buf(): the first regular file on the device most
 * bytes come from, which need not be the first file's; unknown (NULL) where
 * the files run past what the peek reads. */
static void test_peek_main(void)
{
        struct readset *rs = readset_new(), *big;
        struct rs_file *f;
        uint8_t *buf = NULL;
        size_t len = 0;
        char *got = NULL;
        const char *why = NULL;

        rs->page_size = 4096;
        f = readset_add_file(rs, "/usr/lib/libc.so.6", 0xfe01, 1);      /* solid state: small */
        f->kind = RS_FILE_REGULAR;
        readset_file_add_range(f, 0, 8192, 0, RS_RANGE_ACCESSED);
        f = readset_add_file(rs, "/dev/loop1", 0x701, 0x701);          /* the disk's metadata */
        f->kind = RS_FILE_BLOCKDEV;
        readset_file_add_range(f, 1 << 20, 4096, 1, RS_RANGE_FILLED);
        f = readset_add_file(rs, "7:1:99", 0x701, 99);                 /* unresolved: no path */
        f->kind = RS_FILE_UNRESOLVED;
        readset_file_add_range(f, 0, 4096, 2, RS_RANGE_ACCESSED);
        f = readset_add_file(rs, "/mnt/disk/py/lib/os.pyc", 0x701, 12);
        f->kind = RS_FILE_REGULAR;
        readset_file_add_range(f, 0, 4096, 3, RS_RANGE_ACCESSED);
        f = readset_add_file(rs, "/mnt/disk/py/bin/python3", 0x701, 13);
        f->kind = RS_FILE_REGULAR;
        readset_file_add_range(f, 0, 65536, 4, RS_RANGE_ACCESSED);
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_peek_first_file_buf(buf, len, &got, &why), 0);
        CHECK(got && strcmp(got, "/usr/lib/libc.so.6") == 0);
        free(got);
        CHECK_EQ(format_peek_main_file_buf(buf, len, &got, &why), 0);
        CHECK(got && strcmp(got, "/mnt/disk/py/lib/os.pyc") == 0);     /* the disk's first regular file */
        free(got);
        free(buf);
        /* more bytes on solid state: its file */
        readset_file_add_range(&rs->files[0], 1 << 20, 1 << 20, 5, RS_RANGE_ACCESSED);
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_peek_main_file_buf(buf, len, &got, &why), 0);
        CHECK(got && strcmp(got, "/usr/lib/libc.so.6") == 0);
        free(got);
        free(buf);
        readset_free(rs);
        /* files past the peek's prefix: not known, no error */
        big = sample(30000, 4);
        CHECK_EQ(format_encode(big, &buf, &len), 0);
        CHECK_EQ(format_peek_main_file_buf(buf, len, &got, &why), 0);
        CHECK(got == NULL);
        CHECK_EQ(format_peek_first_file_buf(buf, len, &got, &why), 0);
        CHECK(got != NULL);
        free(got);
        free(buf);
        readset_free(big);
}

/* format_peek_first_file(): the first regular file's path, after the header
 * checks (and, for a payload of at most 256 KiB, all the reader's checks);
 * the rest of a longer payload is format_read()'s to check. */
static void test_peek(void)
{
        char dir[] = "/tmp/readset-test-XXXXXX", path[128];
        struct readset *rs = sample(3000, 20), *back = NULL;
        uint8_t *buf = NULL;
        size_t len = 0;
        char *first = NULL;
        char why[256];

        if (!mkdtemp(dir))
                TEST_SKIP("cannot create a temporary directory");
        snprintf(path, sizeof(path), "%s/x.readset", dir);
        CHECK_EQ(format_write(rs, path), 0);
        CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), 0);
        CHECK(first && strcmp(first, "/usr/lib/file-0.so") == 0);
        free(first);

        /* damage at the end of a payload longer than what the peek reads:
         * the peek does not see it, the reader does */
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK(get_le(buf + 16, 8) > 256 << 10);   /* raw_len: longer than the peek */
        buf[len - 1] ^= 0xff;
        write_bytes(path, buf, len);
        CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), 0);
        CHECK(first && strcmp(first, "/usr/lib/file-0.so") == 0);
        free(first);
        CHECK(format_read(path, &back, why, sizeof(why)) < 0);
        CHECK(back == NULL);

        /* a damaged header, a truncated file: the reader's errors */
        buf[20] ^= 0xff;
        write_bytes(path, buf, len);
        CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), -EBADMSG);
        CHECK(strstr(why, "header checksum"));
        buf[20] ^= 0xff;
        write_bytes(path, buf, 30);
        CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), -ENODATA);
        write_bytes(path, buf, len / 2);
        CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), -ENODATA);
        CHECK(strstr(why, "truncated"));
        free(buf);
        buf = NULL;

        /* a small payload is read whole, and checked whole */
        {
                struct readset *small = sample(4, 2);
                CHECK_EQ(format_encode(small, &buf, &len), 0);
                write_bytes(path, buf, len);
                CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), 0);
                CHECK(first && strcmp(first, "/usr/lib/file-0.so") == 0);
                free(first);
                for (size_t i = FORMAT_HEADER_SIZE; i < len; i++) {
                        /* any byte of the payload flipped: refused */
                        buf[i] ^= 0x5a;
                        write_bytes(path, buf, len);
                        CHECK(format_peek_first_file(path, &first, why, sizeof(why)) < 0);
                        CHECK(first == NULL);
                        buf[i] ^= 0x5a;
                }
                free(buf);
                buf = NULL;
                /* the first files unresolved or block devices: the first
                 * regular one is named; none at all: NULL, not an error */
                small->files[0].kind = RS_FILE_UNRESOLVED;
                small->files[1].kind = RS_FILE_BLOCKDEV;
                small->files[2].kind = RS_FILE_UNRESOLVED;
                small->files[3].kind = RS_FILE_REGULAR;
                CHECK_EQ(format_write(small, path), 0);
                CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), 0);
                CHECK(first && strcmp(first, "/usr/lib/file-3.so") == 0);
                free(first);
                small->files[3].kind = RS_FILE_BLOCKDEV;
                CHECK_EQ(format_write(small, path), 0);
                first = (char *)"x";
                CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), 0);
                CHECK(first == NULL);
                readset_free(small);
        }

        unlink(path);
        CHECK_EQ(format_peek_first_file(path, &first, why, sizeof(why)), -ENOENT);
        CHECK_EQ(format_peek_first_file(dir, &first, why, sizeof(why)), -EISDIR);
        rmdir(dir);
        readset_free(rs);
}

/* A portable read set: files known by content, their digests kept. */
static void test_portable(void)
{
        struct readset *rs = readset_new(), *back = NULL;
        uint8_t *buf = NULL;
        size_t len = 0;
        const char *why = NULL;

        rs->page_size = 4096;
        rs->rec_flags = RS_REC_PORTABLE;
        rs->command = strdup("start");
        for (int i = 0; i < 3; i++) {
                char path[32];
                struct rs_file *f;
                snprintf(path, sizeof(path), "/usr/lib/p%d", i);
                f = readset_add_file(rs, path, 0, 0);
                f->size = 8192;
                f->mtime_ns = 1700000000LL * 1000000000LL;
                f->flags = RS_FILE_BY_CONTENT;
                for (size_t k = 0; k < sizeof(f->content); k++)
                        f->content[k] = (uint8_t)(i * 31 + k);
                readset_file_add_range(f, 0, 4096, (uint64_t)i, RS_RANGE_ACCESSED);
        }
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), 0);
        if (back) {
                check_equal(rs, back);
                for (size_t i = 0; i < 3 && i < back->n_files; i++)
                        CHECK(memcmp(rs->files[i].content, back->files[i].content, sizeof(rs->files[i].content)) == 0);
        }
        readset_free(back), back = NULL;
        free(buf), buf = NULL;

        /* the image it was packed in: its ranges kept, in order */
        rs->image = calloc(1, sizeof(*rs->image));
        rs->image->size = 1 << 20;
        memset(rs->image->head, 0x11, sizeof(rs->image->head));
        memset(rs->image->digest, 0x22, sizeof(rs->image->digest));
        rs->image->spans = calloc(3, sizeof(*rs->image->spans));
        rs->image->spans[0] = (struct rs_span){ 900000, 4096 };   /* the tables, then back */
        rs->image->spans[1] = (struct rs_span){ 96, 8192 };
        rs->image->spans[2] = (struct rs_span){ 65536, 1000 };
        rs->image->n_spans = 3;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), 0);
        CHECK(back && back->image && back->image->n_spans == 3);
        if (back && back->image && back->image->n_spans == 3) {
                CHECK_EQ(back->image->size, 1 << 20);
                CHECK_EQ(back->image->spans[0].offset, 900000);
                CHECK_EQ(back->image->spans[1].offset, 96);
                CHECK_EQ(back->image->spans[2].length, 1000);
                CHECK(back->image->head[0] == 0x11 && back->image->digest[15] == 0x22);
        }
        readset_free(back), back = NULL;
        free(buf), buf = NULL;
        /* a range past the image's end */
        rs->image->spans[2].length = 2 << 20;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), -EBADMSG);
        free(buf), buf = NULL;
        rs->image->spans[2].length = 1000;
        /* an image in a read set that is not portable */
        rs->rec_flags = 0;
        for (size_t i = 0; i < rs->n_files; i++)
                rs->files[i].flags = 0;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), -EBADMSG);
        free(buf), buf = NULL;
        rs->rec_flags = RS_REC_PORTABLE;
        for (size_t i = 0; i < rs->n_files; i++)
                rs->files[i].flags = RS_FILE_BY_CONTENT;

        /* a path that climbs out of the root it is joined to */
        free(rs->files[1].path);
        rs->files[1].path = strdup("/usr/../../etc/shadow");
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), -EBADMSG);
        free(buf), buf = NULL;
        free(rs->files[1].path);
        rs->files[1].path = strdup("/usr/lib/p1");

        /* known by content in a read set that is not portable, and the reverse */
        rs->rec_flags = 0;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), -EBADMSG);
        free(buf), buf = NULL;
        rs->rec_flags = RS_REC_PORTABLE;
        rs->files[2].flags = 0;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, &why), -EBADMSG);
        free(buf), buf = NULL;
        readset_free(rs);

        CHECK(readset_path_is_plain("/a/b"));
        CHECK(!readset_path_is_plain("a/b"));
        CHECK(!readset_path_is_plain("/a//b"));
        CHECK(!readset_path_is_plain("/a/./b"));
        CHECK(!readset_path_is_plain("/a/b/.."));
        CHECK(!readset_path_is_plain("/"));
        CHECK(readset_path_is_plain("/a/..b/.c"));
}

/* Uncompressed files made by hand: one portable file, with or without its
 * digest, or with a digest for no such file. */
static size_t hand_made(uint8_t *out, int content)
{
        static const uint8_t meta[] = { 1, 9, 0, 0, 0x80, 0x20, 4, 0, 0, 0, 0 };
        uint8_t p[256];
        size_t n = 0;
        uLong c;

        memcpy(p, meta, sizeof(meta));
        p[1] = sizeof(meta) - 2;
        n = sizeof(meta);
        /* FILES: 1 file: regular, by content, dev 0, ino 0, size 10, mtime 0, "/x", 0 ranges */
        {
                static const uint8_t files[] = { 2, 10, 1, 0, 2, 0, 0, 10, 0, 2, '/', 'x', 0 };
                memcpy(p + n, files, sizeof(files));
                p[n + 1] = sizeof(files) - 2;
                n += sizeof(files);
        }
        if (content) {
                p[n++] = 5;
                p[n++] = 18;
                p[n++] = 1;
                p[n++] = content == 1 ? 0 : 1;     /* the file's index (1: none such) */
                memset(p + n, 0xab, 16);
                n += 16;
        }
        p[n++] = 0;
        memcpy(out, FORMAT_MAGIC, 8);
        put_le(out + 8, FORMAT_MAJOR, 2);
        put_le(out + 10, FORMAT_MINOR, 2);
        put_le(out + 12, 0, 4);
        put_le(out + 16, n, 8);
        put_le(out + 24, n, 8);
        c = crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
        put_le(out + 32, c, 4);
        refresh_header(out, 0);
        memcpy(out + FORMAT_HEADER_SIZE, p, n);
        return FORMAT_HEADER_SIZE + n;
}

static void test_content_section(void)
{
        uint8_t buf[512];
        struct readset *back = NULL;
        size_t len;

        len = hand_made(buf, 1);
        CHECK_EQ(format_decode(buf, len, &back, NULL), 0);
        CHECK(back && back->n_files == 1 && back->files[0].content[15] == 0xab);
        readset_free(back), back = NULL;
        len = hand_made(buf, 0);        /* its digest missing */
        CHECK_EQ(format_decode(buf, len, &back, NULL), -EBADMSG);
        len = hand_made(buf, 2);        /* a digest for a file that is not there */
        CHECK_EQ(format_decode(buf, len, &back, NULL), -EBADMSG);
}

/* Every section (meta, files, lookups, counts, content, image) encoded to
 * the very bytes it always was: the payload's length and CRC, from the
 * header, are those of the encoder before it was split by section. */
/* An uncompressed file of this payload, its header saying minor. */
static size_t raw_file(uint8_t *out, const uint8_t *p, size_t n, unsigned minor)
{
        memcpy(out, FORMAT_MAGIC, 8);
        put_le(out + 8, FORMAT_MAJOR, 2);
        put_le(out + 10, minor, 2);
        put_le(out + 12, 0, 4);
        put_le(out + 16, n, 8);
        put_le(out + 24, n, 8);
        put_le(out + 32, crc32(crc32(0L, Z_NULL, 0), p, (uInt)n), 4);
        refresh_header(out, 0);
        memcpy(out + FORMAT_HEADER_SIZE, p, n);
        return FORMAT_HEADER_SIZE + n;
}

/* CLIENTS (1.3): kept through a round trip; read from a file made by hand
 * beside a section no reader knows, skipped (as a 1.2 reader skips
 * CLIENTS); its values checked. */
static void test_clients(void)
{
        struct readset *rs = sample(2, 1), *back = NULL;
        uint8_t *buf = NULL, file[256];
        /* META, FILES (none), CLIENTS (the emulator's /m: 27), tag 200, end */
        uint8_t p[] = { 1, 9, 0, 0, 0x80, 0x20, 0, 0, 0, 0, 0,  2, 1, 0,
                        7, 6, 1, 3, 27, 2, '/', 'm',  200, 3, 1, 2, 3,  0 };
        size_t len = 0;

        /* mounts are a few: more than FORMAT_MAX_CLIENTS is no read set */
        for (unsigned i = 0; i <= FORMAT_MAX_CLIENTS; i++)
                CHECK_EQ(readset_add_client(rs, "/mnt/x", RS_CLIENT_NFS, i), 0);
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, NULL), -EBADMSG);
        CHECK(!back);
        free(buf), buf = NULL;
        readset_free(rs);
        rs = sample(2, 1);
        readset_add_client(rs, "/mnt/share", RS_CLIENT_NFS, 3410);
        readset_add_client(rs, "/mnt/s2", RS_CLIENT_SLOWDEV, 0);
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK_EQ(format_decode(buf, len, &back, NULL), 0);
        CHECK(back && back->n_clients == 2);
        if (back && back->n_clients == 2) {
                CHECK(strcmp(back->clients[0].mount, "/mnt/share") == 0);
                CHECK_EQ(back->clients[0].kind, RS_CLIENT_NFS);
                CHECK_EQ(back->clients[0].requests, 3410);
                CHECK_EQ(back->clients[1].kind, RS_CLIENT_SLOWDEV);
        }
        readset_free(back), back = NULL;
        free(buf);
        readset_free(rs);

        /* a 1.2 file (no CLIENTS): no clients known */
        {
                uint8_t old[] = { 1, 9, 0, 0, 0x80, 0x20, 0, 0, 0, 0, 0,  2, 1, 0,  0 };

                len = raw_file(file, old, sizeof(old), 2);
                CHECK_EQ(format_decode(file, len, &back, NULL), 0);
                CHECK(back && back->n_clients == 0 && !back->clients);
                readset_free(back), back = NULL;
        }
        len = raw_file(file, p, sizeof(p), 3);
        CHECK_EQ(format_decode(file, len, &back, NULL), 0);
        CHECK(back && back->n_clients == 1 && back->clients[0].requests == 27 &&
              back->clients[0].kind == RS_CLIENT_SLOWDEV && strcmp(back->clients[0].mount, "/m") == 0);
        readset_free(back), back = NULL;
        p[17] = 0;              /* no such client */
        len = raw_file(file, p, sizeof(p), 3);
        CHECK_EQ(format_decode(file, len, &back, NULL), -EBADMSG);
        p[17] = 3;
        p[20] = 'm';            /* a mount point that is not absolute */
        len = raw_file(file, p, sizeof(p), 3);
        CHECK_EQ(format_decode(file, len, &back, NULL), -EBADMSG);
        p[20] = '/';
        /* a field after the known ones: only in a newer minor version */
        {
                uint8_t q[sizeof(p) + 1];

                memcpy(q, p, 22);
                q[15] = 7;
                q[22] = 9;
                memcpy(q + 23, p + 22, sizeof(p) - 22);
                len = raw_file(file, q, sizeof(q), 3);
                CHECK_EQ(format_decode(file, len, &back, NULL), -EBADMSG);
                len = raw_file(file, q, sizeof(q), 4);
                CHECK_EQ(format_decode(file, len, &back, NULL), 0);
                CHECK(back && back->n_clients == 1);
                readset_free(back);
        }
}

static void test_golden(void)
{
        struct readset *rs = sample(4, 3), *back = NULL;
        uint8_t *buf = NULL;
        size_t len = 0;

        rs->rec_flags |= RS_REC_PORTABLE;
        rs->lookups_unresolved = 9;
        rs->lookups_lost = 2;
        for (size_t i = 0; i < rs->n_files; i++) {
                rs->files[i].kind = RS_FILE_REGULAR;
                rs->files[i].flags |= RS_FILE_BY_CONTENT;
                for (size_t k = 0; k < sizeof(rs->files[i].content); k++)
                        rs->files[i].content[k] = (uint8_t)(i * 17 + k);
        }
        rs->image = calloc(1, sizeof(*rs->image));
        rs->image->size = 3 << 20;
        memset(rs->image->head, 0x5a, sizeof(rs->image->head));
        memset(rs->image->digest, 0xa5, sizeof(rs->image->digest));
        rs->image->spans = calloc(2, sizeof(*rs->image->spans));
        rs->image->spans[0] = (struct rs_span){ 2 << 20, 4096 };
        rs->image->spans[1] = (struct rs_span){ 4096, 12288 };
        rs->image->n_spans = 2;
        CHECK_EQ(format_encode(rs, &buf, &len), 0);
        CHECK(len > FORMAT_HEADER_SIZE);
        if (len > FORMAT_HEADER_SIZE) {
                CHECK_EQ(get_le(buf + 16, 8), 441);
                CHECK_EQ(get_le(buf + 32, 4), 4230267475u);
        }
        CHECK_EQ(format_decode(buf, len, &back, NULL), 0);
        CHECK(back && back->image && back->lookups_unresolved == 9);
        readset_free(back);
        free(buf);
        readset_free(rs);
}

int main(void)
{
        /* files in /tmp: the trust boundary (root reads no read set others
         * can change) has its own tests, test-trust and e2e-hostile */
        trust_allow_untrusted();
        test_round_trip();
        test_uncompressed();
        test_empty();
        test_corruption();
        test_big();
        test_file_io();
        test_peek();
        test_peek_main();
        test_portable();
        test_content_section();
        test_clients();
        test_golden();
        TESTS_DONE();
}
