/* SPDX-License-Identifier: MIT */
/* readset report: what a cold start read, where it lies on the device, what
 * it costs there and on a reference device, and what stands out. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>

#include "cmd/cmd.h"
#include "replay/engine.h"
#include "util/json.h"
#include "report/report.h"
#include "report/svg.h"
#include "util/util.h"
#include "util/banned.h"

#define MAX_FINDINGS 16

extern char **environ;

static void report_help(void)
{
        printf("usage: readset report [OPTIONS] FILE\n"
               "\n"
               "Show why the cold start recorded in FILE is slow: what was read (totals, top\n"
               "files and directories), where it lies on the device (FIEMAP: extents, moves\n"
               "of the head in first-access order, seek distances, fragmentation), what it\n"
               "costs on this machine and on a reference device now, with readset replay and\n"
               "after a contiguous layout, and plain-language findings.\n"
               "\n"
               "options:\n"
               "  -d, --device NAME    the reference device: hdd (default), usb, sd, nvme,\n"
               "                       share, or a profile saved by readset probe -o\n"
               "  -p, --profile FILE   this machine's profile (readset probe -o); default: the\n"
               "                       one cached for the device, else a quick probe, cached\n"
               "      --no-probe       never probe: predict for the reference device only\n"
               "                       unless a profile is given or cached\n"
               "  -n, --top N          files and directories listed (default 5)\n"
               "  -j, --json           the report as JSON on stdout\n"
               "  -s, --svg OUT        also draw the disk access graph to OUT (SVG)\n"
               "  -h, --help           show this help\n"
               "\n"
               "Reference profiles live in %s.\n", READSET_PROFILEDIR);
}

/* ---- profiles --------------------------------------------------------- */

static const struct { const char *alias, *file; } profile_aliases[] = {
        { "hdd", "hdd-7200" }, { "usb", "usb2-bridge" }, { "sd", "sd-card" },
        { "nvme", "nvme" }, { "share", "share-2ms" },
};

/* A reference name is looked up in $READSET_PROFILE_DIR, the installed
 * directory and, when run from a build tree, the sources' profiles/. */
static int profile_path(const char *name, char *buf, size_t size)
{
        const char *stem = name;
        char exe[PATH_MAX], *slash;
        const char *dirs[3] = { getenv("READSET_PROFILE_DIR"), READSET_PROFILEDIR, NULL };
        ssize_t k;

        if (strchr(name, '/') || strstr(name, ".json")) {
                snprintf(buf, size, "%s", name);
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(profile_aliases); i++)
                if (strcmp(name, profile_aliases[i].alias) == 0)
                        stem = profile_aliases[i].file;
        k = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
        if (k > 0) {
                exe[k] = 0;
                slash = strrchr(exe, '/');
                if (slash) {
                        snprintf(slash, sizeof(exe) - (size_t)(slash - exe), "/../profiles");
                        dirs[2] = exe;
                }
        }
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                if (!dirs[i])
                        continue;
                snprintf(buf, size, "%s/%s.json", dirs[i], stem);
                if (access(buf, R_OK) == 0)
                        return 0;
        }
        return -ENOENT;
}

static int load_profile(const char *path, const char *name, struct cost_profile *ret)
{
        _cleanup_free_ char *text = NULL;
        int r = read_small_file(path, &text, 1 << 20);

        if (r < 0)
                return r;
        return cost_profile_parse(text, name, ret);
}

/* This machine's profile: the one probe --save kept for the device (or its
 * disk) under $READSET_CACHE_DIR (or /var/cache/readset), made by a quick
 * probe --save of dir when missing or measured on another device.  A file
 * system that no block device tells apart (tmpfs, overlayfs) is probed
 * each time, into a temporary file. */
static int local_profile(const char *dir, bool may_probe, struct cost_profile *ret)
{
        char path[PATH_MAX], tmp[] = "/tmp/readset-probe.XXXXXX";
        char *save_argv[] = { (char *)"readset", (char *)"probe", (char *)"--quick", (char *)"--save",
                              (char *)"--", (char *)dir, NULL };
        char *tmp_argv[] = { (char *)"readset", (char *)"probe", (char *)"--quick", (char *)"-o", tmp,
                             (char *)"--", (char *)dir, NULL };
        posix_spawn_file_actions_t fa;
        struct stat st;
        bool keep;
        pid_t pid;
        int status, r;

        if (stat(dir, &st) < 0)
                return -errno;
        r = device_saved_profile(st.st_dev, path, sizeof(path), NULL);
        if (r >= 0) {
                r = load_profile(path, "this machine", ret);
                if (r == -EINVAL)
                        log_warning("the cached profile %s cannot cost reads; remove it to probe again", path);
                return r;
        }
        if (r == -ESTALE)
                log_warning("the cached profile %s was measured on another device that had these numbers%s", path,
                            may_probe ? ": probing this one" : "");
        if (!may_probe)
                return r;
        keep = r != -ENODEV;
        if (keep) {
                r = device_probe_cache_prepare(st.st_dev, path, sizeof(path));
                if (r < 0)
                        return r;
                log_info("no profile of this device yet: probing %s (about 3 s; cached in %s)", dir, path);
        } else {
                int fd = mkstemp(tmp);
                if (fd < 0)
                        return -errno;
                close(fd);
                snprintf(path, sizeof(path), "%s", tmp);
                log_info("probing %s (about 3 s; not cached: no block device tells this file system apart)", dir);
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        r = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, keep ? save_argv : tmp_argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r == 0) {
                while (waitpid(pid, &status, 0) < 0)
                        if (errno != EINTR) {
                                status = -1;
                                break;
                        }
                r = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? load_profile(path, "this machine", ret) : -EIO;
        } else
                r = -r;
        if (!keep)
                unlink(tmp);
        return r;
}

/* ---- extents ---------------------------------------------------------- */

/* The extent map of f, when it is still the file recorded and its file
 * system has FIEMAP; else its positions stay unknown, counted in *skipped. */
static int file_extents(const struct rs_file *f, struct rp_layout *ret, uint64_t *skipped)
{
        int r;

        if (f->kind != RS_FILE_REGULAR)
                return 0;
        r = extents_read_recorded(f, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                (*skipped)++;
        return 0;
}

/* ---- the text report -------------------------------------------------- */

struct dirstat {
        char *dir;
        uint64_t bytes, ranges, files;
};

static int cmp_dir_name(const void *a, const void *b)
{
        return strcmp(((const struct dirstat *)a)->dir, ((const struct dirstat *)b)->dir);
}

static int cmp_dir_bytes(const void *a, const void *b)
{
        const struct dirstat *x = a, *y = b;
        return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->dir, y->dir);
}

/* Per parent directory of regular files, by bytes; *ret_n entries. */
static int dir_stats(const struct readset *rs, const struct report *r, struct dirstat **ret, size_t *ret_n)
{
        struct dirstat *d = calloc(rs->n_files ? rs->n_files : 1, sizeof(*d));
        size_t n = 0, m = 0;

        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                const char *p = rs->files[i].path, *slash = strrchr(p, '/');
                if (rs->files[i].kind != RS_FILE_REGULAR || !slash)
                        continue;
                d[n].dir = strndup(p, slash == p ? 1 : (size_t)(slash - p));
                if (!d[n].dir) {
                        for (size_t j = 0; j < n; j++)
                                free(d[j].dir);
                        free(d);
                        return -ENOMEM;
                }
                d[n].bytes = r->files[i].bytes;
                d[n].ranges = r->files[i].ranges;
                d[n].files = 1;
                n++;
        }
        qsort_safe(d, n, sizeof(*d), cmp_dir_name);
        for (size_t i = 0; i < n; i++) {
                if (m > 0 && strcmp(d[m - 1].dir, d[i].dir) == 0) {
                        d[m - 1].bytes += d[i].bytes;
                        d[m - 1].ranges += d[i].ranges;
                        d[m - 1].files++;
                        free(d[i].dir);
                        continue;
                }
                d[m++] = d[i];
        }
        qsort_safe(d, m, sizeof(*d), cmp_dir_bytes);
        *ret = d;
        *ret_n = m;
        return 0;
}

static int cmp_dir_ranges(const void *a, const void *b, void *userdata)
{
        const struct dirstat *d = userdata;
        const struct dirstat *x = &d[*(const size_t *)a], *y = &d[*(const size_t *)b];
        return x->ranges < y->ranges ? 1 : x->ranges > y->ranges ? -1 : strcmp(x->dir, y->dir);
}

/* The directories' indices, most ranges first. */
static size_t *dirs_by_ranges(struct dirstat *d, size_t n)
{
        size_t *k = malloc((n ? n : 1) * sizeof(*k));

        if (!k)
                return NULL;
        for (size_t i = 0; i < n; i++)
                k[i] = i;
        if (n > 1)
                qsort_r(k, n, sizeof(*k), cmp_dir_ranges, d);
        return k;
}

static void dir_stats_free(struct dirstat *d, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(d[i].dir);
        free(d);
}

/* Files ordered by a key, descending. */
struct fkey {
        uint32_t file;
        double key;
};

static int cmp_fkey(const void *a, const void *b)
{
        const struct fkey *x = a, *y = b;
        /* keys are finite (the model's profiles are bounded); NaN would sort last */
        bool xn = isnan(x->key), yn = isnan(y->key);
        if (xn != yn)
                return xn ? 1 : -1;
        if (!xn && x->key != y->key)
                return x->key < y->key ? 1 : -1;
        return x->file < y->file ? -1 : x->file > y->file;
}

static struct fkey *files_by(const struct readset *rs, const struct report *r, int what)
{
        struct fkey *k = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*k));

        if (!k)
                return NULL;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rp_file_stats *s = &r->files[i];
                k[i].file = (uint32_t)i;
                k[i].key = what == 0 ? (double)s->bytes : what == 1 ? (double)s->ranges : s->plain_s;
        }
        qsort_safe(k, rs->n_files, sizeof(*k), cmp_fkey);
        return k;
}

/* The last `width` characters of a path or command, made printable, with
 * "..." in front when cut.  Always returns buf. */
static const char *tail(const char *s, size_t width, char *buf, size_t size)
{
        char tmp[4 * PATH_MAX];
        size_t n;

        printable(s, tmp, sizeof(tmp));
        n = strlen(tmp);
        if (n <= width || width < 4)
                snprintf(buf, size, "%s", tmp);
        else
                snprintf(buf, size, "...%s", tmp + n - (width - 3));
        return buf;
}

/* A file's name in the report: metadata read through the block device is
 * marked as such, like readset show does. */
static const char *label(const struct rs_file *f, size_t width, char *buf, size_t size)
{
        char tmp[PATH_MAX + 16];

        if (f->kind != RS_FILE_BLOCKDEV)
                return tail(f->path, width, buf, size);
        snprintf(tmp, sizeof(tmp), "%s [metadata]", f->path);
        return tail(tmp, width, buf, size);
}

static const char *secs(double s, char buf[static 32])
{
        if (s < 0.001)
                snprintf(buf, 32, "%.0f us", s * 1e6);
        else if (s < 1)
                snprintf(buf, 32, "%.0f ms", s * 1e3);
        else if (s < 100)
                snprintf(buf, 32, "%.2f s", s);
        else
                snprintf(buf, 32, "%.0f s", s);
        return buf;
}

static const char *const hist_names[_RP_HIST_MAX] = {
        "contiguous", "<1MiB", "<16MiB", "<256MiB", "<4GiB", ">=4GiB", "unknown",
};
static const char *const hist_keys[_RP_HIST_MAX] = {
        "contiguous", "under_1m", "under_16m", "under_256m", "under_4g", "far", "unknown",
};

struct column {
        struct cost_profile profile;
        struct rp_scenarios s;
};

struct finding_ctx {
        const struct readset *rs;
        const struct report *r;
        const struct column *ref;
        struct fkey *by_cost;
};

/* Plain-language findings, one per line in lines (each rule adds at most
 * one: fewer rules than MAX_FINDINGS). */
static size_t findings(const struct finding_ctx *c, char lines[MAX_FINDINGS][256])
{
        const struct readset *rs = c->rs;
        const struct report *r = c->r;
        size_t n = 0;
        char b1[32], b2[32], b3[32];

        if (c->ref && c->by_cost && c->ref->s.plain.seconds > 0) {
                double total = c->ref->s.plain.seconds, acc = 0;
                uint64_t small = 0, ranges = 0, bytes = 0;
                size_t k = 0;
                while (k < rs->n_files && acc < 0.5 * total && k < 10) {
                        const struct rp_file_stats *s = &r->files[c->by_cost[k].file];
                        acc += s->plain_s;
                        small += s->small_ranges;
                        ranges += s->ranges;
                        bytes += s->bytes;
                        k++;
                }
                if (k > 0 && k <= 5 && rs->n_files > 2 * k)
                        snprintf(lines[n++], 256, "%.0f%% of the predicted time on %s goes to %zu file%s read "
                                 "in %s pieces on average (%" PRIu64 " reads, %.0f%% of them <= 16 KiB)",
                                 100 * acc / total, c->ref->profile.name, k, k == 1 ? "" : "s",
                                 format_bytes(ranges ? bytes / ranges : 0, b1), ranges,
                                 ranges ? 100.0 * (double)small / (double)ranges : 0);
        }
        if (r->alt.switches >= 8) {
                char p1[64], p2[64];
                snprintf(lines[n++], 256, "two files %s apart alternate %" PRIu64 " times: %s and %s",
                         format_bytes(r->alt.distance, b1), r->alt.switches,
                         tail(rs->files[r->alt.a].path, 28, p1, sizeof(p1)),
                         tail(rs->files[r->alt.b].path, 28, p2, sizeof(p2)));
        }
        if (c->ref && c->ref->s.plain.requests && c->ref->s.plain_meta_requests * 10 >= c->ref->s.plain.requests)
                snprintf(lines[n++], 256, "metadata (inodes, directories) is %.0f%% of the requests: replay "
                         "warms it first, sorted by position",
                         100.0 * (double)c->ref->s.plain_meta_requests / (double)c->ref->s.plain.requests);
        uint64_t moves = 0;
        for (int i = RP_HIST_1M; i <= RP_HIST_FAR; i++)
                moves += r->hist[i];
        {
                uint64_t seeks = r->hist[RP_HIST_16M] + r->hist[RP_HIST_256M] + r->hist[RP_HIST_4G] + r->hist[RP_HIST_FAR];
                if (c->ref && c->ref->profile.rotational && seeks >= 16 && c->ref->s.plain.seconds > 0 &&
                    c->ref->s.plain.positioning_s * 2 >= c->ref->s.plain.seconds)
                        snprintf(lines[n++], 256, "the head moves %" PRIu64 " times by 1 MiB or more in first-access "
                                 "order: positioning is %.0f%% of the %s predicted on %s; replay reads in one sweep "
                                 "by position", seeks, 100 * c->ref->s.plain.positioning_s / c->ref->s.plain.seconds,
                                 secs(c->ref->s.plain.seconds, b1), c->ref->profile.name);
        }
        if (r->totals.ranges && r->small_ranges * 2 >= r->totals.ranges)
                snprintf(lines[n++], 256, "%.0f%% of the %" PRIu64 " reads are 16 KiB or less: each pays the "
                         "device's per-request cost", 100.0 * (double)r->small_ranges / (double)r->totals.ranges,
                         r->totals.ranges);
        if (r->totals.bytes && r->totals.accessed_bytes * 10 < r->totals.bytes * 7)
                snprintf(lines[n++], 256, "%.0f%% of the bytes were read ahead and never used by the program "
                         "(%s of %s)", 100.0 - 100.0 * (double)r->totals.accessed_bytes / (double)r->totals.bytes,
                         format_bytes(r->totals.bytes - r->totals.accessed_bytes, b1),
                         format_bytes(r->totals.bytes, b2));
        if (c->ref && c->ref->s.plain.seconds > 0 && c->ref->s.replay.seconds > 0)
                snprintf(lines[n++], 256, "on %s: %s now, %s with readset replay (%.1fx), %s after a contiguous "
                         "layout", c->ref->profile.name, secs(c->ref->s.plain.seconds, b1),
                         secs(c->ref->s.replay.seconds, b2), c->ref->s.plain.seconds / c->ref->s.replay.seconds,
                         secs(c->ref->s.layout.seconds, b3));
        if (r->totals.unresolved_files || r->totals.deleted_files)
                snprintf(lines[n++], 256, "%" PRIu64 " files could not be named and %" PRIu64 " were deleted: "
                         "replay cannot warm them", r->totals.unresolved_files, r->totals.deleted_files);
        if (moves == 0 && r->hist[RP_HIST_UNKNOWN] > 0)
                snprintf(lines[n++], 256, "positions on disk are unknown (no FIEMAP, or the files changed): the "
                         "estimates assume every read is a random one");
        return n;
}

static void print_scenarios_json(struct json *j, const char *key, const struct cost_result *c)
{
        json_object_open(j, key);
        json_double(j, "seconds", c->seconds);
        json_double(j, "positioning_s", c->positioning_s);
        json_double(j, "transfer_s", c->transfer_s);
        json_double(j, "metadata_s", c->metadata_s);
        json_double(j, "host_s", c->host_s);
        json_u64(j, "requests", c->requests);
        json_u64(j, "bytes", c->bytes);
        json_u64(j, "moves", c->moves);
        json_u64(j, "seeks", c->seeks);
        json_object_close(j);
}

struct out {
        const char *path;
        const struct readset *rs;
        const struct report *r;
        struct column *cols;
        size_t n_cols;
        size_t top;
        uint64_t extent_skipped;
        struct dirstat *dirs;         /* most bytes first */
        size_t n_dirs;
        size_t *dir_by_ranges;
        struct fkey *by_bytes, *by_ranges, *by_cost;
};

static void print_json(const struct out *o)
{
        const struct readset *rs = o->rs;
        const struct report *r = o->r;
        char lines[MAX_FINDINGS][256];
        struct finding_ctx fc = { rs, r, o->n_cols ? &o->cols[o->n_cols - 1] : NULL, o->by_cost };
        size_t nf = findings(&fc, lines);
        struct json j;

        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_string(&j, "readset", o->path);
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
                const struct rs_file *f = &rs->files[o->by_bytes[i].file];
                const struct rp_file_stats *s = &r->files[o->by_bytes[i].file];
                json_object_open(&j, NULL);
                json_string(&j, "path", f->path);
                json_u64(&j, "bytes", s->bytes);
                json_u64(&j, "ranges", s->ranges);
                json_u64(&j, "extents", s->extents);
                json_u64(&j, "extents_touched", s->extents_touched);
                json_object_close(&j);
        }
        json_array_close(&j);
        json_array_open(&j, "top_files_by_ranges");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rs_file *f = &rs->files[o->by_ranges[i].file];
                json_object_open(&j, NULL);
                json_string(&j, "path", f->path);
                json_u64(&j, "ranges", r->files[o->by_ranges[i].file].ranges);
                json_u64(&j, "bytes", r->files[o->by_ranges[i].file].bytes);
                json_object_close(&j);
        }
        json_array_close(&j);
        for (int by = 0; by < 2; by++) {
                json_array_open(&j, by == 0 ? "top_directories_by_bytes" : "top_directories_by_ranges");
                for (size_t i = 0; i < MIN(o->top, o->n_dirs); i++) {
                        const struct dirstat *d = &o->dirs[by == 0 ? i : o->dir_by_ranges[i]];
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
                json_object_open(&j, NULL);
                json_string(&j, "device", o->cols[i].profile.name);
                json_bool(&j, "reference", i == o->n_cols - 1);
                json_bool(&j, "rotational", o->cols[i].profile.rotational);
                print_scenarios_json(&j, "plain", &o->cols[i].s.plain);
                print_scenarios_json(&j, "replay", &o->cols[i].s.replay);
                print_scenarios_json(&j, "layout", &o->cols[i].s.layout);
                print_scenarios_json(&j, "sequential", &o->cols[i].s.sequential);
                json_object_close(&j);
        }
        json_array_close(&j);
        json_array_open(&j, "findings");
        for (size_t i = 0; i < nf; i++)
                json_string(&j, NULL, lines[i]);
        json_array_close(&j);
        json_object_close(&j);
        json_end(&j);
}

/* Wrap s at 76 columns with a 4-space hanging indent. */
static void print_wrapped(const char *first, const char *s)
{
        size_t col = printf("%s", first), indent = strlen(first);

        while (*s) {
                size_t w = strcspn(s, " ");
                if (col + w + 1 > 79 && col > indent) {
                        printf("\n%*s", (int)indent, "");
                        col = indent;
                } else if (col > indent) {
                        putchar(' ');
                        col++;
                }
                col += printf("%.*s", (int)w, s);
                s += w;
                s += strspn(s, " ");
        }
        putchar('\n');
}

static void print_text(const struct out *o)
{
        const struct readset *rs = o->rs;
        const struct report *r = o->r;
        char b1[32], b2[32], b3[32], pb[128];
        char lines[MAX_FINDINGS][256];
        struct finding_ctx fc = { rs, r, o->n_cols ? &o->cols[o->n_cols - 1] : NULL, o->by_cost };
        size_t nf = findings(&fc, lines);

        printf("readset report: %s\n", tail(o->path, 63, pb, sizeof(pb)));
        if (rs->command && *rs->command)
                printf("  command   %s\n", tail(rs->command, 68, pb, sizeof(pb)));
        {
                char when[32] = "";
                time_t t = (time_t)rs->created_unix;
                struct tm tm;
                if (gmtime_r(&t, &tm))
                        strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
                printf("  recorded  %s, %s, %s cache\n", when, secs((double)rs->duration_us / 1e6, b1),
                       rs->rec_flags & RS_REC_COLD ? "cold" : "warm");
        }
        printf("  read      %s in %" PRIu64 " ranges (%" PRIu64 " pages) of %" PRIu64 " files\n",
               format_bytes(r->totals.bytes, b1), r->totals.ranges, r->pages, r->totals.files);
        if (r->file_bytes) {
                char line[256];
                snprintf(line, sizeof(line), "%.0f%% of the %s those files hold; %s used by the program",
                         100.0 * (double)r->data_bytes / (double)r->file_bytes, format_bytes(r->file_bytes, b1),
                         format_bytes(r->totals.accessed_bytes, b2));
                print_wrapped("            ", line);
        }
        printf("  metadata  %s in %" PRIu64 " ranges; data %s in %" PRIu64 " ranges\n",
               format_bytes(r->meta_bytes, b1), r->meta_ranges, format_bytes(r->data_bytes, b2), r->data_ranges);
        if (r->totals.lookups)
                printf("  lookups   %" PRIu64 " (%" PRIu64 " failed)\n", r->totals.lookups, r->totals.lookups_failed);

        printf("\nTop files by bytes                               bytes   ranges  extents\n");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rp_file_stats *s = &r->files[o->by_bytes[i].file];
                if (!s->bytes)
                        break;
                printf("  %-44s %10s %8" PRIu64 " %8" PRIu64 "\n",
                       label(&rs->files[o->by_bytes[i].file], 44, pb, sizeof(pb)), format_bytes(s->bytes, b1),
                       s->ranges, s->extents_touched);
        }
        printf("\nTop files by ranges                             ranges    bytes   <=16K\n");
        for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                const struct rp_file_stats *s = &r->files[o->by_ranges[i].file];
                if (!s->ranges)
                        break;
                printf("  %-44s %8" PRIu64 " %10s %6" PRIu64 "\n",
                       label(&rs->files[o->by_ranges[i].file], 44, pb, sizeof(pb)), s->ranges,
                       format_bytes(s->bytes, b1), s->small_ranges);
        }
        printf("\nTop directories by bytes                         bytes    files   ranges\n");
        for (size_t i = 0; i < MIN(o->top, o->n_dirs); i++)
                printf("  %-44s %10s %8" PRIu64 " %8" PRIu64 "\n", tail(o->dirs[i].dir, 44, pb, sizeof(pb)),
                       format_bytes(o->dirs[i].bytes, b1), o->dirs[i].files, o->dirs[i].ranges);
        printf("\nTop directories by ranges                       ranges    files    bytes\n");
        for (size_t i = 0; i < MIN(o->top, o->n_dirs); i++) {
                const struct dirstat *d = &o->dirs[o->dir_by_ranges[i]];
                printf("  %-44s %8" PRIu64 " %8" PRIu64 " %10s\n", tail(d->dir, 44, pb, sizeof(pb)), d->ranges,
                       d->files, format_bytes(d->bytes, b1));
        }

        printf("\nOn the device (FIEMAP)\n");
        {
                char line[512], h[256];
                size_t n = 0;
                snprintf(line, sizeof(line), "%" PRIu64 " extents touched; %zu pieces read in first-access order, "
                         "on device %u:%u", r->extents_touched, r->n_pieces, major(r->main_dev), minor(r->main_dev));
                if (r->other_dev_pieces)
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %" PRIu64 " pieces (%s) on "
                                 "other devices", r->other_dev_pieces, format_bytes(r->other_dev_bytes, b1));
                if (o->extent_skipped)
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %" PRIu64 " files without "
                                 "positions", o->extent_skipped);
                print_wrapped("  ", line);
                printf("  moves of the head between pieces, by distance:\n");
                for (int i = 0; i < _RP_HIST_MAX; i++)
                        n += (size_t)snprintf(h + n, sizeof(h) - n, "%s=%" PRIu64 "%s", hist_names[i], r->hist[i],
                                              i + 1 < _RP_HIST_MAX ? ", " : "");
                print_wrapped("    ", h);
        }
        {
                /* fragmentation of the hottest files: the extents their reads touched */
                struct fkey *k = o->by_bytes;
                bool header = false;
                for (size_t i = 0; i < MIN(o->top, rs->n_files); i++) {
                        const struct rp_file_stats *s = &r->files[k[i].file];
                        if (s->extents_touched < 2)
                                continue;
                        if (!header)
                                printf("  fragmented hot files (extents touched):\n");
                        header = true;
                        printf("    %-52s %8" PRIu64 " of %" PRIu64 "\n",
                               tail(rs->files[k[i].file].path, 52, pb, sizeof(pb)), s->extents_touched, s->extents);
                }
        }

        if (o->n_cols) {
                printf("\nPredicted read time          plain cold start   readset replay    after layout\n");
                for (size_t i = 0; i < o->n_cols; i++) {
                        const struct rp_scenarios *s = &o->cols[i].s;
                        printf("  %-28s %16s %16s %15s\n", tail(o->cols[i].profile.name, 28, pb, sizeof(pb)),
                               secs(s->plain.seconds, b1), secs(s->replay.seconds, b2),
                               secs(s->layout.seconds, b3));
                }
                for (size_t i = 0; i < o->n_cols; i++) {
                        const struct rp_scenarios *s = &o->cols[i].s;
                        char line[256];
                        snprintf(line, sizeof(line), "%s: %" PRIu64 " requests plain (%" PRIu64 " metadata), %"
                                 PRIu64 " replayed", tail(o->cols[i].profile.name, 28, pb, sizeof(pb)), s->plain.requests,
                                 s->plain_meta_requests, s->replay.requests);
                        print_wrapped("  ", line);
                }
        }
        if (nf) {
                printf("\nFindings\n");
                for (size_t i = 0; i < nf; i++)
                        print_wrapped("  - ", lines[i]);
        }
}

int cmd_report(int argc, char **argv)
{
        static const struct option opts[] = {
                { "device", required_argument, NULL, 'd' },
                { "profile", required_argument, NULL, 'p' },
                { "no-probe", no_argument, NULL, 'P' },
                { "top", required_argument, NULL, 'n' },
                { "json", no_argument, NULL, 'j' },
                { "svg", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *device = "hdd", *profile = NULL, *svg = NULL;
        bool json = false, may_probe = true;
        uint64_t top = 5;
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_report_ struct report *r = NULL;
        struct rp_layout *layouts = NULL;
        struct column cols[2] = {};
        struct cost_profile ref;
        struct out o = {};
        struct device_profile local_dev;
        char path[PATH_MAX];
        const char *first = NULL;
        int c, ret = -1, e;

        while ((c = getopt_long(argc, argv, "d:p:n:js:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'd': device = optarg; break;
                case 'p': profile = optarg; break;
                case 'P': may_probe = false; break;
                case 'j': json = true; break;
                case 's': svg = optarg; break;
                case 'n':
                        if (parse_u64(optarg, &top) < 0 || top < 1 || top > 1000)
                                return log_usage("report", "invalid --top '%s' (1..1000)", optarg);
                        break;
                case 'h':
                        report_help();
                        return 0;
                default:
                        return log_usage("report", "invalid option");
                }
        }
        if (optind + 1 != argc)
                return log_usage("report", optind == argc ? "missing read set file" : "too many arguments");
        o.path = argv[optind];
        if (load_readset(o.path, &rs) < 0)
                return -1;

        /* profiles first: a bad option fails before any work */
        if (profile_path(device, path, sizeof(path)) < 0)
                return log_usage("report", "no reference profile '%s' (hdd, usb, sd, nvme, share or a file)", device);
        e = load_profile(path, device, &ref);
        if (e < 0)
                return log_errno(e, "cannot use the profile '%s' (%s)", device, path);
        snprintf(ref.name, sizeof(ref.name), "%.60s", tail(device, 40, path, sizeof(path)));

        /* this machine's device: the one most bytes come from */
        e = readset_main_file(rs, &first);
        if (e < 0)
                return log_errno(e, "out of memory");
        if (!first || device_profile_for_path(first, &local_dev) < 0)
                device_profile_solid(&local_dev);
        /* this machine first, when its profile is known; the reference last */
        if (profile) {
                e = load_profile(profile, "this machine", &cols[0].profile);
                if (e < 0)
                        return log_errno(e, "cannot use the profile '%s'", profile);
                o.n_cols = 1;
        } else if (first) {
                _cleanup_free_ char *dir = strndup(first, (size_t)(strrchr(first, '/') - first));
                if (!dir)
                        return log_errno(-ENOMEM, "out of memory");
                e = local_profile(*dir ? dir : "/", may_probe, &cols[0].profile);
                if (e >= 0)
                        o.n_cols = 1;
                else if (may_probe)
                        log_warning_errno(e, "no profile of this machine's device; reference device only");
        }
        if (o.n_cols == 1)
                snprintf(cols[0].profile.name, sizeof(cols[0].profile.name), "this machine (%.40s)",
                         first ? local_dev.name : "?");
        cols[o.n_cols++].profile = ref;

        layouts = calloc(rs->n_files ? rs->n_files : 1, sizeof(*layouts));
        if (!layouts)
                return log_errno(-ENOMEM, "out of memory");
        for (size_t i = 0; i < rs->n_files; i++) {
                e = file_extents(&rs->files[i], &layouts[i], &o.extent_skipped);
                if (e < 0) {
                        log_errno(e, "cannot map the files' extents");
                        goto out;
                }
        }
        e = report_build(rs, layouts, MIN(local_dev.readahead_cap, local_dev.max_request), &r);
        if (e < 0) {
                if (e == -E2BIG)
                        log_error("the read set is too large to analyse (more than %u pieces)", RP_MAX_PIECES);
                else
                        log_errno(e, "cannot analyse the read set");
                goto out;
        }
        for (size_t i = 0; i < o.n_cols; i++) {
                e = report_predict(r, rs, layouts, &cols[i].profile, i + 1 < o.n_cols, i == o.n_cols - 1, &cols[i].s);
                if (e < 0) {
                        log_errno(e, "cannot predict the cost");
                        goto out;
                }
        }
        o.rs = rs;
        o.r = r;
        o.cols = cols;
        o.top = top;
        o.by_bytes = files_by(rs, r, 0);
        o.by_ranges = files_by(rs, r, 1);
        o.by_cost = files_by(rs, r, 2);
        if (!o.by_bytes || !o.by_ranges || !o.by_cost || dir_stats(rs, r, &o.dirs, &o.n_dirs) < 0 ||
            !(o.dir_by_ranges = dirs_by_ranges(o.dirs, o.n_dirs))) {
                log_errno(-ENOMEM, "out of memory");
                goto out;
        }
        if (svg) {
                e = report_svg_write(svg, rs, r);
                if (e < 0) {
                        log_errno(e, "cannot write '%s'", svg);
                        goto out;
                }
        }
        if (json)
                print_json(&o);
        else
                print_text(&o);
        ret = 0;
out:
        for (size_t i = 0; i < rs->n_files && layouts; i++)
                free(layouts[i].extents);
        free(layouts);
        free(o.by_bytes);
        free(o.by_ranges);
        free(o.by_cost);
        dir_stats_free(o.dirs, o.n_dirs);
        free(o.dir_by_ranges);
        return ret;
}
