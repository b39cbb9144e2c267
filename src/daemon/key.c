/* SPDX-License-Identifier: MIT */
#include "daemon/key.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#define MAX_ARGS 64

bool key_is_interpreter(const char *base)
{
        static const char *const names[] = {
                "sh", "bash", "dash", "zsh", "ksh", "fish", "env", "perl", "ruby", "node", "nodejs",
                "java", "php", "lua", "tclsh", "Rscript", "awk", "gawk",
        };
        size_t n = strlen(base);

        /* python, python3, python3.11 ... */
        if (strncmp(base, "python", 6) == 0 && strspn(base + 6, "0123456789.") == n - 6)
                return true;
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(base, names[i]) == 0)
                        return true;
        return false;
}

/* Options of these programs that take the next word as their value. */
static bool takes_value(const char *base, const char *opt)
{
        if (strcmp(base, "java") == 0)
                return strcmp(opt, "-cp") == 0 || strcmp(opt, "-classpath") == 0 ||
                       strcmp(opt, "--class-path") == 0 || strcmp(opt, "--module-path") == 0 ||
                       strcmp(opt, "-p") == 0;
        if (strncmp(base, "python", 6) == 0)
                return strcmp(opt, "-W") == 0 || strcmp(opt, "-X") == 0 || strcmp(opt, "--check-hash-based-pycs") == 0;
        if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0)
                return strcmp(opt, "-r") == 0 || strcmp(opt, "--require") == 0;
        if (strcmp(base, "env") == 0)
                return strcmp(opt, "-u") == 0 || strcmp(opt, "-C") == 0 || strcmp(opt, "-S") == 0;
        return false;
}

void key_script_of_argv(const char *base, char *const *argv, int argc, const char *cwd, char *buf, size_t size)
{
        buf[0] = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                bool evaluates = strcmp(base, "perl") == 0 || strcmp(base, "ruby") == 0 || strcmp(base, "node") == 0 ||
                                 strcmp(base, "nodejs") == 0;

                if (strcmp(a, "-c") == 0 || (evaluates && (strcmp(a, "-e") == 0 || strcmp(a, "--eval") == 0)) ||
                    strcmp(a, "-") == 0 || strcmp(a, "--") == 0)
                        return;         /* a string or standard input: the interpreter's own */
                if (strncmp(base, "python", 6) == 0 && strcmp(a, "-m") == 0) {
                        if (i + 1 < argc)
                                snprintf(buf, size, "module:%s", argv[i + 1]);
                        return;
                }
                if (strcmp(base, "java") == 0 && strcmp(a, "-jar") == 0) {
                        if (i + 1 < argc)
                                a = argv[++i];
                        else
                                return;
                } else if (a[0] == '-') {
                        if (takes_value(base, a))
                                i++;
                        continue;
                } else if (strcmp(base, "env") == 0 && strchr(a, '=')) {
                        continue;       /* NAME=VALUE */
                }
                if (strcmp(base, "java") == 0 && !strchr(a, '/') && !strstr(a, ".jar"))
                        snprintf(buf, size, "class:%s", a);
                else if (a[0] == '/' || !cwd)
                        snprintf(buf, size, "%s", a);
                else
                        snprintf(buf, size, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", a);
                return;
        }
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 0x100000001b3ULL;
        }
        return h;
}

/* base name of p, its characters made plain, at most max bytes */
static void plain_base(const char *p, char *out, size_t max)
{
        const char *b = strrchr(p, '/');
        size_t n = 0;

        b = b ? b + 1 : p;
        if (strncmp(p, "module:", 7) == 0 || strncmp(p, "class:", 6) == 0)
                b = strchr(p, ':') + 1;
        for (; *b && n + 1 < max; b++) {
                bool plain = isalnum((unsigned char)*b) || *b == '_' || *b == '-' || (*b == '.' && n > 0);
                out[n++] = plain ? *b : '_';
        }
        out[n] = 0;
}

void key_name(struct start_key *k)
{
        char a[64], b[64];
        uint64_t h = fnv1a(0xcbf29ce484222325ULL, k->exe);

        h = fnv1a(fnv1a(h, "\n"), k->script);
        plain_base(k->exe, a, 40);
        plain_base(k->script, b, 40);
        snprintf(k->name, sizeof(k->name), "%s%s%s-%016llx", a[0] ? a : "_", b[0] ? "-" : "", b,
                 (unsigned long long)h);
}

/* /proc/PID/<what>, read whole (at most max bytes), NUL kept */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t max)
{
        char path[64];
        _cleanup_close_ int fd = -1;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read_full(fd, buf, max - 1);
        if (n < 0)
                return n;
        buf[n] = 0;
        return n;
}

static int same_mount_ns(pid_t pid)
{
        char path[64];
        struct stat a, b;

        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
        if (stat(path, &a) < 0)
                return -errno;
        if (stat("/proc/self/ns/mnt", &b) < 0)
                return -errno;
        return a.st_ino == b.st_ino && a.st_dev == b.st_dev ? 0 : -EXDEV;
}

static uid_t real_uid(pid_t pid)
{
        char buf[4096], *p;
        const char *end;
        uint64_t u;

        if (read_proc(pid, "status", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nUid:")))
                return (uid_t)-1;
        p += 5;
        p += strspn(p, " \t");
        if (parse_u64_prefix(p, &u, &end) < 0)
                return (uid_t)-1;
        return (uid_t)u;
}

bool key_is_elf(int fd)
{
        unsigned char m[4];

        /* (the exec read this page already: it is cached) */
        return pread(fd, m, 4, 0) == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

int start_key_of_exec(pid_t pid, int exe_fd, const char *script, struct start_key *k)
{
        char path[64], cwd[PATH_MAX], args[8192], *argv[MAX_ARGS];
        const char *base;
        struct stat fs, ps;
        ssize_t n, len;
        int argc = 0, r;

        memset(k, 0, sizeof(*k));
        if (fstat(exe_fd, &fs) < 0)
                return -errno;
        if ((r = same_mount_ns(pid)) < 0)
                return r == -ENOENT ? -ESRCH : r;
        if ((r = fd_path(exe_fd, k->exe, sizeof(k->exe))) < 0)
                return r;
        if (k->exe[0] != '/' || strstr(k->exe, " (deleted)"))
                return -ESRCH;  /* nothing to key by */
        k->dev = fs.st_dev;
        k->ino = fs.st_ino;
        k->size = (uint64_t)fs.st_size;
        k->mtime_ns = (uint64_t)fs.st_mtim.tv_sec * 1000000000ULL + (uint64_t)fs.st_mtim.tv_nsec;
        k->uid = real_uid(pid);
        base = strrchr(k->exe, '/') + 1;
        if (script)
                snprintf(k->script, sizeof(k->script), "%s", script);
        else if (key_is_interpreter(base)) {
                /* its script is in its arguments, there once the exec is
                 * done: the exe switched, and (a little after) the new
                 * command line set up */
                snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
                if (stat(path, &ps) < 0)
                        return errno == ENOENT ? -ESRCH : -errno;
                if (ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino)
                        return -EAGAIN;
                len = read_proc(pid, "cmdline", args, sizeof(args));
                if (len == 0)
                        return -EAGAIN;
                for (ssize_t i = 0; len > 0 && i < len && argc < MAX_ARGS; i += (ssize_t)strlen(args + i) + 1)
                        argv[argc++] = args + i;
                snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
                n = readlink(path, cwd, sizeof(cwd) - 1);
                if (n > 0)
                        cwd[n] = 0;
                key_script_of_argv(base, argv, argc, n > 0 && cwd[0] == '/' ? cwd : NULL, k->script,
                                   sizeof(k->script));
        }
        key_name(k);
        return 0;
}
