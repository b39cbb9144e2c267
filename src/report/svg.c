/* SPDX-License-Identifier: MIT */
#include "report/svg.h"

#include <errno.h>
#include <inttypes.h>
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
#define AH 380           /* access panel height */
#define UY (AY + AH + 8) /* the "position unknown" strip */
#define UH 12
#define CY 500           /* cumulative panel top */
#define CH 120
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

static void label_time(char buf[static 32], double us)
{
        if (us >= 1e6)
                snprintf(buf, 32, "%.2f s", us / 1e6);
        else
                snprintf(buf, 32, "%.0f ms", us / 1e3);
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
static size_t aggregate(const struct report *r, const int *fg, uint64_t tmax, uint64_t span, unsigned cw,
                        unsigned ch, struct cell *cells)
{
        size_t m = 0;

        for (size_t i = 0; i < r->n_pieces; i++) {
                const struct rp_piece *p = &r->pieces[i];
                double x = PX + (double)PW * (double)p->time_us / (double)tmax, y;
                if (p->phys == UINT64_MAX)
                        y = UY + UH / 2.0;
                else
                        y = AY + AH - (double)AH * (double)(p->phys - r->pos_min) / (double)span;
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

static int write_svg(FILE *f, const struct readset *rs, const struct report *r)
{
        _cleanup_free_ int *fg = calloc(rs->n_files ? rs->n_files : 1, sizeof(int));
        _cleanup_free_ struct cell *cells = NULL;
        struct group top[N_COLOURS];
        size_t n_top = 0;
        uint64_t tmax = 1, span, total = 0;
        char b1[32], b2[32];
        int e;

        if (!fg)
                return -ENOMEM;
        e = make_groups(rs, r, fg, top, &n_top);
        if (e < 0)
                return e;
        for (size_t i = 0; i < r->n_pieces; i++) {
                tmax = MAX(tmax, r->pieces[i].time_us);
                total += r->pieces[i].length;
        }
        tmax = MAX(tmax, rs->duration_us);
        span = r->pos_max > r->pos_min ? r->pos_max - r->pos_min : 1;

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

        /* the access panel: axes, then marks */
        fprintf(f, "<g id=\"access\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" "
                "stroke=\"#888\"/>\n", PX, AY, PW, AH);
        for (int i = 0; i <= 4; i++) {
                int y = AY + AH - AH * i / 4;
                format_bytes(r->pos_min + span / 4 * (uint64_t)i, b1);
                fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">%s</text>"
                        "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n",
                        PX - 4, y + 3, b1, PX, PX + PW, y, y);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">unknown</text>\n", PX - 4, UY + 9);
        fprintf(f, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">position on the "
                "device</text>\n", AY + AH / 2);
        for (int i = 0; i <= 5; i++) {
                int x = PX + PW * i / 5;
                label_time(b1, (double)tmax * i / 5);
                fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
                        x, UY + UH + 14, b1);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time of first access</text>\n",
                PX + PW / 2, UY + UH + 30);

        fputs("<g id=\"marks\">\n", f);
        if (r->n_pieces <= MAX_SINGLE) {
                for (size_t i = 0; i < r->n_pieces; i++) {
                        const struct rp_piece *p = &r->pieces[i];
                        double x = PX + (double)PW * (double)p->time_us / (double)tmax, y, h;
                        if (p->phys == UINT64_MAX) {
                                y = UY;
                                h = UH;
                        } else {
                                h = MAX(2.0, (double)AH * (double)p->length / (double)span);
                                y = AY + AH - (double)AH * (double)(p->phys - r->pos_min) / (double)span - h;
                                y = MAX(y, (double)AY);
                        }
                        fprintf(f, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" "
                                "fill=\"%s\">", MIN(x, (double)(PX + PW - 3)), y, h, colour_of(fg[p->file]));
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
                        m = aggregate(r, fg, tmax, span, cw, ch, cells);
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
        fputs("</g>\n</g>\n", f);

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
