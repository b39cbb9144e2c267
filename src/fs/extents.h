/* SPDX-License-Identifier: MIT */
/* Where a file's data lies on its device: the extent map FIEMAP gives, read
 * once per file, and the position of an offset in it.  Used to sort a
 * replay by position on a disk and to draw and cost a read set. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One extent of a file: logical bytes [logical, logical+length) lie at
 * physical (a byte address on the file system's device). */
struct rp_extent {
        uint64_t logical, physical, length;
        uint32_t flags;   /* FIEMAP_EXTENT_* (shared, inline, ...; ENCODED: compressed by
                           * btrfs, physical is where it starts, for all of it) */
};

/* What is known of a file's layout; extents sorted by logical offset.  A
 * file whose map is not known has unknown positions. */
struct rp_layout {
        struct rp_extent *extents;
        size_t n_extents;
        bool known;
};

/* At most this many extents are kept of one file. */
#define EXTENTS_MAX_PER_FILE (1u << 20)

/* Read fd's extent map (extents without a usable physical address --
 * delayed, inline, not aligned -- are left out; an encoded one is placed
 * where it starts).  -EOPNOTSUPP (or the ioctl's
 * error) when the file system has no FIEMAP; ret is then left unknown. */
int extents_read(int fd, struct rp_layout *ret);
/* The same with FIEMAP's fm_flags (FIEMAP_FLAG_SYNC: delayed allocations
 * made first); *ret_odd (may be NULL): the extents left out.  With
 * EXTENTS_ALL in fm_flags, none is left out (each with its flags: inline
 * data, delayed...) and a map of more than EXTENTS_MAX_PER_FILE extents is
 * -E2BIG, not cut short. */
#define EXTENTS_ALL (1u << 31)
int extents_read_flags(int fd, uint32_t fm_flags, struct rp_layout *ret, uint64_t *ret_odd);
void extents_clear(struct rp_layout *l);

/* May the caller have a file of owner's written back to learn where its
 * data goes (FIEMAP's sync flag): root itself for any file; otherwise
 * only the caller's own (euid) and, under sudo (euid 0), the invoking
 * user's (invoker: invoking_uid(), (uid_t)-1 for root itself).  Another
 * user's writeback is not forced. */
bool extents_sync_allowed(uid_t owner, uid_t euid, uid_t invoker);

/* extents_read()'s map of fd; *ret_unwritten (may be NULL): parts of the
 * file have no place on the device yet (delayed allocation: not written
 * back; they are left out of the map).  With sync, such a file is written
 * back first and asked again where extents_sync_allowed() lets the caller
 * (the file's owner, geteuid(), invoking_uid()). */
int extents_read_positions(int fd, bool sync, struct rp_layout *ret, bool *ret_unwritten);

/* The extent map of a file of a read set, opened with fs_open_recorded()
 * (only the very file recorded, never a FIFO, device or symlink there);
 * -ENOENT-like errors when it cannot be opened, extents_read()'s after. */
struct rs_file;
int extents_read_recorded(const struct rs_file *f, struct rp_layout *ret);

/* The extent maps of the regular files of rs (one per file, n_files of
 * them; those of other kinds, those not wanted (want[i] false; want NULL:
 * all are), and files no longer the ones recorded or without FIEMAP,
 * unknown), each read once: the table the planner sorts a disk's sweep by
 * and the report draws and costs.  EXTENTS_TABLE_SYNC in flags: files
 * not written back yet are, where the caller may (extents_read_positions()).
 * *ret_counts (may be NULL): of the wanted regular files, those whose map
 * is unknown, and those with parts that have no position yet.  -ENOMEM
 * only. */
#define EXTENTS_TABLE_SYNC (1u << 0)
struct extents_counts {
        uint64_t unknown;     /* no map: gone, changed, no FIEMAP */
        uint64_t unwritten;   /* parts not written back: no position yet */
};
struct readset;
int extents_table_read(const struct readset *rs, const bool *want, unsigned flags, struct rp_layout **ret,
                       struct extents_counts *ret_counts);
void extents_table_free(struct rp_layout *t, size_t n);

/* The extent of l holding offset, or NULL (a hole, or past the end); with
 * *ret_index the extent found or, for NULL, the first one after offset. */
const struct rp_extent *extent_at(const struct rp_layout *l, uint64_t offset, size_t *ret_index);
