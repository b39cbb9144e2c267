/* SPDX-License-Identifier: MIT */
#include "util/mounts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/util.h"
#include "util/banned.h"

/* Unescape the octal escapes of /proc/self/mountinfo in place. */
static void unescape(char *s)
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
                /* ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
                struct mount_ent m;
                unsigned maj, min;
                char *fields[10] = { 0 }, *sep, *save = NULL, *tok;
                int n = 0;

                sep = strstr(line, " - ");
                if (!sep)
                        continue;
                *sep = 0;
                for (tok = strtok_r(line, " ", &save); tok && n < 10; tok = strtok_r(NULL, " ", &save))
                        fields[n++] = tok;
                if (n < 5 || sscanf(fields[2], "%u:%u", &maj, &min) != 2)
                        continue;
                tok = strtok_r(sep + 3, " ", &save);
                if (!tok)
                        continue;
                unescape(fields[3]);
                unescape(fields[4]);
                m.dev = makedev(maj, min);
                m.root = strdup(fields[3]);
                m.mnt = strdup(fields[4]);
                m.fstype = strdup(tok);
                if (!m.root || !m.mnt || !m.fstype ||
                    grow_array(&mt->m, &cap_m, mt->n + 1, sizeof(*mt->m)) < 0) {
                        free(m.root);
                        free(m.mnt);
                        free(m.fstype);
                        return -ENOMEM;
                }
                mt->m[mt->n++] = m;
        }
        return 0;
}
