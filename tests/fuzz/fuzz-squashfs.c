/* SPDX-License-Identifier: MIT */
/* Fuzz target: readset's reader of squashfs images (src/pack/squashfs.c),
 * which a replay also turns on whatever image a portable read set's root is
 * mounted from.  An image that opens must give, for the names it is asked,
 * spans that lie inside it, each of some bytes; tables that lie inside it
 * too.  The seeds (tests/fuzz/corpus/squashfs/) are mksquashfs images of a
 * three-file tree (/big, /small, /sub/deep; 4 KiB blocks, -nopad), one per
 * compressor and one uncompressed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/readset.h"
#include "pack/squashfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "/big", "/small", "/sub/deep", "/sub", "/", "/nope", "/sub/deep/x" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int fd = memfd_create("fuzz-squashfs", MFD_CLOEXEC);
        struct sqfs *s = NULL;
        uint64_t t0, t1;

        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t)size || sqfs_open_fd(fd, &s) < 0) {
                close(fd);
                return 0;
        }
        close(fd);
        sqfs_tables(s, &t0, &t1);
        if (t0 > t1 || t1 > size)
                __builtin_trap();
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                struct rs_span *v = NULL;
                size_t n = 0, cap = 0;
                if (sqfs_file_spans(s, names[i], 0, UINT64_MAX / 2, &v, &n, &cap) == 0)
                        for (size_t k = 0; k < n; k++)
                                if (v[k].length == 0 || v[k].offset > size || v[k].length > size - v[k].offset)
                                        __builtin_trap();
                free(v);
                v = NULL;
                n = cap = 0;
                (void)sqfs_file_spans(s, names[i], 5000, 3000, &v, &n, &cap);
                free(v);
        }
        sqfs_close(s);
        return 0;
}
