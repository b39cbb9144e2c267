/* SPDX-License-Identifier: MIT */
#include "daemon/programs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/run-loop.h"
#include "util/json.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

static const char *const suffixes[] = { "readset", "readset.history", "info" };

int programs_prepare(const char *store, char *why, size_t why_len)
{
        struct stat st;
        int r;

        if (mkdir(store, 0700) < 0 && errno != EEXIST) {
                if (errno != ENOENT)
                        return -errno;
                if ((r = make_dir_and_parent(store)) < 0)
                        return r;
                if (chmod(store, 0700) < 0)
                        return -errno;
        }
        if (lstat(store, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode)) {
                snprintf(why, why_len, "not a directory");
                return -ENOTDIR;
        }
        if (st.st_uid != 0 || (st.st_mode & 0077)) {
                snprintf(why, why_len, "not root's alone (owner %u, mode %04o): others could read or plant read sets",
                         (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
                return -EPERM;
        }
        return trust_check_dir(store, why, why_len);
}

int programs_file(const char *store, const char *name, const char *suffix, char *buf, size_t size)
{
        int n = snprintf(buf, size, "%s/%s.%s", store, name, suffix);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int programs_info_load(const char *store, const char *name, struct program_info *p)
{
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX];
        char *line, *save = NULL;
        int r;

        memset(p, 0, sizeof(*p));
        if ((r = programs_file(store, name, "info", path, sizeof(path))) < 0)
                return r;
        if ((r = read_small_file(path, &text, 3 * PATH_MAX)) < 0)
                return r;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *v = strchr(line, ' ');
                uint64_t u;

                if (!v)
                        continue;
                *v++ = 0;
                if (strcmp(line, "exe") == 0)
                        snprintf(p->exe, sizeof(p->exe), "%s", v);
                else if (strcmp(line, "script") == 0)
                        snprintf(p->script, sizeof(p->script), "%s", v);
                else if (strcmp(line, "identity") == 0) {
                        unsigned long long a, b, c, d;
                        if (sscanf(v, "%llu %llu %llu %llu", &a, &b, &c, &d) == 4) {
                                p->dev = a;
                                p->ino = b;
                                p->size = c;
                                p->mtime_ns = d;
                        }
                } else if (parse_u64(v, &u) < 0)
                        continue;
                else if (strcmp(line, "format") == 0) {
                        if (u > PROGRAMS_FORMAT)
                                return -EPROTONOSUPPORT;   /* a newer readset's: learned anew */
                } else if (strcmp(line, "uid") == 0)
                        p->uid = (uint32_t)u;
                else if (strcmp(line, "small") == 0)
                        p->small = u != 0;
                else if (strcmp(line, "bytes") == 0)
                        p->read_set_bytes = u;
                else if (strcmp(line, "last") == 0)
                        p->last_unix = u;
        }
        return p->exe[0] == '/' ? 0 : -EBADMSG;
}

static int put_text(FILE *f, void *userdata)
{
        return fputs(userdata, f) < 0 ? -EIO : 0;
}

int programs_info_save(const char *store, const char *name, const struct program_info *p)
{
        char path[PATH_MAX], text[3 * PATH_MAX + 256];
        int r;

        if ((r = programs_file(store, name, "info", path, sizeof(path))) < 0)
                return r;
        /* (names with a newline are not learned: daemon.c) */
        snprintf(text, sizeof(text),
                 "format %d\nexe %s\nscript %s\nuid %" PRIu32 "\nidentity %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                 "\nsmall %d\nbytes %" PRIu64 "\nlast %" PRIu64 "\n",
                 PROGRAMS_FORMAT, p->exe, p->script, p->uid, p->dev, p->ino, p->size, p->mtime_ns, p->small ? 1 : 0,
                 p->read_set_bytes, p->last_unix);
        return write_file_atomic(path, 0600, put_text, text);
}

bool programs_same_program(const struct program_info *p, const struct start_key *k)
{
        return p->dev == k->dev && p->ino == k->ino && p->size == k->size && p->mtime_ns == k->mtime_ns;
}

int programs_each(const char *store, int (*fn)(void *userdata, const char *name), void *userdata)
{
        DIR *d = opendir(store);
        struct dirent *de;
        int r = 0;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                char name[NAME_MAX + 1];

                if (n <= 5 || strcmp(de->d_name + n - 5, ".info") != 0 || de->d_name[0] == '.')
                        continue;
                memcpy(name, de->d_name, n - 5);
                name[n - 5] = 0;
                if ((r = fn(userdata, name)) < 0)
                        break;
        }
        closedir(d);
        return r < 0 ? r : 0;
}

static void remove_program(const char *store, const char *name)
{
        char path[PATH_MAX];

        for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
                if (programs_file(store, name, suffixes[i], path, sizeof(path)) == 0)
                        (void)unlink(path);
}

struct forget_ctx {
        const char *store, *what;
        int n;
};

static bool names(const char *path, const char *what)
{
        const char *b = strrchr(path, '/');

        return path[0] && (strcmp(path, what) == 0 || (!strchr(what, '/') && b && strcmp(b + 1, what) == 0));
}

static int forget_one(void *userdata, const char *name)
{
        struct forget_ctx *c = userdata;
        struct program_info p;

        if (programs_info_load(c->store, name, &p) < 0 && strcmp(name, c->what) != 0)
                return 0;
        if (strcmp(name, c->what) == 0 || names(p.exe, c->what) || names(p.script, c->what)) {
                remove_program(c->store, name);
                c->n++;
        }
        return 0;
}

int programs_forget(const char *store, const char *what)
{
        struct forget_ctx c = { store, what, 0 };
        int r = programs_each(store, forget_one, &c);

        return r < 0 ? r : c.n;
}

struct bound_entry {
        char name[NAME_MAX + 1];
        uint64_t last, bytes;
};

struct bound_ctx {
        const char *store;
        struct bound_entry *e;
        size_t n, cap;
        uint64_t bytes;
};

static int bound_one(void *userdata, const char *name)
{
        struct bound_ctx *c = userdata;
        struct program_info p;
        struct bound_entry *e;
        char path[PATH_MAX];
        struct stat st;

        if (grow_array(&c->e, &c->cap, c->n + 1, sizeof(*c->e)) < 0)
                return -ENOMEM;
        e = &c->e[c->n++];
        snprintf(e->name, sizeof(e->name), "%s", name);
        e->last = programs_info_load(c->store, name, &p) == 0 ? p.last_unix : 0;
        e->bytes = 0;
        for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
                if (programs_file(c->store, name, suffixes[i], path, sizeof(path)) == 0 && stat(path, &st) == 0)
                        e->bytes += (uint64_t)st.st_size;
        c->bytes += e->bytes;
        return 0;
}

static int by_last(const void *a, const void *b)
{
        const struct bound_entry *x = a, *y = b;
        return x->last < y->last ? -1 : x->last > y->last;
}

int programs_bound(const char *store, uint64_t max_keys, uint64_t max_bytes, const char *keep)
{
        struct bound_ctx c = { .store = store };
        int r, removed = 0;

        r = programs_each(store, bound_one, &c);
        if (r < 0) {
                free(c.e);
                return r;
        }
        qsort_safe(c.e, c.n, sizeof(*c.e), by_last);
        for (size_t i = 0; i < c.n && (c.n - (size_t)removed > max_keys || c.bytes > max_bytes); i++) {
                if (keep && strcmp(c.e[i].name, keep) == 0)
                        continue;
                remove_program(store, c.e[i].name);
                c.bytes -= c.e[i].bytes;
                removed++;
        }
        free(c.e);
        return removed;
}

int programs_summary(const char *store, const char *name, const struct program_info *p,
                     struct program_summary *s)
{
        char file[PATH_MAX];
        struct run_loop l;
        uint64_t plain[HISTORY_MAX], replay[HISTORY_MAX];
        size_t np = 0, nr = 0;
        bool off;
        int r;

        memset(s, 0, sizeof(*s));
        if ((r = programs_file(store, name, "readset", file, sizeof(file))) < 0)
                return r;
        r = run_loop_decide(&l, file, access(file, F_OK) == 0, &off);
        s->next = l.d;
        if (p->small) {
                s->next.mode = START_OFF;
                s->next.off = true;
                snprintf(s->next.why, sizeof(s->next.why), "its read set is too small to be worth replaying");
        }
        s->starts = (unsigned)l.h.n;
        for (size_t i = 0; i < l.h.n; i++) {
                const struct start_entry *e = &l.h.e[i];

                switch (e->mode) {
                case START_RECORD: s->recorded++; break;
                case START_REPLAY:
                case START_REPLAY_RECORD: s->replayed++; break;
                case START_OFF: s->off++; break;
                default: s->plain++; break;
                }
                if (!e->total_us)
                        continue;
                if (e->mode == START_REPLAY || e->mode == START_REPLAY_RECORD)
                        replay[nr++] = e->total_us;
                else if (e->mode == START_PLAIN || e->mode == START_OFF)
                        plain[np++] = e->total_us;
        }
        s->last_mode = l.h.n ? start_mode_name(l.h.e[l.h.n - 1].mode) : "none";
        if (l.h.n) {
                s->last_replayed_bytes = l.h.e[l.h.n - 1].replayed_bytes;
                s->last_s = (double)l.h.e[l.h.n - 1].total_us / 1e6;
        }
        s->replay_s = history_median_s(replay, nr);
        s->plain_s = history_median_s(plain, np);
        if (np && nr && s->plain_s > s->replay_s)
                s->saved_s = (s->plain_s - s->replay_s) * (double)s->replayed;
        return r < 0 ? r : 0;
}

/* ---- status ------------------------------------------------------------- */

struct status_ctx {
        const char *store;
        FILE *f;
        struct json *j;
        uid_t uid;
        unsigned n;
};

static int status_one(void *userdata, const char *name)
{
        struct status_ctx *c = userdata;
        struct program_info p;
        struct program_summary s;
        char exe[4 * PATH_MAX], script[4 * PATH_MAX];

        if (programs_info_load(c->store, name, &p) < 0 || (c->uid != PROGRAMS_ALL_USERS && p.uid != c->uid) ||
            programs_summary(c->store, name, &p, &s) < 0)
                return 0;
        c->n++;
        if (c->j) {
                json_object_open(c->j, NULL);
                json_string(c->j, "name", name);
                json_string(c->j, "program", p.exe);
                json_string(c->j, "script", p.script);
                json_u64(c->j, "uid", p.uid);
                json_u64(c->j, "starts", s.starts);
                json_u64(c->j, "recorded", s.recorded);
                json_u64(c->j, "replayed", s.replayed);
                json_u64(c->j, "plain", s.plain + s.off);
                json_string(c->j, "last", s.last_mode);
                json_u64(c->j, "last_replayed_bytes", s.last_replayed_bytes);
                json_double(c->j, "last_s", s.last_s);
                json_string(c->j, "next", start_mode_name(s.next.mode));
                json_string(c->j, "why", s.next.why);
                json_double(c->j, "plain_s", s.plain_s);
                json_double(c->j, "replayed_s", s.replay_s);
                json_double(c->j, "saved_s", s.saved_s);
                json_u64(c->j, "read_set_bytes", p.read_set_bytes);
                json_bool(c->j, "small", p.small);
                json_object_close(c->j);
                return 0;
        }
        /* (a user's file names reach root's terminal: control characters
         * shown, never sent) */
        fprintf(c->f, "%s%s%s\n  %u starts (%u recorded, %u replayed, %u plain); next: %s%s%s\n",
                printable(p.exe, exe, sizeof(exe)), p.script[0] ? " " : "", printable(p.script, script, sizeof(script)),
                s.starts, s.recorded, s.replayed, s.plain + s.off,
                start_mode_name(s.next.mode), s.next.why[0] ? ": " : "", s.next.why);
        if (s.plain_s > 0 || s.replay_s > 0)
                fprintf(c->f, "  median start: plain %.3f s, replayed %.3f s; saved %.1f s\n", s.plain_s, s.replay_s,
                        s.saved_s);
        return 0;
}

int programs_status(FILE *f, const char *store, uid_t uid, bool json)
{
        struct status_ctx c = { .store = store, .f = f, .uid = uid };
        struct json j;
        int r;

        if (access(store, F_OK) < 0)
                return -errno;
        if (json) {
                json_begin(&j, f, false);
                json_object_open(&j, NULL);
                json_array_open(&j, "programs");
                c.j = &j;
        }
        r = programs_each(store, status_one, &c);
        if (json) {
                json_array_close(&j);
                json_object_close(&j);
                json_end(&j);
        } else if (r >= 0 && c.n == 0)
                fprintf(f, "nothing learned yet (%s)\n", store);
        return r;
}

int programs_users_file(const char *store, uid_t uid, bool json, char *buf, size_t size)
{
        int n = snprintf(buf, size, "%s-users/%u.%s", store, (unsigned)uid, json ? "json" : "txt");
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

struct user_write {
        const char *store;
        uid_t uid;
        bool json;
};

static int write_user_status(FILE *f, void *userdata)
{
        const struct user_write *w = userdata;
        int r = programs_status(f, w->store, w->uid, w->json);
        return r < 0 ? r : ferror(f) ? -EIO : 0;
}

int programs_users_write(const char *store, uid_t uid)
{
        char dir[PATH_MAX], path[PATH_MAX];
        struct stat st;
        int r;

        if (snprintf(dir, sizeof(dir), "%s-users", store) >= (int)sizeof(dir))
                return -ENAMETOOLONG;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        /* root's, written by root alone: no one can plant a link there;
         * 0755 whatever the umask (the unit's), so that each user reaches
         * their own file */
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
                return -EPERM;
        if ((st.st_mode & 07777) != 0755 && chmod(dir, 0755) < 0)
                return -errno;
        for (int json = 0; json < 2; json++) {
                struct user_write w = { store, uid, json };

                if ((r = programs_users_file(store, uid, json, path, sizeof(path))) < 0 ||
                    (r = write_file_atomic(path, 0400, write_user_status, &w)) < 0)
                        return r;
                if (fchownat(AT_FDCWD, path, uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
        }
        return 0;
}

int programs_user_status_print(FILE *f, const char *path, uid_t uid)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        _cleanup_free_ char *text = NULL;
        struct stat st;
        int r;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || (st.st_uid != uid && st.st_uid != 0))
                return -EPERM;
        if ((r = read_fd_text(fd, &text, 64u << 20)) < 0)
                return r;
        fputs(text, f);
        return 0;
}
