/* SPDX-License-Identifier: MIT */
#include "util/util.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "util/banned.h"

int parse_u64_prefix(const char *s, uint64_t *ret, const char **ret_end)
{
        uint64_t v = 0;
        const char *p = s;

        if (!s || *p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        *ret_end = p;
        return 0;
}

int parse_u64(const char *s, uint64_t *ret)
{
        const char *end;
        uint64_t v;
        int r = parse_u64_prefix(s, &v, &end);

        if (r < 0)
                return r;
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_int(const char *s, int *ret)
{
        bool neg = s && *s == '-';
        const char *end;
        uint64_t v;
        int r;

        if (!s)
                return -EINVAL;
        r = parse_u64_prefix(s + neg, &v, &end);
        if (r < 0)
                return r;
        if (*end)
                return -EINVAL;
        if (v > (neg ? (uint64_t)INT_MAX + 1 : (uint64_t)INT_MAX))
                return -ERANGE;
        *ret = neg ? (int)(-(int64_t)v) : (int)v;
        return 0;
}

int parse_dev_prefix(const char *s, dev_t *ret, const char **ret_end)
{
        uint64_t maj, min;
        const char *p;
        int r;

        r = parse_u64_prefix(s, &maj, &p);
        if (r < 0)
                return r;
        if (*p != ':')
                return -EINVAL;
        r = parse_u64_prefix(p + 1, &min, &p);
        if (r < 0)
                return r;
        if (maj > UINT32_MAX || min > UINT32_MAX)
                return -ERANGE;
        *ret = makedev((unsigned)maj, (unsigned)min);
        *ret_end = p;
        return 0;
}

int parse_dev(const char *s, dev_t *ret)
{
        const char *end;
        dev_t d;
        int r = parse_dev_prefix(s, &d, &end);

        if (r < 0)
                return r;
        if (*end)
                return -EINVAL;
        *ret = d;
        return 0;
}

int parse_size(const char *s, uint64_t *ret)
{
        _cleanup_free_ char *copy = NULL;
        uint64_t v, mult = 1;
        size_t n;
        int r;

        if (!s || !*s)
                return -EINVAL;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        n = strlen(copy);
        switch (copy[n - 1]) {
        case 'k': case 'K': mult = 1ULL << 10; break;
        case 'm': case 'M': mult = 1ULL << 20; break;
        case 'g': case 'G': mult = 1ULL << 30; break;
        case 't': case 'T': mult = 1ULL << 40; break;
        }
        if (mult != 1)
                copy[n - 1] = 0;
        r = parse_u64(copy, &v);
        if (r < 0)
                return r;
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *ret = v * mult;
        return 0;
}

int grow_array(void *array, size_t *cap, size_t need, size_t esz)
{
        void **p = array;
        size_t n;
        void *q;

        if (need <= *cap)
                return 0;
        n = *cap ? *cap : 16;
        while (n < need) {
                if (n > SIZE_MAX / 2)
                        return -ENOMEM;
                n *= 2;
        }
        if (n > SIZE_MAX / esz)
                return -ENOMEM;
        q = realloc(*p, n * esz);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = n;
        return 0;
}

/* The length of the well-formed UTF-8 sequence at p (no overlong forms,
 * no surrogates, nothing above U+10FFFF), 0 if there is none. */
static int utf8_len(const unsigned char *p)
{
        int n = (p[0] >= 0xc2 && p[0] <= 0xdf) ? 1 : (p[0] >= 0xe0 && p[0] <= 0xef) ? 2 :
                (p[0] >= 0xf0 && p[0] <= 0xf4) ? 3 : -1;

        if (n < 0)
                return 0;
        for (int i = 1; i <= n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
            (p[0] == 0xf4 && p[1] >= 0x90))
                return 0;
        return n + 1;
}

const char *printable(const char *s, char *buf, size_t len)
{
        size_t o = 0;

        for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < len;) {
                int n = *p >= 0x80 ? utf8_len(p) : 1;
                if (*p < 0x20 || *p == 0x7f || n == 0) {
                        o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
                        p++;
                } else if (o + (size_t)n + 5 < len) {
                        memcpy(buf + o, p, (size_t)n);
                        o += (size_t)n;
                        p += n;
                } else
                        break;
        }
        buf[o] = 0;
        return buf;
}

/* bytes of buf up to its column col (its length when it is shorter) */
static size_t column_offset(const char *buf, size_t col)
{
        size_t o = 0;

        for (size_t c = 0; buf[o]; o++)
                if (((unsigned char)buf[o] & 0xc0) != 0x80 && c++ == col)
                        break;
        return o;
}

/* s made printable, then cut to width columns with "..." where it gave
 * some up: in its middle (its start and its end kept) or at its start.
 * Made whole first, beside buf where buf is too small for all of it. */
static const char *printable_cut(const char *s, size_t width, bool middle, char *buf, size_t len)
{
        _cleanup_free_ char *whole = NULL;
        size_t need = 4 * strlen(s) + 8, cols = 0, n, head, tail;
        char *w = buf;

        if (need > len && (whole = malloc(need)))
                w = whole;
        printable(s, w, w == buf ? len : need);
        for (const char *p = w; *p; p++)
                cols += ((unsigned char)*p & 0xc0) != 0x80;
        if (cols > width && width >= 5) {
                /* the end is what tells paths apart: it gets the larger half */
                head = middle ? (width - 3) / 2 : 0;
                n = strlen(w);
                tail = column_offset(w, cols - (width - 3 - head));
                head = column_offset(w, head);
                memmove(w + head + 3, w + tail, n - tail + 1);
                memcpy(w + head, "...", 3);
        }
        if (w != buf)
                printable(w, buf, len);
        return buf;
}

const char *printable_elided(const char *s, size_t width, char *buf, size_t len)
{
        return printable_cut(s, width, true, buf, len);
}

const char *printable_tail(const char *s, size_t width, char *buf, size_t len)
{
        return printable_cut(s, width, false, buf, len);
}

size_t text_line_break(const char *s, size_t width, const char **next)
{
        size_t cols = 0, brk = 0, i;

        for (i = 0; s[i]; i++) {
                if (s[i] == ' ' && i > 0 && s[i - 1] != ' ')
                        brk = i;
                if (((unsigned char)s[i] & 0xc0) != 0x80 && ++cols > width && brk)
                        break;
        }
        if (!s[i])
                for (brk = i; brk > 0 && s[brk - 1] == ' '; brk--)
                        ;
        *next = s + brk;
        while (**next == ' ')
                (*next)++;
        return brk;
}

const char *format_seconds(double s, char buf[static 32])
{
        if (s < 0.001)
                snprintf(buf, 32, "%.0f us", s * 1e6);
        else if (s < 1)
                snprintf(buf, 32, "%.0f ms", s * 1e3);
        else if (s < 100)
                snprintf(buf, 32, "%.2f s", s);
        else
                snprintf(buf, 32, "%.0f s", s);
        return buf;
}

const char *format_bytes(uint64_t n, char buf[static 32])
{
        static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double)n;
        unsigned u = 0;

        if (n < 1024) {
                snprintf(buf, 32, "%" PRIu64 " B", n);
                return buf;
        }
        while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                v /= 1024;
                u++;
        }
        snprintf(buf, 32, "%.1f %s", v, units[u]);
        return buf;
}

uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_us(void) { return now_ns() / 1000; }

ssize_t read_full(int fd, void *buf, size_t len)
{
        size_t off = 0;

        while (off < len) {
                ssize_t k = read(fd, (uint8_t *)buf + off, len - off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                off += (size_t)k;
        }
        return (ssize_t)off;
}

int read_fd_text(int fd, char **ret, size_t max)
{
        _cleanup_free_ char *buf = malloc(max + 1);
        ssize_t len;

        if (!buf)
                return -ENOMEM;
        len = read_full(fd, buf, max);
        if (len < 0)
                return (int)len;
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int fd_reopen(int pathfd, int flags)
{
        char p[64];
        int fd;

        snprintf(p, sizeof(p), "/proc/self/fd/%d", pathfd);
        fd = open(p, flags);
        return fd < 0 ? -errno : fd;
}

int fd_reopen_noatime(int pathfd, int flags)
{
        int fd = fd_reopen(pathfd, flags | O_NOATIME);

        return fd == -EPERM ? fd_reopen(pathfd, flags) : fd;
}

int fd_path(int fd, char *buf, size_t size)
{
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        return 0;
}

int read_small_file(const char *path, char **ret, size_t max)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        /* regular files only (sysfs, procfs and tracefs files are): a FIFO
         * or a device named here is refused, not waited on */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return read_fd_text(fd, ret, max);
}

int read_small_line(const char *path, char **ret, size_t max)
{
        int r = read_small_file(path, ret, max);

        if (r >= 0)
                (*ret)[strcspn(*ret, "\n")] = 0;
        return r;
}

int write_file_at(int dirfd, const char *path, const char *s)
{
        _cleanup_close_ int fd = -1;
        size_t len = strlen(s);
        ssize_t k;

        fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_TRUNC);
        if (fd < 0)
                return -errno;
        k = write(fd, s, len);
        if (k < 0)
                return -errno;
        if ((size_t)k != len)
                return -EIO;
        return 0;
}

int write_file(const char *path, const char *s) { return write_file_at(AT_FDCWD, path, s); }

uid_t invoking_uid(void)
{
        const char *s = getenv("SUDO_UID");
        uint64_t v;

        if (getuid() != 0)
                return getuid();
        if (s && parse_u64(s, &v) == 0 && v > 0 && v < (uid_t)-1)
                return (uid_t)v;
        return (uid_t)-1;
}

/* Is the directory path is written into the invoking user's? */
static bool in_invokers_dir(const char *path)
{
        const char *slash = strrchr(path, '/');
        char dir[4096];
        struct stat st;

        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        return stat(dir, &st) == 0 && st.st_uid == invoking_uid();
}

/* The temporary file write_file_atomic() writes beside path, made (its
 * name in *ret, the caller's to free): the descriptor, or -errno. */
static int temp_beside(const char *path, char **ret)
{
        int fd;

        if (asprintf(ret, "%s.tmp.XXXXXX", path) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(*ret, O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int write_file_atomic_check(const char *path)
{
        _cleanup_free_ char *tmp = NULL;
        struct stat st;
        int fd;

        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                return -EISDIR;
        fd = temp_beside(path, &tmp);
        if (fd < 0)
                return fd;
        close(fd);
        (void)unlink(tmp);
        return 0;
}

int write_file_atomic(const char *path, mode_t mode, int (*write_fn)(FILE *f, void *userdata), void *userdata)
{
        _cleanup_free_ char *tmp = NULL;
        FILE *f;
        int fd, e;

        fd = temp_beside(path, &tmp);
        if (fd < 0)
                return fd;
        f = fdopen(fd, "w");
        if (!f) {
                e = -errno;
                close(fd);
                unlink(tmp);
                return e;
        }
        e = write_fn(f, userdata);
        if (fflush(f) != 0 && e >= 0)
                e = -errno;     /* a full disk says so */
        if (ferror(f) && e >= 0)
                e = -EIO;
        if ((fchmod(fd, mode) < 0 || fsync(fd) < 0) && e >= 0)
                e = -errno;
        /* root under sudo, writing into a directory of the user who asked,
         * writes that user's file (readset show, report, replay of it then
         * work unprivileged); in root's directories (the profile cache, a
         * root --auto store) it stays root's */
        if (e >= 0 && geteuid() == 0 && invoking_uid() != (uid_t)-1 && in_invokers_dir(path)) {
                const char *g = getenv("SUDO_GID");
                uint64_t gid = (uint64_t)-1;
                if (!g || parse_u64(g, &gid) < 0 || gid >= (gid_t)-1)
                        gid = (uint64_t)-1;
                if (fchown(fd, invoking_uid(), (gid_t)gid) < 0)
                        e = -errno;
        }
        if (fclose(f) != 0 && e >= 0)
                e = -errno;
        if (e >= 0 && rename(tmp, path) < 0)
                e = -errno;
        if (e < 0)
                unlink(tmp);
        return e;
}

static int write_text(FILE *f, void *userdata)
{
        return fputs(userdata, f) < 0 ? -EIO : 0;
}

int write_file_atomic_text(const char *path, const char *text)
{
        return write_file_atomic(path, 0644, write_text, (void *)text);
}

int io_uring_usable(const char **why)
{
        struct io_uring ring;
        _cleanup_free_ char *s = NULL;
        uint64_t disabled = 0;
        int r = io_uring_queue_init(1, &ring, 0);

        if (r >= 0) {
                io_uring_queue_exit(&ring);
                *why = NULL;
                return 0;
        }
        if (read_small_line("/proc/sys/kernel/io_uring_disabled", &s, 16) >= 0)
                (void)parse_u64(s, &disabled);
        if (disabled)
                *why = disabled == 2 ? "disabled for everyone (sysctl kernel.io_uring_disabled = 2)" :
                                      "disabled outside the io_uring_group (sysctl kernel.io_uring_disabled = 1)";
        else if (r == -ENOSYS)
                *why = "not in this kernel";
        else if (r == -EPERM)
                *why = "not permitted here (a seccomp filter or a container's policy)";
        else
                *why = strerror(-r);
        return r;
}

int drop_caches(void)
{
        sync();
        return write_file("/proc/sys/vm/drop_caches", "3");
}

int make_dir_and_parent(const char *dir)
{
        char parent[PATH_MAX];
        char *slash;

        snprintf(parent, sizeof(parent), "%s", dir);
        slash = strrchr(parent, '/');
        if (slash && slash != parent) {
                *slash = 0;
                if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }
        return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int proc_stat(pid_t pid, struct proc_stat *ret)
{
        char path[64], buf[1024], *open_paren, *close_paren;
        unsigned long long ut, st;
        _cleanup_close_ int fd = -1;
        size_t comm;
        ssize_t n;
        int ppid;
        char state;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return -errno;
        if ((n = read(fd, buf, sizeof(buf) - 1)) <= 0)
                return n < 0 ? -errno : -ENODATA;
        buf[n] = 0;
        /* "pid (comm) state ppid ... utime stime": comm may hold anything,
         * ')' too, so the last ')' ends it */
        open_paren = strchr(buf, '(');
        close_paren = strrchr(buf, ')');
        if (!open_paren || !close_paren || close_paren < open_paren ||
            sscanf(close_paren + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &ppid, &ut,
                   &st) != 4)
                return -EBADMSG;
        comm = MIN((size_t)(close_paren - open_paren - 1), sizeof(ret->comm) - 1);
        memcpy(ret->comm, open_paren + 1, comm);
        ret->comm[comm] = 0;
        ret->state = state;
        ret->ppid = ppid;
        ret->cpu_ticks = (uint64_t)ut + (uint64_t)st;
        return 0;
}
