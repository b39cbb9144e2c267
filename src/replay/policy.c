/* SPDX-License-Identifier: MIT */
#include "replay/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fs/extents.h"
#include "util/json.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

int replay_memory_budget(uint64_t *ret)
{
        _cleanup_free_ char *m = NULL;
        uint64_t total = 0, avail = 0;
        const char *p;
        int r;

        r = read_small_file("/proc/meminfo", &m, 16384);
        if (r < 0)
                return r;
        p = strstr(m, "MemTotal:");
        if (!p || sscanf(p + 9, "%" SCNu64, &total) != 1)
                return -EIO;
        p = strstr(m, "MemAvailable:");
        if (!p || sscanf(p + 13, "%" SCNu64, &avail) != 1)
                return -EIO;
        total *= 1024;
        avail *= 1024;
        *ret = avail > total / 10 ? avail - total / 10 : 0;
        return 0;
}

/* --device: "rotational", "solid" or a profile saved by readset probe,
 * parsed once when the option is */
static struct device_profile arg_device;
static bool have_arg_device;
static bool arg_all_lookups;

static int device_from_option(const char *arg, struct device_profile *ret)
{
        int r;

        if (strcmp(arg, "rotational") == 0) {
                device_profile_rotational(ret);
                return 0;
        }
        if (strcmp(arg, "solid") == 0) {
                device_profile_solid(ret);
                return 0;
        }
        r = device_profile_from_probe(arg, ret);
        if (r < 0)
                return r;
        snprintf(ret->name, sizeof(ret->name), "%.63s", arg);
        return 0;
}

void replay_device_for(const char *path, struct device_profile *ret)
{
        if (have_arg_device)
                *ret = arg_device;
        else if (!path || device_profile_for_path(path, ret) < 0)
                device_profile_solid(ret);
}

/* Where a file's data lies on the device, for sorting by position on a
 * rotational device: the physical address of the file's first extent at or
 * after the offset.  The planner asks a file at a time: each file's extent
 * map is read once (FIEMAP), then looked up. */
struct phys_cache {
        const struct readset *rs;
        uint32_t file;
        struct rp_layout map;   /* of file; not known when it could not be read */
};

static uint64_t phys_of(void *userdata, uint32_t file, uint64_t offset)
{
        struct phys_cache *pc = userdata;
        const struct rp_extent *e;
        size_t next;

        if (file >= pc->rs->n_files || pc->rs->files[file].kind != RS_FILE_REGULAR)
                return UINT64_MAX;
        if (pc->file != file) {
                extents_clear(&pc->map);
                pc->file = file;
                (void)extents_read_recorded(&pc->rs->files[file], &pc->map);
        }
        if (!pc->map.known)
                return UINT64_MAX;
        e = extent_at(&pc->map, offset, &next);
        if (e)
                return e->physical + (offset - e->logical);
        /* in a hole: where the data after it lies; past the last extent: unknown */
        return next < pc->map.n_extents ? pc->map.extents[next].physical : UINT64_MAX;
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

/* On a local filesystem, per directory the first lookup and one in 64: git
 * status's read set (34 000 paths) replayed beside it took 424 ms with
 * every path, 366 ms with 2 300, plain git 307 ms (the lookups cost CPU the
 * program needs); python3 and the boot tree were unchanged.  A share pays a
 * round trip per lookup: every one is kept there.  The mount that holds dir
 * is the last-mounted one whose point is the longest prefix of it. */
static uint32_t lookup_stride_of(void *userdata, const char *dir, size_t len)
{
        const struct mounts *mt = userdata;
        const struct mount_ent *best = NULL;
        size_t best_len = 0;

        for (size_t i = 0; i < mt->n; i++) {
                const struct mount_ent *m = &mt->m[i];
                size_t ml = strlen(m->mnt);
                bool root = ml == 1;   /* "/" */
                if (!root && (ml > len || memcmp(m->mnt, dir, ml) != 0 || (ml < len && dir[ml] != '/')))
                        continue;
                if (!best || ml >= best_len) {
                        best = m;
                        best_len = ml;
                }
        }
        return best && is_share(best->fstype) ? 1 : 64;
}

int replay_plan(const struct readset *rs, uint64_t max_bytes, bool accessed_only, struct plan **ret,
                struct device_profile *ret_dev)
{
        struct plan_options o = { .accessed_only = accessed_only };
        struct device_profile dev;
        uint64_t budget;
        const char *probe;
        int r;

        /* the device most of the bytes come from (a program on the system
         * disk reading its data from a USB disk is planned for the USB
         * disk), else that of any file still there */
        if (readset_main_file(rs, &probe) < 0)
                return -ENOMEM;
        for (size_t i = 0; !probe && i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR && access(rs->files[i].path, F_OK) == 0)
                        probe = rs->files[i].path;
        if (!probe)
                probe = "/";
        replay_device_for(probe, &dev);
        _cleanup_(mounts_free) struct mounts mt = { 0 };
        if (!arg_all_lookups && mounts_read(&mt) == 0) {
                o.lookup_stride = lookup_stride_of;
                o.lookup_stride_userdata = &mt;
        }
        r = replay_memory_budget(&budget);
        if (r < 0)
                return r;
        o.max_bytes = budget ? budget : 1;   /* 0 would mean "no limit" */
        if (max_bytes && max_bytes < o.max_bytes)
                o.max_bytes = max_bytes;
        struct phys_cache pc = { .rs = rs, .file = UINT32_MAX };
        if (dev.rotational) {
                o.phys = phys_of;
                o.phys_userdata = &pc;
        }
        r = planner_build(rs, &dev, &o, ret);
        extents_clear(&pc.map);
        if (r >= 0 && ret_dev)
                *ret_dev = dev;
        return r;
}

int replay_parse_option(int c, const char *arg, const char *verb, struct engine_options *eo, uint64_t *max_bytes)
{
        uint64_t v;
        int r;

        switch (c) {
        case 'D':
                r = device_from_option(arg, &arg_device);
                if (r < 0)
                        return log_usage(verb, "invalid --device '%s' (rotational, solid or a profile saved by "
                                         "readset probe -o): %s", arg, strerror(-r));
                have_arg_device = true;
                return 1;
        case 'm':
                r = engine_method_from_name(arg);
                if (r < 0)
                        return log_usage(verb, "unknown --method '%s' (readahead, fadvise, read)", arg);
                eo->method = (enum engine_method)r;
                return 1;
        case 'Q':
                if (parse_u64(arg, &v) < 0 || v < 1 || v > 4096)
                        return log_usage(verb, "invalid --queue-depth '%s' (1..4096)", arg);
                eo->queue_depth = (uint32_t)v;
                return 1;
        case 'B':
                if (parse_size(arg, max_bytes) < 0 || *max_bytes == 0)
                        return log_usage(verb, "invalid --max-bytes '%s'", arg);
                return 1;
        case 'T':
                if (parse_u64(arg, &v) < 0 || v < 1 || v > 16)
                        return log_usage(verb, "invalid --threads '%s' (1..16)", arg);
                eo->threads = (uint32_t)v;
                return 1;
        case 'L':
                eo->lookups = false;
                return 1;
        case REPLAY_OPT_ALL_LOOKUPS:
                arg_all_lookups = true;
                return 1;
        }
        return 0;
}

void replay_print_stats(const struct engine_stats *st, const struct plan *plan, bool json)
{
        char b1[32], b2[32], b3[32];

        if (json) {
                struct json j;
                json_begin(&j, stdout, true);
                json_object_open(&j, NULL);
                json_u64(&j, "elapsed_us", st->elapsed_us);
                json_u64(&j, "metadata_us", st->meta_us);
                json_u64(&j, "data_us", st->submit_us);
                json_u64(&j, "files", st->files);
                json_u64(&j, "files_opened", st->files_opened);
                json_u64(&j, "files_changed", st->files_changed);
                json_u64(&j, "files_missing", st->files_missing);
                json_u64(&j, "files_not_regular", st->files_not_regular);
                json_u64(&j, "files_error", st->files_error);
                json_u64(&j, "reads", st->reads);
                json_u64(&j, "bytes_planned", plan->bytes);
                json_u64(&j, "bytes_over_budget", plan->bytes_cut);
                json_u64(&j, "bytes_read", st->bytes);
                json_u64(&j, "bytes_already_cached", st->bytes_cached);
                json_u64(&j, "bytes_skipped", st->bytes_skipped);
                json_u64(&j, "bytes_not_resident", st->bytes_missing);
                json_u64(&j, "lookups", st->lookups);
                json_bool(&j, "stopped_early", st->stopped);
                json_object_close(&j);
                json_end(&j);
                return;
        }
        fprintf(stderr, "readset: replayed %s in %" PRIu64 " requests from %" PRIu64 " files in %.1f ms"
                "; %s already cached; %" PRIu64 " lookups\n",
                format_bytes(st->bytes, b1), st->reads, st->files_opened, st->elapsed_us / 1e3,
                format_bytes(st->bytes_cached, b2), st->lookups);
        if (st->files_changed || st->files_missing || st->files_not_regular || st->files_error)
                fprintf(stderr, "readset: skipped %" PRIu64 " files (%s): %" PRIu64 " changed, %" PRIu64
                        " missing, %" PRIu64 " no longer regular files, %" PRIu64 " unreadable\n",
                        st->files_changed + st->files_missing + st->files_not_regular + st->files_error,
                        format_bytes(st->bytes_skipped, b3), st->files_changed, st->files_missing,
                        st->files_not_regular, st->files_error);
        if (plan->bytes_cut)
                fprintf(stderr, "readset: left out %s over the memory budget\n", format_bytes(plan->bytes_cut, b1));
        if (st->bytes_missing)
                fprintf(stderr, "readset: %s not resident after replay (memory pressure?)\n",
                        format_bytes(st->bytes_missing, b1));
}
