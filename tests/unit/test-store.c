/* SPDX-License-Identifier: MIT */
/* run --auto's directory of read sets (model/store.h): the names, what
 * killed runs left, the verdict on a new recording, the keeping. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/format.h"
#include "model/readset.h"
#include "model/store.h"
#include "tests.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-store.XXXXXX";

static bool exists(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0;
}

static void touch(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

        CHECK(fd >= 0);
        if (fd >= 0)
                close(fd);
}

static void test_prepare(void)
{
        char d[128], p[200], q[200], why[512];
        struct stat st;
        int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

        snprintf(d, sizeof(d), "%s/store", dir);
        CHECK_EQ(store_prepare(d, why, sizeof(why)), 0);
        CHECK(stat(d, &st) == 0 && S_ISDIR(st.st_mode));
        CHECK_EQ(store_prepare(d, why, sizeof(why)), 0);        /* there already */
        /* missing parents below the caller's own directory: made (a
         * trailing slash and a doubled one too) */
        snprintf(p, sizeof(p), "%s/no//store/", dir);
        CHECK_EQ(store_prepare(p, why, sizeof(why)), 0);
        CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid());
        /* relative, its first name missing: below the working directory */
        CHECK(cwd >= 0 && chdir(dir) == 0);
        CHECK_EQ(store_prepare("rel/store", why, sizeof(why)), 0);
        CHECK(stat("rel/store", &st) == 0 && S_ISDIR(st.st_mode));
        CHECK(cwd >= 0 && fchdir(cwd) == 0);
        /* a file in the way */
        snprintf(p, sizeof(p), "%s/f", d);
        touch(p);
        snprintf(q, sizeof(q), "%s/f/x/store", d);
        CHECK_EQ(store_prepare(q, why, sizeof(why)), -ENOTDIR);
        unlink(p);
        if (geteuid() == 0) {
                /* below another user's directory: nothing made, not even
                 * the last one */
                snprintf(p, sizeof(p), "%s/theirs", dir);
                CHECK_EQ(mkdir(p, 0755), 0);
                CHECK_EQ(chown(p, 65534, 65534), 0);
                snprintf(q, sizeof(q), "%s/theirs/store", dir);
                CHECK_EQ(store_prepare(q, why, sizeof(why)), -EPERM);
                CHECK(strstr(why, "not yours") != NULL);
                CHECK(!exists(q));
                snprintf(q, sizeof(q), "%s/theirs/.cache/store", dir);
                CHECK_EQ(store_prepare(q, why, sizeof(why)), -EPERM);
                snprintf(q, sizeof(q), "%s/theirs/.cache", dir);
                CHECK(!exists(q));
                /* unless they invoked readset through sudo: theirs then */
                CHECK_EQ(setenv("SUDO_UID", "65534", 1), 0);
                snprintf(q, sizeof(q), "%s/theirs/.cache/store", dir);
                CHECK_EQ(store_prepare(q, why, sizeof(why)), 0);
                CHECK(stat(q, &st) == 0 && st.st_uid == 65534);
                snprintf(q, sizeof(q), "%s/theirs/.cache", dir);
                CHECK(stat(q, &st) == 0 && st.st_uid == 65534);
                CHECK_EQ(unsetenv("SUDO_UID"), 0);
                /* a symbolic link of theirs on the way (to a directory of
                 * root's): refused, nothing made where it leads */
                snprintf(p, sizeof(p), "%s/link", dir);
                CHECK_EQ(symlink(d, p), 0);
                CHECK_EQ(lchown(p, 65534, 65534), 0);
                snprintf(q, sizeof(q), "%s/link/a/store", dir);
                CHECK_EQ(store_prepare(q, why, sizeof(why)), -EPERM);
                snprintf(q, sizeof(q), "%s/a", d);
                CHECK(!exists(q));
                unlink(p);
                snprintf(q, sizeof(q), "%s/theirs/.cache/store", dir);
                rmdir(q);
                snprintf(q, sizeof(q), "%s/theirs/.cache", dir);
                rmdir(q);
                snprintf(p, sizeof(p), "%s/theirs", dir);
                rmdir(p);
        }
        for (const char *const *r = (const char *const[]){ "rel/store", "rel", "no/store", "no", "store", NULL }; *r;
             r++) {
                snprintf(p, sizeof(p), "%s/%s", dir, *r);
                CHECK_EQ(rmdir(p), 0);
        }
        if (cwd >= 0)
                close(cwd);
}

/* One name per command line and working directory, of characters that
 * need no quoting. */
static void test_path(void)
{
        char *a[] = { (char *)"/usr/bin/my prog!", (char *)"-x", NULL };
        char *b[] = { (char *)"/usr/bin/my prog!", (char *)"-y", NULL };
        char *c[] = { (char *)"/usr/bin/", NULL };
        char *pa = NULL, *pa2 = NULL, *pb = NULL, *pc = NULL, *pd = NULL, prefix[128];
        char cwd[4096];

        CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
        CHECK_EQ(store_path("/s", a, &pa), 0);
        CHECK_EQ(store_path("/s", a, &pa2), 0);
        CHECK_EQ(store_path("/s", b, &pb), 0);
        CHECK_EQ(store_path("/s", c, &pc), 0);
        CHECK(chdir(dir) == 0);
        CHECK_EQ(store_path("/s", a, &pd), 0);
        CHECK(chdir(cwd) == 0);
        if (!pa || !pa2 || !pb || !pc || !pd)
                goto out;
        snprintf(prefix, sizeof(prefix), "/s/my_prog_-");
        CHECK(strncmp(pa, prefix, strlen(prefix)) == 0);
        CHECK_EQ(strlen(pa), strlen(prefix) + 8 + strlen(".readset"));
        CHECK(strcmp(pa + strlen(pa) - 8, ".readset") == 0);
        CHECK(strcmp(pa, pa2) == 0);
        CHECK(strcmp(pa, pb) != 0);
        CHECK(strcmp(pa, pd) != 0);
        CHECK(strncmp(pc, "/s/cmd-", 7) == 0);
out:
        free(pa);
        free(pa2);
        free(pb);
        free(pc);
        free(pd);
}

static void test_new_path(void)
{
        char *p = NULL, want[64];

        snprintf(want, sizeof(want), "/s/x.readset.new.%d", (int)getpid());
        CHECK_EQ(store_new_path("/s/x.readset", &p), 0);
        CHECK(p && strcmp(p, want) == 0);
        free(p);
}

/* A PID that is gone: a child's, reaped. */
static pid_t dead_pid(void)
{
        pid_t pid = fork();

        if (pid == 0)
                _exit(0);
        CHECK(pid > 0);
        if (pid > 0)
                CHECK_EQ(waitpid(pid, NULL, 0), pid);
        return pid;
}

/* What killed runs left is removed; what a live run writes, and what
 * is not a run's, is not. */
static void test_remove_left(void)
{
        char path[128], dead[192], dead_tmp[192], live[192], other[192], junk[192], word[192], mine[192];
        pid_t gone = dead_pid();

        snprintf(path, sizeof(path), "%s/cmd-01234567.readset", dir);
        snprintf(dead, sizeof(dead), "%s.new.%d", path, (int)gone);
        snprintf(dead_tmp, sizeof(dead_tmp), "%s.new.%d.tmp.AbC123", path, (int)gone);
        snprintf(live, sizeof(live), "%s.new.%d", path, (int)getpid());
        snprintf(junk, sizeof(junk), "%s.new.%dx", path, (int)gone);
        snprintf(word, sizeof(word), "%s.new.pid", path);
        snprintf(other, sizeof(other), "%s/cmd-76543210.readset.new.%d", dir, (int)gone);
        snprintf(mine, sizeof(mine), "%s", path);
        touch(path);
        touch(dead);
        touch(dead_tmp);
        touch(live);
        touch(junk);
        touch(word);
        touch(other);
        CHECK_EQ(store_remove_left(dir, path), 2);
        CHECK(!exists(dead));
        CHECK(!exists(dead_tmp));
        CHECK(exists(live));
        CHECK(exists(junk));
        CHECK(exists(word));
        CHECK(exists(other));
        CHECK(exists(mine));
        CHECK_EQ(store_remove_left(dir, path), 0);
        unlink(path);
        unlink(live);
        unlink(junk);
        unlink(word);
        unlink(other);
}

static void test_judge(void)
{
        struct readset_usage u = { .old_bytes = 1000, .still_used = 500 };
        struct readset_usage none = { 0 };

        /* half used again: stale below 50 %, not at it */
        CHECK_EQ(store_judge(true, &u, 50, false), STORE_KEEP_OLD);
        CHECK_EQ(store_judge(true, &u, 51, false), STORE_REPLACE);
        CHECK_EQ(store_judge(true, &u, 51, true), STORE_CUT_SHORT);
        /* a start cut short never replaces a good one */
        CHECK_EQ(store_judge(true, &u, 50, true), STORE_KEEP_OLD);
        /* none yet */
        CHECK_EQ(store_judge(false, &u, 50, false), STORE_REPLACE);
        CHECK_EQ(store_judge(false, &u, 50, true), STORE_CUT_SHORT);
        /* one that says nothing was used is of no use */
        CHECK_EQ(store_judge(true, &none, 0, false), STORE_REPLACE);
        /* large figures do not wrap */
        u = (struct readset_usage){ .old_bytes = 1ULL << 50, .still_used = (1ULL << 49) };
        CHECK_EQ(store_judge(true, &u, 50, false), STORE_KEEP_OLD);
        CHECK_EQ(store_judge(true, &u, 60, false), STORE_REPLACE);
}

/* The read set in the file at path (read here: /tmp is not a place
 * format_read() trusts as root). */
static struct readset *read_back(const char *path)
{
        struct readset *rs = NULL;
        const char *why = NULL;
        uint8_t buf[65536];
        ssize_t n = -1;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        CHECK(fd >= 0);
        if (fd >= 0) {
                n = read_full(fd, buf, sizeof(buf));
                close(fd);
        }
        CHECK(n > 0 && (size_t)n < sizeof(buf));
        if (n > 0)
                CHECK_EQ(format_decode(buf, (size_t)n, &rs, &why), 0);
        return rs;
}

static void test_keep(void)
{
        char path[128], nodir[128];
        _cleanup_readset_ struct readset *rs = readset_new();
        struct readset *back = NULL;
        struct rs_file *f;

        CHECK(rs != NULL);
        if (!rs)
                return;
        rs->page_size = 4096;
        f = readset_add_file(rs, "/etc/hostname", 2049, 12);
        CHECK(f != NULL);
        if (f) {
                f->size = 10;
                f->mtime_ns = 1;
                CHECK_EQ(readset_file_add_range(f, 0, 4096, 0, RS_RANGE_ACCESSED), 0);
        }
        snprintf(path, sizeof(path), "%s/kept.readset", dir);
        CHECK_EQ(store_keep(path, rs), 0);
        CHECK_EQ(test_dir_entries(dir), 1);
        back = read_back(path);
        if (back) {
                CHECK_EQ(back->n_files, 1);
                CHECK(strcmp(back->files[0].path, "/etc/hostname") == 0);
                readset_free(back);
        }
        unlink(path);
        /* nowhere to put it: nothing left */
        snprintf(nodir, sizeof(nodir), "%s/no/kept.readset", dir);
        CHECK_EQ(store_keep(nodir, rs), -ENOENT);
        CHECK_EQ(test_dir_entries(dir), 0);
        /* written, but not to be put in place (a directory there) */
        CHECK_EQ(mkdir(path, 0755), 0);
        CHECK(store_keep(path, rs) < 0);
        CHECK_EQ(test_dir_entries(dir), 1);
        rmdir(path);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        test_prepare();
        test_path();
        test_new_path();
        test_remove_left();
        test_judge();
        test_keep();
        CHECK_EQ(test_dir_entries(dir), 0);
        rmdir(dir);
        TESTS_DONE();
}
