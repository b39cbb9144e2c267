/* SPDX-License-Identifier: MIT */
/* The parent-walk pattern of the field report's security suite (docs/FIELD.md,
 * issue 29): for each file of a list (paths relative to ROOT, one per line;
 * the first N), stat ROOT and every directory below it on the way to the
 * file, then the file itself four times.  Each stat is a whole path, walked
 * from / as the suite's were; no interpreter's lookups mix in.
 * Exits 1 when a stat fails (the tree is not what the list says). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int stat_ok(const char *path)
{
        struct stat st;
        if (stat(path, &st) == 0)
                return 1;
        perror(path);
        return 0;
}

int main(int argc, char **argv)
{
        long limit = argc > 3 ? atol(argv[3]) : -1;
        char *line = NULL, path[4096];
        size_t cap = 0, rootlen;
        long done = 0;
        ssize_t n;
        FILE *f;

        if (argc < 3 || argc > 4) {
                fprintf(stderr, "usage: parent-walk ROOT LIST [N]\n");
                return 2;
        }
        rootlen = strlen(argv[1]);
        f = fopen(argv[2], "re");
        if (!f) {
                perror(argv[2]);
                return 2;
        }
        while ((limit < 0 || done < limit) && (n = getline(&line, &cap, f)) > 0) {
                if (line[n - 1] == '\n')
                        line[--n] = 0;
                if (n == 0)
                        continue;
                if (rootlen + 1 + (size_t)n >= sizeof(path)) {
                        fprintf(stderr, "parent-walk: path too long: %s\n", line);
                        return 1;
                }
                memcpy(path, argv[1], rootlen);
                path[rootlen] = 0;
                if (!stat_ok(path))
                        return 1;
                /* each parent below ROOT, from the top down */
                for (char *slash = strchr(line, '/'); slash; slash = strchr(slash + 1, '/')) {
                        size_t len = (size_t)(slash - line);
                        path[rootlen] = '/';
                        memcpy(path + rootlen + 1, line, len);
                        path[rootlen + 1 + len] = 0;
                        if (!stat_ok(path))
                                return 1;
                }
                path[rootlen] = '/';
                memcpy(path + rootlen + 1, line, (size_t)n + 1);
                for (int i = 0; i < 4; i++)
                        if (!stat_ok(path))
                                return 1;
                done++;
        }
        free(line);
        fclose(f);
        return 0;
}
