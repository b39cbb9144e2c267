/* SPDX-License-Identifier: MIT */
/* The disk access graph of readset report --svg. */
#pragma once

#include "model/readset.h"
#include "report/report.h"

/* Write the graph of r (built from rs) to path: position on the device
 * against time of first access, coloured by directory, with a second panel
 * of cumulative bytes and reads.  Dense read sets are aggregated so that
 * the file stays small.  Returns 0 or a negative errno. */
int report_svg_write(const char *path, const struct readset *rs, const struct report *r);
