/* SPDX-License-Identifier: MIT */
#include "report/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/banned.h"

/* Geometry, in SVG user units (pixels). */
#define W 960
#define H 660
#define PX 90            /* plot left */
#define PW 820           /* plot width */
#define AY 50            /* access panel top */
#define AH 336           /* access panel height */
#define UY (AY + AH + 8) /* the "position unknown" strip */
#define UH 12
#define LY (UY + UH + 6) /* the lookup band: SVG_ROWS rows, each a half for */
#define LROW 12          /* the successful lookups over one for the failed */
#define LH (SVG_ROWS * LROW)
#define LMARK_W 2        /* a lookup's mark this wide; bucketed, a column */
#define LCELL_W 4        /* of this many pixels each (<= 1230 marks, ~0.3 MB) */
#define XT (LY + LH + 13) /* the time axis's labels */
#define CY 500           /* cumulative panel top */
#define CH 120
#define BAND_MIN 30      /* a band of the position axis is at least this high */
#define BREAK_PX 16      /* and the break between two bands this high */
#define TICK_PX 36       /* a tick at most every this many pixels of a band */
#define X_TICKS 8        /* at most this many steps across the time axis */
#define MAX_SINGLE 4000  /* pieces drawn one by one up to this many */
#define CELL_W 4         /* else aggregated into cells at least this large */
#define CELL_H 3
#define MAX_MARKS 8000   /* ... and at most this many marks (~1.3 MB) */
#define N_COLOURS 8

static const char *const colours[N_COLOURS] = {
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
};
#define COLOUR_OTHER "#9a9a9a"
#define COLOUR_META "#222222"
#define COLOUR_FOUND "#495057"
#define COLOUR_FAILED "#e03131"

/* XML text: escape the five characters, drop control characters and bytes
 * that are not UTF-8 text (paths are arbitrary bytes). */
static void put_text(FILE *f, const char *s)
{
        size_t n = strlen(s);

        /* a title names the end of a long path: at most 200 characters */
        if (n > 200) {
                fputs("...", f);
                s += n - 197;
        }
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                switch (*p) {
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                case '&': fputs("&amp;", f); break;
                case '"': fputs("&quot;", f); break;
                case '\'': fputs("&apos;", f); break;
                default:
                        if (*p < 0x20 || *p >= 0x80)
                                fputc('?', f);
                        else
                                fputc(*p, f);
                }
        }
}

/* The group a file is coloured by: its first `depth` path components. */
static size_t group_len(const char *path, int depth)
{
        size_t n = 0;

        for (int d = 0; d < depth; d++) {
                const char *slash = strchr(path + n + 1, '/');
                if (!slash)
                        return n ? n : strlen(path);
                n = (size_t)(slash - path);
        }
        return n;
}

struct group {
        const char *path;     /* points into a file's path */
        size_t len;
        uint64_t bytes;
};

static int cmp_group_name(const void *a, const void *b);

static int cmp_group_bytes(const void *a, const void *b)
{
        const struct group *x = a, *y = b;
        return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : cmp_group_name(a, b);
}

static int cmp_group_name(const void *a, const void *b)
{
        const struct group *x = a, *y = b;
        int c = memcmp(x->path, y->path, MIN(x->len, y->len));
        return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* Group the files by their first `depth` path components (n groups). */
static size_t group_at(const struct readset *rs, const struct report *r, int depth, struct group *g)
{
        size_t n = 0, m = 0;

        for (size_t i = 0; i < rs->n_files; i++) {
                const char *p = rs->files[i].path;
                if (rs->files[i].kind == RS_FILE_REGULAR && p[0] == '/')
                        g[n++] = (struct group){ p, group_len(p, depth), r->files[i].bytes };
        }
        qsort_safe(g, n, sizeof(*g), cmp_group_name);
        for (size_t i = 0; i < n; i++) {
                if (m > 0 && cmp_group_name(&g[m - 1], &g[i]) == 0) {
                        g[m - 1].bytes += g[i].bytes;
                        continue;
                }
                g[m++] = g[i];
        }
        return m;
}

/* Choose the grouping depth that separates the data best (the shallowest
 * where no group holds more than half the bytes, else the one whose
 * largest group is smallest), then give the largest groups a colour each:
 * file_group[i] = colour index, N_COLOURS for the rest, -1 for metadata. */
static int make_groups(const struct readset *rs, const struct report *r, int *file_group,
                       struct group *top, size_t *n_top)
{
        _cleanup_free_ struct group *g = calloc(rs->n_files ? rs->n_files : 1, sizeof(*g));
        uint64_t total = 0, best_max = UINT64_MAX;
        int best = 1;
        size_t n;

        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR)
                        total += r->files[i].bytes;
        for (int depth = 1; depth <= 8; depth++) {
                uint64_t max = 0;
                n = group_at(rs, r, depth, g);
                for (size_t i = 0; i < n; i++)
                        max = MAX(max, g[i].bytes);
                if (max < best_max) {
                        best_max = max;
                        best = depth;
                }
                if (n >= 3 && max * 2 <= total)
                        break;
        }
        n = group_at(rs, r, best, g);
        qsort_safe(g, n, sizeof(*g), cmp_group_bytes);
        *n_top = MIN(n, (size_t)N_COLOURS);
        memcpy(top, g, *n_top * sizeof(*g));
        for (size_t i = 0; i < rs->n_files; i++) {
                const char *p = rs->files[i].path;
                file_group[i] = rs->files[i].kind == RS_FILE_BLOCKDEV ? -1 : N_COLOURS;
                if (rs->files[i].kind != RS_FILE_REGULAR)
                        continue;
                for (size_t k = 0; k < *n_top; k++)
                        if (strncmp(p, top[k].path, top[k].len) == 0 && (p[top[k].len] == '/' || !p[top[k].len])) {
                                file_group[i] = (int)k;
                                break;
                        }
        }
        return 0;
}

static const char *colour_of(int group)
{
        return group < 0 ? COLOUR_META : group >= N_COLOURS ? COLOUR_OTHER : colours[group];
}

/* A piece's time, to the millisecond's thousandth: titles tell pieces apart. */
static void label_time(char buf[static 32], double us)
{
        if (us >= 1e6)
                snprintf(buf, 32, "%.6f s", us / 1e6);
        else
                snprintf(buf, 32, "%.3f ms", us / 1e3);
}

/* The smallest of 1, 2, 5 times a power of ten that is at least raw (> 0). */
static double nice_step(double raw)
{
        static const double d[] = { 1, 2, 5, 10 };
        double mag = 1;

        while (mag > raw)
                mag /= 10;
        while (mag * 10 <= raw)
                mag *= 10;
        for (size_t i = 0; i < ARRAY_SIZE(d); i++)
                if (d[i] * mag >= raw * (1 - 1e-9))
                        return d[i] * mag;
        return 10 * mag;
}

/* floor and ceil of v >= 0 without libm, a hair of rounding forgiven */
static double floor_pos(double v)
{
        double k = (double)(uint64_t)(v + 1e-9);
        return k;
}

static double ceil_pos(double v)
{
        double k = floor_pos(v);
        return k < v - 1e-9 ? k + 1 : k;
}

/* The ticks of a's step inside [lo, hi] (base units). */
static void axis_span(struct svg_axis *a, double lo, double hi)
{
        double k0 = ceil_pos(lo / a->unit_value / a->step), k1 = floor_pos(hi / a->unit_value / a->step);

        a->first = k0 * a->step;
        a->n = k1 >= k0 ? (unsigned)(k1 - k0) + 1 : 0;
        a->decimals = 0;
        for (double s = a->step; s < 1 - 1e-9 && a->decimals < 9; s *= 10)
                a->decimals++;
}

static void axis_in(struct svg_axis *a, double lo, double hi, unsigned max_ticks)
{
        if (hi <= lo)
                hi = lo + a->unit_value;
        a->step = nice_step((hi - lo) / a->unit_value / (max_ticks ? max_ticks : 1));
        axis_span(a, lo, hi);
}

void svg_axis_time(double lo, double hi, unsigned max_ticks, struct svg_axis *a)
{
        *a = (struct svg_axis){ 1, "\xc2\xb5s", 1, 0, 0, 0 };
        if (hi >= 1e6)
                *a = (struct svg_axis){ 1e6, "s", 1, 0, 0, 0 };
        else if (hi >= 1e3)
                *a = (struct svg_axis){ 1e3, "ms", 1, 0, 0, 0 };
        axis_in(a, lo, hi, max_ticks);
}

void svg_axis_bytes(double lo, double hi, unsigned max_ticks, struct svg_axis *a)
{
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
        double raw = (hi > lo ? hi - lo : 1) / (max_ticks ? max_ticks : 1);
        size_t u = ARRAY_SIZE(units) - 1;
        double v = (double)(1ull << (10 * u));

        while (u > 0 && (v > (hi > 1 ? hi : 1) || raw / v < 0.01)) {
                u--;
                v /= 1024;
        }
        *a = (struct svg_axis){ v, units[u], 1, 0, 0, 0 };
        axis_in(a, lo, hi, max_ticks);
}

double svg_axis_value(const struct svg_axis *a, unsigned i)
{
        return (a->first + a->step * i) * a->unit_value;
}

const char *svg_axis_label(const struct svg_axis *a, unsigned i, char buf[static 32])
{
        snprintf(buf, 32, "%.*f %s", a->decimals, a->first + a->step * i, a->unit);
        return buf;
}

static int cmp_band(const void *a, const void *b)
{
        const struct svg_band *x = a, *y = b;
        if (x->lo != y->lo)
                return x->lo < y->lo ? -1 : 1;
        return x->hi < y->hi ? -1 : x->hi > y->hi;
}

size_t svg_bands(struct svg_band *x, size_t n, struct svg_band bands[static SVG_MAX_BANDS])
{
        size_t m = 0, cut[SVG_MAX_BANDS - 1], n_cut = 0, nb = 0, from = 0;
        uint64_t drawn;

        if (n == 0)
                return 0;
        /* overlapping or touching extents into runs */
        qsort_safe(x, n, sizeof(*x), cmp_band);
        for (size_t i = 0; i < n; i++) {
                if (m > 0 && x[i].lo <= x[m - 1].hi) {
                        x[m - 1].hi = MAX(x[m - 1].hi, x[i].hi);
                        continue;
                }
                x[m++] = x[i];
        }
        /* the widest gaps, widest first, while each is wide against what
         * stays drawn (a narrower one never is when a wider one is not) */
        drawn = x[m - 1].hi - x[0].lo;
        while (n_cut < SVG_MAX_BANDS - 1) {
                size_t best = SIZE_MAX;
                uint64_t w = 0;
                for (size_t i = 0; i + 1 < m; i++) {
                        uint64_t gap = x[i + 1].lo - x[i].hi;
                        bool taken = false;
                        for (size_t k = 0; k < n_cut; k++)
                                taken |= cut[k] == i;
                        if (!taken && gap > w) {
                                w = gap;
                                best = i;
                        }
                }
                if (best == SIZE_MAX || w < SVG_MIN_BREAK || (double)w <= SVG_BREAK_FRACTION * (double)(drawn - w))
                        break;
                cut[n_cut++] = best;
                drawn -= w;
        }
        /* the runs between the cuts, in position order */
        for (size_t i = 0; i < m; i++) {
                bool end = i + 1 == m;
                for (size_t k = 0; k < n_cut; k++)
                        end |= cut[k] == i;
                if (!end)
                        continue;
                bands[nb++] = (struct svg_band){ x[from].lo, x[i].hi };
                from = i + 1;
        }
        return nb;
}

unsigned svg_lookup_row(uint32_t op)
{
        switch (op) {
        case RS_LOOKUP_STAT:
        case RS_LOOKUP_ACCESS:
        case RS_LOOKUP_READLINK:
                return SVG_ROW_ATTR;
        case RS_LOOKUP_READDIR:
                return SVG_ROW_LIST;
        }
        return SVG_ROW_OPEN;
}

uint64_t svg_bucket_start(uint32_t i, uint64_t tmax, uint32_t columns)
{
        /* ceil(i * tmax / columns) in parts that cannot overflow */
        uint64_t q = tmax / columns, r = tmax % columns;
        return (uint64_t)i * q + ((uint64_t)i * r + columns - 1) / columns;
}

uint32_t svg_bucket_of(uint64_t t, uint64_t tmax, uint32_t columns)
{
        uint32_t lo = 0, hi = columns - 1;

        /* the last bucket that starts at or before t */
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo + 1) / 2;
                if (svg_bucket_start(mid, tmax, columns) <= t)
                        lo = mid;
                else
                        hi = mid - 1;
        }
        return lo;
}

size_t svg_lookup_buckets(const struct rs_lookup *l, size_t n, uint64_t tmax, uint32_t columns,
                          struct svg_lookup_bucket *out)
{
        size_t cells = (size_t)columns * SVG_ROWS * 2, m = 0;

        /* one cell per column, row and outcome, then the empty ones dropped */
        for (size_t k = 0; k < cells; k++)
                out[k] = (struct svg_lookup_bucket){ (uint32_t)(k / (SVG_ROWS * 2)), (uint8_t)(k / 2 % SVG_ROWS),
                                                     k % 2 == 1, 0, 0 };
        for (size_t i = 0; i < n; i++) {
                size_t k = ((size_t)svg_bucket_of(l[i].time_us, tmax, columns) * SVG_ROWS + svg_lookup_row(l[i].op)) * 2 +
                           (l[i].result < 0);
                if (out[k].count++ == 0)
                        out[k].first = (uint32_t)i;
        }
        for (size_t k = 0; k < cells; k++)
                if (out[k].count)
                        out[m++] = out[k];
        return m;
}

/* The position axis: the bands, each drawn from y0 (its bottom) up px
 * pixels, its extent widened to its first and last round tick. */
struct band_geo {
        struct svg_band data;   /* what the pieces touch */
        struct svg_band shown;  /* the axis's extent */
        double y0, px;
        struct svg_axis ax;
        bool single;            /* too narrow for round ticks: one label, its offset */
};

struct plot {
        struct band_geo b[SVG_MAX_BANDS];
        size_t nb;
        uint64_t tmax;
};

/* The bands of r's known positions, laid out bottom (lowest) up. */
static int plot_layout(const struct report *r, struct plot *pl)
{
        _cleanup_free_ struct svg_band *x = NULL;
        struct svg_band bands[SVG_MAX_BANDS];
        size_t n = 0;
        uint64_t sum = 0;
        double avail, y;

        pl->nb = 0;
        x = malloc((r->n_pieces ? r->n_pieces : 1) * sizeof(*x));
        if (!x)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_pieces; i++)
                if (r->pieces[i].phys != COST_POS_UNKNOWN)
                        x[n++] = (struct svg_band){ r->pieces[i].phys,
                                                    r->pieces[i].phys + MAX(r->pieces[i].length, 1) };
        pl->nb = svg_bands(x, n, bands);
        if (pl->nb == 0)
                return 0;
        for (size_t i = 0; i < pl->nb; i++)
                sum += bands[i].hi - bands[i].lo;
        avail = AH - (double)(pl->nb - 1) * BREAK_PX - (double)pl->nb * BAND_MIN;
        y = AY + AH;
        for (size_t i = 0; i < pl->nb; i++) {
                struct band_geo *g = &pl->b[i];
                double step, lo, hi, mid;
                g->data = bands[i];
                g->px = BAND_MIN + avail * (double)(bands[i].hi - bands[i].lo) / (double)sum;
                g->y0 = y;
                y -= g->px + BREAK_PX;
                /* widened to round ticks, never past the middle of a gap */
                svg_axis_bytes((double)bands[i].lo, (double)bands[i].hi, MAX((unsigned)(g->px / TICK_PX), 1u), &g->ax);
                step = g->ax.step * g->ax.unit_value;
                lo = floor_pos((double)bands[i].lo / step) * step;
                hi = ceil_pos((double)bands[i].hi / step) * step;
                if (i > 0) {
                        mid = ((double)bands[i - 1].hi + (double)bands[i].lo) / 2;
                        lo = MAX(lo, mid);
                }
                if (i + 1 < pl->nb) {
                        mid = ((double)bands[i].hi + (double)bands[i + 1].lo) / 2;
                        hi = MIN(hi, mid);
                }
                g->shown = (struct svg_band){ (uint64_t)lo, (uint64_t)hi };
                if (g->shown.lo > bands[i].lo)
                        g->shown.lo = bands[i].lo;
                if (g->shown.hi < bands[i].hi)
                        g->shown.hi = bands[i].hi;
                axis_span(&g->ax, (double)g->shown.lo, (double)g->shown.hi);
                /* ticks of more than 5 digits ("175376410 KiB") say nothing */
                int digits = g->ax.decimals + 1;
                for (double v = (double)g->shown.hi / g->ax.unit_value; v >= 10; v /= 10)
                        digits++;
                g->single = digits > 5 || g->ax.n == 0;
        }
        return 0;
}

/* The y of device byte pos (in a band): where a piece there starts; with
 * mark, the top and height of the mark of len bytes from there. */
static double plot_y(const struct plot *pl, uint64_t pos, uint64_t len, double mark[2])
{
        const struct band_geo *g = &pl->b[0];

        for (size_t i = 1; i < pl->nb && pos >= pl->b[i].shown.lo; i++)
                g = &pl->b[i];
        double scale = g->px / (double)MAX(g->shown.hi - g->shown.lo, 1);
        double y = g->y0 - scale * (double)(pos - MIN(pos, g->shown.lo));
        if (mark) {
                mark[1] = MAX(2.0, scale * (double)len);
                mark[0] = MAX(y - mark[1], g->y0 - g->px);
        }
        return y;
}

static double plot_x(const struct plot *pl, uint64_t t)
{
        return PX + (double)PW * (double)t / (double)pl->tmax;
}

struct cell {
        uint32_t x, y;
        int group;
        uint32_t first;     /* piece index */
        uint64_t count, bytes;
};

static int cmp_cell(const void *a, const void *b)
{
        const struct cell *p = a, *q = b;
        if (p->x != q->x)
                return p->x < q->x ? -1 : 1;
        if (p->y != q->y)
                return p->y < q->y ? -1 : 1;
        if (p->group != q->group)
                return p->group < q->group ? -1 : 1;
        return p->first < q->first ? -1 : p->first > q->first;
}

/* Pieces into cells of cw x ch pixels, one per cell and colour; returns
 * how many (cells[0 .. n) in position order, each with its first piece). */
static size_t aggregate(const struct report *r, const int *fg, const struct plot *pl, unsigned cw, unsigned ch,
                        struct cell *cells)
{
        size_t m = 0;

        for (size_t i = 0; i < r->n_pieces; i++) {
                const struct rp_piece *p = &r->pieces[i];
                double x = plot_x(pl, p->time_us), y;
                if (p->phys == UINT64_MAX)
                        y = UY + UH / 2.0;
                else
                        y = plot_y(pl, p->phys, p->length, NULL);
                /* cells counted from the panel's corner, the strip its own row */
                cells[i] = (struct cell){ (uint32_t)((x - PX) / cw),
                                          p->phys == UINT64_MAX ? UINT32_MAX : (uint32_t)((y - AY) / ch),
                                          fg[p->file], (uint32_t)i, 1, p->length };
        }
        qsort_safe(cells, r->n_pieces, sizeof(*cells), cmp_cell);
        for (size_t i = 0; i < r->n_pieces; i++) {
                if (m > 0 && cells[m - 1].x == cells[i].x && cells[m - 1].y == cells[i].y &&
                    cells[m - 1].group == cells[i].group) {
                        cells[m - 1].count++;
                        cells[m - 1].bytes += cells[i].bytes;
                        continue;
                }
                cells[m++] = cells[i];
        }
        return m;
}

/* One point of the head's path (M first, then L); when reduced, not where
 * the last one was. */
static void head_point(FILE *f, size_t *points, double x, double y, double last[2], bool reduced)
{
        if (reduced && *points && (int)(x * 10) == (int)(last[0] * 10) && (int)(y * 10) == (int)(last[1] * 10))
                return;
        fprintf(f, "%c%.1f %.1f", *points ? 'L' : 'M', x, y);
        (*points)++;
        last[0] = x;
        last[1] = y;
}

/* The head's path: a line from each piece of known position to the next in
 * time order, through the middle of their marks.  Up to MAX_SINGLE pieces
 * one point each; beyond, per pixel column (time order fills the columns in
 * turn) its first, lowest, highest and last point: the same lines drawn. */
static void write_head(FILE *f, const struct report *r, const struct plot *pl)
{
        size_t known = 0, points = 0;
        double last[2] = { 0, 0 }, col[4] = { 0, 0, 0, 0 }; /* first, min, max, last y */
        long cx = -1;

        for (size_t i = 0; i < r->n_pieces; i++)
                known += r->pieces[i].phys != COST_POS_UNKNOWN;
        fprintf(f, "<path id=\"head\" class=\"head\" fill=\"none\" stroke=\"#303030\" stroke-opacity=\"0.55\" "
                "stroke-width=\"0.8\" stroke-linejoin=\"round\" data-segments=\"%zu\" data-reduced=\"%d\" d=\"",
                known ? known - 1 : 0, known > MAX_SINGLE);
        for (size_t i = 0; i < r->n_pieces; i++) {
                const struct rp_piece *p = &r->pieces[i];
                double m[2], x, y;
                if (p->phys == COST_POS_UNKNOWN)
                        continue;
                x = MIN(plot_x(pl, p->time_us), (double)(PX + PW - 3)) + 1.5;
                plot_y(pl, p->phys, p->length, m);
                y = m[0] + m[1] / 2;
                if (known <= MAX_SINGLE) {
                        head_point(f, &points, x, y, last, false);
                        continue;
                }
                if ((long)x == cx) {
                        col[1] = MIN(col[1], y);
                        col[2] = MAX(col[2], y);
                        col[3] = y;
                        continue;
                }
                for (int k = 0; cx >= 0 && k < 4; k++)
                        head_point(f, &points, (double)cx + 0.5, col[k], last, true);
                cx = (long)x;
                col[0] = col[1] = col[2] = col[3] = y;
        }
        for (int k = 0; cx >= 0 && k < 4; k++)
                head_point(f, &points, (double)cx + 0.5, col[k], last, true);
        fputs("\"/>\n", f);
}

/* Each band named by the file most of its bytes belong to (its last path
 * component; the device's own blocks: metadata), in the band's top left
 * corner: where the head goes. */
static int write_band_names(FILE *f, const struct readset *rs, const struct report *r, const struct plot *pl)
{
        _cleanup_free_ uint64_t *bytes = malloc(MAX(rs->n_files, 1) * sizeof(uint64_t));

        if (!bytes)
                return -ENOMEM;
        for (size_t b = 0; b < pl->nb; b++) {
                uint64_t sum = 0;
                size_t best = 0;
                const char *name, *slash;

                memset(bytes, 0, MAX(rs->n_files, 1) * sizeof(uint64_t));
                for (size_t i = 0; i < r->n_pieces; i++) {
                        const struct rp_piece *p = &r->pieces[i];
                        if (p->phys == COST_POS_UNKNOWN || p->phys < pl->b[b].data.lo || p->phys >= pl->b[b].data.hi)
                                continue;
                        bytes[p->file] += p->length;
                        sum += p->length;
                        if (bytes[p->file] > bytes[best])
                                best = p->file;
                }
                if (!sum)
                        continue;
                name = rs->files[best].path;
                slash = strrchr(name, '/');
                if (rs->files[best].kind == RS_FILE_BLOCKDEV)
                        name = "file system metadata";
                else if (slash && slash[1])
                        name = slash + 1;
                fprintf(f, "<text class=\"bandname\" x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"#444\" "
                        "stroke=\"#f7f7f7\" stroke-width=\"3\" paint-order=\"stroke\">", PX + 4,
                        pl->b[b].y0 - pl->b[b].px + 11);
                put_text(f, name);
                /* most of the band's bytes, or only the largest part */
                if (bytes[best] * 10 < sum * 9)
                        fputs(" and others", f);
                fputs("</text>\n", f);
        }
        return 0;
}

static void piece_title(FILE *f, const struct readset *rs, const struct rp_piece *p)
{
        char b[32];

        fputs("<title>", f);
        put_text(f, rs->files[p->file].path);
        fprintf(f, " [%" PRIu64 "+%" PRIu64 "]", p->offset, p->length);
        label_time(b, (double)p->time_us);
        fprintf(f, " at %s", b);
        if (p->phys != UINT64_MAX)
                fprintf(f, ", device byte %" PRIu64, p->phys);
        fputs("</title>", f);
}

static const char *const row_names[SVG_ROWS] = { "open", "attr", "list" };

static void lookup_result(FILE *f, int32_t result)
{
        switch (-result) {
        case 0: fputs("found", f); break;
        case ENOENT: fputs("ENOENT", f); break;
        case ENOTDIR: fputs("ENOTDIR", f); break;
        case EACCES: fputs("EACCES", f); break;
        default: fprintf(f, "errno %d", -result);
        }
}

/* The bits n needs (0 for 0): a count's shade grows with its magnitude. */
static unsigned bit_length(uint64_t n)
{
        unsigned b = 0;

        for (; n; n >>= 1)
                b++;
        return b;
}

/* The lookup band, under the access panel on its time axis: a row per
 * kind (svg_lookup_row), the successful lookups in its upper half, the
 * failed ones in its lower half and red.  One mark per lookup at its time
 * (data-t-us), or past SVG_LOOKUP_SINGLE one per bucket of LCELL_W pixels,
 * row and outcome ([data-t0-us, data-t1-us), data-count), shaded by its
 * count. */
static int write_lookups(FILE *f, const struct readset *rs, const struct plot *pl)
{
        static const char *const labels[SVG_ROWS] = { "opens", "attributes", "listings" };
        static const char *const nouns[SVG_ROWS] = { "opens and execs", "attribute calls", "listings" };
        const uint32_t columns = PW / LCELL_W;
        bool bucketed = rs->n_lookups > SVG_LOOKUP_SINGLE;
        _cleanup_free_ struct svg_lookup_bucket *bk = NULL;
        uint64_t failed = 0, most = 1;
        size_t m = rs->n_lookups;
        struct svg_axis ax;
        char b1[32], b2[32];

        for (size_t i = 0; i < rs->n_lookups; i++)
                failed += rs->lookups[i].result < 0;
        if (bucketed) {
                bk = malloc((size_t)columns * SVG_ROWS * 2 * sizeof(*bk));
                if (!bk)
                        return -ENOMEM;
                m = svg_lookup_buckets(rs->lookups, rs->n_lookups, pl->tmax, columns, bk);
                for (size_t k = 0; k < m; k++)
                        most = MAX(most, bk[k].count);
        }
        fprintf(f, "<g id=\"lookups\" data-lookups=\"%zu\" data-failed=\"%" PRIu64 "\" data-marks=\"%zu\" "
                "data-bucketed=\"%d\" data-columns=\"%u\" data-tmax-us=\"%" PRIu64 "\">\n",
                rs->n_lookups, failed, rs->n_lookups ? m : 0, bucketed, bucketed ? columns : 0, pl->tmax);
        if (rs->n_lookups == 0) {
                fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#777\">%s</text>\n"
                        "</g>\n", PX + PW / 2, LY + LH / 2 + 3,
                        rs->rec_flags & RS_REC_LOOKUPS ? "no lookups recorded" : "lookups not traced");
                return 0;
        }
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" stroke=\"#888\"/>\n",
                PX, LY, PW, LH);
        /* the time axis's lines across the band too */
        svg_axis_time(0, (double)pl->tmax, X_TICKS, &ax);
        for (unsigned k = 0; k < ax.n; k++) {
                double x = plot_x(pl, (uint64_t)(svg_axis_value(&ax, k) + 0.5));
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#e4e4e4\"/>", x, x, LY, LY + LH);
        }
        for (int k = 0; k < SVG_ROWS; k++) {
                if (k > 0)
                        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#ccc\"/>", PX, PX + PW,
                                LY + k * LROW, LY + k * LROW);
                fprintf(f, "<text class=\"lookuprow\" x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"9\">%s</text>\n",
                        PX - 4, LY + k * LROW + 9, labels[k]);
        }
        for (size_t i = 0; !bucketed && i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                unsigned row = svg_lookup_row(l->op);
                double x = plot_x(pl, l->time_us) - LMARK_W / 2.0;
                x = MAX((double)PX, MIN(x, (double)(PX + PW - LMARK_W)));
                label_time(b1, (double)l->time_us);
                fprintf(f, "<rect class=\"lookup\" x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                        "fill-opacity=\"0.7\" data-row=\"%s\" data-failed=\"%d\" data-t-us=\"%" PRIu64 "\" "
                        "data-op=\"%s\" data-result=\"%" PRId32 "\"><title>%s ",
                        x, LY + (int)row * LROW + (l->result < 0) * LROW / 2, LMARK_W, LROW / 2,
                        l->result < 0 ? COLOUR_FAILED : COLOUR_FOUND, row_names[row], l->result < 0, l->time_us,
                        rs_lookup_op_name(l->op), l->result, rs_lookup_op_name(l->op));
                put_text(f, l->path);
                fputs(": ", f);
                lookup_result(f, l->result);
                fprintf(f, " at %s</title></rect>\n", b1);
        }
        for (size_t k = 0; bucketed && k < m; k++) {
                const struct svg_lookup_bucket *c = &bk[k];
                uint64_t t0 = svg_bucket_start(c->column, pl->tmax, columns);
                uint64_t t1 = svg_bucket_start(c->column + 1, pl->tmax, columns);
                double shade = 0.3 + 0.7 * bit_length(c->count) / bit_length(most);
                label_time(b1, (double)t0);
                label_time(b2, (double)t1);
                fprintf(f, "<rect class=\"lookup\" x=\"%u\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                        "fill-opacity=\"%.2f\" data-row=\"%s\" data-failed=\"%d\" data-t0-us=\"%" PRIu64 "\" "
                        "data-t1-us=\"%" PRIu64 "\" data-count=\"%" PRIu32 "\"><title>%" PRIu32 " %s%s from %s "
                        "to %s, first ", PX + c->column * LCELL_W, LY + c->row * LROW + c->failed * LROW / 2,
                        LCELL_W, LROW / 2, c->failed ? COLOUR_FAILED : COLOUR_FOUND, shade, row_names[c->row],
                        c->failed, t0, t1, c->count, c->count, c->failed ? "failed " : "", nouns[c->row], b1, b2);
                put_text(f, rs->lookups[c->first].path);
                fputs("</title></rect>\n", f);
        }
        /* the band's legend, on the line of the time axis's name */
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%zu lookup%s, %" PRIu64 " failed</text>\n"
                "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
                "font-size=\"11\">found</text><rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\" font-size=\"11\">failed</text>\n</g>\n",
                PX, XT + 15, rs->n_lookups, rs->n_lookups == 1 ? "" : "s", failed, PX + PW - 110, XT + 6, COLOUR_FOUND, PX + PW - 96, XT + 15,
                PX + PW - 50, XT + 6, COLOUR_FAILED, PX + PW - 36, XT + 15);
        return 0;
}

static int write_svg(FILE *f, const struct readset *rs, const struct report *r)
{
        _cleanup_free_ int *fg = calloc(rs->n_files ? rs->n_files : 1, sizeof(int));
        _cleanup_free_ struct cell *cells = NULL;
        struct group top[N_COLOURS];
        size_t n_top = 0;
        struct plot pl = { .tmax = 1 };
        struct svg_axis ax;
        uint64_t tmax, total = 0, shown = 0;
        char b1[32], b2[32];
        int e;

        if (!fg)
                return -ENOMEM;
        e = make_groups(rs, r, fg, top, &n_top);
        if (e < 0)
                return e;
        e = plot_layout(r, &pl);
        if (e < 0)
                return e;
        for (size_t i = 0; i < r->n_pieces; i++) {
                pl.tmax = MAX(pl.tmax, r->pieces[i].time_us);
                total += r->pieces[i].length;
        }
        for (size_t i = 0; i < rs->n_lookups; i++)
                pl.tmax = MAX(pl.tmax, rs->lookups[i].time_us);
        pl.tmax = tmax = MAX(pl.tmax, rs->duration_us);

        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n"
                "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H, W, H, W, H);
        fputs("<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", f);
        fputs("Disk access graph: ", f);
        put_text(f, rs->command && *rs->command ? rs->command : "read set");
        fputs("</text>\n", f);
        fprintf(f, "<text x=\"12\" y=\"40\" fill=\"#555\">%zu pieces, %s, %" PRIu64 " files; "
                "position on the device against time of first access</text>\n",
                r->n_pieces, format_bytes(total, b1), r->totals.files);

        /* the access panel: the bands of the position axis and the breaks
         * between them, the time axis, the head's path, then marks */
        for (size_t i = 0; i < pl.nb; i++)
                shown += pl.b[i].shown.hi - pl.b[i].shown.lo;
        fprintf(f, "<g id=\"access\" data-bands=\"%zu\" data-shown=\"%" PRIu64 "\" data-pos-min=\"%" PRIu64 "\" "
                "data-pos-max=\"%" PRIu64 "\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" "
                "stroke=\"#888\"/>\n", pl.nb, shown, pl.nb ? r->pos_min : 0, pl.nb ? r->pos_max : 0, PX, AY, PW, AH);
        for (size_t i = 0; i < pl.nb; i++) {
                const struct band_geo *g = &pl.b[i];
                fprintf(f, "<g class=\"band\" data-lo=\"%" PRIu64 "\" data-hi=\"%" PRIu64 "\" data-unit=\"%s\">\n",
                        g->shown.lo, g->shown.hi, g->single ? "" : g->ax.unit);
                if (g->single)
                        fprintf(f, "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">"
                                "%s</text>\n", PX - 4, g->y0 - g->px / 2 + 3, format_bytes(g->data.lo, b1));
                for (unsigned k = 0; !g->single && k < g->ax.n; k++) {
                        double v = svg_axis_value(&g->ax, k);
                        double y = g->y0 - g->px * (v - (double)g->shown.lo) / (double)MAX(g->shown.hi - g->shown.lo, 1);
                        fprintf(f, "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%s"
                                "</text><line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                                PX - 4, y + 3, svg_axis_label(&g->ax, k, b1), PX, PX + PW, y, y);
                }
                fputs("</g>\n", f);
        }
        for (size_t i = 0; i + 1 < pl.nb; i++) {
                /* between the top of band i and the bottom of band i + 1: the
                 * bytes the axis skips, and those no piece lies in */
                double lo = pl.b[i].y0 - pl.b[i].px, hi = pl.b[i + 1].y0;
                fprintf(f, "<g class=\"break\" data-lo=\"%" PRIu64 "\" data-hi=\"%" PRIu64 "\">"
                        "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#ffffff\"/>",
                        pl.b[i].shown.hi, pl.b[i + 1].shown.lo, PX - 8, hi + 2, PW + 16, lo - hi - 4);
                for (int side = 0; side < 2; side++) {
                        int x = side ? PX + PW : PX;
                        fprintf(f, "<path d=\"M%d %.1fL%d %.1fM%d %.1fL%d %.1f\" stroke=\"#888\" fill=\"none\"/>",
                                x - 6, lo - 2, x + 6, lo - 6, x - 6, hi + 6, x + 6, hi + 2);
                }
                fputs("</g>\n", f);
        }
        if (pl.nb == 0)
                fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#777\">no position on the device "
                        "known</text>\n", PX + PW / 2, AY + AH / 2);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">unknown</text>\n", PX - 4, UY + 9);
        fprintf(f, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">position on the "
                "device</text>\n", AY + AH / 2);
        svg_axis_time(0, (double)pl.tmax, X_TICKS, &ax);
        for (unsigned k = 0; k < ax.n; k++) {
                double x = plot_x(&pl, (uint64_t)(svg_axis_value(&ax, k) + 0.5));
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#e4e4e4\"/>"
                        "<text class=\"xtick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
                        x, x, AY, AY + AH, x, XT, svg_axis_label(&ax, k, b1));
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time of first access</text>\n",
                PX + PW / 2, XT + 15);
        write_head(f, r, &pl);

        fputs("<g id=\"marks\">\n", f);
        if (r->n_pieces <= MAX_SINGLE) {
                for (size_t i = 0; i < r->n_pieces; i++) {
                        const struct rp_piece *p = &r->pieces[i];
                        double x = plot_x(&pl, p->time_us), m[2] = { UY, UH };
                        if (p->phys != UINT64_MAX)
                                plot_y(&pl, p->phys, p->length, m);
                        fprintf(f, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" "
                                "fill=\"%s\">", MIN(x, (double)(PX + PW - 3)), m[0], m[1], colour_of(fg[p->file]));
                        piece_title(f, rs, p);
                        fputs("</rect>\n", f);
                }
        } else {
                /* aggregate: one mark per cell and colour, cells growing until
                 * the marks fit the budget */
                unsigned cw = CELL_W, ch = CELL_H;
                size_t m;

                cells = malloc(r->n_pieces * sizeof(*cells));
                if (!cells)
                        return -ENOMEM;
                for (;;) {
                        m = aggregate(r, fg, &pl, cw, ch, cells);
                        if (m <= MAX_MARKS || cw >= 64)
                                break;
                        cw *= 2;
                        ch *= 2;
                }
                for (size_t i = 0; i < m; i++) {
                        const struct rp_piece *p = &r->pieces[cells[i].first];
                        unsigned x = PX + MIN(cells[i].x * cw, (unsigned)PW - cw), y, h;
                        if (cells[i].y == UINT32_MAX) {
                                y = UY;
                                h = UH;
                        } else {
                                y = AY + MIN(cells[i].y * ch, (unsigned)AH - ch);
                                h = ch;
                        }
                        fprintf(f, "<rect class=\"mark\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"%s\">"
                                "<title>%" PRIu64 " reads, %s, first ", x, y, cw, h, colour_of(cells[i].group),
                                cells[i].count, format_bytes(cells[i].bytes, b1));
                        put_text(f, rs->files[p->file].path);
                        fprintf(f, " [%" PRIu64 "+%" PRIu64 "]</title></rect>\n", p->offset, p->length);
                }
        }
        fputs("</g>\n", f);
        /* what each break skips, over the path and the marks */
        for (size_t i = 0; i + 1 < pl.nb; i++)
                fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"9\" fill=\"#666\" "
                        "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">%s not read</text>\n",
                        PX + PW - 10, pl.b[i].y0 - pl.b[i].px - 4,
                        format_bytes(pl.b[i + 1].data.lo - pl.b[i].data.hi, b1));
        e = write_band_names(f, rs, r, &pl);
        if (e < 0)
                return e;
        fputs("</g>\n", f);

        e = write_lookups(f, rs, &pl);
        if (e < 0)
                return e;

        /* the cumulative panel: bytes and reads against time */
        fprintf(f, "<g id=\"cumulative\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" "
                "stroke=\"#888\"/>\n", PX, CY, PW, CH);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">100%%</text>"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">0</text>\n",
                PX - 4, CY + 8, PX - 4, CY + CH);
        for (int k = 0; k < 2; k++) {
                /* one point per pixel column: the last piece of each */
                uint64_t acc = 0, whole = MAX(k == 0 ? total : r->n_pieces, 1);
                fprintf(f, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%d,%d",
                        k == 0 ? "bytes" : "reads", k == 0 ? "#1f77b4" : "#d62728", PX, CY + CH);
                for (size_t i = 0; i < r->n_pieces; i++) {
                        const struct rp_piece *p = &r->pieces[i];
                        int x = PX + (int)((double)PW * (double)p->time_us / (double)tmax);
                        acc += k == 0 ? p->length : 1;
                        if (i + 1 < r->n_pieces &&
                            PX + (int)((double)PW * (double)r->pieces[i + 1].time_us / (double)tmax) == x)
                                continue;
                        fprintf(f, " %d,%.1f", x, CY + CH - (double)CH * (double)acc / (double)whole);
                }
                fputs("\"/>\n", f);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#1f77b4\">cumulative bytes (%s)</text>"
                "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">cumulative reads (%zu)</text>\n</g>\n",
                PX + 8, CY + 16, format_bytes(total, b2), PX + 8, CY + 32, r->n_pieces);

        /* the legend */
        fprintf(f, "<g id=\"legend\" font-size=\"11\">\n");
        for (size_t i = 0; i <= n_top + 1; i++) {
                int x = 12 + (int)(i % 5) * 189, y = CY + CH + 20 + (int)(i / 5) * 16;
                int g = i < n_top ? (int)i : i == n_top ? N_COLOURS : -1;
                fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
                        x, y - 9, colour_of(g), x + 14, y);
                if (i < n_top) {
                        char name[40];
                        size_t len = top[i].len;
                        const char *p = top[i].path;
                        if (len > 28) {
                                p += len - 25;
                                len = 25;
                                fputs("...", f);
                        }
                        snprintf(name, sizeof(name), "%.*s", (int)len, p);
                        put_text(f, name);
                } else
                        fputs(i == n_top ? "other files" : "file system metadata", f);
                fputs("</text>\n", f);
        }
        fputs("</g>\n</svg>\n", f);
        return 0;
}

struct svg_job {
        const struct readset *rs;
        const struct report *r;
};

static int write_svg_job(FILE *f, void *userdata)
{
        const struct svg_job *j = userdata;
        return write_svg(f, j->rs, j->r);
}

int report_svg_write(const char *path, const struct readset *rs, const struct report *r)
{
        struct svg_job j = { rs, r };

        /* written beside the target and renamed: never half a picture */
        return write_file_atomic(path, 0644, write_svg_job, &j);
}
