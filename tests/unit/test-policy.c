/* SPDX-License-Identifier: MIT */
/* replay/policy.c: which lookups a file system needs, --device, the plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay/policy.h"
#include "tests.h"

static void test_lookup_stride(void)
{
        struct mount_ent m[] = {
                { 1, (char *)"/", (char *)"ext4", (char *)"/" },
                { 2, (char *)"/net", (char *)"nfs4", (char *)"/" },
                { 3, (char *)"/net/local", (char *)"ext4", (char *)"/" },
                { 4, (char *)"/fuse", (char *)"fuse.sshfs", (char *)"/" },
                { 5, (char *)"/net", (char *)"cifs", (char *)"/" },    /* mounted over /net later */
        };
        struct mounts mt = { m, 4 };

        CHECK_EQ(replay_lookup_stride(&mt, "/usr/lib", 8), 64);
        CHECK_EQ(replay_lookup_stride(&mt, "", 0), 64);                /* "/" itself */
        CHECK_EQ(replay_lookup_stride(&mt, "/net", 4), 1);
        CHECK_EQ(replay_lookup_stride(&mt, "/net/x/y", 8), 1);
        CHECK_EQ(replay_lookup_stride(&mt, "/network", 8), 64);        /* not under /net */
        CHECK_EQ(replay_lookup_stride(&mt, "/net/local/a", 12), 64);   /* the longest prefix wins */
        CHECK_EQ(replay_lookup_stride(&mt, "/fuse/a", 7), 1);
        /* the directory's length counts, not its NUL: "/net" inside "/netx" */
        CHECK_EQ(replay_lookup_stride(&mt, "/netx", 4), 1);
        /* the last-mounted one of two at the same point */
        mt.n = 5;
        m[4].fstype = (char *)"ext4";
        CHECK_EQ(replay_lookup_stride(&mt, "/net/x", 6), 64);
        mt.n = 0;
        CHECK_EQ(replay_lookup_stride(&mt, "/x", 2), 64);
}

static void test_device_option(void)
{
        struct replay_options o;
        struct device_profile d;
        char why[256];

        replay_options_init(&o);
        CHECK(!o.have_device);
        CHECK_EQ(replay_options_set_device(&o, "rotational", why, sizeof(why)), 0);
        CHECK(o.have_device && o.device.rotational);
        replay_device_for_path(&o, "/", &d, NULL);
        CHECK(d.rotational);    /* the option wins over the device */
        CHECK_EQ(replay_options_set_device(&o, "solid", why, sizeof(why)), 0);
        CHECK(!o.device.rotational);
        CHECK(replay_options_set_device(&o, "/nonexistent/profile.json", why, sizeof(why)) < 0);
        CHECK(!o.device.rotational);    /* left as it was */
}

/* A read set of one regular file of 1 MiB that is not there, its first
 * range accessed at time 0. */
static struct readset *one_file(uint64_t first_length, struct rs_file **ret)
{
        struct readset *rs = readset_new();
        struct rs_file *f = readset_add_file(rs, "/nonexistent/a", 1, 1);

        f->kind = RS_FILE_REGULAR;
        f->size = 1 << 20;
        CHECK_EQ(readset_file_add_range(f, 0, first_length, 0, RS_RANGE_ACCESSED), 0);
        *ret = f;
        return rs;
}

/* The plan follows the options: used ranges only unless all_ranges, the
 * byte limit. */
static void test_plan(void)
{
        struct rs_file *f;
        struct readset *rs = one_file(4096, &f);
        struct replay_options o;
        struct device_profile d;
        struct plan *p = NULL;

        CHECK_EQ(readset_file_add_range(f, 512 << 10, 8192, 5, RS_RANGE_FILLED), 0);
        replay_options_init(&o);
        device_profile_solid(&d);
        CHECK_EQ(replay_plan(rs, &d, &o, NULL, &p), 0);
        CHECK_EQ(p->bytes, 4096);
        plan_free(p);
        o.all_ranges = true;
        CHECK_EQ(replay_plan(rs, &d, &o, NULL, &p), 0);
        CHECK_EQ(p->bytes, 4096 + 8192);
        plan_free(p);
        o.max_bytes = 4096;
        CHECK_EQ(replay_plan(rs, &d, &o, NULL, &p), 0);
        CHECK_EQ(p->bytes, 4096);
        CHECK_EQ(p->bytes_cut, 8192);
        plan_free(p);
        /* rotational: positions asked of a file that is not there: unknown, no failure */
        device_profile_rotational(&d);
        CHECK_EQ(replay_plan(rs, &d, &o, NULL, &p), 0);
        CHECK(p->by_position);
        plan_free(p);
        readset_free(rs);
}

/* The metadata read before a disk's plan: only the block device's ranges,
 * in device order and merged where they are close, no lookups; none where
 * the read set holds no metadata. */
static void test_plan_metadata(void)
{
        struct rs_file *f;
        struct readset *rs = one_file(65536, &f);
        struct rs_file *m = readset_add_file(rs, "/dev/nonexistent", 2, 2);
        struct replay_options o;
        struct device_profile d;
        struct plan *p = NULL;

        replay_options_init(&o);
        device_profile_rotational(&d);
        CHECK_EQ(replay_plan_metadata(rs, &d, &o, &p), 0);
        CHECK(p == NULL);       /* no metadata: nothing to read first */
        m->kind = RS_FILE_BLOCKDEV;
        CHECK_EQ(readset_file_add_range(m, 64 << 20, 4096, 9, RS_RANGE_FILLED), 0);
        CHECK_EQ(readset_file_add_range(m, 1 << 20, 4096, 3, RS_RANGE_FILLED), 0);
        CHECK_EQ(readset_file_add_range(m, (1 << 20) + 8192, 4096, 5, RS_RANGE_FILLED), 0);
        CHECK_EQ(replay_plan_metadata(rs, &d, &o, &p), 0);
        CHECK(p != NULL);
        if (p) {
                /* the two 8 KiB apart in one read (a disk bridges the gap), then the far one */
                CHECK_EQ(p->n_reads, 2);
                CHECK_EQ(p->n_meta, 2);
                CHECK_EQ(p->n_lookups, 0);
                CHECK_EQ(p->reads[0].file, 1);
                CHECK_EQ(p->reads[0].offset, 1 << 20);
                CHECK_EQ(p->reads[0].length, 12288);
                CHECK_EQ(p->reads[1].offset, 64 << 20);
                CHECK_EQ(p->bytes, 12288 + 4096);
                CHECK(!p->by_position);
        }
        plan_free(p);
        readset_free(rs);
}

/* The budget: free memory above the reserve, plus a share of what is
 * cached, never more than MemAvailable allows. */
static void test_budget(void)
{
        const uint64_t G = 1ULL << 30, M = 1ULL << 20;
        /* a 24 GiB machine whose cache is full: 200 MiB free, 22 GiB cached */
        struct meminfo full = { .total = 24 * G, .free = 200 * M, .available = 22 * G, .file_cached = 22 * G };
        /* the same, idle: 20 GiB free */
        struct meminfo idle = { .total = 24 * G, .free = 20 * G, .available = 22 * G, .file_cached = 1 * G };
        /* nothing may be had: little free, nothing reclaimable */
        struct meminfo tight = { .total = 2 * G, .free = 50 * M, .available = 60 * M, .file_cached = 10 * M };
        uint64_t b;

        CHECK_EQ(replay_budget_of(&full, 0), 0);                        /* free is below the reserve */
        CHECK_EQ(replay_budget_of(&full, 25), 22 * G / 100 * 25);
        CHECK_EQ(replay_budget_of(&full, 100), 22 * G - 24 * G / 20);  /* capped by MemAvailable */
        CHECK_EQ(replay_budget_of(&idle, 0), 20 * G - 24 * G / 20);
        CHECK_EQ(replay_budget_of(&idle, 25), 20 * G - 24 * G / 20 + 1 * G / 100 * 25);
        CHECK_EQ(replay_budget_of(&tight, 100), 0);
        CHECK_EQ(replay_budget_of(&full, 1000), replay_budget_of(&full, 100));   /* a share is at most all */
        /* and this machine's, from /proc/meminfo */
        CHECK_EQ(replay_memory_budget(REPLAY_DEFAULT_EVICT_PERCENT, &b), 0);
}

static void put(const char *dir, const char *file, const char *text)
{
        char p[512];

        snprintf(p, sizeof(p), "%s/%s", dir, file);
        test_write_text(p, text);
}

/* A memory cgroup's room: the least any level leaves (v1 and v2 trees
 * made in /tmp, as /sys/fs/cgroup lays them out). */
static void test_cgroup_room(void)
{
        char top[] = "/tmp/rs-test-cgroup-XXXXXX", d1[256], d2[256], v2[256], cmd[300];
        const uint64_t M = 1 << 20;

        if (!mkdtemp(top)) {
                CHECK(0);
                return;
        }
        snprintf(d1, sizeof(d1), "%s/memory/svc", top);
        snprintf(d2, sizeof(d2), "%s/memory/svc/inner", top);
        snprintf(cmd, sizeof(cmd), "%s/memory", top);
        CHECK_EQ(mkdir(cmd, 0755), 0);
        CHECK_EQ(mkdir(d1, 0755), 0);
        CHECK_EQ(mkdir(d2, 0755), 0);
        /* root: no limit; svc: 100 MiB, 60 used, 40 of it cache; inner: unlimited */
        put(cmd, "memory.limit_in_bytes", "9223372036854771712\n");
        put(d1, "memory.limit_in_bytes", "104857600\n");
        put(d1, "memory.usage_in_bytes", "62914560\n");
        put(d1, "memory.stat", "cache 41943040\nrss 1\ntotal_cache 41943040\ntotal_shmem 8388608\n");
        put(d2, "memory.limit_in_bytes", "9223372036854771712\n");
        /* 40 MiB free in svc, plus a quarter of its 40 MiB cache */
        CHECK_EQ(replay_cgroup_room("4:memory:/svc/inner\n0::/\n", top, 25), 50 * M);
        CHECK_EQ(replay_cgroup_room("4:cpu,memory:/svc\n", top, 0), 40 * M);
        CHECK_EQ(replay_cgroup_room("4:cpu:/svc\n", top, 25), UINT64_MAX);   /* not the memory controller */
        CHECK_EQ(replay_cgroup_room("4:memory:/\n", top, 25), UINT64_MAX);
        CHECK_EQ(replay_cgroup_room("garbage", top, 25), UINT64_MAX);
        /* the service's own: 60 used less 40 of cache, of which 8 is shared memory (its own) */
        CHECK_EQ(replay_cgroup_own("4:memory:/svc\n", top), 28 * M);
        CHECK_EQ(replay_cgroup_own("4:cpu:/svc\n", top), 0);
        CHECK_EQ(replay_cgroup_own("garbage", top), 0);
        /* v2: memory.max "max" is none; over its limit already: no room */
        snprintf(v2, sizeof(v2), "%s/web", top);
        CHECK_EQ(mkdir(v2, 0755), 0);
        put(top, "memory.max", "max\n");
        put(v2, "memory.max", "33554432\n");
        put(v2, "memory.current", "40000000\n");
        put(v2, "memory.stat", "anon 1\nfile 8388608\nfile_mapped 1\nshmem 4194304\n");
        CHECK_EQ(replay_cgroup_room("0::/web\n", top, 50), 4 * M);
        CHECK_EQ(replay_cgroup_own("0::/web\n", top), 40000000 - 4 * M);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
        CHECK_EQ(system(cmd), 0);
}

int main(void)
{
        test_budget();
        test_lookup_stride();
        test_device_option();
        test_plan();
        test_plan_metadata();
        test_cgroup_room();
        TESTS_DONE();
}
