/* SPDX-License-Identifier: MIT */
#include "record/lookups.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "record/tracer.h"
#include "util/util.h"

#if HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "record/lookups-bpf.h"
#include "lookups.skel.h"
#include "util/log.h"
#include "util/banned.h"

/* What one process knows: its cwd and the paths behind its fds. */
struct proc {
        uint32_t tgid, parent;
        char *cwd;
        bool cwd_unknown;          /* changed to a directory we could not name */
        struct { int fd; char *path; } *fds;  /* path "": not known (hides an ancestor's) */
        size_t n_fds, cap_fds;
};

struct lookups {
        uint64_t max_kept, dropped;   /* lookups_set_limit() */
        struct lookups_bpf *skel;
        struct ring_buffer *rb;
        uint64_t start_ns;
        struct readset *out;       /* staging: lookups collected so far */
        struct proc *procs;
        size_t n_procs, cap_procs;
        uint64_t unreadable;
        uint64_t unresolved;       /* relative names whose directory was not known: not kept */
        int err;
        bool all;                  /* every process: those not seen starting are asked for their cwd */
        bool attached;             /* its programs on their tracepoints (lookups_attach()) */
        void (*observe)(void *userdata, uint32_t op, int32_t result, const char *path);
        void *observe_userdata;
        /* last readdir, to fold repeated getdents64 calls into one lookup */
        uint32_t last_dir_tgid;
        int last_dir_fd;
};

/* libbpf's messages (the verifier's log among them) only with READSET_DEBUG=1. */
static int bpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
        return level == LIBBPF_DEBUG ? 0 : log_debugv(fmt, ap);
}

static struct proc *proc_get(struct lookups *l, uint32_t tgid, bool create)
{
        for (size_t i = 0; i < l->n_procs; i++)
                if (l->procs[i].tgid == tgid)
                        return &l->procs[i];
        if (!create || grow_array(&l->procs, &l->cap_procs, l->n_procs + 1, sizeof(*l->procs)) < 0)
                return NULL;
        l->procs[l->n_procs] = (struct proc){ .tgid = tgid };
        return &l->procs[l->n_procs++];
}

static int proc_set_fd(struct lookups *l, uint32_t tgid, int fd, const char *path);

static const char *proc_fd_path(struct lookups *l, uint32_t tgid, int fd)
{
        uint32_t self = tgid;

        /* Look in the process, then in its ancestors (fds are inherited). */
        for (int depth = 0; depth < 64; depth++) {
                struct proc *p = proc_get(l, tgid, false);
                if (!p)
                        break;
                for (size_t i = p->n_fds; i-- > 0;)
                        if (p->fds[i].fd == fd)
                                return p->fds[i].path[0] ? p->fds[i].path : NULL;
                tgid = p->parent;
        }
        /* Following a start as it runs (lookups_observe()), one opened
         * before we looked is asked of /proc: the process still runs, and a
         * wrong guess (the fd closed and reused since) only misplaces where
         * it is.  A recording never guesses: such names are counted. */
        if (l->observe && fd >= 0) {
                char link[64], target[PATH_MAX];
                ssize_t k;
                snprintf(link, sizeof(link), "/proc/%u/fd/%d", self, fd);
                k = readlink(link, target, sizeof(target) - 1);
                if (k > 0 && target[0] == '/' && strncmp(target, "/proc/", 6) != 0) {
                        target[k] = 0;
                        if (proc_set_fd(l, self, fd, target) == 0)
                                return proc_fd_path(l, self, fd);
                }
        }
        return NULL;
}

/* Recording every process, one already running when recording started
 * has a working directory nobody saw it choose: ask /proc, once. */
static struct proc *proc_found(struct lookups *l, uint32_t tgid)
{
        char link[64], cwd[PATH_MAX];
        struct proc *p = proc_get(l, tgid, false);
        ssize_t k;

        if (p || !l->all)
                return p;
        p = proc_get(l, tgid, true);
        if (!p)
                return NULL;
        snprintf(link, sizeof(link), "/proc/%u/cwd", tgid);
        k = readlink(link, cwd, sizeof(cwd) - 1);
        if (k > 0 && cwd[0] == '/') {
                cwd[k] = 0;
                p->cwd = strdup(cwd);
        }
        return p;
}

static const char *proc_cwd(struct lookups *l, uint32_t tgid)
{
        for (int depth = 0; depth < 64; depth++) {
                struct proc *p = depth == 0 ? proc_found(l, tgid) : proc_get(l, tgid, false);
                if (!p || p->cwd_unknown)
                        return NULL;
                if (p->cwd)
                        return p->cwd;
                tgid = p->parent;
        }
        return NULL;
}

/* fd now names path; NULL: it names nothing we know (a dup of an unknown
 * fd, an open whose name could not be made absolute), so that a later name
 * relative to it is counted unresolved rather than joined to a stale path. */
static int proc_set_fd(struct lookups *l, uint32_t tgid, int fd, const char *path)
{
        struct proc *p = proc_get(l, tgid, true);
        char *copy = NULL;

        if (!p)
                return -ENOMEM;
        if (path && !(copy = strdup(path)))
                return -ENOMEM;
        for (size_t i = 0; i < p->n_fds; i++)
                if (p->fds[i].fd == fd) {
                        free(p->fds[i].path);
                        if (copy)
                                p->fds[i].path = copy;
                        else
                                p->fds[i] = p->fds[--p->n_fds];
                        return 0;
                }
        if (!copy) {
                /* inherited from an ancestor that knows it: hide that */
                if (!proc_fd_path(l, tgid, fd))
                        return 0;
                copy = strdup("");
                if (!copy)
                        return -ENOMEM;
        }
        if (grow_array(&p->fds, &p->cap_fds, p->n_fds + 1, sizeof(*p->fds)) < 0) {
                free(copy);
                return -ENOMEM;
        }
        p->fds[p->n_fds].fd = fd;
        p->fds[p->n_fds++].path = copy;
        return 0;
}

static uint32_t op_of(uint32_t nr)
{
        switch (nr) {
        case NR_open: case NR_openat: case NR_openat2: return RS_LOOKUP_OPEN;
        case NR_stat: case NR_lstat: case NR_newfstatat: case NR_statx: return RS_LOOKUP_STAT;
        case NR_access: case NR_faccessat: case NR_faccessat2: return RS_LOOKUP_ACCESS;
        case NR_readlink: case NR_readlinkat: return RS_LOOKUP_READLINK;
        case NR_getdents64: return RS_LOOKUP_READDIR;
        case NR_execve: case NR_execveat: return RS_LOOKUP_EXEC;
        }
        return 0;
}

/* tgid's working directory is now path (NULL: one we could not name, so
 * that names relative to it are counted, not joined to a stale one). */
static int proc_set_cwd(struct lookups *l, uint32_t tgid, const char *path)
{
        struct proc *p = proc_get(l, tgid, true);
        char *c = NULL;

        if (!p || (path && !(c = strdup(path))))
                return -ENOMEM;
        free(p->cwd);
        p->cwd = c;
        p->cwd_unknown = !path;
        return 0;
}

/* A name that cannot be made absolute: counted, never kept; an fd it
 * opened names nothing known. */
static int unresolved_name(struct lookups *l, const struct lookup_record *r)
{
        if (op_of(r->nr) && r->ts >= l->start_ns)
                l->unresolved++;
        if ((r->nr == NR_open || r->nr == NR_openat || r->nr == NR_openat2) && r->ret >= 0)
                return proc_set_fd(l, r->tgid, (int)r->ret, NULL);
        if (r->nr == NR_chdir && r->ret == 0)
                return proc_set_cwd(l, r->tgid, NULL);
        return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
        struct lookups *l = ctx;
        const struct lookup_record *r = data;
        char path[PATH_MAX + LOOKUP_PATH_MAX + 2];
        const char *base = NULL;
        int32_t result;
        uint32_t op;
        int k = 0;

        /* records come at their real size: header, then len bytes of name */
        if (size < offsetof(struct lookup_record, path))
                return 0;
        if (r->nr == LOOKUP_NR_FORK) {
                struct proc *p = proc_get(l, r->tgid, true);
                if (!p)
                        return -ENOMEM;
                p->parent = (uint32_t)r->dfd;
                return 0;
        }
        result = r->ret < 0 ? (int32_t)r->ret : 0;
        if (r->nr == NR_dup || r->nr == NR_dup2 || r->nr == NR_dup3 || r->nr == NR_fcntl) {
                if (r->ret < 0 || r->ret == r->dfd)
                        return 0;
                return proc_set_fd(l, r->tgid, (int)r->ret, proc_fd_path(l, r->tgid, r->dfd));
        }
        if (r->nr == NR_getdents64 || r->nr == NR_fchdir) {
                base = proc_fd_path(l, r->tgid, r->dfd);
                if (!base) {
                        /* an fd we never saw opened (inherited from outside) */
                        if (r->nr == NR_fchdir && result == 0)
                                return proc_set_cwd(l, r->tgid, NULL);
                        if (r->nr == NR_getdents64 && r->ts >= l->start_ns &&
                            !(l->last_dir_tgid == r->tgid && l->last_dir_fd == r->dfd)) {
                                l->unresolved++;
                                l->last_dir_tgid = r->tgid;
                                l->last_dir_fd = r->dfd;
                        }
                        return 0;
                }
                if (r->nr == NR_fchdir)
                        return result < 0 ? 0 : proc_set_cwd(l, r->tgid, base);
                if (l->last_dir_tgid == r->tgid && l->last_dir_fd == r->dfd)
                        return 0;
                l->last_dir_tgid = r->tgid;
                l->last_dir_fd = r->dfd;
                snprintf(path, sizeof(path), "%s", base);
        } else {
                char name[LOOKUP_PATH_MAX + 1];

                if (r->len < 0) {
                        l->unreadable++;
                        return 0;
                }
                if (r->len >= LOOKUP_PATH_MAX)
                        return unresolved_name(l, r);   /* perhaps cut: a wrong path would be worse than none */
                {
                        size_t have = MIN(size - offsetof(struct lookup_record, path), (size_t)LOOKUP_PATH_MAX);
                        memcpy(name, r->path, have);
                        name[have] = 0;
                }
                if (name[0] == '/')
                        snprintf(path, sizeof(path), "%s", name);
                else {
                        base = r->dfd == LOOKUP_AT_FDCWD ? proc_cwd(l, r->tgid) : proc_fd_path(l, r->tgid, r->dfd);
                        if (base)
                                k = snprintf(path, sizeof(path), "%s%s%s", base,
                                             base[strlen(base) - 1] == '/' ? "" : "/", name);
                        if (!base || k < 0 || (size_t)k >= sizeof(path))
                                return unresolved_name(l, r);   /* never kept as a bare name */
                }
        }

        if (r->nr == NR_chdir) {
                if (result < 0)
                        return 0;
                /* /proc/self/fd/N and the like name another directory in every process */
                return proc_set_cwd(l, r->tgid, path[0] == '/' && strncmp(path, "/proc/", 6) != 0 ? path : NULL);
        }
        if ((r->nr == NR_open || r->nr == NR_openat || r->nr == NR_openat2) && r->ret >= 0 && path[0] == '/') {
                int e = proc_set_fd(l, r->tgid, (int)r->ret, path);
                if (e < 0)
                        return e;
        }
        op = op_of(r->nr);
        if (!op)
                return 0;
        if (r->nr != NR_getdents64)
                l->last_dir_tgid = 0;
        if (r->ts < l->start_ns)
                return 0;       /* before the recording began (its state above still counts) */
        if (l->observe) {
                l->observe(l->observe_userdata, op, result, path);
                return 0;
        }
        if (l->max_kept && l->out->n_lookups >= l->max_kept) {
                l->dropped++;
                return 0;
        }
        return readset_add_lookup(l->out, (r->ts - l->start_ns) / 1000,
                                  op, result, r->tgid, path);
}

void lookups_set_limit(struct lookups *l, uint64_t max_lookups) { l->max_kept = max_lookups; }

/* Which layout does this kernel's sched_process_fork record have?  Read its
 * format rather than guess from the version: 0 = comm arrays inline,
 * 1 = __data_loc comm, -EOPNOTSUPP = neither. */
static int fork_layout(void)
{
        static const char *const paths[] = {
                "/sys/kernel/tracing/events/sched/sched_process_fork/format",
                "/sys/kernel/debug/tracing/events/sched/sched_process_fork/format",
        };
        for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                _cleanup_free_ char *f = NULL;
                int poff, coff, size;

                if (read_small_file(paths[i], &f, 8192) < 0)
                        continue;
                if (!tracer_format_field(f, "parent_pid", &poff, &size) ||
                    !tracer_format_field(f, "child_pid", &coff, &size))
                        return -EOPNOTSUPP;
                if (poff == 24 && coff == 44)
                        return 0;
                if (poff == 12 && coff == 20)
                        return 1;
                return -EOPNOTSUPP;
        }
        return -ENOENT;
}

int lookups_open(struct lookups **ret, bool all)
{
        return lookups_open_as(ret, all, true);
}

int lookups_attach(struct lookups *l)
{
        int r;

        if (l->attached)
                return 0;
        if ((r = lookups_bpf__attach(l->skel)) < 0)
                return r;
        l->attached = true;
        return 0;
}

int lookups_open_as(struct lookups **ret, bool all, bool attach)
{
        struct lookups *l = calloc(1, sizeof(*l));
        int r;

        if (!l)
                return -ENOMEM;
        l->last_dir_fd = -1;
        l->out = readset_new();
        if (!l->out) {
                free(l);
                return -ENOMEM;
        }
        libbpf_set_print(bpf_print);
        r = fork_layout();
        if (r < 0) {
                lookups_close(l);
                return r;
        }
        l->skel = lookups_bpf__open();
        if (!l->skel) {
                r = errno ? -errno : -EINVAL;
                lookups_close(l);
                return r;
        }
        bpf_program__set_autoload(r == 1 ? l->skel->progs.on_fork_v1 : l->skel->progs.on_fork_v2, false);
        l->all = all;
        l->skel->rodata->trace_all = all;
        r = lookups_bpf__load(l->skel);
        if (r < 0) {
                lookups_close(l);
                return r;
        }
        r = attach ? lookups_attach(l) : 0;
        if (r < 0) {
                lookups_close(l);
                return r;
        }

        if (all && (r = lookups_ignore(l, getpid())) < 0) {
                lookups_close(l);
                return r;
        }
        l->rb = ring_buffer__new(bpf_map__fd(l->skel->maps.records), on_record, l, NULL);
        if (!l->rb) {
                r = errno ? -errno : -ENOMEM;
                lookups_close(l);
                return r;
        }
        *ret = l;
        return 0;
}

/* pid into the tree, with its working directory (parent: its parent in
 * the tree, 0 for the root; a descendant whose directory cannot be read,
 * gone meanwhile, has none: its relative names are not resolved) */
static int follow_one(struct lookups *l, pid_t pid, pid_t parent)
{
        __u32 tgid = (__u32)pid;
        __u8 one = 1;
        char cwd[PATH_MAX], link[64];
        struct proc *p = proc_get(l, tgid, true);
        ssize_t k;

        if (!p)
                return -ENOMEM;
        p->parent = (uint32_t)parent;
        /* a process already running may have changed directory */
        snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
        k = readlink(link, cwd, sizeof(cwd) - 1);
        if (k > 0 && cwd[0] == '/') {
                cwd[k] = 0;
                p->cwd = strdup(cwd);
                if (!p->cwd)
                        return -ENOMEM;
        } else if (parent == 0 && getcwd(cwd, sizeof(cwd))) {
                p->cwd = strdup(cwd);     /* the command we started: ours */
                if (!p->cwd)
                        return -ENOMEM;
        } else
                p->cwd_unknown = true;
        if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.traced), &tgid, &one, BPF_ANY) < 0)
                return -errno;
        return 0;
}

/* The parent of process pid (a /proc name), 0: gone or unreadable. */
static pid_t parent_of(const char *pid)
{
        struct proc_stat st;
        uint64_t n;

        if (parse_u64(pid, &n) < 0 || n > INT32_MAX || proc_stat((pid_t)n, &st) < 0)
                return 0;
        return st.ppid;
}

/* Has the BPF program put tgid in the tree (it saw the fork)?  Then its
 * records, its changes of directory among them, wait in the ring. */
static bool traced_by_bpf(struct lookups *l, uint32_t tgid)
{
        __u8 v;
        return bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.traced), &tgid, &v) == 0;
}

/* One pass over /proc: each process whose parent is in the tree and that
 * is not, joins it.  How many joined, or -ENOMEM. */
static int follow_pass(struct lookups *l)
{
        struct dirent *de;
        DIR *d = opendir("/proc");
        int joined = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                pid_t parent, pid;
                int r;
                if (de->d_name[0] < '1' || de->d_name[0] > '9' || !(parent = parent_of(de->d_name)))
                        continue;
                pid = (pid_t)strtol(de->d_name, NULL, 10);
                if (proc_get(l, (uint32_t)pid, false) || traced_by_bpf(l, (uint32_t)pid) ||
                    (!proc_get(l, (uint32_t)parent, false) && !traced_by_bpf(l, (uint32_t)parent)))
                        continue;
                r = follow_one(l, pid, parent);
                if (r == -ENOMEM) {
                        closedir(d);
                        return r;
                }
                joined += r >= 0;       /* (gone meanwhile: no matter) */
        }
        closedir(d);
        return joined;
}

int lookups_follow(struct lookups *l, pid_t pid)
{
        int r = follow_one(l, pid, 0);

        /* What the tree started before the fork tracepoint saw it (the
         * follower comes up while a wrapper script has already started its
         * program): its descendants now, from /proc (each process's
         * parent; this kernel has no /proc/PID/task/TID/children).  The
         * root is in the map first, and each descendant as it is found: a
         * fork after that is the BPF program's; one by a descendant before
         * it joined, the next pass's.  Orphans (reparented to init or a
         * subreaper) are not found. */
        for (int pass = 0; r >= 0 && pass < 8; pass++) {
                int joined = follow_pass(l);
                if (joined <= 0) {
                        r = joined < 0 ? joined : 0;
                        break;
                }
        }
        return r;
}

int lookups_ignore(struct lookups *l, pid_t pid)
{
        __u32 tgid = (__u32)pid;
        __u8 one = 1;

        if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.ignored), &tgid, &one, BPF_ANY) < 0)
                return -errno;
        return 0;
}

void lookups_set_start(struct lookups *l, uint64_t start_ns) { l->start_ns = start_ns; }

void lookups_observe(struct lookups *l, void (*fn)(void *userdata, uint32_t op, int32_t result, const char *path),
                     void *userdata)
{
        l->observe = fn;
        l->observe_userdata = userdata;
}
int lookups_fd(struct lookups *l) { return ring_buffer__epoll_fd(l->rb); }

size_t lookups_own_fds(const struct lookups *l, int *fds, size_t max)
{
        const struct bpf_object_skeleton *sk = l->skel->skeleton;
        struct bpf_program *prog;
        struct bpf_map *map;
        size_t n = 0;
        int fd;

        bpf_object__for_each_program(prog, l->skel->obj)
                if ((fd = bpf_program__fd(prog)) >= 0 && n < max)
                        fds[n++] = fd;
        bpf_object__for_each_map(map, l->skel->obj)
                if ((fd = bpf_map__fd(map)) >= 0 && n < max)
                        fds[n++] = fd;
        for (int i = 0; sk && i < sk->prog_cnt; i++)
                if (sk->progs[i].link && *sk->progs[i].link && (fd = bpf_link__fd(*sk->progs[i].link)) >= 0 &&
                    n < max)
                        fds[n++] = fd;
        if ((fd = bpf_object__btf_fd(l->skel->obj)) >= 0 && n < max)
                fds[n++] = fd;
        return n;
}

int lookups_drain(struct lookups *l)
{
        int r = ring_buffer__consume(l->rb);
        return r < 0 ? r : 0;
}

static int cmp_lookup_time(const void *a, const void *b)
{
        const struct rs_lookup *x = a, *y = b;
        if (x->time_us != y->time_us)
                return x->time_us < y->time_us ? -1 : 1;
        return 0;
}

int lookups_finish(struct lookups *l, struct readset *rs)
{
        uint64_t lost = 0;
        int r;

        r = lookups_drain(l);
        if (r < 0)
                return r;
        for (__u32 i = 0; i < 2; i++) {
                __u64 v = 0;
                if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.counters), &i, &v) == 0)
                        lost += v;
        }
        rs->lookups_lost = lost + l->dropped;
        rs->lookups_unresolved = l->unresolved;
        /* Records arrive in completion order; the read set keeps start order. */
        qsort_safe(l->out->lookups, l->out->n_lookups, sizeof(*l->out->lookups), cmp_lookup_time);
        /* Move the staged lookups over. */
        for (size_t i = 0; i < l->out->n_lookups; i++) {
                struct rs_lookup *x = &l->out->lookups[i];
                r = readset_add_lookup(rs, x->time_us, x->op, x->result, x->pid, x->path);
                if (r < 0)
                        return r;
        }
        return 0;
}

void lookups_close(struct lookups *l)
{
        if (!l)
                return;
        ring_buffer__free(l->rb);
        lookups_bpf__destroy(l->skel);
        for (size_t i = 0; i < l->n_procs; i++) {
                for (size_t j = 0; j < l->procs[i].n_fds; j++)
                        free(l->procs[i].fds[j].path);
                free(l->procs[i].fds);
                free(l->procs[i].cwd);
        }
        free(l->procs);
        readset_free(l->out);
        free(l);
}

#else /* !HAVE_BPF */

struct lookups { int unused; };

int lookups_open(struct lookups **ret, bool all) { (void)ret; (void)all; return -EOPNOTSUPP; }
int lookups_open_as(struct lookups **ret, bool all, bool attach) { (void)ret; (void)all; (void)attach; return -EOPNOTSUPP; }
int lookups_attach(struct lookups *l) { (void)l; return -EOPNOTSUPP; }
void lookups_set_limit(struct lookups *l, uint64_t max_lookups) { (void)l; (void)max_lookups; }
int lookups_follow(struct lookups *l, pid_t pid) { (void)l; (void)pid; return -EOPNOTSUPP; }
int lookups_ignore(struct lookups *l, pid_t pid) { (void)l; (void)pid; return -EOPNOTSUPP; }
void lookups_set_start(struct lookups *l, uint64_t s) { (void)l; (void)s; }
void lookups_observe(struct lookups *l, void (*fn)(void *, uint32_t, int32_t, const char *), void *u)
{
        (void)l; (void)fn; (void)u;
}
int lookups_fd(struct lookups *l) { (void)l; return -1; }
size_t lookups_own_fds(const struct lookups *l, int *fds, size_t max) { (void)l; (void)fds; (void)max; return 0; }
int lookups_drain(struct lookups *l) { (void)l; return 0; }
int lookups_finish(struct lookups *l, struct readset *rs) { (void)l; (void)rs; return -EOPNOTSUPP; }
void lookups_close(struct lookups *l) { (void)l; }

#endif
