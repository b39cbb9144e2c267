/* SPDX-License-Identifier: MIT */
/* The naive parallel baseline: N worker processes calling readahead(2) over
 * "PATH OFFSET LENGTH" lines, round robin, then waiting for each other. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        int workers = argc > 2 ? atoi(argv[2]) : 32;
        if (argc < 2) {
                fprintf(stderr, "usage: par-readahead LIST [WORKERS]\n");
                return 2;
        }
        for (int w = 0; w < workers; w++) {
                if (fork() == 0) {
                        FILE *f = fopen(argv[1], "re");
                        char *line = NULL, path[4096];
                        size_t cap = 0;
                        unsigned long long off, len, i = 0;
                        if (!f)
                                _exit(1);
                        while (getline(&line, &cap, f) > 0) {
                                if (i++ % (unsigned)workers != (unsigned)w)
                                        continue;
                                if (sscanf(line, "%4095s %llu %llu", path, &off, &len) != 3)
                                        continue;
                                int fd = open(path, O_RDONLY | O_CLOEXEC);
                                if (fd < 0)
                                        continue;
                                readahead(fd, (off64_t)off, len);
                                close(fd);
                        }
                        _exit(0);
                }
        }
        while (wait(NULL) > 0)
                ;
        return 0;
}
