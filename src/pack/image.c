/* SPDX-License-Identifier: MIT */
#include "pack/image.h"

#include <ctype.h>
#include <fcntl.h>
#include <fts.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fs/checksum.h"
#include "pack/squashfs.h"
#include "util/child.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

static const char *const compress_names[_PACK_COMPRESS_MAX] = {
        [PACK_ZSTD] = "zstd", [PACK_XZ] = "xz", [PACK_LZ4] = "lz4", [PACK_GZIP] = "gzip",
};

int pack_image_from_name(const char *s)
{
        if (strcmp(s, "squashfs") == 0)
                return PACK_SQUASHFS;
        if (strcmp(s, "erofs") == 0)
                return PACK_EROFS;
        return -EINVAL;
}

int pack_compress_from_name(const char *s)
{
        for (int i = 0; i < _PACK_COMPRESS_MAX; i++)
                if (strcmp(s, compress_names[i]) == 0)
                        return i;
        return -EINVAL;
}

const char *pack_compress_name(enum pack_compress c)
{
        return c < _PACK_COMPRESS_MAX ? compress_names[c] : "?";
}

/* mksquashfs reads a name up to the first blank, a backslash taking the
 * next character as it is; a line starting with # is a comment */
static int put_escaped(FILE *f, const char *s, bool at_start)
{
        for (; *s; s++, at_start = false) {
                if (isspace((unsigned char)*s) || *s == '\\' || (at_start && *s == '#'))
                        if (fputc('\\', f) == EOF)
                                return -EIO;
                if (fputc(*s, f) == EOF)
                        return -EIO;
        }
        return 0;
}

int pack_order_write(FILE *f, const struct readset *p, const char *prefix, struct pack_order_counts *c)
{
        long prio = PACK_DISTINCT_PRIORITIES;

        *c = (struct pack_order_counts){ 0 };
        for (size_t i = 0; i < p->n_files; i++) {
                /* relative names: without the leading slash */
                const char *name = p->files[i].path + (prefix[0] ? 0 : 1);

                if (strchr(name, '\n')) {
                        c->unnamable++;
                        continue;
                }
                if (put_escaped(f, prefix, true) < 0 || put_escaped(f, name, !prefix[0]) < 0 ||
                    fprintf(f, " %ld\n", prio) < 0)
                        return -EIO;
                c->listed++;
                if (prio > 1)
                        prio--;
        }
        return ferror(f) ? -EIO : 0;
}

/* How far the image tool is: what it has read of the tree's bytes. */
struct watch {
        const struct pack_build *b;
        uint64_t total, files, start_us, last_ns;
};

static void tell(struct watch *w, const char *step, enum progress_unit unit, uint64_t done, uint64_t total)
{
        w->last_ns = now_ns();
        w->b->progress(w->b->progress_userdata, &(struct progress_report){ step, unit, done, total });
}

/* The regular files' bytes under the tree, as the tools read it: across
 * mounts, symbolic links not followed, but not into a pseudo filesystem
 * (a /proc below the tree: /proc/kcore's size is not data).  (A file
 * linked twice is counted twice, read once: the line then ends short of
 * its total.)  The tool walks the same tree next, warm. */
static void tree_bytes(struct watch *w)
{
        char *argv[2] = { (char *)w->b->tree, NULL };
        FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
        FTSENT *e;
        struct statfs sf;

        if (!fts)
                return;
        while ((e = fts_read(fts))) {
                if (e->fts_info == FTS_D && e->fts_level > 0 && e->fts_parent->fts_statp &&
                    e->fts_statp->st_dev != e->fts_parent->fts_statp->st_dev &&
                    (statfs(e->fts_accpath, &sf) < 0 || mounts_is_pseudo((long)sf.f_type, e->fts_statp->st_dev)))
                        (void)fts_set(fts, e, FTS_SKIP);
                else if (e->fts_info == FTS_F && S_ISREG(e->fts_statp->st_mode)) {
                        w->total += (uint64_t)e->fts_statp->st_size;
                        if (++w->files % 256 == 0 && now_ns() - w->last_ns >= 50000000)
                                tell(w, "looking through the tree", PROGRESS_FILES, w->files, 0);
                }
        }
        fts_close(fts);
}

/* The bytes a process has read (its threads' and those gone with them):
 * 0, or -errno where /proc/PID/io cannot be read (no task I/O accounting). */
static int bytes_read_by(pid_t pid, uint64_t *ret)
{
        _cleanup_free_ char *text = NULL;
        const char *at, *end;
        char path[64];
        int r;

        snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
        r = read_small_file(path, &text, 4096);
        if (r < 0)
                return r;
        at = strstr(text, "rchar: ");
        if (!at || parse_u64_prefix(at + 7, ret, &end) < 0 || *end != '\n')
                return -EBADMSG;
        return 0;
}

/* What the tool has read (pid 0: it starts, nothing yet). */
static void tool_tick(void *userdata, pid_t pid)
{
        struct watch *w = userdata;
        const char *tool = w->b->image == PACK_EROFS ? "mkfs.erofs" : "mksquashfs";
        uint64_t done = 0;

        if (w->total && (pid == 0 || bytes_read_by(pid, &done) == 0))
                tell(w, tool, PROGRESS_BYTES, MIN(done, w->total), w->total);
        else
                tell(w, tool, PROGRESS_US, now_us() - w->start_us, 0);
}

/* Its status: 0, -ENOENT not installed, -EIO it failed (it said why on
 * standard error), -errno it could not be run. */
static int run(const struct pack_build *b, char **argv)
{
        struct watch w = { .b = b };
        int r;

        if (b->progress) {
                tree_bytes(&w);
                w.start_us = now_us();
                tool_tick(&w, 0);
                r = child_run_watched(argv, false, tool_tick, &w);
        } else
                r = child_run(argv, NULL, 0, false, 0);
        return r <= 0 ? r : -EIO;
}

int pack_build_image(const struct pack_build *b)
{
        char when[32], comp[32], uuid[40], bs[16];

        snprintf(when, sizeof(when), "%u", b->mkfs_time);
        if (b->image == PACK_SQUASHFS) {
                char *argv[16] = { "mksquashfs", (char *)b->tree, (char *)b->out, "-noappend", "-quiet",
                                   "-no-progress", "-reproducible", "-comp", (char *)pack_compress_name(b->compress) };
                int n = 9;
                /* (given SOURCE_DATE_EPOCH, mksquashfs takes its time from it
                 * and refuses one on the command line too) */
                if (!getenv("SOURCE_DATE_EPOCH")) {
                        argv[n++] = "-mkfs-time";
                        argv[n++] = when;
                }
                if (b->sort_file) {
                        argv[n++] = "-sort";
                        argv[n++] = (char *)b->sort_file;
                }
                if (b->block_size) {
                        snprintf(bs, sizeof(bs), "%u", b->block_size);
                        argv[n++] = "-b";
                        argv[n++] = bs;
                }
                argv[n] = NULL;
                return run(b, argv);
        }
        /* erofs-utils 1.5: lz4 alone (lz4hc: the same decompressor, better packed) */
        if (b->compress != PACK_LZ4)
                return -EINVAL;
        snprintf(comp, sizeof(comp), "-zlz4hc");
        snprintf(uuid, sizeof(uuid), "-U%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b->uuid[0], b->uuid[1], b->uuid[2], b->uuid[3], b->uuid[4], b->uuid[5], b->uuid[6], b->uuid[7],
                 b->uuid[8], b->uuid[9], b->uuid[10], b->uuid[11], b->uuid[12], b->uuid[13], b->uuid[14], b->uuid[15]);
        {
                /* (no -T: it sets every file's time; the build's comes from
                 * SOURCE_DATE_EPOCH, which the caller sets) */
                char *argv[] = { "mkfs.erofs", "--quiet", comp, uuid, (char *)b->out, (char *)b->tree, NULL };
                return run(b, argv);
        }
}

static int cmp_span(const void *a, const void *b)
{
        const struct rs_span *x = a, *y = b;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The spans of fd's image (its size too) that p's files' ranges lie in;
 * a path of p is the image's own past its first skip bytes. */
static int spans_of(int fd, const struct readset *p, size_t skip, struct rs_image *im)
{
        _cleanup_(sqfs_closep) struct sqfs *s = NULL;
        _cleanup_free_ struct rs_span *v = NULL;
        size_t n = 0, cap = 0, out = 0;
        uint64_t t0, t1;
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if ((r = sqfs_open_fd(fd, &s)) < 0)
                return r;
        im->size = (uint64_t)st.st_size;
        /* the tables first: every lookup reads them */
        sqfs_tables(s, &t0, &t1);
        if (grow_array(&v, &cap, 1, sizeof(*v)) < 0)
                return -ENOMEM;
        v[n++] = (struct rs_span){ t0, t1 - t0 };
        /* (what the start read: not what the recording's file system read
         * ahead, more than the image's reads; measured on the emulated USB
         * stick: 42 MB read and 1.91 s with it, 35 MB and 1.74 s without) */
        for (size_t i = 0; i < p->n_files; i++) {
                const struct rs_file *f = &p->files[i];
                if (strlen(f->path) <= skip)
                        return -ENOENT;
                for (size_t j = 0; j < f->n_ranges; j++) {
                        r = sqfs_file_spans(s, f->path + skip, f->ranges[j].offset, f->ranges[j].length, &v, &n,
                                            &cap);
                        if (r < 0)
                                return r;
                }
        }
        /* The data by position after the tables: the image is in access
         * order already, but for the fragments (a small file's bytes lie in
         * a block of them written once full, later than the files after it)
         * read by several files: sorted, each is read once, in one sweep.
         * Merged where apart by less than a gap. */
        qsort_safe(v + 1, n - 1, sizeof(*v), cmp_span);
        for (size_t i = 0; i < n; i++) {
                struct rs_span *last = out ? &v[out - 1] : NULL;
                if (last && v[i].offset >= last->offset && v[i].offset <= last->offset + last->length + PACK_SPAN_GAP) {
                        uint64_t end = MAX(last->offset + last->length, v[i].offset + v[i].length);
                        last->length = end - last->offset;
                        continue;
                }
                v[out++] = v[i];
        }
        im->spans = TAKE_PTR(v);
        im->n_spans = out;
        return 0;
}

int pack_image_spans(const char *path, const struct readset *p, struct rs_image **ret)
{
        _cleanup_(rs_image_freep) struct rs_image *im = calloc(1, sizeof(*im));
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        uint8_t head[4096];
        struct content_sum sum;
        ssize_t k;
        int r;

        if (!im)
                return -ENOMEM;
        if (fd < 0)
                return -errno;
        if ((r = spans_of(fd, p, 0, im)) < 0)
                return r;
        k = pread(fd, head, sizeof(head), 0);
        if (k < 0)
                return -errno;
        if ((r = checksum_buf(head, (size_t)k, &sum)) < 0)
                return r;
        memcpy(im->head, sum.d, sizeof(im->head));
        /* the digest of those bytes: a copy holding them holds the start's
         * files as packed (the tables, and their data, compressed) */
        r = checksum_spans(fd, im->spans, im->n_spans, &sum);
        if (r < 0)
                return r;
        memcpy(im->digest, sum.d, sizeof(im->digest));
        *ret = TAKE_PTR(im);
        return 0;
}

int image_spans_here(int fd, const struct readset *p, size_t skip, struct rs_image **ret)
{
        _cleanup_(rs_image_freep) struct rs_image *im = calloc(1, sizeof(*im));
        int r;

        if (!im)
                return -ENOMEM;
        if ((r = spans_of(fd, p, skip, im)) < 0)
                return r;
        *ret = TAKE_PTR(im);
        return 0;
}
