/* SPDX-License-Identifier: MIT */
/* A file's content, or the parts of it a start reads, as a SHA-256 digest (OpenSSL's libcrypto, opened when
 * first needed), read through the page
 * cache or, to check what the device holds, around it (O_DIRECT). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct content_sum {
        uint8_t d[32];
};

/* Can digests be made (OpenSSL's libcrypto could be opened)?  -ELIBACC. */
int checksum_available(void);
/* The digest of fd's first size bytes (a file shorter than that: -ESTALE);
 * direct: read from the device, not the page cache (the kernel writes
 * dirty pages back first).  -errno. */
int checksum_fd(int fd, uint64_t size, bool direct, struct content_sum *ret);

struct rs_file;
/* The digest of the bytes of f's recorded ranges, in their order, each cut
 * at f's recorded size (what a portable read set keeps of a file's content:
 * model/readset.h), read from fd through the page cache: -ESTALE when the
 * file is shorter now.  -errno. */
int checksum_ranges(int fd, const struct rs_file *f, struct content_sum *ret);
/* The digest of the bytes of n spans of fd, in order, read through the page
 * cache (which keeps them), 1 MiB at a time: -ESTALE when fd is shorter. */
struct rs_span;
int checksum_spans(int fd, const struct rs_span *spans, size_t n, struct content_sum *ret);
/* The digest of n bytes at p.  -errno. */
int checksum_buf(const void *p, size_t n, struct content_sum *ret);
