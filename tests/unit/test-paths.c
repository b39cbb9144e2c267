/* SPDX-License-Identifier: MIT */
/* Naming the files of kernel events (record/paths.h), the parts that need
 * no privilege: the kernel's device numbers, names learned one by one or
 * from a --paths list, and what stays unresolved; as root, the opens
 * fanotify's events cost, counted per filesystem. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record/builder.h"
#include "record/paths.h"
#include "tests.h"
#include "util/util.h"

#define KDEV(ma, mi) ((uint32_t)(ma) << 20 | (uint32_t)(mi))

static char dir[] = "/tmp/readset-test-paths.XXXXXX";

static void test_kdev(void)
{
        CHECK_EQ(paths_kdev_to_dev(KDEV(8, 1)), makedev(8, 1));
        CHECK_EQ(paths_kdev_to_dev(KDEV(259, 300000)), makedev(259, 300000));
        CHECK_EQ(paths_kdev_to_dev(KDEV(0, 27)), makedev(0, 27));
}

/* A name learned is the key's; another key stays unresolved, counted. */
static void test_learn(void)
{
        struct paths *p = NULL;
        struct rs_identity id;
        struct paths_stats st;

        CHECK_EQ(paths_open(&p, false), 0);
        if (!p)
                return;
        CHECK_EQ(paths_fd(p), -1);
        CHECK_EQ(paths_learn(p, makedev(8, 1), 42, "/x/y"), 0);
        CHECK_EQ(paths_resolve(p, KDEV(8, 1), 42, &id), 0);
        CHECK(id.path && strcmp(id.path, "/x/y") == 0);
        CHECK_EQ(id.kind, RS_FILE_REGULAR);
        CHECK_EQ(id.dev, makedev(8, 1));
        CHECK(!(id.flags & RS_FILE_DELETED));
        /* the same inode on another device, another inode on this one */
        CHECK_EQ(paths_resolve(p, KDEV(8, 2), 42, &id), 0);
        CHECK(id.path == NULL);
        CHECK_EQ(id.kind, RS_FILE_UNRESOLVED);
        CHECK_EQ(id.dev, makedev(8, 2));
        CHECK_EQ(paths_resolve(p, KDEV(8, 1), 43, &id), 0);
        CHECK_EQ(id.kind, RS_FILE_UNRESOLVED);
        paths_get_stats(p, &st);
        CHECK_EQ(st.unresolved, 2);
        /* many: the table grows and keeps them all */
        for (uint64_t i = 0; i < 10000; i++) {
                char name[32];
                snprintf(name, sizeof(name), "/many/%llu", (unsigned long long)i);
                CHECK_EQ(paths_learn(p, makedev(9, 0), 1000 + i, name), 0);
        }
        CHECK_EQ(paths_resolve(p, KDEV(9, 0), 1000 + 7777, &id), 0);
        CHECK(id.path && strcmp(id.path, "/many/7777") == 0);
        CHECK_EQ(paths_resolve(p, KDEV(8, 1), 42, &id), 0);
        CHECK(id.path && strcmp(id.path, "/x/y") == 0);
        paths_close(p);
}

/* "MAJOR:MINOR INODE /PATH" a line, blank lines and comments skipped. */
static void test_list(void)
{
        char list[128];
        struct paths *p = NULL;
        struct rs_identity id;
        unsigned line = 0;

        snprintf(list, sizeof(list), "%s/list", dir);
        CHECK_EQ(paths_open(&p, false), 0);
        if (!p)
                return;
        test_write_text(list, "# made by hand\n\n8:1 42 /a b/c\n259:3 7 /d\n");
        CHECK_EQ(paths_learn_list(p, list, &line), 0);
        CHECK_EQ(paths_resolve(p, KDEV(8, 1), 42, &id), 0);
        CHECK(id.path && strcmp(id.path, "/a b/c") == 0);
        CHECK_EQ(paths_resolve(p, KDEV(259, 3), 7, &id), 0);
        CHECK(id.path && strcmp(id.path, "/d") == 0);

        /* which line is not one */
        test_write_text(list, "8:1 42 /ok\nnot a line\n");
        CHECK_EQ(paths_learn_list(p, list, &line), -EBADMSG);
        CHECK_EQ(line, 2);
        test_write_text(list, "\n\n8:1 42 relative\n");
        CHECK_EQ(paths_learn_list(p, list, &line), -EBADMSG);
        CHECK_EQ(line, 3);
        test_write_text(list, "8 42 /no-minor\n");
        CHECK_EQ(paths_learn_list(p, list, &line), -EBADMSG);
        CHECK_EQ(line, 1);
        unlink(list);
        /* none, or a FIFO: refused (never waited on) */
        CHECK_EQ(paths_learn_list(p, list, &line), -ENOENT);
        CHECK_EQ(mkfifo(list, 0644), 0);
        CHECK(paths_learn_list(p, list, &line) < 0);
        unlink(list);
        paths_close(p);
}

/* The files opened to hand readset fanotify's events, counted on the
 * filesystems asked for (a request each on a network client), from the
 * events read after it was asked.  As root, on a tmpfs of a mount
 * namespace of its own, which no other process opens files on. */
static void test_count_opens(void)
{
        char mnt[sizeof(dir) + 8], file[sizeof(mnt) + 8], other[sizeof(mnt) + 8];
        struct paths *p = NULL;
        struct stat st;
        int fd;

        if (geteuid() != 0) {
                printf("note: counting opens needs root (fanotify): left out\n");
                return;
        }
        snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
        snprintf(file, sizeof(file), "%s/f", mnt);
        snprintf(other, sizeof(other), "%s/g", mnt);
        CHECK_EQ(mkdir(mnt, 0700), 0);
        if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", mnt, "tmpfs", 0, "size=64k") < 0) {
                printf("note: no tmpfs in a mount namespace of its own: counting opens left out\n");
                rmdir(mnt);
                return;
        }
        test_write_text(file, "x");
        test_write_text(other, "y");
        CHECK_EQ(stat(file, &st), 0);
        CHECK_EQ(paths_open(&p, true), 0);
        CHECK(paths_fd(p) >= 0);
        /* read before counting: not counted */
        fd = open(file, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        close(fd);
        CHECK_EQ(paths_drain(p), 0);
        CHECK_EQ(paths_count_opens(p, st.st_dev), 0);
        CHECK_EQ(paths_count_opens(p, st.st_dev + 1), 0);       /* a filesystem with no open */
        /* two files (two opens of one may be one event) */
        fd = open(file, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        close(fd);
        fd = open(other, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        close(fd);
        CHECK_EQ(paths_drain(p), 0);
        CHECK_EQ(paths_opens(p, st.st_dev), 2);
        CHECK_EQ(paths_opens(p, st.st_dev + 1), 0);
        CHECK_EQ(paths_opens(p, st.st_dev + 2), 0);             /* not asked for */
        paths_close(p);
        unlink(file);
        unlink(other);
        CHECK_EQ(umount(mnt), 0);
        rmdir(mnt);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        alarm(600);
        test_kdev();
        test_learn();
        test_list();
        test_count_opens();
        rmdir(dir);
        TESTS_DONE();
}
