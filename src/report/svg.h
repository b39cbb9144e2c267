/* SPDX-License-Identifier: MIT */
/* The disk access graph of readset report --svg. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"
#include "report/report.h"

/* Write the graph of r (built from rs) to path: position on the device
 * against time of first access, coloured by directory, the head's path
 * from each piece to the next, with a second panel of cumulative bytes and
 * reads.  The position axis shows only the bands of the device the pieces
 * lie in, the gaps between them drawn as breaks.  Dense read sets are
 * aggregated so that the file stays small.  Below the access panel, on the
 * same time axis, a band of the recorded path lookups: a row each for
 * opens, attribute calls and listings, failed ones apart; one mark per
 * lookup, or, past SVG_LOOKUP_SINGLE of them, one per time bucket and row
 * carrying its count.  Returns 0 or a negative errno. */
int report_svg_write(const char *path, const struct readset *rs, const struct report *r);

/* The pure parts, for the tests. */

/* An axis's ticks: every multiple of step (1, 2 or 5 times a power of ten,
 * in unit) from first, n of them, all labelled in the one unit with the
 * decimals the step needs (so no two labels are equal). */
struct svg_axis {
        double unit_value;     /* base units (us, bytes) per unit */
        const char *unit;      /* "us", "ms", "s"; "B", "KiB" ... "TiB" */
        double step, first;    /* in unit */
        unsigned n;
        int decimals;
};

/* Ticks inside [lo, hi] (base units), at most max_ticks steps across it:
 * time in us, ms or s as hi calls for; bytes in the largest binary unit
 * that is at most hi and in which the step is at least 0.01. */
void svg_axis_time(double lo, double hi, unsigned max_ticks, struct svg_axis *a);
void svg_axis_bytes(double lo, double hi, unsigned max_ticks, struct svg_axis *a);
/* Tick i's value in base units, and its label ("2.25 GiB", "40 ms"). */
double svg_axis_value(const struct svg_axis *a, unsigned i);
const char *svg_axis_label(const struct svg_axis *a, unsigned i, char buf[static 32]);

/* A band of the device drawn on the position axis: bytes [lo, hi). */
struct svg_band {
        uint64_t lo, hi;
};

#define SVG_MAX_BANDS 5
#define SVG_BREAK_FRACTION 0.25  /* a gap wider than this part of what stays drawn is a break */
#define SVG_MIN_BREAK (1u << 20) /* ... and at least this wide */

/* Cluster the extents x[0 .. n) (bytes [lo, hi), any order; sorted in
 * place) into bands: the widest gaps between them become breaks while each
 * is wider than SVG_BREAK_FRACTION of what remains drawn and SVG_MIN_BREAK,
 * at most SVG_MAX_BANDS bands.  Returns how many (bands in position order);
 * 0 when n is 0. */
size_t svg_bands(struct svg_band *x, size_t n, struct svg_band bands[static SVG_MAX_BANDS]);

/* The lookup band's rows: opens and execs; attribute calls (stat, access,
 * readlink); listings (readdir). */
enum { SVG_ROW_OPEN, SVG_ROW_ATTR, SVG_ROW_LIST, SVG_ROWS };
unsigned svg_lookup_row(uint32_t op);

#define SVG_LOOKUP_SINGLE 2000  /* lookups drawn one by one up to this many */

/* Time buckets: [0, tmax] cut into columns buckets of equal width (tmax > 0,
 * columns > 0); bucket i holds the times t with i <= t * columns / tmax <
 * i + 1, the last one also tmax and beyond.  Its first time (whole us),
 * and the bucket of t: exact, whatever the magnitudes. */
uint64_t svg_bucket_start(uint32_t i, uint64_t tmax, uint32_t columns);
uint32_t svg_bucket_of(uint64_t t, uint64_t tmax, uint32_t columns);

/* A mark of the bucketed band: the lookups of one bucket, row and outcome. */
struct svg_lookup_bucket {
        uint32_t column;
        uint8_t row;            /* SVG_ROW_* */
        bool failed;
        uint32_t count;
        uint32_t first;         /* the index of its first lookup */
};

/* Count the lookups l[0 .. n) (any order) into buckets; out has room for
 * columns * SVG_ROWS * 2.  Returns how many are not empty (out[0 .. that),
 * by column, row, then successful before failed). */
size_t svg_lookup_buckets(const struct rs_lookup *l, size_t n, uint64_t tmax, uint32_t columns,
                          struct svg_lookup_bucket *out);
