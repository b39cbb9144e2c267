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

static bool one_of(const char *base, const char *const *names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(base, names[i]) == 0)
                        return true;
        return false;
}

static bool is_python(const char *base)
{
        size_t n = strlen(base);

        /* python, python3, python3.11 ... */
        return strncmp(base, "python", 6) == 0 && strspn(base + 6, "0123456789.") == n - 6;
}

static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish" };
static const char *const awks[] = { "awk", "gawk", "mawk", "nawk" };

bool key_is_interpreter(const char *base)
{
        static const char *const names[] = {
                "perl", "ruby", "node", "nodejs", "java", "php", "lua", "tclsh", "Rscript",
        };

        return is_python(base) || one_of(base, names, ARRAY_SIZE(names)) || one_of(base, shells, ARRAY_SIZE(shells)) ||
               one_of(base, awks, ARRAY_SIZE(awks));
}

bool key_is_launcher(const char *base)
{
        /* what runs another program in its own process (exec), changing
         * only how it runs: the program it runs is the start */
        static const char *const names[] = {
                "env", "nice", "ionice", "taskset", "chrt", "stdbuf", "setpriv", "nohup", "numactl", "setsid",
                "unbuffer", "prlimit",
        };

        return one_of(base, names, ARRAY_SIZE(names));
}

/* Options of these programs whose value is the next word. */
static bool takes_value(const char *base, const char *opt)
{
        static const char *const java[] = { "-cp", "-classpath", "--class-path", "--module-path", "-p",
                                            "--add-modules", "-d" };
        static const char *const python[] = { "-W", "-X", "--check-hash-based-pycs" };
        static const char *const node[] = { "-r", "--require", "--import", "--loader", "-C", "--conditions" };

        if (strcmp(base, "java") == 0)
                return one_of(opt, java, ARRAY_SIZE(java));
        if (is_python(base))
                return one_of(opt, python, ARRAY_SIZE(python));
        if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0)
                return one_of(opt, node, ARRAY_SIZE(node));
        if (one_of(base, shells, ARRAY_SIZE(shells)))
                return strcmp(opt, "-o") == 0 || strcmp(opt, "+o") == 0 || strcmp(opt, "-O") == 0 ||
                       strcmp(opt, "+O") == 0 || strcmp(opt, "--rcfile") == 0 || strcmp(opt, "--init-file") == 0;
        if (one_of(base, awks, ARRAY_SIZE(awks)))
                return strcmp(opt, "-v") == 0 || strcmp(opt, "-F") == 0;
        if (strcmp(base, "perl") == 0 || strcmp(base, "ruby") == 0)
                return strcmp(opt, "-I") == 0 || strcmp(opt, "-M") == 0 || strcmp(opt, "-m") == 0 ||
                       strcmp(opt, "-r") == 0;
        return false;
}

/* Is the short option cluster (after its '-') one that runs code given on
 * the command line (sh -ec, python3 -Ic, perl -ne, node -p ...)? */
static bool inline_code(const char *base, const char *cluster)
{
        if (is_python(base) || one_of(base, shells, ARRAY_SIZE(shells)))
                return strchr(cluster, 'c') != NULL;
        if (strcmp(base, "perl") == 0 || strcmp(base, "ruby") == 0)
                return strchr(cluster, 'e') != NULL || strchr(cluster, 'E') != NULL;
        if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0)
                return strcmp(cluster, "e") == 0 || strcmp(cluster, "p") == 0 || strcmp(cluster, "-eval") == 0 ||
                       strcmp(cluster, "-print") == 0;
        if (strcmp(base, "php") == 0 || strcmp(base, "lua") == 0)
                return strchr(cluster, 'r') != NULL || strchr(cluster, 'e') != NULL;
        return false;
}

static void script_path(const char *a, const char *cwd, char *buf, size_t size)
{
        if (a[0] == '/' || !cwd)
                snprintf(buf, size, "%s", a);
        else
                snprintf(buf, size, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", a);
}

void key_script_of_argv(const char *base, char *const *argv, int argc, const char *cwd, char *buf, size_t size)
{
        bool awk = one_of(base, awks, ARRAY_SIZE(awks)), java = strcmp(base, "java") == 0;

        buf[0] = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (strcmp(a, "-") == 0)
                        return;         /* standard input: the interpreter's own */
                if (strcmp(a, "--") == 0) {
                        if (i + 1 < argc && !awk)
                                script_path(argv[i + 1], cwd, buf, size);
                        return;
                }
                if (a[0] == '-' || (a[0] == '+' && one_of(base, shells, ARRAY_SIZE(shells)))) {
                        if (inline_code(base, a + 1))
                                return;         /* code on the command line: the interpreter's own */
                        if (is_python(base) && a[1] != '-' && strchr(a + 1, 'm')) {
                                /* -m MODULE (or -mMODULE), perhaps after flags: -Bm */
                                const char *m = strchr(a + 1, 'm') + 1;
                                if (*m)
                                        snprintf(buf, size, "module:%s", m);
                                else if (i + 1 < argc)
                                        snprintf(buf, size, "module:%s", argv[i + 1]);
                                return;
                        }
                        if (java && (strcmp(a, "-jar") == 0 || strcmp(a, "-m") == 0 || strcmp(a, "--module") == 0)) {
                                if (i + 1 >= argc)
                                        return;
                                if (strcmp(a, "-jar") == 0)
                                        script_path(argv[i + 1], cwd, buf, size);
                                else
                                        snprintf(buf, size, "module:%s", argv[i + 1]);
                                return;
                        }
                        if (awk && strcmp(a, "-f") == 0) {
                                if (i + 1 < argc)
                                        script_path(argv[i + 1], cwd, buf, size);
                                return;
                        }
                        if (takes_value(base, a))
                                i++;
                        continue;
                }
                if (awk)
                        return;         /* its program text: the interpreter's own */
                if (java && !strchr(a, '/') && !strstr(a, ".jar"))
                        snprintf(buf, size, "class:%s", a);
                else
                        script_path(a, cwd, buf, size);
                return;
        }
}

uint64_t key_hash(uint64_t h, const char *s)
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
                b = strchr(p, ':') + 1;     /* (a module's dots kept: http.server) */
        for (; *b && n + 1 < max; b++) {
                bool plain = isalnum((unsigned char)*b) || *b == '_' || *b == '-' || (*b == '.' && n > 0);
                out[n++] = plain ? *b : '_';
        }
        out[n] = 0;
}

void key_name(struct start_key *k)
{
        char a[64], b[64], uid[24];
        uint64_t h = key_hash(KEY_HASH_SEED, k->exe);

        /* each user's starts their own: another's read set is not theirs
         * to replay (its files, its sizes), nor their history */
        snprintf(uid, sizeof(uid), "\n%u\n", (unsigned)k->uid);
        h = key_hash(key_hash(h, uid), k->script);
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

int key_host_ns(struct key_ns *ret)
{
        struct stat st;

        /* PID 1's: the daemon's own may be a sandbox's (systemd's
         * ProtectSystem= makes one, whose paths are the host's); ours
         * where PID 1's cannot be asked (an init that hides it) */
        if (stat("/proc/1/ns/mnt", &st) < 0 && stat("/proc/self/ns/mnt", &st) < 0)
                return -errno;
        *ret = (struct key_ns){ .dev = st.st_dev, .ino = st.st_ino };
        return 0;
}

/* Does pid see the host's files (its mount namespace host's)? */
static int host_mount_ns(pid_t pid, const struct key_ns *host)
{
        char path[64];
        struct stat a;

        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
        if (stat(path, &a) < 0)
                return -errno;
        return a.st_ino == host->ino && a.st_dev == host->dev ? 0 : -EXDEV;
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

int key_exec_file(int fd, struct exec_file *ef)
{
        unsigned char h[64], ph[56];
        char interp[PATH_MAX];
        bool is64;
        uint64_t phoff;
        unsigned phnum, phentsize;
        int r;

        memset(ef, 0, sizeof(*ef));
        if ((r = fd_path(fd, ef->path, sizeof(ef->path))) < 0)
                return r;
        /* (the exec read this page already: it is cached) */
        if (pread(fd, h, sizeof(h), 0) < 4 || memcmp(h, "\177ELF", 4) != 0)
                return 0;               /* a script, whose interpreter the exec opens next */
        ef->elf = true;
        if (h[5] != 1)
                return 0;               /* (little-endian ELF only: the machines readset runs on) */
        is64 = h[4] == 2;
        phoff = is64 ? get_le(h + 32, 8) : get_le(h + 28, 4);
        phentsize = (unsigned)get_le(h + (is64 ? 54 : 42), 2);
        phnum = (unsigned)get_le(h + (is64 ? 56 : 44), 2);
        if (phentsize < (is64 ? 56u : 32u) || phentsize > sizeof(ph) * 4 || phnum > 128)
                return 0;
        for (unsigned i = 0; i < phnum; i++) {
                uint64_t off, len;

                if (pread(fd, ph, is64 ? 56 : 32, (off_t)(phoff + (uint64_t)i * phentsize)) != (is64 ? 56 : 32))
                        return 0;
                if (get_le(ph, 4) != 3)         /* PT_INTERP */
                        continue;
                off = is64 ? get_le(ph + 8, 8) : get_le(ph + 4, 4);
                len = is64 ? get_le(ph + 32, 8) : get_le(ph + 16, 4);
                if (len < 2 || len >= sizeof(interp) || pread(fd, interp, len, (off_t)off) != (ssize_t)len ||
                    interp[len - 1] != 0 || interp[0] != '/')
                        return 0;
                /* its file name: the path is not looked up (the daemon's
                 * main thread touches no file system a user could stall) */
                snprintf(ef->loader, sizeof(ef->loader), "%s", strrchr(interp, '/') + 1);
                return 0;
        }
        return 0;               /* static: no loader */
}

int start_key_of_exec(pid_t pid, int exe_fd, const char *exe_path, const char *script, const struct key_ns *host,
                      struct start_key *k)
{
        char path[64], cwd[PATH_MAX], args[8192], *argv[MAX_ARGS];
        const char *base;
        struct stat fs, ps;
        ssize_t n, len;
        int argc = 0, r;

        memset(k, 0, sizeof(*k));
        if (fstat(exe_fd, &fs) < 0)
                return -errno;
        if ((r = host_mount_ns(pid, host)) < 0)
                return r == -ENOENT ? -ESRCH : r;
        if (exe_path)
                snprintf(k->exe, sizeof(k->exe), "%s", exe_path);
        else if ((r = fd_path(exe_fd, k->exe, sizeof(k->exe))) < 0)
                return r;
        if (k->exe[0] != '/' || strstr(k->exe, " (deleted)"))
                return -ESRCH;  /* nothing to key by */
        k->dev = fs.st_dev;
        k->ino = fs.st_ino;
        k->size = (uint64_t)fs.st_size;
        k->mtime_ns = (uint64_t)fs.st_mtim.tv_sec * 1000000000ULL + (uint64_t)fs.st_mtim.tv_nsec;
        k->uid = real_uid(pid);
        base = strrchr(k->exe, '/') + 1;
        if (script) {
                snprintf(k->script, sizeof(k->script), "%s", script);
                k->script_opened = true;
        }
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
