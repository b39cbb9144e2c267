/* SPDX-License-Identifier: MIT */
/* write_file_atomic() (util/util.h): a file written whole or not at all,
 * beside its place and renamed there, never through what stood there; and
 * its siblings: write_file() into what exists (sysfs style),
 * read_small_file(), fd_reopen() and fd_path(). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-write-atomic.XXXXXX";

static int write_text(FILE *f, void *userdata)
{
        fputs(userdata, f);
        return 0;
}

/* Writes part, then fails as a writer whose data ran out would. */
static int write_half(FILE *f, void *userdata)
{
        fputs(userdata, f);
        return -EBADMSG;
}

/* The entries of dir but . and .. */
static bool holds(const char *path, const char *text)
{
        char *s = NULL;
        bool same = read_small_file(path, &s, 4096) >= 0 && strcmp(s, text) == 0;

        free(s);
        return same;
}

static void test_new_file(void)
{
        char p[128];
        struct stat st;

        snprintf(p, sizeof(p), "%s/new", dir);
        CHECK_EQ(write_file_atomic(p, 0640, write_text, "first\n"), 0);
        CHECK(holds(p, "first\n"));
        CHECK_EQ(lstat(p, &st), 0);
        CHECK(S_ISREG(st.st_mode));
        CHECK_EQ(st.st_mode & 07777, 0640);
        CHECK_EQ(test_dir_entries(dir), 1);
        /* the mode asked, whatever the umask */
        umask(0077);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "second\n"), 0);
        umask(0022);
        CHECK_EQ(stat(p, &st), 0);
        CHECK_EQ(st.st_mode & 07777, 0644);
        CHECK(holds(p, "second\n"));
        CHECK_EQ(test_dir_entries(dir), 1);
        unlink(p);
}

/* Renamed into place: one holding the old file open still reads it. */
static void test_replaced_not_rewritten(void)
{
        char p[128], buf[8] = { 0 };
        int fd;

        snprintf(p, sizeof(p), "%s/old", dir);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "old"), 0);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "new"), 0);
        CHECK(holds(p, "new"));
        if (fd >= 0) {
                CHECK_EQ(pread(fd, buf, sizeof(buf) - 1, 0), 3);
                CHECK(strcmp(buf, "old") == 0);
                close(fd);
        }
        unlink(p);
}

/* A failing writer: the old file as it was, nothing beside it. */
static void test_writer_fails(void)
{
        char p[128], q[128];

        snprintf(p, sizeof(p), "%s/kept", dir);
        snprintf(q, sizeof(q), "%s/none", dir);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "intact"), 0);
        CHECK_EQ(write_file_atomic(p, 0644, write_half, "garbage"), -EBADMSG);
        CHECK(holds(p, "intact"));
        CHECK_EQ(test_dir_entries(dir), 1);
        /* and none made where there was none */
        CHECK_EQ(write_file_atomic(q, 0644, write_half, "garbage"), -EBADMSG);
        CHECK_EQ(access(q, F_OK), -1);
        CHECK_EQ(test_dir_entries(dir), 1);
        unlink(p);
}

/* A symlink at the name is replaced; what it points to is untouched. */
static void test_symlink_replaced(void)
{
        char p[128], target[128];
        struct stat st;

        snprintf(p, sizeof(p), "%s/link", dir);
        snprintf(target, sizeof(target), "%s/target", dir);
        CHECK_EQ(write_file_atomic(target, 0644, write_text, "precious"), 0);
        CHECK_EQ(symlink(target, p), 0);
        CHECK_EQ(write_file_atomic(p, 0600, write_text, "written"), 0);
        CHECK(holds(target, "precious"));
        CHECK_EQ(lstat(p, &st), 0);
        CHECK(S_ISREG(st.st_mode));
        CHECK(holds(p, "written"));
        CHECK_EQ(test_dir_entries(dir), 2);
        /* a dangling one, where it points to made by nobody */
        unlink(p);
        unlink(target);
        CHECK_EQ(symlink(target, p), 0);
        CHECK_EQ(write_file_atomic(p, 0600, write_text, "written"), 0);
        CHECK_EQ(access(target, F_OK), -1);
        CHECK_EQ(lstat(p, &st), 0);
        CHECK(S_ISREG(st.st_mode));
        CHECK_EQ(test_dir_entries(dir), 1);
        unlink(p);
}

/* A FIFO at the name: replaced, never opened (that would wait for a
 * reader: main's alarm ends the test if it does). */
static void test_fifo_replaced(void)
{
        char p[128];
        struct stat st;

        snprintf(p, sizeof(p), "%s/fifo", dir);
        CHECK_EQ(mkfifo(p, 0644), 0);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "plain"), 0);
        CHECK_EQ(lstat(p, &st), 0);
        CHECK(S_ISREG(st.st_mode));
        CHECK(holds(p, "plain"));
        unlink(p);
}

static void test_no_directory(void)
{
        char p[128], d[128];

        snprintf(p, sizeof(p), "%s/nodir/file", dir);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "x"), -ENOENT);
        CHECK_EQ(test_dir_entries(dir), 0);
        /* a directory at the name is not replaced */
        snprintf(d, sizeof(d), "%s/isdir", dir);
        CHECK_EQ(mkdir(d, 0755), 0);
        CHECK(write_file_atomic(d, 0644, write_text, "x") < 0);
        CHECK_EQ(test_dir_entries(dir), 1);
        rmdir(d);
}

/* Root under sudo writes the invoking user's file in that user's
 * directory, and root's own in root's. */
static void test_sudo_owner(void)
{
        char sub[128], p[128], q[128];
        struct stat st;

        if (geteuid() != 0) {
                printf("the owner under sudo not tried: needs root\n");
                return;
        }
        snprintf(sub, sizeof(sub), "%s/user", dir);
        snprintf(p, sizeof(p), "%s/user/file", dir);
        snprintf(q, sizeof(q), "%s/root-file", dir);
        CHECK_EQ(mkdir(sub, 0755), 0);
        CHECK_EQ(chown(sub, 65534, 65534), 0);
        setenv("SUDO_UID", "65534", 1);
        setenv("SUDO_GID", "65534", 1);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "x"), 0);
        CHECK_EQ(stat(p, &st), 0);
        CHECK_EQ(st.st_uid, 65534);
        CHECK_EQ(st.st_gid, 65534);
        CHECK_EQ(write_file_atomic(q, 0644, write_text, "x"), 0);
        CHECK_EQ(stat(q, &st), 0);
        CHECK_EQ(st.st_uid, 0);
        unsetenv("SUDO_UID");
        unsetenv("SUDO_GID");
        unlink(p);
        unlink(q);
        rmdir(sub);
}

/* Into an existing file only, truncated; relative to a directory. */
static void test_write_file(void)
{
        char p[128];
        int dfd;

        snprintf(p, sizeof(p), "%s/sysfs-like", dir);
        CHECK_EQ(write_file(p, "x"), -ENOENT);
        CHECK_EQ(test_dir_entries(dir), 0);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "a longer text"), 0);
        CHECK_EQ(write_file(p, "1\n"), 0);
        CHECK(holds(p, "1\n"));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        if (dfd >= 0) {
                CHECK_EQ(write_file_at(dfd, "sysfs-like", "2"), 0);
                CHECK(holds(p, "2"));
                close(dfd);
        }
        unlink(p);
}

/* Regular files only, at most max bytes; a FIFO refused, not waited on. */
static void test_read_small_file(void)
{
        char p[128], *s = NULL;

        snprintf(p, sizeof(p), "%s/small", dir);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "0123456789"), 0);
        CHECK_EQ(read_small_file(p, &s, 4), 0);
        CHECK(s && strcmp(s, "0123") == 0);
        free(s);
        s = NULL;
        /* a line: cut at its first newline */
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "12:3\nmore\n"), 0);
        CHECK_EQ(read_small_line(p, &s, 64), 0);
        CHECK(s && strcmp(s, "12:3") == 0);
        free(s);
        s = NULL;
        unlink(p);
        CHECK_EQ(read_small_file(p, &s, 4), -ENOENT);
        CHECK_EQ(mkfifo(p, 0644), 0);
        CHECK_EQ(read_small_file(p, &s, 4), -EINVAL);
        unlink(p);
        CHECK_EQ(read_small_file(dir, &s, 4), -EINVAL);
        CHECK(s == NULL);
}

/* The very inode an O_PATH descriptor names, even after a rename. */
static void test_fd_reopen(void)
{
        char p[128], q[128], where[256], buf[8] = { 0 };
        int pfd, fd;

        snprintf(p, sizeof(p), "%s/named", dir);
        snprintf(q, sizeof(q), "%s/renamed", dir);
        CHECK_EQ(write_file_atomic(p, 0644, write_text, "inode"), 0);
        pfd = open(p, O_PATH | O_CLOEXEC);
        CHECK(pfd >= 0);
        if (pfd < 0)
                return;
        CHECK_EQ(rename(p, q), 0);
        CHECK_EQ(fd_path(pfd, where, sizeof(where)), 0);
        CHECK(strcmp(where, q) == 0);
        fd = fd_reopen(pfd, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(read(fd, buf, sizeof(buf) - 1), 5);
                CHECK(strcmp(buf, "inode") == 0);
                close(fd);
        }
        close(pfd);
        unlink(q);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        unsetenv("SUDO_UID");
        unsetenv("SUDO_GID");
        alarm(600);
        test_new_file();
        test_replaced_not_rewritten();
        test_writer_fails();
        test_symlink_replaced();
        test_fifo_replaced();
        test_no_directory();
        test_sudo_owner();
        test_write_file();
        test_read_small_file();
        test_fd_reopen();
        CHECK_EQ(test_dir_entries(dir), 0);
        rmdir(dir);
        TESTS_DONE();
}
