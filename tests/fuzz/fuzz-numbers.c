/* SPDX-License-Identifier: MIT */
/* Fuzz target: the parsers of what a user types (counts and sizes on the
 * command line), of numbers in files (signed ints, MAJOR:MINOR, a number
 * the caller reads on from) and of mountinfo lines.  A number that parses
 * must print back to the same value; a size must be the number times its
 * suffix; a prefix must be digits, the whole string's parse where it ends
 * the string. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/mounts.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void prefixes(const char *s)
{
        const char *end;
        char buf[64];
        uint64_t v, w;
        dev_t d, e;
        int i, j;

        if (parse_u64_prefix(s, &v, &end) == 0) {
                if (end <= s || strspn(s, "0123456789") != (size_t)(end - s))
                        __builtin_trap();
                if ((parse_u64(s, &w) == 0) != !*end || (!*end && w != v))
                        __builtin_trap();
        } else if (parse_u64(s, &w) == 0)
                __builtin_trap();
        if (parse_int(s, &i) == 0) {
                snprintf(buf, sizeof(buf), "%d", i);
                if (parse_int(buf, &j) != 0 || j != i)
                        __builtin_trap();
        }
        if (parse_dev_prefix(s, &d, &end) == 0) {
                if (end <= s || (parse_dev(s, &e) == 0) != !*end || (!*end && e != d))
                        __builtin_trap();
                snprintf(buf, sizeof(buf), "%u:%u", major(d), minor(d));
                if (parse_dev(buf, &e) != 0 || e != d)
                        __builtin_trap();
        } else if (parse_dev(s, &e) == 0)
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1), buf[64];
        uint64_t v, w;
        struct mount_ent m;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;
        if (parse_u64(s, &v) == 0) {
                /* digits only, perhaps with leading zeros */
                snprintf(buf, sizeof(buf), "%" PRIu64, v);
                if (parse_u64(buf, &w) != 0 || w != v)
                        __builtin_trap();
        }
        if (parse_size(s, &v) == 0 && size > 0) {
                if (parse_u64(s, &w) == 0 && w != v)
                        __builtin_trap();
        }
        prefixes(s);
        (void)printable(s, buf, sizeof(buf));
        if (mounts_parse_line(s, &m) == 1) {
                mount_ent_free(&m);
        }
        free(s);
        return 0;
}
