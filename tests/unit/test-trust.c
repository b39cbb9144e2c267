/* SPDX-License-Identifier: MIT */
/* The trust boundary (util/trust.h): what root reads as its own input, and
 * that a name is checked, never opened, when it is not a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"
#include "util/trust.h"
#include "util/util.h"

static char why[512];

static int try_open(const char *path)
{
        int fd = trust_open_file(path, why, sizeof(why));
        if (fd >= 0)
                close(fd);
        return fd >= 0 ? 0 : fd;
}

int main(void)
{
        char dir[] = "/var/lib/readset-test-trust.XXXXXX", tdir[] = "/tmp/readset-test-trust.XXXXXX";
        char f[128], sub[128], subf[128], fifo[128], dev[128], link_out[128], tf[128];
        char tmpf[] = "/tmp/readset-test-trust-f.XXXXXX", tmpl[128], tmpl_sub[160];
        char link_via[128], link_via_f[160], nob[128], nob_up[160];
        int tmpfd;
        char *text = NULL;

        if (geteuid() != 0)
                TEST_SKIP("the owner and mode checks are made as root only: needs root");
        if (!mkdtemp(dir) || !mkdtemp(tdir))
                TEST_SKIP("cannot make directories in /var/lib and /tmp");
        unsetenv("SUDO_UID");
        CHECK(trust_enforced());
        snprintf(f, sizeof(f), "%s/r.json", dir);
        snprintf(sub, sizeof(sub), "%s/sub", dir);
        snprintf(subf, sizeof(subf), "%s/sub/r.json", dir);
        snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
        snprintf(dev, sizeof(dev), "%s/tty", dir);
        snprintf(link_out, sizeof(link_out), "%s/out", dir);
        snprintf(tf, sizeof(tf), "%s/r.json", tdir);
        snprintf(link_via, sizeof(link_via), "%s/via", dir);
        snprintf(link_via_f, sizeof(link_via_f), "%s/via/r.json", dir);
        snprintf(nob, sizeof(nob), "%s/nobody", dir);
        snprintf(nob_up, sizeof(nob_up), "%s/nobody/../r.json", dir);
        test_write_text(f, "{}\n");
        test_write_text(tf, "{}\n");
        CHECK_EQ(mkdir(sub, 0755), 0);
        test_write_text(subf, "{}\n");

        /* root's file in root's directories */
        CHECK_EQ(try_open(f), 0);
        CHECK_EQ(trust_read_small_file(f, &text, 64, why, sizeof(why)), 0);
        CHECK(text && strcmp(text, "{}\n") == 0);
        free(text);
        CHECK_EQ(trust_check_dir(sub, why, sizeof(why)), 0);

        /* /tmp: sticky, so others cannot rename or replace what is root's
         * there: root's file in root's mktemp -d directory, read */
        CHECK_EQ(try_open(tf), 0);
        CHECK_EQ(trust_check_dir(tdir, why, sizeof(why)), 0);
        /* ... also through a symbolic link from a trusted directory */
        CHECK_EQ(symlink(tf, link_out), 0);
        CHECK_EQ(try_open(link_out), 0);
        /* ... but not another user's file there, nor through the link */
        CHECK_EQ(chown(tf, 65534, 65534), 0);
        CHECK_EQ(try_open(tf), -EPERM);
        CHECK(strstr(why, "it is owned by uid 65534"));
        CHECK_EQ(try_open(link_out), -EPERM);
        CHECK(strstr(why, "uid 65534"));
        CHECK_EQ(chown(tf, 0, 0), 0);
        /* ... nor root's file in another user's directory there (they can
         * rename it away and put theirs in its place) */
        CHECK_EQ(chown(tdir, 65534, 65534), 0);
        CHECK_EQ(try_open(tf), -EPERM);
        CHECK(strstr(why, tdir) && strstr(why, "owned by uid 65534"));
        CHECK_EQ(trust_check_dir(tdir, why, sizeof(why)), -EPERM);
        CHECK_EQ(chown(tdir, 0, 0), 0);
        /* a directory anyone may write, not sticky: nothing below it holds */
        CHECK_EQ(chmod(tdir, 0777), 0);
        CHECK_EQ(try_open(tf), -EPERM);
        CHECK(strstr(why, tdir) && strstr(why, "anyone (mode 0777)"));
        /* sticky: root's file below it is read, but the directory is no
         * --auto directory (others may add names to it) */
        CHECK_EQ(chmod(tdir, 01777), 0);
        CHECK_EQ(try_open(tf), 0);
        CHECK_EQ(trust_check_dir(tdir, why, sizeof(why)), -EPERM);
        CHECK(strstr(why, "anyone (mode 1777)"));
        CHECK_EQ(chmod(tdir, 0700), 0);

        /* root's file right in /tmp: read; another user's: refused */
        CHECK((tmpfd = mkstemp(tmpf)) >= 0);
        if (tmpfd >= 0) {
                CHECK_EQ(write(tmpfd, "{}\n", 3), 3);
                close(tmpfd);
                CHECK_EQ(try_open(tmpf), 0);
                CHECK_EQ(chown(tmpf, 65534, 65534), 0);
                CHECK_EQ(try_open(tmpf), -EPERM);
                CHECK(strstr(why, "it is owned by uid 65534"));
                CHECK_EQ(unlink(tmpf), 0);
        }

        /* a symbolic link in /tmp: root's is followed; another user's is
         * not (protected_symlinks' case), even to root's file in root's
         * directory, and even under a path that is no link itself */
        snprintf(tmpl, sizeof(tmpl), "/tmp/readset-test-trust-link.%d", (int)getpid());
        snprintf(tmpl_sub, sizeof(tmpl_sub), "%s/r.json", tmpl);
        unlink(tmpl);
        CHECK_EQ(symlink(dir, tmpl), 0);
        CHECK_EQ(try_open(tmpl_sub), 0);
        CHECK_EQ(lchown(tmpl, 65534, 65534), 0);
        CHECK_EQ(try_open(tmpl_sub), -EPERM);
        CHECK(strstr(why, "symbolic link") && strstr(why, tmpl) && strstr(why, "uid 65534"));
        CHECK_EQ(trust_check_dir(tmpl, why, sizeof(why)), -EPERM);
        CHECK_EQ(unlink(tmpl), 0);
        CHECK_EQ(symlink(f, tmpl), 0);
        CHECK_EQ(lchown(tmpl, 65534, 65534), 0);
        CHECK_EQ(try_open(tmpl), -EPERM);
        CHECK(strstr(why, "symbolic link") && strstr(why, "uid 65534"));
        /* ... nor when root's own link leads through it: the path is
         * checked as the kernel resolves it, links' targets too */
        CHECK_EQ(unlink(tmpl), 0);
        CHECK_EQ(symlink(dir, tmpl), 0);
        CHECK_EQ(lchown(tmpl, 65534, 65534), 0);
        CHECK_EQ(symlink(tmpl, link_via), 0);
        CHECK_EQ(try_open(link_via_f), -EPERM);
        CHECK(strstr(why, "symbolic link") && strstr(why, tmpl) && strstr(why, "uid 65534"));
        CHECK_EQ(unlink(tmpl), 0);
        CHECK_EQ(unlink(link_via), 0);
        /* a directory of another user's on the way, even one the path
         * leaves by "..": they could put a link in its place */
        CHECK_EQ(mkdir(nob, 0755), 0);
        CHECK_EQ(chown(nob, 65534, 65534), 0);
        CHECK_EQ(try_open(nob_up), -EPERM);
        CHECK(strstr(why, nob) && strstr(why, "owned by uid 65534"));
        CHECK_EQ(rmdir(nob), 0);

        /* a directory its group may write */
        CHECK_EQ(chmod(sub, 0775), 0);
        CHECK_EQ(try_open(subf), -EPERM);
        CHECK(strstr(why, "its group") && strstr(why, "sub"));
        CHECK_EQ(chmod(sub, 0755), 0);
        CHECK_EQ(try_open(subf), 0);
        /* a file anyone may write */
        CHECK_EQ(chmod(subf, 0666), 0);
        CHECK_EQ(try_open(subf), -EPERM);
        CHECK(strstr(why, "it can be written by anyone") && strstr(why, "0666"));
        CHECK_EQ(chmod(subf, 0644), 0);

        /* another user's file: refused, unless that user invoked sudo */
        CHECK_EQ(chown(subf, 12345, 12345), 0);
        CHECK_EQ(try_open(subf), -EPERM);
        CHECK(strstr(why, "uid 12345"));
        setenv("SUDO_UID", "12345", 1);
        CHECK_EQ(trust_invoking_uid(), 12345);
        CHECK_EQ(try_open(subf), 0);
        /* ... and that user's directory too (sudo readset run --auto ~/.cache/readset) */
        CHECK_EQ(chown(sub, 12345, 12345), 0);
        CHECK_EQ(try_open(subf), 0);
        CHECK_EQ(trust_check_dir(sub, why, sizeof(why)), 0);
        setenv("SUDO_UID", "12346", 1);
        CHECK_EQ(trust_check_dir(sub, why, sizeof(why)), -EPERM);
        setenv("SUDO_UID", "garbage", 1);
        CHECK_EQ(trust_invoking_uid(), (uid_t)-1);
        unsetenv("SUDO_UID");

        /* not regular files: looked at, never opened (a FIFO would block,
         * a terminal become ours) */
        CHECK_EQ(mkfifo(fifo, 0600), 0);
        CHECK_EQ(try_open(fifo), -EINVAL);
        CHECK(strstr(why, "FIFO"));
        CHECK_EQ(symlink("/dev/tty", dev), 0);
        CHECK_EQ(try_open(dev), -EINVAL);
        CHECK(strstr(why, "character device"));
        CHECK_EQ(try_open(dir), -EISDIR);
        CHECK_EQ(try_open("/nonexistent/x"), -ENOENT);
        {
                /* links counted over the whole walk, as the kernel counts
                 * them: 30 links to "." in one path pass, 41 are too many
                 * (each one level deep: a bound on depth alone let a tree
                 * of links cost without end) */
                char dot[160], many[PATH_MAX];
                size_t n;
                snprintf(dot, sizeof(dot), "%s/d", dir);
                CHECK_EQ(symlink(".", dot), 0);
                n = (size_t)snprintf(many, sizeof(many), "%s", dir);
                for (int i = 0; i < 30; i++)
                        n += (size_t)snprintf(many + n, sizeof(many) - n, "/d");
                snprintf(many + n, sizeof(many) - n, "/r.json");
                CHECK_EQ(try_open(many), 0);
                for (int i = 30; i < 41; i++)
                        n += (size_t)snprintf(many + n, sizeof(many) - n, "/d");
                snprintf(many + n, sizeof(many) - n, "/r.json");
                CHECK_EQ(try_open(many), -ELOOP);
                unlink(dot);
        }

        /* the user's word: owners and modes no longer, types still */
        trust_allow_untrusted();
        CHECK(!trust_enforced());
        CHECK_EQ(try_open(tf), 0);
        CHECK_EQ(try_open(fifo), -EINVAL);
        CHECK_EQ(trust_check_dir(tdir, why, sizeof(why)), 0);

        unlink(subf);
        rmdir(sub);
        unlink(f);
        unlink(fifo);
        unlink(dev);
        unlink(link_out);
        rmdir(dir);
        unlink(tf);
        rmdir(tdir);
        TESTS_DONE();
}
