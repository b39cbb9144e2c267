/* SPDX-License-Identifier: MIT */
/* Fuzz target: any bytes given to the read-set parser give a clean result. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct readset *rs = NULL;
        const char *why = NULL;

        if (format_decode(data, size, &rs, &why) == 0) {
                /* What parses must re-encode and parse back. */
                uint8_t *buf = NULL;
                size_t len = 0;
                struct readset *again = NULL;
                if (format_encode(rs, &buf, &len) == 0 && format_decode(buf, len, &again, &why) != 0)
                        __builtin_trap();
                readset_free(again);
                free(buf);
                readset_free(rs);
        }
        return 0;
}
