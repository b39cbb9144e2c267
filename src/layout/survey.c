/* SPDX-License-Identifier: MIT */
/* The steps a layout's backends share (layout.c is the front door): the
 * skips' names, the files running or swapped on, the spans of a file and
 * its pieces, and the decision of what moves, from every file looked at. */
#include "layout/layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/open.h"
#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

static const char *const skip_names[_LAYOUT_SKIP_MAX] = {
        [LAYOUT_SKIP_NONE] = "none",
        [LAYOUT_SKIP_UNRESOLVED] = "unresolved",
        [LAYOUT_SKIP_DELETED] = "deleted",
        [LAYOUT_SKIP_OTHER_FS] = "other-file-system",
        [LAYOUT_SKIP_MISSING] = "missing",
        [LAYOUT_SKIP_NOT_REGULAR] = "not-regular",
        [LAYOUT_SKIP_CHANGED] = "changed",
        [LAYOUT_SKIP_EMPTY] = "no-data-blocks",
        [LAYOUT_SKIP_NOT_READ] = "not-read",
        [LAYOUT_SKIP_INLINE] = "inline-data",
        [LAYOUT_SKIP_NOT_EXTENTS] = "not-extent-mapped",
        [LAYOUT_SKIP_IMMUTABLE] = "immutable",
        [LAYOUT_SKIP_APPEND_ONLY] = "append-only",
        [LAYOUT_SKIP_ENCRYPTED] = "encrypted",
        [LAYOUT_SKIP_DAX] = "dax",
        [LAYOUT_SKIP_JOURNAL_DATA] = "data-journalled",
        [LAYOUT_SKIP_VERITY] = "verity",
        [LAYOUT_SKIP_SWAP] = "swap-file",
        [LAYOUT_SKIP_RUNNING] = "running-executable",
        [LAYOUT_SKIP_OPEN_WRITE] = "open-for-writing",
        [LAYOUT_SKIP_NO_SPACE] = "no-space",
        [LAYOUT_SKIP_REFUSED] = "refused-by-kernel",
        [LAYOUT_SKIP_ERROR] = "error",
        [LAYOUT_SKIP_SHARED] = "shared-extents",
        [LAYOUT_SKIP_NOCOW] = "nodatacow",
        [LAYOUT_SKIP_COMPRESSED] = "compressed-already",
};

const char *layout_skip_name(int why)
{
        return why >= 0 && why < _LAYOUT_SKIP_MAX ? skip_names[why] : "?";
}

const char *layout_skip_advice(int why)
{
        switch (why) {
        case LAYOUT_SKIP_MISSING:
        case LAYOUT_SKIP_NOT_REGULAR:
        case LAYOUT_SKIP_CHANGED:
        case LAYOUT_SKIP_UNRESOLVED:
                return "record the start again: the read set no longer describes these files";
        case LAYOUT_SKIP_OTHER_FS:
                return "a layout moves one file system's files; record a start of that one to lay it out";
        case LAYOUT_SKIP_NOT_EXTENTS:
                return "'chattr +e FILE' converts a file to extents; run layout again after";
        case LAYOUT_SKIP_IMMUTABLE:
        case LAYOUT_SKIP_APPEND_ONLY:
                return "the kernel never moves these; 'chattr -i' / 'chattr -a' for the run, then set it again";
        case LAYOUT_SKIP_JOURNAL_DATA:
                return "'chattr -j FILE' stops journalling its data; the kernel cannot move it otherwise";
        case LAYOUT_SKIP_RUNNING:
                return "a running program cannot be opened for writing: stop it and run layout again "
                       "(for a boot, readset's boot integration moves them before they run)";
        case LAYOUT_SKIP_OPEN_WRITE:
                return "a process has them open for writing: run layout again once it has closed them";
        case LAYOUT_SKIP_NO_SPACE:
                return "free space on the file system and run layout again: it continues where this run stopped";
        case LAYOUT_SKIP_SWAP:
                return "swapoff the file to move it";
        case LAYOUT_SKIP_SHARED:
                return "rewriting a file unshares its extents (the snapshot or copy keeps the old ones: more "
                       "space used); --unshare rewrites them anyway";
        case LAYOUT_SKIP_COMPRESSED:
                return "btrfs's defragment leaves extents compressed to their maximum (128 KiB) where they are: "
                       "such a file stays (laid out already, or written to a file system mounted compress)";
        case LAYOUT_SKIP_NOCOW:
                return "btrfs compresses no nodatacow file; 'chattr -C' applies to empty files only";
        default:
                return NULL;
        }
}

void layout_free(struct layout *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n_files; i++) {
                extents_clear(&l->files[i].before);
                extents_clear(&l->files[i].after);
                free(l->files[i].spans);
        }
        free(l->files);
        free(l->busy);
        free(l->swap);
        free(l);
}

/* ---- the files ---- */

static int cmp_ident(const void *a, const void *b)
{
        const struct layout_ident *x = a, *y = b;
        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

bool layout_ident_in(const struct layout_ident *set, size_t n, uint64_t dev, uint64_t ino)
{
        struct layout_ident k = { dev, ino };
        return n && bsearch(&k, set, n, sizeof(*set), cmp_ident);
}

static int ident_add(struct layout_ident **set, size_t *n, size_t *cap, const struct stat *st)
{
        if (grow_array(set, cap, *n + 1, sizeof(**set)) < 0)
                return -ENOMEM;
        (*set)[(*n)++] = (struct layout_ident){ st->st_dev, st->st_ino };
        return 0;
}

/* (opened for writing, a running program or an active swap file gives
 * ETXTBSY: the kernel denies it) */
int layout_busy_files(struct layout_ident **ret, size_t *ret_n, struct layout_ident **ret_swap, size_t *ret_nswap)
{
        DIR *d = opendir("/proc");
        size_t cap = 0, scap = 0;
        struct dirent *de;
        char **swaps = NULL;
        size_t n_swaps = 0;
        int r;

        *ret = NULL, *ret_n = 0, *ret_swap = NULL, *ret_nswap = 0;
        while (d && (de = readdir(d))) {
                char p[64];
                struct stat st;
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(p, sizeof(p), "/proc/%.20s/exe", de->d_name);
                if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && ident_add(ret, ret_n, &cap, &st) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
        }
        if (d)
                closedir(d);
        r = mounts_read_swaps(&swaps, &n_swaps);
        for (size_t i = 0; i < n_swaps && r >= 0; i++) {
                struct stat st;
                if (stat(swaps[i], &st) == 0 && S_ISREG(st.st_mode))
                        r = ident_add(ret_swap, ret_nswap, &scap, &st);
        }
        mounts_swaps_free(swaps, n_swaps);
        if (r < 0)
                return r;
        qsort_safe(*ret, *ret_n, sizeof(**ret), cmp_ident);
        qsort_safe(*ret_swap, *ret_nswap, sizeof(**ret_swap), cmp_ident);
        return 0;
}

int layout_open_for_writing(int fd)
{
        if (fcntl(fd, F_SETLEASE, F_RDLCK) < 0)
                return errno == EAGAIN || errno == EBUSY ? 1 : -errno;
        (void)fcntl(fd, F_SETLEASE, F_UNLCK);
        return 0;
}

int layout_skip_of(enum fs_skip why)
{
        switch (why) {
        case FS_SKIP_MISSING: return LAYOUT_SKIP_MISSING;
        case FS_SKIP_NOT_REGULAR: return LAYOUT_SKIP_NOT_REGULAR;
        case FS_SKIP_CHANGED:
        case FS_SKIP_CONTENT: return LAYOUT_SKIP_CHANGED;
        default: return LAYOUT_SKIP_ERROR;
        }
}

int layout_leftovers(int dirfd, bool remove, void (*each)(void *userdata, const char *name), void *userdata)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        int n = 0, r = 0;

        if (!d) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                struct stat st;
                if (strncmp(de->d_name, LAYOUT_RESCUE_PREFIX, strlen(LAYOUT_RESCUE_PREFIX)) != 0)
                        continue;
                if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
                        continue;
                n++;
                if (!remove)
                        continue;
                if (unlinkat(dirfd, de->d_name, 0) < 0) {
                        r = -errno;
                        break;
                }
                if (each)
                        each(userdata, de->d_name);
        }
        closedir(d);
        return r < 0 ? r : n;
}

static int cmp_span(const void *a, const void *b)
{
        const struct layout_span *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start;
}

int layout_spans(struct layout_file *lf, const struct rs_file *f, enum layout_what what, uint32_t bs)
{
        const uint64_t end = (lf->size + bs - 1) / bs, bridge = MAX((64u << 10) / bs, 1u);
        struct layout_span *sp;
        size_t n = 0;

        free(lf->spans);
        lf->spans = NULL;
        lf->n_spans = 0;
        sp = malloc((what == LAYOUT_FILES ? 1 : f->n_ranges + 1) * sizeof(*sp));
        if (!sp)
                return -ENOMEM;
        if (what == LAYOUT_FILES) {
                if (end)
                        sp[n++] = (struct layout_span){ 0, end };
        } else {
                for (size_t k = 0; k < f->n_ranges; k++) {
                        const struct rs_range *r = &f->ranges[k];
                        uint64_t a = r->offset / bs, b = (r->offset + r->length + bs - 1) / bs;
                        /* what the cold start brought in, read ahead too: a
                         * plain start reads all of it from the device (and
                         * the recording sees a few pages the kernel reads
                         * outside its tracepoints only as brought in) */
                        if (a >= end)
                                continue;
                        sp[n++] = (struct layout_span){ a, MIN(b, end) - a };
                }
                qsort_safe(sp, n, sizeof(*sp), cmp_span);
                size_t m = 0;
                for (size_t k = 0; k < n; k++) {
                        if (m && sp[k].start <= sp[m - 1].start + sp[m - 1].len + bridge) {
                                uint64_t e = MAX(sp[m - 1].start + sp[m - 1].len, sp[k].start + sp[k].len);
                                sp[m - 1].len = e - sp[m - 1].start;
                        } else
                                sp[m++] = sp[k];
                }
                n = m;
                uint64_t read = 0;
                for (size_t k = 0; k < n; k++)
                        read += sp[k].len;
                /* nearly all of it read: whole, so that the file stays in
                 * one piece and the kernel's readahead in it stays in it */
                if (what == LAYOUT_AUTO && end && read * 8 >= end * 7) {
                        sp[0] = (struct layout_span){ 0, end };
                        n = 1;
                }
        }
        lf->spans = sp;
        lf->n_spans = n;
        return 0;
}

bool layout_next_piece(const struct layout_file *lf, const struct rp_layout *x, uint32_t bs, struct layout_iter *it,
                       uint64_t *ret_block, uint64_t *ret_physical, uint64_t *ret_blocks)
{
        while (it->span < lf->n_spans) {
                const struct layout_span *sp = &lf->spans[it->span];
                uint64_t span_end = sp->start + sp->len;
                if (!it->started || it->block < sp->start) {
                        it->block = MAX(it->block, sp->start);
                        it->started = true;
                }
                if (it->block >= span_end) {
                        it->span++;
                        continue;
                }
                while (it->ext < x->n_extents &&
                       (x->extents[it->ext].logical + x->extents[it->ext].length + bs - 1) / bs <= it->block)
                        it->ext++;
                if (it->ext >= x->n_extents) {
                        it->span = lf->n_spans;
                        return false;
                }
                const struct rp_extent *e = &x->extents[it->ext];
                uint64_t e_start = e->logical / bs, e_end = (e->logical + e->length + bs - 1) / bs;
                if (e_start >= span_end) {   /* a hole to the span's end */
                        it->span++;
                        continue;
                }
                uint64_t lo = MAX(it->block, e_start), hi = MIN(span_end, e_end);
                *ret_block = lo;
                *ret_physical = e->physical + (lo - e_start) * bs;
                *ret_blocks = hi - lo;
                it->block = hi;
                return true;
        }
        return false;
}

void layout_count_blocks(const struct layout_file *lf, const struct rp_layout *x, uint32_t bs, uint64_t *ret_blocks,
                         uint64_t *ret_pieces)
{
        struct layout_iter it = {};
        uint64_t b, p, n, blocks = 0, pieces = 0;
        while (layout_next_piece(lf, x, bs, &it, &b, &p, &n)) {
                blocks += n;
                pieces++;
        }
        *ret_blocks = blocks;
        *ret_pieces = pieces;
}

static bool movable(const struct layout_file *lf)
{
        return !lf->skip && !lf->duplicate && lf->before.known && lf->blocks;
}

/* Does b follow a within less than a page (blocks smaller than a page
 * are moved page-aligned: a gap of less than one is no break)? */
static bool follows(uint64_t a, uint64_t b)
{
        return b >= a && b - a < (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t layout_pieces(const struct layout *l, bool after)
{
        uint64_t pieces = 0, prev_end = UINT64_MAX;
        const uint32_t bs = l->fs.block_size;
        for (size_t i = 0; i < l->n_files; i++) {
                const struct layout_file *lf = &l->files[i];
                const struct rp_layout *x = after && lf->after.known ? &lf->after : &lf->before;
                struct layout_iter it = {};
                uint64_t b, p, n;
                if (!movable(lf) && !(after && lf->moved))
                        continue;
                while (layout_next_piece(lf, x, bs, &it, &b, &p, &n)) {
                        /* a gap of less than a page is no break: blocks
                         * smaller than a page are moved page-aligned */
                        if (prev_end == UINT64_MAX || !follows(prev_end, p))
                                pieces++;
                        prev_end = p + n * bs;
                }
        }
        return pieces;
}

/* A file lying in one run of blocks: where it starts, and ends. */
static bool one_run(const struct layout_file *lf, uint32_t bs, uint64_t *start, uint64_t *end)
{
        struct layout_iter it = {};
        uint64_t b, p, n;
        bool first = true;
        while (layout_next_piece(lf, &lf->before, bs, &it, &b, &p, &n)) {
                if (first)
                        *start = p;
                else if (!follows(*end, p))
                        return false;
                *end = p + n * bs;
                first = false;
        }
        return !first;
}

void layout_decide(struct layout *l, uint64_t avail_blocks)
{
        size_t best_first = 0, best_last = 0, first = 0;
        uint64_t best_blocks = 0, run_blocks = 0, prev_end = UINT64_MAX, used = 0;
        bool in_run = false, full = false;
        int region = -1;   /* of the previous movable file: 0 kept, 1 donor */
        /* a file's cost in donor space: its blocks, and the page alignment
         * each of its pieces may need (layout_run's donor) */
        long page = sysconf(_SC_PAGESIZE);
        uint64_t pad = page > (long)l->fs.block_size ? (uint64_t)page / l->fs.block_size - 1 : 0;

        l->movable_files = l->movable_blocks = l->keep_files = l->keep_blocks = 0;
        l->move_files = l->move_blocks = 0;
        l->pieces_after = 0;
        /* the longest chain of files already consecutive in access order */
        for (size_t i = 0; i < l->n_files; i++) {
                struct layout_file *lf = &l->files[i];
                uint64_t s, e;
                lf->keep = lf->move = false;
                if (!movable(lf))
                        continue;
                l->movable_files++;
                l->movable_blocks += lf->blocks;
                if (!one_run(lf, l->fs.block_size, &s, &e)) {
                        in_run = false;
                        prev_end = UINT64_MAX;
                        continue;
                }
                if (!in_run || !follows(prev_end, s)) {
                        in_run = true;
                        first = i;
                        run_blocks = 0;
                }
                run_blocks += lf->blocks;
                prev_end = e;
                if (run_blocks > best_blocks) {
                        best_blocks = run_blocks;
                        best_first = first;
                        best_last = i;
                }
        }
        l->pieces_now = layout_pieces(l, false);
        /* a chain stays where it holds half the data or more (a layout run
         * again); other chains are a seek away from the rest: they move */
        bool keep_chain = best_blocks && best_blocks * 2 >= l->movable_blocks && best_last > best_first;
        for (size_t i = 0; i < l->n_files; i++) {
                struct layout_file *lf = &l->files[i];
                int here;
                if (!movable(lf))
                        continue;
                if (keep_chain && i >= best_first && i <= best_last) {
                        lf->keep = true;
                        l->keep_files++;
                        l->keep_blocks += lf->blocks;
                        here = 0;
                } else if (!full && used + lf->blocks + pad * lf->pieces <= avail_blocks) {
                        lf->move = true;
                        used += lf->blocks + pad * lf->pieces;
                        l->move_files++;
                        l->move_blocks += lf->blocks;
                        here = 1;
                } else {
                        /* what fits is a prefix of the start: the rest waits */
                        full = true;
                        lf->skip = LAYOUT_SKIP_NO_SPACE;
                        l->skipped[LAYOUT_SKIP_NO_SPACE]++;
                        l->movable_files--;
                        l->movable_blocks -= lf->blocks;
                        continue;
                }
                if (here != region)
                        l->pieces_after++;
                region = here;
        }
        /* the files that stay out for want of space are not counted in
         * either figure: pieces_now again over the same files */
        l->pieces_now = layout_pieces(l, false);
        l->fit_files = l->move_files;
        l->no_gain = !l->move_files || l->pieces_after >= l->pieces_now;
        if (l->no_gain) {
                for (size_t i = 0; i < l->n_files; i++)
                        l->files[i].move = false;
                l->move_files = l->move_blocks = 0;
        }
        l->move_bytes = l->move_blocks * l->fs.block_size;
}
