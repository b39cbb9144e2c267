/* SPDX-License-Identifier: MIT */
/* SHA-256 digests (fs/checksum.h): of bytes, of a file (through the page
 * cache and around it), of a read set's ranges of a file and of spans. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "model/readset.h"
#include "tests.h"
#include "util/util.h"

#define BIG ((3u << 20) + 5)   /* more than one of the reader's 1 MiB pieces, not a multiple of a block */

static char dir[] = "/tmp/readset-test-checksum.XXXXXX";
static char path[128];
static uint8_t *data;

static bool is_digest(const struct content_sum *s, const char *hex)
{
        char h[65];

        for (int i = 0; i < 32; i++)
                snprintf(h + 2 * i, 3, "%02x", s->d[i]);
        return strcmp(h, hex) == 0;
}

static bool same(const struct content_sum *a, const struct content_sum *b)
{
        return memcmp(a->d, b->d, sizeof(a->d)) == 0;
}

/* FIPS 180-2's examples. */
static void test_known_digests(void)
{
        struct content_sum s;

        CHECK_EQ(checksum_buf("abc", 3, &s), 0);
        CHECK(is_digest(&s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        CHECK_EQ(checksum_buf("", 0, &s), 0);
        CHECK(is_digest(&s, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        CHECK_EQ(checksum_buf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, &s), 0);
        CHECK(is_digest(&s, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
}

static void test_file(void)
{
        struct content_sum whole, s;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK_EQ(checksum_buf(data, BIG, &whole), 0);
        CHECK_EQ(checksum_fd(fd, BIG, false, &s), 0);
        CHECK(same(&s, &whole));
        /* its first bytes only */
        CHECK_EQ(checksum_fd(fd, 3, false, &s), 0);
        CHECK(is_digest(&s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        /* shorter than asked */
        CHECK_EQ(checksum_fd(fd, BIG + 1, false, &s), -ESTALE);
        close(fd);
}

/* Around the page cache: the same digest, and the descriptor as it was. */
static void test_file_direct(void)
{
        struct content_sum whole, s;
        int fd = open(path, O_RDONLY | O_CLOEXEC), fl, r;

        CHECK(fd >= 0);
        if (fd < 0)
                return;
        fl = fcntl(fd, F_GETFL);
        CHECK_EQ(checksum_buf(data, BIG, &whole), 0);
        r = checksum_fd(fd, BIG, true, &s);
        if (r == -EINVAL) {
                printf("reads around the cache not tried: O_DIRECT refused in /tmp\n");
        } else {
                CHECK_EQ(r, 0);
                CHECK(same(&s, &whole));
                CHECK_EQ(checksum_fd(fd, BIG + 1, true, &s), -ESTALE);
                /* whole blocks read, what is asked hashed */
                CHECK_EQ(checksum_fd(fd, 3, true, &s), 0);
                CHECK(is_digest(&s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        }
        CHECK_EQ(fcntl(fd, F_GETFL), fl);
        close(fd);
}

/* A read set's ranges, in their order, each cut at the recorded size. */
static void test_ranges(void)
{
        struct rs_range ranges[] = {
                { .offset = 8192, .length = 4096 },
                { .offset = 0, .length = 4096 },
                { .offset = BIG - 5, .length = 4096 },    /* past the end: cut at size */
        };
        struct rs_file f = { .path = path, .size = BIG, .ranges = ranges, .n_ranges = 3 };
        uint8_t *cat = malloc(4096 + 4096 + 5);
        struct content_sum want, s, other;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        CHECK(fd >= 0 && cat);
        if (fd < 0 || !cat)
                goto out;
        memcpy(cat, data + 8192, 4096);
        memcpy(cat + 4096, data, 4096);
        memcpy(cat + 8192, data + BIG - 5, 5);
        CHECK_EQ(checksum_buf(cat, 8192 + 5, &want), 0);
        CHECK_EQ(checksum_ranges(fd, &f, &s), 0);
        CHECK(same(&s, &want));
        /* the order counts */
        SWAP(ranges[0], ranges[1]);
        CHECK_EQ(checksum_ranges(fd, &f, &other), 0);
        CHECK(!same(&other, &want));
        /* recorded larger than it is now */
        f.size = BIG + 4096;
        CHECK_EQ(checksum_ranges(fd, &f, &s), -ESTALE);
out:
        if (fd >= 0)
                close(fd);
        free(cat);
}

static void test_spans(void)
{
        struct rs_span spans[] = { { .offset = 1, .length = 2 }, { .offset = (1u << 20) - 1, .length = (1u << 20) + 2 } };
        uint8_t *cat = malloc((1u << 20) + 4);
        struct content_sum want, s;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        CHECK(fd >= 0 && cat);
        if (fd < 0 || !cat)
                goto out;
        memcpy(cat, data + 1, 2);
        memcpy(cat + 2, data + (1u << 20) - 1, (1u << 20) + 2);
        CHECK_EQ(checksum_buf(cat, (1u << 20) + 4, &want), 0);
        CHECK_EQ(checksum_spans(fd, spans, 2, &s), 0);
        CHECK(same(&s, &want));
        /* none: the digest of nothing */
        CHECK_EQ(checksum_spans(fd, spans, 0, &s), 0);
        CHECK(is_digest(&s, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        /* past the end: not a shorter digest, a refusal */
        spans[1].offset = BIG - 1;
        CHECK_EQ(checksum_spans(fd, spans, 2, &s), -ESTALE);
out:
        if (fd >= 0)
                close(fd);
        free(cat);
}

int main(void)
{
        int fd;

        if (checksum_available() < 0)
                TEST_SKIP("OpenSSL's libcrypto could not be opened");
        test_known_digests();
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        snprintf(path, sizeof(path), "%s/data", dir);
        data = malloc(BIG);
        CHECK(data != NULL);
        if (!data)
                goto out;
        /* "abc" first, then bytes that differ piece to piece */
        for (size_t i = 0; i < BIG; i++)
                data[i] = (uint8_t)(i * 2654435761u >> 13);
        memcpy(data, "abc", 3);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(write(fd, data, BIG), BIG);
                close(fd);
        }
        test_file();
        test_file_direct();
        test_ranges();
        test_spans();
out:
        free(data);
        unlink(path);
        rmdir(dir);
        TESTS_DONE();
}
