/* SPDX-License-Identifier: MIT */
/* The read-set file format (docs/FORMAT.md): a checksummed header and a
 * zstd-compressed payload of varint-encoded sections. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"

#define FORMAT_MAGIC "RDSET\r\n\x1a"
#define FORMAT_MAJOR 1
#define FORMAT_MINOR 3
#define FORMAT_HEADER_SIZE 40
#define FORMAT_MAX_RAW (64ULL << 20)  /* refuse payloads above 64 MiB */
#define FORMAT_MAX_RATIO 1024         /* ... and compressed more than 1024:1 (+64 KiB) */
#define FORMAT_MAX_STRING 65536
#define FORMAT_MAX_RANGES (4ULL << 20)  /* in all files together */
#define FORMAT_MAX_FILES (1ULL << 20)
#define FORMAT_MAX_LOOKUPS (4ULL << 20)
#define FORMAT_MAX_CLIENTS 256       /* network mounts whose counters a recording keeps */

/* Serialize rs into a newly allocated buffer, the payload zstd-compressed
 * where libzstd.so can be opened (format_compresses()) and compressing
 * makes it smaller, stored as it is otherwise. */
int format_encode(const struct readset *rs, uint8_t **ret_buf, size_t *ret_len);
/* The same, the payload never compressed when compress is false. */
int format_encode_as(const struct readset *rs, bool compress, uint8_t **ret_buf, size_t *ret_len);
bool format_compresses(void);

/* Parse a buffer.  On failure returns a negative errno and, if ret_why is
 * not NULL, points it at a static description of what is wrong:
 *   -EBADMSG   corrupt (bad checksum, malformed payload)
 *   -ENOMSG    not a read-set file (bad magic)
 *   -EPROTONOSUPPORT  written by a newer, incompatible readset
 *   -ENODATA   truncated */
int format_decode(const uint8_t *buf, size_t len, struct readset **ret, const char **ret_why);

/* File helpers.  format_write() writes to a temporary file in the same
 * directory and renames it into place, so a crash never leaves half a file. */
int format_write(const struct readset *rs, const char *path);
/* On failure why (why_len bytes) says what is wrong: the file refused
 * (util/trust.h: its type, owner, mode), too large, or format_decode()'s
 * reason; "" when the -errno says it all. */
int format_read(const char *path, struct readset **ret, char *why, size_t why_len);
/* The whole file, which must be a regular file of plausible size (what
 * format_read() decodes), for a caller that peeks before decoding. */
int format_load(const char *path, uint8_t **ret_buf, size_t *ret_len, char *why, size_t why_len);

/* The path of the read set's first regular file, from a prefix of the
 * payload, after every header check: where a replay will read, known before
 * the whole file is decoded.  *ret_path is NULL when the prefix does not say.
 * Errors are format_decode()'s (the payload's checksum only when the payload
 * is at most 256 KiB, all of which the peek then reads). */
int format_peek_first_file(const char *path, char **ret_path, char *why, size_t why_len);
/* The same, of a file already loaded (format_load()). */
int format_peek_first_file_buf(const uint8_t *buf, size_t len, char **ret_path, const char **ret_why);
/* The same peek for the first regular file on the device most of the
 * read set's bytes come from (the one a replay is planned for): *ret_path
 * NULL where the files do not all lie in the peeked prefix, or none is
 * regular. */
int format_peek_main_file_buf(const uint8_t *buf, size_t len, char **ret_path, const char **ret_why);
