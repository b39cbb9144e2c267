/* SPDX-License-Identifier: MIT */
/* The requests a network file system's client sent during the start
 * (the read set's CLIENTS, record/clientstats.h) against the lookups the
 * start made below its mount: the amplification, per mount. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "model/readset.h"
#include "util/json.h"

/* The recorded lookups whose path is the mount point or lies below it. */
uint64_t amplification_lookups(const struct readset *rs, const char *mount);
/* "client_requests": [{"mount", "client", "requests_sent", "lookups_made",
 * "amplification" (sent / made; absent without lookups)}], [] for none. */
void amplification_write_json(struct json *j, const struct readset *rs);
/* Its section of the text report (nothing for none), lines within width. */
void amplification_write_text(FILE *f, const struct readset *rs, size_t width);
