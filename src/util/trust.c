/* SPDX-License-Identifier: MIT */
#include "util/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

static bool allow_untrusted;

void trust_allow_untrusted(void) { allow_untrusted = true; }

bool trust_enforced(void) { return geteuid() == 0 && !allow_untrusted; }

uid_t trust_invoking_uid(void) { return invoking_uid(); }

static const char *kind_of(mode_t m)
{
        return S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" :
               S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device" :
               S_ISBLK(m) ? "a block device" : "of an unknown type";
}

static bool trusted_owner(uid_t uid) { return uid == 0 || uid == trust_invoking_uid(); }

/* st, said as what (and name; NULL: the file, which the caller's message
 * names), owned by root or the invoking user. */
static int check_uid(const struct stat *st, const char *what, const char *name, char *why, size_t why_len)
{
        uid_t me = trust_invoking_uid();

        if (trusted_owner(st->st_uid))
                return 0;
        snprintf(why, why_len, "%s%s%s%s is owned by uid %u, neither root nor %s", what, name ? " '" : "",
                 name ? name : "", name ? "'" : "", (unsigned)st->st_uid,
                 me == (uid_t)-1 ? "the invoking user" : "you");
        return -EPERM;
}

/* One file, directory or symbolic link of the path: owned by root or the
 * invoking user, and writable by no one else (group and others: no write
 * bit).  A directory holding below (the next component of the path) may be
 * writable by others if it is sticky and below is root's or the invoking
 * user's: others can add names to it, but not rename, replace or remove
 * below (the kernel's protected_* rules, systemd's chase). */
static int check_one(const struct stat *st, const char *what, const char *name, const struct stat *below, char *why,
                     size_t why_len)
{
        int r = check_uid(st, what, name, why, why_len);

        if (r < 0 || S_ISLNK(st->st_mode))
                return r;       /* a link's mode means nothing: it cannot be written */
        if (below && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && trusted_owner(below->st_uid))
                return 0;
        if (st->st_mode & (S_IWGRP | S_IWOTH)) {
                snprintf(why, why_len, "%s%s%s%s can be written by %s (mode %04o)", what, name ? " '" : "",
                         name ? name : "", name ? "'" : "", st->st_mode & S_IWOTH ? "anyone" : "its group",
                         (unsigned)(st->st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

/* From the directory dirfd (its name: dir) up to the root, every directory
 * through "..": the real directories, whatever symbolic links led there.
 * below: what dirfd holds on the path (NULL: dirfd is what is checked). */
static int check_up(int dirfd, const char *dir, const struct stat *below, char *why, size_t why_len)
{
        char name[PATH_MAX];
        struct stat root, st, held = { 0 };
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (stat("/", &root) < 0) {
                close(fd);
                return -errno;
        }
        if (below)
                held = *below;
        snprintf(name, sizeof(name), "%s", dir);
        for (unsigned depth = 0; depth < 4096; depth++) {
                int up, r;

                if (fstat(fd, &st) < 0) {
                        r = -errno;
                        close(fd);
                        return r;
                }
                r = check_one(&st, "directory", name, depth || below ? &held : NULL, why, why_len);
                if (r < 0 || (st.st_dev == root.st_dev && st.st_ino == root.st_ino)) {
                        close(fd);
                        return r;
                }
                held = st;
                up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                close(fd);
                if (up < 0)
                        return -errno;
                fd = up;
                /* the name said is the one the user will recognise */
                if (fd_path(fd, name, sizeof(name)) < 0)
                        snprintf(name, sizeof(name), "%s/..", dir);
        }
        close(fd);
        return -ELOOP;
}

static int check_path(const char *path, size_t checked, unsigned depth, unsigned *links, bool *last_link, char *why,
                      size_t why_len);

/* One component of check_path(): p, the path up to it; parent, the path
 * of the directory it is in; last, whether it ends the path. */
static int check_step(const char *p, const char *parent, bool last, unsigned depth, unsigned *links,
                      bool *last_link, char *why, size_t why_len)
{
        char target[PATH_MAX], next[PATH_MAX];
        struct stat e, d;
        bool inner;
        ssize_t len;
        int r;

        if (lstat(p, &e) < 0)
                return -errno;
        if (S_ISLNK(e.st_mode))
                r = check_uid(&e, "symbolic link", p, why, why_len);
        else if (!last)
                r = check_uid(&e, "directory", p, why, why_len);
        else if (depth)         /* the end of a link's target: followed when opened */
                r = check_uid(&e, "file", p, why, why_len);
        else
                return 0;       /* the caller's: its type first, then opened O_NOFOLLOW */
        if (r < 0)
                return r;
        if (stat(parent, &d) < 0)
                return -errno;
        r = check_one(&d, "directory", parent, &e, why, why_len);
        if (r < 0 || !S_ISLNK(e.st_mode))
                return r;
        *last_link = last;
        /* 40 links in the whole walk at most, as the kernel resolves a
         * path: a tree of links costs no more than a chain */
        if (++*links > 40)
                return -ELOOP;
        len = readlink(p, target, sizeof(target) - 1);
        if (len < 0)
                return -errno;
        target[len] = 0;
        if ((size_t)snprintf(next, sizeof(next), "%s%s%s", target[0] == '/' ? "" : parent,
                             target[0] == '/' ? "" : "/", target) >= sizeof(next))
                return -ENAMETOOLONG;
        /* a relative target goes on from parent, checked already: its own
         * components only, as the kernel goes on from where it is */
        return check_path(next, target[0] == '/' ? 0 : strlen(parent), depth + 1, links, &inner, why, why_len);
}

/* The path as given, component by component as the kernel will resolve
 * it, before anything is opened: every directory and symbolic link on the
 * way (and, for a link, the path it holds, in turn) owned by root or the
 * invoking user, in a directory that passes check_one() for it.  Then no
 * one else can make the path lead elsewhere before it is opened.  The last
 * component, when it is no link, is left to the caller (its type is said
 * first; the caller opens it O_NOFOLLOW): *last_link says whether it was
 * one.  The components within its first checked bytes were checked
 * already (the directory a relative link's target starts from).  depth:
 * how many links deep this path is; *links: the links followed in the
 * whole walk so far. */
static int check_path(const char *path, size_t checked, unsigned depth, unsigned *links, bool *last_link, char *why,
                      size_t why_len)
{
        char p[PATH_MAX], parent[PATH_MAX];
        size_t n = strlen(path);

        *last_link = false;
        if (n >= sizeof(p))
                return -ENAMETOOLONG;
        memcpy(p, path, n + 1);
        for (size_t i = 1; i <= n; i++) {
                const char *slash, *comp;
                int r = 0;

                if ((i < n && p[i] != '/') || p[i - 1] == '/' || i <= checked)
                        continue;
                p[i] = 0;
                slash = strrchr(p, '/');
                comp = slash ? slash + 1 : p;
                if (!slash)
                        snprintf(parent, sizeof(parent), ".");
                else
                        snprintf(parent, sizeof(parent), "%.*s", slash == p ? 1 : (int)(slash - p), p);
                /* "." and "..": no name a directory holds, nothing to replace */
                if (strcmp(comp, ".") != 0 && strcmp(comp, "..") != 0)
                        r = check_step(p, parent, i + strspn(path + i, "/") == n, depth, links, last_link, why,
                                       why_len);
                p[i] = path[i];
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The directory part of path, opened O_PATH (following links: it is the
 * real directory that is checked), and the last component. */
static int open_parent(const char *path, const char **ret_base)
{
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        int fd;

        if (!slash) {
                *ret_base = path;
                return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        }
        if ((size_t)(slash - path) >= sizeof(dir))
                return -ENAMETOOLONG;
        if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        *ret_base = slash + 1;
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static int open_file_impl(const char *path, bool check_owner, char *why, size_t why_len)
{
        _cleanup_close_ int dirfd = -1, pfd = -1;
        const char *base;
        struct statfs sfs;
        struct stat st;
        bool link = true;
        int fd;

        why[0] = 0;
        if (check_owner && trust_enforced()) {
                unsigned links = 0;
                int r = check_path(path, 0, 0, &links, &link, why, why_len);
                if (r < 0)
                        return r;
        }
        dirfd = open_parent(path, &base);
        if (dirfd < 0)
                return dirfd;
        if (!*base) {
                snprintf(why, why_len, "not a regular file (a directory)");
                return -EISDIR;
        }
        /* the last component, a symbolic link followed, but its target
         * checked as what it is, and where it really is; as root, a link
         * only if it was one when the path was checked */
        pfd = openat(dirfd, base, O_PATH | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode)) {
                snprintf(why, why_len, "not a regular file (%s)", kind_of(st.st_mode));
                return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        }
        if (fstatfs(pfd, &sfs) < 0)
                return -errno;
        if (mounts_is_pseudo((long)sfs.f_type, st.st_dev)) {
                snprintf(why, why_len, "a file of a pseudo filesystem (proc, sysfs, tracefs...), not a read set");
                return -EINVAL;
        }
        if (check_owner && trust_enforced()) {
                char real[PATH_MAX];
                int r;

                r = check_one(&st, "it", NULL, NULL, why, why_len);
                if (r < 0)
                        return r;
                /* the directory it really is in, which must hold it still */
                if (fd_path(pfd, real, sizeof(real)) == 0 && real[0] == '/') {
                        _cleanup_close_ int rdir = -1;
                        const char *rbase;
                        struct stat again;

                        rdir = open_parent(real, &rbase);
                        if (rdir < 0)
                                return rdir;
                        if (fstatat(rdir, rbase, &again, AT_SYMLINK_NOFOLLOW) < 0 || again.st_dev != st.st_dev ||
                            again.st_ino != st.st_ino) {
                                snprintf(why, why_len, "'%s' moved while it was checked", path);
                                return -EPERM;
                        }
                        *strrchr(real, '/') = 0;
                        r = check_up(rdir, real[0] ? real : "/", &st, why, why_len);
                } else
                        r = check_up(dirfd, path, &st, why, why_len);
                if (r < 0)
                        return r;
        }
        /* the very inode looked at; without /proc, nothing (a second lookup
         * could open what was swapped in meanwhile) */
        fd = fd_reopen(pfd, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd == -ENOENT || fd == -ENOTDIR)
                snprintf(why, why_len, "cannot be opened safely without /proc mounted");
        return fd;
}

static int check_dir_impl(const char *path, char *why, size_t why_len)
{
        _cleanup_close_ int fd = -1;
        int r;

        bool link = true;
        unsigned links = 0;

        why[0] = 0;
        if (trust_enforced() && (r = check_path(path, 0, 0, &links, &link, why, why_len)) < 0)
                return r;
        /* the last component looked at as it was checked: no link put there since */
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
        if (fd < 0)
                return -errno;
        return trust_enforced() ? check_up(fd, path, NULL, why, why_len) : 0;
}

int trust_open_file(const char *path, char *why, size_t why_len)
{
        return open_file_impl(path, true, why, why_len);
}

int trust_open_regular(const char *path, char *why, size_t why_len)
{
        return open_file_impl(path, false, why, why_len);
}

int trust_check_dir(const char *path, char *why, size_t why_len)
{
        return check_dir_impl(path, why, why_len);
}

int trust_read_small_file(const char *path, char **ret, size_t max, char *why, size_t why_len)
{
        _cleanup_close_ int fd = trust_open_file(path, why, why_len);

        return fd < 0 ? fd : read_fd_text(fd, ret, max);
}

int trust_read_regular(const char *path, char **ret, size_t max, char *why, size_t why_len)
{
        _cleanup_close_ int fd = trust_open_regular(path, why, why_len);

        return fd < 0 ? fd : read_fd_text(fd, ret, max);
}
