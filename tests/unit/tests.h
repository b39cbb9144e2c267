/* SPDX-License-Identifier: MIT */
/* Minimal test helpers: file:line on failure, exit 77 to skip. */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tests_failed;

#define CHECK(expr) do { \
        if (!(expr)) { \
                fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
                tests_failed++; \
        } \
} while (0)

#define CHECK_EQ(a, b) do { \
        long long _a = (long long)(a), _b = (long long)(b); \
        if (_a != _b) { \
                fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, _a, _b); \
                tests_failed++; \
        } \
} while (0)

/* Skip the rest (exit 77) with a reason; after a failed check that is a
 * failure, not a skip: a skip must never hide one. */
#define TEST_SKIP(why) do { \
        if (tests_failed) { \
                fprintf(stderr, "%s:%d: %d checks failed before a skip (%s)\n", __FILE__, __LINE__, \
                        tests_failed, why); \
                exit(1); \
        } \
        printf("skip: %s\n", why); \
        exit(77); \
} while (0)

#define TESTS_DONE() do { \
        if (tests_failed) { fprintf(stderr, "%d checks failed\n", tests_failed); return 1; } \
        return 0; \
} while (0)

/* How many entries a directory holds (. and .. aside), -1 when it cannot
 * be listed: what a test left behind, or a module did. */
/* path made (or emptied) holding text, checked. */
static inline void test_write_text(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
                close(fd);
        }
}

/* path made (or emptied) holding size bytes of fill, checked. */
static inline void test_fill_file(const char *path, size_t size, char fill)
{
        char buf[4096];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        memset(buf, fill, sizeof(buf));
        CHECK(fd >= 0);
        for (size_t done = 0; fd >= 0 && done < size; done += sizeof(buf)) {
                size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
                CHECK_EQ(write(fd, buf, n), (long long)n);
        }
        if (fd >= 0)
                close(fd);
}

static inline int test_dir_entries(const char *path)
{
        DIR *d = opendir(path);
        struct dirent *de;
        int n = 0;

        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}
