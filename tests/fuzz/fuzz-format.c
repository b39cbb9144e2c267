/* SPDX-License-Identifier: MIT */
/* Fuzz target: any bytes given to the read-set parser give a clean result.
 *
 * Random bytes almost never pass the header's and the payload's CRC-32, so
 * the first input byte chooses what the rest is:
 *   0  a whole file, as read from disk;
 *   1  a raw payload, given a correct header (uncompressed);
 *   2  a raw payload, zstd-compressed and given a correct header;
 *   3  a whole file whose header checksum is fixed up (the header's fields
 *      themselves are fuzzed: sizes, flags, versions).
 * Modes 1-3 reach the payload decoder and the limits behind the checks.
 * Each input goes to format_decode() and to the peeks `run` makes before it
 * decodes, which must agree: what decodes has its first regular file
 * peeked, and what the peek refuses outright does not decode. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "model/format.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t crc(const uint8_t *p, size_t n)
{
        return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* A file of a correct header and the payload, compressed or not. */
static uint8_t *wrap(const uint8_t *payload, size_t n, bool zstd, size_t *ret_len)
{
        size_t bound = zstd ? ZSTD_compressBound(n) : n;
        uint8_t *out = malloc(FORMAT_HEADER_SIZE + bound + 1);
        size_t stored = n;

        if (!out)
                return NULL;
        if (zstd) {
                stored = ZSTD_compress(out + FORMAT_HEADER_SIZE, bound, payload, n, 1);
                if (ZSTD_isError(stored)) {
                        free(out);
                        return NULL;
                }
        } else if (n)
                memcpy(out + FORMAT_HEADER_SIZE, payload, n);
        memcpy(out, FORMAT_MAGIC, 8);
        put_le(out + 8, FORMAT_MAJOR, 2);
        put_le(out + 10, FORMAT_MINOR, 2);
        put_le(out + 12, zstd ? 1 : 0, 4);
        put_le(out + 16, n, 8);
        put_le(out + 24, stored, 8);
        put_le(out + 32, crc(payload, n), 4);
        put_le(out + 36, crc(out, 36), 4);
        *ret_len = FORMAT_HEADER_SIZE + stored;
        return out;
}

static void check(const uint8_t *buf, size_t len)
{
        struct readset *rs = NULL;
        const char *why = NULL;
        char *first = NULL;
        int d = format_decode(buf, len, &rs, &why);
        int p = format_peek_first_file_buf(buf, len, &first, &why);
        char *main_file = NULL;
        int pm = format_peek_main_file_buf(buf, len, &main_file, &why);

        if (d == 0) {
                /* What parses must re-encode and parse back, and the peek
                 * must have accepted it. */
                uint8_t *again_buf = NULL;
                size_t again_len = 0;
                struct readset *again = NULL;

                if (p != 0 || pm != 0)
                        __builtin_trap();
                if (format_encode(rs, &again_buf, &again_len) == 0 &&
                    format_decode(again_buf, again_len, &again, &why) != 0)
                        __builtin_trap();
                if (again && again->n_files != rs->n_files)
                        __builtin_trap();
                readset_free(again);
                free(again_buf);
                readset_free(rs);
        }
        free(first);
        free(main_file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *buf;
        size_t len;

        if (size < 1)
                return 0;
        switch (data[0] & 3) {
        case 0:
                check(data + 1, size - 1);
                return 0;
        case 1:
        case 2:
                buf = wrap(data + 1, size - 1, (data[0] & 3) == 2, &len);
                if (buf)
                        check(buf, len);
                free(buf);
                return 0;
        default:
                buf = malloc(size);
                if (!buf)
                        return 0;
                memcpy(buf, data + 1, size - 1);
                if (size - 1 >= FORMAT_HEADER_SIZE) {
                        memcpy(buf, FORMAT_MAGIC, 8);
                        put_le(buf + 36, crc(buf, 36), 4);
                }
                check(buf, size - 1);
                free(buf);
                return 0;
        }
}
