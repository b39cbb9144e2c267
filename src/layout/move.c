/* SPDX-License-Identifier: MIT */
/* ext4 as a layout backend: its survey of a file, and moving what the
 * survey decided: the donor, the exchanges, the checks. */
#include "layout/layout.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/open.h"
#include "fs/checksum.h"
#include "layout/ext4.h"
#include "util/util.h"
#include "util/banned.h"

struct run {
        struct layout *l;
        const struct layout_options *o;
        int dir;             /* the file system's root directory */
        int donor;
        uint64_t cursor;     /* the donor's next free block */
        uint64_t chunk;
        uint64_t per_page;   /* blocks per page: an exchange's two starts must agree modulo it */
        uint64_t files_done, blocks_done;
};

/* One exchange, and the test's failpoint after it. */
static int exchange(struct run *x, int fd, uint64_t orig, uint64_t at, uint64_t len, uint64_t *moved)
{
        int r = ext4_exchange(fd, x->donor, orig, at, len, moved);
        if (r >= 0 || *moved)
                x->l->exchanges++;
        if (x->o->fail_after && x->l->exchanges == x->o->fail_after)
                raise(x->o->fail_signal);
        return r;
}

/* An exchange done (or undone: exchanging again swaps back), one piece. */
struct piece {
        uint64_t orig, at, len;
};

/* Exchange the file's spans (where its map puts them: holes left out),
 * packed from the donor's cursor on, in chunks; *ret_pieces what was
 * exchanged.  A stop request is honoured between chunks (then -EINTR,
 * with what was moved kept). */
static int move_file(struct run *x, struct layout_file *lf, int fd, struct piece **ret_pieces, size_t *ret_n)
{
        struct layout_iter it = {};
        uint64_t b, phys, n;
        size_t cap = 0;
        int r = 0;

        *ret_pieces = NULL;
        *ret_n = 0;
        while (layout_next_piece(lf, &lf->before, x->l->fs.block_size, &it, &b, &phys, &n)) {
                uint64_t stop = b + n;
                /* blocks smaller than a page: the kernel moves whole pages,
                 * so the donor's start must sit where the file's does in
                 * its page (a gap of less than a page before it) */
                x->cursor += (b % x->per_page + x->per_page - x->cursor % x->per_page) % x->per_page;
                while (b < stop) {
                        uint64_t len = MIN(stop - b, x->chunk), moved = 0;
                        if (x->o->stop && *x->o->stop)
                                return -EINTR;
                        if (grow_array(ret_pieces, &cap, *ret_n + 1, sizeof(**ret_pieces)) < 0)
                                return -ENOMEM;
                        r = exchange(x, fd, b, x->cursor, len, &moved);
                        if (moved)
                                (*ret_pieces)[(*ret_n)++] = (struct piece){ b, x->cursor, moved };
                        x->cursor += len;   /* a partial chunk leaves its rest of the donor unused */
                        x->blocks_done += moved;
                        lf->partial = true;
                        if (r < 0)
                                return r;
                        b += len;
                        if (x->o->progress)
                                x->o->progress(x->o->userdata, x->l, x->files_done,
                                               x->blocks_done * x->l->fs.block_size);
                }
        }
        lf->partial = false;
        return 0;
}

/* Open lf for the move: the file recorded, not open for writing by anyone,
 * not running; the descriptor for writing, and one for reading it back. */
static int open_for_move(struct layout_file *lf, const struct rs_file *f, int *ret_rd, int *ret_wr)
{
        enum fs_skip why;
        struct stat a, b;
        unsigned flags = 0;
        _cleanup_close_ int rd = fs_open_recorded(f, O_RDONLY, &why), wr = -1;
        int r;

        if (rd < 0) {
                lf->skip = (uint8_t)layout_skip_of(why);
                return lf->err = rd;
        }
        r = layout_open_for_writing(rd);
        if (r != 0) {
                /* someone writes it, or that cannot be told (leases off) */
                lf->skip = r > 0 ? LAYOUT_SKIP_OPEN_WRITE : LAYOUT_SKIP_ERROR;
                lf->err = r > 0 ? -EBUSY : r;
                return -EBUSY;
        }
        wr = fs_open_recorded(f, O_RDWR, &why);
        if (wr < 0) {
                lf->skip = wr == -ETXTBSY ? LAYOUT_SKIP_RUNNING : (uint8_t)layout_skip_of(why);
                return lf->err = wr;
        }
        /* the same inode both times, still with nothing the kernel refuses */
        if (fstat(rd, &a) < 0 || fstat(wr, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
            (uint64_t)b.st_size != lf->size) {
                lf->skip = LAYOUT_SKIP_CHANGED;
                return lf->err = -ESTALE;
        }
        if (ioctl(wr, FS_IOC_GETFLAGS, &flags) < 0) {
                lf->skip = LAYOUT_SKIP_ERROR;
                return lf->err = -errno;
        }
        r = ext4_flags_refusal(flags);
        if (r) {
                lf->skip = (uint8_t)r;
                return -EPERM;
        }
        *ret_rd = rd, *ret_wr = wr;
        rd = wr = -1;
        return 0;
}

/* After a failed check: the donor (holding the file's blocks from before
 * the move, unchanged) linked under a name, so that closing it frees
 * nothing, and a note beside it of where the old data lies. */
static int rescue(struct run *x, const struct layout_file *lf, const struct piece *p, size_t n)
{
        struct layout *l = x->l;
        const uint32_t bs = l->fs.block_size;
        char link[64], note[80], proc[64];
        _cleanup_fclose_ FILE *f = NULL;
        int fd;

        snprintf(link, sizeof(link), LAYOUT_RESCUE_PREFIX "%d", (int)getpid());
        snprintf(note, sizeof(note), "%s.txt", link);
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", x->donor);
        if (linkat(AT_FDCWD, proc, x->dir, link, AT_SYMLINK_FOLLOW) < 0)
                return -errno;
        snprintf(l->rescue, sizeof(l->rescue), "%s/%s", l->fs.mnt, link);
        fd = openat(x->dir, note, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
                if (fd >= 0)
                        close(fd);
                return -errno;
        }
        fprintf(f, "readset layout stopped at %s: read back from the device after its move, it %s.\n"
                   "Its data from before the move lies, unchanged, in these bytes of the device %u:%u\n"
                   "(/dev/block/%u:%u), which %s owns so that nothing reuses them:\n",
                l->rs->files[lf->file].path, l->stop_err < 0 ? "could not be read" : "differed from before",
                major(l->fs.dev), minor(l->fs.dev), major(l->fs.dev), minor(l->fs.dev), link);
        for (size_t i = 0; i < n; i++) {
                const struct rp_extent *e = extent_at(&lf->before, p[i].orig * bs, NULL);
                if (!e)
                        continue;
                fprintf(f, "  file bytes %" PRIu64 "-%" PRIu64 " at device byte %" PRIu64 "\n", p[i].orig * bs,
                        (p[i].orig + p[i].len) * bs, e->physical + (p[i].orig * bs - e->logical));
        }
        fprintf(f, "Copy them back (dd from the device, at those offsets) if the file is damaged; then\n"
                   "'readset layout --undo-leftovers READSET' removes %s and this note.\n", link);
        return fflush(f) == 0 && fsync(fd) == 0 ? 0 : -errno;
}

static void skipped(struct layout *l, struct layout_file *lf)
{
        lf->move = false;
        l->skipped[lf->skip]++;
}

/* One file: open, checksum, exchange, sync, read back from the device,
 * compare.  0 moved (or skipped: lf->skip), -EINTR, -EIO a mismatch,
 * another -errno that ends the run. */
static int lay_file(struct run *x, struct layout_file *lf)
{
        const struct rs_file *f = &x->l->rs->files[lf->file];
        _cleanup_close_ int rd = -1, wr = -1;
        _cleanup_free_ struct piece *pieces = NULL;
        struct content_sum before, after;
        struct rp_layout now = {};
        struct stat st;
        size_t n = 0;
        uint64_t odd = 0;
        int r, m;

        r = open_for_move(lf, f, &rd, &wr);
        if (r < 0) {
                skipped(x->l, lf);
                return r == -ENOMEM ? r : 0;
        }
        /* dirty pages make the kernel refuse (EBUSY), delayed allocations
         * look like holes: both written out first; then the map as it is */
        if (fsync(wr) < 0)
                return -errno;
        r = extents_read_flags(rd, FIEMAP_FLAG_SYNC, &now, &odd);
        if (r >= 0 && !odd) {
                /* the map may have changed since the survey: its blocks must
                 * still fit what the donor holds for this file */
                struct layout_iter it = {};
                uint64_t b, p, k, blocks = 0, runs = 0;
                while (layout_next_piece(lf, &now, x->l->fs.block_size, &it, &b, &p, &k))
                        blocks += k, runs++;
                if (blocks > lf->blocks || runs > lf->pieces)
                        odd = 1;
        }
        if (r < 0 || odd) {
                extents_clear(&now);
                lf->skip = r < 0 ? LAYOUT_SKIP_ERROR : LAYOUT_SKIP_CHANGED;
                lf->err = r < 0 ? r : -ESTALE;
                skipped(x->l, lf);
                return r == -ENOMEM ? r : 0;
        }
        extents_clear(&lf->before);
        lf->before = now;
        r = checksum_fd(rd, lf->size, false, &before);
        if (r < 0) {
                lf->skip = LAYOUT_SKIP_ERROR;
                lf->err = r;
                skipped(x->l, lf);
                return r == -ENOMEM ? r : 0;
        }
        m = move_file(x, lf, wr, &pieces, &n);
        if (m < 0 && m != -EINTR && !n) {
                /* nothing exchanged: the kernel refused this file, or
                 * (every file alike) this file system */
                if (m == -ENOMEM || m == -EOPNOTSUPP || m == -ENOSPC)
                        return m;
                lf->skip = m == -ETXTBSY ? LAYOUT_SKIP_SWAP : LAYOUT_SKIP_REFUSED;
                lf->err = m;
                skipped(x->l, lf);
                return 0;
        }
        if (!n)
                return m;
        /* exchanged, all or in part: whatever stopped the exchanges, the
         * file is checked.  On the device before it is read back from it */
        r = fsync(wr) < 0 ? -errno : 0;
        if (r >= 0)
                r = checksum_fd(rd, lf->size, true, &after);
        if (r >= 0 && x->o->fail_corrupt && x->l->verified_files + 1 == x->o->fail_corrupt)
                after.d[0] ^= 1;   /* the tests' failpoint: a mismatch */
        if (r >= 0 && (fstat(rd, &st) < 0 || !fs_identity_matches(f, &st))) {
                /* written to while it moved (after the lease was checked):
                 * the exchange keeps what was written; the file is the
                 * writer's now, not the one recorded */
                lf->skip = LAYOUT_SKIP_CHANGED;
                lf->err = -ESTALE;
                skipped(x->l, lf);
                return m;
        }
        if (r < 0 || memcmp(&before, &after, sizeof(before)) != 0) {
                /* the data before the move lies in the blocks the donor
                 * now owns: kept, under a name, with where it lies */
                x->l->stop_file = (size_t)(lf - x->l->files);
                x->l->stop_err = r;
                x->l->rescued = rescue(x, lf, pieces, n) >= 0;
                return -EIO;
        }
        x->l->verified_files++;
        lf->moved = true;
        x->l->moved_files++;
        for (size_t i = 0; i < n; i++)
                x->l->moved_blocks += pieces[i].len;
        r = extents_read_flags(rd, 0, &lf->after, NULL);
        if (r == -ENOMEM)
                return r;
        return m;
}

/* ext4's run (its ops' run: layout_run()) */
static int layout_ext4_run(struct layout *l, const struct layout_options *o)
{
        struct run x = { .l = l, .o = o, .donor = -1 };
        _cleanup_close_ int dir = -1;
        struct rp_layout donor_map = {};
        struct stat st;
        int r;

        long page = sysconf(_SC_PAGESIZE);
        uint64_t donor_blocks = l->move_blocks;

        x.per_page = page > (long)l->fs.block_size ? (uint64_t)page / l->fs.block_size : 1;
        x.chunk = o->chunk_blocks ? o->chunk_blocks : MAX((8u << 20) / l->fs.block_size, 1u);
        x.chunk = (x.chunk + x.per_page - 1) / x.per_page * x.per_page;
        for (size_t i = 0; i < l->n_files; i++)
                if (l->files[i].move)
                        donor_blocks += (x.per_page - 1) * l->files[i].pieces;
        l->stopped = 0;
        if (!l->move_blocks || l->no_gain)
                return 0;
        /* the donor lives in the file system's root directory (its inode
         * there, so that the allocator starts from the first block group:
         * a disk's outer tracks); one layout at a time per file system */
        dir = open(l->fs.mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        if (fstat(dir, &st) < 0)
                return -errno;
        if (st.st_dev != l->fs.dev)
                return -EXDEV;
        if (flock(dir, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        x.dir = dir;
        /* a layout that stopped on a failed check left the old data
         * pinned: nothing moves until a user has looked at it */
        r = layout_leftovers(dir, false, NULL, NULL);
        if (r != 0)
                return r < 0 ? r : -EEXIST;
        r = ext4_donor_open(dir, donor_blocks * l->fs.block_size, &x.donor);
        if (r < 0)
                return r;
        r = extents_read_flags(x.donor, FIEMAP_FLAG_SYNC, &donor_map, NULL);
        if (r < 0) {
                close(x.donor);
                return r;
        }
        l->donor_runs = 0;
        for (size_t k = 0; k < donor_map.n_extents; k++)
                if (!k || donor_map.extents[k].physical !=
                                  donor_map.extents[k - 1].physical + donor_map.extents[k - 1].length)
                        l->donor_runs++;
        l->donor_physical = donor_map.n_extents ? donor_map.extents[0].physical : 0;
        extents_clear(&donor_map);
        if (!l->donor_runs) {   /* fallocate succeeded but mapped nothing */
                close(x.donor);
                return -ENOSPC;
        }
        /* a donor in more pieces than the move removes would not help */
        if (l->pieces_after + l->donor_runs - 1 >= l->pieces_now) {
                l->pieces_after += l->donor_runs - 1;
                close(x.donor);
                return -EXDEV;
        }
        l->pieces_after += l->donor_runs - 1;
        for (size_t i = 0; i < l->n_files; i++) {
                struct layout_file *lf = &l->files[i];
                if (!lf->move)
                        continue;
                if (o->stop && *o->stop) {
                        l->stopped = -EINTR;
                        break;
                }
                r = lay_file(&x, lf);
                x.files_done++;
                if (o->progress)
                        o->progress(o->userdata, l, x.files_done, x.blocks_done * l->fs.block_size);
                if (r < 0) {
                        l->stopped = r;
                        if (r != -EIO)
                                l->stop_file = i;
                        break;
                }
        }
        /* the donor now holds the old blocks: closing it frees them */
        close(x.donor);
        if (syncfs(dir) < 0 && !l->stopped) {
                l->stopped = -errno;
                l->sync_failed = true;
        }
        l->pieces_measured = layout_pieces(l, true);
        l->moved_bytes = l->moved_blocks * l->fs.block_size;
        return 0;
}

/* ---- ext4 as a layout backend (layout_ops) ---- */

static int ext4_survey_file(struct layout *l, struct layout_file *lf, const struct rs_file *f)
{
        const struct layout_fs *fs = &l->fs;
        enum fs_skip why;
        struct stat st;
        unsigned flags = 0;
        uint64_t odd = 0;
        _cleanup_close_ int fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);
        int r;

        if (fd < 0) {
                lf->err = fd;
                lf->skip = (uint8_t)layout_skip_of(why);
                return 0;
        }
        if (fstat(fd, &st) < 0) {
                lf->err = -errno;
                lf->skip = LAYOUT_SKIP_ERROR;
                return 0;
        }
        lf->size = (uint64_t)st.st_size;
        if (layout_ident_in(l->swap, l->n_swap, st.st_dev, st.st_ino)) {
                lf->skip = LAYOUT_SKIP_SWAP;
                return 0;
        }
        if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
                lf->err = -errno;
                lf->skip = LAYOUT_SKIP_ERROR;
                return 0;
        }
        r = ext4_flags_refusal(flags);
        if (r) {
                lf->skip = (uint8_t)r;
                return 0;
        }
        if (st.st_size == 0) {
                lf->skip = LAYOUT_SKIP_EMPTY;
                return 0;
        }
        if (layout_ident_in(l->busy, l->n_busy, st.st_dev, st.st_ino)) {
                lf->skip = LAYOUT_SKIP_RUNNING;
                return 0;
        }
        /* (that it cannot be told is said at the move, which asks again) */
        if (layout_open_for_writing(fd) > 0) {
                lf->skip = LAYOUT_SKIP_OPEN_WRITE;
                return 0;
        }
        r = extents_read_flags(fd, FIEMAP_FLAG_SYNC, &lf->before, &odd);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                lf->err = r;
                lf->skip = LAYOUT_SKIP_ERROR;
                return 0;
        }
        if (odd) {
                /* extents not mapped yet, or of no fixed place */
                lf->skip = LAYOUT_SKIP_ERROR;
                lf->err = -EAGAIN;
                return 0;
        }
        r = layout_spans(lf, f, l->what, fs->block_size);
        if (r < 0)
                return r;
        layout_count_blocks(lf, &lf->before, fs->block_size, &lf->blocks, &lf->pieces);
        if (!lf->blocks)
                lf->skip = lf->n_spans ? LAYOUT_SKIP_EMPTY : LAYOUT_SKIP_NOT_READ;
        return 0;
}

/* ext4: what may be used is the free space but a reserve for the extent
 * trees the exchanges grow (1% of the file system, at most 64 MiB) */
static void ext4_decide(struct layout *l)
{
        uint64_t reserve = MIN(MAX(l->fs.blocks / 100, 256), (64u << 20) / l->fs.block_size);

        l->avail_blocks = l->fs.free_blocks > reserve ? l->fs.free_blocks - reserve : 0;
        layout_decide(l, l->avail_blocks);
}

static int ext4_accept(const struct layout_fs *fs)
{
        return fs->data_journal ? -EOPNOTSUPP : 0;
}

const struct layout_ops layout_ext4_ops = {
        .name = "ext4",
        .magic = EXT4_SUPER_MAGIC,
        .leaves_rescue = true,
        .busy_files = true,
        .accept = ext4_accept,
        .survey_file = ext4_survey_file,
        .decide = ext4_decide,
        .run = layout_ext4_run,
};
