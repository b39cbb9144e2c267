/* SPDX-License-Identifier: MIT */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot/run-loop.h"
#include "daemon/execs.h"
#include "daemon/key.h"
#include "daemon/programs.h"
#include "keep/snapshot.h"
#include "model/compare.h"
#include "model/format.h"
#include "model/readset.h"
#include "model/store.h"
#include "record/recorder.h"
#include "replay/residency.h"
#include "replay/session.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

#define MAX_PENDING 256
#define PENDING_MS 50          /* an exec not done by then failed, or the event was the loader's */
#define MAX_DEPTH 32           /* ancestors looked at */
#define WARM_SHARE 0.7         /* a start that found this much of its read set cached was warm */
#define LATE_MIN_RCHAR (64u << 10)  /* a start that read this much through read calls is timed by them */
#define COLD_SHARE 0.3         /* a first start that had to read this much of what it used itself was cold */
#define WARM_AGAIN_S 600       /* a program found warm at its first start: not recorded again this long */
#define BIG_PROGRAM (512u << 10)  /* a program file the exec's first read does not bring in whole */
#define SPARE_EVERY_MS 250     /* recorders opened ahead at most this often (a storm of new programs) */
#define STALE_PERCENT 50       /* as run --auto's */
#define MAX_EVENTS (1u << 20)  /* page events a recording keeps at most (48 bytes each) */
#define QUIET_MS 1000          /* a program still running whose reads and CPU stopped this long has started */
#define USERS_EVERY_MS 60000   /* users' own status written again at most this often */
#define EARLY_MAX 48           /* files of a start's first process made part of its recording */
#define CACHE_SLOTS 64         /* programs whose history and read set the daemon keeps in memory */
#define CACHE_BYTES (32u << 20)   /* ... their read sets' bytes (encoded) at most */

/* Programs never learned, whatever the configuration: package managers
 * (what they run changes the files it reads) */
static const char *const never_names[] = {
        "dpkg", "apt", "apt-get", "aptitude", "apt-check", "unattended-upgrade", "rpm", "dnf", "yum",
        "snap", "flatpak", "dpkg-deb", "dpkg-query", "dpkg-trigger",
};
static const char *const never_prefixes[] = { "/proc/", "/sys/", "/dev/", "/run/" };

struct pending {
        pid_t pid;
        int fd;
        uint64_t at_us;
};

struct loader_seen {
        pid_t pid;
        uint64_t at_us;
        char name[NAME_MAX + 1];
};

struct script_seen {
        pid_t pid;
        uint64_t at_us;
        char path[PATH_MAX];
};

/* What the daemon knows of the store without reading it (a start's first
 * reads are not held up by the store's, cold too after a drop_caches):
 * by name, whether it has a read set, and of which program. */
struct known {
        char name[NAME_MAX - 32];
        bool used, has_read_set, small;
        uint64_t dev, ino, size, mtime_ns;
        uint64_t warm_until;        /* found warm at its first start: not recorded again before (unix) */
};

/* A program started lately, as the daemon keeps it between its starts:
 * its next start is decided and its replay begun without reading the
 * store (on a rotational disk, the store's reads are seeks the start
 * waits behind) */
struct cached {
        char name[NAME_MAX - 32];
        struct run_loop *loop;      /* its history as noted (NULL: the slot is free) */
        uint8_t *buf;               /* its read set's file (NULL: none) */
        size_t len;
        uint64_t used_us;
};

struct daemon {
        const struct daemon_options *o;
        struct daemon_stats st;
        pthread_mutex_t lock;       /* st, roots, n_recording, noted and what says (lock) */
        pid_t roots[AUTO_DEFAULT_MAX_STARTS * 4];   /* the starts followed (their first process) */
        unsigned n_roots, n_recording;
        uint64_t noted;
        atomic_bool stopping;
        struct recorder *spare;     /* opened ahead, following nobody yet (lock) */
        struct known *known;        /* open addressing, n_known_cap slots (lock) */
        struct cached cache[CACHE_SLOTS];   /* (lock) */
        size_t cache_bytes;
        uid_t dirty[64];            /* users whose own status is to be written again (lock) */
        size_t n_dirty;
        uint64_t users_written_us;
        bool users_writing;         /* a thread writes them (lock) */
        size_t n_known, n_known_cap;
        atomic_bool known_full;     /* no slot for a new one: made again */
        bool spare_opening;         /* a thread opens one (lock) */
        uint64_t spare_next_us;     /* not before (the spare's thread alone) */
        dev_t self_dev;
        ino_t self_ino;
        struct key_ns host_ns;      /* the host's names' mount namespace */
        struct pending pending[MAX_PENDING];  /* interpreters waiting for their exec to be done */
        size_t n_pending;
        struct script_seen scripts[64];       /* scripts whose program is still to come */
        size_t n_scripts;
        struct loader_seen loaders[64];       /* the loaders the last execs' programs name, to come */
        size_t loaders_next;
        struct daemon_stats st_main;          /* the main thread's counts (no lock) */
};

struct start {
        struct daemon *d;
        struct recorder *rec;       /* recording from its exec on (the program is new or changed) */
        uint64_t rec_at_us;         /* when its recording began */
        uint64_t rchar_at_rec;      /* what it had read through read calls by then */
        struct start_key k;
        pid_t pid;
        int pidfd;
        uint64_t at_us;
        int64_t exe_cached;         /* the program's pages cached at its exec (-errno: unknown) */
        uint64_t io_read;           /* what it read from storage, at the last sample */
        uint64_t io_rchar;          /* what it read through read calls, cached or not */
        unsigned io_samples;
        /* what its first process mapped (the program, its loader, its
         * libraries), looked at while it is recorded: their first reads go
         * by before a recorder can follow it */
        char *early[EARLY_MAX];
        size_t n_early;
};

static void early_look(struct start *s);

_printf_(2, 3) static void say(struct daemon *d, const char *fmt, ...)
{
        char line[PATH_MAX * 2 + 256];
        va_list ap;

        if (!d->o->say)
                return;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        d->o->say(d->o->say_userdata, line);
}

void daemon_options_init(struct daemon_options *o)
{
        *o = (struct daemon_options){
                .store = AUTO_STORE_DIR,
                .window_ms = AUTO_DEFAULT_WINDOW_MS,
                .min_bytes = AUTO_DEFAULT_MIN_BYTES,
                .max_keys = AUTO_DEFAULT_MAX_KEYS,
                .max_store_bytes = AUTO_DEFAULT_MAX_STORE_BYTES,
                .max_starts = AUTO_DEFAULT_MAX_STARTS,
                .max_recordings = AUTO_DEFAULT_MAX_RECORDINGS,
        };
}

int daemon_options_load(struct daemon_options *o, const char *path, char **ret_text, unsigned *ret_line)
{
        char *text = NULL, *line, *save = NULL;
        unsigned n = 0;
        int r;

        *ret_text = NULL;
        *ret_line = 0;
        r = read_small_file(path, &text, 1 << 20);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        *ret_text = text;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *word, *value;
                uint64_t u;

                n++;
                line += strspn(line, " \t");
                if (!*line || *line == '#')
                        continue;
                word = line;
                value = word + strcspn(word, " \t");
                if (*value)
                        *value++ = 0;
                value += strspn(value, " \t");
                value[strcspn(value, " \t")] = 0;
                *ret_line = n;
                if (!*value)
                        return -EINVAL;
                if (strcmp(word, "only") == 0 && value[0] == '/' && o->n_only < AUTO_MAX_RULES)
                        o->only[o->n_only++] = value;
                else if (strcmp(word, "never") == 0 && o->n_never < AUTO_MAX_RULES)
                        o->never[o->n_never++] = value;
                else if (strcmp(word, "never-uid") == 0 && parse_u64(value, &u) == 0 && u < UINT32_MAX &&
                         o->n_never_uid < AUTO_MAX_RULES)
                        o->never_uid[o->n_never_uid++] = (uint32_t)u;
                else if (strcmp(word, "window-ms") == 0 && parse_u64(value, &u) == 0 && u > 0 && u <= 600000)
                        o->window_ms = u;
                else if (strcmp(word, "min-bytes") == 0 && parse_size(value, &u) == 0)
                        o->min_bytes = u;
                else if (strcmp(word, "max-programs") == 0 && parse_u64(value, &u) == 0 && u > 0 && u <= 1000000)
                        o->max_keys = u;
                else if (strcmp(word, "max-store") == 0 && parse_size(value, &u) == 0 && u > 0)
                        o->max_store_bytes = u;
                else
                        return -EINVAL;
        }
        *ret_line = 0;
        return 0;
}

/* ---- which starts are learned ------------------------------------------- */

static bool below(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);

        if (n && prefix[n - 1] == '/')
                n--;
        return strncmp(path, prefix, n) == 0 && (path[n] == '/' || path[n] == 0);
}

static bool matches(const char *path, const char *rule)
{
        const char *b = strrchr(path, '/');

        if (rule[0] == '/')
                return below(path, rule);
        return b && strcmp(b + 1, rule) == 0;
}

/* Why k is never learned, or NULL */
static const char *excluded(const struct daemon *d, const struct start_key *k)
{
        const struct daemon_options *o = d->o;
        const char *what[2] = { k->exe, k->script[0] == '/' ? k->script : NULL };
        bool inside = o->n_only == 0;

        if (k->dev == d->self_dev && k->ino == d->self_ino)
                return "readset itself";
        if (strchr(k->exe, '\n') || strchr(k->script, '\n'))
                return "a newline in its name";
        for (size_t i = 0; i < ARRAY_SIZE(never_names); i++)
                for (size_t j = 0; j < 2; j++)
                        if (what[j] && matches(what[j], never_names[i]))
                                return "a package manager";     /* (dnf, yum: python3 scripts) */
        for (size_t i = 0; i < 2; i++)
                for (size_t j = 0; what[i] && j < ARRAY_SIZE(never_prefixes); j++)
                        if (strncmp(what[i], never_prefixes[j], strlen(never_prefixes[j])) == 0)
                                return "below /proc, /sys, /dev or /run";
        for (size_t i = 0; i < o->n_never; i++)
                for (size_t j = 0; j < 2; j++)
                        if (what[j] && matches(what[j], o->never[i]))
                                return "named by a never rule";
        for (size_t i = 0; i < o->n_never_uid; i++)
                if (k->uid == o->never_uid[i])
                        return "its user opted out";
        for (size_t i = 0; i < o->n_only && !inside; i++)
                for (size_t j = 0; j < 2; j++)
                        inside = inside || (what[j] && below(what[j], o->only[i]));
        return inside ? NULL : "not below an only rule";
}

/* pid's parent and whether pid is readset (its comm) */
static pid_t parent_of(pid_t pid, bool *ret_readset)
{
        struct proc_stat st;

        *ret_readset = false;
        if (proc_stat(pid, &st) < 0)
                return -1;
        *ret_readset = strcmp(st.comm, "readset") == 0;
        return st.ppid;
}

/* Is pid part of a start followed already, or of something readset runs
 * (run, the boot, the daemon's own)?  Its ancestors read first, the roots
 * then compared under the lock (the /proc reads are not made under it). */
static bool nested(struct daemon *d, pid_t pid)
{
        pid_t line[MAX_DEPTH];
        unsigned n = 0;
        bool found = false;

        for (pid_t p = pid; p > 1 && n < MAX_DEPTH;) {
                bool is_readset;

                line[n++] = p;
                p = parent_of(p, &is_readset);
                if (is_readset && n > 1)
                        return true;
        }
        pthread_mutex_lock(&d->lock);
        for (unsigned k = 0; k < n && !found; k++)
                for (unsigned i = 0; i < d->n_roots && !found; i++)
                        found = d->roots[i] == line[k];
        pthread_mutex_unlock(&d->lock);
        return found;
}

static void roots_remove(struct daemon *d, pid_t pid)
{
        for (unsigned i = 0; i < d->n_roots; i++)
                if (d->roots[i] == pid) {
                        d->roots[i] = d->roots[--d->n_roots];
                        return;
                }
}

/* ---- the store as the daemon knows it ---------------------------------- */

/* name's slot, or the free one it would take (NULL: full) (lock held) */
static struct known *known_slot(struct daemon *d, const char *name)
{
        size_t i;

        if (!d->n_known_cap)
                return NULL;
        i = key_hash(KEY_HASH_SEED, name) % d->n_known_cap;
        for (size_t n = 0; n < d->n_known_cap; n++, i = (i + 1) % d->n_known_cap)
                if (!d->known[i].used || strcmp(d->known[i].name, name) == 0)
                        return &d->known[i];
        return NULL;
}

/* (lock held) */
static void known_set(struct daemon *d, const char *name, const struct program_info *p, bool has_read_set)
{
        struct known *k = known_slot(d, name);

        if (!k || (!k->used && d->n_known + 1 > d->n_known_cap / 2)) {
                /* full of programs the store has dropped since: made again
                 * from the store (the main thread, soon) */
                d->known_full = true;
                return;
        }
        if (!k->used)
                d->n_known++;
        *k = (struct known){ .used = true, .has_read_set = has_read_set, .small = p->small,
                             .dev = p->dev, .ino = p->ino, .size = p->size, .mtime_ns = p->mtime_ns };
        snprintf(k->name, sizeof(k->name), "%s", name);
}

static int known_load_one(void *userdata, const char *name)
{
        struct daemon *d = userdata;
        struct program_info p;
        char file[PATH_MAX];

        if (programs_info_load(d->o->store, name, &p) == 0 &&
            programs_file(d->o->store, name, "readset", file, sizeof(file)) == 0)
                known_set(d, name, &p, access(file, F_OK) == 0);
        return 0;
}

static int known_open(struct daemon *d)
{
        d->n_known_cap = d->o->max_keys * 2 + 64;
        d->known = calloc(d->n_known_cap, sizeof(*d->known));
        if (!d->known)
                return -ENOMEM;
        return programs_each(d->o->store, known_load_one, d);
}

/* The table made again from the store, once full (of programs the store
 * dropped, and of those found warm): the main thread, between events */
static void known_rebuild(struct daemon *d)
{
        pthread_mutex_lock(&d->lock);
        if (d->known_full) {
                memset(d->known, 0, d->n_known_cap * sizeof(*d->known));
                d->n_known = 0;
                d->known_full = false;
                (void)programs_each(d->o->store, known_load_one, d);
        }
        pthread_mutex_unlock(&d->lock);
}

/* k's program was warm at its first start (lock held) */
static void known_warm(struct daemon *d, const struct start_key *k)
{
        struct known *e = known_slot(d, k->name);

        if (!e || (!e->used && d->n_known + 1 > d->n_known_cap / 2)) {
                d->known_full = true;
                return;
        }
        if (!e->used) {
                d->n_known++;
                *e = (struct known){ .used = true };
                snprintf(e->name, sizeof(e->name), "%s", k->name);
        }
        e->dev = k->dev;
        e->ino = k->ino;
        e->size = k->size;
        e->mtime_ns = k->mtime_ns;
        e->warm_until = (uint64_t)time(NULL) + WARM_AGAIN_S;
}

/* Does a start of k record from its exec on: its program has no read set
 * yet, or changed since? */
static bool known_new(struct daemon *d, const struct start_key *k, bool *ret_small, bool *ret_warm_lately)
{
        struct known *e;
        bool fresh, same;

        pthread_mutex_lock(&d->lock);
        e = known_slot(d, k->name);
        same = e && e->used && e->dev == k->dev && e->ino == k->ino && e->size == k->size &&
               e->mtime_ns == k->mtime_ns;
        fresh = !same || !e->has_read_set;
        *ret_small = same && e->small && !fresh;
        *ret_warm_lately = same && !e->has_read_set && e->warm_until > (uint64_t)time(NULL);
        pthread_mutex_unlock(&d->lock);
        return fresh;
}

/* ---- one start, followed in a thread of its own ------------------------- */

/* Was a start warm: what it read from storage itself (sampled while it
 * ran, its reaped children's with it) under 30% of what its read set
 * holds (a plain start; a replayed one whose replay also found most of it
 * cached)?  Its program's pages cached at the exec would say nothing of
 * a small program (the exec's first read brings it in whole) nor of an
 * interpreter's script; asking the read set's files would open them,
 * reading inodes and directories from the device the start is waiting for
 * (measured: 2.0 s against 1.7 s for python3 on the emulated disk). */
static bool plain_was_warm(const struct start *s, const struct readset *rs)
{
        struct readset_totals t;

        if (s->io_samples == 0)
                return false;   /* too short to tell: judged */
        readset_totals(rs, &t);
        return (double)s->io_read < COLD_SHARE * (double)t.regular_bytes;
}

static bool start_ended(void *userdata)
{
        struct start *s = userdata;
        struct pollfd p = { .fd = s->pidfd, .events = POLLIN };

        return atomic_load(&s->d->stopping) || poll(&p, 1, 0) > 0;
}

/* How busy pid is: what it read (from storage, and through read calls)
 * and its CPU time, summed (its reaped children's in it); 0 once gone */
static uint64_t activity(pid_t pid, int64_t *ret_read_bytes, uint64_t *ret_rchar)
{
        char path[64], buf[1024], *p;
        const char *end;
        _cleanup_close_ int fd = -1;
        struct proc_stat ps;
        uint64_t sum = 0, v;
        ssize_t n;

        *ret_read_bytes = -1;
        snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
                buf[n] = 0;
                if ((p = strstr(buf, "\nread_bytes: ")) && parse_u64_prefix(p + 13, &v, &end) == 0) {
                        *ret_read_bytes = (int64_t)v;
                        sum += v;
                }
                if (strncmp(buf, "rchar: ", 7) == 0 && parse_u64_prefix(buf + 7, &v, &end) == 0) {
                        *ret_rchar = MAX(*ret_rchar, v);
                        sum += v;
                }
        }
        if (proc_stat(pid, &ps) == 0)
                sum += ps.cpu_ticks;
        return sum;
}

/* Until the start's first process ends, or its launch does (its reads and
 * its CPU quiet for QUIET_MS: a program that keeps running), or its window
 * or the daemon: *ret_exited whether it ended; its end (now_us(), or the
 * last time it was busy), 0 when it never was */
static uint64_t wait_end(struct start *s, bool recording, bool sampled, bool *ret_exited)
{
        /* (a start judged warm or cold is sampled often: what its first
         * process read, its children's once it reaped them, is known to the
         * daemon only while it is there, and its parent may reap it the
         * moment it ends) */
        int every_ms = sampled ? 5 : recording ? 20 : 50;
        uint64_t until = s->at_us + s->d->o->window_ms * 1000, busy_at = s->at_us, last = 0;

        *ret_exited = false;
        for (;;) {
                struct pollfd p = { .fd = s->pidfd, .events = POLLIN };
                uint64_t now = now_us(), act;
                int64_t io;
                int r;

                if (recording && s->n_early < EARLY_MAX)
                        early_look(s);
                act = activity(s->pid, &io, &s->io_rchar);
                if (io >= 0) {
                        s->io_read = MAX(s->io_read, (uint64_t)io);
                        s->io_samples++;
                }
                if (act != last) {
                        last = act;
                        busy_at = now;
                }
                if (atomic_load(&s->d->stopping))
                        return 0;
                if (now >= until || now - busy_at >= QUIET_MS * 1000)
                        return busy_at > s->at_us ? busy_at : 0;
                r = poll(&p, 1, (int)MIN((until - now) / 1000 + 1, (uint64_t)every_ms));
                if (r > 0) {
                        /* (its zombie still tells what it read, reaped children's too) */
                        (void)activity(s->pid, &io, &s->io_rchar);
                        if (io >= 0)
                                s->io_read = MAX(s->io_read, (uint64_t)io);
                        *ret_exited = true;
                        return now_us();
                }
        }
}

static void recorder_options_for(struct recorder_options *ro, pid_t pid)
{
        *ro = (struct recorder_options){
                .pid = pid, .buffer_kb = RECORDER_DEFAULT_BUFFER_KB, .lookups = true,
                .max_walk = RECORDER_DEFAULT_MAX_WALK, .max_events = MAX_EVENTS,
        };
}

/* A recorder opened ahead: setting one up takes tens of milliseconds
 * (measured 48 ms here), in which a start has done much of its reading */
static void *spare_thread(void *arg)
{
        struct daemon *d = arg;
        struct recorder_options ro;
        struct recorder *rec = NULL;
        const char *what = NULL;
        int r;

        /* (one at a time, SPARE_EVERY_MS apart at most: a storm of new
         * programs is learned a few a second, not at its pace) */
        for (uint64_t now = now_us(); now < d->spare_next_us && !atomic_load(&d->stopping); now = now_us())
                usleep((useconds_t)MIN(d->spare_next_us - now, 50000));
        recorder_options_for(&ro, RECORDER_FOLLOW_LATER);
        if (atomic_load(&d->stopping))
                rec = NULL;
        else if ((r = recorder_open(&ro, &rec, &what)) < 0) {
                say(d, "cannot open a recorder ahead: %s (%s)", strerror(-r), what ? what : "?");
                rec = NULL;
        }
        pthread_mutex_lock(&d->lock);
        d->spare_opening = false;
        d->spare_next_us = now_us() + SPARE_EVERY_MS * 1000;
        if (!atomic_load(&d->stopping) && !d->spare)
                d->spare = TAKE_PTR(rec);
        pthread_mutex_unlock(&d->lock);
        recorder_free(rec);
        return NULL;
}

/* (lock held) */
static void spare_ask(struct daemon *d)
{
        pthread_attr_t attr;
        pthread_t t;

        if (d->spare || d->spare_opening || atomic_load(&d->stopping))
                return;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        d->spare_opening = pthread_create(&t, &attr, spare_thread, d) == 0;
        pthread_attr_destroy(&attr);
}

static void early_add(struct start *s, const char *path)
{
        if (s->n_early >= EARLY_MAX || path[0] != '/' || strstr(path, " (deleted)"))
                return;
        for (size_t i = 0; i < s->n_early; i++)
                if (strcmp(s->early[i], path) == 0)
                        return;
        if ((s->early[s->n_early] = strdup(path)))
                s->n_early++;
}

/* The files the start's first process maps now */
static void early_look(struct start *s)
{
        char path[64], line[PATH_MAX + 256];
        _cleanup_fclose_ FILE *f = NULL;

        snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
        if (!(f = fopen(path, "re")))
                return;
        while (s->n_early < EARLY_MAX && fgets(line, sizeof(line), f)) {
                char *p = strchr(line, '/');

                if (!p)
                        continue;
                p[strcspn(p, "\n")] = 0;
                early_add(s, p);
        }
}

/* The early files' cached pages, before what the recording saw */
static void early_put(struct start *s, struct readset *cur)
{
        struct snapshot_options so = { .exact_paths = true };
        struct snapshot_result res;
        struct readset *snap = NULL;

        if (s->n_early && snapshot_take(s->early, s->n_early, &so, &snap, &res) >= 0 && snap)
                (void)readset_put_first(cur, snap);
        readset_free(snap);
}

static void record_end_slot(struct daemon *d)
{
        pthread_mutex_lock(&d->lock);
        d->n_recording--;
        pthread_mutex_unlock(&d->lock);
}

/* A recording of pid's tree from now on, in one of max_recordings slots
 * (NULL: none free, or it could not be had: said).  The recorder opened
 * ahead is taken, and another opened meanwhile; with spare_only, none is
 * opened here (a new program is learned at a later start). */
static struct recorder *record_begin(struct daemon *d, pid_t pid, const char *name, bool spare_only)
{
        struct recorder_options ro;
        struct recorder *rec;
        const char *what = NULL;
        bool slot;
        int r;

        pthread_mutex_lock(&d->lock);
        slot = d->n_recording < d->o->max_recordings && (d->spare || !spare_only);
        d->n_recording += slot;
        d->st.busy += !slot;
        rec = slot ? TAKE_PTR(d->spare) : NULL;
        spare_ask(d);
        pthread_mutex_unlock(&d->lock);
        if (!slot)
                return NULL;
        if (rec && recorder_follow(rec, pid) < 0) {
                recorder_free(rec);
                rec = NULL;
                if (spare_only) {
                        /* (not opened here: a new program waits for the next) */
                        record_end_slot(d);
                        return NULL;
                }
        }
        recorder_options_for(&ro, pid);
        if ((!rec && (r = recorder_open(&ro, &rec, &what)) < 0) || (r = recorder_start(rec)) < 0) {
                say(d, "cannot record %s: %s (%s)", name, strerror(-r), what ? what : "starting it");
                recorder_free(rec);
                pthread_mutex_lock(&d->lock);
                d->n_recording--;
                pthread_mutex_unlock(&d->lock);
                return NULL;
        }
        return rec;
}

/* The recording's end: kept as the program's read set where there was none
 * or it went stale.  Its bytes (0: not kept or none). */
/* Was a first start warm: of what its recording saw it access, it had to
 * bring less than COLD_SHARE into the cache itself (its recording's misses,
 * or, for what it read before the recording followed it, what it read
 * from storage: /proc/PID/io, sampled) */
static bool recorded_warm(const struct start *s, const struct readset *rs)
{
        uint64_t accessed = 0, filled = 0;

        for (size_t i = 0; i < rs->n_files; i++)
                for (size_t j = 0; j < rs->files[i].n_ranges; j++) {
                        const struct rs_range *r = &rs->files[i].ranges[j];
                        accessed += r->flags & RS_RANGE_ACCESSED ? r->length : 0;
                        filled += r->flags & RS_RANGE_FILLED ? r->length : 0;
                }
        /* (a recording that came late saw little: what the start read
         * through read calls, cached or not, is the measure then) */
        if (accessed >= s->io_rchar / 2 && (double)filled >= COLD_SHARE * (double)accessed)
                return false;
        return (double)s->io_read < COLD_SHARE * (double)MAX(accessed, s->io_rchar);
}

static uint64_t record_finish(struct start *s, struct recorder *rec, const struct readset *old, const char *file,
                              bool ended, uint64_t end_us, bool first, uint64_t stale_percent, bool *ret_warm,
                              bool *ret_late)
{
        _cleanup_readset_ struct readset *cur = NULL;
        struct readset_usage u = { 0 };
        struct readset_totals t;
        char *argv[3] = { s->k.exe, s->k.script[0] ? s->k.script : NULL, NULL };
        int r;

        *ret_warm = *ret_late = false;
        r = recorder_stop(rec);
        if (r >= 0)
                r = recorder_finish(rec, &cur);
        recorder_free(rec);
        if (r < 0) {
                say(s->d, "cannot record %s: %s", s->k.name, strerror(-r));
                return 0;
        }
        /* a program's first start tells only by its own misses whether it
         * was cold: its file's pages cached at the exec say nothing of a
         * small one, which the exec's first read brings in whole */
        /* (one whose recording began when it had read half of what it read
         * -- through read calls, or, reading little so, in the second half
         * of its time -- saw too little to be judged, or kept: learned at
         * a later start) */
        if (first && (s->io_rchar >= LATE_MIN_RCHAR ? s->rchar_at_rec * 2 > s->io_rchar
                                                     : end_us > s->at_us &&
                                                       (s->rec_at_us - s->at_us) * 2 > end_us - s->at_us)) {
                *ret_late = true;
                return 0;
        }
        if (first && recorded_warm(s, cur)) {
                *ret_warm = true;
                return 0;
        }
        early_put(s, cur);
        if (old && readset_compare(old, cur, &u) < 0)
                return 0;
        /* a start still running at its window's end is what its window
         * read: its launch (not cut short) */
        if (store_judge(old != NULL, &u, stale_percent, !ended && atomic_load(&s->d->stopping)) != STORE_REPLACE)
                return 0;
        if ((r = readset_set_command(cur, argv)) < 0 || (r = store_keep(file, cur)) < 0) {
                say(s->d, "cannot save %s: %s", file, strerror(-r));
                return 0;
        }
        readset_totals(cur, &t);
        return t.regular_bytes ? t.regular_bytes : 1;
}

static struct replay_session *replay_begin(struct start *s, const struct readset *rs)
{
        struct replay_session_options ro;
        struct replay_session *rp = NULL;

        replay_session_options_init(&ro);
        ro.follow_pid = s->pid;
        ro.wake_fd = s->pidfd;
        if (replay_session_new(&ro, rs, &rp) < 0)
                return NULL;
        /* Replayed here, in this start's thread, not in a process of its
         * own: a process forked beside the daemon's other threads may find
         * a lock one of them held (the allocator's, under ASan) taken for
         * good, and wait on it forever, holding the guardians' pipes open.
         * So a read that does not return (a share whose server is gone)
         * holds this thread, and the lookups on a share are warmed at once,
         * not paced.  Niceness as run's replay has it (the start wins the
         * CPU): this thread's, which the engine's threads inherit. */
        (void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
        return rp;
}

/* ---- programs kept in memory between their starts --------------------- */

static void cached_clear(struct daemon *d, struct cached *c)
{
        d->cache_bytes -= c->len;
        free(c->loop);
        free(c->buf);
        *c = (struct cached){ .loop = NULL };
}

/* name's history and read set, moved out of the cache to the caller
 * (false: not there) */
static bool cache_take(struct daemon *d, const char *name, struct run_loop **ret_loop, uint8_t **ret_buf,
                       size_t *ret_len)
{
        bool found = false;

        pthread_mutex_lock(&d->lock);
        for (size_t i = 0; i < CACHE_SLOTS && !found; i++) {
                struct cached *c = &d->cache[i];

                if (!c->loop || strcmp(c->name, name) != 0)
                        continue;
                *ret_loop = TAKE_PTR(c->loop);
                *ret_buf = TAKE_PTR(c->buf);
                *ret_len = c->len;
                cached_clear(d, c);
                found = true;
        }
        pthread_mutex_unlock(&d->lock);
        return found;
}

/* ... and moved back in once noted (the least recently used go, past
 * CACHE_SLOTS or CACHE_BYTES); what does not fit is freed */
static void cache_put(struct daemon *d, const char *name, struct run_loop *loop, uint8_t *buf, size_t len)
{
        struct cached *slot = NULL;

        if (len > CACHE_BYTES / 8) {
                free(buf);
                buf = NULL;
                len = 0;
        }
        pthread_mutex_lock(&d->lock);
        for (size_t i = 0; i < CACHE_SLOTS; i++)
                if (d->cache[i].loop && strcmp(d->cache[i].name, name) == 0)
                        cached_clear(d, &d->cache[i]);      /* (a start of it beside this one put it) */
        for (;;) {
                struct cached *lru = NULL;

                slot = NULL;
                for (size_t i = 0; i < CACHE_SLOTS; i++) {
                        if (!d->cache[i].loop)
                                slot = slot ? slot : &d->cache[i];
                        else if (!lru || d->cache[i].used_us < lru->used_us)
                                lru = &d->cache[i];
                }
                if (slot && d->cache_bytes + len <= CACHE_BYTES)
                        break;
                if (!lru)
                        break;
                cached_clear(d, lru);
        }
        if (slot) {
                *slot = (struct cached){ .loop = loop, .buf = buf, .len = len, .used_us = now_us() };
                snprintf(slot->name, sizeof(slot->name), "%s", name);
                d->cache_bytes += len;
                loop = NULL;
                buf = NULL;
        }
        pthread_mutex_unlock(&d->lock);
        free(loop);
        free(buf);
}

/* Files of the store removed by another (readset auto forget) or by the
 * store's bound: the program is forgotten here too, so that its next
 * start is learned anew instead of replaying what the daemon kept */
static void store_changed(struct daemon *d, int fd)
{
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const void *)p;
                        char name[NAME_MAX + 1];
                        size_t len;

                        p += sizeof(*ev) + ev->len;
                        if (!ev->len || !(ev->mask & (IN_DELETE | IN_MOVED_FROM)))
                                continue;
                        len = strlen(ev->name);
                        if (len <= 5 || strcmp(ev->name + len - 5, ".info") != 0)
                                continue;
                        snprintf(name, sizeof(name), "%.*s", (int)(len - 5), ev->name);
                        pthread_mutex_lock(&d->lock);
                        for (size_t i = 0; i < CACHE_SLOTS; i++)
                                if (d->cache[i].loop && strcmp(d->cache[i].name, name) == 0)
                                        cached_clear(d, &d->cache[i]);
                        struct known *k = known_slot(d, name);
                        if (k && k->used)
                                k->has_read_set = false;
                        pthread_mutex_unlock(&d->lock);
                }
}

static void cache_free(struct daemon *d)
{
        for (size_t i = 0; i < CACHE_SLOTS; i++)
                if (d->cache[i].loop)
                        cached_clear(d, &d->cache[i]);
}

/* What the loop makes of this start: l decided (kept from the program's
 * last start, else its history read), *ret_buf its read set's file as
 * read (kept, else read; NULL: none), *ret_rs that decoded (NULL: none,
 * or unusable), record/replay what it does */
static void decide(struct start *s, struct run_loop **ret_l, uint8_t **ret_buf, size_t *ret_len,
                   struct readset **ret_rs, bool *ret_record, bool *ret_replay, bool *ret_replace)
{
        struct daemon *d = s->d;
        char file[PATH_MAX], why[256] = "";
        const char *decoded = NULL;
        bool off;
        int r = 0;

        *ret_rs = NULL;
        *ret_buf = NULL;
        *ret_len = 0;
        *ret_l = NULL;
        *ret_record = *ret_replay = *ret_replace = false;
        if (programs_file(d->o->store, s->k.name, "readset", file, sizeof(file)) < 0)
                return;
        if (!cache_take(d, s->k.name, ret_l, ret_buf, ret_len)) {
                if (!(*ret_l = calloc(1, sizeof(**ret_l))))
                        return;
                if (access(file, F_OK) == 0)
                        r = format_load(file, ret_buf, ret_len, why, sizeof(why));
                (void)run_loop_decide(*ret_l, file, *ret_buf != NULL, &off);
        } else {
                /* (a read set too big to be kept in memory is read again) */
                if (!*ret_buf && access(file, F_OK) == 0)
                        r = format_load(file, ret_buf, ret_len, why, sizeof(why));
                run_loop_decide_again(*ret_l, *ret_buf != NULL, &off);
        }
        (*ret_l)->t0 = s->at_us;
        run_loop_what(*ret_l, false, ret_record, ret_replay, ret_replace);
        if (off)
                say(d, "%s: %s", s->k.name, (*ret_l)->d.why);
        if (*ret_buf && (r = format_decode(*ret_buf, *ret_len, ret_rs, &decoded)) < 0)
                snprintf(why, sizeof(why), "%s", decoded ? decoded : strerror(-r));
        if (r < 0)
                say(d, "%s: its read set cannot be used (%s): recorded anew", s->k.name, why);
        if (s->rec || !*ret_rs) {
                /* new, changed (recording since its exec), or unusable */
                run_loop_record_instead(*ret_l);
                *ret_record = true;
                *ret_replay = false;
        }
}

static void note_info(struct start *s, uint64_t kept)
{
        struct daemon *d = s->d;
        struct program_info info;
        bool have = programs_info_load(d->o->store, s->k.name, &info) == 0;
        int r;

        if (!have || kept) {
                snprintf(info.exe, sizeof(info.exe), "%s", s->k.exe);
                snprintf(info.script, sizeof(info.script), "%s", s->k.script);
                info.uid = s->k.uid;
                info.dev = s->k.dev;
                info.ino = s->k.ino;
                info.size = s->k.size;
                info.mtime_ns = s->k.mtime_ns;
        }
        if (kept) {
                info.read_set_bytes = kept;
                info.small = kept < d->o->min_bytes;
                if (info.small)
                        say(d, "%s: its read set (%" PRIu64 " bytes) is too small to be worth replaying: off",
                            s->k.name, kept);
        }
        info.last_unix = (uint64_t)time(NULL);
        if ((r = programs_info_save(d->o->store, s->k.name, &info)) < 0)
                say(d, "cannot write %s's info: %s", s->k.name, strerror(-r));
        if (kept) {
                pthread_mutex_lock(&d->lock);
                known_set(d, s->k.name, &info, true);
                pthread_mutex_unlock(&d->lock);
        }
}

/* (lock held) */
static void user_dirty(struct daemon *d, uid_t uid)
{
        for (size_t i = 0; i < d->n_dirty; i++)
                if (d->dirty[i] == uid)
                        return;
        if (d->n_dirty < ARRAY_SIZE(d->dirty) && uid != (uid_t)-1)
                d->dirty[d->n_dirty++] = uid;
}

static void *users_thread(void *arg)
{
        struct daemon *d = arg;
        uid_t uids[ARRAY_SIZE(d->dirty)];
        size_t n;
        int r;

        pthread_mutex_lock(&d->lock);
        n = d->n_dirty;
        memcpy(uids, d->dirty, n * sizeof(*uids));
        d->n_dirty = 0;
        pthread_mutex_unlock(&d->lock);
        for (size_t i = 0; i < n; i++)
                if ((r = programs_users_write(d->o->store, uids[i])) < 0)
                        say(d, "cannot write user %u's status: %s", (unsigned)uids[i], strerror(-r));
        pthread_mutex_lock(&d->lock);
        d->users_writing = false;
        pthread_mutex_unlock(&d->lock);
        return NULL;
}

static bool users_busy(struct daemon *d)
{
        bool busy;

        pthread_mutex_lock(&d->lock);
        busy = d->users_writing;
        pthread_mutex_unlock(&d->lock);
        return busy;
}

/* Each user's own status (the store is root's alone), written again every
 * USERS_EVERY_MS at most, and at the end, in a thread of its own (it reads
 * the whole store: the exec events are not left waiting) */
static void users_write(struct daemon *d, bool now)
{
        pthread_attr_t attr;
        pthread_t t;
        bool go;

        if (!now && now_us() - d->users_written_us < USERS_EVERY_MS * 1000)
                return;
        pthread_mutex_lock(&d->lock);
        go = d->n_dirty && !d->users_writing;
        d->users_writing = go;
        pthread_mutex_unlock(&d->lock);
        if (!go)
                return;
        d->users_written_us = now_us();
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, users_thread, d) != 0) {
                pthread_mutex_lock(&d->lock);
                d->users_writing = false;
                pthread_mutex_unlock(&d->lock);
        }
        pthread_attr_destroy(&attr);
}

static void follow(struct start *s)
{
        struct daemon *d = s->d;
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_(replay_session_freep) struct replay_session *rp = NULL;
        struct recorder *rec = TAKE_PTR(s->rec);
        struct run_loop *l = NULL;
        struct start_replayed x;
        uint8_t *buf = NULL;
        size_t len = 0;
        char file[PATH_MAX];
        bool record, replay, replace, exited, baseline, cached_at_replay = false, warm = false, late = false;
        bool fresh = rec != NULL;
        uint64_t end_us, kept = 0;
        int r;

        s->rec = rec;           /* (decide() asks) */
        decide(s, &l, &buf, &len, &rs, &record, &replay, &replace);
        s->rec = NULL;
        if (!l || (record && !rec && !(rec = record_begin(d, s->pid, s->k.name, false)))) {
                /* learned at a later start */
                if (l)
                        cache_put(d, s->k.name, l, buf, len);
                else
                        free(buf);
                if (rec) {
                        recorder_free(rec);
                        record_end_slot(d);
                }
                return;
        }
        if (rec && !s->rec_at_us) {
                int64_t io;
                s->rec_at_us = now_us();
                (void)activity(s->pid, &io, &s->rchar_at_rec);
        }
        if (replay && rs && (rp = replay_begin(s, rs)))
                say(d, "%s: replay from %.2f ms after its exec", s->k.name, (now_us() - s->at_us) / 1e3);
        if (rp) {
                const struct replay_result *res;

                r = replay_session_wait(rp, s->at_us + d->o->window_ms * 1000, start_ended, s);
                res = replay_session_results(rp);
                /* (warm only if the start did not read it itself either:
                 * on a fast disk a cold start is ahead of its replay, which
                 * then finds cached what the start read) */
                cached_at_replay = r >= 0 && res->planned_ok && res->planned &&
                                   (double)res->st.bytes_cached >= WARM_SHARE * (double)res->planned;
                start_replayed_of(res, &x);
        }
        if (rec) {
                /* (the program and what the process maps: files it opened
                 * itself, not a script named in its arguments) */
                early_add(s, s->k.exe);
                if (s->k.script_opened)
                        early_add(s, s->k.script);
                early_look(s);
        }
        /* a plain start (the loop's baseline) is judged warm or cold; one
         * the loop has off is only timed, at little cost */
        baseline = !rec && !rp && rs && l->d.mode == START_PLAIN;
        end_us = wait_end(s, rec != NULL, baseline || rp, &exited);
        if (baseline || (rp && cached_at_replay))
                warm = plain_was_warm(s, rs);
        if (rec && programs_file(d->o->store, s->k.name, "readset", file, sizeof(file)) == 0) {
                bool was_warm;
                kept = record_finish(s, rec, fresh ? NULL : rs, file, exited || end_us, end_us, fresh && !rs,
                                     replace ? 101 : STALE_PERCENT, &was_warm, &late);
                if (was_warm) {
                        warm = true;
                        pthread_mutex_lock(&d->lock);
                        known_warm(d, &s->k);
                        pthread_mutex_unlock(&d->lock);
                }
        } else if (rec)
                recorder_free(rec);
        if (rec)
                record_end_slot(d);
        pthread_mutex_lock(&d->lock);
        if (warm)
                d->st.warm++;
        else if (record)
                d->st.recorded++;
        else if (rp)
                d->st.replayed++;
        else
                d->st.plain++;
        pthread_mutex_unlock(&d->lock);
        if (late) {
                say(d, "%s: recorded too late to tell its start: learned at a later one", s->k.name);
                cache_put(d, s->k.name, l, buf, len);
                return;
        }
        /* a warm start says nothing of what replay is worth; one never
         * seen busy (gone at once) has no time to judge */
        if (!warm && end_us && (r = run_loop_note(l, (uint64_t)time(NULL), end_us, rp ? &x : NULL)) < 0)
                say(d, "cannot write %s: %s", l->path, strerror(-r));
        if (kept) {
                /* the read set kept now is the one its next start replays */
                free(TAKE_PTR(buf));
                len = 0;
                char why[256];
                if (format_load(file, &buf, &len, why, sizeof(why)) < 0)
                        buf = NULL;
        }
        cache_put(d, s->k.name, l, buf, len);
        if (warm && fresh && !rs) {
                say(d, "%s: warm at its first start: not learned", s->k.name);
                return;
        }
        note_info(s, kept);
        pthread_mutex_lock(&d->lock);
        user_dirty(d, s->k.uid);
        pthread_mutex_unlock(&d->lock);
        say(d, "%s: %s%s, %.3f s", s->k.name, warm ? "warm, " : "",
            record ? "recorded" : rp ? "replayed" : "plain", end_us ? (end_us - s->at_us) / 1e6 : 0);
        if (kept && (r = programs_bound(d->o->store, d->o->max_keys, d->o->max_store_bytes, s->k.name)) > 0) {
                pthread_mutex_lock(&d->lock);
                d->st.evicted += (uint64_t)r;
                pthread_mutex_unlock(&d->lock);
        }
}

static void *start_thread(void *arg)
{
        struct start *s = arg;
        struct daemon *d = s->d;

        follow(s);
        pthread_mutex_lock(&d->lock);
        roots_remove(d, s->pid);
        d->noted++;
        pthread_mutex_unlock(&d->lock);
        close(s->pidfd);
        for (size_t i = 0; i < s->n_early; i++)
                free(s->early[i]);
        free(s);
        return NULL;
}

/* A program not learned yet found cached at its exec, asked of the exec
 * event's descriptor (no I/O): a big program file (a small one is read
 * whole, read ahead, by the exec's first read before the daemon asks),
 * not an interpreter (its own file says nothing of its script's modules).
 * A big binary partly cached counts as cold, and is recorded: its
 * recording's misses tell (record_finish). */
static bool first_was_warm(const struct start_key *k, int64_t exe_cached)
{
        long page = sysconf(_SC_PAGESIZE);

        return exe_cached >= 0 && !k->script[0] && k->size >= BIG_PROGRAM &&
               (double)exe_cached * (double)page >= WARM_SHARE * (double)k->size;
}

/* A start keyed: learned or followed, or why not counted */
static void on_start(struct daemon *d, const struct start_key *k, pid_t pid, uint64_t at_us, int64_t exe_cached)
{
        struct start *s;
        pthread_attr_t attr;
        pthread_t t;
        const char *why;
        bool busy, fresh, small, warm_lately;

        d->st_main.starts++;
        if ((why = excluded(d, k))) {
                if (strcmp(why, "not below an only rule") != 0 && strcmp(why, "readset itself") != 0)
                        say(d, "not learned: %s%s%s: %s", k->exe, k->script[0] ? " " : "", k->script, why);
                d->st_main.excluded++;
                return;
        }
        if (nested(d, pid)) {
                d->st_main.nested++;
                return;
        }
        pthread_mutex_lock(&d->lock);
        busy = d->n_roots >= d->o->max_starts || d->n_roots >= ARRAY_SIZE(d->roots);
        if (busy)
                d->st_main.busy++;
        pthread_mutex_unlock(&d->lock);
        if (busy)
                return;
        fresh = known_new(d, k, &small, &warm_lately);
        if (small) {
                d->st_main.off++;
                return;
        }
        /* only a cold start is learned: a new program whose big file (and
         * script) the page cache holds already starts from memory, and one
         * found warm at its first start is not recorded again for a while */
        if (fresh && (warm_lately || first_was_warm(k, exe_cached))) {
                d->st_main.warm++;
                return;
        }
        s = calloc(1, sizeof(*s));
        if (!s)
                return;
        *s = (struct start){ .d = d, .k = *k, .pid = pid, .at_us = at_us, .exe_cached = exe_cached };
        s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (s->pidfd < 0) {
                d->st_main.gone++;
                free(s);
                return;
        }
        /* a new program is recorded from here, before its thread reads
         * anything of the store */
        if (fresh && !(s->rec = record_begin(d, pid, k->name, true))) {
                close(s->pidfd);
                free(s);
                return;
        }
        if (s->rec) {
                int64_t io;
                s->rec_at_us = now_us();
                (void)activity(pid, &io, &s->rchar_at_rec);
                say(d, "%s: recording from %.2f ms after its exec", k->name, (s->rec_at_us - at_us) / 1e3);
        }
        pthread_mutex_lock(&d->lock);
        d->roots[d->n_roots++] = pid;
        pthread_mutex_unlock(&d->lock);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, start_thread, s) != 0) {
                pthread_mutex_lock(&d->lock);
                roots_remove(d, pid);
                d->st_main.busy++;
                pthread_mutex_unlock(&d->lock);
                if (s->rec) {
                        recorder_free(s->rec);
                        record_end_slot(d);
                }
                close(s->pidfd);
                free(s);
        }
        pthread_attr_destroy(&attr);
}

/* ---- the exec events ----------------------------------------------------- */

/* One exec opens its script first (a "#!" line), then the program, then
 * the program's loader: only the program's is a start, keyed with the
 * script before it.  Keyed at the event where the program tells it all
 * (about 0.1 ms after the exec, where waiting for the exec to be done
 * measured 5 ms: the start's first reads, the loader's, go by meanwhile);
 * an interpreter run with its script in its arguments waits for those. */
static struct script_seen *script_of(struct daemon *d, pid_t pid)
{
        for (size_t i = 0; i < d->n_scripts; i++)
                if (d->scripts[i].pid == pid)
                        return &d->scripts[i];
        return NULL;
}

/* The loader an exec of pid opens next (the ELF program it named), now
 * expected */
static void loader_expect(struct daemon *d, pid_t pid, const struct exec_file *ef, uint64_t now)
{
        struct loader_seen *l = &d->loaders[d->loaders_next];

        if (!ef->loader[0])
                return;         /* static: none to come */
        snprintf(l->name, sizeof(l->name), "%s", ef->loader);
        l->pid = pid;
        l->at_us = now;
        d->loaders_next = (d->loaders_next + 1) % ARRAY_SIZE(d->loaders);
}

/* Is this event the loader of the exec pid did just now (not an exec of
 * another program: a launcher's, or `exec` in a script)?  Said once. */
static bool loader_of(struct daemon *d, pid_t pid, const struct exec_file *ef, uint64_t now)
{
        const char *base = strrchr(ef->path, '/');

        for (size_t i = 0; i < ARRAY_SIZE(d->loaders); i++) {
                struct loader_seen *l = &d->loaders[i];

                if (l->pid != pid || now - l->at_us >= PENDING_MS * 1000)
                        continue;
                if (!base || strcmp(base + 1, l->name) != 0)
                        return false;
                l->pid = 0;
                return true;
        }
        return false;
}

static bool pending_for(struct daemon *d, pid_t pid)
{
        for (size_t i = 0; i < d->n_pending; i++)
                if (d->pending[i].pid == pid)
                        return true;
        return false;
}

/* r: start_key_of_exec()'s */
static void keyed(struct daemon *d, int r, const struct start_key *k, pid_t pid, uint64_t at_us, int exe_fd)
{
        if (r == 0) {
                on_start(d, k, pid, at_us, residency_cached_pages(exe_fd));
        } else if (r == -EXDEV)
                d->st_main.other_ns++;
        else
                d->st_main.gone++;
}

static void on_exec(void *userdata, const struct exec_event *ev)
{
        struct daemon *d = userdata;
        struct script_seen *sc;
        struct exec_file ef;
        struct start_key k;
        int r;

        d->st_main.execs++;
        /* (the file's path, kind and loader asked once: this is done for
         * every exec on the machine) */
        if (key_exec_file(ev->fd, &ef) < 0 || ef.path[0] != '/') {
                d->st_main.gone++;
                close(ev->fd);
                return;
        }
        /* the loader of a program just exec'd (keyed, or waiting to be) */
        if (loader_of(d, ev->pid, &ef, ev->at_us)) {
                close(ev->fd);
                return;
        }
        sc = script_of(d, ev->pid);
        if (!ef.elf) {
                if (!sc && d->n_scripts < ARRAY_SIZE(d->scripts))
                        sc = &d->scripts[d->n_scripts++];
                if (sc) {
                        sc->pid = ev->pid;
                        sc->at_us = ev->at_us;
                        snprintf(sc->path, sizeof(sc->path), "%s", ef.path);
                }
                close(ev->fd);
                return;
        }
        loader_expect(d, ev->pid, &ef, ev->at_us);
        if (key_is_launcher(strrchr(ef.path, '/') + 1)) {
                /* env, nice ...: the program it runs next is the start */
                d->st_main.launchers++;
                if (sc)
                        *sc = d->scripts[--d->n_scripts];
                close(ev->fd);
                return;
        }
        if (pending_for(d, ev->pid)) {
                /* an exec while the last one is still waited for: that one failed */
                for (size_t i = 0; i < d->n_pending; i++)
                        if (d->pending[i].pid == ev->pid) {
                                close(d->pending[i].fd);
                                d->pending[i] = d->pending[--d->n_pending];
                                break;
                        }
        }
        r = start_key_of_exec(ev->pid, ev->fd, ef.path, sc && sc->path[0] ? sc->path : NULL, &d->host_ns, &k);
        if (sc)
                *sc = d->scripts[--d->n_scripts];
        if (r == -EAGAIN && d->n_pending < MAX_PENDING) {
                d->pending[d->n_pending++] = (struct pending){ .pid = ev->pid, .fd = ev->fd, .at_us = ev->at_us };
                return;
        }
        if (r == -EAGAIN)
                d->st_main.busy++;
        else
                keyed(d, r, &k, ev->pid, ev->at_us, ev->fd);
        close(ev->fd);
}

/* The interpreters waiting for their exec to be done keyed; the rest kept
 * PENDING_MS; the scripts whose program never came forgotten */
static void settle_pending(struct daemon *d)
{
        uint64_t now = now_us();

        for (size_t i = 0; i < d->n_pending;) {
                struct pending p = d->pending[i];
                struct start_key k;
                int r = start_key_of_exec(p.pid, p.fd, NULL, NULL, &d->host_ns, &k);

                if (r == -EAGAIN && now - p.at_us < PENDING_MS * 1000) {
                        i++;
                        continue;
                }
                d->pending[i] = d->pending[--d->n_pending];
                keyed(d, r == -EAGAIN ? -ESRCH : r, &k, p.pid, p.at_us, p.fd);
                close(p.fd);
        }
        for (size_t i = 0; i < d->n_scripts;)
                if (now - d->scripts[i].at_us >= PENDING_MS * 1000)
                        d->scripts[i] = d->scripts[--d->n_scripts];
                else
                        i++;
}

static bool should_stop(struct daemon *d)
{
        bool done;

        if (d->o->stop && *d->o->stop)
                return true;
        pthread_mutex_lock(&d->lock);
        done = d->o->stop_after && d->noted >= d->o->stop_after;
        pthread_mutex_unlock(&d->lock);
        return done;
}

static void merge_counts(struct daemon_stats *to, const struct daemon_stats *from)
{
        to->execs += from->execs;
        to->starts += from->starts;
        to->gone += from->gone;
        to->other_ns += from->other_ns;
        to->excluded += from->excluded;
        to->nested += from->nested;
        to->busy += from->busy;
        to->off += from->off;
        to->warm += from->warm;
        to->launchers += from->launchers;
}

int daemon_run(const struct daemon_options *o, struct daemon_stats *ret)
{
        struct daemon *d;
        struct execs *x = NULL;
        struct stat self;
        char why[256] = "";
        int mfd, ifd, r;

        memset(ret, 0, sizeof(*ret));
        if (geteuid() != 0)
                return -EPERM;
        if ((r = programs_prepare(o->store, why, sizeof(why))) < 0) {
                say(&(struct daemon){ .o = o }, "cannot use %s: %s", o->store, why[0] ? why : strerror(-r));
                return r;
        }
        if (stat("/proc/self/exe", &self) < 0)
                return -errno;
        if ((r = execs_open(&x)) < 0)
                return r;
        d = calloc(1, sizeof(*d));
        if (!d) {
                execs_close(x);
                return -ENOMEM;
        }
        d->o = o;
        d->self_dev = self.st_dev;
        d->self_ino = self.st_ino;
        if ((r = key_host_ns(&d->host_ns)) < 0) {
                execs_close(x);
                free(d);
                return r;
        }
        pthread_mutex_init(&d->lock, NULL);
        if ((r = known_open(d)) < 0) {
                execs_close(x);
                free(d->known);
                free(d);
                return r;
        }
        mfd = mounts_watch_open();
        ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ifd >= 0 && inotify_add_watch(ifd, o->store, IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR) < 0) {
                close(ifd);
                ifd = -1;
        }
        say(d, "watching execs on %u file systems; store %s", execs_marks(x), o->store);
        pthread_mutex_lock(&d->lock);
        spare_ask(d);
        pthread_mutex_unlock(&d->lock);
        while (!should_stop(d)) {
                struct pollfd p[3] = { { .fd = execs_fd(x), .events = POLLIN }, { .fd = mfd, .events = POLLPRI },
                                       { .fd = ifd, .events = POLLIN } };

                r = poll(p, 3, d->n_pending || d->n_scripts ? 1 : 200);
                if (r < 0 && errno != EINTR)
                        break;
                if (p[2].revents & POLLIN)
                        store_changed(d, ifd);
                if (mfd >= 0 && (p[1].revents & (POLLPRI | POLLERR)))
                        (void)execs_rescan(x);
                if (p[0].revents & POLLIN)
                        (void)execs_read(x, on_exec, d);
                settle_pending(d);
                users_write(d, false);
                if (d->known_full)
                        known_rebuild(d);
        }
        /* the starts followed let go: their recordings kept as far as they
         * went, their replays stopped; waited for however long they take
         * (each thread uses d and the options: a service manager that
         * finds it too long kills the daemon whole) */
        atomic_store(&d->stopping, true);
        for (;;) {
                bool idle;

                pthread_mutex_lock(&d->lock);
                idle = d->n_roots == 0 && !d->spare_opening && !d->users_writing;
                pthread_mutex_unlock(&d->lock);
                if (idle)
                        break;
                usleep(10000);
        }
        while (d->n_pending)
                close(d->pending[--d->n_pending].fd);
        users_write(d, true);
        while (users_busy(d))
                usleep(10000);
        recorder_free(TAKE_PTR(d->spare));
        cache_free(d);
        merge_counts(&d->st, &d->st_main);
        d->st.overflows = execs_overflows(x);
        *ret = d->st;
        execs_close(x);
        if (mfd >= 0)
                close(mfd);
        if (ifd >= 0)
                close(ifd);
        pthread_mutex_destroy(&d->lock);
        free(d->known);
        free(d);
        return 0;
}
