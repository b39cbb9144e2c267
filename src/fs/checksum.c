/* SPDX-License-Identifier: MIT */
#include "fs/checksum.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "model/readset.h"
#include "util/util.h"
#include "util/banned.h"

#define CHUNK (1u << 20)   /* a multiple of any logical block size O_DIRECT needs */

/* OpenSSL's digest functions, from the library opened when layout first
 * needs them: linked in, its 4.7 MB were mapped and relocated at every
 * cold start of every verb (7 ms of a readset run). */
static struct {
        EVP_MD_CTX *(*ctx_new)(void);
        void (*ctx_free)(EVP_MD_CTX *);
        const EVP_MD *(*sha256)(void);
        int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
        int (*update)(EVP_MD_CTX *, const void *, size_t);
        int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
        bool ok;
} evp;
static pthread_once_t evp_once = PTHREAD_ONCE_INIT;

static void evp_open(void)
{
        /* the soname of the libcrypto built against */
        void *h = dlopen("libcrypto.so." STRINGIFY(OPENSSL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);

        if (!h)
                return;
        *(void **)&evp.ctx_new = dlsym(h, "EVP_MD_CTX_new");
        *(void **)&evp.ctx_free = dlsym(h, "EVP_MD_CTX_free");
        *(void **)&evp.sha256 = dlsym(h, "EVP_sha256");
        *(void **)&evp.init = dlsym(h, "EVP_DigestInit_ex");
        *(void **)&evp.update = dlsym(h, "EVP_DigestUpdate");
        *(void **)&evp.final = dlsym(h, "EVP_DigestFinal_ex");
        evp.ok = evp.ctx_new && evp.ctx_free && evp.sha256 && evp.init && evp.update && evp.final;
}

int checksum_available(void)
{
        pthread_once(&evp_once, evp_open);
        return evp.ok ? 0 : -ELIBACC;
}

int checksum_fd(int fd, uint64_t size, bool direct, struct content_sum *ret)
{
        EVP_MD_CTX *md;
        void *buf = NULL;
        uint64_t off = 0;
        int fl = fcntl(fd, F_GETFL), r = checksum_available();
        unsigned len = 0;

        if (r < 0)
                return r;
        md = evp.ctx_new();
        if (!md || posix_memalign(&buf, 4096, CHUNK) != 0) {
                if (md)
                        evp.ctx_free(md);
                return -ENOMEM;
        }
        if (fl < 0 || (direct && fcntl(fd, F_SETFL, fl | O_DIRECT) < 0))
                r = -errno;
        if (r >= 0 && evp.init(md, evp.sha256(), NULL) != 1)
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
                if (evp.update(md, buf, (size_t)k) != 1)
                        r = -ENOMEM;
                off += (uint64_t)k;
        }
        if (r >= 0 && evp.final(md, ret->d, &len) != 1)
                r = -ENOMEM;
        if (direct && fl >= 0)
                (void)fcntl(fd, F_SETFL, fl);
        evp.ctx_free(md);
        free(buf);
        return r;
}

/* A digest made of byte ranges read from files, CHUNK bytes at a time
 * through the page cache. */
struct hasher {
        EVP_MD_CTX *md;
        uint8_t *buf;
        int r;
};

static int hasher_begin(struct hasher *h)
{
        *h = (struct hasher){ .r = checksum_available() };
        if (h->r < 0)
                return h->r;
        h->md = evp.ctx_new();
        h->buf = malloc(CHUNK);
        if (!h->md || !h->buf || evp.init(h->md, evp.sha256(), NULL) != 1)
                h->r = -ENOMEM;
        return h->r;
}

/* Bytes [off, end) of fd: -ESTALE when it is shorter. */
static void hasher_file(struct hasher *h, int fd, uint64_t off, uint64_t end)
{
        while (h->r >= 0 && off < end) {
                ssize_t k = pread(fd, h->buf, (size_t)MIN(end - off, (uint64_t)CHUNK), (off_t)off);
                if (k < 0) {
                        if (errno != EINTR)
                                h->r = -errno;
                        continue;
                }
                if (k == 0)
                        h->r = -ESTALE;
                else if (evp.update(h->md, h->buf, (size_t)k) != 1)
                        h->r = -ENOMEM;
                off += (uint64_t)k;
        }
}

static int hasher_end(struct hasher *h, struct content_sum *ret)
{
        unsigned len = 0;

        if (h->r >= 0 && evp.final(h->md, ret->d, &len) != 1)
                h->r = -ENOMEM;
        if (h->md)
                evp.ctx_free(h->md);
        free(h->buf);
        return h->r;
}

int checksum_ranges(int fd, const struct rs_file *f, struct content_sum *ret)
{
        struct hasher h;

        if (hasher_begin(&h) >= 0)
                for (size_t i = 0; i < f->n_ranges; i++)
                        hasher_file(&h, fd, f->ranges[i].offset, MIN(f->ranges[i].offset + f->ranges[i].length, f->size));
        return hasher_end(&h, ret);
}

int checksum_spans(int fd, const struct rs_span *spans, size_t n, struct content_sum *ret)
{
        struct hasher h;

        if (hasher_begin(&h) >= 0)
                for (size_t i = 0; i < n; i++)
                        hasher_file(&h, fd, spans[i].offset, spans[i].offset + spans[i].length);
        return hasher_end(&h, ret);
}

int checksum_buf(const void *p, size_t n, struct content_sum *ret)
{
        struct hasher h;

        if (hasher_begin(&h) >= 0 && evp.update(h.md, p, n) != 1)
                h.r = -ENOMEM;
        return hasher_end(&h, ret);
}
