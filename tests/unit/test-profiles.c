/* SPDX-License-Identifier: MIT */
/* The report's device profiles (report/profiles.h): a reference name found
 * where the profiles are, a file's name taken as it is, a profile loaded,
 * and refused when it cannot cost reads or is not the user's to give. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/device.h"
#include "report/profiles.h"
#include "tests.h"
#include "util/util.h"

static bool ends_with(const char *s, const char *end)
{
        size_t n = strlen(s), k = strlen(end);

        return n >= k && strcmp(s + n - k, end) == 0;
}

/* A path or a file's name: as it is. */
static void test_path_as_given(void)
{
        char buf[64], small[8];

        CHECK_EQ(report_profile_path("/some/where.json", buf, sizeof(buf)), 0);
        CHECK(strcmp(buf, "/some/where.json") == 0);
        CHECK_EQ(report_profile_path("mine.json", buf, sizeof(buf)), 0);
        CHECK(strcmp(buf, "mine.json") == 0);
        CHECK_EQ(report_profile_path("./x", buf, sizeof(buf)), 0);
        CHECK(strcmp(buf, "./x") == 0);
        CHECK_EQ(report_profile_path("/a/long/path.json", small, sizeof(small)), -ENAMETOOLONG);
}

/* Reference names, in $READSET_PROFILE_DIR first. */
static void test_reference_names(const char *profiles)
{
        char dir[] = "/tmp/readset-test-profiles.XXXXXX", own[128], buf[4096];

        setenv("READSET_PROFILE_DIR", profiles, 1);
        CHECK_EQ(report_profile_path("hdd", buf, sizeof(buf)), 0);
        CHECK(ends_with(buf, "/hdd-7200.json"));
        CHECK_EQ(report_profile_path("usb", buf, sizeof(buf)), 0);
        CHECK(ends_with(buf, "/usb2-bridge.json"));
        CHECK_EQ(report_profile_path("nvme", buf, sizeof(buf)), 0);
        CHECK(ends_with(buf, "/nvme.json"));
        CHECK_EQ(report_profile_path("sd-card", buf, sizeof(buf)), 0);
        CHECK(ends_with(buf, "/sd-card.json"));
        CHECK_EQ(report_profile_path("floppy-disk", buf, sizeof(buf)), -ENOENT);
        if (!mkdtemp(dir)) {
                CHECK(!"mkdtemp");
                return;
        }
        snprintf(own, sizeof(own), "%s/hdd-7200.json", dir);
        test_write_text(own, "{}");
        setenv("READSET_PROFILE_DIR", dir, 1);
        CHECK_EQ(report_profile_path("hdd", buf, sizeof(buf)), 0);
        CHECK(strcmp(buf, own) == 0);
        unsetenv("READSET_PROFILE_DIR");
        unlink(own);
        rmdir(dir);
}

/* One table of device names (device/names.h): every name it lists
 * resolves, to a profile the report costs and a device the planner plans
 * for; a kind is costed as its reference; an unknown name is none. */
static void test_device_names(const char *profiles)
{
        char list[512], buf[4096], why[512];
        struct device_name n;
        struct device_profile d;
        struct cost_profile p;
        char *save = NULL, *tok;
        int count = 0;

        setenv("READSET_PROFILE_DIR", profiles, 1);
        device_names_list(list, sizeof(list));
        for (tok = strtok_r(list, " ,()", &save); tok; tok = strtok_r(NULL, " ,()", &save), count++) {
                CHECK_EQ(device_name_parse(tok, &n), 0);
                CHECK(n.type != DEVICE_NAME_FILE);
                CHECK_EQ(device_name_profile(&n, &d, why, sizeof(why)), 0);
                CHECK(!d.measured);
                CHECK_EQ(report_profile_path(tok, buf, sizeof(buf)), 0);
                CHECK_EQ(report_profile_load(buf, tok, &p, why, sizeof(why)), 0);
                CHECK_EQ(p.rotational, d.rotational);
        }
        CHECK_EQ(count, 13);    /* 2 kinds, 7 references, 4 aliases */
        CHECK_EQ(device_name_parse("rotational", &n), 0);
        CHECK(n.type == DEVICE_NAME_KIND && n.rotational && ends_with(n.path, "/hdd-7200.json"));
        CHECK_EQ(device_name_parse("share", &n), 0);
        CHECK(n.type == DEVICE_NAME_REFERENCE && ends_with(n.path, "/share-2ms.json"));
        /* each share names its client model; share-2ms stays strict */
        CHECK_EQ(report_profile_load(n.path, "share", &p, why, sizeof(why)), 0);
        CHECK(p.remote && strcmp(p.client.name, "strict") == 0 && p.client.negative_s == 0);
        CHECK_EQ(device_name_parse("share-2ms-nfs", &n), 0);
        CHECK_EQ(report_profile_load(n.path, "nfs", &p, why, sizeof(why)), 0);
        CHECK(p.remote && strcmp(p.client.name, "nfs") == 0 && p.client.names_s == 30 && p.client.file_attrs_s == 3);
        CHECK_EQ(device_name_parse("share-2ms-smb", &n), 0);
        CHECK_EQ(report_profile_load(n.path, "smb", &p, why, sizeof(why)), 0);
        CHECK(p.remote && strcmp(p.client.name, "smb") == 0 && p.client.negative_s == 1 && p.client.listing_attrs);
        CHECK_EQ(device_name_parse("floppy-disk", &n), -ENOENT);
        CHECK_EQ(device_name_parse("", &n), -ENOENT);
        CHECK_EQ(device_name_parse("my.json", &n), 0);
        CHECK(n.type == DEVICE_NAME_FILE && strcmp(n.path, "my.json") == 0);
        /* a name of the table whose profile is not installed: still a name
         * (planned as its kind), only the cost model lacks its file */
        setenv("READSET_PROFILE_DIR", "/nonexistent", 1);
        if (access(READSET_PROFILEDIR "/hdd-7200.json", F_OK) < 0 && device_name_parse("hdd", &n) == 0) {
                CHECK(n.type == DEVICE_NAME_REFERENCE && n.rotational && !n.path[0]);
                CHECK_EQ(device_name_profile(&n, &d, why, sizeof(why)), 0);
                CHECK(d.rotational);
                CHECK_EQ(report_profile_path("hdd", buf, sizeof(buf)), -ENOENT);
        } else
                CHECK(access(READSET_PROFILEDIR "/hdd-7200.json", F_OK) == 0);   /* installed: nothing to check */
        unsetenv("READSET_PROFILE_DIR");
}

static void test_load(const char *profiles)
{
        char path[4096 + 32], why[512] = "";
        struct cost_profile p;

        snprintf(path, sizeof(path), "%s/hdd-7200.json", profiles);
        CHECK_EQ(report_profile_load(path, "hdd", &p, why, sizeof(why)), 0);
        CHECK(strcmp(p.name, "hdd") == 0);
        CHECK(p.rotational);
        CHECK(p.seq_bps > 0);
        snprintf(path, sizeof(path), "%s/nvme.json", profiles);
        CHECK_EQ(report_profile_load(path, "nvme", &p, why, sizeof(why)), 0);
        CHECK(!p.rotational);
        CHECK(p.lat_us > 0);
        snprintf(path, sizeof(path), "%s/none.json", profiles);
        CHECK(report_profile_load(path, "none", &p, why, sizeof(why)) < 0);
}

/* A user's profile that is no JSON, or cannot cost reads: -EINVAL (in a
 * directory root trusts, as root); one in a directory anyone may write to,
 * as root: refused, and why. */
static void test_load_refused(void)
{
        char root_dir[] = "/var/lib/readset-test-profiles.XXXXXX", tdir[] = "/tmp/readset-test-profiles.XXXXXX";
        char user_dir[] = "/tmp/readset-test-profiles.XXXXXX";
        char *dir = geteuid() == 0 ? root_dir : user_dir;
        char bad[128], empty[128], tmpf[128], why[512];
        struct cost_profile p;

        if (!mkdtemp(dir) || !mkdtemp(tdir)) {
                CHECK(!"mkdtemp");
                return;
        }
        snprintf(bad, sizeof(bad), "%s/bad.json", dir);
        snprintf(empty, sizeof(empty), "%s/empty.json", dir);
        snprintf(tmpf, sizeof(tmpf), "%s/p.json", tdir);
        test_write_text(bad, "{ \"latency_qd1_us\": ");
        test_write_text(empty, "{ \"rotational\": true }");
        CHECK_EQ(report_profile_load(bad, "bad", &p, why, sizeof(why)), -EINVAL);
        CHECK_EQ(report_profile_load(empty, "empty", &p, why, sizeof(why)), -EINVAL);
        if (geteuid() == 0) {
                unsetenv("SUDO_UID");
                CHECK_EQ(chmod(tdir, 0777), 0);
                test_write_text(tmpf, "{ \"latency_qd1_us\": 80, \"sequential_mbps\": 100 }");
                why[0] = 0;
                CHECK_EQ(report_profile_load(tmpf, "tmp", &p, why, sizeof(why)), -EPERM);
                CHECK(why[0] != 0);
                unlink(tmpf);
        }
        unlink(bad);
        unlink(empty);
        rmdir(dir);
        rmdir(tdir);
}

int main(void)
{
        const char *src = getenv("SRCDIR");
        char profiles[4096];

        test_path_as_given();
        test_load_refused();
        if (!src)
                TEST_SKIP("SRCDIR (the sources, where the reference profiles are) not set: run by meson test");
        snprintf(profiles, sizeof(profiles), "%s/profiles", src);
        test_reference_names(profiles);
        test_load(profiles);
        test_device_names(profiles);
        TESTS_DONE();
}
