/* SPDX-License-Identifier: MIT */
#include "replay/policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

void replay_options_init(struct replay_options *o)
{
        *o = (struct replay_options){ .max_evict_percent = REPLAY_DEFAULT_EVICT_PERCENT };
}

int replay_options_set_device(struct replay_options *o, const char *arg, char *why, size_t why_len)
{
        struct device_profile d;
        struct device_name n;
        int r = device_name_parse(arg, &n);

        if (r < 0)
                return r;
        r = device_name_profile(&n, &d, why, why_len);
        if (r < 0)
                return r;
        if (n.type != DEVICE_NAME_KIND)
                snprintf(d.name, sizeof(d.name), "%.63s", arg);
        o->device = d;
        o->have_device = true;
        return 0;
}

void replay_device_for_path(const struct replay_options *o, const char *path, struct device_profile *ret,
                            struct device_note *note)
{
        if (note)
                note->reason = 0;
        if (o->have_device)
                *ret = o->device;
        else if (!path || device_profile_for_path(path, ret, note) < 0)
                device_profile_solid(ret);
}

int replay_device(const struct readset *rs, const struct replay_options *o, struct device_profile *ret,
                  struct device_note *note)
{
        const char *probe;

        if (readset_main_file(rs, &probe) < 0)
                return -ENOMEM;
        /* else that of any file still there */
        for (size_t i = 0; !probe && i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR && access(rs->files[i].path, F_OK) == 0)
                        probe = rs->files[i].path;
        replay_device_for_path(o, probe ? probe : "/", ret, note);
        return 0;
}

/* "Name:     123 kB": the bytes */
static int meminfo_field(const char *m, const char *name, uint64_t *ret)
{
        const char *p = strstr(m, name), *end;
        uint64_t kb;

        if (!p)
                return -EIO;
        p += strlen(name);
        p += strspn(p, " ");
        if (parse_u64_prefix(p, &kb, &end) < 0 || (*end != ' ' && *end != '\n' && *end) || kb > UINT64_MAX / 1024)
                return -EIO;
        *ret = kb * 1024;
        return 0;
}

int replay_meminfo(struct meminfo *ret)
{
        _cleanup_free_ char *m = NULL;
        uint64_t active = 0, inactive = 0;
        int r;

        r = read_small_file("/proc/meminfo", &m, 16384);
        if (r < 0)
                return r;
        if (meminfo_field(m, "MemTotal:", &ret->total) < 0 || meminfo_field(m, "MemFree:", &ret->free) < 0 ||
            meminfo_field(m, "MemAvailable:", &ret->available) < 0 ||
            meminfo_field(m, "Active(file):", &active) < 0 || meminfo_field(m, "Inactive(file):", &inactive) < 0)
                return -EIO;
        ret->file_cached = active + inactive;
        return 0;
}

uint64_t replay_budget_of(const struct meminfo *m, uint32_t evict_percent)
{
        uint64_t reserve = m->total / 20, b;

        b = m->free > reserve ? m->free - reserve : 0;
        b += m->file_cached / 100 * MIN(evict_percent, 100u);
        /* never more than the kernel says may be had without swapping */
        return MIN(b, m->available > reserve ? m->available - reserve : 0);
}

/* A number of one of a cgroup's files (v1's "unlimited" is a huge one,
 * v2's is "max": UINT64_MAX); key: the field of a "key value" file. */
static uint64_t cgroup_value(const char *dir, const char *file, const char *key)
{
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX];
        uint64_t v = UINT64_MAX;
        const char *p, *end;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path) ||
            read_small_file(path, &text, 1 << 16) < 0)
                return UINT64_MAX;
        p = text;
        if (key) {
                size_t n = strlen(key);
                for (p = text; p && !(strncmp(p, key, n) == 0 && p[n] == ' '); p = strchr(p, '\n'), p = p ? p + 1 : p)
                        ;
                if (!p)
                        return UINT64_MAX;
                p += n + 1;
        }
        if (parse_u64_prefix(p, &v, &end) < 0)
                return UINT64_MAX;
        return v >= (1ULL << 62) ? UINT64_MAX : v;
}

/* The memory cgroup paths of a /proc/PID/cgroup: v1's memory controller's
 * and v2's, each "" where it has none. */
static void cgroup_paths(const char *self_cgroup, char *v1, char *v2, size_t size)
{
        v1[0] = v2[0] = '\0';
        for (const char *line = self_cgroup; line && *line;) {
                const char *end = strchrnul(line, '\n'), *c1 = memchr(line, ':', (size_t)(end - line)), *c2;
                c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
                if (c2 && c2[1] == '/') {
                        size_t nc = (size_t)(c2 - c1 - 1), np = (size_t)(end - c2 - 1);
                        bool memory = false;
                        for (const char *t = c1 + 1; t < c2;) {
                                const char *comma = memchr(t, ',', (size_t)(c2 - t));
                                size_t k = (size_t)((comma ? comma : c2) - t);
                                memory |= k == 6 && strncmp(t, "memory", 6) == 0;
                                t += k + 1;
                        }
                        if (memory && np < size)
                                snprintf(v1, size, "%.*s", (int)np, c2 + 1);
                        else if (nc == 0 && np < size)
                                snprintf(v2, size, "%.*s", (int)np, c2 + 1);
                }
                line = *end ? end + 1 : NULL;
        }
}

uint64_t replay_cgroup_own(const char *self_cgroup, const char *sysfs)
{
        char v1[PATH_MAX], v2[PATH_MAX], dir[PATH_MAX];

        cgroup_paths(self_cgroup, v1, v2, sizeof(v1));
        for (int pass = 0; pass < 2; pass++) {
                const char *rel = pass == 0 ? v1 : v2;
                bool is_v1 = pass == 0;
                uint64_t used, file, shmem;
                if (!*rel || (size_t)snprintf(dir, sizeof(dir), "%s%s%s", sysfs, is_v1 ? "/memory" : "", rel) >=
                                     sizeof(dir))
                        continue;
                used = cgroup_value(dir, is_v1 ? "memory.usage_in_bytes" : "memory.current", NULL);
                file = cgroup_value(dir, "memory.stat", is_v1 ? "total_cache" : "file");
                shmem = cgroup_value(dir, "memory.stat", is_v1 ? "total_shmem" : "shmem");
                if (used == UINT64_MAX || file == UINT64_MAX)
                        continue;
                /* page cache counts shared memory: the service's own */
                file -= shmem != UINT64_MAX && shmem <= file ? shmem : 0;
                return used > file ? used - file : 0;
        }
        return 0;
}

uint64_t replay_cgroup_room(const char *self_cgroup, const char *sysfs, uint32_t evict_percent)
{
        char v1[PATH_MAX], v2[PATH_MAX], dir[PATH_MAX];
        uint64_t room = UINT64_MAX;

        cgroup_paths(self_cgroup, v1, v2, sizeof(v1));
        /* each level up to the root: the least room any of them leaves */
        for (int pass = 0; pass < 2; pass++) {
                const char *rel = pass == 0 ? v1 : v2;
                bool is_v1 = pass == 0;
                size_t n;
                if (!*rel)
                        continue;
                n = (size_t)snprintf(dir, sizeof(dir), "%s%s%s", sysfs, is_v1 ? "/memory" : "", rel);
                if (n >= sizeof(dir))
                        continue;
                while (n > 0 && dir[n - 1] == '/')
                        dir[--n] = '\0';
                for (;;) {
                        uint64_t limit = cgroup_value(dir, is_v1 ? "memory.limit_in_bytes" : "memory.max", NULL);
                        if (limit != UINT64_MAX) {
                                uint64_t used = cgroup_value(dir, is_v1 ? "memory.usage_in_bytes" : "memory.current", NULL);
                                uint64_t file = cgroup_value(dir, "memory.stat", is_v1 ? "total_cache" : "file");
                                uint64_t r = used != UINT64_MAX && used < limit ? limit - used : 0;
                                uint64_t pct = MIN(evict_percent, 100u);
                                if (file != UINT64_MAX)
                                        r += file / 100 * pct + file % 100 * pct / 100;
                                room = MIN(room, MIN(r, limit));
                        }
                        char *slash = strrchr(dir, '/');
                        if (!slash || (size_t)(slash - dir) < strlen(sysfs) + (is_v1 ? 7 : 0))
                                break;
                        *slash = '\0';
                }
        }
        return room;
}

int replay_memory_budget(uint32_t evict_percent, uint64_t *ret)
{
        _cleanup_free_ char *self = NULL;
        struct meminfo m;
        int r = replay_meminfo(&m);

        if (r < 0)
                return r;
        *ret = replay_budget_of(&m, evict_percent);
        /* in a memory cgroup (a service's, a restore run in it), what the
         * group may hold, not what the machine has free: reading past it
         * would evict the group's own pages */
        if (read_small_file("/proc/self/cgroup", &self, 1 << 16) >= 0)
                *ret = MIN(*ret, replay_cgroup_room(self, "/sys/fs/cgroup", evict_percent));
        return 0;
}

/* Filesystems where every lookup is a round trip to a server or a
 * user-space daemon. */
static bool is_share(const char *fstype)
{
        static const char *const shares[] = {
                "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs",
                "afs", "virtiofs", "lustre", "gpfs", "davfs", "ncpfs",
        };
        if (strncmp(fstype, "fuse", 4) == 0)
                return true;
        for (size_t i = 0; i < ARRAY_SIZE(shares); i++)
                if (strcmp(fstype, shares[i]) == 0)
                        return true;
        return false;
}

/* git status's read set (34 000 paths) replayed beside it took 424 ms with
 * every path, 366 ms with 2 300, plain git 307 ms (the lookups cost CPU the
 * program needs); python3 and the boot tree were unchanged. */
#define LOCAL_LOOKUP_STRIDE 64

uint32_t replay_lookup_stride(const struct mounts *mt, const char *dir, size_t len)
{
        const struct mount_ent *m = mounts_holding(mt, dir, len);
        return m && is_share(m->fstype) ? 1 : LOCAL_LOOKUP_STRIDE;
}

bool replay_on_share(const struct mounts *mt, const char *path)
{
        const struct mount_ent *m = mounts_holding(mt, path, strlen(path));
        return m && is_share(m->fstype);
}

static uint32_t stride_of(void *userdata, const char *dir, size_t len)
{
        return replay_lookup_stride(userdata, dir, len);
}

/* What every plan takes from o: the ranges it keeps, and its bytes within
 * the memory budget and o->max_bytes. */
static int plan_options_of(const struct replay_options *o, struct plan_options *po)
{
        uint64_t budget;
        int r = replay_memory_budget(o->max_evict_percent, &budget);

        if (r < 0)
                return r;
        *po = (struct plan_options){ .accessed_only = !o->all_ranges };
        po->max_bytes = budget ? budget : 1;   /* 0 would mean "no limit" */
        if (o->max_bytes && o->max_bytes < po->max_bytes)
                po->max_bytes = o->max_bytes;
        return 0;
}

int replay_plan_metadata(const struct readset *rs, const struct device_profile *dev,
                         const struct replay_options *o, struct plan **ret)
{
        struct plan_options po;
        int r;

        *ret = NULL;
        r = plan_options_of(o, &po);
        if (r < 0)
                return r;
        r = planner_build(rs, dev, &po, ret);
        if (r < 0)
                return r;
        /* (the budget keeps the metadata: it is needed first) */
        (*ret)->n_reads = (*ret)->n_meta;
        (*ret)->n_lookups = 0;
        (*ret)->by_position = false;
        (*ret)->bytes = 0;
        for (size_t i = 0; i < (*ret)->n_meta; i++)
                (*ret)->bytes += (*ret)->reads[i].length;
        if ((*ret)->n_meta == 0) {
                plan_free(*ret);
                *ret = NULL;
        }
        return 0;
}

int replay_plan(const struct readset *rs, const struct device_profile *dev, const struct replay_options *o,
                const struct rp_layout *layouts, struct plan **ret)
{
        struct plan_options po;
        _cleanup_(mounts_free) struct mounts mt = { 0 };
        struct rp_layout *read_here = NULL;
        int r;

        r = plan_options_of(o, &po);
        if (r < 0)
                return r;
        po.layouts = layouts;
        if (!o->all_lookups && mounts_read(&mt) == 0) {
                po.lookup_stride = stride_of;
                po.lookup_stride_userdata = &mt;
        }
        /* positions: asked of the file system only where they decide the
         * order, and only of files with something to read (each FIEMAP may
         * cost the disk an inode read); a file not written back yet is
         * not made to be (its pages are dirty in the cache: nothing to
         * read), the planner sorts it after those with positions */
        if (dev->rotational && !layouts) {
                _cleanup_free_ bool *want = calloc(rs->n_files ? rs->n_files : 1, sizeof(bool));
                if (!want)
                        return -ENOMEM;
                for (size_t i = 0; i < rs->n_files; i++)
                        for (size_t k = 0; k < rs->files[i].n_ranges && !want[i]; k++)
                                want[i] = o->all_ranges || (rs->files[i].ranges[k].flags & RS_RANGE_ACCESSED);
                r = extents_table_read(rs, want, 0, &read_here, NULL);
                if (r < 0)
                        return r;
                po.layouts = read_here;
        }
        r = planner_build(rs, dev, &po, ret);
        extents_table_free(read_here, rs->n_files);
        return r;
}
