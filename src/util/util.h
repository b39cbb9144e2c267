/* SPDX-License-Identifier: MIT */
/* Small helpers shared by every module: cleanup attributes, strict number
 * parsing, growable arrays, small files.  (Logging, for commands only, is
 * util/log.h.) */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define SWAP(a, b) do { __typeof__(a) swap_tmp_ = (a); (a) = (b); (b) = swap_tmp_; } while (0)

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))

/* Take ownership out of a cleanup variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -1; _t; })

/* Strict parsers of numbers read from outside: decimal digits only (no
 * space, no sign where none is expected, no base prefix), range checked
 * (-ERANGE), the whole string (-EINVAL for anything after it); nothing is
 * stored on an error. */
int parse_u64(const char *s, uint64_t *ret);
int parse_size(const char *s, uint64_t *ret);   /* accepts K, M, G suffixes */
int parse_int(const char *s, int *ret);         /* a '-' allowed */
int parse_dev(const char *s, dev_t *ret);       /* "MAJOR:MINOR", each < 2^32 */
/* The same for a number at the start of s that the caller reads on from:
 * at least one digit, *ret_end set past the last one (what follows is for
 * the caller to check). */
int parse_u64_prefix(const char *s, uint64_t *ret, const char **ret_end);
int parse_dev_prefix(const char *s, dev_t *ret, const char **ret_end);

/* Grow *array (element size esz) so it can hold at least `need` elements. */
int grow_array(void *array, size_t *cap, size_t need, size_t esz);

/* Little-endian integers of `size` bytes (1..8) in a byte buffer. */
static inline uint64_t get_le(const uint8_t *p, int size)
{
        uint64_t v = 0;
        for (int i = size - 1; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

static inline void put_le(uint8_t *p, uint64_t v, int size)
{
        for (int i = 0; i < size; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* qsort(3) and bsearch(3) of an array of const char *, by strcmp. */
static inline int cmp_str_ptrs(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* qsort(3) that accepts an empty (possibly NULL) array. */
static inline void qsort_safe(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
        if (n > 1)
                qsort(base, n, size, cmp);
}

/* Paths and commands come from files: never let them drive the terminal.
 * Control characters and bytes that are not UTF-8 become \xNN; the result
 * is cut to fit len. */
const char *printable(const char *s, char *buf, size_t len);
/* s made printable, and where that is wider than width columns (a UTF-8
 * character one column), its middle given up for "...": its start and its
 * end (a path's file name) kept, width columns in all.  For a line of text
 * output that must fit the terminal; len as for printable().  Returns buf. */
const char *printable_elided(const char *s, size_t width, char *buf, size_t len);
/* The same, its start given up instead ("...", then its last columns). */
const char *printable_tail(const char *s, size_t width, char *buf, size_t len);
/* The bytes of the first line of s (text without newlines) that fits width
 * columns, broken between words (spaces that follow a word): a word wider
 * than width is a line of its own.  *next: where the next line begins, the
 * spaces between them skipped (at s's end: its NUL). */
size_t text_line_break(const char *s, size_t width, const char **next);

/* Human-readable byte count, e.g. "12.3 MiB". */
const char *format_bytes(uint64_t n, char buf[static 32]);
/* Seconds as "12 us", "340 ms", "1.25 s" or "120 s"; returns buf. */
const char *format_seconds(double s, char buf[static 32]);

/* Monotonic clock in microseconds / nanoseconds. */
uint64_t now_us(void);
uint64_t now_ns(void);

/* Read a small regular file (at most max bytes) into a NUL-terminated
 * buffer; -EINVAL for anything that is not a regular file. */
int read_small_file(const char *path, char **ret, size_t max);
/* The same, cut at its first newline: a one-line file of /proc or /sys. */
int read_small_line(const char *path, char **ret, size_t max);
/* Read len bytes from fd, through EINTR and short reads, or until its end:
 * the bytes read, or -errno. */
ssize_t read_full(int fd, void *buf, size_t len);
/* What is left of fd, max bytes at most, NUL added: 0 or -errno. */
int read_fd_text(int fd, char **ret, size_t max);
/* The very inode an O_PATH descriptor names, opened with flags, through
 * /proc/self/fd (no second lookup of a name): the descriptor or -errno
 * (-ENOENT without /proc). */
int fd_reopen(int pathfd, int flags);
/* The same, with O_NOATIME where the caller may (the file's owner, or
 * CAP_FOWNER): reading it then leaves its access time as it was. */
int fd_reopen_noatime(int pathfd, int flags);
/* What /proc/self/fd says fd is (a path, "anon_inode:...", ...), NUL
 * ended in buf: 0 or -errno. */
int fd_path(int fd, char *buf, size_t size);
/* Write a string to an existing file (sysfs/tracefs style). */
int write_file(const char *path, const char *s);
/* What /proc/PID/stat says of a process: -errno (-ENOENT: gone). */
struct proc_stat {
        char comm[16];
        char state;              /* 'R', 'S', 'Z' ... */
        pid_t ppid;
        uint64_t cpu_ticks;      /* user and system time, in clock ticks */
};
int proc_stat(pid_t pid, struct proc_stat *ret);
int write_file_at(int dirfd, const char *path, const char *s);
/* Who ran readset: the real user, or under sudo (the real user root) the
 * user sudo names (SUDO_UID); (uid_t)-1 for root itself.  A fact about the
 * process, not a policy: what it is trusted with is decided above util.c. */
uid_t invoking_uid(void);
/* Write a new file at path whole or not at all: write_fn fills a temporary
 * file beside it ("PATH.tmp.XXXXXX", made O_EXCL: no link is followed),
 * which is given mode, synced and renamed over path (a symbolic link or
 * FIFO at path is replaced, never written through); on any error nothing
 * is left.  As root under sudo, in a directory of the invoking user's, the
 * file is that user's (SUDO_UID, SUDO_GID).  write_fn returns 0 or -errno. */
int write_file_atomic(const char *path, mode_t mode, int (*write_fn)(FILE *f, void *userdata), void *userdata);
/* The same, of a string, 0644. */
int write_file_atomic_text(const char *path, const char *text);
/* dir and its parent made where missing (0755: a state directory of
 * root's that others may read): 0 or -errno. */
int make_dir_and_parent(const char *dir);
/* Could write_file_atomic() write path now?  Its temporary file made
 * beside path and removed: 0, or -errno (-ENOENT: no such directory,
 * -EACCES, -EROFS, -ENOSPC ...; -EISDIR: path is a directory).  Asked
 * before work whose result would be lost (a command recorded). */
int write_file_atomic_check(const char *path);

/* sync, then drop the page, dentry and inode caches (root). */
int drop_caches(void);

/* Can this process set up an io_uring?  0, or -errno with why saying what
 * stands in the way (kernel.io_uring_disabled, a seccomp filter, an old
 * kernel), as a phrase to put after "io_uring is unavailable: ". */
int io_uring_usable(const char **why);
