/* SPDX-License-Identifier: MIT */
/* Fuzz target: the parsers of what a user types (counts and sizes on the
 * command line) and of mountinfo lines.  A number that parses must print
 * back to the same value; a size must be the number times its suffix. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mounts.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        (void)printable(s, buf, sizeof(buf));
        if (mounts_parse_line(s, &m) == 1) {
                mount_ent_free(&m);
        }
        free(s);
        return 0;
}
