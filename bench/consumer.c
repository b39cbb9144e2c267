/* SPDX-License-Identifier: MIT */
/* The benchmark's boot-like consumer: replays a manifest of small reads and
 * mmap page faults, in order, the way a start reads its files.
 *   R PATH OFFSET LENGTH   pread LENGTH bytes at OFFSET, 16 KiB at a time
 *   M PATH PAGE...         map PATH and touch one byte in each PAGE
 * Prints a checksum so that no read can be optimised away. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        static char buf[16384];
        char *line = NULL, path[4096] = "";
        size_t cap = 0;
        unsigned long sum = 0, lines = 0;
        int fd = -1;
        FILE *m;

        if (argc != 2) {
                fprintf(stderr, "usage: consumer MANIFEST\n");
                return 2;
        }
        m = fopen(argv[1], "re");
        if (!m) {
                perror(argv[1]);
                return 1;
        }
        while (getline(&line, &cap, m) > 0) {
                char *save = NULL, *op = strtok_r(line, " \n", &save), *p = strtok_r(NULL, " \n", &save);
                if (!op || !p)
                        continue;
                lines++;
                if (strcmp(p, path) != 0) {
                        if (fd >= 0)
                                close(fd);
                        snprintf(path, sizeof(path), "%s", p);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd < 0) {
                                perror(path);
                                return 1;
                        }
                }
                if (op[0] == 'R') {
                        unsigned long long off = strtoull(strtok_r(NULL, " \n", &save), NULL, 10);
                        unsigned long long len = strtoull(strtok_r(NULL, " \n", &save), NULL, 10);
                        while (len > 0) {
                                size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
                                ssize_t k = pread(fd, buf, n, (off_t)off);
                                if (k <= 0)
                                        break;
                                sum += (unsigned char)buf[0];
                                off += (unsigned long long)k;
                                len -= (unsigned long long)k;
                        }
                } else if (op[0] == 'M') {
                        struct stat st;
                        volatile unsigned char *map;
                        char *tok;
                        if (fstat(fd, &st) < 0 || st.st_size == 0)
                                continue;
                        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                        if (map == MAP_FAILED)
                                continue;
                        while ((tok = strtok_r(NULL, " \n", &save))) {
                                unsigned long long pg = strtoull(tok, NULL, 10);
                                if (pg * 4096 < (unsigned long long)st.st_size)
                                        sum += map[pg * 4096];
                        }
                        munmap((void *)map, (size_t)st.st_size);
                }
        }
        printf("%lu %lu\n", lines, sum);
        free(line);
        fclose(m);
        return 0;
}
