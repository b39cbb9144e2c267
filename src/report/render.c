/* SPDX-License-Identifier: MIT */
/* The report as text (80 columns) and as JSON: file-format writers of
 * readset report's output. */
#include "report/render.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "report/amplification.h"
#include "util/json.h"
#include "util/util.h"
#include "util/banned.h"

/* A file's name in the report: metadata read through the block device is
 * marked as such, like readset show does. */
static const char *label(const struct rs_file *f, size_t width, char *buf, size_t size)
{
        char tmp[PATH_MAX + 16];

        if (f->kind != RS_FILE_BLOCKDEV)
                return rp_tail(f->path, width, buf, size);
        snprintf(tmp, sizeof(tmp), "%s [metadata]", f->path);
        return rp_tail(tmp, width, buf, size);
}

static const char *const hist_names[_RP_HIST_MAX] = {
        "contiguous", "<1MiB", "<16MiB", "<256MiB", "<4GiB", ">=4GiB", "unknown",
};
static const char *const hist_keys[_RP_HIST_MAX] = {
        "contiguous", "under_1m", "under_16m", "under_256m", "under_4g", "far", "unknown",
};

/* bytes: what the scenario reads on every device; costed_bytes: the part
 * its time costs (this machine: the main device's) */
static void print_scenarios_json(struct json *j, const char *key, const struct cost_result *c, uint64_t bytes)
{
        json_object_open(j, key);
        json_double(j, "seconds", c->seconds);
        json_double(j, "positioning_s", c->positioning_s);
        json_double(j, "transfer_s", c->transfer_s);
        json_double(j, "metadata_s", c->metadata_s);
        json_double(j, "host_s", c->host_s);
        json_u64(j, "requests", c->requests);
        json_u64(j, "bytes", bytes);
        json_u64(j, "costed_bytes", c->bytes);
        json_u64(j, "moves", c->moves);
        json_u64(j, "seeks", c->seeks);
        json_object_close(j);
}

static const char *const ask_keys[_CLIENT_ASK_MAX] = {
        [CLIENT_NAME] = "names", [CLIENT_ATTR] = "attributes", [CLIENT_FAILED] = "failed",
        [CLIENT_OPEN] = "opens", [CLIENT_LISTING] = "listings", [CLIENT_ACCESS] = "access",
        [CLIENT_READLINK] = "readlinks",
};

static void print_lookups_json(struct json *j, const struct cost_profile *p, const struct rp_scenarios *sc)
{
        json_object_open(j, "run");
        json_double(j, "seconds", sc->run.seconds);
        json_double(j, "round_trips_s", sc->run.metadata_s);
        json_object_close(j);
        json_object_open(j, "lookups");
        json_bool(j, "costed", sc->lookups_costed);
        if (sc->lookups_costed) {
                json_string(j, "client", p->client.name);
                json_u64(j, "lookups", sc->lookups_plain.lookups);
                json_u64(j, "round_trips", sc->lookups_plain.round_trips);
                json_double(j, "seconds", sc->lookups_plain.seconds);
                json_object_open(j, "asked");
                for (int k = 0; k < _CLIENT_ASK_MAX; k++)
                        json_u64(j, ask_keys[k], sc->lookups_plain.trips[k]);
                json_object_close(j);
                json_u64(j, "replay_round_trips", sc->lookups_replay.round_trips);
                json_double(j, "replay_s", sc->lookups_replay.seconds);
                json_u64(j, "run_paced", sc->lookups_warmed.paced);
                json_u64(j, "run_round_trips", sc->lookups_warmed.round_trips);
                json_double(j, "run_s", sc->lookups_warmed.seconds);
        }
        json_object_close(j);
}

/* Wrap s at 76 columns with a 4-space hanging indent. */
static void print_wrapped(FILE *f, const char *first, const char *s)
{
        size_t col = (size_t)fprintf(f, "%s", first), indent = strlen(first);

        while (*s) {
                size_t w = strcspn(s, " ");
                if (col + w + 1 > 79 && col > indent) {
                        fprintf(f, "\n%*s", (int)indent, "");
                        col = indent;
                } else if (col > indent) {
                        fputc(' ', f);
                        col++;
                }
                col += fprintf(f, "%.*s", (int)w, s);
                s += w;
                s += strspn(s, " ");
        }
        fputc('\n', f);
}

void report_write_json(FILE *f, const struct report_doc *o)
{
        const struct readset *rs = o->rs;
        const struct report *r = o->r;
        const struct report_summary *sum = o->sum;
        struct json j;

        json_begin(&j, f, true);
        json_object_open(&j, NULL);
        json_string(&j, "read_set", o->path);
        json_string(&j, "command", rs->command ? rs->command : "");
        json_u64(&j, "created_unix", rs->created_unix);
        json_u64(&j, "duration_us", rs->duration_us);
        json_bool(&j, "cold", rs->rec_flags & RS_REC_COLD);
        json_object_open(&j, "totals");
        json_u64(&j, "files", r->totals.files);
        json_u64(&j, "regular_files", r->totals.regular_files);
        json_u64(&j, "unresolved_files", r->totals.unresolved_files);
        json_u64(&j, "deleted_files", r->totals.deleted_files);
        json_u64(&j, "ranges", r->totals.ranges);
        json_u64(&j, "bytes", r->totals.bytes);
        json_u64(&j, "pages", r->pages);
        json_u64(&j, "accessed_bytes", r->totals.accessed_bytes);
        json_u64(&j, "file_bytes", r->file_bytes);
        json_u64(&j, "metadata_ranges", r->meta_ranges);
        json_u64(&j, "metadata_bytes", r->meta_bytes);
        json_u64(&j, "data_ranges", r->data_ranges);
        json_u64(&j, "data_bytes", r->data_bytes);
        json_u64(&j, "small_ranges", r->small_ranges);
        json_u64(&j, "lookups", r->totals.lookups);
        json_object_close(&j);

        json_array_open(&j, "top_files_by_bytes");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rs_file *file = &rs->files[sum->by_bytes[i].file];
                const struct rp_file_stats *s = &r->files[sum->by_bytes[i].file];
                json_object_open(&j, NULL);
                json_string(&j, "path", file->path);
                json_u64(&j, "bytes", s->bytes);
                json_u64(&j, "ranges", s->ranges);
                json_u64(&j, "extents", s->extents);
                json_u64(&j, "extents_touched", s->extents_touched);
                json_object_close(&j);
        }
        json_array_close(&j);
        json_array_open(&j, "top_files_by_ranges");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rs_file *file = &rs->files[sum->by_ranges[i].file];
                json_object_open(&j, NULL);
                json_string(&j, "path", file->path);
                json_u64(&j, "ranges", r->files[sum->by_ranges[i].file].ranges);
                json_u64(&j, "bytes", r->files[sum->by_ranges[i].file].bytes);
                json_object_close(&j);
        }
        json_array_close(&j);
        for (int by = 0; by < 2; by++) {
                json_array_open(&j, by == 0 ? "top_directories_by_bytes" : "top_directories_by_ranges");
                for (size_t i = 0; i < MIN(o->top, sum->n_dirs); i++) {
                        const struct rp_dirstat *d = &sum->dirs[by == 0 ? i : sum->dir_by_ranges[i]];
                        json_object_open(&j, NULL);
                        json_string(&j, "path", d->dir);
                        json_u64(&j, "files", d->files);
                        json_u64(&j, "bytes", d->bytes);
                        json_u64(&j, "ranges", d->ranges);
                        json_object_close(&j);
                }
                json_array_close(&j);
        }

        json_object_open(&j, "disk");
        json_u64(&j, "pieces", r->n_pieces);
        json_u64(&j, "extents_touched", r->extents_touched);
        json_u64(&j, "files_without_positions", o->extent_skipped);
        json_u64(&j, "files_not_written_back", o->unwritten);
        {
                char dv[32];
                snprintf(dv, sizeof(dv), "%u:%u", major(r->main_dev), minor(r->main_dev));
                json_string(&j, "main_device", dv);
        }
        json_u64(&j, "other_device_pieces", r->other_dev_pieces);
        json_u64(&j, "other_device_bytes", r->other_dev_bytes);
        json_u64(&j, "position_min", r->pos_min);
        json_u64(&j, "position_max", r->pos_max);
        json_object_open(&j, "moves");
        for (int i = 0; i < _RP_HIST_MAX; i++)
                json_u64(&j, hist_keys[i], r->hist[i]);
        json_object_close(&j);
        if (r->alt.switches) {
                json_object_open(&j, "alternation");
                json_string(&j, "a", rs->files[r->alt.a].path);
                json_string(&j, "b", rs->files[r->alt.b].path);
                json_u64(&j, "switches", r->alt.switches);
                json_u64(&j, "distance_bytes", r->alt.distance);
                json_object_close(&j);
        }
        json_object_close(&j);

        json_array_open(&j, "predictions");
        for (size_t i = 0; i < o->n_cols; i++) {
                const struct rp_scenarios *sc = &o->cols[i].s;
                json_object_open(&j, NULL);
                json_string(&j, "device", o->cols[i].profile.name);
                json_bool(&j, "reference", i == o->n_cols - 1);
                json_bool(&j, "rotational", o->cols[i].profile.rotational);
                print_scenarios_json(&j, "plain", &sc->plain, sc->plain_bytes);
                print_scenarios_json(&j, "replay", &sc->replay, sc->replay_bytes);
                json_u64(&j, "replay_bytes_without_position", sc->replay_unpositioned_bytes);
                print_scenarios_json(&j, "layout", &sc->layout, sc->layout_bytes);
                print_scenarios_json(&j, "sequential", &sc->sequential, sc->sequential_bytes);
                print_lookups_json(&j, &o->cols[i].profile, sc);
                json_object_close(&j);
        }
        json_array_close(&j);
        json_array_open(&j, "findings");
        for (size_t i = 0; i < sum->n_findings; i++)
                json_string(&j, NULL, sum->findings[i]);
        json_array_close(&j);
        amplification_write_json(&j, rs);
        json_object_close(&j);
        json_end(&j);
}

void report_write_text(FILE *f, const struct report_doc *o)
{
        const struct readset *rs = o->rs;
        const struct report *r = o->r;
        char b1[32], b2[32], b3[32], pb[128];
        const struct report_summary *sum = o->sum;

        fprintf(f, "readset report: %s\n", rp_tail(o->path, 63, pb, sizeof(pb)));
        if (rs->command && *rs->command)
                fprintf(f, "  command   %s\n", rp_tail(rs->command, 68, pb, sizeof(pb)));
        {
                char when[32] = "";
                time_t t = (time_t)rs->created_unix;
                struct tm tm;
                if (gmtime_r(&t, &tm))
                        strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
                fprintf(f, "  recorded  %s, %s, %s cache\n", when, format_seconds((double)rs->duration_us / 1e6, b1),
                       rs->rec_flags & RS_REC_COLD ? "cold" : "warm");
        }
        fprintf(f, "  read      %s in %" PRIu64 " ranges (%" PRIu64 " pages) of %" PRIu64 " files\n",
               format_bytes(r->totals.bytes, b1), r->totals.ranges, r->pages, r->totals.files);
        if (r->file_bytes) {
                char line[256];
                snprintf(line, sizeof(line), "%.0f%% of the %s those files hold; %s used by the program",
                         100.0 * (double)r->data_bytes / (double)r->file_bytes, format_bytes(r->file_bytes, b1),
                         format_bytes(r->totals.accessed_bytes, b2));
                print_wrapped(f, "            ", line);
        }
        fprintf(f, "  metadata  %s in %" PRIu64 " ranges; data %s in %" PRIu64 " ranges\n",
               format_bytes(r->meta_bytes, b1), r->meta_ranges, format_bytes(r->data_bytes, b2), r->data_ranges);
        if (r->totals.lookups)
                fprintf(f, "  lookups   %" PRIu64 " (%" PRIu64 " failed)\n", r->totals.lookups, r->totals.lookups_failed);

        fprintf(f, "\nTop files by bytes                               bytes   ranges  extents\n");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rp_file_stats *s = &r->files[sum->by_bytes[i].file];
                if (!s->bytes)
                        break;
                fprintf(f, "  %-44s %10s %8" PRIu64 " %8" PRIu64 "\n",
                       label(&rs->files[sum->by_bytes[i].file], 44, pb, sizeof(pb)), format_bytes(s->bytes, b1),
                       s->ranges, s->extents_touched);
        }
        fprintf(f, "\nTop files by ranges                             ranges    bytes   <=16K\n");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rp_file_stats *s = &r->files[sum->by_ranges[i].file];
                if (!s->ranges)
                        break;
                fprintf(f, "  %-44s %8" PRIu64 " %10s %6" PRIu64 "\n",
                       label(&rs->files[sum->by_ranges[i].file], 44, pb, sizeof(pb)), s->ranges,
                       format_bytes(s->bytes, b1), s->small_ranges);
        }
        fprintf(f, "\nTop directories by bytes                         bytes    files   ranges\n");
        for (size_t i = 0; i < MIN(o->top, sum->n_dirs); i++)
                fprintf(f, "  %-44s %10s %8" PRIu64 " %8" PRIu64 "\n", rp_tail(sum->dirs[i].dir, 44, pb, sizeof(pb)),
                       format_bytes(sum->dirs[i].bytes, b1), sum->dirs[i].files, sum->dirs[i].ranges);
        fprintf(f, "\nTop directories by ranges                       ranges    files    bytes\n");
        for (size_t i = 0; i < MIN(o->top, sum->n_dirs); i++) {
                const struct rp_dirstat *d = &sum->dirs[sum->dir_by_ranges[i]];
                fprintf(f, "  %-44s %8" PRIu64 " %8" PRIu64 " %10s\n", rp_tail(d->dir, 44, pb, sizeof(pb)), d->ranges,
                       d->files, format_bytes(d->bytes, b1));
        }

        fprintf(f, "\nOn the device (FIEMAP)\n");
        {
                char line[512], h[256];
                size_t n = 0;
                snprintf(line, sizeof(line), "%" PRIu64 " extents touched; %zu pieces read in first-access order, "
                         "on device %u:%u", r->extents_touched, r->n_pieces, major(r->main_dev), minor(r->main_dev));
                if (r->other_dev_pieces)
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %" PRIu64 " pieces (%s) on "
                                 "other devices", r->other_dev_pieces, format_bytes(r->other_dev_bytes, b1));
                if (o->extent_skipped)
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %" PRIu64 " file%s without "
                                 "positions", o->extent_skipped, o->extent_skipped == 1 ? "" : "s");
                if (o->unwritten)
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %" PRIu64 " file%s with no "
                                 "position yet (not written back: costed as the plain start reads them)",
                                 o->unwritten, o->unwritten == 1 ? "" : "s");
                print_wrapped(f, "  ", line);
                fprintf(f, "  moves of the head between pieces, by distance:\n");
                for (int i = 0; i < _RP_HIST_MAX; i++)
                        n += (size_t)snprintf(h + n, sizeof(h) - n, "%s=%" PRIu64 "%s", hist_names[i], r->hist[i],
                                              i + 1 < _RP_HIST_MAX ? ", " : "");
                print_wrapped(f, "    ", h);
        }
        {
                /* fragmentation of the hottest files: the extents their reads touched */
                struct rp_rank *k = sum->by_bytes;
                bool header = false;
                for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                        const struct rp_file_stats *s = &r->files[k[i].file];
                        if (s->extents_touched < 2)
                                continue;
                        if (!header)
                                fprintf(f, "  fragmented hot files (extents touched):\n");
                        header = true;
                        fprintf(f, "    %-52s %8" PRIu64 " of %" PRIu64 "\n",
                               rp_tail(rs->files[k[i].file].path, 52, pb, sizeof(pb)), s->extents_touched, s->extents);
                }
        }

        if (o->n_cols) {
                fprintf(f, "\nPredicted read time          plain cold start   readset replay    after layout\n");
                for (size_t i = 0; i < o->n_cols; i++) {
                        const struct rp_scenarios *s = &o->cols[i].s;
                        fprintf(f, "  %-28s %16s %16s %15s\n", rp_tail(o->cols[i].profile.name, 28, pb, sizeof(pb)),
                               format_seconds(s->plain.seconds, b1), format_seconds(s->replay.seconds, b2),
                               format_seconds(s->layout.seconds, b3));
                }
                for (size_t i = 0; i < o->n_cols; i++) {
                        const struct rp_scenarios *s = &o->cols[i].s;
                        char line[256];
                        snprintf(line, sizeof(line), "%s: %" PRIu64 " requests plain (%" PRIu64 " metadata), %"
                                 PRIu64 " replayed", rp_tail(o->cols[i].profile.name, 28, pb, sizeof(pb)), s->plain.requests,
                                 s->plain_meta_requests, s->replay.requests);
                        print_wrapped(f, "  ", line);
                        if (!s->lookups_costed)
                                continue;
                        snprintf(line, sizeof(line), "%s: lookups ask its %s client %" PRIu64 " round trips (%s) "
                                 "plain, %" PRIu64 " replayed; readset run: %s, the start asking %" PRIu64 " itself",
                                 rp_tail(o->cols[i].profile.name, 28, pb, sizeof(pb)), o->cols[i].profile.client.name,
                                 s->lookups_plain.round_trips, format_seconds(s->lookups_plain.seconds, b1),
                                 s->lookups_replay.round_trips, format_seconds(s->run.seconds, b2),
                                 s->lookups_warmed.round_trips);
                        print_wrapped(f, "  ", line);
                }
        }
        if (sum->n_findings) {
                fprintf(f, "\nFindings\n");
                for (size_t i = 0; i < sum->n_findings; i++)
                        print_wrapped(f, "  - ", sum->findings[i]);
        }
        amplification_write_text(f, rs, 80);
}

