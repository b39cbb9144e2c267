/* SPDX-License-Identifier: MIT */
/* The share emulator: a read-only view of a source directory through a
 * network file system client, where every request the client cannot answer
 * from its caches waits for one round trip (and its payload's time on the
 * link).  What the client caches, and for how long, is the client model's;
 * the kernel's FUSE caches are the client's caches, set to its lifetimes:
 *
 *   names     how long a name found stays trusted (the entry timeout): past
 *             it, every component of a path walked through is asked again
 *   attrs     how long attributes stay trusted (the attribute timeout), for
 *             files and for directories: past it, a stat asks again
 *   negative  how long "no such file" stays trusted (a negative entry)
 *   listing   whether a directory listing brings the entries' names and
 *             attributes with it (readdirplus: NFS READDIRPLUS, SMB's
 *             directory search results primed into the dcache); a listing
 *             itself is never kept (NFS keeps it in the directory's page
 *             cache while the directory is unchanged: not modelled, so
 *             that dropping the caches drops everything the client has)
 *   access    whether access(2) asks the server or is answered from the
 *             attributes the client has
 *
 * Opens always cost a round trip (NFS close-to-open revalidation, SMB's
 * CREATE); a file's data stays in the page cache while the file is
 * unchanged since its last open.  Lookups in one directory are answered in
 * parallel, as Linux's clients make them (see writev() below).  The models and their sources (the kernel's client code,
 * nfs(5), mount.cifs(8)) are in docs/SLOWDEV.md.
 *
 * Counters of the requests answered, by kind, are read from the hidden
 * file /.slowdev-stats (not listed, answered without delay). */
#include "slowdev-fuse.h"     /* first: FUSE_USE_VERSION */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

#define STATS_NAME ".slowdev-stats"
#define STATS_INO UINT64_MAX        /* a node id no inode of ours has */

struct client_model {
        const char *name;
        double names, attrs, dir_attrs, negative;  /* seconds */
        bool listing_primes;
        bool access_cached;
};

static const struct client_model models[] = {
        /* the field report's client: per-path lookups, no negative cache */
        { "strict", 1.0, 1.0, 1.0, 0.0, false, false },
        /* Linux cifs.ko defaults: actimeo=1 for files and directories; a
         * negative dentry trusted for one second (HZ); FIND results primed */
        { "smb", 1.0, 1.0, 1.0, 1.0, true, true },
        /* Linux nfs defaults: names and negative entries trusted while the
         * directory's attributes are (acdirmin=30), file attributes for
         * acregmin=3; READDIRPLUS (rdirplus) */
        { "nfs", 30.0, 3.0, 30.0, 30.0, true, true },
};

enum counter { C_NAMES, C_MISSING, C_OPENS, C_READS, C_LISTINGS, C_READLINKS, C_ACCESS, C_STATFS, C_N };
static bool want_parallel_dirops;       /* (see writev() below) */

static const char *const counter_names[C_N] = {
        "names", "missing", "opens", "reads", "listings", "readlinks", "access", "statfs",
};

/* An inode of the source the kernel knows (until it forgets it): its node
 * id is the struct's address; the root's is FUSE_ROOT_ID. */
struct inode {
        int fd;                 /* O_PATH */
        dev_t dev;
        ino_t ino;
        uint64_t nlookup;
        struct inode *next;     /* in its hash chain */
};

/* what the last open of an inode saw: its data is kept while this holds */
struct seen {
        ino_t ino;
        struct timespec mtime;
        off_t size;
};

static struct {
        struct client_model m;
        double rtt_us;
        double link_mbps;       /* link bandwidth, bytes per us */
        pthread_mutex_t lock;   /* the counters, the link, the tables */
        double link_free_us;    /* when the link finishes its current transfer */
        uint64_t trips, bytes, count[C_N];
        struct inode root;
        struct inode **inodes;  /* hash by (dev, ino) */
        size_t n_inodes, cap_inodes;
        struct seen *seen;      /* open addressing by inode */
        size_t n_seen, cap_seen;
} share = { .lock = PTHREAD_MUTEX_INITIALIZER, .root = { .fd = -1 } };

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

/* ---- inodes ----------------------------------------------------------- */

static struct inode *inode_of(fuse_ino_t ino)
{
        return ino == FUSE_ROOT_ID ? &share.root : (struct inode *)(uintptr_t)ino;
}

static size_t inode_hash(dev_t dev, ino_t ino, size_t cap)
{
        return (size_t)((ino * 0x9e3779b97f4a7c15ULL) ^ dev) & (cap - 1);
}

/* The inode of st (name in parent), looked up once more; NULL: ENOMEM. */
static struct inode *inode_ref(struct inode *parent, const char *name, const struct stat *st)
{
        struct inode *i;
        size_t h;

        if (st->st_dev == share.root.dev && st->st_ino == share.root.ino) {
                pthread_mutex_lock(&share.lock);
                share.root.nlookup++;
                pthread_mutex_unlock(&share.lock);
                return &share.root;
        }
        pthread_mutex_lock(&share.lock);
        if (share.n_inodes * 2 >= share.cap_inodes) {
                size_t cap = share.cap_inodes ? share.cap_inodes * 2 : 4096;
                struct inode **n = calloc(cap, sizeof(*n));
                if (!n) {
                        pthread_mutex_unlock(&share.lock);
                        return NULL;
                }
                for (size_t j = 0; j < share.cap_inodes; j++)
                        while (share.inodes[j]) {
                                struct inode *x = share.inodes[j];
                                share.inodes[j] = x->next;
                                h = inode_hash(x->dev, x->ino, cap);
                                x->next = n[h];
                                n[h] = x;
                        }
                free(share.inodes);
                share.inodes = n;
                share.cap_inodes = cap;
        }
        h = inode_hash(st->st_dev, st->st_ino, share.cap_inodes);
        for (i = share.inodes[h]; i && (i->dev != st->st_dev || i->ino != st->st_ino); i = i->next)
                ;
        if (i) {
                i->nlookup++;
                pthread_mutex_unlock(&share.lock);
                return i;
        }
        pthread_mutex_unlock(&share.lock);
        /* opened outside the lock: then entered, unless another thread was first */
        {
                int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                struct inode *n;
                if (fd < 0)
                        return NULL;
                pthread_mutex_lock(&share.lock);
                for (i = share.inodes[h]; i && (i->dev != st->st_dev || i->ino != st->st_ino); i = i->next)
                        ;
                if (i) {
                        i->nlookup++;
                        pthread_mutex_unlock(&share.lock);
                        close(fd);
                        return i;
                }
                n = calloc(1, sizeof(*n));
                if (!n) {
                        pthread_mutex_unlock(&share.lock);
                        close(fd);
                        return NULL;
                }
                *n = (struct inode){ .fd = fd, .dev = st->st_dev, .ino = st->st_ino, .nlookup = 1,
                                     .next = share.inodes[h] };
                share.inodes[h] = n;
                share.n_inodes++;
                pthread_mutex_unlock(&share.lock);
                return n;
        }
}

static void inode_forget(fuse_ino_t ino, uint64_t n)
{
        struct inode *i = inode_of(ino), **pp;

        if (ino == STATS_INO)
                return;
        pthread_mutex_lock(&share.lock);
        i->nlookup = i->nlookup > n ? i->nlookup - n : 0;
        if (i->nlookup == 0 && i != &share.root) {
                for (pp = &share.inodes[inode_hash(i->dev, i->ino, share.cap_inodes)]; *pp && *pp != i;
                     pp = &(*pp)->next)
                        ;
                if (*pp) {
                        *pp = i->next;
                        share.n_inodes--;
                }
                close(i->fd);
                free(i);
        }
        pthread_mutex_unlock(&share.lock);
}

/* the inode reopened as something to read: /proc/self/fd of its O_PATH fd */
static int reopen(const struct inode *i, int flags)
{
        char p[64];
        snprintf(p, sizeof(p), "/proc/self/fd/%d", i->fd);
        return open(p, flags | O_CLOEXEC);
}

static double attr_timeout(const struct stat *st) { return S_ISDIR(st->st_mode) ? share.m.dir_attrs : share.m.attrs; }

static void stats_attr(struct stat *st)
{
        memset(st, 0, sizeof(*st));
        st->st_ino = STATS_INO;
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
}

/* ---- the requests ----------------------------------------------------- */

/* An entry for name in parent found with st: its inode referenced. */
static int entry_for(struct inode *parent, const char *name, const struct stat *st_in, struct fuse_entry_param *e)
{
        struct stat st = *st_in;        /* (it may be e->attr) */
        struct inode *i = inode_ref(parent, name, &st);

        if (!i)
                return -ENOMEM;
        memset(e, 0, sizeof(*e));
        e->ino = i == &share.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)i;
        e->attr = st;
        e->attr_timeout = attr_timeout(&st);
        e->entry_timeout = share.m.names;
        return 0;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
        struct inode *p = inode_of(parent);
        struct fuse_entry_param e;
        struct stat st;
        int r;

        if (parent == FUSE_ROOT_ID && strcmp(name, STATS_NAME) == 0) {
                memset(&e, 0, sizeof(e));
                e.ino = STATS_INO;
                stats_attr(&e.attr);
                fuse_reply_entry(req, &e);
                return;
        }
        counted(C_NAMES);
        share_delay(0);
        if (fstatat(p->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = errno;
                if (r == ENOENT) {
                        counted(C_MISSING);
                        if (share.m.negative > 0) {
                                memset(&e, 0, sizeof(e));
                                e.entry_timeout = share.m.negative;     /* ino 0: a negative entry */
                                fuse_reply_entry(req, &e);
                                return;
                        }
                }
                fuse_reply_err(req, r);
                return;
        }
        r = entry_for(p, name, &st, &e);
        if (r < 0)
                fuse_reply_err(req, -r);
        else
                fuse_reply_entry(req, &e);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
        inode_forget(ino, nlookup);
        fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
        for (size_t k = 0; k < count; k++)
                inode_forget(forgets[k].ino, forgets[k].nlookup);
        fuse_reply_none(req);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        struct stat st;
        (void)fi;

        if (ino == STATS_INO) {
                stats_attr(&st);
                fuse_reply_attr(req, &st, 0);
                return;
        }
        counted(C_NAMES);
        share_delay(0);
        if (fstatat(inode_of(ino)->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
                fuse_reply_err(req, errno);
        else
                fuse_reply_attr(req, &st, attr_timeout(&st));
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
        char buf[4096];
        ssize_t k;

        counted(C_READLINKS);
        share_delay(0);
        k = readlinkat(inode_of(ino)->fd, "", buf, sizeof(buf) - 1);
        if (k < 0) {
                fuse_reply_err(req, errno);
                return;
        }
        buf[k] = 0;
        fuse_reply_readlink(req, buf);
}

static void ll_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
        char p[64];

        if (ino == STATS_INO) {
                fuse_reply_err(req, mask & (W_OK | X_OK) ? EACCES : 0);
                return;
        }
        if (!share.m.access_cached) {
                counted(C_ACCESS);
                share_delay(0);
        }
        snprintf(p, sizeof(p), "/proc/self/fd/%d", inode_of(ino)->fd);
        fuse_reply_err(req, access(p, mask) < 0 ? errno : 0);
}

/* Was the file unchanged since its last open?  Then its data is kept.
 * (Remembers this open either way.) */
static bool unchanged_since_last_open(const struct stat *st)
{
        bool same = false;
        size_t i;

        pthread_mutex_lock(&share.lock);
        if (share.n_seen * 2 >= share.cap_seen) {
                size_t cap = share.cap_seen ? share.cap_seen * 2 : 4096;
                struct seen *n = calloc(cap, sizeof(*n));
                if (!n) {
                        pthread_mutex_unlock(&share.lock);
                        return false;
                }
                for (size_t j = 0; j < share.cap_seen; j++)
                        if (share.seen[j].ino) {
                                size_t k = (size_t)share.seen[j].ino * 0x9e3779b97f4a7c15ULL % cap;
                                while (n[k].ino)
                                        k = (k + 1) % cap;
                                n[k] = share.seen[j];
                        }
                free(share.seen);
                share.seen = n;
                share.cap_seen = cap;
        }
        i = (size_t)st->st_ino * 0x9e3779b97f4a7c15ULL % share.cap_seen;
        while (share.seen[i].ino && share.seen[i].ino != st->st_ino)
                i = (i + 1) % share.cap_seen;
        if (share.seen[i].ino)
                same = share.seen[i].size == st->st_size && share.seen[i].mtime.tv_sec == st->st_mtim.tv_sec &&
                       share.seen[i].mtime.tv_nsec == st->st_mtim.tv_nsec;
        else
                share.n_seen++;
        share.seen[i] = (struct seen){ st->st_ino, st->st_mtim, st->st_size };
        pthread_mutex_unlock(&share.lock);
        return same;
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        struct stat st;
        int fd;

        if ((fi->flags & O_ACCMODE) != O_RDONLY) {
                fuse_reply_err(req, ino == STATS_INO ? EACCES : EROFS);
                return;
        }
        if (ino == STATS_INO) {
                fi->direct_io = 1;
                fi->fh = UINT64_MAX;
                fuse_reply_open(req, fi);
                return;
        }
        counted(C_OPENS);
        share_delay(0);
        fd = reopen(inode_of(ino), O_RDONLY);     /* (the kernel opens no symlink) */
        if (fd < 0) {
                fuse_reply_err(req, errno);
                return;
        }
        if (fstat(fd, &st) == 0 && unchanged_since_last_open(&st))
                fi->keep_cache = 1;
        fi->fh = (uint64_t)fd;
        fuse_reply_open(req, fi);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
        char *buf;
        ssize_t k;

        if (ino == STATS_INO) {
                char text[1024];
                int n = stats_text(text, sizeof(text));
                if (n < 0 || off >= n)
                        fuse_reply_buf(req, text, 0);
                else
                        fuse_reply_buf(req, text + off, MIN(size, (size_t)(n - off)));
                return;
        }
        buf = malloc(size ? size : 1);
        if (!buf) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        counted(C_READS);
        k = pread((int)fi->fh, buf, size, off);
        if (k < 0) {
                fuse_reply_err(req, errno);
        } else {
                share_delay((uint64_t)k);
                fuse_reply_buf(req, buf, (size_t)k);
        }
        free(buf);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        if (ino != STATS_INO)
                close((int)fi->fh);
        fuse_reply_err(req, 0);
}

/* A listing being read: the source directory, and how much of it went
 * out (a reply carries about 64 KiB: a long listing takes several). */
struct listing {
        DIR *d;
        uint64_t bytes, replies;
};

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        struct listing *l = calloc(1, sizeof(*l));
        int fd;

        if (!l) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        fd = reopen(inode_of(ino), O_RDONLY | O_DIRECTORY);
        if (fd < 0 || !(l->d = fdopendir(fd))) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                free(l);
                fuse_reply_err(req, e);
                return;
        }
        fi->fh = (uint64_t)(uintptr_t)l;
        fuse_reply_open(req, fi);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        struct listing *l = (struct listing *)(uintptr_t)fi->fh;
        (void)ino;
        closedir(l->d);
        free(l);
        fuse_reply_err(req, 0);
}

static void readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi,
                           bool plus)
{
        struct listing *l = (struct listing *)(uintptr_t)fi->fh;
        struct inode *dir = inode_of(ino);
        char *buf = malloc(size ? size : 1);
        size_t used = 0;

        if (!buf) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        if (off == 0) {
                rewinddir(l->d);
                l->bytes = 0;
                l->replies = 0;
        } else
                seekdir(l->d, off);
        for (;;) {
                struct fuse_entry_param e = { 0 };
                struct dirent *d;
                bool dots, full = false;
                size_t need;
                long next;

                errno = 0;
                if (!(d = readdir(l->d)))
                        break;
                next = telldir(l->d);
                dots = strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0;
                e.attr.st_ino = d->d_ino;
                e.attr.st_mode = (mode_t)DTTOIF(d->d_type);
                if (plus && !dots && fstatat(dirfd(l->d), d->d_name, &e.attr, AT_SYMLINK_NOFOLLOW) == 0)
                        full = true;
                need = plus ? fuse_add_direntry_plus(req, NULL, 0, d->d_name, NULL, 0)
                            : fuse_add_direntry(req, NULL, 0, d->d_name, NULL, 0);
                if (used + need > size) {
                        seekdir(l->d, off);     /* this one goes in the next reply */
                        break;
                }
                if (plus) {
                        /* the entry handed over is a lookup of it: referenced */
                        if (full && entry_for(dir, d->d_name, &e.attr, &e) < 0)
                                full = false;
                        if (!full) {
                                struct stat keep = e.attr;
                                memset(&e, 0, sizeof(e));
                                e.attr = keep;
                        }
                        used += fuse_add_direntry_plus(req, buf + used, size - used, d->d_name, &e, next);
                } else
                        used += fuse_add_direntry(req, buf + used, size - used, d->d_name, &e.attr, next);
                off = next;
                /* a listing with attributes is about twice the bytes; one
                 * round trip per 64 KiB reply */
                l->bytes += (full ? 160 : 64) + strlen(d->d_name);
                if (l->bytes > l->replies * 65536) {
                        l->replies++;
                        counted(C_LISTINGS);
                        share_delay(0);
                }
        }
        fuse_reply_buf(req, buf, used);
        free(buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
        readdir_common(req, ino, size, off, fi, false);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
        readdir_common(req, ino, size, off, fi, share.m.listing_primes);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
        struct statvfs st;
        (void)ino;
        counted(C_STATFS);
        share_delay(0);
        if (fstatvfs(share.root.fd, &st) < 0)
                fuse_reply_err(req, errno);
        else
                fuse_reply_statfs(req, &st);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
        (void)userdata;
        conn->max_readahead = 1 << 20;
        if (conn->capable & FUSE_CAP_ASYNC_READ)
                conn->want |= FUSE_CAP_ASYNC_READ;
        /* lookups in one directory at once, as the clients modelled make them */
        if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) {
                conn->want |= FUSE_CAP_PARALLEL_DIROPS;
                want_parallel_dirops = true;
        }
        if (share.m.listing_primes && (conn->capable & FUSE_CAP_READDIRPLUS)) {
                conn->want |= FUSE_CAP_READDIRPLUS;
                conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;   /* every listing, as rdirplus */
        } else
                conn->want &= ~(unsigned)(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
        if (getenv("SLOWDEV_TRACE"))
                fprintf(stderr, "share: capable %#x want %#x\n", conn->capable, conn->want);
}

static const struct fuse_lowlevel_ops share_ops = {
        .init = ll_init,
        .lookup = ll_lookup,
        .forget = ll_forget,
        .forget_multi = ll_forget_multi,
        .getattr = ll_getattr,
        .readlink = ll_readlink,
        .access = ll_access,
        .open = ll_open,
        .read = ll_read,
        .release = ll_release,
        .opendir = ll_opendir,
        .readdir = ll_readdir,
        .readdirplus = ll_readdirplus,
        .releasedir = ll_releasedir,
        .statfs = ll_statfs,
};

/* ---- parallel lookups ------------------------------------------------- */

/* Without FUSE_PARALLEL_DIROPS in the reply to INIT, the kernel makes the
 * lookups in one directory one after another (fuse_lock_inode()), where
 * NFS and SMB clients make them at once: 8 stats in one directory took 8
 * round trips.  libfuse 3.14 (Debian 12) never sends the flag, whatever
 * the file system asks for (its do_init() has no line for it).  So the one
 * reply to INIT the daemon writes gets it here: libfuse writes its replies
 * with writev(), which this definition takes the place of. */
static atomic_bool init_replied;

ssize_t writev(int fd, const struct iovec *iov, int n)
{
        if (want_parallel_dirops && n == 2 && !atomic_load(&init_replied) &&
            iov[0].iov_len == sizeof(struct fuse_out_header) && iov[1].iov_len >= 16) {
                struct fuse_init_out *o = iov[1].iov_base;
                if (((const struct fuse_out_header *)iov[0].iov_base)->error == 0 && o->major == FUSE_KERNEL_VERSION)
                        o->flags |= FUSE_PARALLEL_DIROPS;
                atomic_store(&init_replied, true);
        }
        return syscall(SYS_writev, fd, iov, n);
}

/* ---- set-up --------------------------------------------------------------- */

static bool parse_seconds(const char *v, double *out)
{
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || x < 0 || x > 3600)
                return false;
        *out = x;
        return true;
}

static bool parse_spec(const char *spec)
{
        char *copy = strdup(spec), *save = NULL, *tok;
        double names = -1, attrs = -1, negative = -1;
        const char *client = "strict";
        bool ok = copy != NULL, have_rtt = false;

        share.link_mbps = 117;  /* 1 GbE payload rate */
        for (tok = ok ? strtok_r(copy, ",", &save) : NULL; ok && tok; tok = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(tok, '='), *end;
                if (!eq) {
                        ok = false;
                        break;
                }
                *eq++ = 0;
                if (strcmp(tok, "rtt") == 0) {
                        share.rtt_us = strtod(eq, &end);
                        ok = end != eq && !*end && share.rtt_us >= 0 && share.rtt_us <= 1e6;
                        have_rtt = true;
                } else if (strcmp(tok, "mbps") == 0) {
                        share.link_mbps = strtod(eq, &end);
                        ok = end != eq && !*end && share.link_mbps >= 0;
                } else if (strcmp(tok, "client") == 0)
                        client = spec + (eq - copy);
                else if (strcmp(tok, "names") == 0)
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
                return false;
        /* lifetimes set for a test override the model's */
        if (names >= 0)
                share.m.names = names;
        if (attrs >= 0)
                share.m.attrs = share.m.dir_attrs = attrs;
        if (negative >= 0)
                share.m.negative = negative;
        return true;
}

int share_main(int argc, char **argv)
{
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        struct fuse_loop_config *cfg;
        struct fuse_session *se;
        struct stat st;
        int r = 1;

        if (argc < 5 || !parse_spec(argv[2]))
                return 2;
        share.root.fd = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (share.root.fd < 0 || fstat(share.root.fd, &st) < 0) {
                fprintf(stderr, "slowdev-fuse: cannot open '%s': %s\n", argv[3], strerror(errno));
                return 1;
        }
        share.root.dev = st.st_dev;
        share.root.ino = st.st_ino;
        fuse_opt_add_arg(&args, argv[0]);
        for (int i = 5; i < argc; i++)
                fuse_opt_add_arg(&args, argv[i]);
        /* named so in mountinfo ("slowdev-share", fuse.slowdev-share): readset
         * record reads the counters of this FUSE mount and of no other */
        fuse_opt_add_arg(&args, "-oro,fsname=slowdev-share,subtype=slowdev-share");
        se = fuse_session_new(&args, &share_ops, sizeof(share_ops), NULL);
        if (!se)
                goto out;
        if (fuse_set_signal_handlers(se) != 0)
                goto out_destroy;
        if (fuse_session_mount(se, argv[4]) != 0)
                goto out_signals;
        /* tell bench/slowdev we are serving */
        fprintf(stdout, "ready\n");
        fflush(stdout);
        cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(cfg, 256);
        fuse_loop_cfg_set_idle_threads(cfg, 64);
        r = fuse_session_loop_mt(se, cfg) == 0 ? 0 : 1;
        fuse_loop_cfg_destroy(cfg);
        fuse_session_unmount(se);
out_signals:
        fuse_remove_signal_handlers(se);
out_destroy:
        fuse_session_destroy(se);
out:
        fuse_opt_free_args(&args);
        return r;
}
