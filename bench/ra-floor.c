/* SPDX-License-Identifier: MIT */
/* The kernel's share of a replay: the same readahead(2) calls from the
 * plainest loop.  Reads "PATH OFFSET LENGTH" lines, opens every file and
 * keeps the calls in memory first, then times only the calls in the order
 * given; prints "user_s sys_s" of that loop. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct call {
        int fd;
        unsigned long long off, len;
};

/* one descriptor per distinct path */
static char **paths;
static int *fds;
static size_t npaths;

static int fd_for(const char *path)
{
        for (size_t i = 0; i < npaths; i++)
                if (strcmp(paths[i], path) == 0)
                        return fds[i];
        paths = realloc(paths, (npaths + 1) * sizeof(*paths));
        fds = realloc(fds, (npaths + 1) * sizeof(*fds));
        if (!paths || !fds || !(paths[npaths] = strdup(path)))
                exit(1);
        fds[npaths] = open(path, O_RDONLY | O_CLOEXEC);
        return fds[npaths++];
}

static double secs(struct timeval tv)
{
        return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
        FILE *f;
        char *line = NULL, path[4096], last[4096] = "";
        size_t cap = 0, n = 0, ncap = 1 << 16;
        struct call *c = malloc(ncap * sizeof(*c));
        int fd = -1;
        struct rusage a, b;

        if (argc != 2 || !c || !(f = fopen(argv[1], "re"))) {
                fprintf(stderr, "usage: ra-floor LIST\n");
                return 2;
        }
        while (getline(&line, &cap, f) > 0) {
                unsigned long long off, len;
                if (sscanf(line, "%4095s %llu %llu", path, &off, &len) != 3)
                        continue;
                if (strcmp(path, last) != 0) {
                        fd = fd_for(path);
                        snprintf(last, sizeof(last), "%s", path);
                }
                if (fd < 0)
                        continue;
                if (n == ncap) {
                        ncap *= 2;
                        c = realloc(c, ncap * sizeof(*c));
                        if (!c)
                                return 1;
                }
                c[n++] = (struct call){ fd, off, len };
        }
        getrusage(RUSAGE_SELF, &a);
        for (size_t i = 0; i < n; i++)
                readahead(c[i].fd, (off64_t)c[i].off, c[i].len);
        getrusage(RUSAGE_SELF, &b);
        printf("%.3f %.3f\n", secs(b.ru_utime) - secs(a.ru_utime), secs(b.ru_stime) - secs(a.ru_stime));
        return 0;
}
