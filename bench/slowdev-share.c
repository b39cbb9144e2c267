/* SPDX-License-Identifier: MIT */
/* The share emulator: a read-only view of a source directory through a
 * network file system client, where every request the client cannot answer
 * from its caches waits for one round trip (and its payload's time on the
 * link).  What the client caches, and for how long, is the client model's;
 * the kernel's FUSE caches are the client's caches, set to its lifetimes:
 *
 *   names     how long a name found stays trusted (entry_timeout): past it,
 *             every component of a path walked through is asked again
 *   attrs     how long attributes stay trusted (attr_timeout): past it, a
 *             stat asks for the last component's attributes again
 *   negative  how long "no such file" stays trusted (negative_timeout)
 *   listing   whether a directory listing brings the entries' names and
 *             attributes with it (FUSE readdirplus: NFS READDIRPLUS, SMB's
 *             directory search results primed into the dcache); a listing
 *             itself is never kept (NFS keeps it in the directory's page
 *             cache while the directory is unchanged: not modelled, so
 *             that dropping the caches drops everything the client has)
 *   access    whether access(2) asks the server or is answered from the
 *             attributes the client has
 *
 * Opens always cost a round trip (NFS close-to-open revalidation, SMB's
 * CREATE); a file's data stays in the page cache while the file is
 * unchanged since its last open.  The models and their sources (the kernel's
 * client code, nfs(5), mount.cifs(8)) are in docs/SLOWDEV.md.
 *
 * Counters of the requests answered, by kind, are read from the hidden
 * file /.slowdev-stats (not listed, answered without delay). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "slowdev-fuse.h"

#define STATS_PATH "/.slowdev-stats"

struct client_model {
        const char *name;
        double names, attrs, negative;  /* seconds */
        bool listing_primes;
        bool access_cached;
};

static const struct client_model models[] = {
        /* the field report's client: per-path lookups, no negative cache */
        { "strict", 1.0, 1.0, 0.0, false, false },
        /* Linux cifs.ko defaults: actimeo=1 for files and directories; a
         * negative dentry trusted for one second (HZ); FIND results primed */
        { "smb", 1.0, 1.0, 1.0, true, true },
        /* Linux nfs defaults: names and negative entries trusted while the
         * directory's attributes are (acdirmin=30), file attributes for
         * acregmin=3; READDIRPLUS (rdirplus) */
        { "nfs", 30.0, 3.0, 30.0, true, true },
};

enum counter { C_NAMES, C_MISSING, C_OPENS, C_READS, C_LISTINGS, C_READLINKS, C_ACCESS, C_STATFS, C_N };
static const char *const counter_names[C_N] = {
        "names", "missing", "opens", "reads", "listings", "readlinks", "access", "statfs",
};

/* what the last open (or listing) of an inode saw: its data (listing) is
 * kept while this holds */
struct seen {
        ino_t ino;
        struct timespec mtime;
        off_t size;
        double at_us;
};

struct seen_table {
        struct seen *s;         /* open addressing by inode */
        size_t n, cap;
};

static struct {
        struct client_model m;
        int src_fd;
        double rtt_us;
        double link_mbps;       /* link bandwidth, bytes per us */
        pthread_mutex_t lock;
        double link_free_us;    /* when the link finishes its current transfer */
        uint64_t trips, bytes, count[C_N];
        struct seen_table opened;
} share = { .lock = PTHREAD_MUTEX_INITIALIZER, .src_fd = -1 };

static void counted(enum counter c)
{
        pthread_mutex_lock(&share.lock);
        share.count[c]++;
        pthread_mutex_unlock(&share.lock);
}

/* One round trip, plus the payload's time on the link (transfers share it). */
static void share_delay(uint64_t payload)
{
        double t, done;
        /* a server gone: nothing answers until it is back */
        while (atomic_load(&mode) == MODE_STALL) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        t = mono_us();
        pthread_mutex_lock(&share.lock);
        share.trips++;
        share.bytes += payload;
        if (atomic_load(&mode) == MODE_FAST) {
                pthread_mutex_unlock(&share.lock);
                return;
        }
        done = t + share.rtt_us;
        if (payload && share.link_mbps > 0) {
                double begin = share.link_free_us > t + share.rtt_us / 2 ? share.link_free_us : t + share.rtt_us / 2;
                share.link_free_us = begin + (double)payload / share.link_mbps;
                done = share.link_free_us + share.rtt_us / 2;
        }
        pthread_mutex_unlock(&share.lock);
        sleep_until_us_relaxed(done);
}

/* "/a/b" -> "a/b" relative to the source directory ("." for the root) */
static const char *rel(const char *path)
{
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

static int stats_text(char *buf, size_t size)
{
        int n;
        pthread_mutex_lock(&share.lock);
        n = snprintf(buf, size, "client %s\nnames_s %.3f\nattrs_s %.3f\nnegative_s %.3f\nround_trips %" PRIu64
                     "\nbytes %" PRIu64 "\n", share.m.name, share.m.names, share.m.attrs, share.m.negative,
                     share.trips, share.bytes);
        for (int c = 0; c < C_N && n > 0 && (size_t)n < size; c++)
                n += snprintf(buf + n, size - (size_t)n, "%s %" PRIu64 "\n", counter_names[c], share.count[c]);
        pthread_mutex_unlock(&share.lock);
        return n < 0 || (size_t)n >= size ? -EOVERFLOW : n;
}

static int share_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        (void)fi;
        if (strcmp(path, STATS_PATH) == 0) {
                memset(st, 0, sizeof(*st));
                st->st_mode = S_IFREG | 0444;
                st->st_nlink = 1;
                st->st_ino = UINT32_MAX;
                return 0;
        }
        counted(C_NAMES);
        share_delay(0);
        if (fstatat(share.src_fd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT)
                        counted(C_MISSING);
                return -errno;
        }
        return 0;
}

static int share_readlink(const char *path, char *buf, size_t size)
{
        ssize_t k;
        counted(C_READLINKS);
        share_delay(0);
        k = readlinkat(share.src_fd, rel(path), buf, size - 1);
        if (k < 0)
                return -errno;
        buf[k] = 0;
        return 0;
}

static int share_access(const char *path, int mask)
{
        if (!share.m.access_cached) {
                counted(C_ACCESS);
                share_delay(0);
        }
        return faccessat(share.src_fd, rel(path), mask, 0) < 0 ? -errno : 0;
}

/* The entry of st's inode in t (zeroed: new), or NULL (out of memory);
 * under share.lock. */
static struct seen *seen_entry(struct seen_table *t, const struct stat *st)
{
        size_t i;

        if (t->n * 2 >= t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 4096;
                struct seen *n = calloc(cap, sizeof(*n));
                if (!n)
                        return NULL;
                for (size_t j = 0; j < t->cap; j++)
                        if (t->s[j].ino) {
                                size_t k = (size_t)t->s[j].ino * 0x9e3779b97f4a7c15ULL % cap;
                                while (n[k].ino)
                                        k = (k + 1) % cap;
                                n[k] = t->s[j];
                        }
                free(t->s);
                t->s = n;
                t->cap = cap;
        }
        i = (size_t)st->st_ino * 0x9e3779b97f4a7c15ULL % t->cap;
        while (t->s[i].ino && t->s[i].ino != st->st_ino)
                i = (i + 1) % t->cap;
        if (!t->s[i].ino)
                t->n++;
        return &t->s[i];
}

/* Is the inode unchanged since it was last seen in t (within max_age_us of
 * then; < 0: any age)?  Remembers this time either way. */
static bool unchanged_since(struct seen_table *t, const struct stat *st, double max_age_us)
{
        double now = mono_us();
        struct seen *e;
        bool same = false;

        pthread_mutex_lock(&share.lock);
        e = seen_entry(t, st);
        if (e) {
                same = e->ino && e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
                       e->mtime.tv_nsec == st->st_mtim.tv_nsec && (max_age_us < 0 || now - e->at_us <= max_age_us);
                if (!same)
                        *e = (struct seen){ st->st_ino, st->st_mtim, st->st_size, now };
        }
        pthread_mutex_unlock(&share.lock);
        return same;
}

static int share_open(const char *path, struct fuse_file_info *fi)
{
        struct stat st;
        int fd;

        if (strcmp(path, STATS_PATH) == 0) {
                fi->direct_io = 1;
                return (fi->flags & O_ACCMODE) == O_RDONLY ? 0 : -EACCES;
        }
        if ((fi->flags & O_ACCMODE) != O_RDONLY)
                return -EROFS;
        counted(C_OPENS);
        share_delay(0);
        fd = openat(share.src_fd, rel(path), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) == 0 && unchanged_since(&share.opened, &st, -1))
                fi->keep_cache = 1;
        fi->fh = (uint64_t)fd;
        return 0;
}

static int share_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
        ssize_t k;

        if (strcmp(path, STATS_PATH) == 0) {
                char text[1024];
                int n = stats_text(text, sizeof(text));
                if (n < 0)
                        return n;
                if (off >= n)
                        return 0;
                if (len > (size_t)(n - off))
                        len = (size_t)(n - off);
                memcpy(buf, text + off, len);
                return (int)len;
        }
        counted(C_READS);
        k = pread((int)fi->fh, buf, len, off);
        if (k < 0)
                return -errno;
        share_delay((uint64_t)k);
        return (int)k;
}

static int share_release(const char *path, struct fuse_file_info *fi)
{
        if (strcmp(path, STATS_PATH) != 0)
                close((int)fi->fh);
        return 0;
}

/* A listing being read: the source directory, and how much of it went
 * out (a reply carries about 64 KiB: a long listing takes several). */
struct listing {
        DIR *d;
        uint64_t bytes, replies;
};

static int share_opendir(const char *path, struct fuse_file_info *fi)
{
        struct listing *l = calloc(1, sizeof(*l));
        int fd;

        if (!l)
                return -ENOMEM;
        fd = openat(share.src_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(l->d = fdopendir(fd))) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                free(l);
                return -e;
        }
        fi->fh = (uint64_t)(uintptr_t)l;
        return 0;
}

static int share_releasedir(const char *path, struct fuse_file_info *fi)
{
        struct listing *l = (struct listing *)(uintptr_t)fi->fh;
        (void)path;
        closedir(l->d);
        free(l);
        return 0;
}

/* With offsets, so that the library hands the entries' attributes to the
 * kernel as they are (readdirplus) instead of looking each one up. */
static int share_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                         enum fuse_readdir_flags flags)
{
        struct listing *l = (struct listing *)(uintptr_t)fi->fh;
        bool plus = share.m.listing_primes && (flags & FUSE_READDIR_PLUS);
        struct dirent *e;
        (void)path;

        if (off == 0) {
                rewinddir(l->d);
                l->bytes = 0;
                l->replies = 0;
        } else
                seekdir(l->d, off);
        for (;;) {
                long at;
                errno = 0;
                if (!(e = readdir(l->d)))
                        return errno ? -errno : 0;
                struct stat st = { .st_ino = e->d_ino, .st_mode = (mode_t)DTTOIF(e->d_type) };
                bool full = plus && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                            fstatat(dirfd(l->d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0;
                at = telldir(l->d);
                if (fill(buf, e->d_name, &st, at, full ? FUSE_FILL_DIR_PLUS : 0))
                        return 0;       /* the kernel's buffer is full: it asks again from here */
                /* a listing with attributes is about twice the bytes; one
                 * round trip per 64 KiB reply */
                l->bytes += (full ? 160 : 64) + strlen(e->d_name);
                if (l->bytes > l->replies * 65536) {
                        l->replies++;
                        counted(C_LISTINGS);
                        share_delay(0);
                }
        }
}

static int share_statfs(const char *path, struct statvfs *st)
{
        (void)path;
        counted(C_STATFS);
        share_delay(0);
        return fstatvfs(share.src_fd, st) < 0 ? -errno : 0;
}

static void *share_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        slowdev_conn_init(conn, cfg);
        cfg->entry_timeout = share.m.names;
        cfg->attr_timeout = share.m.attrs;
        cfg->negative_timeout = share.m.negative;
        cfg->auto_cache = 0;    /* share_open decides what data is kept */
        if (share.m.listing_primes && (conn->capable & FUSE_CAP_READDIRPLUS)) {
                conn->want |= FUSE_CAP_READDIRPLUS;
                conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;   /* every listing, as rdirplus */
        } else
                conn->want &= ~(unsigned)(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
        if (getenv("SLOWDEV_TRACE"))
                fprintf(stderr, "share: capable %#x want %#x\n", conn->capable, conn->want);
        return NULL;
}

static const struct fuse_operations share_ops = {
        .init = share_init,
        .getattr = share_getattr,
        .readlink = share_readlink,
        .access = share_access,
        .open = share_open,
        .read = share_read,
        .release = share_release,
        .opendir = share_opendir,
        .readdir = share_readdir,
        .releasedir = share_releasedir,
        .statfs = share_statfs,
};

static bool parse_seconds(const char *v, double *out)
{
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || x < 0 || x > 3600)
                return false;
        *out = x;
        return true;
}

const struct fuse_operations *share_setup(const char *spec, const char *source)
{
        char *copy = strdup(spec), *save = NULL, *tok;
        double names = -1, attrs = -1, negative = -1;
        const char *client = "strict";
        bool ok = copy != NULL, have_rtt = false;

        share.link_mbps = 117;  /* 1 GbE payload rate */
        for (tok = ok ? strtok_r(copy, ",", &save) : NULL; ok && tok; tok = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(tok, '=');
                if (!eq) {
                        ok = false;
                        break;
                }
                *eq++ = 0;
                if (strcmp(tok, "rtt") == 0) {
                        char *end;
                        share.rtt_us = strtod(eq, &end);
                        ok = end != eq && !*end && share.rtt_us >= 0 && share.rtt_us <= 1e6;
                        have_rtt = true;
                } else if (strcmp(tok, "mbps") == 0) {
                        char *end;
                        share.link_mbps = strtod(eq, &end);
                        ok = end != eq && !*end && share.link_mbps >= 0;
                } else if (strcmp(tok, "client") == 0) {
                        client = spec + (eq - copy);
                        ok = true;
                } else if (strcmp(tok, "names") == 0)
                        ok = parse_seconds(eq, &names);
                else if (strcmp(tok, "attrs") == 0)
                        ok = parse_seconds(eq, &attrs);
                else if (strcmp(tok, "negative") == 0)
                        ok = parse_seconds(eq, &negative);
                else
                        ok = false;
        }
        if (ok) {
                size_t n = strcspn(client, ",");
                ok = false;
                for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
                        if (strlen(models[i].name) == n && strncmp(models[i].name, client, n) == 0) {
                                share.m = models[i];
                                ok = true;
                        }
                if (!ok)
                        fprintf(stderr, "slowdev-fuse: unknown client '%.*s' (strict, smb, nfs)\n", (int)n, client);
        } else
                fprintf(stderr, "slowdev-fuse: bad share settings '%s'\n", spec);
        free(copy);
        if (!ok || !have_rtt)
                return NULL;
        /* lifetimes set for a test override the model's */
        if (names >= 0)
                share.m.names = names;
        if (attrs >= 0)
                share.m.attrs = attrs;
        if (negative >= 0)
                share.m.negative = negative;
        share.src_fd = open(source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (share.src_fd < 0) {
                fprintf(stderr, "slowdev-fuse: cannot open '%s': %s\n", source, strerror(errno));
                return NULL;
        }
        return &share_ops;
}
