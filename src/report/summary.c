/* SPDX-License-Identifier: MIT */
/* What the report lists and says: files and directories ranked, and the
 * plain-language findings, from the analysis and the predictions. */
#include "report/summary.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/patterns.h"
#include "util/util.h"
#include "util/banned.h"

static int cmp_dir_name(const void *a, const void *b)
{
        return strcmp(((const struct rp_dirstat *)a)->dir, ((const struct rp_dirstat *)b)->dir);
}

static int cmp_dir_bytes(const void *a, const void *b)
{
        const struct rp_dirstat *x = a, *y = b;
        return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->dir, y->dir);
}

/* Per parent directory of regular files, by bytes; *ret_n entries. */
static int dir_stats(const struct readset *rs, const struct report *r, struct rp_dirstat **ret, size_t *ret_n)
{
        struct rp_dirstat *d = calloc(rs->n_files ? rs->n_files : 1, sizeof(*d));
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
        const struct rp_dirstat *d = userdata;
        const struct rp_dirstat *x = &d[*(const size_t *)a], *y = &d[*(const size_t *)b];
        return x->ranges < y->ranges ? 1 : x->ranges > y->ranges ? -1 : strcmp(x->dir, y->dir);
}

/* The directories' indices, most ranges first. */
static size_t *dirs_by_ranges(struct rp_dirstat *d, size_t n)
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

static void dir_stats_free(struct rp_dirstat *d, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(d[i].dir);
        free(d);
}

static int cmp_fkey(const void *a, const void *b)
{
        const struct rp_rank *x = a, *y = b;
        /* keys are finite (the model's profiles are bounded); NaN would sort last */
        bool xn = isnan(x->key), yn = isnan(y->key);
        if (xn != yn)
                return xn ? 1 : -1;
        if (!xn && x->key != y->key)
                return x->key < y->key ? 1 : -1;
        return x->file < y->file ? -1 : x->file > y->file;
}

static struct rp_rank *files_by(const struct readset *rs, const struct report *r, int what)
{
        struct rp_rank *k = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*k));

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

/* The last `width` columns of a path or command, made printable, with
 * "..." in front when cut (printable_tail).  Always returns buf. */
const char *rp_tail(const char *s, size_t width, char *buf, size_t size)
{
        return printable_tail(s, width, buf, size);
}

/* A finding and what it costs on the reference device (0: a statement). */
struct finding {
        double seconds;
        char text[REPORT_FINDING_MAX];
};

/* Plain-language findings, one per line in lines (each rule adds at most
 * one: fewer rules than REPORT_MAX_FINDINGS), the most costly first.  ref:
 * the reference device's column (may be NULL). */
struct finding_ctx {
        const struct readset *rs;
        const struct report *r;
        const struct report_column *ref;
        const struct rp_rank *by_cost;
};

/* "N files could not be named and M were deleted", each part only when
 * there is one. */
static const char *unwarmable(const struct readset_totals *t, char *buf, size_t size)
{
        uint64_t u = t->unresolved_files, d = t->deleted_files;

        if (u && d)
                snprintf(buf, size, "%" PRIu64 " file%s could not be named and %" PRIu64 " %s deleted", u,
                         u == 1 ? "" : "s", d, d == 1 ? "was" : "were");
        else if (u)
                snprintf(buf, size, "%" PRIu64 " file%s could not be named", u, u == 1 ? "" : "s");
        else
                snprintf(buf, size, "%" PRIu64 " file%s deleted", d, d == 1 ? " was" : "s were");
        return buf;
}

/* The next finding's line, costing s seconds on the reference device
 * (0: a statement, not a cost). */
static char *next(struct finding *f, size_t *n, double s)
{
        f[*n].seconds = s;
        return f[(*n)++].text;
}

static int findings(const struct finding_ctx *c, char lines[REPORT_MAX_FINDINGS][REPORT_FINDING_MAX])
{
        struct finding f[REPORT_MAX_FINDINGS];
        const struct cost_profile *rp = c->ref ? &c->ref->profile : NULL;
        struct pattern pt[_PATTERN_MAX];
        double left = c->ref ? c->ref->s.lookups_plain.seconds : 0;   /* lookups no pattern explains */
        const struct readset *rs = c->rs;
        const struct report *r = c->r;
        size_t n = 0;
        char b1[96], b2[32], b3[32];

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
                        snprintf(next(f, &n, acc), REPORT_FINDING_MAX,
                                 "%.0f%% of the predicted time on %s goes to %zu file%s read "
                                 "in %s pieces on average (%" PRIu64 " reads, %.0f%% of them <= 16 KiB)",
                                 100 * acc / total, c->ref->profile.name, k, k == 1 ? "" : "s",
                                 format_bytes(ranges ? bytes / ranges : 0, b1), ranges,
                                 ranges ? 100.0 * (double)small / (double)ranges : 0);
        }
        if (r->alt.switches >= 8) {
                char p1[64], p2[64];
                double s = rp && rp->rotational ? (double)r->alt.switches * rp->lat_us / 1e6 : 0;
                snprintf(next(f, &n, s), REPORT_FINDING_MAX, "two files %s apart alternate %" PRIu64 " times: %s and %s",
                         format_bytes(r->alt.distance, b1), r->alt.switches,
                         rp_tail(rs->files[r->alt.a].path, 28, p1, sizeof(p1)),
                         rp_tail(rs->files[r->alt.b].path, 28, p2, sizeof(p2)));
        }
        if (c->ref && c->ref->s.plain.requests && c->ref->s.plain_meta_requests * 10 >= c->ref->s.plain.requests)
                snprintf(next(f, &n, (double)c->ref->s.plain_meta_requests * rp->lat_us / 1e6), REPORT_FINDING_MAX,
                         "metadata (inodes, directories) is %.0f%% of the requests: replay "
                         "warms it first, sorted by position",
                         100.0 * (double)c->ref->s.plain_meta_requests / (double)c->ref->s.plain.requests);
        uint64_t moves = 0;
        for (int i = RP_HIST_1M; i <= RP_HIST_FAR; i++)
                moves += r->hist[i];
        {
                uint64_t seeks = r->hist[RP_HIST_16M] + r->hist[RP_HIST_256M] + r->hist[RP_HIST_4G] + r->hist[RP_HIST_FAR];
                if (c->ref && c->ref->profile.rotational && seeks >= 16 && c->ref->s.plain.seconds > 0 &&
                    c->ref->s.plain.positioning_s * 2 >= c->ref->s.plain.seconds)
                        snprintf(next(f, &n, c->ref->s.plain.positioning_s), REPORT_FINDING_MAX,
                                 "the head moves %" PRIu64 " times by 1 MiB or more in first-access "
                                 "order: positioning is %.0f%% of the %s predicted on %s; replay reads in one sweep "
                                 "by position", seeks, 100 * c->ref->s.plain.positioning_s / c->ref->s.plain.seconds,
                                 format_seconds(c->ref->s.plain.seconds, b1), c->ref->profile.name);
        }
        if (r->totals.ranges && r->small_ranges * 2 >= r->totals.ranges)
                snprintf(next(f, &n, rp ? (double)r->small_ranges * rp->lat_us / 1e6 : 0), REPORT_FINDING_MAX,
                         "%.0f%% of the %" PRIu64 " reads are 16 KiB or less: each pays the "
                         "device's per-request cost", 100.0 * (double)r->small_ranges / (double)r->totals.ranges,
                         r->totals.ranges);
        if (r->totals.bytes && r->totals.accessed_bytes * 10 < r->totals.bytes * 7)
                snprintf(next(f, &n, rp ? (double)(r->totals.bytes - r->totals.accessed_bytes) / rp->seq_bps : 0),
                         REPORT_FINDING_MAX, "%.0f%% of the bytes were read ahead and never used by the program "
                         "(%s of %s)", 100.0 - 100.0 * (double)r->totals.accessed_bytes / (double)r->totals.bytes,
                         format_bytes(r->totals.bytes - r->totals.accessed_bytes, b1),
                         format_bytes(r->totals.bytes, b2));
        /* on a share: the patterns that multiply its lookups (the
         * reference column costs every path as if there), then the lookups
         * as a whole, costing what the patterns leave */
        if (c->ref && c->ref->s.lookups_costed && r->lookup_trips) {
                int k = patterns_find(rs, r->lookup_trips, rp, "/", c->ref->s.plain.seconds, pt);
                if (k < 0)
                        return k;
                for (int i = 0; i < k && n < REPORT_MAX_FINDINGS; i++) {
                        snprintf(next(f, &n, pt[i].seconds), REPORT_FINDING_MAX, "%s", pt[i].text);
                        left -= pt[i].seconds;
                }
        }
        if (c->ref && c->ref->s.lookups_costed && c->ref->s.plain.seconds > 0 &&
            c->ref->s.lookups_plain.seconds >= PATTERN_MIN_SHARE * c->ref->s.plain.seconds) {
                const struct client_cost *lk = &c->ref->s.lookups_plain;
                snprintf(next(f, &n, MAX(left, 0.0)), REPORT_FINDING_MAX,
                         "lookups are %.0f%% of the %s predicted on %s: %" PRIu64
                         " round trips to its %s client (%" PRIu64 " names, %" PRIu64 " attributes, %" PRIu64
                         " failed, %" PRIu64 " opens, %" PRIu64 " listings); with readset run the start waits for %"
                         PRIu64 " of them (%s)", 100 * lk->seconds / c->ref->s.plain.seconds,
                         format_seconds(c->ref->s.plain.seconds, b2), c->ref->profile.name, lk->round_trips,
                         c->ref->profile.client.name, lk->trips[CLIENT_NAME], lk->trips[CLIENT_ATTR],
                         lk->trips[CLIENT_FAILED], lk->trips[CLIENT_OPEN], lk->trips[CLIENT_LISTING],
                         c->ref->s.lookups_warmed.round_trips, format_seconds(c->ref->s.lookups_warmed.seconds, b3));
        }
        if (c->ref && c->ref->s.plain.seconds > 0 && c->ref->s.replay.seconds > 0)
                snprintf(next(f, &n, 0), REPORT_FINDING_MAX,
                         "on %s: %s now, %s with readset replay (%.1fx), %s after a contiguous "
                         "layout", c->ref->profile.name, format_seconds(c->ref->s.plain.seconds, b1),
                         format_seconds(c->ref->s.replay.seconds, b2), c->ref->s.plain.seconds / c->ref->s.replay.seconds,
                         format_seconds(c->ref->s.layout.seconds, b3));
        if (r->totals.unresolved_files || r->totals.deleted_files)
                snprintf(next(f, &n, 0), REPORT_FINDING_MAX, "%s: replay cannot warm %s",
                         unwarmable(&r->totals, b1, sizeof(b1)),
                         r->totals.unresolved_files + r->totals.deleted_files == 1 ? "it" : "them");
        if (moves == 0 && r->hist[RP_HIST_UNKNOWN] > 0)
                snprintf(next(f, &n, 0), REPORT_FINDING_MAX,
                         "positions on disk are unknown (no FIEMAP, the files changed or are not "
                         "written back yet): the estimates assume each file lies in one piece, reached by a "
                         "random read");
        /* the finding that costs most first; statements after, in order */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && f[j].seconds > f[j - 1].seconds; j--) {
                        struct finding x = f[j];
                        f[j] = f[j - 1];
                        f[j - 1] = x;
                }
        for (size_t i = 0; i < n; i++)
                memcpy(lines[i], f[i].text, REPORT_FINDING_MAX);
        return (int)n;
}


int report_summarize(const struct readset *rs, const struct report *r, const struct report_column *ref,
                     struct report_summary *ret)
{
        struct report_summary s = { 0 };
        struct finding_ctx fc;
        int e;

        s.by_bytes = files_by(rs, r, 0);
        s.by_ranges = files_by(rs, r, 1);
        s.by_cost = files_by(rs, r, 2);
        if (!s.by_bytes || !s.by_ranges || !s.by_cost || dir_stats(rs, r, &s.dirs, &s.n_dirs) < 0 ||
            !(s.dir_by_ranges = dirs_by_ranges(s.dirs, s.n_dirs))) {
                report_summary_free(&s);
                return -ENOMEM;
        }
        fc = (struct finding_ctx){ rs, r, ref, s.by_cost };
        e = findings(&fc, s.findings);
        if (e < 0) {
                report_summary_free(&s);
                return e;
        }
        s.n_findings = (size_t)e;
        *ret = s;
        return 0;
}

void report_summary_free(struct report_summary *s)
{
        free(s->by_bytes);
        free(s->by_ranges);
        free(s->by_cost);
        dir_stats_free(s->dirs, s->n_dirs);
        free(s->dir_by_ranges);
        *s = (struct report_summary){ 0 };
}
