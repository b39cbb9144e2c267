/* SPDX-License-Identifier: MIT */
/* A device probe (device/probe.h), the parts that do not time anything:
 * the profile's JSON read back as the report's cost profile, the scratch
 * file that leaves nothing behind, and which files the metadata probe
 * opens.  No figure measured here is asserted but for being there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/probe.h"
#include "report/costmodel.h"
#include "tests.h"
#include "util/json.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-probe.XXXXXX";

static char *report_text(const struct probe_report *r)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        CHECK(f != NULL);
        if (!f)
                return NULL;
        CHECK_EQ(probe_report_write(f, r), 0);
        fclose(f);
        return text;
}

/* What probe writes is what the report costs reads with. */
static void test_report_round_trip(void)
{
        struct probe_report r = { .target = "/dev/x", .kind = "block device", .device_id = "disk:abc",
                                  .have_reads = true };
        struct cost_profile p;
        _cleanup_jv_ struct jv *v = NULL;
        char *text;

        r.res = (struct probe_result){ .region_bytes = 1ULL << 30, .lat_qd1_us = 8000, .lat_qd1_p99_us = 15000,
                                       .iops = { 120, 180, 250, 300 }, .seq_mbps = 150,
                                       .seq_zone_mbps = { 180, 150, 110 },
                                       .seek_us = { 1000, 3000, 6000, 12000 },
                                       .seek_dist = { 1 << 20, 64 << 20, 1ULL << 30, 8ULL << 30 },
                                       .fill_mbps = 140, .rotational = true };
        text = report_text(&r);
        CHECK(text != NULL);
        if (!text)
                return;
        CHECK_EQ(jv_parse(text, &v), 0);
        CHECK(strcmp(jv_get(v, "device_id")->s, "disk:abc") == 0);
        CHECK(strcmp(jv_get(v, "probed")->s, "block device") == 0);
        CHECK(jv_get(v, "metadata") == NULL);
        CHECK_EQ(cost_profile_parse(text, "hdd here", &p), 0);
        free(text);
        CHECK(strcmp(p.name, "hdd here") == 0);
        CHECK(p.lat_us == 8000);
        CHECK(p.seq_bps == 150e6);
        CHECK(p.iops[0] == 120 && p.iops[3] == 300);
        CHECK(p.zone_bps[0] == 180e6 && p.zone_bps[2] == 110e6);
        CHECK_EQ(p.region_bytes, 1ULL << 30);
        CHECK_EQ(p.n_seek, 4);
        CHECK_EQ(p.seek_dist[3], 8ULL << 30);
        CHECK(p.seek_us[1] == 3000);
        CHECK(p.rotational);
        CHECK(!p.remote);

        /* metadata only (a read-only share): no reads to cost */
        r = (struct probe_report){ .target = "/mnt/share", .kind = "metadata only", .have_meta = true,
                                   .meta = { .files = 5, .open_stat_us = 2100, .open_stat_p90_us = 2500,
                                             .first_read_us = 2300 } };
        text = report_text(&r);
        if (!text)
                return;
        jv_free(v);
        v = NULL;
        CHECK_EQ(jv_parse(text, &v), 0);
        CHECK(jv_get(v, "device_id") == NULL);
        CHECK_EQ(jv_number(jv_get(jv_get(v, "metadata"), "files"), -1), 5);
        CHECK(jv_get(v, "latency_qd1_us") == NULL);
        CHECK_EQ(cost_profile_parse(text, "share", &p), -EINVAL);
        free(text);
}

/* Saved whole: read back the same. */
static void test_save(void)
{
        struct probe_report r = { .target = "/", .kind = "scratch file", .have_reads = true,
                                  .res = { .lat_qd1_us = 90, .seq_mbps = 2000, .iops = { 10000, 40000, 90000, 100000 },
                                           .seek_us = { 90, 90, 91, 92 }, .seek_dist = { 1 << 20, 2 << 20, 3 << 20, 4 << 20 } } };
        char path[128], *text = NULL;
        struct cost_profile p;

        snprintf(path, sizeof(path), "%s/p.json", dir);
        CHECK_EQ(probe_report_save(path, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 16), 0);
        if (text) {
                CHECK_EQ(cost_profile_parse(text, "x", &p), 0);
                CHECK(p.lat_us == 90);
                CHECK(!p.rotational);
        }
        free(text);
        unlink(path);
        CHECK_EQ(test_dir_entries(dir), 0);
}

/* Real data, opened twice, named nowhere. */
static void test_scratch(void)
{
        int direct = -1, buffered = -1, r;
        uint8_t a[4096], b[4096];
        struct stat st;

        r = probe_scratch(dir, 4 << 20, &direct, &buffered, NULL);
        if (r == -EOPNOTSUPP || r == -EISDIR) {
                printf("scratch file not tried: O_TMPFILE or O_DIRECT refused in /tmp\n");
                return;
        }
        CHECK_EQ(r, 0);
        if (r < 0)
                return;
        CHECK_EQ(test_dir_entries(dir), 0);
        CHECK_EQ(fstat(buffered, &st), 0);
        CHECK_EQ(st.st_size, 4 << 20);
        CHECK_EQ(st.st_nlink, 0);
        CHECK(fcntl(direct, F_GETFL) & O_DIRECT);
        CHECK(!(fcntl(buffered, F_GETFL) & O_DIRECT));
        CHECK(fcntl(direct, F_GETFD) & FD_CLOEXEC);
        /* not the zeros of unwritten extents */
        memset(b, 0, sizeof(b));
        CHECK_EQ(pread(buffered, a, sizeof(a), 3 << 20), (long long)sizeof(a));
        CHECK(memcmp(a, b, sizeof(a)) != 0);
        close(direct);
        close(buffered);
}

/* The files under a directory, its subdirectories' too, at most as many
 * as asked. */
static void test_metadata(void)
{
        char p[160];
        struct probe_meta m;

        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s/f%d", dir, i);
                CHECK_EQ(close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
        }
        snprintf(p, sizeof(p), "%s/sub", dir);
        CHECK_EQ(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/sub/g", dir);
        CHECK_EQ(close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
        snprintf(p, sizeof(p), "%s/link", dir);
        CHECK_EQ(symlink("/etc/passwd", p), 0);
        snprintf(p, sizeof(p), "%s/fifo", dir);
        CHECK_EQ(mkfifo(p, 0644), 0);

        /* (the seconds: a bound no machine reaches for four files) */
        CHECK_EQ(probe_metadata(dir, 100, 600, &m, NULL), 0);
        CHECK_EQ(m.files, 4);
        CHECK(m.open_stat_us > 0);
        CHECK(m.open_stat_p90_us >= m.open_stat_us);
        CHECK_EQ(probe_metadata(dir, 2, 600, &m, NULL), 0);
        CHECK_EQ(m.files, 2);
        snprintf(p, sizeof(p), "%s/none", dir);
        CHECK_EQ(probe_metadata(p, 100, 600, &m, NULL), -ENOENT);

        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s/f%d", dir, i);
                unlink(p);
        }
        snprintf(p, sizeof(p), "%s/sub/g", dir);
        unlink(p);
        snprintf(p, sizeof(p), "%s/sub", dir);
        rmdir(p);
        snprintf(p, sizeof(p), "%s/link", dir);
        unlink(p);
        snprintf(p, sizeof(p), "%s/fifo", dir);
        unlink(p);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        alarm(600);
        test_report_round_trip();
        test_save();
        test_scratch();
        test_metadata();
        CHECK_EQ(test_dir_entries(dir), 0);
        rmdir(dir);
        TESTS_DONE();
}
