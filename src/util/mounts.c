/* SPDX-License-Identifier: MIT */
#include "util/mounts.h"

#include <linux/magic.h>
#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/util.h"
#include "util/banned.h"

void mounts_unescape(char *s)
{
        char *d = s;
        while (*s) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
                        s += 4;
                } else
                        *d++ = *s++;
        }
        *d = 0;
}

bool mounts_has_option(const char *opts, const char *want)
{
        size_t n = strlen(want);

        for (const char *p = opts; p && *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                if (len == n && strncmp(p, want, n) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

void mount_ent_free(struct mount_ent *m)
{
        free(m->mnt);
        free(m->fstype);
        free(m->root);
        free(m->source);
        free(m->super);
        *m = (struct mount_ent){ 0 };
}

void mounts_free(struct mounts *mt)
{
        for (size_t i = 0; i < mt->n; i++)
                mount_ent_free(&mt->m[i]);
        free(mt->m);
        mt->m = NULL;
        mt->n = 0;
}

int mounts_parse_line(char *line, struct mount_ent *ret)
{
        /* ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
        char *fields[10] = { 0 }, *sep, *save = NULL, *tok, *src, *super = NULL;
        dev_t dev;
        int n = 0;

        sep = strstr(line, " - ");
        if (!sep)
                return 0;
        *sep = 0;
        for (tok = strtok_r(line, " ", &save); tok && n < 10; tok = strtok_r(NULL, " ", &save))
                fields[n++] = tok;
        if (n < 5 || parse_dev(fields[2], &dev) < 0)
                return 0;
        tok = strtok_r(sep + 3, " \n", &save);
        if (!tok)
                return 0;
        src = strtok_r(NULL, " \n", &save);
        if (src)
                super = strtok_r(NULL, " \n", &save);
        mounts_unescape(fields[3]);
        mounts_unescape(fields[4]);
        if (src)
                mounts_unescape(src);
        ret->dev = dev;
        ret->root = strdup(fields[3]);
        ret->mnt = strdup(fields[4]);
        ret->fstype = strdup(tok);
        ret->source = strdup(src ? src : "");
        ret->super = strdup(super ? super : "");
        if (!ret->root || !ret->mnt || !ret->fstype || !ret->source || !ret->super) {
                mount_ent_free(ret);
                return -ENOMEM;
        }
        return 1;
}

int mounts_read(struct mounts *mt)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, cap_m = 0;

        mounts_free(mt);
        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return -errno;
        while (getline(&line, &cap, f) > 0) {
                struct mount_ent m;
                int r = mounts_parse_line(line, &m);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                if (grow_array(&mt->m, &cap_m, mt->n + 1, sizeof(*mt->m)) < 0) {
                        mount_ent_free(&m);
                        return -ENOMEM;
                }
                mt->m[mt->n++] = m;
        }
        return 0;
}

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif
#ifndef EFIVARFS_MAGIC
#define EFIVARFS_MAGIC 0xde5e81e4
#endif
#ifndef PSTOREFS_MAGIC
#define PSTOREFS_MAGIC 0x6165676C
#endif
#ifndef SECURITYFS_MAGIC
#define SECURITYFS_MAGIC 0x73636673
#endif
#ifndef SELINUX_MAGIC
#define SELINUX_MAGIC 0xf97cff8c
#endif
#ifndef SMACK_MAGIC
#define SMACK_MAGIC 0x43415d53
#endif
#ifndef BINFMTFS_MAGIC
#define BINFMTFS_MAGIC 0x42494e4d
#endif
#define CONFIGFS_MAGIC_ 0x62656570
#define FUSECTL_MAGIC_ 0x65735543
#define MQUEUE_MAGIC_ 0x19800202

/* tmpfs and devtmpfs share a magic: which devices are devtmpfs, from
 * mountinfo, remembered (a replay asks of thousands of files on a few). */
static bool is_devtmpfs(dev_t dev)
{
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static struct { dev_t dev; bool devtmpfs; } seen[32];
        static size_t n_seen;
        struct mounts mt = { 0 };
        bool found = false, answer = false;

        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < n_seen; i++)
                if (seen[i].dev == dev) {
                        answer = seen[i].devtmpfs;
                        found = true;
                        break;
                }
        if (!found) {
                if (mounts_read(&mt) >= 0)
                        for (size_t i = 0; i < mt.n; i++)
                                if (mt.m[i].dev == dev && strcmp(mt.m[i].fstype, "devtmpfs") == 0)
                                        answer = true;
                mounts_free(&mt);
                if (n_seen < ARRAY_SIZE(seen))
                        seen[n_seen++].dev = dev, seen[n_seen - 1].devtmpfs = answer;
        }
        pthread_mutex_unlock(&lock);
        return answer;
}

bool mounts_is_pseudo(long f_type, dev_t dev)
{
        switch ((unsigned long)f_type & 0xffffffffUL) {
        case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case TRACEFS_MAGIC: case DEBUGFS_MAGIC:
        case CGROUP_SUPER_MAGIC: case CGROUP2_SUPER_MAGIC: case BPF_FS_MAGIC: case SECURITYFS_MAGIC:
        case PSTOREFS_MAGIC: case EFIVARFS_MAGIC: case CONFIGFS_MAGIC_: case FUSECTL_MAGIC_:
        case DEVPTS_SUPER_MAGIC: case MQUEUE_MAGIC_: case SELINUX_MAGIC: case SMACK_MAGIC:
        case BINFMTFS_MAGIC: case NSFS_MAGIC:
                return true;
        case TMPFS_MAGIC:
                return is_devtmpfs(dev);
        }
        return false;
}


const struct mount_ent *mounts_holding(const struct mounts *mt, const char *path, size_t len)
{
        const struct mount_ent *best = NULL;
        size_t best_len = 0;

        for (size_t i = 0; i < mt->n; i++) {
                const struct mount_ent *m = &mt->m[i];
                size_t ml = strlen(m->mnt);
                bool root = ml == 1 && m->mnt[0] == '/';
                if (!root && (ml > len || memcmp(m->mnt, path, ml) != 0 || (ml < len && path[ml] != '/')))
                        continue;
                if (!best || ml >= best_len) {
                        best = m;
                        best_len = ml;
                }
        }
        return best;
}

char *mounts_parse_swap_line(char *line)
{
        /* "Filename Type Size Used Priority": the name up to a blank */
        char *end;

        if (line[0] != '/')
                return NULL;
        end = line + strcspn(line, " \t\n");
        *end = '\0';
        mounts_unescape(line);
        return line;
}

void mounts_swaps_free(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

int mounts_read_swaps(char ***ret, size_t *ret_n)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/swaps", "re");
        _cleanup_free_ char *line = NULL;
        char **v = NULL;
        size_t cap = 0, n = 0, lcap = 0;

        *ret = NULL, *ret_n = 0;
        while (f && getline(&line, &lcap, f) > 0) {
                char *path = mounts_parse_swap_line(line);
                if (!path)
                        continue;
                if (grow_array(&v, &cap, n + 1, sizeof(*v)) < 0 || !(v[n] = strdup(path))) {
                        mounts_swaps_free(v, n);
                        return -ENOMEM;
                }
                n++;
        }
        *ret = v, *ret_n = n;
        return 0;
}

int mounts_watch_open(void)
{
        int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}
