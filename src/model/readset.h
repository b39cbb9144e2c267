/* SPDX-License-Identifier: MIT */
/* The read-set model: which ranges of which files a cold start reads, in the
 * order it first needs them, plus the path lookups it makes (the builder
 * that makes one from a recording's events is record/builder.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rs_file_kind {
        RS_FILE_REGULAR = 0,    /* a regular file, resolved to a path */
        RS_FILE_BLOCKDEV = 1,   /* filesystem metadata read through a block device */
        RS_FILE_UNRESOLVED = 2, /* (dev, ino) seen but no path found */
        _RS_FILE_KIND_MAX,
};

enum rs_file_flags {
        RS_FILE_DELETED = 1u << 0, /* unlinked before recording ended */
        /* portable (since 1.2): known by its path, size, mtime and the digest
         * of the ranges recorded (content), not by device and inode */
        RS_FILE_BY_CONTENT = 1u << 1,
        _RS_FILE_FLAGS_ALL = RS_FILE_DELETED | RS_FILE_BY_CONTENT,
};

enum rs_range_flags {
        RS_RANGE_ACCESSED = 1u << 0,  /* read(2), page fault or fault-around */
        RS_RANGE_FILLED = 1u << 1,    /* brought into the page cache while recording */
        _RS_RANGE_FLAGS_ALL = RS_RANGE_ACCESSED | RS_RANGE_FILLED,
};

struct rs_range {
        uint64_t offset;   /* bytes, page aligned */
        uint64_t length;   /* bytes, > 0 */
        uint64_t time_us;  /* first needed, microseconds since recording start */
        uint32_t flags;    /* enum rs_range_flags */
};

struct rs_file {
        char *path;        /* absolute; for RS_FILE_UNRESOLVED a "dev:ino" label */
        uint64_t dev;      /* st_dev as userspace sees it (makedev encoding) */
        uint64_t ino;
        uint64_t size;     /* bytes at recording time (0 if unknown) */
        int64_t mtime_ns;  /* at recording time (0 if unknown) */
        uint32_t kind;     /* enum rs_file_kind */
        uint32_t flags;    /* enum rs_file_flags */
        /* RS_FILE_BY_CONTENT: the first 16 bytes of the SHA-256 of the
         * recorded ranges' bytes, in order, each cut at size */
        uint8_t content[16];
        struct rs_range *ranges; /* first-access order, non-overlapping */
        size_t n_ranges;
        size_t cap_ranges;
};

enum rs_lookup_op {
        RS_LOOKUP_OPEN = 1,
        RS_LOOKUP_STAT = 2,
        RS_LOOKUP_ACCESS = 3,
        RS_LOOKUP_READLINK = 4,
        RS_LOOKUP_READDIR = 5,
        RS_LOOKUP_EXEC = 6,
        _RS_LOOKUP_OP_MAX,
};

struct rs_lookup {
        uint64_t time_us;
        uint32_t op;       /* enum rs_lookup_op */
        int32_t result;    /* 0 or -errno */
        uint32_t pid;
        char *path;        /* absolute where it could be made so */
};

/* The image a portable read set's files were packed in (pack/image.h):
 * its byte ranges the start reads, in that order, so that a replay on a
 * copy of it mounted from a file can read them from the file itself. */
struct rs_image {
        uint64_t size;            /* the image's bytes */
        uint8_t head[16];         /* SHA-256 (first 16 bytes) of its first 4096 bytes */
        uint8_t digest[16];       /* SHA-256 (first 16 bytes) of the spans' bytes, in order */
        struct rs_span {
                uint64_t offset, length;
        } *spans;
        size_t n_spans;
};

void rs_image_free(struct rs_image *im);

/* A network file system client's requests during the start (since 1.3):
 * what its own counters said after it, less what they said before. */
enum rs_client_kind {
        RS_CLIENT_NFS = 1,      /* /proc/self/mountstats */
        RS_CLIENT_CIFS = 2,     /* /proc/fs/cifs/Stats */
        RS_CLIENT_SLOWDEV = 3,  /* the share emulator's MNT/.slowdev-stats */
        _RS_CLIENT_KIND_MAX,
};

struct rs_client {
        char *mount;            /* mount point, absolute */
        uint32_t kind;          /* enum rs_client_kind */
        uint64_t requests;      /* requests sent while the start ran */
};
static inline void rs_image_freep(struct rs_image **p) { rs_image_free(*p); }

struct readset {
        /* metadata */
        char *command;          /* the recorded command line, space separated */
        uint64_t created_unix;  /* seconds since the epoch */
        uint64_t duration_us;   /* recording duration */
        uint32_t page_size;
        uint32_t rec_flags;     /* RS_REC_* */
        uint64_t events;        /* page events consumed */
        uint64_t lost_events;   /* events the kernel dropped (overruns) */
        uint64_t lookups_lost;  /* lookup records dropped */
        uint64_t lookups_unresolved; /* relative names that could not be made absolute: not kept */

        struct rs_file *files;  /* ordered by first access */
        size_t n_files;
        size_t cap_files;

        struct rs_lookup *lookups; /* in time order */
        size_t n_lookups;
        size_t cap_lookups;

        struct rs_image *image;    /* portable read sets made by pack: NULL, or its image */

        struct rs_client *clients; /* the network mounts' request counters (none: not known) */
        size_t n_clients;
};

enum rs_rec_flags {
        RS_REC_COLD = 1u << 0,     /* the page cache was dropped before recording */
        RS_REC_LOOKUPS = 1u << 1,  /* lookups were traced */
        /* portable (since 1.2): paths are relative to a root given when
         * replayed ("/" when none), its files known by content */
        RS_REC_PORTABLE = 1u << 2,
        /* a snapshot (readset snapshot): what the page cache held of some
         * files, no start's timeline: a range's time is its rank, 0 for
         * the pages the most snapshots in a row found cached */
        RS_REC_SNAPSHOT = 1u << 3,
};

struct readset *readset_new(void);
void readset_free(struct readset *rs);
static inline void readset_freep(struct readset **p) { readset_free(*p); }
#define _cleanup_readset_ __attribute__((cleanup(readset_freep)))

/* Append a file; takes a copy of path.  Returns the new file or NULL. */
struct rs_file *readset_add_file(struct readset *rs, const char *path, uint64_t dev, uint64_t ino);
/* Remove the file added last (one found unusable after all). */
void readset_drop_last_file(struct readset *rs);
/* The files of from that rs lacks (by device and inode), moved before
 * rs's own, their ranges made first needed (time 0, accessed): what a
 * start read before its recording could follow it (readset auto's).
 * How many were moved, or -ENOMEM. */
int readset_put_first(struct readset *rs, struct readset *from);
int readset_file_add_range(struct rs_file *f, uint64_t offset, uint64_t length, uint64_t time_us, uint32_t flags);
int readset_add_lookup(struct readset *rs, uint64_t time_us, uint32_t op, int32_t result, uint32_t pid, const char *path);
/* Append a mount's client requests; takes a copy of mount.  -ENOMEM. */
int readset_add_client(struct readset *rs, const char *mount, uint32_t kind, uint64_t requests);

/* The command line as stored in the read set: argv joined by spaces, at
 * most READSET_COMMAND_MAX bytes (" ..." where cut).  -ENOMEM. */
#define READSET_COMMAND_MAX 4096
int readset_set_command(struct readset *rs, char *const *argv);

/* Totals over the read set. */
struct readset_totals {
        uint64_t files, ranges, bytes, accessed_bytes;
        uint64_t regular_files, blockdev_files, unresolved_files, deleted_files;
        uint64_t regular_bytes, blockdev_bytes, unresolved_bytes;
        uint64_t lookups, lookups_failed;
};
void readset_totals(const struct readset *rs, struct readset_totals *t);

/* Check internal invariants (used after parsing and in tests).  Returns 0 or
 * -EBADMSG. */
int readset_validate(const struct readset *rs);
/* Is p absolute, with no empty, "." or ".." component (a path that stays
 * below whatever root it is joined to)? */
bool readset_path_is_plain(const char *p);

/* Where reads of f stop: its recorded size rounded up to a page, or what an
 * off_t can address when the size is unknown (so that a hostile read set
 * cannot make a plan or an analysis huge). */
uint64_t readset_read_limit(const struct readset *rs, const struct rs_file *f);
/* The device most of rs's bytes come from (st_dev of its files, st_rdev of
 * its block devices); 0 when none is known. */
int readset_main_device(const struct readset *rs, uint64_t *ret);
/* The first regular file of rs on that device that still exists, by which
 * the device is found now (NULL when none); -ENOMEM. */
int readset_main_file(const struct readset *rs, const char **ret);

/* The part of rs on the device dev, as a read set of its own: its regular
 * files there (only those below the directory under, when not NULL) and
 * the metadata read through dev.  -ENOMEM. */
int readset_part(const struct readset *rs, uint64_t dev, const char *under, struct readset **ret);

const char *rs_file_kind_name(uint32_t kind);
const char *rs_lookup_op_name(uint32_t op);
const char *rs_client_kind_name(uint32_t kind);   /* "nfs", "cifs", "slowdev" */
