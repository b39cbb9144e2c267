/* SPDX-License-Identifier: MIT */
#include "replay-common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "util.h"
#include "banned.h"

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

int replay_plan(const struct readset *rs, uint64_t max_bytes, bool accessed_only, struct plan **ret,
                struct device_profile *ret_dev)
{
        struct plan_options o = { .accessed_only = accessed_only };
        struct device_profile dev;
        uint64_t budget;
        const char *probe = "/";
        int r;

        /* the device of the first regular file that still exists */
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR && access(rs->files[i].path, F_OK) == 0) {
                        probe = rs->files[i].path;
                        break;
                }
        if (device_profile_for_path(probe, &dev) < 0)
                device_profile_solid(&dev);
        r = replay_memory_budget(&budget);
        if (r < 0)
                return r;
        o.max_bytes = budget ? budget : 1;   /* 0 would mean "no limit" */
        if (max_bytes && max_bytes < o.max_bytes)
                o.max_bytes = max_bytes;
        r = planner_build(rs, &dev, &o, ret);
        if (r >= 0 && ret_dev)
                *ret_dev = dev;
        return r;
}

int replay_parse_option(int c, const char *arg, const char *verb, struct engine_options *eo, uint64_t *max_bytes)
{
        uint64_t v;
        int r;

        switch (c) {
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
