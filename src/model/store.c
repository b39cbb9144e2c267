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
#include "util/util.h"
#include "util/banned.h"

/* Each missing directory of path made, from the top: only below a directory
 * the caller owns (root making ~/.cache in a user's home would leave it
 * root's, and the user's programs without a cache). */
static int make_parents(char *path)
{
        char *slash = strrchr(path, '/');
        struct stat st;
        int r;

        if (!slash || slash == path)
                return -ENOENT;
        *slash = 0;
        if (stat(path, &st) == 0)
                r = !S_ISDIR(st.st_mode) ? -ENOTDIR : st.st_uid != geteuid() ? -ENOENT : 0;
        else
                r = errno == ENOENT ? make_parents(path) : -errno;
        if (r == 0 && mkdir(path, 0755) < 0 && errno != EEXIST)
                r = -errno;
        *slash = '/';
        return r;
}

int store_prepare(const char *dir)
{
        _cleanup_free_ char *copy = NULL;
        int r;

        if (mkdir(dir, 0755) == 0 || errno == EEXIST)
                return 0;
        if (errno != ENOENT)
                return -errno;
        copy = strdup(dir);
        if (!copy)
                return -ENOMEM;
        while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
                copy[strlen(copy) - 1] = 0;
        r = make_parents(copy);
        if (r < 0)
                return r;
        return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
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
