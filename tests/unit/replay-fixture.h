/* SPDX-License-Identifier: MIT */
/* For the engine's tests: small files in a directory of their own, recorded
 * into a read set as a recording would (identity, ranges), planned, and run
 * through the null fill method. */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/device.h"
#include "model/readset.h"
#include "replay/engine.h"
#include "replay/planner.h"
#include "util/util.h"
#include "tests.h"

#define K 1024ULL

struct fixture {
        char dir[64];
};

static void fixture_init(struct fixture *x)
{
        snprintf(x->dir, sizeof(x->dir), "/var/tmp/readset-test.XXXXXX");
        if (!mkdtemp(x->dir))
                TEST_SKIP("cannot create a directory in /var/tmp");
}

static const char *fixture_path(const struct fixture *x, const char *name, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s", x->dir, name);
        return buf;
}

/* A file of size bytes. */
static void fixture_file(const struct fixture *x, const char *name, uint64_t size)
{
        char path[128], block[4096];
        int fd = open(fixture_path(x, name, path, sizeof(path)), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        CHECK(fd >= 0);
        memset(block, 'e', sizeof(block));
        for (uint64_t done = 0; fd >= 0 && done < size; done += sizeof(block))
                CHECK(write(fd, block, (size_t)MIN(size - done, (uint64_t)sizeof(block))) > 0);
        if (fd >= 0)
                close(fd);
}

/* name recorded as it is now (kind, identity), without ranges: the file's
 * index in rs. */
static uint32_t fixture_record(struct readset *rs, const struct fixture *x, const char *name, uint32_t kind)
{
        char path[128];
        struct stat s;
        struct rs_file *f;

        CHECK_EQ(stat(fixture_path(x, name, path, sizeof(path)), &s), 0);
        f = readset_add_file(rs, path, kind == RS_FILE_BLOCKDEV ? 0x0801 : s.st_dev, s.st_ino);
        CHECK(f != NULL);
        f->kind = kind;
        f->size = (uint64_t)s.st_size;
        f->mtime_ns = (int64_t)s.st_mtim.tv_sec * 1000000000LL + s.st_mtim.tv_nsec;
        return (uint32_t)(rs->n_files - 1);
}

static void fixture_range(struct readset *rs, uint32_t file, uint64_t off, uint64_t len, uint64_t t)
{
        CHECK_EQ(readset_file_add_range(&rs->files[file], off, len, t, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
}

/* Every file made, and the directory. */
static void fixture_done(struct fixture *x)
{
        DIR *d = opendir(x->dir);
        struct dirent *de;

        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        CHECK_EQ(unlinkat(dirfd(d), de->d_name, 0), 0);
        if (d)
                closedir(d);
        CHECK_EQ(rmdir(x->dir), 0);
}

/* A solid-state plan in recorded order, one read per range (no bridging). */
static struct plan *fixture_plan(const struct readset *rs)
{
        struct device_profile d;
        struct plan *p = NULL;

        device_profile_solid(&d);
        d.bridge_bytes = 0;
        d.max_request = 1024 * K;
        d.window_us = 0;
        CHECK_EQ(planner_build(rs, &d, NULL, &p), 0);
        return p;
}

/* The null method, one thread, the cache never asked (what a test's own
 * files have cached is not the engine's to say). */
static void fixture_options(struct engine_options *o, uint8_t *skip_reasons)
{
        engine_options_default(o);
        o->method = ENGINE_NULL;
        o->threads = 1;
        o->skip_cached = false;
        o->skip_reasons = skip_reasons;
}
