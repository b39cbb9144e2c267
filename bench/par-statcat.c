/* SPDX-License-Identifier: MIT */
/* The naive parallel baseline on a share: N worker processes that stat and
 * read whole each file of a list (one path per line), round robin, then
 * wait for each other. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        int workers = argc > 2 ? atoi(argv[2]) : 32;
        if (argc < 2 || workers < 1) {
                fprintf(stderr, "usage: par-statcat LIST [WORKERS]\n");
                return 2;
        }
        for (int w = 0; w < workers; w++) {
                if (fork() == 0) {
                        FILE *f = fopen(argv[1], "re");
                        char *line = NULL, buf[1 << 16];
                        size_t cap = 0;
                        unsigned long i = 0;
                        ssize_t n;
                        if (!f)
                                _exit(1);
                        while ((n = getline(&line, &cap, f)) > 0) {
                                struct stat st;
                                int fd;
                                if (i++ % (unsigned)workers != (unsigned)w)
                                        continue;
                                if (line[n - 1] == '\n')
                                        line[n - 1] = 0;
                                if (stat(line, &st) < 0 || !S_ISREG(st.st_mode))
                                        continue;
                                fd = open(line, O_RDONLY | O_CLOEXEC);
                                if (fd < 0)
                                        continue;
                                while (read(fd, buf, sizeof(buf)) > 0)
                                        ;
                                close(fd);
                        }
                        _exit(0);
                }
        }
        while (wait(NULL) > 0)
                ;
        return 0;
}
