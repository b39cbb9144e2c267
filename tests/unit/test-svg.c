/* SPDX-License-Identifier: MIT */
/* The disk access graph: round ticks in one unit, the bands of the
 * position axis, and the head's path of a hand-made report. */
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

int main(void)
{
        test_time_ticks();
        test_byte_ticks();
        test_bands();
        test_graph();
        TESTS_DONE();
}
