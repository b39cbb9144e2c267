/* SPDX-License-Identifier: MIT */
/* A program whose reads are known exactly, for the end-to-end tests.
 *   rs-testprog read FILE OFFSET LENGTH    pread LENGTH bytes at OFFSET (64 KiB calls)
 *   rs-testprog mmap FILE PAGE...          map FILE, touch one byte of each PAGE
 *   rs-testprog evict FILE...              drop FILE's pages from the page cache
 *   rs-testprog stat PATH...               stat each PATH (missing ones too)
 *   rs-testprog spawn PROG ARGS...         fork, exec PROG in the child, wait
 *   rs-testprog resident FILE OFFSET LENGTH  print how many of those bytes are cached
 *   rs-testprog sigdfl PROG ARGS...        exec PROG with SIGINT and SIGQUIT at their
 *                                          defaults (a shell's background jobs ignore
 *                                          them; a terminal's foreground job does not)
 *   rs-testprog countint READY             touch READY, then count SIGINTs until 1 s after
 *                                          the first (10 s at most); print the count and
 *                                          how many of them the parent sent */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ints, ints_from_parent;

static void count_int(int sig, siginfo_t *si, void *ctx)
{
        (void)sig;
        (void)ctx;
        ints++;
        if (si->si_code == SI_USER && si->si_pid == getppid())
                ints_from_parent++;
}

static unsigned long long num(const char *s)
{
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 0);
        if (errno || *end || !*s) {
                fprintf(stderr, "rs-testprog: bad number '%s'\n", s);
                exit(2);
        }
        return v;
}

/* Bytes of [off, off + len) of path in the page cache (mincore), printed;
 * 1 where the file cannot be asked. */
static int print_resident(const char *path, unsigned long long off, unsigned long long len, long page)
{
        unsigned long long start = off & ~((unsigned long long)page - 1), n, count = 0;
        struct stat st;
        unsigned char *vec;
        void *m;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st) < 0) {
                perror(path);
                return 1;
        }
        if (off + len > (unsigned long long)st.st_size)
                len = (unsigned long long)st.st_size > off ? (unsigned long long)st.st_size - off : 0;
        if (len == 0) {
                printf("0\n");
                close(fd);
                return 0;
        }
        n = (off + len - start + (unsigned long long)page - 1) / (unsigned long long)page;
        m = mmap(NULL, off + len - start, PROT_READ, MAP_SHARED, fd, (off_t)start);
        vec = malloc(n);
        if (m == MAP_FAILED || !vec || mincore(m, off + len - start, vec) < 0) {
                perror("mincore");
                return 1;
        }
        for (unsigned long long i = 0; i < n; i++)
                count += vec[i] & 1;
        printf("%llu\n", count * (unsigned long long)page);
        free(vec);
        munmap(m, off + len - start);
        close(fd);
        return 0;
}

int main(int argc, char **argv)
{
        long page = sysconf(_SC_PAGESIZE);

        if (argc < 3 && !(argc == 2 && strcmp(argv[1], "resident-list") == 0)) {
                fprintf(stderr, "usage: rs-testprog read|mmap|evict|stat|resident|resident-list|spawn ...\n");
                return 2;
        }
        if (strcmp(argv[1], "read") == 0 && argc == 5) {
                static char buf[65536];
                unsigned long long off = num(argv[3]), len = num(argv[4]);
                int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        perror(argv[2]);
                        return 1;
                }
                while (len > 0) {
                        size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
                        ssize_t k = pread(fd, buf, n, (off_t)off);
                        if (k <= 0) {
                                perror("pread");
                                return 1;
                        }
                        off += (unsigned long long)k;
                        len -= (unsigned long long)k;
                }
                close(fd);
                return 0;
        }
        if (strcmp(argv[1], "mmap") == 0 && argc >= 4) {
                struct stat st;
                volatile unsigned char *p;
                unsigned sum = 0;
                int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        perror(argv[2]);
                        return 1;
                }
                p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (p == MAP_FAILED) {
                        perror("mmap");
                        return 1;
                }
                for (int i = 3; i < argc; i++) {
                        unsigned long long pg = num(argv[i]);
                        if ((off_t)(pg * (unsigned long long)page) >= st.st_size)
                                return 2;
                        sum += p[pg * (unsigned long long)page];
                }
                printf("%u\n", sum & 1);
                return 0;
        }
        if (strcmp(argv[1], "evict") == 0) {
                for (int i = 2; i < argc; i++) {
                        int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
                        if (fd < 0 || fdatasync(fd) < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
                                perror(argv[i]);
                                return 1;
                        }
                        close(fd);
                }
                return 0;
        }
        if (strcmp(argv[1], "stat") == 0) {
                for (int i = 2; i < argc; i++) {
                        struct stat st;
                        printf("%s %s\n", argv[i], stat(argv[i], &st) == 0 ? "exists" : "missing");
                }
                return 0;
        }
        /* resident-list: "OFF LEN PATH" lines on stdin, one count each on
         * stdout (one process for many ranges: asked before the cache
         * forgets them) */
        if (strcmp(argv[1], "resident-list") == 0 && argc == 2) {
                char line[8192];
                while (fgets(line, sizeof(line), stdin)) {
                        unsigned long long off, len;
                        int at = 0;
                        line[strcspn(line, "\n")] = '\0';
                        if (sscanf(line, "%llu %llu %n", &off, &len, &at) != 2 || !at) {
                                fprintf(stderr, "resident-list: bad line '%s'\n", line);
                                return 1;
                        }
                        if (print_resident(line + at, off, len, page) != 0)
                                return 1;
                        fflush(stdout);
                }
                return 0;
        }
        if (strcmp(argv[1], "resident") == 0 && argc == 5)
                return print_resident(argv[2], num(argv[3]), num(argv[4]), page);
        if (strcmp(argv[1], "sigdfl") == 0) {
                signal(SIGINT, SIG_DFL);
                signal(SIGQUIT, SIG_DFL);
                execvp(argv[2], argv + 2);
                perror(argv[2]);
                return 127;
        }
        if (strcmp(argv[1], "countint") == 0 && argc == 3) {
                struct sigaction sa = { .sa_sigaction = count_int, .sa_flags = SA_SIGINFO };
                int fd;

                sigemptyset(&sa.sa_mask);
                sigaction(SIGINT, &sa, NULL);
                fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd < 0)
                        return 1;
                close(fd);
                /* each delivery runs the handler once; one arriving while it
                 * runs waits (SIGINT is blocked there) and runs it again */
                for (int tenths = 0, first = -1; tenths < 100 && (first < 0 || tenths - first < 10); tenths++) {
                        struct timespec t = { 0, 100000000 };
                        while (nanosleep(&t, &t) < 0 && errno == EINTR)
                                ;
                        if (first < 0 && ints)
                                first = tenths;
                }
                printf("%d %d\n", (int)ints, (int)ints_from_parent);
                return 0;
        }
        if (strcmp(argv[1], "spawn") == 0) {
                int status;
                pid_t pid = fork();
                if (pid == 0) {
                        execvp(argv[2], argv + 2);
                        _exit(127);
                }
                if (pid < 0 || waitpid(pid, &status, 0) < 0)
                        return 1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        }
        fprintf(stderr, "rs-testprog: bad arguments\n");
        return 2;
}
