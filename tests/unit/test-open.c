/* SPDX-License-Identifier: MIT */
/* The identity-checked open (fs/open.h): the file recorded opens; one that
 * changed, anything not a regular file at its name, a missing one and a
 * pseudo-file are refused with their reason, and nothing blocks. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "fs/checksum.h"
#include "fs/open.h"
#include "tests.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-open.XXXXXX";

static void path_in(char *buf, size_t size, const char *name)
{
        snprintf(buf, size, "%s/%s", dir, name);
}

static struct rs_range one_range = { .offset = 0, .length = 4096, .flags = RS_RANGE_ACCESSED };

/* f as a recording of path would have it now: a regular file with its
 * device, inode, size and mtime, one range. */
static void record(struct rs_file *f, char *path)
{
        struct stat st;

        memset(f, 0, sizeof(*f));
        CHECK_EQ(stat(path, &st), 0);
        f->path = path;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->size = (uint64_t)st.st_size;
        f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        f->kind = RS_FILE_REGULAR;
        f->ranges = &one_range;
        f->n_ranges = 1;
}

/* fs_open_recorded's result and reason (a descriptor is closed). */
static int try_open(const struct rs_file *f, int mode, enum fs_skip *why)
{
        int fd;

        *why = _FS_SKIP_MAX;
        fd = fs_open_recorded(f, mode, why);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        return fd;
}

static void test_regular_opens(void)
{
        char p[128], buf[8] = { 0 };
        struct rs_file f;
        enum fs_skip why = _FS_SKIP_MAX;
        int fd, fl;

        path_in(p, sizeof(p), "regular");
        test_write_text(p, "hello");
        record(&f, p);
        fd = fs_open_recorded(&f, O_RDONLY, &why);
        CHECK(fd >= 0);
        CHECK_EQ(why, FS_SKIP_NONE);
        if (fd >= 0) {
                CHECK_EQ(read(fd, buf, sizeof(buf)), 5);
                CHECK(memcmp(buf, "hello", 5) == 0);
                CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
                fl = fcntl(fd, F_GETFL);
                CHECK_EQ(fl & O_ACCMODE, O_RDONLY);
                CHECK(fl & O_NONBLOCK);
                close(fd);
        }
        fd = fs_open_recorded(&f, O_RDWR, &why);
        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
                close(fd);
        }
        /* neither write-only nor anything else */
        CHECK_EQ(try_open(&f, O_WRONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_ERROR);
        unlink(p);
}

static void test_changed(void)
{
        char p[128], q[128];
        struct timespec ts[2];
        struct rs_file f;
        enum fs_skip why;
        struct stat st;

        path_in(p, sizeof(p), "changed");
        path_in(q, sizeof(q), "other");
        test_write_text(p, "12345");
        record(&f, p);

        /* a byte more */
        test_write_text(p, "123456");
        record(&f, p);
        f.size = 5;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ESTALE);
        CHECK_EQ(why, FS_SKIP_CHANGED);

        /* the same size, another mtime */
        record(&f, p);
        f.mtime_ns += 1000000000LL;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ESTALE);
        CHECK_EQ(why, FS_SKIP_CHANGED);

        /* another inode of the same size and mtime renamed over it */
        record(&f, p);
        CHECK_EQ(stat(p, &st), 0);
        test_write_text(q, "abcdef");
        ts[0] = st.st_atim;
        ts[1] = st.st_mtim;
        CHECK_EQ(utimensat(AT_FDCWD, q, ts, 0), 0);
        CHECK_EQ(rename(q, p), 0);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ESTALE);
        CHECK_EQ(why, FS_SKIP_CHANGED);

        /* another device */
        record(&f, p);
        f.dev ^= 1;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ESTALE);
        CHECK_EQ(why, FS_SKIP_CHANGED);
        unlink(p);
}

/* Recorded without size and mtime: nothing says it is still the file. */
static void test_no_identity(void)
{
        char p[128];
        struct rs_file f;
        enum fs_skip why;

        path_in(p, sizeof(p), "noidentity");
        test_write_text(p, "x");
        record(&f, p);
        f.size = 0;
        f.mtime_ns = 0;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EPERM);
        CHECK_EQ(why, FS_SKIP_UNKNOWN);
        /* the size alone is an identity */
        f.size = 1;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), 0);
        unlink(p);
}

static void test_missing(void)
{
        char p[128], q[160];
        struct rs_file f;
        enum fs_skip why;

        path_in(p, sizeof(p), "gone");
        test_write_text(p, "x");
        record(&f, p);
        unlink(p);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ENOENT);
        CHECK_EQ(why, FS_SKIP_MISSING);
        /* a file where a directory of the path was */
        test_write_text(p, "x");
        snprintf(q, sizeof(q), "%s/below", p);
        f.path = q;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ENOTDIR);
        CHECK_EQ(why, FS_SKIP_MISSING);
        unlink(p);
}

/* A FIFO where the file was: refused, never opened (an open for reading
 * would wait for a writer: the alarm in main ends the test if it does). */
static void test_fifo(void)
{
        char p[128];
        struct rs_file f;
        enum fs_skip why;

        path_in(p, sizeof(p), "fifo");
        test_write_text(p, "x");
        record(&f, p);
        unlink(p);
        CHECK_EQ(mkfifo(p, 0644), 0);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        CHECK_EQ(try_open(&f, O_RDWR, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        unlink(p);
}

static void test_socket(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct rs_file f;
        enum fs_skip why;
        int s;

        path_in(sa.sun_path, sizeof(sa.sun_path), "socket");
        test_write_text(sa.sun_path, "x");
        record(&f, sa.sun_path);
        unlink(sa.sun_path);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(s >= 0);
        if (s < 0)
                return;
        CHECK_EQ(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
        CHECK_EQ(listen(s, 1), 0);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        close(s);
        unlink(sa.sun_path);
}

/* A symlink where the file was, even to that very file: not followed. */
static void test_symlink(void)
{
        char p[128], q[128];
        struct rs_file f;
        enum fs_skip why;

        path_in(p, sizeof(p), "target");
        path_in(q, sizeof(q), "link");
        test_write_text(p, "x");
        record(&f, p);
        CHECK_EQ(symlink(p, q), 0);
        f.path = q;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        unlink(q);
        unlink(p);
}

static void test_directory(void)
{
        char p[128];
        struct rs_file f;
        enum fs_skip why;

        path_in(p, sizeof(p), "dir");
        CHECK_EQ(mkdir(p, 0755), 0);
        record(&f, p);
        f.kind = RS_FILE_REGULAR;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        rmdir(p);
}

/* A device node where the file was (root only: mknod); a block device
 * recorded is matched by its number and never opened for writing. */
static void test_device(void)
{
        char p[128];
        struct rs_file f;
        enum fs_skip why;

        if (geteuid() != 0) {
                printf("device nodes not tried: mknod needs root\n");
                return;
        }
        path_in(p, sizeof(p), "null");
        test_write_text(p, "x");
        record(&f, p);
        unlink(p);
        CHECK_EQ(mknod(p, S_IFCHR | 0666, makedev(1, 3)), 0);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        unlink(p);

        /* a block device recorded: a character device of its number is not it */
        path_in(p, sizeof(p), "blk");
        CHECK_EQ(mknod(p, S_IFCHR | 0600, makedev(61, 7)), 0);
        memset(&f, 0, sizeof(f));
        f.path = p;
        f.kind = RS_FILE_BLOCKDEV;
        f.dev = makedev(61, 7);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
        unlink(p);
        CHECK_EQ(mknod(p, S_IFBLK | 0600, makedev(61, 7)), 0);
        CHECK_EQ(try_open(&f, O_RDWR, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_ERROR);
        unlink(p);
}

/* A file on /proc, whatever its identity says. */
static void test_pseudo(void)
{
        char p[] = "/proc/self/status";
        struct rs_file f;
        enum fs_skip why;

        if (access(p, R_OK) < 0) {
                printf("pseudo-files not tried: no /proc\n");
                return;
        }
        record(&f, p);
        if (!f.size && !f.mtime_ns)
                f.size = 0, f.mtime_ns = 1;
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EPERM);
        CHECK_EQ(why, FS_SKIP_PSEUDO);
}

/* Unresolved files are not opened at all. */
static void test_unresolved(void)
{
        struct rs_file f = { .path = (char *)"8:1:1234", .kind = RS_FILE_UNRESOLVED, .size = 1, .mtime_ns = 1 };
        enum fs_skip why;

        CHECK_EQ(try_open(&f, O_RDONLY, &why), -EINVAL);
        CHECK_EQ(why, FS_SKIP_NOT_REGULAR);
}

/* Can files known by content be opened here (openat2: valgrind has no
 * wrapper of it, and such a file is then refused, never opened another way)? */
static bool have_openat2(void)
{
        struct open_how how = { .flags = O_PATH | O_CLOEXEC };
        long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

        if (fd >= 0)
                close((int)fd);
        if (fd < 0 && errno == ENOSYS) {
                printf("files known by content not tried: no openat2 here (valgrind?)\n");
                return false;
        }
        return true;
}

/* Known by content: its ranges' digest decides, unless only the identity
 * is asked for. */
static void test_by_content(void)
{
        char p[128];
        struct timespec ts[2];
        struct content_sum sum;
        struct rs_file f;
        enum fs_skip why;
        struct stat st;

        if (checksum_available() < 0) {
                printf("files known by content not tried: no libcrypto\n");
                return;
        }
        path_in(p, sizeof(p), "content");
        test_write_text(p, "the bytes recorded");
        record(&f, p);
        CHECK_EQ(stat(p, &st), 0);
        /* kept to the second, device and inode another copy's */
        f.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL;
        f.dev = 0;
        f.ino = 0;
        f.flags = RS_FILE_BY_CONTENT;
        CHECK_EQ(checksum_buf("the bytes recorded", 18, &sum), 0);
        memcpy(f.content, sum.d, sizeof(f.content));
        CHECK_EQ(try_open(&f, O_RDONLY, &why), 0);
        CHECK_EQ(why, FS_SKIP_NONE);

        /* the same size and mtime, other bytes */
        test_write_text(p, "the bytes RECORDED");
        ts[0] = st.st_atim;
        ts[1] = st.st_mtim;
        CHECK_EQ(utimensat(AT_FDCWD, p, ts, 0), 0);
        CHECK_EQ(try_open(&f, O_RDONLY, &why), -ESTALE);
        CHECK_EQ(why, FS_SKIP_CONTENT);
        CHECK_EQ(try_open(&f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why), 0);
        CHECK_EQ(why, FS_SKIP_NONE);

        /* root asked by a user who could not read it checks nothing */
        if (geteuid() == 0) {
                CHECK_EQ(chmod(p, 0600), 0);
                CHECK_EQ(setenv("SUDO_UID", "65534", 1), 0);
                CHECK_EQ(try_open(&f, O_RDONLY, &why), -EPERM);
                CHECK_EQ(why, FS_SKIP_PRIVATE);
                unsetenv("SUDO_UID");
        }
        unlink(p);
}

/* A file known by content is found below its root through no symlink. */
static void test_by_content_no_symlink(void)
{
        char p[128], d[128], q[160];
        struct rs_file f;
        enum fs_skip why;

        path_in(d, sizeof(d), "real");
        path_in(p, sizeof(p), "via");
        CHECK_EQ(mkdir(d, 0755), 0);
        CHECK_EQ(symlink(d, p), 0);
        snprintf(q, sizeof(q), "%s/file", d);
        test_write_text(q, "x");
        record(&f, q);
        f.flags = RS_FILE_BY_CONTENT;
        f.mtime_ns -= f.mtime_ns % 1000000000LL;
        CHECK_EQ(try_open(&f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why), 0);
        snprintf(q, sizeof(q), "%s/file", p);
        f.path = q;
        CHECK(try_open(&f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why) < 0);
        CHECK(why != FS_SKIP_NONE);
        snprintf(q, sizeof(q), "%s/file", d);
        unlink(q);
        unlink(p);
        rmdir(d);
}

/* The identity alone, as a stat of the name or the descriptor gives it. */
static void test_identity_matches(void)
{
        struct rs_file f = { .kind = RS_FILE_BLOCKDEV, .dev = makedev(8, 1) };
        struct stat st = { .st_mode = S_IFBLK | 0600, .st_rdev = makedev(8, 1) };

        CHECK(fs_identity_matches(&f, &st));
        st.st_rdev = makedev(8, 2);
        CHECK(!fs_identity_matches(&f, &st));
        st = (struct stat){ .st_mode = S_IFCHR | 0600, .st_rdev = makedev(8, 1) };
        CHECK(!fs_identity_matches(&f, &st));

        /* a regular file: device, inode, size and mtime where recorded */
        f = (struct rs_file){ .kind = RS_FILE_REGULAR, .dev = 5, .ino = 7, .size = 100, .mtime_ns = 3000000001LL };
        st = (struct stat){ .st_mode = S_IFREG | 0644, .st_dev = 5, .st_ino = 7, .st_size = 100,
                            .st_mtim = { .tv_sec = 3, .tv_nsec = 1 } };
        CHECK(fs_identity_matches(&f, &st));
        f.size = 0;
        CHECK(fs_identity_matches(&f, &st));
        f.mtime_ns = 3000000002LL;
        CHECK(!fs_identity_matches(&f, &st));
        /* known by content: device and inode another copy's, the mtime to the second */
        f = (struct rs_file){ .kind = RS_FILE_REGULAR, .flags = RS_FILE_BY_CONTENT, .dev = 9, .ino = 9,
                              .size = 100, .mtime_ns = 3000000000LL };
        CHECK(fs_identity_matches(&f, &st));
        st.st_size = 101;
        CHECK(!fs_identity_matches(&f, &st));
}

static void test_names(void)
{
        CHECK(strcmp(fs_skip_name(FS_SKIP_CHANGED), "changed") == 0);
        CHECK(strcmp(fs_skip_name(FS_SKIP_MISSING), "missing") == 0);
        CHECK(strcmp(fs_skip_name(_FS_SKIP_MAX), "unknown") == 0);
        for (int i = 0; i < _FS_SKIP_MAX; i++)
                CHECK(fs_skip_name((enum fs_skip)i) != NULL);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        unsetenv("SUDO_UID");
        /* an open that blocks (a FIFO's) fails the test rather than hang it */
        alarm(600);
        test_regular_opens();
        test_changed();
        test_no_identity();
        test_missing();
        test_fifo();
        test_socket();
        test_symlink();
        test_directory();
        test_device();
        test_pseudo();
        test_unresolved();
        if (have_openat2()) {
                test_by_content();
                test_by_content_no_symlink();
        }
        test_identity_matches();
        test_names();
        rmdir(dir);
        TESTS_DONE();
}
