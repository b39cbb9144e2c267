/* SPDX-License-Identifier: MIT */
/* The disk access graph of readset report --svg. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"
#include "report/report.h"

/* Write the graph of r (built from rs) to path: position on the device
 * against time of first access, coloured by directory, the head's path
 * from each piece to the next, with a second panel of cumulative bytes and
 * reads.  The position axis shows only the bands of the device the pieces
 * lie in, the gaps between them drawn as breaks.  Dense read sets are
 * aggregated so that the file stays small.  Returns 0 or a negative errno. */
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
