/* SPDX-License-Identifier: MIT */
#include "record/tracer.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>

#include "util/util.h"
#include "util/banned.h"

#define TRACEFS_MAGIC_ 0x74726163
#define INSTANCE_PREFIX "readset-"
#define READ_CHUNK (1u << 20)

static const char *const page_events[] = {
        "filemap/mm_filemap_get_pages",
        "filemap/mm_filemap_fault",
        "filemap/mm_filemap_map_pages",
        "filemap/mm_filemap_add_to_page_cache",
};

struct tracer {
        char *root;        /* tracefs root */
        char *path;        /* instance directory */
        int dirfd;
        int pipefd;
        char *buf;         /* READ_CHUNK + partial line */
        size_t buf_len;    /* bytes of a partial line kept from the last read */
        int ncpus;
        unsigned page_shift;   /* log2 of the page size, for the text reader */
        /* binary reading of per-CPU trace_pipe_raw (no text formatting in the kernel) */
        bool raw;
        struct tracer_raw rf;
        int *cpufd;        /* ncpus entries, -1 where absent */
        size_t subbuf;     /* bytes per read */
        uint8_t *page;
};

static bool is_tracefs(const char *path)
{
        struct statfs sf;
        return statfs(path, &sf) == 0 && sf.f_type == TRACEFS_MAGIC_;
}

int tracer_tracefs_root(const char **ret)
{
        static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

        for (size_t i = 0; i < ARRAY_SIZE(roots); i++)
                if (is_tracefs(roots[i])) {
                        *ret = roots[i];
                        return 0;
                }
        /* Not mounted: try to mount it where it belongs. */
        if (access(roots[0], F_OK) == 0) {
                if (mount("nodev", roots[0], "tracefs", 0, NULL) < 0)
                        return -errno;
                if (is_tracefs(roots[0])) {
                        *ret = roots[0];
                        return 0;
                }
        }
        return -ENOENT;
}

/* What follows is also run by a recorder's reaper and guardian, forked
 * from a process that may have other threads (readset auto's daemon): a
 * lock another thread held at the fork (the allocator's, stdio's) stays
 * taken in the child for good.  So no malloc, no stdio, no opendir: system
 * calls and stack buffers alone. */

/* a + "/" + b into buf (size bytes); false when it does not fit */
static bool join_path(char *buf, size_t size, const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);

        if (la + 1 + lb + 1 > size)
                return false;
        memcpy(buf, a, la);
        buf[la] = '/';
        memcpy(buf + la + 1, b, lb + 1);
        return true;
}

/* "/proc/PID/stat" into buf */
static void proc_stat_path(char *buf, pid_t pid)
{
        char digits[16];
        int n = 0;
        unsigned v = (unsigned)pid;

        do
                digits[n++] = (char)('0' + v % 10);
        while ((v /= 10) && n < (int)sizeof(digits));
        memcpy(buf, "/proc/", 6);
        for (int i = 0; i < n; i++)
                buf[6 + i] = digits[n - 1 - i];
        memcpy(buf + 6 + n, "/stat", 6);
}

/* A zombie is not alive: it holds nothing, and its parent may take its
 * time to reap it (a killed readset's shell, say). */
static bool pid_alive(pid_t pid)
{
        char path[32], stat[1024], *close_paren = NULL;
        ssize_t n;
        int fd;

        if (kill(pid, 0) < 0 && errno != EPERM)
                return false;
        proc_stat_path(path, pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return true;
        n = read(fd, stat, sizeof(stat) - 1);
        close(fd);
        if (n <= 0)
                return true;
        stat[n] = 0;
        for (ssize_t i = n - 1; i >= 0 && !close_paren; i--)
                if (stat[i] == ')')
                        close_paren = stat + i;
        return !(close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X'));
}

/* An instance in use is flock()ed: its recorder holds the lock on the
 * instance directory, and so does its guardian (same open file).  An
 * instance nobody locks has nobody left to remove it.  This works across
 * PID namespaces, where pids in names mean nothing. */
static bool instance_locked(const char *dir)
{
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        bool locked;

        if (fd < 0)
                return false;
        locked = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
        close(fd);
        return locked;
}

static int remove_stale_in(const char *root);

int tracer_remove_stale(void)
{
        const char *root;

        return tracer_tracefs_root(&root) < 0 ? 0 : remove_stale_in(root);
}

int tracer_remove_stale_after(pid_t pid)
{
        for (int i = 0; i < 1000 && pid_alive(pid); i++) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return tracer_remove_stale();
}

int tracer_remove_stale_if_mounted(void)
{
        static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

        for (size_t i = 0; i < ARRAY_SIZE(roots); i++)
                if (is_tracefs(roots[i]))
                        return remove_stale_in(roots[i]);
        return 0;
}

struct linux_dirent64_ {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

static int remove_stale_in(const char *root)
{
        char path[PATH_MAX], full[PATH_MAX];
        char buf[4096] __attribute__((aligned(8)));
        size_t plen = strlen(INSTANCE_PREFIX);
        int fd, n = 0;
        long got;

        if (!join_path(path, sizeof(path), root, "instances"))
                return 0;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
                for (long off = 0; off < got;) {
                        const struct linux_dirent64_ *de = (const void *)(buf + off);
                        const char *num = de->d_name + plen;
                        uint64_t pid = 0;
                        size_t k = 0;

                        off += de->d_reclen;
                        if (strncmp(de->d_name, INSTANCE_PREFIX, plen) != 0)
                                continue;
                        /* readset-PID or readset-PID-N */
                        for (; num[k] >= '0' && num[k] <= '9' && k < 10; k++)
                                pid = pid * 10 + (uint64_t)(num[k] - '0');
                        if (k == 0 || (num[k] != 0 && num[k] != '-') || pid == 0 || pid > INT32_MAX)
                                continue;
                        if (!join_path(full, sizeof(full), path, de->d_name))
                                continue;
                        /* a live owner here, or a lock held by anyone anywhere: in
                         * use (the pid check covers the moment between mkdir and
                         * flock) */
                        if (pid_alive((pid_t)pid) || instance_locked(full))
                                continue;
                        if (rmdir(full) == 0)
                                n++;
                }
        close(fd);
        return n;
}

/* The number at s, up to the character that must end it, if it fits an
 * int. */
static bool format_number(const char *s, char ends, int *ret)
{
        const char *end;
        uint64_t v;

        if (parse_u64_prefix(s, &v, &end) < 0 || *end != ends || v > INT_MAX)
                return false;
        *ret = (int)v;
        return true;
}

bool tracer_format_field(const char *fmt, const char *name, int *ret_off, int *ret_size)
{
        const char *p = fmt;
        size_t n = strlen(name);

        while ((p = strstr(p, "field:"))) {
                const char *semi = strchr(p, ';'), *q;
                if (!semi)
                        return false;
                /* the name is the last word before ';', possibly followed by [N] */
                q = semi;
                while (q > p && q[-1] != ' ' && q[-1] != '\t')
                        q--;
                if ((size_t)(semi - q) == n && strncmp(q, name, n) == 0) {
                        const char *o = strstr(semi, "offset:"), *z = strstr(semi, "size:");
                        if (!o || !z || !format_number(o + 7, ';', ret_off) || !format_number(z + 5, ';', ret_size))
                                return false;
                        return *ret_off >= 0 && *ret_size > 0 && *ret_off < 65536;
                }
                p = semi;
        }
        return false;
}

int tracer_raw_init(struct tracer_raw *rf, const char *header_page, const char *const formats[4])
{
        int size;

        *rf = (struct tracer_raw){ 0 };
        if (!tracer_format_field(header_page, "commit", &rf->commit_off, &rf->commit_size) ||
            !tracer_format_field(header_page, "data", &rf->data_off, &size) ||
            (rf->commit_size != 4 && rf->commit_size != 8) || rf->commit_off < 8 ||
            rf->data_off < rf->commit_off + rf->commit_size)
                return -EPROTO;
        for (int i = 0; i < 4; i++) {
                struct tracer_evfmt *e = &rf->fmt[i];
                const char *idl = strstr(formats[i], "ID: ");

                if (!idl || !format_number(idl + 4, '\n', &e->id))
                        return -EPROTO;
                e->kind = i;
                if (!tracer_format_field(formats[i], "i_ino", &e->off_ino, &e->sz_ino) ||
                    !tracer_format_field(formats[i], "s_dev", &e->off_dev, &e->sz_dev) ||
                    !tracer_format_field(formats[i], "index", &e->off_index, &e->sz_index))
                        return -EPROTO;
                if (i <= 1 && !tracer_format_field(formats[i], "last_index", &e->off_last, &e->sz_last))
                        return -EPROTO;
                if (i == 3 && !tracer_format_field(formats[i], "order", &e->off_order, &e->sz_order))
                        return -EPROTO;
        }
        return 0;
}

static int setup_raw(struct tracer *t)
{
        static const char *const names[] = {
                "mm_filemap_get_pages", "mm_filemap_map_pages", "mm_filemap_fault", "mm_filemap_add_to_page_cache",
        };
        _cleanup_free_ char *hdr = NULL, *sb = NULL;
        char *fmts[4] = { NULL };
        char p[PATH_MAX];
        int r;

        snprintf(p, sizeof(p), "%s/events/header_page", t->root);
        r = read_small_file(p, &hdr, 4096);
        if (r < 0)
                return r;
        for (int i = 0; i < 4 && r >= 0; i++) {
                snprintf(p, sizeof(p), "%s/events/filemap/%s/format", t->root, names[i]);
                r = read_small_file(p, &fmts[i], 16384);
        }
        if (r >= 0)
                r = tracer_raw_init(&t->rf, hdr, (const char *const *)fmts);
        for (int i = 0; i < 4; i++)
                free(fmts[i]);
        if (r < 0)
                return r;
        t->subbuf = (size_t)sysconf(_SC_PAGESIZE);
        snprintf(p, sizeof(p), "%s/buffer_subbuf_size_kb", t->path);
        if (read_small_line(p, &sb, 64) >= 0) {
                uint64_t kb;
                if (parse_u64(sb, &kb) >= 0 && kb > 0 && kb <= 1024)
                        t->subbuf = kb * 1024;
        }
        t->page = malloc(t->subbuf);
        t->cpufd = malloc(sizeof(int) * (size_t)t->ncpus);
        if (!t->page || !t->cpufd)
                return -ENOMEM;
        for (int c = 0; c < t->ncpus; c++)
                t->cpufd[c] = -1;
        return 0;
}

int tracer_open(struct tracer **ret, uint64_t buffer_kb, const char **ret_what)
{
        struct tracer *t;
        const char *root;
        char val[64];
        int r;

        *ret_what = "tracefs";
        r = tracer_tracefs_root(&root);
        if (r < 0)
                return r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->dirfd = t->pipefd = -1;
        t->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
        t->page_shift = (unsigned)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
        t->root = strdup(root);
        if (!t->root || asprintf(&t->path, "%s/instances/%s%d", root, INSTANCE_PREFIX, (int)getpid()) < 0) {
                t->path = NULL;
                r = -ENOMEM;
                goto fail;
        }
        t->buf = malloc(READ_CHUNK + 4096 + 1);
        if (!t->buf) {
                r = -ENOMEM;
                goto fail;
        }
        *ret_what = "a private tracefs instance";
        /* readset-PID, or readset-PID-N if another PID namespace has that name */
        for (int n = 0;; n++) {
                if (n > 0) {
                        free(t->path);
                        if (asprintf(&t->path, "%s/instances/%s%d-%d", root, INSTANCE_PREFIX, (int)getpid(), n) < 0) {
                                t->path = NULL;
                                r = -ENOMEM;
                                goto fail_nodir;
                        }
                }
                if (mkdir(t->path, 0700) == 0)
                        break;
                r = -errno;
                if (r != -EEXIST || n >= 100)
                        goto fail_nodir;
        }
        t->dirfd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (t->dirfd < 0 || flock(t->dirfd, LOCK_EX | LOCK_NB) < 0) {
                r = -errno;
                goto fail;
        }
        /* Instance defaults are off; be explicit anyway. */
        (void)write_file_at(t->dirfd, "tracing_on", "0");
        *ret_what = "the 'mono' trace clock";
        r = write_file_at(t->dirfd, "trace_clock", "mono");
        if (r < 0)
                goto fail;
        *ret_what = "the trace buffer size";
        snprintf(val, sizeof(val), "%" PRIu64, buffer_kb);
        r = write_file_at(t->dirfd, "buffer_size_kb", val);
        if (r < 0)
                goto fail;
        for (size_t i = 0; i < ARRAY_SIZE(page_events); i++) {
                char p[256];
                snprintf(p, sizeof(p), "events/%s/enable", page_events[i]);
                *ret_what = page_events[i];
                r = write_file_at(t->dirfd, p, "1");
                if (r < 0)
                        goto fail;
        }
        /* Binary records when their layout can be read; text otherwise. */
        t->raw = getenv("READSET_TRACE_TEXT") == NULL && setup_raw(t) == 0;
        *ret_what = NULL;
        *ret = t;
        return 0;
fail:
        tracer_close(t);
        return r;
fail_nodir:
        free(t->path);
        t->path = NULL;
        tracer_close(t);
        return r;
}

/* The events of pid, and (event-fork) of every task it starts from now
 * on, go in (set_event_pid) or are left out (set_event_notrace_pid). */
static int pid_filter(struct tracer *t, const char *file, pid_t pid)
{
        char val[32];
        int r;

        r = write_file_at(t->dirfd, "options/event-fork", "1");
        if (r < 0)
                return r;
        snprintf(val, sizeof(val), "%d", (int)pid);
        return write_file_at(t->dirfd, file, val);
}

int tracer_follow(struct tracer *t, pid_t pid)
{
        return pid_filter(t, "set_event_pid", pid);
}

int tracer_exclude(struct tracer *t, pid_t pid)
{
        return pid_filter(t, "set_event_notrace_pid", pid);
}

int tracer_start(struct tracer *t, uint64_t start_ns)
{
        t->rf.start_us = start_ns / 1000;
        if (t->raw) {
                for (int c = 0; c < t->ncpus; c++) {
                        char p[64];
                        if (t->cpufd[c] >= 0)
                                continue;
                        snprintf(p, sizeof(p), "per_cpu/cpu%d/trace_pipe_raw", c);
                        t->cpufd[c] = openat(t->dirfd, p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                        if (t->cpufd[c] < 0 && errno != ENOENT)
                                return -errno;
                }
        } else if (t->pipefd < 0) {
                t->pipefd = openat(t->dirfd, "trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (t->pipefd < 0)
                        return -errno;
        }
        return write_file_at(t->dirfd, "tracing_on", "1");
}

int tracer_stop(struct tracer *t)
{
        return write_file_at(t->dirfd, "tracing_on", "0");
}

static bool parse_hex(const char **pp, uint64_t *ret)
{
        const char *p = *pp;
        uint64_t v = 0;
        int n = 0;

        for (;; p++, n++) {
                unsigned d;
                if (*p >= '0' && *p <= '9') d = (unsigned)(*p - '0');
                else if (*p >= 'a' && *p <= 'f') d = (unsigned)(*p - 'a' + 10);
                else break;
                if (n >= 16)
                        return false;
                v = v << 4 | d;
        }
        if (n == 0)
                return false;
        *pp = p;
        *ret = v;
        return true;
}

static bool parse_dec(const char **pp, uint64_t *ret)
{
        const char *p = *pp;
        uint64_t v = 0;
        int n = 0;

        for (; *p >= '0' && *p <= '9'; p++, n++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return false;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        if (n == 0)
                return false;
        *pp = p;
        *ret = v;
        return true;
}

static bool expect(const char **pp, const char *s)
{
        size_t n = strlen(s);
        if (strncmp(*pp, s, n) != 0)
                return false;
        *pp += n;
        return true;
}

/* "dev=MAJ:MIN ino=HEX " or "dev MAJ:MIN ino HEX " */
static bool parse_dev_ino(const char **pp, char sep, uint32_t *kdev, uint64_t *ino)
{
        uint64_t maj, min;
        const char *p = *pp;

        if (!expect(&p, "dev") || *p++ != sep || !parse_dec(&p, &maj) || *p++ != ':' ||
            !parse_dec(&p, &min) || !expect(&p, " ino") || *p++ != sep || !parse_hex(&p, ino))
                return false;
        if (maj > 0xfff || min > 0xfffff)
                return false;
        *kdev = (uint32_t)(maj << 20 | min);
        *pp = p;
        return true;
}

int tracer_parse_line(const char *line, uint64_t start_us, unsigned page_shift, struct rs_event *ev)
{
        static const struct { const char *name; int kind; } names[] = {
                { ": mm_filemap_get_pages: ", 0 },
                { ": mm_filemap_map_pages: ", 1 },
                { ": mm_filemap_fault: ", 2 },
                { ": mm_filemap_add_to_page_cache: ", 3 },
        };
        const char *p = NULL, *ts;
        uint64_t sec, usec, a, b;
        int kind = -1;

        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                p = strstr(line, names[i].name);
                if (p) {
                        kind = names[i].kind;
                        break;
                }
        }
        if (kind < 0)
                return 0;
        if (page_shift < 9 || page_shift > 20)
                return -EINVAL;

        /* The timestamp "SEC.USEC" ends right where the event name starts. */
        ts = p;
        while (ts > line && ts[-1] != ' ')
                ts--;
        if (!parse_dec(&ts, &sec) || *ts++ != '.' || !parse_dec(&ts, &usec) || ts != p)
                return -EBADMSG;
        p += strlen(names[kind].name);

        *ev = (struct rs_event){ 0 };
        {
                uint64_t t = sec * 1000000ULL + usec;
                ev->time_us = t > start_us ? t - start_us : 0;
        }
        switch (kind) {
        case 0: /* get_pages: dev=M:m ino=X ofs=A-B (bytes, B inclusive) */
        case 1: /* map_pages: same */
                if (!parse_dev_ino(&p, '=', &ev->kdev, &ev->ino) || !expect(&p, " ofs=") ||
                    !parse_dec(&p, &a) || *p++ != '-' || !parse_dec(&p, &b) || b < a)
                        return -EBADMSG;
                ev->first_page = a >> page_shift;
                ev->end_page = (b >> page_shift) + 1;
                ev->kind = RS_EV_ACCESS;
                break;
        case 2: /* fault: dev=M:m ino=X ofs=A */
                if (!parse_dev_ino(&p, '=', &ev->kdev, &ev->ino) || !expect(&p, " ofs=") || !parse_dec(&p, &a))
                        return -EBADMSG;
                ev->first_page = a >> page_shift;
                ev->end_page = ev->first_page + 1;
                ev->kind = RS_EV_ACCESS;
                break;
        case 3: /* add_to_page_cache: dev M:m ino X pfn=0x.. ofs=A order=O */
                if (!parse_dev_ino(&p, ' ', &ev->kdev, &ev->ino) || !expect(&p, " pfn=0x") ||
                    !parse_hex(&p, &a) || !expect(&p, " ofs=") || !parse_dec(&p, &a) ||
                    !expect(&p, " order=") || !parse_dec(&p, &b) || b > 30)
                        return -EBADMSG;
                ev->first_page = a >> page_shift;
                ev->end_page = ev->first_page + (1ULL << b);
                ev->kind = RS_EV_FILL;
                break;
        }
        return 1;
}

/* One record of our events -> rs_event; returns false for other events. */
static bool decode_record(struct tracer_raw *t, const uint8_t *d, size_t len, uint64_t ts_ns, struct rs_event *ev)
{
        const struct tracer_evfmt *e = NULL;
        uint64_t dev, idx, last;
        int id;

        if (len < 8)
                return false;
        id = (int)get_le(d, 2);
        for (int i = 0; i < 4; i++)
                if (t->fmt[i].id == id)
                        e = &t->fmt[i];
        if (!e)
                return false;
#define FIELD_OK(o, z) ((o) >= 0 && (z) > 0 && (z) <= 8 && (size_t)(o) + (size_t)(z) <= len)
        if (!FIELD_OK(e->off_ino, e->sz_ino) || !FIELD_OK(e->off_dev, e->sz_dev) ||
            !FIELD_OK(e->off_index, e->sz_index)) {
                t->bad_lines++;
                return false;
        }
        *ev = (struct rs_event){ 0 };
        ev->ino = get_le(d + e->off_ino, e->sz_ino);
        dev = get_le(d + e->off_dev, e->sz_dev);
        ev->kdev = (uint32_t)dev;
        idx = get_le(d + e->off_index, e->sz_index);
        ev->pid = (uint32_t)get_le(d + 4, 4);
        {
                uint64_t us = ts_ns / 1000;
                ev->time_us = us > t->start_us ? us - t->start_us : 0;
        }
        ev->first_page = idx;
        switch (e->kind) {
        case 0: case 1:
                if (!FIELD_OK(e->off_last, e->sz_last)) {
                        t->bad_lines++;
                        return false;
                }
                last = get_le(d + e->off_last, e->sz_last);
                if (last < idx || last == UINT64_MAX) {
                        t->bad_lines++;
                        return false;
                }
                ev->end_page = last + 1;
                ev->kind = RS_EV_ACCESS;
                break;
        case 2:
                ev->end_page = idx + 1;
                ev->kind = RS_EV_ACCESS;
                break;
        default: {
                uint64_t order;
                if (!FIELD_OK(e->off_order, e->sz_order)) {
                        t->bad_lines++;
                        return false;
                }
                order = get_le(d + e->off_order, e->sz_order);
                if (order > 30) {
                        t->bad_lines++;
                        return false;
                }
                ev->end_page = idx + (1ULL << order);
                ev->kind = RS_EV_FILL;
                break;
        }
        }
#undef FIELD_OK
        return ev->end_page > ev->first_page;
}

/* Walk one ring-buffer page (see events/header_page and header_event). */
int tracer_parse_page(struct tracer_raw *t, const uint8_t *pg, size_t len, tracer_event_fn fn, void *userdata)
{
        uint64_t ts, commit;
        size_t off, end;
        int n = 0;

        if (len < (size_t)t->data_off || len < (size_t)(t->commit_off + t->commit_size))
                return 0;
        ts = get_le(pg, 8);
        commit = get_le(pg + t->commit_off, t->commit_size) & ((1ULL << 30) - 1); /* minus MISSED flags */
        off = (size_t)t->data_off;
        end = MIN(len, off + commit);
        while (off + 4 <= end) {
                uint32_t h = (uint32_t)get_le(pg + off, 4);
                uint32_t type_len = h & 31, delta = h >> 5;
                uint32_t arr = off + 8 <= end ? (uint32_t)get_le(pg + off + 4, 4) : 0;
                struct rs_event ev;
                size_t dlen;
                const uint8_t *data;

                switch (type_len) {
                case 29: /* padding: delta 0 ends the page, else a discarded event */
                        if (delta == 0 || arr == 0)
                                return n;
                        ts += delta;
                        off += 4 + (size_t)arr;
                        continue;
                case 30: /* time extend */
                        ts += ((uint64_t)arr << 27) | delta;
                        off += 8;
                        continue;
                case 31: /* absolute time stamp (59 bits) */
                        ts = (ts & ~((1ULL << 59) - 1)) | ((uint64_t)arr << 27) | delta;
                        off += 8;
                        continue;
                case 0:
                        if (arr < 4)
                                return n;
                        dlen = arr - 4;
                        data = pg + off + 8;
                        off += 4 + (size_t)arr;
                        break;
                default:
                        dlen = (size_t)type_len * 4;
                        data = pg + off + 4;
                        off += 4 + dlen;
                        break;
                }
                ts += delta;
                if (off > end) {
                        t->bad_lines++;
                        return n;
                }
                if (decode_record(t, data, dlen, ts, &ev)) {
                        int r = fn(userdata, &ev);
                        if (r < 0)
                                return r;
                        n++;
                }
        }
        return n;
}

static int drain_raw(struct tracer *t, tracer_event_fn fn, void *userdata)
{
        int n = 0;

        for (int c = 0; c < t->ncpus; c++) {
                if (t->cpufd[c] < 0)
                        continue;
                for (;;) {
                        ssize_t k = read(t->cpufd[c], t->page, t->subbuf);
                        int r;

                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                if (errno == EAGAIN)
                                        break;
                                return -errno;
                        }
                        if (k == 0)
                                break;
                        r = tracer_parse_page(&t->rf, t->page, (size_t)k, fn, userdata);
                        if (r < 0)
                                return r;
                        n += r;
                }
        }
        return n;
}

int tracer_drain(struct tracer *t, tracer_event_fn fn, void *userdata)
{
        int n = 0;

        if (t->raw)
                return drain_raw(t, fn, userdata);

        if (t->pipefd < 0)
                return 0;
        for (;;) {
                ssize_t k = read(t->pipefd, t->buf + t->buf_len, READ_CHUNK);
                char *line, *nl, *end;

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return n;
                        return -errno;
                }
                if (k == 0)
                        return n;
                end = t->buf + t->buf_len + k;
                *end = 0;
                line = t->buf;
                while ((nl = memchr(line, '\n', (size_t)(end - line)))) {
                        struct rs_event ev;
                        int r;

                        *nl = 0;
                        r = tracer_parse_line(line, t->rf.start_us, t->page_shift, &ev);
                        if (r < 0)
                                t->rf.bad_lines++;
                        else if (r > 0) {
                                r = fn(userdata, &ev);
                                if (r < 0)
                                        return r;
                                n++;
                        }
                        line = nl + 1;
                }
                /* Keep a partial line for the next read (bounded). */
                t->buf_len = (size_t)(end - line);
                if (t->buf_len > 4096) {
                        t->rf.bad_lines++;
                        t->buf_len = 0;
                }
                memmove(t->buf, line, t->buf_len);
        }
}

uint64_t tracer_lost(struct tracer *t)
{
        uint64_t lost = 0;

        for (int cpu = 0; cpu < t->ncpus; cpu++) {
                char p[64];
                _cleanup_free_ char *s = NULL;
                const char *keys[] = { "overrun: ", "dropped events: " };

                snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/stats", t->path, cpu);
                if (read_small_file(p, &s, 4096) < 0)
                        continue;
                for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                        const char *q = strstr(s, keys[i]);
                        uint64_t v;
                        if (q) {
                                q += strlen(keys[i]);
                                if (parse_dec(&q, &v))
                                        lost += v;
                        }
                }
        }
        return lost;
}

uint64_t tracer_bad_lines(struct tracer *t) { return t->rf.bad_lines; }
const char *tracer_instance_path(struct tracer *t) { return t->path; }

static void close_cpufds(struct tracer *t)
{
        if (!t->cpufd)
                return;
        for (int c = 0; c < t->ncpus; c++)
                if (t->cpufd[c] >= 0)
                        close(t->cpufd[c]);
        free(t->cpufd);
        t->cpufd = NULL;
        free(t->page);
        t->page = NULL;
}

void tracer_forget(struct tracer *t)
{
        if (!t)
                return;
        close_cpufds(t);
        if (t->dirfd >= 0)
                close(t->dirfd);
        if (t->pipefd >= 0)
                close(t->pipefd);
        free(t->path);
        free(t->root);
        free(t->buf);
        free(t);
}

void tracer_remove(const char *path, int dirfd)
{
        if (dirfd >= 0) {
                (void)write_file_at(dirfd, "tracing_on", "0");
                (void)write_file_at(dirfd, "events/enable", "0");
                close(dirfd);
        }
        /* The kernel refuses while a reader is still busy; retry briefly. */
        for (int i = 0; path && i < 50 && rmdir(path) < 0 && errno == EBUSY; i++) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

int tracer_dir_fd(const struct tracer *t) { return t->dirfd; }

size_t tracer_own_fds(const struct tracer *t, int *fds, size_t max)
{
        size_t n = 0;

        if (t->dirfd >= 0 && n < max)
                fds[n++] = t->dirfd;
        if (t->pipefd >= 0 && n < max)
                fds[n++] = t->pipefd;
        for (int c = 0; t->cpufd && c < t->ncpus; c++)
                if (t->cpufd[c] >= 0 && n < max)
                        fds[n++] = t->cpufd[c];
        return n;
}

void tracer_close(struct tracer *t)
{
        if (!t)
                return;
        close_cpufds(t);
        if (t->pipefd >= 0)
                close(t->pipefd);
        tracer_remove(t->path, t->dirfd);
        free(t->path);
        free(t->root);
        free(t->buf);
        free(t);
}
