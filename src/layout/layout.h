/* SPDX-License-Identifier: MIT */
/* Layout: the data of a read set's files moved, online, into one run of
 * consecutive blocks in first-access order, file after file: on ext4 by
 * the kernel's extent exchange (layout/ext4.h), on btrfs rewritten
 * compressed (layout/btrfs.h); each a backend, a struct layout_ops, chosen
 * by the file system's type.  Three steps: find the file system and refuse
 * what cannot be laid out (layout_find_fs); look at every file and decide
 * what moves (layout_survey: changes nothing, all a dry run does); move and
 * verify (layout_run).  Every file keeps its content and its inode: each
 * moved file is read back from the device and compared with its checksum
 * from before. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/extents.h"
#include "model/readset.h"

/* Why a file of the read set is not moved (counted, named). */
enum layout_skip {
        LAYOUT_SKIP_NONE = 0,
        LAYOUT_SKIP_UNRESOLVED,   /* recorded without a path */
        LAYOUT_SKIP_DELETED,      /* deleted while it was recorded */
        LAYOUT_SKIP_OTHER_FS,     /* on another file system than the one laid out */
        LAYOUT_SKIP_MISSING,      /* no longer there */
        LAYOUT_SKIP_NOT_REGULAR,  /* a symlink, FIFO, device, socket or directory now */
        LAYOUT_SKIP_CHANGED,      /* not the file recorded (inode, size, mtime) */
        LAYOUT_SKIP_EMPTY,        /* no data blocks (empty, or all holes) */
        LAYOUT_SKIP_NOT_READ,     /* no range recorded: nothing of it to move */
        LAYOUT_SKIP_INLINE,       /* data inside the inode */
        LAYOUT_SKIP_NOT_EXTENTS,  /* block-mapped, not extent-mapped (chattr +e converts) */
        LAYOUT_SKIP_IMMUTABLE,
        LAYOUT_SKIP_APPEND_ONLY,
        LAYOUT_SKIP_ENCRYPTED,
        LAYOUT_SKIP_DAX,
        LAYOUT_SKIP_JOURNAL_DATA, /* data journalled (chattr +j) */
        LAYOUT_SKIP_VERITY,       /* fs-verity: never written again */
        LAYOUT_SKIP_SWAP,         /* an active swap file */
        LAYOUT_SKIP_RUNNING,      /* a running executable (ETXTBSY) */
        LAYOUT_SKIP_OPEN_WRITE,   /* open for writing by a process */
        LAYOUT_SKIP_NO_SPACE,     /* beyond the free space there is */
        LAYOUT_SKIP_REFUSED,      /* the kernel refused the exchange (err) */
        LAYOUT_SKIP_ERROR,        /* could not be looked at (err) */
        LAYOUT_SKIP_SHARED,       /* btrfs: shares extents with a snapshot or a reflinked copy */
        LAYOUT_SKIP_NOCOW,        /* btrfs: nodatacow (chattr +C): never compressed */
        LAYOUT_SKIP_COMPRESSED,   /* btrfs: compressed already (the kernel rewrites no full compressed extent) */
        _LAYOUT_SKIP_MAX,
};

/* The layout reason for a file fs_open_recorded() would not open. */
enum fs_skip;
int layout_skip_of(enum fs_skip why);
/* Is fd open for writing by any process?  A read lease is granted only
 * where none is (the kernel's check): 1 yes, 0 no, -errno when that cannot
 * be told (leases disabled, not the owner without CAP_LEASE). */
int layout_open_for_writing(int fd);

/* What a layout that stopped on a failed check leaves in the file
 * system's root directory: the donor, pinned under this prefix and the
 * PID, and a note (.txt) saying where the old data lies. */
#define LAYOUT_RESCUE_PREFIX "readset-layout-rescue-"
/* Those in dirfd: their number; with remove, unlinked (each named to
 * each, may be NULL).  Only regular files owned by root count.  -errno. */
int layout_leftovers(int dirfd, bool remove, void (*each)(void *userdata, const char *name), void *userdata);

/* "running-executable", "open-for-writing", ... (the JSON's names). */
const char *layout_skip_name(int why);
/* What a user can do about it, or NULL when nothing is needed. */
const char *layout_skip_advice(int why);

/* What of a file moves. */
enum layout_what {
        LAYOUT_AUTO = 0,          /* per file: whole where the start brought in 7/8 of it or
                                   * more, else those ranges */
        LAYOUT_FILES = 1,         /* whole files */
        LAYOUT_RANGES = 2,        /* only the ranges the start brought in (read, read ahead;
                                   * gaps under 64 KiB bridged) */
};

/* Blocks of a file to move: [start, start + len). */
struct layout_span {
        uint64_t start, len;
};

/* One regular file of the read set, in first-access order. */
struct layout_file {
        uint32_t file;            /* index in the read set */
        uint8_t skip;             /* enum layout_skip */
        bool duplicate;           /* a hard link of an earlier file: moved with it */
        bool keep;                /* already in access order: stays where it is */
        bool move;                /* to be moved */
        bool moved;               /* moved (all or part: partial) and verified (ext4), rewritten (btrfs) */
        bool verified;            /* btrfs: rewritten and read back the same */
        bool partial;             /* moved in part (interrupted, or the kernel stopped) */
        int err;                  /* -errno of REFUSED / ERROR */
        uint64_t size;
        uint64_t blocks;          /* data blocks to move (allocated, in spans) */
        uint64_t pieces;          /* runs of blocks they lie in (through before) */
        struct layout_span *spans;  /* sorted, apart */
        size_t n_spans;
        struct rp_layout before;  /* its extents when surveyed */
        struct rp_layout after;   /* its extents after the run (moved files) */
};

struct layout;
struct layout_fs;
struct layout_options;

/* A file system's layout backend (as fio's I/O engines): chosen by the
 * type of the file system (layout_find_fs), it looks at each file of the
 * read set, decides what moves and moves it. */
struct layout_ops {
        const char *name;         /* mountinfo's type: "ext4", "btrfs" */
        long magic;               /* statfs()'s f_type */
        bool compresses;          /* rewrites files compressed: only when a compression is asked */
        bool leaves_rescue;       /* a run stopped on a failed check may leave a rescue behind */
        bool busy_files;          /* its survey asks which files run or are swapped on (l->busy, l->swap) */
        /* the mounted file system refused whole: -EOPNOTSUPP (ext4's
         * data=journal), else 0 */
        int (*accept)(const struct layout_fs *fs);
        /* one file of the read set (regular, there, not a later hard link)
         * looked at, nothing changed: lf's skip, err, size, before...;
         * -ENOMEM only */
        int (*survey_file)(struct layout *l, struct layout_file *lf, const struct rs_file *f);
        /* what moves, from the files surveyed: keep, move, the counts */
        void (*decide)(struct layout *l);
        /* move what was decided (layout_run) */
        int (*run)(struct layout *l, const struct layout_options *o);
};
extern const struct layout_ops layout_ext4_ops, layout_btrfs_ops;
/* The backend of a file system of this type and f_type, or NULL. */
const struct layout_ops *layout_ops_find(const char *fstype, long magic);

/* The file system a read set is laid out on. */
struct layout_fs {
        const struct layout_ops *ops;  /* its backend */
        char mnt[4096];           /* its mount point */
        char under[4096];         /* only files below this directory ("": all) */
        char fstype[32];
        uint64_t dev;             /* st_dev */
        uint32_t block_size;
        uint64_t blocks, free_blocks; /* size, and free for unprivileged users (f_bavail) */
        bool read_only, data_journal;
};

/* Find the file system of rs's main device (where most of its bytes lie),
 * or with under (a directory; NULL: none) the one holding under, and
 * whether it can be laid out: -EMEDIUMTYPE no backend for its type
 * (fs->fstype says what), -EROFS mounted read-only, -EOPNOTSUPP refused by
 * its backend (ext4 mounted data=journal),
 * -ENOENT no file of rs is there any more, -ENOMEM. */
int layout_find_fs(const struct readset *rs, const char *under, struct layout_fs *ret);

/* What is asked of a layout. */
struct layout_request {
        enum layout_what what;    /* ext4 */
        int compress;             /* btrfs: enum blayout_compress */
        bool unshare;             /* btrfs: rewrite files sharing extents too */
};

/* Files busy in a way a layout cannot move (st_dev, st_ino; sorted). */
struct layout_ident {
        uint64_t dev, ino;
};

/* A layout: one result type for every backend. */
struct layout {
        const struct readset *rs;
        struct layout_fs fs;
        enum layout_what what;
        int compress;               /* btrfs: enum blayout_compress */
        bool unshare;               /* btrfs: shared files rewritten too */
        struct layout_ident *busy, *swap;   /* running executables, active swap files */
        size_t n_busy, n_swap;
        struct layout_file *files;  /* the regular files of rs, first-access order */
        size_t n_files;
        uint64_t outside_files;     /* of rs, not below fs.under: left alone, not counted */
        uint64_t skipped[_LAYOUT_SKIP_MAX];
        uint64_t meta_ranges, meta_bytes;   /* metadata the read set reads: no layout moves it */
        /* the survey's decision */
        uint64_t movable_files, movable_blocks;  /* could be moved */
        uint64_t keep_files, keep_blocks;        /* already in order, staying */
        uint64_t move_files, move_blocks;        /* to move (0 where nothing gains) */
        uint64_t move_bytes;                     /* their bytes (ext4: the blocks', btrfs: the files' sizes) */
        uint64_t fit_files;                      /* would move: they fit in the free space */
        uint64_t avail_blocks;      /* free blocks a layout may use: f_bavail less a reserve */
        uint64_t pieces_now;        /* runs of consecutive blocks the movable files lie in, access order */
        uint64_t pieces_after;      /* the same after the move (one run of donor space assumed,
                                     * then the donor's real ones) */
        bool no_gain;               /* the move would not reduce the pieces: nothing moves */
        /* what the run did */
        uint64_t donor_runs;        /* runs of consecutive blocks the donor space came in */
        uint64_t donor_physical;    /* where it starts on the device (bytes) */
        uint64_t moved_files, moved_blocks, exchanges;
        uint64_t moved_bytes;       /* as move_bytes */
        uint64_t encoded_before, encoded_after;   /* btrfs: compressed extents of the movable files */
        uint64_t verified_files;
        uint64_t pieces_measured;   /* pieces_now's count again, after the run */
        int stopped;                /* 0, -EINTR (asked to stop), -ENOSPC, -EOPNOTSUPP (the
                                     * kernel exchanges nothing here), -EIO (a failed check:
                                     * stop_file, stop_err), another -errno */
        size_t stop_file;           /* index in files of the file that stopped the run */
        int stop_err;               /* -EIO: the read back failed (-errno), or 0: it differed */
        bool rescued;               /* -EIO: the old data kept under the name rescue */
        char rescue[4200];
        bool sync_failed;           /* the final syncfs failed (stopped says why) */
};

void layout_free(struct layout *l);
static inline void layout_freep(struct layout **p) { layout_free(*p); }
#define _cleanup_layout_ __attribute__((cleanup(layout_freep)))

/* Look at every file of rs on fs with its backend (nothing is changed, no
 * file is opened for writing) and decide what moves: files the kernel
 * would refuse, changed ones and those open for writing skipped by reason;
 * hard links once; (ext4) the longest run already in access order kept
 * where it holds half the data or more; what does not fit in the free
 * space skipped (in first-access order: what fits moves); nothing moved
 * when it would not reduce the pieces.  -ENOMEM only. */
int layout_survey(const struct readset *rs, const struct layout_fs *fs, const struct layout_request *req,
                  struct layout **ret);

/* The verdict on a surveyed layout: what a run would do. */
enum layout_verdict {
        LAYOUT_VERDICT_MOVE,          /* files move */
        LAYOUT_VERDICT_NO_SPACE,      /* not even the first file fits */
        LAYOUT_VERDICT_NOTHING_MOVABLE,
        LAYOUT_VERDICT_NO_GAIN,       /* moving would not reduce the pieces */
        LAYOUT_VERDICT_SOLID_STATE,   /* a device measured solid state, not forced */
};
/* The verdict: solid_state, the device is known to be solid state (its
 * profile); force, move there too. */
enum layout_verdict layout_verdict(const struct layout *l, bool solid_state, bool force);
/* "move", "no-space", "nothing-movable", "no-gain", "solid-state" (the
 * JSON's decision). */
const char *layout_verdict_name(enum layout_verdict v);
/* "interrupted", "file system full", ... for a run's l->stopped; NULL for 0. */
const char *layout_stop_name(int stopped);

/* The decision made from the files' extents (survey's last step; for
 * tests): keep, move, pieces_now, pieces_after, no_gain, from the files'
 * skip and before; avail_blocks: what may be used. */
void layout_decide(struct layout *l, uint64_t avail_blocks);

/* The runs of consecutive blocks (a gap of less than a page is none) the
 * movable files' data lies in, in first-access order: as surveyed, or
 * (after) as the run left them. */
uint64_t layout_pieces(const struct layout *l, bool after);

/* The pieces of a file's spans where a map x puts them: each call gives the
 * next run of blocks that lies in one extent (holes left out). */
struct layout_iter {
        size_t span, ext;
        uint64_t block;
        bool started;
};
bool layout_next_piece(const struct layout_file *lf, const struct rp_layout *x, uint32_t bs, struct layout_iter *it,
                       uint64_t *ret_block, uint64_t *ret_physical, uint64_t *ret_blocks);
/* The blocks of lf's spans through x, and the runs they lie in. */
void layout_count_blocks(const struct layout_file *lf, const struct rp_layout *x, uint32_t bs, uint64_t *ret_blocks,
                         uint64_t *ret_pieces);
/* The running programs (what /proc/PID/exe is) and the active swap files,
 * each sorted for layout_ident_in(); -ENOMEM. */
int layout_busy_files(struct layout_ident **ret, size_t *ret_n, struct layout_ident **ret_swap, size_t *ret_nswap);
bool layout_ident_in(const struct layout_ident *set, size_t n, uint64_t dev, uint64_t ino);
/* The spans of a file of size bytes recorded as f: the whole file, or the
 * ranges the start brought in (read, and read ahead), block aligned,
 * merged across gaps of less than 64 KiB, or (auto) the whole file where
 * those cover 7/8 of it.
 * -ENOMEM. */
int layout_spans(struct layout_file *lf, const struct rs_file *f, enum layout_what what, uint32_t bs);

struct layout_options {
        uint64_t chunk_blocks;      /* blocks per exchange (0: 8 MiB's worth) */
        volatile sig_atomic_t *stop;  /* set (by a signal): stop after the file being moved */
        uint64_t fail_after;        /* a test's failpoint: fail_signal raised after this many
                                     * exchanges (0: never) */
        int fail_signal;
        uint64_t fail_corrupt;      /* a test's failpoint: the Nth file's read-back taken as
                                     * differing (0: never) */
        /* how far the run is: files dealt with of move_files, their bytes
         * of move_bytes (NULL: not told) */
        void (*progress)(void *userdata, const struct layout *l, uint64_t files, uint64_t bytes);
        void *userdata;
};

/* Move what the survey decided, each file checked again, opened for writing
 * (a running executable: skipped), checksummed, exchanged in chunks,
 * synced, read back from the device (O_DIRECT) and compared; at the first
 * failed check the run stops (l->stopped -EIO) and the file's old blocks
 * are kept (l->rescue).  l->stopped says why a run ended early; the return
 * is -errno only when it could not start: -EBUSY another layout runs on
 * this file system, -EEXIST a stopped one left its rescue files, -ENOSPC
 * no donor space, -EXDEV the donor space lies in more pieces than it would
 * remove (nothing moved), another -errno. */
int layout_run(struct layout *l, const struct layout_options *o);
