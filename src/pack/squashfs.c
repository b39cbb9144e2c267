/* SPDX-License-Identifier: MIT */
#include "pack/squashfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "util/util.h"
#include "util/banned.h"

#define SQFS_MAGIC 0x73717368u
#define SQFS_SUPER_SIZE 96
#define META_MAX 8192                   /* a metadata block's uncompressed size */
#define COMP_GZIP SQFS_COMP_GZIP
#define COMP_XZ SQFS_COMP_XZ
#define COMP_LZ4 SQFS_COMP_LZ4
#define COMP_ZSTD SQFS_COMP_ZSTD
#define XZ_MEMLIMIT (64u << 20)         /* (a stream's dictionary is the block size, 1 MiB at most) */
#define BLOCK_RAW (1u << 24)            /* a data block stored uncompressed */
#define NO_FRAGMENT 0xffffffffu
#define INODE_DIR 1
#define INODE_FILE 2
#define INODE_LDIR 8
#define INODE_LFILE 9
#define MAX_DEPTH 256                   /* components of a path */

/* A metadata table, uncompressed: the bytes, and where each of its blocks
 * (by offset from the table's start in the image) begins in them. */
struct table {
        uint8_t *p;
        size_t n;
        uint64_t *block_at;   /* image offset of each block, relative to the table */
        size_t *block_pos;    /* its position in p */
        size_t n_blocks;
};

struct sqfs {
        const uint8_t *img;
        size_t len;
        uint32_t block_size, frag_count;
        uint16_t comp;
        uint64_t root_ref, bytes_used, inode_start, dir_start, frag_start, tables_start;
        struct table inodes, dirs;
};

static uint64_t le(const uint8_t *p, int n)
{
        return get_le(p, n);
}

/* One metadata block at image offset off: into out (META_MAX bytes);
 * *ret_n its uncompressed size, *ret_next the offset after it. */
static int meta_block(const struct sqfs *s, uint64_t off, uint8_t *out, size_t *ret_n, uint64_t *ret_next)
{
        uint16_t h;
        size_t size;

        if (off > s->len || s->len - off < 2)
                return -EBADMSG;
        h = (uint16_t)le(s->img + off, 2);
        size = h & 0x7fff;
        if (size == 0 || size > META_MAX || s->len - off - 2 < size)
                return -EBADMSG;
        if (h & 0x8000) {
                memcpy(out, s->img + off + 2, size);
                *ret_n = size;
        } else if (s->comp == COMP_ZSTD) {
                size_t k = ZSTD_decompress(out, META_MAX, s->img + off + 2, size);
                if (ZSTD_isError(k))
                        return -EBADMSG;
                *ret_n = k;
        } else if (s->comp == COMP_LZ4) {
                int k = LZ4_decompress_safe((const char *)s->img + off + 2, (char *)out, (int)size, META_MAX);
                if (k < 0)
                        return -EBADMSG;
                *ret_n = (size_t)k;
        } else if (s->comp == COMP_XZ) {
                /* an xz stream (its filters, BCJ among them, in its header) */
                uint64_t limit = XZ_MEMLIMIT;
                size_t in_pos = 0, out_pos = 0;
                if (lzma_stream_buffer_decode(&limit, 0, NULL, s->img + off + 2, &in_pos, size, out, &out_pos,
                                              META_MAX) != LZMA_OK)
                        return -EBADMSG;
                *ret_n = out_pos;
        } else {
                uLongf k = META_MAX;
                if (uncompress(out, &k, s->img + off + 2, size) != Z_OK)
                        return -EBADMSG;
                *ret_n = k;
        }
        if (*ret_n == 0)
                return -EBADMSG;        /* (a block holds something) */
        *ret_next = off + 2 + size;
        return 0;
}

static int table_read(const struct sqfs *s, uint64_t start, uint64_t end, struct table *t)
{
        size_t cap = 0, cap_b = 0, cap_p = 0;
        uint8_t buf[META_MAX];

        for (uint64_t off = start; off < end;) {
                size_t n;
                uint64_t next;
                int r = meta_block(s, off, buf, &n, &next);
                if (r < 0)
                        return r;
                if (grow_array(&t->p, &cap, t->n + n, 1) < 0 ||
                    grow_array(&t->block_at, &cap_b, t->n_blocks + 1, sizeof(*t->block_at)) < 0 ||
                    grow_array(&t->block_pos, &cap_p, t->n_blocks + 1, sizeof(*t->block_pos)) < 0)
                        return -ENOMEM;
                t->block_at[t->n_blocks] = off - start;
                t->block_pos[t->n_blocks++] = t->n;
                memcpy(t->p + t->n, buf, n);
                t->n += n;
                off = next;
        }
        return 0;
}

/* The position in t of block (offset from the table's start) and offset in
 * it, with at least need bytes after it; -EBADMSG. */
static int table_pos(const struct table *t, uint64_t block, uint32_t offset, size_t need, size_t *ret)
{
        size_t lo = 0, hi = t->n_blocks;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->block_at[mid] < block)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == t->n_blocks || t->block_at[lo] != block || offset >= META_MAX)
                return -EBADMSG;
        *ret = t->block_pos[lo] + offset;
        return *ret <= t->n && t->n - *ret >= need ? 0 : -EBADMSG;
}

int sqfs_open(const char *path, struct sqfs **ret)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return -errno;
        return sqfs_open_fd(fd, ret);
}

int sqfs_compressor_fd(int fd)
{
        uint8_t b[SQFS_SUPER_SIZE];
        ssize_t k = pread(fd, b, sizeof(b), 0);

        if (k < 0)
                return -errno;
        if (k < (ssize_t)sizeof(b) || le(b, 4) != SQFS_MAGIC || le(b + 28, 2) != 4)
                return -EBADMSG;
        return (int)le(b + 20, 2);
}

int sqfs_open_fd(int fd, struct sqfs **ret)
{
        _cleanup_(sqfs_closep) struct sqfs *s = calloc(1, sizeof(*s));
        const uint8_t *b;
        struct stat st;
        void *m;
        int r;

        if (!s)
                return -ENOMEM;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size < SQFS_SUPER_SIZE)
                return -EBADMSG;
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
                return -errno;
        s->img = m;
        s->len = (size_t)st.st_size;
        b = s->img;
        if (le(b, 4) != SQFS_MAGIC || le(b + 28, 2) != 4)
                return -EBADMSG;
        s->block_size = (uint32_t)le(b + 12, 4);
        s->frag_count = (uint32_t)le(b + 16, 4);
        s->comp = (uint16_t)le(b + 20, 2);
        s->root_ref = le(b + 32, 8);
        s->bytes_used = le(b + 40, 8);
        s->inode_start = le(b + 64, 8);
        s->dir_start = le(b + 72, 8);
        s->frag_start = le(b + 80, 8);
        if (s->block_size < 4096 || s->block_size > (1u << 20) || (s->block_size & (s->block_size - 1)) ||
            s->bytes_used > s->len || s->inode_start >= s->dir_start || s->dir_start > s->bytes_used)
                return -EBADMSG;
        /* (lzo and lzma, the old one, are not read: pack writes neither) */
        if (s->comp != COMP_GZIP && s->comp != COMP_ZSTD && s->comp != COMP_LZ4 && s->comp != COMP_XZ)
                return -EOPNOTSUPP;
        /* the tables follow the data: the first of them is the inode table */
        s->tables_start = s->inode_start;
        r = table_read(s, s->inode_start, s->dir_start, &s->inodes);
        if (r < 0)
                return r;
        /* the directory table ends where the next table starts */
        {
                uint64_t end = s->bytes_used;
                for (int i = 48; i <= 88; i += 8) {
                        uint64_t x = le(b + i, 8);
                        if (x > s->dir_start && x < end)
                                end = x;
                }
                r = table_read(s, s->dir_start, end, &s->dirs);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

void sqfs_close(struct sqfs *s)
{
        if (!s)
                return;
        if (s->img)
                munmap((void *)s->img, s->len);
        free(s->inodes.p), free(s->inodes.block_at), free(s->inodes.block_pos);
        free(s->dirs.p), free(s->dirs.block_at), free(s->dirs.block_pos);
        free(s);
}

void sqfs_tables(const struct sqfs *s, uint64_t *ret_start, uint64_t *ret_end)
{
        *ret_start = s->tables_start;
        *ret_end = s->bytes_used;
}

/* The inode at ref: its bytes (at least need of them). */
static int inode_at(const struct sqfs *s, uint64_t ref, size_t need, const uint8_t **ret)
{
        size_t pos;
        int r = table_pos(&s->inodes, ref >> 16, (uint32_t)(ref & 0xffff), need, &pos);

        if (r < 0)
                return r;
        *ret = s->inodes.p + pos;
        return 0;
}

/* In the directory at ref, the inode reference of name (len bytes). */
static int dir_lookup(const struct sqfs *s, uint64_t ref, const char *name, size_t len, uint64_t *ret)
{
        const uint8_t *in;
        uint64_t block, size;
        uint32_t offset;
        size_t pos, end;
        int r = inode_at(s, ref, 16, &in);

        if (r < 0)
                return r;
        if (le(in, 2) == INODE_DIR) {
                if ((r = inode_at(s, ref, 32, &in)) < 0)
                        return r;
                block = le(in + 16, 4), size = le(in + 24, 2), offset = (uint32_t)le(in + 26, 2);
        } else if (le(in, 2) == INODE_LDIR) {
                if ((r = inode_at(s, ref, 40, &in)) < 0)
                        return r;
                size = le(in + 20, 4), block = le(in + 24, 4), offset = (uint32_t)le(in + 34, 2);
        } else
                return -ENOENT;    /* not a directory */
        if (size <= 3)
                return -ENOENT;    /* empty */
        if ((r = table_pos(&s->dirs, block, offset, (size_t)size - 3, &pos)) < 0)
                return r;
        end = pos + (size_t)size - 3;
        while (pos < end) {
                uint64_t count, start;
                if (end - pos < 12)
                        return -EBADMSG;
                count = le(s->dirs.p + pos, 4) + 1;
                start = le(s->dirs.p + pos + 4, 4);
                pos += 12;
                if (count > 256)
                        return -EBADMSG;
                for (uint64_t i = 0; i < count; i++) {
                        size_t n;
                        if (end - pos < 8)
                                return -EBADMSG;
                        n = (size_t)le(s->dirs.p + pos + 6, 2) + 1;
                        if (end - pos - 8 < n)
                                return -EBADMSG;
                        if (n == len && memcmp(s->dirs.p + pos + 8, name, len) == 0) {
                                *ret = start << 16 | le(s->dirs.p + pos, 2);
                                return 0;
                        }
                        pos += 8 + n;
                }
        }
        return -ENOENT;
}

/* The fragment block i: where it lies. */
static int fragment(const struct sqfs *s, uint32_t i, uint64_t *ret_off, uint64_t *ret_len)
{
        uint8_t buf[META_MAX];
        uint64_t ptr_at, block, next;
        size_t n;
        int r;

        if (i >= s->frag_count)
                return -EBADMSG;
        ptr_at = s->frag_start + (uint64_t)(i / 512) * 8;
        if (ptr_at > s->len || s->len - ptr_at < 8)
                return -EBADMSG;
        block = le(s->img + ptr_at, 8);
        if ((r = meta_block(s, block, buf, &n, &next)) < 0)
                return r;
        if ((size_t)(i % 512) * 16 + 16 > n)
                return -EBADMSG;
        *ret_off = le(buf + (i % 512) * 16, 8);
        *ret_len = le(buf + (i % 512) * 16 + 8, 4) & (BLOCK_RAW - 1);
        return *ret_off <= s->len && s->len - *ret_off >= *ret_len ? 0 : -EBADMSG;
}

static int add(struct rs_span **v, size_t *n, size_t *cap, uint64_t off, uint64_t len)
{
        if (len == 0)
                return 0;
        if (*n && (*v)[*n - 1].offset + (*v)[*n - 1].length == off) {
                (*v)[*n - 1].length += len;
                return 0;
        }
        if (grow_array(v, cap, *n + 1, sizeof(**v)) < 0)
                return -ENOMEM;
        (*v)[(*n)++] = (struct rs_span){ off, len };
        return 0;
}

int sqfs_file_spans(struct sqfs *s, const char *path, uint64_t offset, uint64_t length, struct rs_span **spans,
                    size_t *n, size_t *cap)
{
        uint64_t ref = s->root_ref, start, size, at, first, last, nblocks;
        const uint8_t *in, *sizes;
        uint32_t frag, frag_off;
        size_t head;
        int depth = 0, r;

        for (const char *c = path; *c;) {
                size_t k;
                while (*c == '/')
                        c++;
                k = strcspn(c, "/");
                if (k == 0)
                        break;
                if (++depth > MAX_DEPTH)
                        return -ENOENT;
                if ((r = dir_lookup(s, ref, c, k, &ref)) < 0)
                        return r;
                c += k;
        }
        if ((r = inode_at(s, ref, 16, &in)) < 0)
                return r;
        if (le(in, 2) == INODE_FILE) {
                if ((r = inode_at(s, ref, 32, &in)) < 0)
                        return r;
                start = le(in + 16, 4), frag = (uint32_t)le(in + 20, 4), frag_off = (uint32_t)le(in + 24, 4);
                size = le(in + 28, 4), head = 32;
        } else if (le(in, 2) == INODE_LFILE) {
                if ((r = inode_at(s, ref, 56, &in)) < 0)
                        return r;
                start = le(in + 16, 8), size = le(in + 24, 8), frag = (uint32_t)le(in + 44, 4);
                frag_off = (uint32_t)le(in + 48, 4), head = 56;
        } else
                return -ENOENT;
        (void)frag_off;
        nblocks = frag == NO_FRAGMENT ? (size + s->block_size - 1) / s->block_size : size / s->block_size;
        if (nblocks > s->len / 4 || (r = inode_at(s, ref, head + 4 * nblocks, &sizes)) < 0)
                return r < 0 ? r : -EBADMSG;
        sizes += head;
        if (length == 0 || offset >= size)
                return 0;
        if (length > size - offset)
                length = size - offset;
        first = offset / s->block_size;
        last = (offset + length - 1) / s->block_size;
        at = start;
        for (uint64_t k = 0; k < nblocks && k <= last; k++) {
                uint64_t b = le(sizes + 4 * k, 4) & (BLOCK_RAW - 1);
                if (at > s->len || s->len - at < b)
                        return -EBADMSG;
                if (k >= first && (r = add(spans, n, cap, at, b)) < 0)
                        return r;
                at += b;
        }
        if (last >= nblocks && frag != NO_FRAGMENT) {
                uint64_t fo, fl;
                if ((r = fragment(s, frag, &fo, &fl)) < 0)
                        return r;
                if ((r = add(spans, n, cap, fo, fl)) < 0)
                        return r;
        }
        return 0;
}
