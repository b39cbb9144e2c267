/* SPDX-License-Identifier: MIT */
#include "keep/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "model/format.h"
#include "replay/residency.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

/* mincore's window: a mapping of 1 GiB at a time, its vector 256 KiB */
#define WINDOW (1ULL << 30)
/* what a snapshot may hold before it is refused as too large to write
 * (FORMAT_MAX_RAW): about what a file and a range take in the payload */
#define FILE_COST 48
#define RANGE_COST 16
#define PAYLOAD_ROOM (48ULL << 20)

static const struct {
        const char *name, *key;
} skips[_SNAPSHOT_SKIP_MAX] = {
        [SNAPSHOT_SKIP_SYMLINK] = { "symlink", "symlink" },
        [SNAPSHOT_SKIP_SPECIAL] = { "FIFO/device/socket", "special" },
        [SNAPSHOT_SKIP_MOUNT] = { "another file system", "mount" },
        [SNAPSHOT_SKIP_PSEUDO] = { "pseudo file system", "pseudo" },
        [SNAPSHOT_SKIP_UNTOLD] = { "not told (not the owner)", "untold" },
        [SNAPSHOT_SKIP_GONE] = { "gone or replaced", "gone" },
        [SNAPSHOT_SKIP_ERROR] = { "error", "error" },
        [SNAPSHOT_SKIP_DEEP] = { "too deep", "deep" },
        [SNAPSHOT_SKIP_FULL] = { "read set full", "full" },
};

const char *snapshot_skip_name(enum snapshot_skip why)
{
        return (unsigned)why < _SNAPSHOT_SKIP_MAX ? skips[why].name : "unknown";
}

const char *snapshot_skip_key(enum snapshot_skip why)
{
        return (unsigned)why < _SNAPSHOT_SKIP_MAX ? skips[why].key : "unknown";
}

/* ---- (device, inode) -> file: the previous snapshot's, and links seen ---- */

struct ino_map {
        struct ino_slot {
                uint64_t dev, ino;
                const struct rs_file *f;   /* NULL in the set of links seen */
                bool used;
        } *slot;
        size_t cap, n;   /* cap a power of two, n < cap / 2 */
};

static size_t ino_hash(uint64_t dev, uint64_t ino, size_t cap)
{
        uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
        return (size_t)(h >> 17) & (cap - 1);
}

static struct ino_slot *ino_find(const struct ino_map *m, uint64_t dev, uint64_t ino)
{
        if (!m->cap)
                return NULL;
        for (size_t i = ino_hash(dev, ino, m->cap);; i = (i + 1) & (m->cap - 1)) {
                struct ino_slot *s = &m->slot[i];
                if (!s->used)
                        return NULL;
                if (s->dev == dev && s->ino == ino)
                        return s;
        }
}

/* Add (dev, ino) unless there: 1 added, 0 there already, -ENOMEM. */
static int ino_add(struct ino_map *m, uint64_t dev, uint64_t ino, const struct rs_file *f)
{
        size_t i;

        if (ino_find(m, dev, ino))
                return 0;
        if ((m->n + 1) * 2 > m->cap) {
                struct ino_map g = { .cap = m->cap ? m->cap * 2 : 64 };
                g.slot = calloc(g.cap, sizeof(*g.slot));
                if (!g.slot)
                        return -ENOMEM;
                for (size_t k = 0; k < m->cap; k++)
                        if (m->slot[k].used)
                                (void)ino_add(&g, m->slot[k].dev, m->slot[k].ino, m->slot[k].f);
                free(m->slot);
                *m = g;
        }
        for (i = ino_hash(dev, ino, m->cap); m->slot[i].used; i = (i + 1) & (m->cap - 1))
                ;
        m->slot[i] = (struct ino_slot){ dev, ino, f, true };
        m->n++;
        return 1;
}

/* ---- the walk ---------------------------------------------------------- */

struct walk {
        const struct snapshot_options *o;
        struct snapshot_result *res;
        struct readset *rs;
        struct ino_map prev, links;   /* the previous snapshot's files; the files seen */
        unsigned char *vec;     /* WINDOW / page bytes */
        uint64_t page, dev;     /* the page size; the file system of the path walked */
        uint64_t n_ranges, payload;
        char path[PATH_MAX];
};

static void skip(struct walk *w, enum snapshot_skip why, int err)
{
        w->res->skipped[why]++;
        if (w->o->on_skip)
                w->o->on_skip(w->o->userdata, w->path, why, err);
}

static int cmp_range_offset(const void *a, const void *b)
{
        const struct rs_range *x = a, *y = b;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The previous snapshot's ranges of the file now at st, by offset (NULL,
 * 0 when it had none, or the file changed since). */
static int prev_ranges(struct walk *w, const struct stat *st, struct rs_range **ret, size_t *ret_n)
{
        struct ino_slot *s = ino_find(&w->prev, st->st_dev, st->st_ino);
        const struct rs_file *f = s ? s->f : NULL;
        struct rs_range *r;

        *ret = NULL;
        *ret_n = 0;
        if (!f || !f->n_ranges || f->size != (uint64_t)st->st_size ||
            f->mtime_ns != (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec)
                return 0;
        r = malloc(f->n_ranges * sizeof(*r));
        if (!r)
                return -ENOMEM;
        memcpy(r, f->ranges, f->n_ranges * sizeof(*r));
        qsort_safe(r, f->n_ranges, sizeof(*r), cmp_range_offset);
        *ret = r;
        *ret_n = f->n_ranges;
        return 0;
}

/* Append [a, b) at rank t, merged into the last range where it continues it. */
static int add_piece(struct walk *w, struct rs_file *f, uint64_t a, uint64_t b, uint64_t t)
{
        struct rs_range *last = f->n_ranges ? &f->ranges[f->n_ranges - 1] : NULL;

        if (b <= a)
                return 0;
        w->res->bytes_cached += b - a;
        if (t < SNAPSHOT_RANK_NEW)
                w->res->bytes_kept += b - a;
        if (last && last->offset + last->length == a && last->time_us == t) {
                last->length += b - a;
                return 0;
        }
        if (w->n_ranges >= FORMAT_MAX_RANGES || w->payload + RANGE_COST > PAYLOAD_ROOM) {
                w->res->bytes_cached -= b - a;
                if (t < SNAPSHOT_RANK_NEW)
                        w->res->bytes_kept -= b - a;
                return -ENOBUFS;   /* the read set is full: the file's ranges so far are kept */
        }
        w->n_ranges++;
        w->payload += RANGE_COST;
        return readset_file_add_range(f, a, b - a, t, RS_RANGE_ACCESSED);
}

/* A run of cached pages [a, b), ranked against the previous snapshot's
 * ranges p[*k ...] (by offset; *k moves on as the runs do). */
static int add_run(struct walk *w, struct rs_file *f, uint64_t a, uint64_t b, const struct rs_range *p,
                   size_t n, size_t *k)
{
        int r;

        while (*k < n && p[*k].offset + p[*k].length <= a)
                (*k)++;
        for (size_t i = *k; i < n && p[i].offset < b && a < b; i++) {
                uint64_t s = MAX(a, p[i].offset), e = MIN(b, p[i].offset + p[i].length);
                if (e <= s)
                        continue;
                r = add_piece(w, f, a, s, SNAPSHOT_RANK_NEW);
                if (r >= 0)
                        r = add_piece(w, f, s, e, p[i].time_us > 0 ? MIN(p[i].time_us, SNAPSHOT_RANK_NEW) - 1 : 0);
                if (r < 0)
                        return r;
                a = e;
        }
        return add_piece(w, f, a, b, SNAPSHOT_RANK_NEW);
}

/* mincore over the file, a window at a time: each run of cached pages. */
static int map_file(struct walk *w, int fd, uint64_t size, struct rs_file *f, const struct stat *st)
{
        _cleanup_free_ struct rs_range *p = NULL;
        size_t n_p = 0, k = 0;
        uint64_t end = (size + w->page - 1) / w->page * w->page, run = UINT64_MAX;
        int r = prev_ranges(w, st, &p, &n_p);

        for (uint64_t off = 0; r >= 0 && off < end; off += WINDOW) {
                uint64_t len = MIN(WINDOW, end - off), pages = len / w->page;
                void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);

                /* (ENOMEM here is the address space or the map count, not
                 * readset's memory: a file skipped, not the snapshot failed) */
                if (m == MAP_FAILED)
                        return errno == ENOMEM ? -EOVERFLOW : -errno;
                if (mincore(m, len, w->vec) < 0)
                        r = errno == ENOMEM ? -EOVERFLOW : -errno;
                munmap(m, len);
                for (uint64_t i = 0; r >= 0 && i < pages; i++) {
                        uint64_t at = off + i * w->page;
                        if ((w->vec[i] & 1) && run == UINT64_MAX)
                                run = at;
                        else if (!(w->vec[i] & 1) && run != UINT64_MAX) {
                                r = add_run(w, f, run, at, p, n_p, &k);
                                run = UINT64_MAX;
                        }
                }
        }
        if (r >= 0 && run != UINT64_MAX)
                r = add_run(w, f, run, end, p, n_p, &k);
        return r;
}

/* The file at path (its O_PATH descriptor and stat): counted, asked, and
 * added where it has pages cached.  -ENOMEM only: the rest is a skip. */
static int snap_file(struct walk *w, int pfd, const struct stat *st)
{
        struct snapshot_result before;
        uint64_t n_ranges, payload;
        struct stat now;
        struct rs_file *f;
        int64_t cached;
        int fd, r;

        /* each file once: a hard link, or a file both below a path and
         * open in a process, looked at already */
        r = ino_add(&w->links, st->st_dev, st->st_ino, NULL);
        if (r <= 0)
                return r;
        w->res->files++;
        w->res->bytes += (uint64_t)st->st_size;
        if (st->st_size == 0)
                return 0;
        if (w->rs->n_files >= FORMAT_MAX_FILES || w->n_ranges >= FORMAT_MAX_RANGES ||
            w->payload + strlen(w->path) + FILE_COST > PAYLOAD_ROOM) {
                skip(w, SNAPSHOT_SKIP_FULL, 0);
                return 0;
        }
        fd = fd_reopen_noatime(pfd, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                skip(w, fd == -ENOENT ? SNAPSHOT_SKIP_GONE : SNAPSHOT_SKIP_ERROR, fd);
                return 0;
        }
        w->res->files_opened++;
        if (fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
                close(fd);
                skip(w, SNAPSHOT_SKIP_GONE, 0);
                return 0;
        }
        /* (cachestat asks an open file, not an O_PATH one) */
        cached = residency_cached_pages(fd);
        if (cached == 0) {
                close(fd);
                w->res->files_uncached++;
                return 0;       /* nothing cached: no mapping, no mincore */
        }
        if (!residency_mincore_truthful(fd)) {
                close(fd);
                skip(w, SNAPSHOT_SKIP_UNTOLD, 0);
                return 0;
        }
        w->res->files_mapped++;
        f = readset_add_file(w->rs, w->path, now.st_dev, now.st_ino);
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        f->size = (uint64_t)now.st_size;
        f->mtime_ns = (int64_t)now.st_mtim.tv_sec * 1000000000 + now.st_mtim.tv_nsec;
        before = *w->res;
        n_ranges = w->n_ranges;
        payload = w->payload;
        r = map_file(w, fd, f->size, f, &now);
        close(fd);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOBUFS) {
                skip(w, SNAPSHOT_SKIP_FULL, 0);   /* (what was asked of it kept) */
                r = 0;
        }
        if (r < 0 || f->n_ranges == 0) {
                /* a window refused after others were asked: none of it counts */
                w->res->bytes_cached = before.bytes_cached;
                w->res->bytes_kept = before.bytes_kept;
                w->n_ranges = n_ranges;
                w->payload = payload;
                if (r < 0)
                        skip(w, SNAPSHOT_SKIP_ERROR, r);
                readset_drop_last_file(w->rs);
                return 0;
        }
        w->payload += strlen(w->path) + FILE_COST;
        w->res->files_cached++;
        return 0;
}

static int visit(struct walk *w, int dfd, const char *name, size_t len, unsigned depth);

/* The entries of the directory at w->path (len bytes), O_PATH pfd. */
static int walk_dir(struct walk *w, int pfd, size_t len, unsigned depth)
{
        struct dirent *de;
        DIR *d;
        int fd, r = 0;

        fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                skip(w, errno == ENOENT ? SNAPSHOT_SKIP_GONE : SNAPSHOT_SKIP_ERROR, -errno);
                return 0;
        }
        d = fdopendir(fd);
        if (!d) {
                int e = -errno;
                close(fd);
                if (e == -ENOMEM)
                        return e;
                skip(w, SNAPSHOT_SKIP_ERROR, e);
                return 0;
        }
        w->res->dirs++;
        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno)   /* a listing cut short: what was not listed is not there */
                                skip(w, SNAPSHOT_SKIP_ERROR, -errno);
                        break;
                }
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                r = visit(w, dirfd(d), de->d_name, len, depth + 1);
                w->path[len] = '\0';
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

/* dfd's entry name, below w->path (len bytes): a directory walked, a
 * regular file snapped, the rest counted.  -ENOMEM only. */
static int visit(struct walk *w, int dfd, const char *name, size_t len, unsigned depth)
{
        size_t n = strlen(name);
        struct stat st;
        int pfd, r = 0;

        if (len + 1 + n >= sizeof(w->path) || depth > SNAPSHOT_MAX_DEPTH) {
                skip(w, SNAPSHOT_SKIP_DEEP, 0);
                return 0;
        }
        if (len > 1)
                w->path[len++] = '/';
        memcpy(w->path + len, name, n + 1);
        pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0 || fstat(pfd, &st) < 0) {
                int e = errno;
                if (pfd >= 0)
                        close(pfd);
                skip(w, e == ENOENT ? SNAPSHOT_SKIP_GONE : SNAPSHOT_SKIP_ERROR, -e);
                return 0;
        }
        if (S_ISLNK(st.st_mode))
                skip(w, SNAPSHOT_SKIP_SYMLINK, 0);
        else if ((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && st.st_dev != w->dev)
                skip(w, SNAPSHOT_SKIP_MOUNT, 0);   /* (a file bind-mounted there too) */
        else if (S_ISDIR(st.st_mode))
                r = walk_dir(w, pfd, len + n, depth);
        else if (S_ISREG(st.st_mode))
                r = snap_file(w, pfd, &st);
        else
                skip(w, SNAPSHOT_SKIP_SPECIAL, 0);
        close(pfd);
        return r;
}

/* One path the caller named, resolved: its file system must hold data.
 * A file a process has open (only_file) is not walked if a directory. */
static int walk_top(struct walk *w, const char *arg, bool only_file)
{
        _cleanup_free_ char *real = realpath(arg, NULL);
        struct statfs sfs;
        struct stat st;
        int pfd, r = 0;

        snprintf(w->path, sizeof(w->path), "%s", real ? real : arg);
        if (!real) {
                r = -errno;
                skip(w, r == -ENOENT ? SNAPSHOT_SKIP_GONE : SNAPSHOT_SKIP_ERROR, r);
                return r;
        }
        /* a process's file (its path as the kernel gave it) or a path kept
         * resolved: a symlink on its way now is someone else's doing */
        if ((only_file || w->o->exact_paths) && strcmp(real, arg) != 0) {
                snprintf(w->path, sizeof(w->path), "%s", arg);
                skip(w, SNAPSHOT_SKIP_SYMLINK, 0);
                return -ELOOP;
        }
        if (strlen(real) >= sizeof(w->path)) {
                skip(w, SNAPSHOT_SKIP_DEEP, 0);
                return -ENAMETOOLONG;
        }
        pfd = open(real, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0 || fstat(pfd, &st) < 0 || fstatfs(pfd, &sfs) < 0) {
                r = -errno;
                if (pfd >= 0)
                        close(pfd);
                skip(w, r == -ENOENT ? SNAPSHOT_SKIP_GONE : SNAPSHOT_SKIP_ERROR, r);
                return r;
        }
        w->dev = st.st_dev;
        if (mounts_is_pseudo((long)sfs.f_type, st.st_dev))
                skip(w, SNAPSHOT_SKIP_PSEUDO, 0);
        else if (S_ISDIR(st.st_mode) && !only_file)
                r = walk_dir(w, pfd, strlen(w->path), 0);
        else if (S_ISREG(st.st_mode))
                r = snap_file(w, pfd, &st);
        else if (!S_ISDIR(st.st_mode))
                skip(w, S_ISLNK(st.st_mode) ? SNAPSHOT_SKIP_SYMLINK : SNAPSHOT_SKIP_SPECIAL, 0);
        close(pfd);
        return r == -ENOMEM ? r : 0;
}

static uint64_t cpu_now_us(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* "snapshot PATH..." */
static int set_command(struct readset *rs, char *const *paths, size_t n)
{
        _cleanup_free_ char **argv = calloc(n + 2, sizeof(*argv));

        if (!argv)
                return -ENOMEM;
        argv[0] = (char *)"snapshot";
        memcpy(argv + 1, paths, n * sizeof(*argv));
        return readset_set_command(rs, argv);
}

/* ---- the files processes have open or mapped ------------------------------ */

static int add_path(char ***paths, size_t *n, size_t *cap, const char *p)
{
        char *d;

        if (grow_array(paths, cap, *n + 1, sizeof(**paths)) < 0 || !(d = strdup(p)))
                return -ENOMEM;
        (*paths)[(*n)++] = d;
        return 0;
}

/* pid's open files (/proc/PID/fd) and mapped ones (/proc/PID/maps): the
 * absolute paths, deleted ones and anonymous mappings left out (the walk
 * checks what each is). */
static int pid_files(pid_t pid, char ***paths, size_t *n, size_t *cap)
{
        char dir[64], link[PATH_MAX + 32], target[PATH_MAX];
        _cleanup_free_ char *maps = NULL;
        struct dirent *de;
        DIR *d;
        int r = 0;

        snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
        d = opendir(dir);
        while (d && r >= 0 && (de = readdir(d))) {
                ssize_t k;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
                k = readlink(link, target, sizeof(target) - 1);
                if (k <= 0 || target[0] != '/')
                        continue;   /* a pipe, socket, anon inode */
                target[k] = '\0';
                if (k > 10 && strcmp(target + k - 10, " (deleted)") == 0)
                        continue;
                r = add_path(paths, n, cap, target);
        }
        if (d)
                closedir(d);
        snprintf(dir, sizeof(dir), "/proc/%d/maps", (int)pid);
        if (r < 0 || read_small_file(dir, &maps, 64 << 20) < 0)
                return r;
        for (char *line = maps, *next; r >= 0 && line && *line; line = next) {
                char *slash;
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                slash = strchr(line, '/');
                if (!slash || strstr(slash, " (deleted)"))
                        continue;
                if (*n && strcmp((*paths)[*n - 1], slash) == 0)
                        continue;   /* the next mapping of the same file */
                r = add_path(paths, n, cap, slash);
        }
        return r;
}

/* The processes of the cgroup at path and of its children (cgroup.procs). */
static int cgroup_walk(const char *path, unsigned depth, char ***paths, size_t *n, size_t *cap)
{
        char sub[PATH_MAX];
        _cleanup_free_ char *procs = NULL;
        struct dirent *de;
        DIR *d;
        int r;

        if (depth > 32 || strlen(path) + 16 >= sizeof(sub))
                return 0;
        snprintf(sub, sizeof(sub), "%s/cgroup.procs", path);
        r = read_small_file(sub, &procs, 16 << 20);
        if (r < 0)
                return depth == 0 ? r : 0;   /* a child gone meanwhile */
        for (char *line = procs, *next; line && *line; line = next) {
                uint64_t pid;
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                /* (not readset's own: keep save runs in the unit's cgroup) */
                if (parse_u64(line, &pid) == 0 && pid > 0 && pid < INT32_MAX && (pid_t)pid != getpid() &&
                    (r = pid_files((pid_t)pid, paths, n, cap)) < 0)
                        return r;
        }
        d = opendir(path);
        while (d && (de = readdir(d))) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= sizeof(sub))
                        continue;
                r = cgroup_walk(sub, depth + 1, paths, n, cap);
                if (r < 0)
                        break;
        }
        if (d)
                closedir(d);
        return r < 0 ? r : 0;
}

static void free_paths(char **paths, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
}

int snapshot_cgroup_files(const char *cgroup, char ***ret, size_t *ret_n)
{
        char **paths = NULL;
        size_t n = 0, cap = 0;
        int r = cgroup_walk(cgroup, 0, &paths, &n, &cap);

        if (r < 0) {
                free_paths(paths, n);
                return r;
        }
        *ret = paths;
        *ret_n = n;
        return 0;
}

void snapshot_paths_free(char **paths, size_t n)
{
        free_paths(paths, n);
}

static int index_previous(struct walk *w, const struct readset *prev)
{
        if (!prev || !(prev->rec_flags & RS_REC_SNAPSHOT))
                return 0;
        for (size_t i = 0; i < prev->n_files; i++) {
                const struct rs_file *f = &prev->files[i];
                if (f->kind == RS_FILE_REGULAR && ino_add(&w->prev, f->dev, f->ino, f) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int snapshot_take(char *const *paths, size_t n, const struct snapshot_options *o, struct readset **ret,
                  struct snapshot_result *res)
{
        static const struct snapshot_options none = { 0 };
        long ps = sysconf(_SC_PAGESIZE);
        struct walk w = { .o = o ? o : &none, .res = res, .page = ps > 0 ? (uint64_t)ps : 4096 };
        uint64_t cpu0 = cpu_now_us(), wall0 = now_us();
        size_t failed = 0;
        int r = 0, last = 0;

        *ret = NULL;
        *res = (struct snapshot_result){ 0 };
        w.rs = readset_new();
        w.vec = malloc(WINDOW / w.page);
        if (!w.rs || !w.vec || set_command(w.rs, paths, n) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = index_previous(&w, w.o->previous);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int k = walk_top(&w, paths[i], false);
                if (k == -ENOMEM)
                        r = k;
                else if (k < 0) {
                        failed++;
                        last = k;
                }
        }
        if (r >= 0 && n && failed == n && !w.o->n_files)
                r = last;
        for (size_t i = 0; r >= 0 && i < w.o->n_files; i++)
                if (walk_top(&w, w.o->files[i], true) == -ENOMEM)
                        r = -ENOMEM;   /* (a file gone since it was listed: counted) */
        free(w.vec);
        free(w.prev.slot);
        free(w.links.slot);
        if (r < 0) {
                readset_free(w.rs);
                return r;
        }
        w.rs->page_size = (uint32_t)w.page;
        w.rs->rec_flags = RS_REC_SNAPSHOT;
        w.rs->created_unix = (uint64_t)time(NULL);
        res->cpu_us = cpu_now_us() - cpu0;
        res->wall_us = now_us() - wall0;
        w.rs->duration_us = res->wall_us;
        *ret = w.rs;
        return 0;
}
