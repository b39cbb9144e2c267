/* SPDX-License-Identifier: MIT */
#include "model/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "model/format.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

/* Whether uid may own the directory a store is made below: the caller, or
 * the user who invoked readset through sudo (whose ~/.cache it is). */
static bool may_make_below(uid_t uid)
{
        return uid == geteuid() || (geteuid() == 0 && uid == invoking_uid());
}

/* The missing directories of dir made one by one below the descriptor of
 * the nearest one there (at, checked), not through any link: each new one
 * owned as that one is (a user's ~/.cache made under sudo stays theirs). */
static int make_below(int at, const struct stat *top, const char *rest)
{
        _cleanup_close_ int fd = dup(at);
        char name[NAME_MAX + 1];

        if (fd < 0)
                return -errno;
        while (*rest) {
                size_t n = strcspn(rest, "/");
                int next;

                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, rest, n);
                name[n] = 0;
                rest += n + strspn(rest + n, "/");
                if (n == 0 || strcmp(name, ".") == 0)
                        continue;
                if (strcmp(name, "..") == 0)
                        return -EINVAL;
                if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST)
                        return -errno;
                next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                if (top->st_uid != geteuid() && fchownat(fd, name, top->st_uid, top->st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
                        int e = -errno;
                        close(next);
                        return e;
                }
                close(fd);
                fd = next;
        }
        return 0;
}

int store_prepare(const char *dir, char *why, size_t why_len)
{
        _cleanup_free_ char *top = strdup(dir);
        _cleanup_close_ int fd = -1;
        struct stat st;
        char *cut = NULL;
        int r;

        if (!top)
                return -ENOMEM;
        snprintf(why, why_len, "%s", strerror(ENOENT));
        /* the nearest directory there: dir itself, or one above it */
        for (;;) {
                if (stat(top, &st) == 0)
                        break;
                if (errno != ENOENT)
                        return -errno;
                cut = strrchr(top, '/');
                while (cut && cut > top && cut[-1] == '/')
                        cut--;
                if (!cut) {     /* a relative path whose first name is missing: below "." */
                        free(top);
                        top = strdup(".");
                        if (!top)
                                return -ENOMEM;
                        if (stat(top, &st) < 0)
                                return -errno;
                        break;
                }
                *cut = 0;
                if (cut == top) {       /* below "/" */
                        free(top);
                        top = strdup("/");
                        if (!top)
                                return -ENOMEM;
                }
        }
        if (!S_ISDIR(st.st_mode)) {
                snprintf(why, why_len, "'%s' is not a directory", top);
                return -ENOTDIR;
        }
        if (strcmp(top, dir) == 0)
                return 0;       /* there already: the caller's checks judge it */
        if (!may_make_below(st.st_uid)) {
                snprintf(why, why_len, "'%s' is not yours (owned by uid %u): nothing is made in it", top,
                         (unsigned)st.st_uid);
                return -EPERM;
        }
        r = trust_check_dir(top, why, why_len);
        if (r < 0)
                return r;
        fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !may_make_below(st.st_uid))
                return fd < 0 ? -errno : -EPERM;
        r = make_below(fd, &st, dir + (strcmp(top, ".") == 0 ? 0 : strlen(top)));
        if (r < 0)
                snprintf(why, why_len, "%s", strerror(-r));
        return r;
}

int store_path(const char *dir, char *const *cmd, char **ret)
{
        char cwd[PATH_MAX];
        const char *base = strrchr(cmd[0], '/');
        uLong h = crc32(0L, Z_NULL, 0);
        char clean[64];
        size_t n = 0;

        base = base ? base + 1 : cmd[0];
        for (const char *p = base; *p && n + 1 < sizeof(clean); p++)
                clean[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ? *p : '_');
        clean[n] = 0;
        if (!getcwd(cwd, sizeof(cwd)))
                cwd[0] = 0;
        h = crc32(h, (const Bytef *)cwd, (uInt)strlen(cwd) + 1);
        for (char *const *a = cmd; *a; a++)
                h = crc32(h, (const Bytef *)*a, (uInt)strlen(*a) + 1);
        if (asprintf(ret, "%s/%s-%08lx.readset", dir, n ? clean : "cmd", (unsigned long)h) < 0)
                return -ENOMEM;
        return 0;
}

int store_new_path(const char *path, char **ret)
{
        return asprintf(ret, "%s.new.%d", path, (int)getpid()) < 0 ? -ENOMEM : 0;
}

unsigned store_remove_left(const char *dir, const char *path)
{
        _cleanup_free_ char *prefix = NULL;
        const char *base = strrchr(path, '/');
        unsigned removed = 0;
        struct dirent *de;
        DIR *d;

        base = base ? base + 1 : path;
        if (asprintf(&prefix, "%s.new.", base) < 0) {
                prefix = NULL;
                return 0;
        }
        d = opendir(dir);
        if (!d)
                return 0;
        while ((de = readdir(d))) {
                const char *end;
                uint64_t pid;

                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
                        continue;
                if (parse_u64_prefix(de->d_name + strlen(prefix), &pid, &end) < 0 || pid == 0 || pid > INT_MAX ||
                    (*end && strncmp(end, ".tmp.", 5) != 0))
                        continue;
                if (kill((pid_t)pid, 0) < 0 && errno == ESRCH && unlinkat(dirfd(d), de->d_name, 0) == 0)
                        removed++;
        }
        closedir(d);
        return removed;
}

enum store_verdict store_judge(bool have_old, const struct readset_usage *u, uint64_t stale_percent, bool cut_short)
{
        if (have_old && u->old_bytes && u->still_used * 100 >= stale_percent * u->old_bytes)
                return STORE_KEEP_OLD;
        return cut_short ? STORE_CUT_SHORT : STORE_REPLACE;
}

int store_keep(const char *path, const struct readset *rs)
{
        _cleanup_free_ char *tmp = NULL;
        int r = store_new_path(path, &tmp);

        if (r < 0)
                return r;
        r = format_write(rs, tmp);
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        return r;
}
