/* SPDX-License-Identifier: MIT */
#include "layout/checksum.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#define CHUNK (1u << 20)   /* a multiple of any logical block size O_DIRECT needs */

int checksum_fd(int fd, uint64_t size, bool direct, struct layout_sum *ret)
{
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        void *buf = NULL;
        uint64_t off = 0;
        int fl = fcntl(fd, F_GETFL), r = 0;
        unsigned len = 0;

        if (!md || posix_memalign(&buf, 4096, CHUNK) != 0) {
                EVP_MD_CTX_free(md);
                return -ENOMEM;
        }
        if (fl < 0 || (direct && fcntl(fd, F_SETFL, fl | O_DIRECT) < 0))
                r = -errno;
        if (r >= 0 && EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
                r = -ENOMEM;
        while (r >= 0 && off < size) {
                /* O_DIRECT reads whole blocks: the last one past the end
                 * comes back short */
                size_t want = direct ? CHUNK : (size_t)MIN(size - off, CHUNK);
                ssize_t k = pread(fd, buf, want, (off_t)off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (k == 0) {
                        r = -ESTALE;
                        break;
                }
                if ((uint64_t)k > size - off)
                        k = (ssize_t)(size - off);
                if (EVP_DigestUpdate(md, buf, (size_t)k) != 1)
                        r = -ENOMEM;
                off += (uint64_t)k;
        }
        if (r >= 0 && EVP_DigestFinal_ex(md, ret->d, &len) != 1)
                r = -ENOMEM;
        if (direct && fl >= 0)
                (void)fcntl(fd, F_SETFL, fl);
        EVP_MD_CTX_free(md);
        free(buf);
        return r;
}
