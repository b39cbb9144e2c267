/* SPDX-License-Identifier: MIT */
/* util/mounts.c: mountinfo lines, their octal escapes. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/mounts.h"
#include "tests.h"

static void test_unescape(void)
{
        char a[] = "/mnt/with\\040space\\011tab", b[] = "/a\\134b", c[] = "/not\\08x/\\4000/\\";

        mounts_unescape(a);
        CHECK(strcmp(a, "/mnt/with space\ttab") == 0);
        mounts_unescape(b);
        CHECK(strcmp(b, "/a\\b") == 0);
        /* not escapes: a digit out of range, a first digit above 3, a lone backslash at the end */
        mounts_unescape(c);
        CHECK(strcmp(c, "/not\\08x/\\4000/\\") == 0);
}


static void test_parse_line(void)
{
        char line[] = "36 35 98:0 /sub\\040dir /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/sda1 rw,errors=continue\n";
        char optional[] = "29 1 0:26 / /run/user/1000 rw,nosuid shared:9 master:3 - tmpfs tmpfs rw\n";
        char junk[] = "not a mountinfo line\n", short_[] = "1 2 8:1 / - ext4 x y\n";
        char journal[] = "40 1 8:2 / /srv rw,noatime - ext4 /dev/sdb1 rw,errors=remount-ro,data=journal\n";
        char no_source[] = "41 1 8:3 / /x rw - ext4\n";
        struct mount_ent m;

        CHECK_EQ(mounts_parse_line(line, &m), 1);
        CHECK_EQ(major(m.dev), 98);
        CHECK_EQ(minor(m.dev), 0);
        CHECK(strcmp(m.root, "/sub dir") == 0);
        CHECK(strcmp(m.mnt, "/mnt/my disk") == 0);
        CHECK(strcmp(m.fstype, "ext4") == 0);
        CHECK(strcmp(m.source, "/dev/sda1") == 0);
        CHECK(strcmp(m.super, "rw,errors=continue") == 0);
        mount_ent_free(&m);
        /* optional fields before the separator */
        CHECK_EQ(mounts_parse_line(optional, &m), 1);
        CHECK(strcmp(m.mnt, "/run/user/1000") == 0);
        CHECK(strcmp(m.fstype, "tmpfs") == 0);
        CHECK(strcmp(m.super, "rw") == 0);
        mount_ent_free(&m);
        /* the super block's options: data=journal there, not in the mount's */
        CHECK_EQ(mounts_parse_line(journal, &m), 1);
        CHECK(mounts_has_option(m.super, "data=journal"));
        CHECK(!mounts_has_option(m.super, "noatime"));
        mount_ent_free(&m);
        CHECK_EQ(mounts_parse_line(no_source, &m), 1);
        CHECK(strcmp(m.source, "") == 0 && strcmp(m.super, "") == 0);
        mount_ent_free(&m);
        CHECK_EQ(mounts_parse_line(junk, &m), 0);
        CHECK_EQ(mounts_parse_line(short_, &m), 0);
        /* a device number that is not MAJOR:MINOR, whole: no mount */
        {
                char sign[] = "36 35 8:-1 / /mnt rw - ext4 /dev/sda1 rw\n";
                char tail[] = "36 35 8:1x / /mnt rw - ext4 /dev/sda1 rw\n";
                char big[] = "36 35 4294967296:1 / /mnt rw - ext4 /dev/sda1 rw\n";
                CHECK_EQ(mounts_parse_line(sign, &m), 0);
                CHECK_EQ(mounts_parse_line(tail, &m), 0);
                CHECK_EQ(mounts_parse_line(big, &m), 0);
        }
}

static void test_has_option(void)
{
        CHECK(mounts_has_option("rw,data=journal", "data=journal"));
        CHECK(mounts_has_option("data=journal", "data=journal"));
        CHECK(mounts_has_option("data=journal,rw", "data=journal"));
        CHECK(!mounts_has_option("rw,data=journalled", "data=journal"));
        CHECK(!mounts_has_option("rw,xdata=journal", "data=journal"));
        CHECK(!mounts_has_option("rw,data=ordered", "data=journal"));
        CHECK(!mounts_has_option("", "data=journal"));
        CHECK(!mounts_has_option(NULL, "data=journal"));
}

static void test_swap_line(void)
{
        char head[] = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        char file[] = "/var/swap\\040file                        file\t\t1048572\t\t0\t\t-2\n";
        char dev[] = "/dev/zram0\tpartition\t8388604\t\t0\t\t100\n";
        char *p;

        CHECK(mounts_parse_swap_line(head) == NULL);
        p = mounts_parse_swap_line(file);
        CHECK(p && strcmp(p, "/var/swap file") == 0);
        p = mounts_parse_swap_line(dev);
        CHECK(p && strcmp(p, "/dev/zram0") == 0);
}

static void test_read(void)
{
        struct mounts mt = { 0 };
        bool root = false;

        CHECK_EQ(mounts_read(&mt), 0);
        for (size_t i = 0; i < mt.n; i++)
                root |= strcmp(mt.m[i].mnt, "/") == 0;
        CHECK(root);
        mounts_free(&mt);
        CHECK_EQ(mt.n, 0);
}

int main(void)
{
        test_unescape();
        test_parse_line();
        test_has_option();
        test_swap_line();
        test_read();
        TESTS_DONE();
}
