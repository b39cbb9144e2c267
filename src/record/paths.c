/* SPDX-License-Identifier: MIT */
#include "record/paths.h"

#include <fcntl.h>
#include <fts.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util/mounts.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

struct entry {
        uint64_t dev, ino;
        char *path;
        uint64_t size;
        int64_t mtime_ns;
        bool deleted;
        bool external; /* named from outside (paths_learn): not checked here */
        bool used;     /* slot in use */
        /* the st_dev its path gives: dev, but on btrfs, where the kernel's
         * events name the file system's device and stat a subvolume's */
        uint64_t st_dev;
};

struct paths {
        int fan_fd;
        struct entry *tab;     /* open addressing on (dev, ino) */
        size_t tab_size, n;
        struct paths_stats st;
        char *labels;          /* scratch for returned paths */
        struct mounts mounts;
        bool mounts_loaded;
        struct counted {       /* filesystems whose event descriptors are counted */
                uint64_t dev, opens;
        } *counted;
        size_t n_counted;
};

uint64_t paths_kdev_to_dev(uint32_t kdev)
{
        return makedev(kdev >> 20, kdev & 0xfffff);
}

static size_t ent_hash(uint64_t dev, uint64_t ino)
{
        uint64_t h = ino * 0x9E3779B97F4A7C15ULL ^ dev * 0xC2B2AE3D27D4EB4FULL;
        return (size_t)(h ^ (h >> 31));
}

static struct entry *tab_find(struct paths *p, uint64_t dev, uint64_t ino)
{
        size_t h;

        if (!p->tab_size)
                return NULL;
        h = ent_hash(dev, ino) & (p->tab_size - 1);
        while (p->tab[h].used) {
                if (p->tab[h].dev == dev && p->tab[h].ino == ino)
                        return &p->tab[h];
                h = (h + 1) & (p->tab_size - 1);
        }
        return NULL;
}

static int tab_grow(struct paths *p)
{
        size_t n = p->tab_size ? p->tab_size * 2 : 4096;
        struct entry *t = calloc(n, sizeof(*t));

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < p->tab_size; i++) {
                size_t h;
                if (!p->tab[i].used)
                        continue;
                h = ent_hash(p->tab[i].dev, p->tab[i].ino) & (n - 1);
                while (t[h].used)
                        h = (h + 1) & (n - 1);
                t[h] = p->tab[i];
        }
        free(p->tab);
        p->tab = t;
        p->tab_size = n;
        return 0;
}

static int tab_put(struct paths *p, uint64_t dev, uint64_t ino, const char *path,
                   uint64_t size, int64_t mtime_ns, bool deleted)
{
        struct entry *e = tab_find(p, dev, ino);
        size_t h;
        char *copy;

        if (e) {
                /* Prefer a live name over a "(deleted)" one; otherwise keep the first. */
                if (e->deleted && !deleted) {
                        copy = strdup(path);
                        if (!copy)
                                return -ENOMEM;
                        free(e->path);
                        e->path = copy;
                        e->deleted = false;
                }
                e->size = size;
                e->mtime_ns = mtime_ns;
                return 0;
        }
        if ((p->n + 1) * 2 > p->tab_size && tab_grow(p) < 0)
                return -ENOMEM;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        h = ent_hash(dev, ino) & (p->tab_size - 1);
        while (p->tab[h].used)
                h = (h + 1) & (p->tab_size - 1);
        p->tab[h] = (struct entry){ .dev = dev, .ino = ino, .path = copy, .size = size,
                                   .mtime_ns = mtime_ns, .deleted = deleted, .used = true, .st_dev = dev };
        p->n++;
        return 0;
}

int paths_learn(struct paths *p, uint64_t dev, uint64_t ino, const char *path)
{
        int r = tab_put(p, dev, ino, path, 0, 0, false);
        if (r >= 0)
                tab_find(p, dev, ino)->external = true;
        return r;
}

/* Filesystems with no files worth recording. */
static bool skip_fstype(const char *t)
{
        static const char *const skip[] = {
                "proc", "sysfs", "cgroup", "cgroup2", "tracefs", "debugfs", "securityfs",
                "devpts", "mqueue", "bpf", "pstore", "configfs", "fusectl", "binfmt_misc",
                "autofs", "efivarfs", "nsfs", "rpc_pipefs", "selinuxfs",
                /* device nodes: fanotify would open every device anyone opens */
                "devtmpfs",
        };
        for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
                if (strcmp(t, skip[i]) == 0)
                        return true;
        return false;
}

/* Call fn for every mount (loaded once); fn returns < 0 to stop. */
static int for_each_mount(struct paths *p, int (*fn)(void *ud, const struct mount_ent *m), void *ud)
{
        if (!p->mounts_loaded) {
                int r = mounts_read(&p->mounts);
                if (r < 0)
                        return r;
                p->mounts_loaded = true;
        }
        for (size_t i = 0; i < p->mounts.n; i++)
                if (fn(ud, &p->mounts.m[i]) < 0)
                        break;
        return 0;
}

struct mark_ctx {
        struct paths *p;
        uint64_t devs[256];
        size_t n;
};

static int mark_one(void *ud, const struct mount_ent *m)
{
        struct mark_ctx *c = ud;

        if (skip_fstype(m->fstype))
                return 0;
        for (size_t i = 0; i < c->n; i++)
                if (c->devs[i] == m->dev)
                        return 0;
        if (fanotify_mark(c->p->fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN,
                          AT_FDCWD, m->mnt) == 0) {
                c->p->st.marks++;
                if (c->n < ARRAY_SIZE(c->devs))
                        c->devs[c->n++] = m->dev;
        }
        return 0;
}

int paths_open(struct paths **ret, bool watch)
{
        struct paths *p = calloc(1, sizeof(*p));
        struct mark_ctx *c;

        if (!p)
                return -ENOMEM;
        p->fan_fd = !watch ? -1 : fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE,
                                  O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NONBLOCK);
        if (p->fan_fd >= 0) {
                c = calloc(1, sizeof(*c));
                if (!c) {
                        paths_close(p);
                        return -ENOMEM;
                }
                c->p = p;
                for_each_mount(p, mark_one, c);
                free(c);
        }
        *ret = p;
        return 0;
}

int paths_fd(struct paths *p) { return p->fan_fd; }

static int learn_fd(struct paths *p, int fd)
{
        char link[64], target[PATH_MAX + 16];
        struct stat st;
        ssize_t k;
        bool deleted = false;
        static const char suffix[] = " (deleted)";

        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        for (size_t i = 0; i < p->n_counted; i++)
                p->counted[i].opens += p->counted[i].dev == st.st_dev;
        if (tab_find(p, st.st_dev, st.st_ino) && !tab_find(p, st.st_dev, st.st_ino)->deleted)
                return 0;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        k = readlink(link, target, sizeof(target) - 1);
        if (k <= 0)
                return 0;
        target[k] = 0;
        if ((size_t)k > strlen(suffix) && strcmp(target + k - strlen(suffix), suffix) == 0) {
                target[k - strlen(suffix)] = 0;
                deleted = true;
        }
        if (target[0] != '/')
                return 0;
        return tab_put(p, st.st_dev, st.st_ino, target, (uint64_t)st.st_size,
                       (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, deleted);
}

int paths_drain(struct paths *p)
{
        /* small batches: every event carries an open descriptor */
        char buf[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));

        if (p->fan_fd < 0)
                return 0;
        for (;;) {
                ssize_t k = read(p->fan_fd, buf, sizeof(buf));
                struct fanotify_event_metadata *m;

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? 0 : -errno;
                }
                if (k == 0)
                        return 0;
                for (m = (struct fanotify_event_metadata *)buf; FAN_EVENT_OK(m, k); m = FAN_EVENT_NEXT(m, k)) {
                        if (m->vers != FANOTIFY_METADATA_VERSION)
                                return -EPROTO;
                        if (m->mask & FAN_Q_OVERFLOW)
                                p->st.fanotify_overflows++;
                        if (m->fd >= 0) {
                                int r;
                                p->st.fanotify_events++;
                                r = learn_fd(p, m->fd);
                                close(m->fd);
                                if (r < 0)
                                        return r;
                        }
                }
        }
}

/* ---- fallback walk ---------------------------------------------------- */

struct want {
        uint64_t ino;
        bool found;
};

struct walk_ctx {
        struct paths *p;
        uint64_t dev;
        struct want *w;
        size_t n_want, n_found;
        uint64_t budget;
        uint64_t deadline;  /* now_us() */
};

static int cmp_want(const void *a, const void *b)
{
        const struct want *x = a, *y = b;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int walk_mount(void *ud, const struct mount_ent *m)
{
        struct walk_ctx *c = ud;
        char *argv[2] = { (char *)m->mnt, NULL };
        FTS *fts;
        FTSENT *e;

        if (m->dev != c->dev || c->n_found == c->n_want || c->budget == 0 || now_us() > c->deadline)
                return 0;
        fts = fts_open(argv, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
        if (!fts)
                return 0;
        while ((e = fts_read(fts)) && c->budget > 0 && c->n_found < c->n_want) {
                struct want key, *hit;

                if ((c->budget-- & 1023) == 0 && now_us() > c->deadline)
                        break;
                c->p->st.walked++;
                if (e->fts_info != FTS_F || !e->fts_statp)
                        continue;
                key.ino = e->fts_statp->st_ino;
                hit = bsearch(&key, c->w, c->n_want, sizeof(*c->w), cmp_want);
                if (!hit || hit->found)
                        continue;
                hit->found = true;
                c->n_found++;
                c->p->st.walk_resolved++;
                if (tab_put(c->p, c->dev, key.ino, e->fts_path, (uint64_t)e->fts_statp->st_size,
                            (int64_t)e->fts_statp->st_mtim.tv_sec * 1000000000LL + e->fts_statp->st_mtim.tv_nsec,
                            false) >= 0)
                        tab_find(c->p, c->dev, key.ino)->st_dev = e->fts_statp->st_dev;
        }
        fts_close(fts);
        return 0;
}

struct dev_find {
        uint64_t dev;
        bool found;
};

static int find_dev(void *ud, const struct mount_ent *m)
{
        struct dev_find *f = ud;
        if (m->dev == f->dev) {
                f->found = true;
                return -1;
        }
        return 0;
}

/* Is this key the page cache of a block device (filesystem metadata)?  The
 * block device's inode lives on the internal bdev filesystem, whose device
 * number is anonymous (major 0) and never mounted, and its inode number is
 * the device number. */
static bool is_blockdev_key(struct paths *p, uint32_t kdev, uint64_t ino, char *path, size_t len)
{
        char sys[64], target[PATH_MAX];
        struct dev_find df = { .dev = paths_kdev_to_dev(kdev) };
        struct stat st;

        if ((kdev >> 20) != 0 || ino > UINT32_MAX)
                return false;
        for_each_mount(p, find_dev, &df);
        if (df.found)
                return false;   /* tmpfs, btrfs, overlayfs...: a real file */
        snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", (unsigned)(ino >> 20), (unsigned)(ino & 0xfffff));
        if (stat(sys, &st) < 0)
                return false;
        /* Prefer the /dev node's name: from udev's /dev/block links, else from
         * the kernel's DEVNAME, checked to be that very device. */
        snprintf(path, len, "/dev/block/%u:%u", (unsigned)(ino >> 20), (unsigned)(ino & 0xfffff));
        if (realpath(path, target) && strlen(target) < len) {
                snprintf(path, len, "%s", target);
                return true;
        }
        {
                _cleanup_free_ char *uevent = NULL;
                const char *name;
                char dev[PATH_MAX];

                snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/uevent", (unsigned)(ino >> 20), (unsigned)(ino & 0xfffff));
                if (read_small_file(sys, &uevent, 4096) < 0)
                        return true;
                name = strstr(uevent, "DEVNAME=");
                if (!name)
                        return true;
                name += strlen("DEVNAME=");
                snprintf(dev, sizeof(dev), "/dev/%.*s", (int)strcspn(name, "\n"), name);
                if (stat(dev, &st) == 0 && S_ISBLK(st.st_mode) &&
                    st.st_rdev == makedev(ino >> 20, ino & 0xfffff) && strlen(dev) < len)
                        snprintf(path, len, "%s", dev);
        }
        return true;
}

struct mount_find {
        uint64_t dev;
        bool found;
        char mnt[PATH_MAX];
        char fstype[64];
};

static int find_mount(void *ud, const struct mount_ent *m)
{
        struct mount_find *f = ud;

        /* Any mount of the filesystem will do; the one of its root is best. */
        if (m->dev != f->dev || (f->found && strcmp(m->root, "/") != 0))
                return 0;
        f->found = true;
        snprintf(f->mnt, sizeof(f->mnt), "%s", m->mnt);
        snprintf(f->fstype, sizeof(f->fstype), "%s", m->fstype);
        return strcmp(m->root, "/") == 0 ? -1 : 0;
}

/* Inode numbers a filesystem keeps for itself (journal, bitmaps, ext4's
 * buddy cache): no name leads to them, so no search can find one. */
static bool reserved_ino(const char *fstype, uint64_t ino)
{
        if (strncmp(fstype, "ext", 3) == 0)
                return ino < 11;      /* EXT4_GOOD_OLD_FIRST_INO */
        if (strcmp(fstype, "btrfs") == 0)
                return ino < 256;     /* BTRFS_FIRST_FREE_OBJECTID */
        return false;
}

/* Ask the filesystem for the inode directly: a file handle of type
 * FILEID_INO32_GEN with generation 0, which ext4 (among others) accepts
 * without checking the generation.  The name comes from the dentry cache,
 * so it is checked before it is trusted. */
static bool resolve_by_handle(struct paths *p, int mntfd, uint64_t dev, uint64_t ino)
{
        struct {
                struct file_handle fh;
                uint32_t v[2];
        } h;
        _cleanup_close_ int fd = -1;
        char link[64], target[PATH_MAX];
        struct stat st, st2;
        ssize_t k;

        if (ino > UINT32_MAX)
                return false;
        h.fh.handle_bytes = 8;
        h.fh.handle_type = 1; /* FILEID_INO32_GEN */
        h.v[0] = (uint32_t)ino;
        h.v[1] = 0;
        fd = open_by_handle_at(mntfd, &h.fh, O_PATH | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != ino || st.st_dev != dev)
                return false;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        k = readlink(link, target, sizeof(target) - 1);
        if (k <= 0)
                return false;
        target[k] = 0;
        if (target[0] != '/' || lstat(target, &st2) < 0 || st2.st_dev != dev || st2.st_ino != ino)
                return false;
        return tab_put(p, dev, ino, target, (uint64_t)st.st_size,
                       (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, false) >= 0;
}

int paths_prepare(struct paths *p, struct rs_builder *b, uint64_t max_walk)
{
        size_t n = builder_n_keys(b);
        uint64_t budget = max_walk, deadline = now_us() + PATHS_WALK_SECONDS * 1000000ULL;
        _cleanup_free_ uint32_t *done = calloc(n ? n : 1, sizeof(uint32_t));

        if (!done)
                return -ENOMEM;
        paths_drain(p);
        /* the mounts as they are now, after the command ran */
        p->mounts_loaded = false;
        for (size_t i = 0; i < n; i++) {
                uint32_t kdev;
                uint64_t ino, dev;
                struct walk_ctx c = { .p = p };
                struct mount_find mf = { 0 };
                _cleanup_close_ int mntfd = -1;
                size_t cap_w = 0;
                char tmp[PATH_MAX];

                builder_key(b, i, &kdev, &ino);
                dev = paths_kdev_to_dev(kdev);
                if (done[i] || tab_find(p, dev, ino) || is_blockdev_key(p, kdev, ino, tmp, sizeof(tmp)))
                        continue;
                mf.dev = dev;
                for_each_mount(p, find_mount, &mf);
                if (!mf.found)
                        continue;     /* not a mounted filesystem: stays unresolved */
                mntfd = open(mf.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                /* Every unknown inode of this device: by handle first, then
                 * gathered for one walk of its mounts. */
                for (size_t j = i; j < n; j++) {
                        uint32_t kd;
                        uint64_t in;
                        builder_key(b, j, &kd, &in);
                        if (kd != kdev || done[j] || tab_find(p, dev, in))
                                continue;
                        done[j] = 1;
                        if (reserved_ino(mf.fstype, in))
                                continue;
                        if (mntfd >= 0 && resolve_by_handle(p, mntfd, dev, in)) {
                                p->st.handle_resolved++;
                                continue;
                        }
                        if (grow_array(&c.w, &cap_w, c.n_want + 1, sizeof(*c.w)) < 0) {
                                free(c.w);
                                return -ENOMEM;
                        }
                        c.w[c.n_want++] = (struct want){ in, false };
                }
                if (c.n_want > 0 && budget > 0 && now_us() < deadline) {
                        qsort_safe(c.w, c.n_want, sizeof(*c.w), cmp_want);
                        c.dev = dev;
                        c.budget = budget;
                        c.deadline = deadline;
                        for_each_mount(p, walk_mount, &c);
                        budget = c.budget;
                }
                free(c.w);
        }
        return 0;
}

int paths_resolve(void *userdata, uint32_t kdev, uint64_t ino, struct rs_identity *ret)
{
        struct paths *p = userdata;
        uint64_t dev = paths_kdev_to_dev(kdev);
        struct entry *e = tab_find(p, dev, ino);
        char tmp[PATH_MAX];

        *ret = (struct rs_identity){ .kind = RS_FILE_UNRESOLVED, .dev = dev };
        if (e) {
                struct stat st;

                ret->path = e->path;
                ret->kind = RS_FILE_REGULAR;
                ret->size = e->size;
                ret->mtime_ns = e->mtime_ns;
                /* Identity at the end of recording, when the file is still there. */
                if (e->external)
                        ;
                else if (lstat(e->path, &st) == 0 && st.st_dev == e->st_dev && st.st_ino == ino && S_ISREG(st.st_mode)) {
                        ret->dev = e->st_dev;
                        ret->size = (uint64_t)st.st_size;
                        ret->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
                } else
                        ret->flags |= RS_FILE_DELETED;
                return 0;
        }
        if (is_blockdev_key(p, kdev, ino, tmp, sizeof(tmp))) {
                struct stat st;

                free(p->labels);
                p->labels = strdup(tmp);
                if (!p->labels)
                        return -ENOMEM;
                ret->path = p->labels;
                ret->kind = RS_FILE_BLOCKDEV;
                ret->dev = makedev(ino >> 20, ino & 0xfffff);
                if (stat(tmp, &st) == 0 && S_ISBLK(st.st_mode))
                        ret->dev = st.st_rdev;
                return 0;
        }
        p->st.unresolved++;
        return 0;
}

void paths_get_stats(struct paths *p, struct paths_stats *ret) { *ret = p->st; }

int paths_count_opens(struct paths *p, uint64_t dev)
{
        struct counted *n;

        for (size_t i = 0; i < p->n_counted; i++)
                if (p->counted[i].dev == dev)
                        return 0;
        n = reallocarray(p->counted, p->n_counted + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        p->counted = n;
        p->counted[p->n_counted++] = (struct counted){ dev, 0 };
        return 0;
}

uint64_t paths_opens(const struct paths *p, uint64_t dev)
{
        for (size_t i = 0; i < p->n_counted; i++)
                if (p->counted[i].dev == dev)
                        return p->counted[i].opens;
        return 0;
}

void paths_close(struct paths *p)
{
        if (!p)
                return;
        free(p->counted);
        if (p->fan_fd >= 0)
                close(p->fan_fd);
        for (size_t i = 0; i < p->tab_size; i++)
                free(p->tab[i].path);
        free(p->tab);
        free(p->labels);
        mounts_free(&p->mounts);
        free(p);
}

/* A line of a --paths list: "MAJOR:MINOR INODE /PATH", blanks between. */
static int parse_list_line(const char *line, dev_t *ret_dev, uint64_t *ret_ino, const char **ret_path)
{
        const char *s, *e;

        if (parse_dev_prefix(line, ret_dev, &e) < 0 || (*e != ' ' && *e != '\t'))
                return -EBADMSG;
        s = e + strspn(e, " \t");
        if (parse_u64_prefix(s, ret_ino, &e) < 0 || (*e != ' ' && *e != '\t'))
                return -EBADMSG;
        s = e + strspn(e, " \t");
        if (*s != '/')
                return -EBADMSG;
        *ret_path = s;
        return 0;
}

int paths_learn_list(struct paths *p, const char *file, unsigned *ret_line)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        unsigned lineno = 0;
        ssize_t n;
        char why[512];
        /* anyone's text file: its type checked before it is opened (a FIFO
         * here is refused, not waited on) */
        int fd = trust_open_regular(file, why, sizeof(why));

        if (fd < 0)
                return fd;
        f = fdopen(fd, "re");
        if (!f) {
                int e = -errno;
                close(fd);
                return e;
        }
        while ((n = getline(&line, &cap, f)) > 0) {
                const char *path;
                uint64_t ino;
                dev_t dev;
                int r;

                lineno++;
                if (line[n - 1] == '\n')
                        line[n - 1] = 0;
                if (!line[0] || line[0] == '#')
                        continue;
                if (parse_list_line(line, &dev, &ino, &path) < 0) {
                        *ret_line = lineno;
                        return -EBADMSG;
                }
                r = paths_learn(p, dev, ino, path);
                if (r < 0)
                        return r;
        }
        return ferror(f) ? -EIO : 0;
}
