/* SPDX-License-Identifier: MIT */
/* The names of the devices readset plans and costs reads for: one table
 * and one parser for every option that takes a device or a profile
 * (replay and run --device, report --device and --profile, layout
 * --profile).  A name is a kind (rotational, solid: the planner's own
 * settings, costed as the reference disk and NVMe drive), a reference
 * profile shipped in profiles/ (by its file's stem or its short alias),
 * or a profile file (readset probe -o writes one). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

enum device_name_type {
        DEVICE_NAME_KIND,         /* rotational or solid */
        DEVICE_NAME_REFERENCE,    /* a profile shipped with readset (or in $READSET_PROFILE_DIR) */
        DEVICE_NAME_FILE,         /* a profile file the user gives */
};

struct device_name {
        enum device_name_type type;
        bool rotational;          /* DEVICE_NAME_KIND: which */
        char path[PATH_MAX];      /* the profile's file (a kind's: the reference it is costed
                                   * as); "" for a name of the table whose profile is not
                                   * installed */
};

/* arg resolved: a name of the table (its reference profile looked up in
 * $READSET_PROFILE_DIR, the installed directory and, run from a build
 * tree, the sources' profiles/; path "" where it is not installed), a
 * path as given (a '/' in it, or ending in ".json"), the stem of another
 * profile found there, else a file of that name.  -ENOENT: none of them;
 * -ENAMETOOLONG. */
int device_name_parse(const char *arg, struct device_name *ret);
/* The table's names, for --help and for the message refusing one:
 * "rotational, solid, hdd (hdd-7200), ..." (cut to size). */
void device_names_list(char *buf, size_t size);
/* Is path one of the reference profiles readset ships (the installed
 * directory, or the one beside the build being run)?  Such a file is part
 * of the program: its owner is not checked (util/trust.h). */
bool device_profile_is_reference(const char *path);
