/* SPDX-License-Identifier: MIT */
#include "keep/keep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/format.h"
#include "replay/policy.h"
#include "replay/session.h"
#include "util/child.h"
#include "util/util.h"
#include "util/banned.h"

/* the characters of a unit's name as keep takes it: systemd's, without
 * its escapes ('\\': systemd unescapes a command line, and the name would
 * reach readset as another unit's) */
static bool unit_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(":-_.@", c);
}

int keep_unit_name(const char *arg, char *buf, size_t size)
{
        static const char *const others[] = { ".socket", ".timer", ".target", ".mount", ".automount", ".path",
                                              ".slice", ".scope", ".device", ".swap" };
        const char *dot = strrchr(arg, '.'), *at = strchr(arg, '@');
        size_t n = strlen(arg);
        char esc[1100];
        int k;

        if (n == 0 || arg[0] == '.' || arg[0] == '-' || arg[0] == '@')
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!unit_char(arg[i]))
                        return -EINVAL;
        for (size_t i = 0; dot && i < ARRAY_SIZE(others); i++)
                if (strcmp(dot, others[i]) == 0)
                        return -EINVAL;   /* another kind of unit */
        k = dot && strcmp(dot, ".service") == 0 ? snprintf(buf, size, "%s", arg) : snprintf(buf, size, "%s.service", arg);
        if (k < 0 || (size_t)k >= size || k > 255)
                return -EINVAL;
        /* a template itself ("name@.service") is no service that runs */
        if (at && at[1] == '.' && strcmp(at + 1, ".service") == 0)
                return -EINVAL;
        /* the longest name the drop-in makes of it: systemd's limit too */
        if (keep_escape(buf, esc, sizeof(esc)) < 0 || strlen("readset-keep-restore@.service") + strlen(esc) > 255)
                return -EINVAL;
        return 0;
}

int keep_escape(const char *unit, char *buf, size_t size)
{
        size_t n = 0;

        for (const char *p = unit; *p; p++) {
                bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                             *p == ':' || *p == '_' || (*p == '.' && p != unit);
                int k = plain ? snprintf(buf + n, size - n, "%c", *p) :
                                snprintf(buf + n, size - n, "\\x%02x", (unsigned char)*p);
                if (k < 0 || (size_t)k >= size - n)
                        return -ENAMETOOLONG;
                n += (size_t)k;
        }
        return 0;
}

void keep_unit_free(struct keep_unit *u)
{
        for (size_t i = 0; i < u->n_paths; i++)
                free(u->paths[i]);
        free(u->paths);
        u->paths = NULL;
        u->n_paths = 0;
}

int keep_file(const char *state, const char *unit, const char *file, char *buf, size_t size)
{
        int n = snprintf(buf, size, "%s/%s.%s", state, unit, file);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int dropin_paths(const char *unit_dir, const char *unit, char *dir, size_t dsize, char *file, size_t fsize)
{
        if ((size_t)snprintf(dir, dsize, "%s/%s.d", unit_dir, unit) >= dsize ||
            (size_t)snprintf(file, fsize, "%s/%s", dir, KEEP_DROPIN) >= fsize)
                return -ENAMETOOLONG;
        return 0;
}

int keep_enable(const char *state, const char *unit_dir, const char *bindir, const char *unit, char *const *paths,
                size_t n)
{
        char file[PATH_MAX], dir[PATH_MAX], dropin[PATH_MAX], inst[1100];
        _cleanup_free_ char *text = NULL, *conf = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        /* root's, readable by all (status is everyone's; the snapshots
         * themselves are written 0600) */
        r = make_dir_and_parent(state);
        if (r < 0)
                return r;
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                /* resolved now, once: a save skips a path that resolves
                 * elsewhere later (snapshot_options.exact_paths) */
                _cleanup_free_ char *abs = realpath(paths[i], NULL);
                if (!abs || strchr(abs, '\n')) {
                        fclose(f);
                        return abs ? -EINVAL : -errno;
                }
                fprintf(f, "%s\n", abs);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        r = keep_file(state, unit, "paths", file, sizeof(file));
        if (r >= 0)
                r = write_file_atomic_text(file, text);
        if (r < 0)
                return r;
        r = keep_escape(unit, inst, sizeof(inst));
        if (r >= 0)
                r = dropin_paths(unit_dir, unit, dir, sizeof(dir), dropin, sizeof(dropin));
        if (r < 0)
                return r;
        if (asprintf(&conf,
                     "# readset keep: %s's page-cache working set kept across its restarts\n"
                     "# (written by 'readset keep enable'; 'readset keep disable %s' removes it)\n"
                     "[Unit]\n"
                     "Wants=readset-keep-restore@%s.service readset-keep-save@%s.timer\n"
                     "PropagatesStopTo=readset-keep-save@%s.timer\n"
                     "\n"
                     "[Service]\n"
                     "# as root, outside the service's sandbox; its failure is not the service's\n"
                     "ExecStopPost=+-%s/readset keep save %s\n",
                     unit, unit, inst, inst, inst, bindir, unit) < 0)
                return -ENOMEM;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        return write_file_atomic_text(dropin, conf);
}

int keep_disable(const char *state, const char *unit_dir, const char *unit)
{
        static const char *const files[] = { "paths", "readset", "status" };
        char file[PATH_MAX], dir[PATH_MAX], dropin[PATH_MAX];
        bool was = false;
        int r = dropin_paths(unit_dir, unit, dir, sizeof(dir), dropin, sizeof(dropin));

        if (r < 0)
                return r;
        if (unlink(dropin) == 0)
                was = true;
        else if (errno != ENOENT)
                return -errno;
        (void)rmdir(dir);   /* only if nothing else is in it */
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                r = keep_file(state, unit, files[i], file, sizeof(file));
                if (r < 0)
                        return r;
                if (unlink(file) == 0)
                        was = true;
                else if (errno != ENOENT)
                        return -errno;
        }
        return was ? 0 : -ENOENT;
}

static int load_paths(const char *file, struct keep_unit *u)
{
        _cleanup_free_ char *text = NULL;
        size_t cap = 0;
        int r = read_small_file(file, &text, 1 << 20);

        if (r < 0)
                return r;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (line[0] != '/')
                        continue;
                if (grow_array(&u->paths, &cap, u->n_paths + 1, sizeof(*u->paths)) < 0 ||
                    !(u->paths[u->n_paths] = strdup(line)))
                        return -ENOMEM;
                u->n_paths++;
        }
        return 0;
}

static void load_status(const char *file, struct keep_status *st)
{
        _cleanup_free_ char *text = NULL;
        static const struct {
                const char *key;
                size_t off;
        } keys[] = {
                { "saved_unix", offsetof(struct keep_status, saved_unix) },
                { "saved_bytes", offsetof(struct keep_status, saved_bytes) },
                { "saved_files", offsetof(struct keep_status, saved_files) },
                { "save_cpu_us", offsetof(struct keep_status, save_cpu_us) },
                { "saved_skipped", offsetof(struct keep_status, saved_skipped) },
                { "restored_unix", offsetof(struct keep_status, restored_unix) },
                { "restored_bytes", offsetof(struct keep_status, restored_bytes) },
                { "restore_us", offsetof(struct keep_status, restore_us) },
                { "service_bytes", offsetof(struct keep_status, service_bytes) },
        };

        *st = (struct keep_status){ 0 };
        if (read_small_file(file, &text, 1 << 16) < 0)
                return;
        for (char *line = text, *next; line && *line; line = next) {
                char *sp = strchr(line, ' ');
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (!sp)
                        continue;
                *sp = '\0';
                for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                        if (strcmp(line, keys[i].key) == 0)
                                (void)parse_u64(sp + 1, (uint64_t *)((char *)st + keys[i].off));
        }
}

int keep_status_write(const char *state, const char *unit, const struct keep_status *st)
{
        char file[PATH_MAX], text[1024];
        int r = keep_file(state, unit, "status", file, sizeof(file));

        if (r < 0)
                return r;
        snprintf(text, sizeof(text),
                 "saved_unix %" PRIu64 "\nsaved_bytes %" PRIu64 "\nsaved_files %" PRIu64 "\nsave_cpu_us %" PRIu64
                 "\nsaved_skipped %" PRIu64 "\nrestored_unix %" PRIu64 "\nrestored_bytes %" PRIu64
                 "\nrestore_us %" PRIu64 "\nservice_bytes %" PRIu64 "\n",
                 st->saved_unix, st->saved_bytes, st->saved_files, st->save_cpu_us, st->saved_skipped,
                 st->restored_unix, st->restored_bytes, st->restore_us, st->service_bytes);
        return write_file_atomic_text(file, text);
}

int keep_load(const char *state, const char *unit, struct keep_unit *ret)
{
        char file[PATH_MAX];
        struct stat st;
        int r;

        *ret = (struct keep_unit){ 0 };
        snprintf(ret->name, sizeof(ret->name), "%s", unit);
        r = keep_file(state, unit, "paths", file, sizeof(file));
        if (r < 0)
                return r;
        r = load_paths(file, ret);
        if (r < 0) {
                keep_unit_free(ret);
                return r;
        }
        if (keep_file(state, unit, "status", file, sizeof(file)) >= 0)
                load_status(file, &ret->st);
        ret->have_snapshot = keep_file(state, unit, "readset", file, sizeof(file)) >= 0 && lstat(file, &st) == 0;
        return 0;
}

int keep_list(const char *state, char ***ret, size_t *ret_n)
{
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d = opendir(state);

        *ret = NULL;
        *ret_n = 0;
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (len <= 6 || strcmp(de->d_name + len - 6, ".paths") != 0)
                        continue;
                if (grow_array(&names, &cap, n + 1, sizeof(*names)) < 0 ||
                    !(names[n] = strndup(de->d_name, len - 6))) {
                        closedir(d);
                        for (size_t i = 0; i < n; i++)
                                free(names[i]);
                        free(names);
                        return -ENOMEM;
                }
                n++;
        }
        closedir(d);
        qsort_safe(names, n, sizeof(*names), cmp_str_ptrs);
        *ret = names;
        *ret_n = n;
        return 0;
}

int keep_reload_systemd(const char *unit_dir)
{
        char *argv[] = { (char *)"systemctl", (char *)"daemon-reload", NULL };
        struct stat st;
        int r;

        /* the system's units only, and only where systemd runs (offline,
         * in a chroot or an image, it reads them at its next start) */
        if (strcmp(unit_dir, KEEP_UNIT_DIR) != 0 || stat("/run/systemd/system", &st) < 0)
                return 0;
        r = child_run(argv, NULL, 0, false, now_us() + 60 * 1000000ULL);
        return r < 0 ? r : r > 0 ? -EIO : 0;
}

/* The unit's cgroup, "/system.slice/...": what systemd says it is where it
 * runs (ControlGroup: template instances and units with a Slice= of their
 * own are not directly below system.slice), else where it puts a system
 * service by default. */
static void unit_cgroup_path(const char *unit, char *buf, size_t size)
{
        char *argv[] = { (char *)"systemctl", (char *)"show", (char *)"-p", (char *)"ControlGroup",
                         (char *)"--value", (char *)unit, NULL };
        char out[PATH_MAX], prefix[256], esc[1100];
        const char *at = strchr(unit, '@');
        struct stat st;

        if (stat("/run/systemd/system", &st) == 0 &&
            child_run(argv, out, sizeof(out), true, now_us() + 10 * 1000000ULL) == 0) {
                out[strcspn(out, "\n")] = '\0';
                if (out[0] == '/' && strlen(out) < size) {
                        snprintf(buf, size, "%s", out);
                        return;
                }
        }
        if (at && (size_t)(at - unit) < sizeof(prefix)) {
                snprintf(prefix, sizeof(prefix), "%.*s", (int)(at - unit), unit);
                if (keep_escape(prefix, esc, sizeof(esc)) == 0) {
                        snprintf(buf, size, "/system.slice/system-%s.slice/%s", esc, unit);
                        return;
                }
        }
        snprintf(buf, size, "/system.slice/%s", unit);
}

/* A cgroup path as /proc/PID/cgroup would say it, for v1's memory
 * controller and v2 (replay_cgroup_room's input). */
static void cgroup_lines(const char *path, char *buf, size_t size)
{
        snprintf(buf, size, "1:memory:%s\n0::%s\n", path, path);
}

void keep_unit_cgroup(const char *unit, char *buf, size_t size)
{
        char path[PATH_MAX];

        unit_cgroup_path(unit, path, sizeof(path));
        cgroup_lines(path, buf, size);
}

/* The unit's cgroup directory whose processes are listed (v2, hybrid's
 * unified, v1's name=systemd, else v1's memory controller, where a service
 * run without systemd may have been given its limit), or "" where it has
 * none (stopped). */
static void unit_procs_dir(const char *path, char *buf, size_t size)
{
        static const char *const tops[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd",
                                              "/sys/fs/cgroup/memory" };
        char procs[PATH_MAX + 16];

        for (size_t i = 0; i < ARRAY_SIZE(tops); i++) {
                snprintf(buf, size, "%s%s", tops[i], path);
                snprintf(procs, sizeof(procs), "%s/cgroup.procs", buf);
                if (access(procs, R_OK) == 0)
                        return;
        }
        buf[0] = '\0';
}

/* The files to look at besides the paths: what the unit's processes have
 * open or mapped now, and the last save's files (the save at the stop runs
 * once they are gone: what they held open is kept while it stays cached). */
static int extra_files(const char *procs, const struct readset *prev, char ***ret, size_t *ret_n)
{
        char **files = NULL;
        size_t n = 0, cap;

        if (procs[0] && snapshot_cgroup_files(procs, &files, &n) < 0)
                n = 0;
        cap = n;
        for (size_t i = 0; prev && i < prev->n_files; i++) {
                if (prev->files[i].kind != RS_FILE_REGULAR)
                        continue;
                if (grow_array(&files, &cap, n + 1, sizeof(*files)) < 0 || !(files[n] = strdup(prev->files[i].path))) {
                        snapshot_paths_free(files, n);
                        return -ENOMEM;
                }
                n++;
        }
        *ret = files;
        *ret_n = n;
        return 0;
}

/* Whether a process other than this one is in the cgroup directory. */
static bool others_in(const char *dir)
{
        _cleanup_free_ char *text = NULL;
        char file[PATH_MAX + 16];
        uint64_t pid;

        if (!dir[0] || (size_t)snprintf(file, sizeof(file), "%s/cgroup.procs", dir) >= sizeof(file) ||
            read_small_file(file, &text, 1 << 20) < 0)
                return false;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (parse_u64(line, &pid) == 0 && pid != (uint64_t)getpid())
                        return true;
        }
        return false;
}

int keep_save(const char *state, const char *unit, struct snapshot_result *res)
{
        _cleanup_readset_ struct readset *prev = NULL, *rs = NULL;
        struct snapshot_options o = { .exact_paths = true };
        struct keep_unit u;
        char file[PATH_MAX], why[256], path[PATH_MAX], procs[PATH_MAX], cg[2 * PATH_MAX + 16];
        char **files = NULL;
        size_t n_files = 0;
        int r = keep_load(state, unit, &u);

        if (r < 0)
                return r;
        r = keep_file(state, unit, "readset", file, sizeof(file));
        if (r >= 0 && u.have_snapshot && format_read(file, &prev, why, sizeof(why)) < 0)
                prev = NULL;   /* unreadable: replaced, ranking nothing */
        /* the unit's cgroup asked once (systemctl), for its processes' files
         * and its own memory */
        unit_cgroup_path(unit, path, sizeof(path));
        unit_procs_dir(path, procs, sizeof(procs));
        if (r >= 0)
                r = extra_files(procs, prev, &files, &n_files);
        o.previous = prev;
        o.files = files;
        o.n_files = n_files;
        if (r >= 0)
                r = snapshot_take(u.paths, u.n_paths, &o, &rs, res);
        snapshot_paths_free(files, n_files);
        if (r >= 0)
                r = format_write(rs, file);
        if (r >= 0) {
                uint64_t skipped = 0;
                for (int i = 0; i < _SNAPSHOT_SKIP_MAX; i++)
                        skipped += res->skipped[i];
                /* the status as it is now (a restore may have written it
                 * meanwhile), the save's own fields replaced */
                if (keep_file(state, unit, "status", file, sizeof(file)) >= 0)
                        load_status(file, &u.st);
                u.st.saved_unix = (uint64_t)time(NULL);
                u.st.saved_bytes = res->bytes_cached;
                u.st.saved_files = res->files_cached;
                u.st.save_cpu_us = res->cpu_us;
                u.st.saved_skipped = skipped;
                /* what the service itself holds, while it runs (the save at
                 * its stop finds only itself there): a restore leaves it
                 * room */
                if (others_in(procs)) {
                        cgroup_lines(path, cg, sizeof(cg));
                        u.st.service_bytes = replay_cgroup_own(cg, "/sys/fs/cgroup");
                }
                r = keep_status_write(state, unit, &u.st);
        }
        keep_unit_free(&u);
        return r;
}

int keep_restore(const char *state, const char *unit, struct keep_restored *ret)
{
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_(replay_session_freep) struct replay_session *s = NULL;
        struct replay_session_options o;
        const struct replay_result *res;
        struct keep_unit u;
        char file[PATH_MAX], cg[1024], why[256];
        uint64_t t0 = now_us(), room, service, own;
        int r;

        *ret = (struct keep_restored){ 0 };
        r = keep_load(state, unit, &u);
        if (r < 0)
                return r;
        keep_unit_free(&u);
        if (!u.have_snapshot)
                return 0;
        service = u.st.service_bytes;
        r = keep_file(state, unit, "readset", file, sizeof(file));
        if (r >= 0)
                r = format_read(file, &rs, why, sizeof(why));
        if (r < 0)
                return r;
        ret->had_snapshot = true;
        replay_session_options_init(&o);
        o.beside = true;   /* the service starts beside it */
        /* no more than the unit's memory cgroup can hold: what the kernel
         * chose to keep there is what it will hold again */
        keep_unit_cgroup(unit, cg, sizeof(cg));
        room = replay_cgroup_room(cg, "/sys/fs/cgroup", o.policy.max_evict_percent);
        /* and of that, what the service will need for itself (its memory at
         * the last save) left to it, less what it holds already: a page
         * read now that its start evicts again was read for nothing */
        own = replay_cgroup_own(cg, "/sys/fs/cgroup");
        if (room != UINT64_MAX && service > own)
                room = room > service - own ? room - (service - own) : 0;
        ret->reserved = room != UINT64_MAX && service > own ? service - own : 0;
        if (room != UINT64_MAX)
                o.policy.max_bytes = room ? room : 1;
        if (replay_session_new(&o, rs, &s) < 0)
                return -ENOMEM;
        (void)replay_session_start(s, false);   /* (else replayed in this process) */
        r = replay_session_wait(s, 0, NULL, NULL);
        res = replay_session_results(s);
        if (r < 0 && r != -ECHILD)
                return r;
        ret->bytes = res->st.bytes;
        ret->files_changed = res->st.files_changed;
        if (res->st.fell_back)
                snprintf(ret->fell_back, sizeof(ret->fell_back), "%s", res->st.fell_back);
        ret->us = now_us() - t0;
        /* the status as it is now (a save may have written it meanwhile) */
        if (keep_file(state, unit, "status", file, sizeof(file)) >= 0)
                load_status(file, &u.st);
        u.st.restored_unix = (uint64_t)time(NULL);
        u.st.restored_bytes = ret->bytes;
        u.st.restore_us = ret->us;
        ret->status_error = keep_status_write(state, unit, &u.st);
        return 0;
}

