/* SPDX-License-Identifier: MIT */
#include "util/mounts.h"

#include <errno.h>
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

void mounts_free(struct mounts *mt)
{
        for (size_t i = 0; i < mt->n; i++) {
                free(mt->m[i].mnt);
                free(mt->m[i].fstype);
                free(mt->m[i].root);
        }
        free(mt->m);
        mt->m = NULL;
        mt->n = 0;
}

int mounts_parse_line(char *line, struct mount_ent *ret)
{
        /* ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
        char *fields[10] = { 0 }, *sep, *save = NULL, *tok;
        unsigned maj, min;
        int n = 0;

        sep = strstr(line, " - ");
        if (!sep)
                return 0;
        *sep = 0;
        for (tok = strtok_r(line, " ", &save); tok && n < 10; tok = strtok_r(NULL, " ", &save))
                fields[n++] = tok;
        if (n < 5 || sscanf(fields[2], "%u:%u", &maj, &min) != 2)
                return 0;
        tok = strtok_r(sep + 3, " \n", &save);
        if (!tok)
                return 0;
        mounts_unescape(fields[3]);
        mounts_unescape(fields[4]);
        ret->dev = makedev(maj, min);
        ret->root = strdup(fields[3]);
        ret->mnt = strdup(fields[4]);
        ret->fstype = strdup(tok);
        if (!ret->root || !ret->mnt || !ret->fstype) {
                free(ret->root);
                free(ret->mnt);
                free(ret->fstype);
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
                        free(m.root);
                        free(m.mnt);
                        free(m.fstype);
                        return -ENOMEM;
                }
                mt->m[mt->n++] = m;
        }
        return 0;
}
