/* SPDX-License-Identifier: MIT */
/* A file's content as a SHA-256 digest (OpenSSL's libcrypto, opened when
 * first needed), read through the page
 * cache or, to check what the device holds, around it (O_DIRECT). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct layout_sum {
        uint8_t d[32];
};

/* Can digests be made (OpenSSL's libcrypto could be opened)?  -ELIBACC. */
int checksum_available(void);
/* The digest of fd's first size bytes (a file shorter than that: -ESTALE);
 * direct: read from the device, not the page cache (the kernel writes
 * dirty pages back first).  -errno. */
int checksum_fd(int fd, uint64_t size, bool direct, struct layout_sum *ret);
