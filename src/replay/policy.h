/* SPDX-License-Identifier: MIT */
/* What replay and run share: option parsing for the engine, the memory
 * budget, and printing engine statistics. */
#pragma once

#include <stdbool.h>
#include <getopt.h>
#include <stdint.h>

#include "replay/engine.h"
#include "replay/planner.h"
#include "model/readset.h"

/* MemAvailable minus 10% of MemTotal: what a replay may add to the page
 * cache without pushing the system into reclaim.  0 when nothing may. */
int replay_memory_budget(uint64_t *ret);

/* Plan rs for the device that holds its files, within max_bytes (0: none)
 * and the memory budget. */
int replay_plan(const struct readset *rs, uint64_t max_bytes, bool accessed_only, struct plan **ret,
                struct device_profile *ret_dev);

/* The profile replay plans by when the read set's data is on path's
 * device: --device if given, else the device's (saved probe profile, else
 * sysfs), else solid-state. */
void replay_device_for(const char *path, struct device_profile *ret);

/* The long options of replay_parse_option(), for a getopt_long table. */
#define REPLAY_OPT_ALL_LOOKUPS 0x100
#define REPLAY_ENGINE_OPTIONS \
        { "method", required_argument, NULL, 'm' }, \
        { "queue-depth", required_argument, NULL, 'Q' }, \
        { "threads", required_argument, NULL, 'T' }, \
        { "max-bytes", required_argument, NULL, 'B' }, \
        { "no-lookups", no_argument, NULL, 'L' }, \
        { "all-lookups", no_argument, NULL, REPLAY_OPT_ALL_LOOKUPS }, \
        { "device", required_argument, NULL, 'D' }

/* The engine options replay and run share: -m/--method, -Q/--queue-depth,
 * --max-bytes (B), -T/--threads, --no-lookups (L), --all-lookups, --device (D).  Returns 1 when c was one
 * of them, 0 when it was not, -2 after printing a usage error. */
int replay_parse_option(int c, const char *arg, const char *verb, struct engine_options *eo, uint64_t *max_bytes);

void replay_print_stats(const struct engine_stats *st, const struct plan *plan, bool json);
