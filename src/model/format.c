/* SPDX-License-Identifier: MIT */
#include "model/format.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

enum {
        SEC_END = 0,
        SEC_META = 1,
        SEC_FILES = 2,
        SEC_LOOKUPS = 3,
        SEC_COUNTS = 4,         /* 1.1 */
        SEC_CONTENT = 5,        /* 1.2 */
        SEC_IMAGE = 6,          /* 1.2 */
        SEC_CLIENTS = 7,        /* 1.3 */
        _SEC_KNOWN_MAX = SEC_CLIENTS,
};

#define CONTENT_BYTES 16

#define FLAG_ZSTD 1u

/* ---- writer ----------------------------------------------------------- */

struct wbuf {
        uint8_t *p;
        size_t n, cap;
        int err;
};

static void w_bytes(struct wbuf *w, const void *d, size_t n)
{
        if (w->err || n == 0)
                return;
        if (grow_array(&w->p, &w->cap, w->n + n, 1) < 0) {
                w->err = -ENOMEM;
                return;
        }
        memcpy(w->p + w->n, d, n);
        w->n += n;
}

static void w_varint(struct wbuf *w, uint64_t v)
{
        uint8_t b[10];
        size_t n = 0;

        do {
                b[n] = v & 0x7f;
                v >>= 7;
                if (v)
                        b[n] |= 0x80;
                n++;
        } while (v);
        w_bytes(w, b, n);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static void w_string(struct wbuf *w, const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (n > FORMAT_MAX_STRING) {
                w->err = -ENAMETOOLONG;
                return;
        }
        w_varint(w, n);
        w_bytes(w, s, n);
}

static void w_section(struct wbuf *w, uint8_t tag, const struct wbuf *body)
{
        if (body->err) {
                w->err = body->err;
                return;
        }
        w_bytes(w, &tag, 1);
        w_varint(w, body->n);
        w_bytes(w, body->p, body->n);
}


static uint32_t crc(const uint8_t *p, size_t n)
{
        uLong c = crc32(0L, Z_NULL, 0);
        while (n > 0) {
                uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
                c = crc32(c, p, k);
                p += k;
                n -= k;
        }
        return (uint32_t)c;
}

/* Each section's body, then the section (tag, length, body) added to the
 * payload; an error in the body becomes the payload's. */
static void encode_meta(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf meta = { 0 };

        w_varint(&meta, rs->created_unix);
        w_varint(&meta, rs->duration_us);
        w_varint(&meta, rs->page_size);
        w_varint(&meta, rs->rec_flags);
        w_varint(&meta, rs->events);
        w_varint(&meta, rs->lost_events);
        w_varint(&meta, rs->lookups_lost);
        w_string(&meta, rs->command);
        w_section(payload, SEC_META, &meta);
        free(meta.p);
}

/* Ranges as deltas: an offset from the previous range's end, a time from
 * the previous range's. */
static void encode_file(struct wbuf *files, const struct rs_file *f)
{
        uint64_t prev_end = 0, t = 0;

        w_varint(files, f->kind);
        w_varint(files, f->flags);
        w_varint(files, f->dev);
        w_varint(files, f->ino);
        w_varint(files, f->size);
        w_varint(files, zigzag(f->mtime_ns));
        w_string(files, f->path);
        w_varint(files, f->n_ranges);
        for (size_t j = 0; j < f->n_ranges; j++) {
                const struct rs_range *rg = &f->ranges[j];
                w_varint(files, zigzag((int64_t)(rg->offset - prev_end)));
                w_varint(files, rg->length);
                w_varint(files, zigzag((int64_t)(rg->time_us - t)));
                w_varint(files, rg->flags);
                prev_end = rg->offset + rg->length;
                t = rg->time_us;
        }
}

static void encode_files(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf files = { 0 };

        w_varint(&files, rs->n_files);
        for (size_t i = 0; i < rs->n_files; i++)
                encode_file(&files, &rs->files[i]);
        w_section(payload, SEC_FILES, &files);
        free(files.p);
}

static void encode_lookups(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf lookups = { 0 };
        uint64_t prev_time = 0;

        w_varint(&lookups, rs->n_lookups);
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                w_varint(&lookups, zigzag((int64_t)(l->time_us - prev_time)));
                w_varint(&lookups, l->op);
                w_varint(&lookups, zigzag(l->result));
                w_varint(&lookups, l->pid);
                w_string(&lookups, l->path);
                prev_time = l->time_us;
        }
        w_section(payload, SEC_LOOKUPS, &lookups);
        free(lookups.p);
}

static void encode_counts(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf counts = { 0 };

        w_varint(&counts, rs->lookups_unresolved);
        w_section(payload, SEC_COUNTS, &counts);
        free(counts.p);
}

/* Only when a file is known by content: its index and digest. */
static void encode_content(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf content = { 0 };
        size_t n_content = 0;

        for (size_t i = 0; i < rs->n_files; i++)
                n_content += !!(rs->files[i].flags & RS_FILE_BY_CONTENT);
        if (!n_content)
                return;
        w_varint(&content, n_content);
        for (size_t i = 0; i < rs->n_files; i++) {
                if (!(rs->files[i].flags & RS_FILE_BY_CONTENT))
                        continue;
                w_varint(&content, i);
                w_bytes(&content, rs->files[i].content, CONTENT_BYTES);
        }
        w_section(payload, SEC_CONTENT, &content);
        free(content.p);
}

/* Only when packed: the image, and its spans as deltas from the previous
 * span's end. */
static void encode_image(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf image = { 0 };
        uint64_t end = 0;

        if (!rs->image)
                return;
        w_varint(&image, rs->image->size);
        w_bytes(&image, rs->image->head, sizeof(rs->image->head));
        w_bytes(&image, rs->image->digest, sizeof(rs->image->digest));
        w_varint(&image, rs->image->n_spans);
        for (size_t i = 0; i < rs->image->n_spans; i++) {
                w_varint(&image, zigzag((int64_t)(rs->image->spans[i].offset - end)));
                w_varint(&image, rs->image->spans[i].length);
                end = rs->image->spans[i].offset + rs->image->spans[i].length;
        }
        w_section(payload, SEC_IMAGE, &image);
        free(image.p);
}

/* Only when the recorder read a network client's counters. */
static void encode_clients(struct wbuf *payload, const struct readset *rs)
{
        struct wbuf clients = { 0 };

        if (!rs->n_clients)
                return;
        w_varint(&clients, rs->n_clients);
        for (size_t i = 0; i < rs->n_clients; i++) {
                w_varint(&clients, rs->clients[i].kind);
                w_varint(&clients, rs->clients[i].requests);
                w_string(&clients, rs->clients[i].mount);
        }
        w_section(payload, SEC_CLIENTS, &clients);
        free(clients.p);
}

/* zstd's compressor, from the shared library, opened when a read set is
 * first written: linked in (the decompressor is), its 440 KB were a quarter
 * of readset, which the kernel reads whole at every cold start of every verb
 * (0.7 ms of each on this machine's disk), and only writers need it.  Debian
 * systems all have libzstd1 (dpkg depends on it); without it the payload is
 * stored uncompressed, as the format allows. */
static struct {
        size_t (*compress)(void *, size_t, const void *, size_t, int);
        unsigned (*is_error)(size_t);
} zc;
static pthread_once_t zc_once = PTHREAD_ONCE_INIT;

static void zc_open(void)
{
        void *h = dlopen("libzstd.so." STRINGIFY(ZSTD_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);

        if (!h)
                return;
        *(void **)&zc.compress = dlsym(h, "ZSTD_compress");
        *(void **)&zc.is_error = dlsym(h, "ZSTD_isError");
        if (!zc.compress || !zc.is_error)
                zc.compress = NULL;
}

bool format_compresses(void)
{
        pthread_once(&zc_once, zc_open);
        return zc.compress != NULL;
}

/* The header, then the payload, compressed where it can be and where that
 * makes it smaller. */
static int frame_payload(const struct wbuf *payload, bool compress, uint8_t **ret_buf, size_t *ret_len)
{
        _cleanup_free_ uint8_t *out = NULL;
        size_t bound = ZSTD_COMPRESSBOUND(payload->n), clen = 0;
        uint32_t flags = 0;

        out = malloc(FORMAT_HEADER_SIZE + MAX(bound, payload->n));
        if (!out)
                return -ENOMEM;
        if (compress && format_compresses()) {
                clen = zc.compress(out + FORMAT_HEADER_SIZE, bound, payload->p, payload->n, 3);
                if (zc.is_error(clen))
                        return -EIO;
                flags = FLAG_ZSTD;
        }
        if (!flags || clen >= payload->n) {
                /* the decoder wants raw_len == stored_len here */
                if (payload->n)
                        memcpy(out + FORMAT_HEADER_SIZE, payload->p, payload->n);
                clen = payload->n;
                flags = 0;
        }
        memcpy(out, FORMAT_MAGIC, 8);
        put_le(out + 8, FORMAT_MAJOR, 2);
        put_le(out + 10, FORMAT_MINOR, 2);
        put_le(out + 12, flags, 4);
        put_le(out + 16, payload->n, 8);
        put_le(out + 24, clen, 8);
        put_le(out + 32, crc(payload->p, payload->n), 4);
        put_le(out + 36, crc(out, 36), 4);
        *ret_len = FORMAT_HEADER_SIZE + clen;
        *ret_buf = TAKE_PTR(out);
        return 0;
}

int format_encode_as(const struct readset *rs, bool compress, uint8_t **ret_buf, size_t *ret_len)
{
        struct wbuf payload = { 0 };
        uint8_t tag = SEC_END;
        int r;

        encode_meta(&payload, rs);
        encode_files(&payload, rs);
        encode_lookups(&payload, rs);
        encode_counts(&payload, rs);
        encode_content(&payload, rs);
        encode_image(&payload, rs);
        encode_clients(&payload, rs);
        w_bytes(&payload, &tag, 1);
        if (payload.err)
                r = payload.err;
        else if (payload.n > FORMAT_MAX_RAW)
                r = -EFBIG;
        else
                r = frame_payload(&payload, compress, ret_buf, ret_len);
        free(payload.p);
        return r;
}

int format_encode(const struct readset *rs, uint8_t **ret_buf, size_t *ret_len)
{
        return format_encode_as(rs, true, ret_buf, ret_len);
}

/* ---- reader ----------------------------------------------------------- */

struct rbuf {
        const uint8_t *p;
        size_t n, off;
        int err;
};

static uint64_t r_varint(struct rbuf *r)
{
        uint64_t v = 0;

        for (unsigned shift = 0; shift < 64; shift += 7) {
                uint8_t b;
                if (r->err)
                        return 0;
                if (r->off >= r->n) {
                        r->err = -EBADMSG;
                        return 0;
                }
                b = r->p[r->off++];
                if (shift == 63 && b > 1) {
                        r->err = -EBADMSG;
                        return 0;
                }
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80))
                        return v;
        }
        r->err = -EBADMSG;
        return 0;
}

/* A count of items each taking at least min_bytes: refuse counts the
 * remaining input cannot possibly hold, before allocating anything. */
static uint64_t r_count(struct rbuf *r, size_t min_bytes)
{
        uint64_t n = r_varint(r);
        if (!r->err && n > (r->n - r->off) / min_bytes)
                r->err = -EBADMSG;
        return r->err ? 0 : n;
}

static char *r_string(struct rbuf *r)
{
        uint64_t n = r_varint(r);
        char *s;

        if (r->err)
                return NULL;
        if (n > FORMAT_MAX_STRING || n > r->n - r->off || memchr(r->p + r->off, 0, n)) {
                r->err = -EBADMSG;
                return NULL;
        }
        s = malloc(n + 1);
        if (!s) {
                r->err = -ENOMEM;
                return NULL;
        }
        memcpy(s, r->p + r->off, n);
        s[n] = 0;
        r->off += n;
        return s;
}

static uint32_t r_u32(struct rbuf *r)
{
        uint64_t v = r_varint(r);
        if (v > UINT32_MAX && !r->err)
                r->err = -EBADMSG;
        return (uint32_t)v;
}

static int parse_meta(struct rbuf *r, struct readset *rs)
{
        rs->created_unix = r_varint(r);
        rs->duration_us = r_varint(r);
        rs->page_size = r_u32(r);
        rs->rec_flags = r_u32(r);
        rs->events = r_varint(r);
        rs->lost_events = r_varint(r);
        rs->lookups_lost = r_varint(r);
        rs->command = r_string(r);
        if (!r->err && (rs->page_size == 0 || (rs->page_size & (rs->page_size - 1))))
                r->err = -EBADMSG;
        return r->err;
}

/* A file record up to its ranges: kind, flags, identity, path. */
static void r_file_head(struct rbuf *r, struct rs_file *f)
{
        f->kind = r_u32(r);
        f->flags = r_u32(r);
        f->dev = r_varint(r);
        f->ino = r_varint(r);
        f->size = r_varint(r);
        f->mtime_ns = unzigzag(r_varint(r));
        f->path = r_string(r);
}

static int parse_files(struct rbuf *r, struct readset *rs)
{
        uint64_t n = r_count(r, 8), total_ranges = 0;

        if (r->err)
                return r->err;
        if (n > FORMAT_MAX_FILES)
                return -EBADMSG;
        rs->files = calloc(n ? n : 1, sizeof(*rs->files));
        if (!rs->files)
                return -ENOMEM;
        rs->cap_files = n;
        for (uint64_t i = 0; i < n; i++) {
                struct rs_file *f = &rs->files[i];
                uint64_t prev_end = 0, t = 0, nr;

                r_file_head(r, f);
                if (r->err)
                        return r->err;
                rs->n_files = i + 1;
                nr = r_count(r, 4);
                if (r->err)
                        return r->err;
                total_ranges += nr;
                if (total_ranges > FORMAT_MAX_RANGES)
                        return -EBADMSG;
                f->ranges = calloc(nr ? nr : 1, sizeof(*f->ranges));
                if (!f->ranges)
                        return -ENOMEM;
                f->cap_ranges = nr;
                for (uint64_t j = 0; j < nr; j++) {
                        struct rs_range *rg = &f->ranges[j];
                        rg->offset = prev_end + (uint64_t)unzigzag(r_varint(r));
                        rg->length = r_varint(r);
                        rg->time_us = t + (uint64_t)unzigzag(r_varint(r));
                        rg->flags = r_u32(r);
                        if (r->err)
                                return r->err;
                        /* a range must be addressable by off_t */
                        if (rg->length == 0 || rg->offset > (uint64_t)INT64_MAX ||
                            rg->length > (uint64_t)INT64_MAX - rg->offset)
                                return -EBADMSG;
                        prev_end = rg->offset + rg->length;
                        t = rg->time_us;
                        f->n_ranges = j + 1;
                }
        }
        return 0;
}

/* CONTENT: the digests of the files known by content, by index, in
 * increasing order; every such file has one, no other file has. */
static int parse_content(struct rbuf *r, struct readset *rs)
{
        uint64_t n = r_count(r, 1 + CONTENT_BYTES), have = 0;
        int64_t prev = -1;

        for (uint64_t k = 0; k < n && !r->err; k++) {
                uint64_t i = r_varint(r);
                if (r->err || i >= rs->n_files || (int64_t)i <= prev || r->n - r->off < CONTENT_BYTES ||
                    !(rs->files[i].flags & RS_FILE_BY_CONTENT))
                        return -EBADMSG;
                memcpy(rs->files[i].content, r->p + r->off, CONTENT_BYTES);
                r->off += CONTENT_BYTES;
                prev = (int64_t)i;
        }
        for (size_t i = 0; i < rs->n_files; i++)
                have += !!(rs->files[i].flags & RS_FILE_BY_CONTENT);
        return r->err ? r->err : have == n ? 0 : -EBADMSG;
}

/* IMAGE: the image's size, head digest and byte ranges, in order. */
static int parse_image(struct rbuf *r, struct readset *rs)
{
        struct rs_image *im = calloc(1, sizeof(*im));
        uint64_t n, end = 0;

        if (!im)
                return -ENOMEM;
        rs->image = im;
        im->size = r_varint(r);
        if (r->err || r->n - r->off < sizeof(im->head) + sizeof(im->digest))
                return -EBADMSG;
        memcpy(im->head, r->p + r->off, sizeof(im->head));
        r->off += sizeof(im->head);
        memcpy(im->digest, r->p + r->off, sizeof(im->digest));
        r->off += sizeof(im->digest);
        n = r_count(r, 2);
        if (r->err || n > FORMAT_MAX_RANGES)
                return -EBADMSG;
        im->spans = calloc(n ? n : 1, sizeof(*im->spans));
        if (!im->spans)
                return -ENOMEM;
        for (uint64_t i = 0; i < n && !r->err; i++) {
                int64_t d = unzigzag(r_varint(r));
                struct rs_span *s = &im->spans[i];
                s->offset = end + (uint64_t)d;
                s->length = r_varint(r);
                /* (in range of the image: checked with the rest) */
                if ((d < 0 && (uint64_t)0 - (uint64_t)d > end) || s->offset > im->size || s->length > im->size)
                        return -EBADMSG;
                end = s->offset + s->length;
                im->n_spans++;
        }
        return r->err;
}

/* CLIENTS: per mount, its client's kind, requests and mount point. */
static int parse_clients(struct rbuf *r, struct readset *rs)
{
        uint64_t n = r_count(r, 3);

        if (r->err)
                return r->err;
        if (n > FORMAT_MAX_CLIENTS)
                return -EBADMSG;        /* mounts: a few */
        for (uint64_t i = 0; i < n && !r->err; i++) {
                uint32_t kind = r_u32(r);
                uint64_t requests = r_varint(r);
                _cleanup_free_ char *mount = r_string(r);

                if (r->err)
                        break;
                if (readset_add_client(rs, mount, kind, requests) < 0)
                        return -ENOMEM;
        }
        return r->err;
}

static int parse_lookups(struct rbuf *r, struct readset *rs)
{
        uint64_t n = r_count(r, 5), t = 0;

        if (r->err)
                return r->err;
        if (n > FORMAT_MAX_LOOKUPS)
                return -EBADMSG;
        rs->lookups = calloc(n ? n : 1, sizeof(*rs->lookups));
        if (!rs->lookups)
                return -ENOMEM;
        rs->cap_lookups = n;
        for (uint64_t i = 0; i < n; i++) {
                struct rs_lookup *l = &rs->lookups[i];
                int64_t res;

                l->time_us = t + (uint64_t)unzigzag(r_varint(r));
                l->op = r_u32(r);
                res = unzigzag(r_varint(r));
                l->pid = r_u32(r);
                l->path = r_string(r);
                if (r->err)
                        return r->err;
                rs->n_lookups = i + 1;   /* owned now, whatever follows */
                if (res > 0 || res < INT32_MIN)
                        return -EBADMSG;
                l->result = (int32_t)res;
                t = l->time_us;
        }
        return 0;
}

/* What the header says, once every check on it has passed. */
struct header {
        uint32_t minor;
        uint32_t flags;
        uint64_t raw_len, stored_len;
};

/* The header checks, against a file of len bytes starting at buf. */
static int decode_header(const uint8_t *buf, size_t len, struct header *h, const char **ret_why)
{
        if (len < 8 || memcmp(buf, FORMAT_MAGIC, 8) != 0) {
                *ret_why = "not a readset file (bad magic)";
                return -ENOMSG;
        }
        if (len < FORMAT_HEADER_SIZE) {
                *ret_why = "truncated header";
                return -ENODATA;
        }
        if (crc(buf, 36) != get_le(buf + 36, 4)) {
                *ret_why = "header checksum mismatch";
                return -EBADMSG;
        }
        if (get_le(buf + 8, 2) != FORMAT_MAJOR) {
                *ret_why = get_le(buf + 8, 2) > FORMAT_MAJOR ?
                        "written by a newer readset (unsupported format version)" :
                        "unsupported format version";
                return -EPROTONOSUPPORT;
        }
        h->minor = (uint32_t)get_le(buf + 10, 2);
        h->flags = (uint32_t)get_le(buf + 12, 4);
        h->raw_len = get_le(buf + 16, 8);
        h->stored_len = get_le(buf + 24, 8);
        if (h->flags & ~FLAG_ZSTD) {
                *ret_why = "unknown header flags";
                return -EPROTONOSUPPORT;
        }
        if (h->raw_len > FORMAT_MAX_RAW || h->stored_len > FORMAT_MAX_RAW) {
                *ret_why = "payload size out of range";
                return -EBADMSG;
        }
        if ((h->flags & FLAG_ZSTD) && h->raw_len > h->stored_len * FORMAT_MAX_RATIO + (64 << 10)) {
                /* a real read set compresses 3-6:1; a bomb does much better */
                *ret_why = "implausible compression ratio";
                return -EBADMSG;
        }
        if (h->stored_len > len - FORMAT_HEADER_SIZE) {
                *ret_why = "truncated payload";
                return -ENODATA;
        }
        if (h->stored_len < len - FORMAT_HEADER_SIZE) {
                *ret_why = "trailing data after payload";
                return -EBADMSG;
        }
        if (!(h->flags & FLAG_ZSTD) && h->stored_len != h->raw_len) {
                *ret_why = "payload size mismatch";
                return -EBADMSG;
        }
        return 0;
}

int format_decode(const uint8_t *buf, size_t len, struct readset **ret, const char **ret_why)
{
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_free_ uint8_t *raw = NULL;
        uint64_t raw_len, stored_len;
        uint32_t flags;
        struct header h;
        struct rbuf r;
        bool seen[_SEC_KNOWN_MAX + 1] = { false };
        size_t n_content = 0;
        const char *why_dummy;
        int k;

        if (!ret_why)
                ret_why = &why_dummy;
        k = decode_header(buf, len, &h, ret_why);
        if (k < 0)
                return k;
        flags = h.flags;
        raw_len = h.raw_len;
        stored_len = h.stored_len;
        if (flags & FLAG_ZSTD) {
                unsigned long long fcs = ZSTD_getFrameContentSize(buf + FORMAT_HEADER_SIZE, stored_len);
                size_t got;

                if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs != raw_len) {
                        *ret_why = "corrupt compressed payload";
                        return -EBADMSG;
                }
                raw = malloc(raw_len ? raw_len : 1);
                if (!raw)
                        return -ENOMEM;
                got = ZSTD_decompress(raw, raw_len, buf + FORMAT_HEADER_SIZE, stored_len);
                if (ZSTD_isError(got) || got != raw_len) {
                        *ret_why = "corrupt compressed payload";
                        return -EBADMSG;
                }
                r = (struct rbuf){ raw, raw_len, 0, 0 };
        } else {
                r = (struct rbuf){ buf + FORMAT_HEADER_SIZE, raw_len, 0, 0 };
        }
        if (crc(r.p, r.n) != get_le(buf + 32, 4)) {
                *ret_why = "payload checksum mismatch";
                return -EBADMSG;
        }

        rs = readset_new();
        if (!rs)
                return -ENOMEM;
        *ret_why = "malformed payload";
        for (;;) {
                uint8_t tag;
                uint64_t slen;
                struct rbuf sec;

                if (r.off >= r.n)
                        return -EBADMSG;  /* missing end marker */
                tag = r.p[r.off++];
                if (tag == SEC_END)
                        break;
                slen = r_varint(&r);
                if (r.err || slen > r.n - r.off)
                        return -EBADMSG;
                sec = (struct rbuf){ r.p + r.off, slen, 0, 0 };
                r.off += slen;
                if (tag < ARRAY_SIZE(seen)) {
                        if (seen[tag])
                                return -EBADMSG;
                        seen[tag] = true;
                }
                switch (tag) {
                case SEC_META: k = parse_meta(&sec, rs); break;
                case SEC_FILES: k = parse_files(&sec, rs); break;
                case SEC_LOOKUPS: k = parse_lookups(&sec, rs); break;
                case SEC_COUNTS:
                        rs->lookups_unresolved = r_varint(&sec);
                        k = sec.err;
                        break;
                case SEC_IMAGE: k = parse_image(&sec, rs); break;
                case SEC_CLIENTS: k = parse_clients(&sec, rs); break;
                case SEC_CONTENT:
                        /* after FILES, whose files it is about */
                        k = seen[SEC_FILES] ? parse_content(&sec, rs) : -EBADMSG;
                        break;
                default: k = 0; break; /* unknown sections are skipped (minor versions) */
                }
                if (k < 0)
                        return k;
                /* a newer minor version may add fields at the end of a section */
                if (tag <= _SEC_KNOWN_MAX && sec.off != sec.n && h.minor <= FORMAT_MINOR)
                        return -EBADMSG;
        }
        if (r.off != r.n || !seen[SEC_META] || !seen[SEC_FILES])
                return -EBADMSG;
        /* a file known by content without its digest */
        for (size_t i = 0; i < rs->n_files; i++)
                n_content += !!(rs->files[i].flags & RS_FILE_BY_CONTENT);
        if (n_content && !seen[SEC_CONTENT])
                return -EBADMSG;
        if (readset_validate(rs) < 0) {
                *ret_why = "invalid values in payload";
                return -EBADMSG;
        }
        *ret_why = NULL;
        *ret = TAKE_PTR(rs);
        return 0;
}

struct encoded {
        const uint8_t *buf;
        size_t len;
};

static int write_encoded(FILE *f, void *userdata)
{
        const struct encoded *e = userdata;
        return fwrite(e->buf, 1, e->len, f) == e->len ? 0 : errno ? -errno : -EIO;
}

int format_write(const struct readset *rs, const char *path)
{
        _cleanup_free_ uint8_t *buf = NULL;
        struct encoded e;
        size_t len = 0;
        int r;

        r = format_encode(rs, &buf, &len);
        if (r < 0)
                return r;
        e = (struct encoded){ buf, len };
        /* a read set names other users' paths: root's are root's alone */
        return write_file_atomic(path, geteuid() == 0 ? 0600 : 0644, write_encoded, &e);
}

int format_load(const char *path, uint8_t **ret_buf, size_t *ret_len, char *why, size_t why_len)
{
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t got;

        why[0] = 0;
        /* checked before it is opened: type, owners and modes (util/trust.h) */
        fd = trust_open_file(path, why, why_len);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((uint64_t)st.st_size > FORMAT_MAX_RAW + FORMAT_HEADER_SIZE) {
                snprintf(why, why_len, "file too large for a read set");
                return -EFBIG;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        got = read_full(fd, buf, (size_t)st.st_size);
        if (got < 0)
                return (int)got;
        *ret_buf = TAKE_PTR(buf);
        *ret_len = (size_t)got;
        return 0;
}

int format_read(const char *path, struct readset **ret, char *why, size_t why_len)
{
        _cleanup_free_ uint8_t *buf = NULL;
        const char *decoded = NULL;
        size_t len;
        int r;

        r = format_load(path, &buf, &len, why, why_len);
        if (r < 0)
                return r;
        r = format_decode(buf, len, ret, &decoded);
        if (r < 0 && decoded)
                snprintf(why, why_len, "%s", decoded);
        return r;
}

/* The first regular file in FILES, from the first PEEK_RAW bytes of the
 * payload: what `readset run` needs to know before it starts the command
 * (whether the replay will read a rotational device), without decoding the
 * rest.  A payload no longer than that is checked whole. */
#define PEEK_RAW (256u << 10)

int format_peek_first_file(const char *path, char **ret_path, char *why, size_t why_len)
{
        _cleanup_free_ uint8_t *buf = NULL;
        const char *peeked = NULL;
        size_t len;
        int k;

        *ret_path = NULL;
        k = format_load(path, &buf, &len, why, why_len);
        if (k < 0)
                return k;
        k = format_peek_first_file_buf(buf, len, ret_path, &peeked);
        if (k < 0 && peeked)
                snprintf(why, why_len, "%s", peeked);
        return k;
}

/* Devices a peek at the main one tells apart (a read set of more is rare:
 * the rest are not counted) */
#define PEEK_DEVICES 32

struct peek_dev {
        uint64_t dev, bytes;
        char *path;     /* its first regular file with an absolute path, or NULL */
};

/* Of FILES' files (r at its count): the first regular one (main false), or
 * the first regular one on the device most of their bytes come from (main
 * true); *ret_path NULL where the prefix or a malformed file says nothing. */
static int peek_files(struct rbuf *r, bool main, char **ret_path)
{
        struct peek_dev d[PEEK_DEVICES];
        size_t nd = 0, best = SIZE_MAX;
        uint64_t n;
        int e = 0;

        n = r_varint(r);
        for (uint64_t i = 0; i < n && !r->err; i++) {
                struct rs_file file;
                uint64_t nr, bytes = 0;
                size_t k;
                r_file_head(r, &file);
                if (r->err) {
                        free(file.path);
                        break;
                }
                if (!main && file.kind == RS_FILE_REGULAR && file.path[0] == '/') {
                        *ret_path = file.path;
                        return 0;
                }
                nr = r_varint(r);
                for (uint64_t j = 0; j < nr && !r->err; j++) {
                        (void)r_varint(r);
                        bytes += r_varint(r);   /* (a sum a reader's limits keep below 2^64) */
                        (void)r_varint(r);
                        (void)r_varint(r);
                }
                for (k = 0; k < nd && d[k].dev != file.dev; k++)
                        ;
                if (main && file.kind != RS_FILE_UNRESOLVED && !r->err && (k < nd || nd < PEEK_DEVICES)) {
                        if (k == nd)
                                d[nd++] = (struct peek_dev){ file.dev, 0, NULL };
                        d[k].bytes += bytes;
                        if (!d[k].path && file.kind == RS_FILE_REGULAR && file.path[0] == '/')
                                d[k].path = TAKE_PTR(file.path);
                }
                free(file.path);
        }
        if (r->err == -ENOMEM)
                e = -ENOMEM;
        for (size_t k = 0; main && !r->err && k < nd; k++)
                if (best == SIZE_MAX || d[k].bytes > d[best].bytes)
                        best = k;
        for (size_t k = 0; k < nd; k++) {
                if (k == best)
                        *ret_path = TAKE_PTR(d[k].path);
                free(d[k].path);
        }
        return e;
}

static int peek_buf(const uint8_t *buf, size_t len, bool main, char **ret_path, const char **ret_why)
{
        _cleanup_free_ uint8_t *raw = NULL;
        const char *why_dummy;
        struct header h;
        struct rbuf r;
        int k;

        if (!ret_why)
                ret_why = &why_dummy;
        *ret_why = NULL;
        *ret_path = NULL;
        k = decode_header(buf, len, &h, ret_why);
        if (k < 0)
                return k;
        if (h.flags & FLAG_ZSTD) {
                unsigned long long fcs = ZSTD_getFrameContentSize(buf + FORMAT_HEADER_SIZE, h.stored_len);
                ZSTD_DCtx *z;
                ZSTD_inBuffer in = { buf + FORMAT_HEADER_SIZE, h.stored_len, 0 };
                ZSTD_outBuffer out;
                size_t want = MIN((size_t)h.raw_len, (size_t)PEEK_RAW), z_r = 1;

                if (fcs != h.raw_len) {
                        *ret_why = "corrupt compressed payload";
                        return -EBADMSG;
                }
                z = ZSTD_createDCtx();
                raw = malloc(want ? want : 1);
                if (!z || !raw) {
                        ZSTD_freeDCtx(z);
                        return -ENOMEM;
                }
                out = (ZSTD_outBuffer){ raw, want, 0 };
                while (out.pos < out.size) {
                        size_t before = out.pos + in.pos;
                        z_r = ZSTD_decompressStream(z, &out, &in);
                        if (ZSTD_isError(z_r) || z_r == 0 || out.pos + in.pos == before)
                                break;   /* an error, the end of the frame, or no progress */
                }
                if (want == h.raw_len && !ZSTD_isError(z_r) && z_r != 0)
                        z_r = ZSTD_decompressStream(z, &out, &in);   /* the frame's end */
                ZSTD_freeDCtx(z);
                if (ZSTD_isError(z_r) || out.pos < want ||
                    (want == h.raw_len && (z_r != 0 || in.pos != in.size))) {
                        /* short, or (read whole) not ending where the header says */
                        *ret_why = "corrupt compressed payload";
                        return -EBADMSG;
                }
                r = (struct rbuf){ raw, out.pos, 0, 0 };
        } else
                r = (struct rbuf){ buf + FORMAT_HEADER_SIZE, MIN((size_t)h.raw_len, (size_t)PEEK_RAW), 0, 0 };
        if (r.n == h.raw_len && crc(r.p, r.n) != get_le(buf + 32, 4)) {
                *ret_why = "payload checksum mismatch";
                return -EBADMSG;
        }

        /* sections up to FILES, then its files (peek_files()); running out
         * of the prefix (or a malformed one) says "unknown" */
        while (r.off < r.n) {
                uint8_t tag = r.p[r.off++];
                uint64_t slen;

                if (tag == SEC_END)
                        break;
                slen = r_varint(&r);
                if (r.err)
                        return 0;
                if (tag != SEC_FILES) {
                        if (slen > r.n - r.off)
                                return 0;
                        r.off += slen;
                        continue;
                }
                if (main && slen > r.n - r.off)
                        return 0;       /* (FILES goes on past the prefix: not known) */
                if (slen < r.n - r.off)
                        r.n = r.off + slen;   /* (it may go on past the prefix) */
                return peek_files(&r, main, ret_path);
        }
        return 0;
}

int format_peek_first_file_buf(const uint8_t *buf, size_t len, char **ret_path, const char **ret_why)
{
        return peek_buf(buf, len, false, ret_path, ret_why);
}

int format_peek_main_file_buf(const uint8_t *buf, size_t len, char **ret_path, const char **ret_why)
{
        return peek_buf(buf, len, true, ret_path, ret_why);
}
