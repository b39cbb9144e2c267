/* SPDX-License-Identifier: MIT */
/* readset show: print a read set. */
#include <getopt.h>
#include <inttypes.h>
#include <time.h>

#include "cmd/cmd.h"
#include "model/format.h"
#include "util/json.h"
#include "model/readset.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

static void show_help(void)
{
        printf("usage: readset show [OPTIONS] FILE\n"
               "\n"
               "Print a read set: its files in first-access order with their ranges,\n"
               "bytes and first-access times, and the path lookups it recorded.\n"
               "\n"
               "options:\n"
               "  -j, --json       machine-readable output (every field, every range)\n"
               "  -r, --ranges     list every range under its file\n"
               "  -l, --lookups    list the path lookups (open, stat, ...) with outcomes\n"
               "      --allow-untrusted\n"
               "                   as root, read files others can change too (docs/SECURITY.md)\n"
               "  -h, --help       show this help\n");
}

static const char *errno_name(int32_t result)
{
        switch (-result) {
        case 0: return "ok";
        case ENOENT: return "ENOENT";
        case ENOTDIR: return "ENOTDIR";
        case EACCES: return "EACCES";
        case EPERM: return "EPERM";
        case ELOOP: return "ELOOP";
        case EISDIR: return "EISDIR";
        case ENAMETOOLONG: return "ENAMETOOLONG";
        case EEXIST: return "EEXIST";
        case EINVAL: return "EINVAL";
        case ENXIO: return "ENXIO";
        case EBADF: return "EBADF";
        }
        return "error";
}

static uint64_t file_bytes(const struct rs_file *f)
{
        uint64_t b = 0;
        for (size_t i = 0; i < f->n_ranges; i++)
                b += f->ranges[i].length;
        return b;
}

static void print_json(const struct readset *rs)
{
        struct readset_totals t;
        struct json j;

        readset_totals(rs, &t);
        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_u64(&j, "format", FORMAT_MAJOR);
        json_string(&j, "command", rs->command);
        json_u64(&j, "created_unix", rs->created_unix);
        json_u64(&j, "duration_us", rs->duration_us);
        json_u64(&j, "page_size", rs->page_size);
        json_bool(&j, "cold", rs->rec_flags & RS_REC_COLD);
        json_bool(&j, "lookups_traced", rs->rec_flags & RS_REC_LOOKUPS);
        json_u64(&j, "events", rs->events);
        json_u64(&j, "lost_events", rs->lost_events);
        json_u64(&j, "lost_lookups", rs->lookups_lost);
        json_u64(&j, "unresolved_lookups", rs->lookups_unresolved);
        json_bool(&j, "portable", rs->rec_flags & RS_REC_PORTABLE);
        if (rs->image) {
                uint64_t b = 0;
                json_object_open(&j, "image");
                json_u64(&j, "size", rs->image->size);
                for (size_t i = 0; i < rs->image->n_spans; i++)
                        b += rs->image->spans[i].length;
                json_u64(&j, "bytes", b);
                json_array_open(&j, "spans");
                for (size_t i = 0; i < rs->image->n_spans; i++) {
                        json_object_open(&j, NULL);
                        json_u64(&j, "offset", rs->image->spans[i].offset);
                        json_u64(&j, "length", rs->image->spans[i].length);
                        json_object_close(&j);
                }
                json_array_close(&j);
                json_object_close(&j);
        }
        json_object_open(&j, "totals");
        json_u64(&j, "files", t.files);
        json_u64(&j, "ranges", t.ranges);
        json_u64(&j, "bytes", t.bytes);
        json_u64(&j, "accessed_bytes", t.accessed_bytes);
        json_u64(&j, "regular_files", t.regular_files);
        json_u64(&j, "regular_bytes", t.regular_bytes);
        json_u64(&j, "metadata_files", t.blockdev_files);
        json_u64(&j, "metadata_bytes", t.blockdev_bytes);
        json_u64(&j, "unresolved_files", t.unresolved_files);
        json_u64(&j, "unresolved_bytes", t.unresolved_bytes);
        json_u64(&j, "deleted_files", t.deleted_files);
        json_u64(&j, "lookups", t.lookups);
        json_u64(&j, "lookups_failed", t.lookups_failed);
        json_object_close(&j);
        json_array_open(&j, "files");
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                json_object_open(&j, NULL);
                json_string(&j, "path", f->path);
                json_string(&j, "kind", rs_file_kind_name(f->kind));
                json_bool(&j, "deleted", f->flags & RS_FILE_DELETED);
                json_u64(&j, "dev", f->dev);
                json_u64(&j, "ino", f->ino);
                json_u64(&j, "size", f->size);
                json_i64(&j, "mtime_ns", f->mtime_ns);
                json_u64(&j, "bytes", file_bytes(f));
                json_array_open(&j, "ranges");
                for (size_t k = 0; k < f->n_ranges; k++) {
                        const struct rs_range *r = &f->ranges[k];
                        json_object_open(&j, NULL);
                        j.pretty = false;
                        json_u64(&j, "offset", r->offset);
                        json_u64(&j, "length", r->length);
                        json_u64(&j, "time_us", r->time_us);
                        json_bool(&j, "accessed", r->flags & RS_RANGE_ACCESSED);
                        json_bool(&j, "filled", r->flags & RS_RANGE_FILLED);
                        json_object_close(&j);
                        j.pretty = true;
                }
                json_array_close(&j);
                json_object_close(&j);
        }
        json_array_close(&j);
        json_array_open(&j, "lookups");
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                json_object_open(&j, NULL);
                j.pretty = false;
                json_u64(&j, "time_us", l->time_us);
                json_string(&j, "op", rs_lookup_op_name(l->op));
                json_i64(&j, "result", l->result);
                json_string(&j, "error", l->result ? errno_name(l->result) : NULL);
                json_u64(&j, "pid", l->pid);
                json_string(&j, "path", l->path);
                json_object_close(&j);
                j.pretty = true;
        }
        json_array_close(&j);
        json_object_close(&j);
        json_end(&j);
}

/* A time as the table shows it: ms, or a snapshot's rank as it is. */
static double time_of(const struct readset *rs, uint64_t t)
{
        return rs->rec_flags & RS_REC_SNAPSHOT ? (double)t : (double)t / 1e3;
}

/* When f was first needed: its earliest range (a snapshot's: its best rank). */
static uint64_t first_time(const struct rs_file *f)
{
        uint64_t t = UINT64_MAX;

        for (size_t k = 0; k < f->n_ranges; k++)
                t = MIN(t, f->ranges[k].time_us);
        return t;
}

static void print_table(const struct readset *rs, bool ranges, bool lookups)
{
        struct readset_totals t;
        char b1[32], b2[32], b3[32], when[64] = "unknown", pre[96];
        static char pbuf[4 * 65536 + 8];
        time_t created = (time_t)rs->created_unix;
        struct tm tm;
        int decimals;

        readset_totals(rs, &t);
        if (rs->created_unix && gmtime_r(&created, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
        printf("command:   %s\n", rs->command && *rs->command ? cmd_fit(rs->command, 11, pbuf, sizeof(pbuf)) : "(unknown)");
        printf("recorded:  %s, %.3f s%s\n", when, rs->duration_us / 1e6, rs->rec_flags & RS_REC_COLD ? " (cold)" : "");
        printf("events:    %" PRIu64 " page events, %" PRIu64 " lost\n", rs->events, rs->lost_events);
        printf("files:     %" PRIu64 " (%" PRIu64 " unresolved, %" PRIu64 " deleted, %" PRIu64 " block devices)\n",
               t.files, t.unresolved_files, t.deleted_files, t.blockdev_files);
        printf("ranges:    %" PRIu64 "\n", t.ranges);
        printf("bytes:     %s (accessed %s; metadata %s)\n", format_bytes(t.bytes, b1),
               format_bytes(t.accessed_bytes, b2), format_bytes(t.blockdev_bytes, b3));
        if (t.unresolved_bytes)
                printf("unresolved: %s in %" PRIu64 " files\n", format_bytes(t.unresolved_bytes, b1), t.unresolved_files);
        if (rs->rec_flags & RS_REC_PORTABLE)
                printf("portable:  paths below the --root given at replay; files known by content\n");
        if (rs->image) {
                uint64_t b = 0;
                for (size_t i = 0; i < rs->image->n_spans; i++)
                        b += rs->image->spans[i].length;
                printf("image:     %s of its %s image read in %zu range%s\n", format_bytes(b, b1),
                       format_bytes(rs->image->size, b2), rs->image->n_spans, rs->image->n_spans == 1 ? "" : "s");
        }
        if (rs->rec_flags & RS_REC_LOOKUPS) {
                printf("lookups:   %" PRIu64 " (%" PRIu64 " failed)", t.lookups, t.lookups_failed);
                if (rs->lookups_lost)
                        printf(", %" PRIu64 " lost", rs->lookups_lost);
                printf("\n");
                if (rs->lookups_unresolved)
                        printf("           %" PRIu64 " not kept (relative to a directory not known)\n",
                               rs->lookups_unresolved);
        }
        decimals = rs->rec_flags & RS_REC_SNAPSHOT ? 0 : 3;
        if (rs->rec_flags & RS_REC_SNAPSHOT)
                printf("snapshot:  what the page cache held; a range's rank is 0 where the most\n"
                       "           snapshots in a row found it cached, 15 where it was new\n");
        /* the path last, elided in its middle to fit; a snapshot's times are ranks */
        printf("\n%10s %7s %10s  %s\n", rs->rec_flags & RS_REC_SNAPSHOT ? "RANK" : "FIRST(ms)", "RANGES", "BYTES",
               "PATH");
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                const char *tag = f->kind == RS_FILE_BLOCKDEV ? " [metadata]" :
                                  f->kind == RS_FILE_UNRESOLVED ? " [unresolved]" :
                                  (f->flags & RS_FILE_DELETED) ? " [deleted]" : "";
                int n = snprintf(pre, sizeof(pre), "%10.*f %7zu %10s  ", decimals, f->n_ranges ? time_of(rs, first_time(f)) : 0.0,
                                 f->n_ranges, format_bytes(file_bytes(f), b1));
                printf("%s%s%s\n", pre, cmd_fit(f->path, (size_t)n + strlen(tag), pbuf, sizeof(pbuf)), tag);
                if (!ranges)
                        continue;
                for (size_t k = 0; k < f->n_ranges; k++) {
                        const struct rs_range *r = &f->ranges[k];
                        printf("%10.*f %7s %10s    @%" PRIu64 "+%" PRIu64 "%s\n", decimals, time_of(rs, r->time_us), "",
                               format_bytes(r->length, b1), r->offset, r->length,
                               (r->flags & RS_RANGE_ACCESSED) ? "" : " (readahead)");
                }
        }
        if (lookups && rs->n_lookups) {
                printf("\n%10s %8s %-8s %-7s %s\n", "TIME(ms)", "PID", "OP", "RESULT", "PATH");
                for (size_t i = 0; i < rs->n_lookups; i++) {
                        const struct rs_lookup *l = &rs->lookups[i];
                        int n = snprintf(pre, sizeof(pre), "%10.3f %8u %-8s %-7s ", l->time_us / 1e3, l->pid,
                                         rs_lookup_op_name(l->op), errno_name(l->result));
                        printf("%s%s\n", pre, cmd_fit(l->path, (size_t)n, pbuf, sizeof(pbuf)));
                }
        }
}

/* The options of readset show, as getopt reads them (main.c lists them for
 * completion and the tests). */
const char show_short_options[] = "+jrlh";
const struct option show_long_options[] = {
        { "json", no_argument, NULL, 'j' },
        { "ranges", no_argument, NULL, 'r' },
        { "lookups", no_argument, NULL, 'l' },
        TRUST_LONG_OPTION,
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_show(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL;
        bool arg_json = false, arg_ranges = false, arg_lookups = false;
        int c, r;

        while ((c = getopt_long(argc, argv, show_short_options, show_long_options, NULL)) >= 0) {
                switch (c) {
                case 'j': arg_json = true; break;
                case 'r': arg_ranges = true; break;
                case 'l': arg_lookups = true; break;
                case CMD_OPT_ALLOW_UNTRUSTED: trust_allow_untrusted(); break;
                case 'h': show_help(); return 0;
                default: return CMD_OPTION_ERROR(show, argc, argv);
                }
        }
        if (optind + 1 != argc)
                return log_usage("show", optind == argc ? "missing read-set FILE" : "too many arguments");
        r = cmd_load_readset(argv[optind], &rs);
        if (r < 0)
                return r;
        if (arg_json)
                print_json(rs);
        else
                print_table(rs, arg_ranges, arg_lookups);
        return 0;
}
