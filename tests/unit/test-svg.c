/* SPDX-License-Identifier: MIT */
/* The disk access graph: round ticks in one unit, the bands of the
 * position axis, the head's path of a hand-made report, and the lookup
 * band: its rows, its buckets and their counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/svg.h"
#include "util/util.h"
#include "tests.h"

#define K 1024ULL
#define M (1024ULL * 1024)
#define G (1024ULL * 1024 * 1024)

/* the labels of a's ticks, joined by commas */
static void labels(const struct svg_axis *a, char *out, size_t size)
{
        char b[32];

        out[0] = 0;
        for (unsigned i = 0; i < a->n; i++) {
                size_t n = strlen(out);
                snprintf(out + n, size - n, "%s%s", i ? "," : "", svg_axis_label(a, i, b));
        }
}

/* every label unique, every one in a's unit */
static int unique_in_one_unit(const struct svg_axis *a)
{
        char x[32], y[32];

        for (unsigned i = 0; i < a->n; i++) {
                svg_axis_label(a, i, x);
                if (strcmp(strchr(x, ' ') + 1, a->unit) != 0)
                        return 0;
                for (unsigned j = 0; j < i; j++)
                        if (strcmp(svg_axis_label(a, j, y), x) == 0)
                                return 0;
        }
        return 1;
}

static void test_time_ticks(void)
{
        struct svg_axis a;
        char s[512];

        /* 0 .. 7.3 ms: whole ms, not "0 ms, 1 ms, 1 ms, 2 ms" */
        svg_axis_time(0, 7300, 8, &a);
        labels(&a, s, sizeof(s));
        CHECK(strcmp(s, "0 ms,1 ms,2 ms,3 ms,4 ms,5 ms,6 ms,7 ms") == 0);
        svg_axis_time(0, 7300, 4, &a);
        labels(&a, s, sizeof(s));
        CHECK(strcmp(s, "0 ms,2 ms,4 ms,6 ms") == 0);
        /* crossing a second: all in s, at 0.2 s steps */
        svg_axis_time(0, 1.5e6, 8, &a);
        labels(&a, s, sizeof(s));
        CHECK(strcmp(s, "0.0 s,0.2 s,0.4 s,0.6 s,0.8 s,1.0 s,1.2 s,1.4 s") == 0);
        /* 32.3 s, as the boot-shaped tree's */
        svg_axis_time(0, 32.32e6, 8, &a);
        labels(&a, s, sizeof(s));
        CHECK(strcmp(s, "0 s,5 s,10 s,15 s,20 s,25 s,30 s") == 0);
        /* under a millisecond: microseconds */
        svg_axis_time(0, 450, 8, &a);
        CHECK(strcmp(a.unit, "\xc2\xb5s") == 0);
        CHECK_EQ(a.n, 5);      /* 0, 100 .. 400 */
        /* a short axis never collapses into equal labels */
        for (double hi = 1; hi < 1e8; hi *= 1.37) {
                svg_axis_time(0, hi, 8, &a);
                CHECK(a.n >= 2 && a.n <= 9);
                CHECK(unique_in_one_unit(&a));
                CHECK(svg_axis_value(&a, a.n - 1) <= hi * (1 + 1e-9));
        }
}

static void test_byte_ticks(void)
{
        struct svg_axis a;
        char s[512];

        /* a band of 2.2 .. 2.4 GiB: GiB, 0.05 apart */
        svg_axis_bytes(2.2 * G, 2.4 * G, 4, &a);
        labels(&a, s, sizeof(s));
        CHECK(strcmp(s, "2.20 GiB,2.25 GiB,2.30 GiB,2.35 GiB,2.40 GiB") == 0);
        /* below a GiB: MiB */
        svg_axis_bytes(0, 700 * M, 7, &a);
        labels(&a, s, sizeof(s));
        CHECK(strcmp(s, "0 MiB,100 MiB,200 MiB,300 MiB,400 MiB,500 MiB,600 MiB,700 MiB") == 0);
        /* a few KiB at 34 MiB: in KiB, each different */
        svg_axis_bytes(34 * M, 34 * M + 8 * K, 4, &a);
        CHECK(strcmp(a.unit, "KiB") == 0);
        CHECK(unique_in_one_unit(&a));
        for (double lo = 0; lo < 300.0 * G; lo = lo * 3 + 4096)
                for (double w = 4096; w < 64.0 * G; w *= 7) {
                        svg_axis_bytes(lo, lo + w, 5, &a);
                        CHECK(a.n >= 1 && unique_in_one_unit(&a));
                }
}

static void test_bands(void)
{
        struct svg_band b[SVG_MAX_BANDS];

        CHECK_EQ(svg_bands(NULL, 0, b), 0);
        /* two files 30 GiB apart, read in turn: two bands, a break between */
        {
                struct svg_band x[64];
                for (int i = 0; i < 32; i++) {
                        x[2 * i] = (struct svg_band){ 10 * G + (uint64_t)i * 256 * K, 10 * G + (uint64_t)i * 256 * K + 4 * K };
                        x[2 * i + 1] = (struct svg_band){ 40 * G + (uint64_t)i * 256 * K, 40 * G + (uint64_t)i * 256 * K + 4 * K };
                }
                CHECK_EQ(svg_bands(x, 64, b), 2);
                CHECK_EQ(b[0].lo, 10 * G);
                CHECK_EQ(b[0].hi, 10 * G + 31 * 256 * K + 4 * K);
                CHECK_EQ(b[1].lo, 40 * G);
        }
        /* evenly spread: one band, however wide */
        {
                struct svg_band x[100];
                for (int i = 0; i < 100; i++)
                        x[i] = (struct svg_band){ (uint64_t)i * 100 * M, (uint64_t)i * 100 * M + M };
                CHECK_EQ(svg_bands(x, 100, b), 1);
                CHECK_EQ(b[0].lo, 0);
                CHECK_EQ(b[0].hi, 99 * 100 * M + M);
        }
        /* overlapping and unsorted extents merge; a gap under SVG_MIN_BREAK stays */
        {
                struct svg_band x[] = { { 600 * K, 700 * K }, { 0, 4 * K }, { 600 * K + 10, 600 * K + 20 }, { 2 * K, 8 * K } };
                CHECK_EQ(svg_bands(x, 4, b), 1);
                CHECK_EQ(b[0].lo, 0);
                CHECK_EQ(b[0].hi, 700 * K);
        }
        /* many far places: at most SVG_MAX_BANDS bands, the widest gaps cut */
        {
                struct svg_band x[8];
                for (int i = 0; i < 8; i++)
                        x[i] = (struct svg_band){ (uint64_t)i * i * G, (uint64_t)i * i * G + M };
                CHECK_EQ(svg_bands(x, 8, b), SVG_MAX_BANDS);
                CHECK_EQ(b[0].lo, 0);
                CHECK_EQ(b[0].hi, 9 * G + M);     /* 0, 1, 4, 9 GiB: the narrow gaps kept */
                CHECK_EQ(b[SVG_MAX_BANDS - 1].lo, 49 * G);
        }
        /* a gap narrower than the fraction of what stays: kept */
        {
                struct svg_band x[] = { { 0, 100 * M }, { 110 * M, 200 * M } };
                CHECK_EQ(svg_bands(x, 2, b), 1);
        }
}

static void test_lookup_rows(void)
{
        CHECK_EQ(svg_lookup_row(RS_LOOKUP_OPEN), SVG_ROW_OPEN);
        CHECK_EQ(svg_lookup_row(RS_LOOKUP_EXEC), SVG_ROW_OPEN);
        CHECK_EQ(svg_lookup_row(RS_LOOKUP_STAT), SVG_ROW_ATTR);
        CHECK_EQ(svg_lookup_row(RS_LOOKUP_ACCESS), SVG_ROW_ATTR);
        CHECK_EQ(svg_lookup_row(RS_LOOKUP_READLINK), SVG_ROW_ATTR);
        CHECK_EQ(svg_lookup_row(RS_LOOKUP_READDIR), SVG_ROW_LIST);
}

/* Buckets of equal width over [0, tmax]: each time in the one whose
 * start is the last at or before it, the last one holding tmax too. */
static void test_bucket_arithmetic(void)
{
        static const uint64_t tmaxes[] = { 1, 7, 1000, 999983, 32320000, UINT64_MAX / 3, UINT64_MAX - 1 };

        /* 1000 us in 3: 0, 334, 667, then the end */
        CHECK_EQ(svg_bucket_start(0, 1000, 3), 0);
        CHECK_EQ(svg_bucket_start(1, 1000, 3), 334);
        CHECK_EQ(svg_bucket_start(2, 1000, 3), 667);
        CHECK_EQ(svg_bucket_start(3, 1000, 3), 1000);
        CHECK_EQ(svg_bucket_of(0, 1000, 3), 0);
        CHECK_EQ(svg_bucket_of(333, 1000, 3), 0);
        CHECK_EQ(svg_bucket_of(334, 1000, 3), 1);
        CHECK_EQ(svg_bucket_of(666, 1000, 3), 1);
        CHECK_EQ(svg_bucket_of(667, 1000, 3), 2);
        CHECK_EQ(svg_bucket_of(1000, 1000, 3), 2);
        CHECK_EQ(svg_bucket_of(5000, 1000, 3), 2);
        /* fewer microseconds than buckets: empty buckets, never a time in two */
        CHECK_EQ(svg_bucket_of(1, 2, 205), 102);
        CHECK_EQ(svg_bucket_start(103, 2, 205), 2);
        /* every magnitude: t lies in [start(i), start(i + 1)), without overflow */
        for (size_t k = 0; k < ARRAY_SIZE(tmaxes); k++) {
                uint64_t tmax = tmaxes[k];
                CHECK_EQ(svg_bucket_start(205, tmax, 205), tmax);
                for (uint64_t t = 0; t < tmax; t = t * 3 + 1) {
                        uint32_t i = svg_bucket_of(t, tmax, 205);
                        CHECK(i < 205);
                        CHECK(svg_bucket_start(i, tmax, 205) <= t);
                        CHECK(t < svg_bucket_start(i + 1, tmax, 205));
                        if (t > UINT64_MAX / 4)
                                break;
                }
                if (tmax >= 205)
                        CHECK_EQ(svg_bucket_of(tmax - 1, tmax, 205), 204);
        }
}

/* A synthetic read set's lookups into buckets: the counts of each bucket,
 * row and outcome, each with its first lookup, all of them counted. */
static void test_lookup_buckets(void)
{
        struct rs_lookup l[] = {
                { .time_us = 10, .op = RS_LOOKUP_OPEN },
                { .time_us = 20, .op = RS_LOOKUP_STAT, .result = -2 },
                { .time_us = 99, .op = RS_LOOKUP_ACCESS, .result = -2 },
                { .time_us = 50, .op = RS_LOOKUP_STAT },
                { .time_us = 100, .op = RS_LOOKUP_READLINK },    /* bucket 1 */
                { .time_us = 399, .op = RS_LOOKUP_READDIR },     /* bucket 3 */
                { .time_us = 400, .op = RS_LOOKUP_EXEC, .result = -13 },  /* tmax: the last */
                { .time_us = 90, .op = RS_LOOKUP_EXEC },
        };
        struct svg_lookup_bucket b[4 * SVG_ROWS * 2];
        size_t n = svg_lookup_buckets(l, ARRAY_SIZE(l), 400, 4, b);
        uint64_t sum = 0;

        CHECK_EQ(n, 6);
        /* bucket 0: two opens, one stat found, two attribute calls failed */
        CHECK(b[0].column == 0 && b[0].row == SVG_ROW_OPEN && !b[0].failed && b[0].count == 2 && b[0].first == 0);
        CHECK(b[1].column == 0 && b[1].row == SVG_ROW_ATTR && !b[1].failed && b[1].count == 1 && b[1].first == 3);
        CHECK(b[2].column == 0 && b[2].row == SVG_ROW_ATTR && b[2].failed && b[2].count == 2 && b[2].first == 1);
        CHECK(b[3].column == 1 && b[3].row == SVG_ROW_ATTR && !b[3].failed && b[3].count == 1);
        CHECK(b[4].column == 3 && b[4].row == SVG_ROW_OPEN && b[4].failed && b[4].count == 1 && b[4].first == 6);
        CHECK(b[5].column == 3 && b[5].row == SVG_ROW_LIST && !b[5].failed && b[5].count == 1);
        for (size_t i = 0; i < n; i++)
                sum += b[i].count;
        CHECK_EQ(sum, ARRAY_SIZE(l));
        CHECK_EQ(svg_lookup_buckets(l, 0, 400, 4, b), 0);
}

/* The whole graph of a hand-made report: two files, read in turn, 20 GiB
 * apart: the position axis shows two bands and a break, and the head's
 * path has one segment per pair of consecutive pieces. */
static void test_graph(void)
{
        struct rs_file files[2] = { { .path = (char *)"/data/a", .kind = RS_FILE_REGULAR },
                                    { .path = (char *)"/data/b", .kind = RS_FILE_REGULAR } };
        struct readset rs = { .command = (char *)"thrash", .duration_us = 7300, .files = files, .n_files = 2 };
        struct rp_file_stats fs[2] = { { .bytes = 40 * K }, { .bytes = 40 * K } };
        struct rp_piece p[21];
        struct report r = { .pieces = p, .n_pieces = 21, .files = fs, .pos_min = 1 * G, .pos_max = 21 * G + 44 * K };
        char dir[] = "/tmp/test-svg-XXXXXX", path[64], *text = NULL, *d, *q;
        size_t segments = 0;

        for (int i = 0; i < 20; i++)
                p[i] = (struct rp_piece){ .file = (uint32_t)(i % 2), .offset = (uint64_t)i / 2 * 4 * K, .length = 4 * K,
                                          .phys = (i % 2 ? 21 * G : 1 * G) + (uint64_t)i / 2 * 4 * K,
                                          .time_us = (uint64_t)i * 350 };
        p[20] = (struct rp_piece){ .file = 0, .length = 4 * K, .phys = UINT64_MAX, .time_us = 7000, .other_dev = true };
        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/g.svg", dir);
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        if (text) {
                CHECK(strstr(text, "data-bands=\"2\"") != NULL);
                CHECK(strstr(text, "class=\"break\"") != NULL);
                /* each band named by its file */
                CHECK(strstr(text, "paint-order=\"stroke\">a</text>") != NULL);
                CHECK(strstr(text, "paint-order=\"stroke\">b</text>") != NULL);
                CHECK(strstr(text, ">7 ms</text>") != NULL && strstr(text, ">8 ms</text>") == NULL);
                /* the path: the 20 known pieces, 19 segments, each a seek of 20 GiB */
                CHECK(strstr(text, "data-segments=\"19\"") != NULL);
                d = strstr(text, "id=\"head\"");
                d = d ? strstr(d, " d=\"") : NULL;
                CHECK(d != NULL);
                for (q = d; q && *q && *q != '/'; q++)
                        segments += *q == 'L';
                CHECK_EQ(segments, 19);
        }
        free(text);
        text = NULL;
        /* no position known: no band, no path, still a graph */
        for (int i = 0; i < 20; i++)
                p[i].phys = UINT64_MAX;
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        CHECK(text && strstr(text, "data-bands=\"0\"") && strstr(text, "data-segments=\"0\""));
        CHECK(text && strstr(text, "</svg>"));
        free(text);
        text = NULL;
        /* nothing read at all */
        r.n_pieces = 0;
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        CHECK(text && strstr(text, "data-bands=\"0\"") && strstr(text, "</svg>"));
        free(text);
        unlink(path);
        rmdir(dir);
}

/* the sum of the values of attribute attr (` data-count="`) in text */
static uint64_t sum_of(const char *text, const char *attr, size_t *n)
{
        uint64_t sum = 0;

        *n = 0;
        for (const char *p = strstr(text, attr); p; p = strstr(p + 1, attr)) {
                sum += strtoull(p + strlen(attr), NULL, 10);
                (*n)++;
        }
        return sum;
}

/* The lookup band of a hand-made read set: a mark per lookup at its time,
 * past SVG_LOOKUP_SINGLE one per bucket whose counts add up, and none
 * with a sentence where none were recorded. */
static void test_graph_lookups(void)
{
        struct rs_file files[1] = { { .path = (char *)"/data/a", .kind = RS_FILE_REGULAR } };
        struct readset rs = { .command = (char *)"walk", .duration_us = 1000, .files = files, .n_files = 1,
                              .rec_flags = RS_REC_LOOKUPS };
        struct rp_file_stats fs[1] = { { .bytes = 4 * K } };
        struct rp_piece p[1] = { { .file = 0, .length = 4 * K, .phys = G, .time_us = 100 } };
        struct report r = { .pieces = p, .n_pieces = 1, .files = fs, .pos_min = G, .pos_max = G + 4 * K };
        struct rs_lookup *l = calloc(SVG_LOOKUP_SINGLE + 500, sizeof(*l));
        char dir[] = "/tmp/test-svg-XXXXXX", path[64], *text = NULL;
        size_t n = 0;

        CHECK(l != NULL && mkdtemp(dir) != NULL);
        if (!l)
                return;
        snprintf(path, sizeof(path), "%s/g.svg", dir);
        l[0] = (struct rs_lookup){ .time_us = 5, .op = RS_LOOKUP_EXEC, .path = (char *)"/bin/walk" };
        l[1] = (struct rs_lookup){ .time_us = 300, .op = RS_LOOKUP_STAT, .result = -2, .path = (char *)"/x/<y>" };
        l[2] = (struct rs_lookup){ .time_us = 2000, .op = RS_LOOKUP_READDIR, .path = (char *)"/x" };
        rs.lookups = l;
        rs.n_lookups = 3;
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        if (text) {
                CHECK(strstr(text, "id=\"lookups\" data-lookups=\"3\" data-failed=\"1\" data-marks=\"3\" "
                                   "data-bucketed=\"0\"") != NULL);
                CHECK(strstr(text, "data-row=\"open\" data-failed=\"0\" data-t-us=\"5\" data-op=\"exec\"") != NULL);
                CHECK(strstr(text, "data-row=\"attr\" data-failed=\"1\" data-t-us=\"300\" data-op=\"stat\" "
                                   "data-result=\"-2\"><title>stat /x/&lt;y&gt;: ENOENT") != NULL);
                /* the last lookup, after the recording's end: the axis reaches it */
                CHECK(strstr(text, "data-row=\"list\" data-failed=\"0\" data-t-us=\"2000\"") != NULL);
                CHECK(strstr(text, "data-tmax-us=\"2000\"") != NULL && strstr(text, ">2.0 ms</text>") != NULL);
                sum_of(text, "class=\"lookup\"", &n);
                CHECK_EQ(n, 3);
        }
        free(text);
        text = NULL;
        /* dense: bucketed, the counts adding up to every lookup */
        for (size_t i = 0; i < SVG_LOOKUP_SINGLE + 500; i++)
                l[i] = (struct rs_lookup){ .time_us = i * 7, .op = (uint32_t)(i % 6 + 1), .result = i % 3 ? 0 : -2,
                                           .path = (char *)"/p" };
        rs.n_lookups = SVG_LOOKUP_SINGLE + 500;
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 4 << 20), 0);
        if (text) {
                CHECK(strstr(text, "data-bucketed=\"1\"") != NULL);
                CHECK_EQ(sum_of(text, " data-count=\"", &n), SVG_LOOKUP_SINGLE + 500);
                CHECK(n > 0 && n <= 820 / 4 * SVG_ROWS * 2);
                CHECK(strstr(text, "data-t-us=") == NULL);
        }
        free(text);
        text = NULL;
        /* none recorded, none traced: no marks, and the band says why */
        rs.n_lookups = 0;
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        CHECK(text && strstr(text, "data-lookups=\"0\"") && strstr(text, ">no lookups recorded<") &&
              !strstr(text, "class=\"lookup\""));
        free(text);
        text = NULL;
        rs.rec_flags = 0;
        CHECK_EQ(report_svg_write(path, &rs, &r), 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        CHECK(text && strstr(text, ">lookups not traced<"));
        free(text);
        free(l);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        test_time_ticks();
        test_byte_ticks();
        test_bands();
        test_lookup_rows();
        test_bucket_arithmetic();
        test_lookup_buckets();
        test_graph();
        test_graph_lookups();
        TESTS_DONE();
}
