/* SPDX-License-Identifier: MIT */
/* A snapshot's pages, once read back, marked as used the way a service's
 * hot pages were: twice, so that the kernel puts them on its active list.
 *
 * Read ahead, a page lands on the inactive list, unreferenced; a page read
 * through a descriptor is kept only once it was used twice there (one use
 * sets PG_referenced, the second activates it: folio_mark_accessed()), and
 * reclaim takes the inactive list in the order its pages came.  So a
 * restored working set in a cgroup that it fills was taken back in device
 * order as the service's first misses needed room, whatever the service
 * was about to ask next (docs/DECISIONS.md, Snapshots, has the figures).
 * With the multi-generational LRU the marks count as uses all the same,
 * but there is no active list to put them on.
 *
 * The mark is a read of one byte (preadv2(RWF_NOWAIT): never waits for the
 * device) of each page mincore(2) says is resident.  A page that went
 * between the two is read in again, one page (the descriptor in
 * POSIX_FADV_RANDOM), and a resident folio that carries the kernel's
 * readahead mark may start its readahead: nothing else is read.  A file
 * whose residency this caller is not told (mincore says "all cached" to
 * who neither owns nor may write it) is not marked: every page would be
 * read.  The kernel marks a folio once for consecutive reads inside it
 * (filemap_read(), by the descriptor's last position), so one byte per
 * page marks each folio once, whatever its size; the second pass reads
 * through a second descriptor of the file, whose last position is not in
 * the folio the first pass ended in.  Coldest rank first: the active list
 * gives back its oldest first, so the pages the most snapshots agreed on
 * are the last it gives back (within a window of open files: the files of
 * each window are marked once its reads are done).  The cost is CPU only:
 * two system calls per resident page and a mincore(2) per range: 0.1 s for
 * 140 MiB in 15 500 ranges of a 1 GiB file, all cached. */
#include "replay/steps.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

struct piece {
        uint32_t file;            /* index into the marked files */
        uint64_t offset, length;
        uint64_t rank;            /* the snapshot's rank: 0 the pages the most snapshots agreed on */
        size_t vec;               /* where its pages' residency starts in the vector */
};

/* A file whose pieces are marked: they are [from, to) before the sort. */
struct marked_file {
        int fd[2];                /* the engine's; a second one for the second pass (or the same) */
        uint64_t size;
        size_t from, to;
};

static int cmp_piece(const void *a, const void *b)
{
        const struct piece *x = a, *y = b;

        if (x->rank != y->rank)
                return x->rank > y->rank ? -1 : 1;
        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* What of a file's pieces is resident, one byte per page into v
 * (mincore's), asked through one mapping of the whole file: a piece whose
 * answer cannot be had is left out (its length 0). */
static void resident(const struct marked_file *f, struct piece *p, unsigned char *v)
{
        void *m = f->size ? mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, f->fd[0], 0) : MAP_FAILED;

        for (size_t k = f->from; k < f->to; k++)
                if (m == MAP_FAILED || mincore((char *)m + p[k].offset, (size_t)p[k].length, v + p[k].vec) < 0)
                        p[k].length = 0;
        if (m != MAP_FAILED)
                munmap(m, (size_t)f->size);
}

/* One pass, through each file's descriptor fd[which]: one byte of every
 * resident page read; the bytes of the pages found so, added to *marked. */
static void mark_pass(const struct marked_file *files, int which, const struct piece *p, size_t n,
                      const unsigned char *v, uint64_t page, uint64_t *marked)
{
        char c;
        struct iovec io = { &c, 1 };

        for (size_t i = 0; i < n; i++)
                for (uint64_t k = 0; k < p[i].length / page; k++)
                        if ((v[p[i].vec + k] & 1) &&
                            preadv2(files[p[i].file].fd[which], &io, 1, (off_t)(p[i].offset + k * page),
                                    RWF_NOWAIT) == 1)
                                *marked += page;
}

static void random_access(const struct marked_file *files, size_t n, int advice)
{
        for (size_t i = 0; i < n; i++) {
                (void)posix_fadvise(files[i].fd[0], 0, 0, advice);
                if (files[i].fd[1] != files[i].fd[0])
                        (void)posix_fadvise(files[i].fd[1], 0, 0, advice);
        }
}

static void close_second(struct marked_file *files, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (files[i].fd[1] != files[i].fd[0])
                        close(files[i].fd[1]);
}

int engine_mark_used(struct eng *e, const size_t *last_read, struct engine_stats *st)
{
        const struct readset *rs = e->rs;
        const struct plan *plan = e->plan;
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), pages = 0, first = 0;
        _cleanup_free_ struct piece *p = NULL;
        _cleanup_free_ struct marked_file *files = NULL;
        _cleanup_free_ unsigned char *v = NULL;
        size_t n = 0, cap = 0, n_files = 0, cap_files = 0;
        int r = 0;

        /* the files whose last read is in this window: all of theirs is in */
        for (size_t i = e->from; i < e->to && r == 0; i++) {
                uint32_t f = plan->reads[i].file;
                const struct rs_file *rf = &rs->files[f];
                int fd = engine_fd(e, f);
                uint64_t size;
                struct stat s;

                if (last_read[f] != i || fd < 0 || e->by_reading[f] || fstat(fd, &s) < 0)
                        continue;
                if (grow_array(&files, &cap_files, n_files + 1, sizeof(*files)) < 0) {
                        r = -ENOMEM;
                        break;
                }
                size = (uint64_t)s.st_size;
                files[n_files] = (struct marked_file){ { fd, fd }, size, n, n };
                for (size_t j = 0; j < rf->n_ranges; j++) {
                        const struct rs_range *rr = &rf->ranges[j];
                        uint64_t len = rr->offset < size ? MIN(rr->length, size - rr->offset) : 0;
                        if (rr->offset % page || !len)
                                continue;
                        if (grow_array(&p, &cap, n + 1, sizeof(*p)) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        len = (len + page - 1) / page * page;
                        p[n++] = (struct piece){ (uint32_t)n_files, rr->offset, len, rr->time_us, (size_t)pages };
                        pages += len / page;
                }
                files[n_files++].to = n;
        }
        if (r < 0 || !n)
                return r;
        v = calloc((size_t)pages, 1);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n_files; i++)
                resident(&files[i], p, v);
        qsort_safe(p, n, sizeof(*p), cmp_piece);
        /* a second descriptor of each file, as the engine opened it */
        for (size_t i = 0; i < n_files; i++) {
                int fd = fd_reopen_noatime(files[i].fd[0], O_RDONLY | O_CLOEXEC);
                files[i].fd[1] = fd >= 0 ? fd : files[i].fd[0];
        }
        /* the descriptors read no more than asked, should a page go meanwhile */
        random_access(files, n_files, POSIX_FADV_RANDOM);
        mark_pass(files, 0, p, n, v, page, &first);
        mark_pass(files, 1, p, n, v, page, &st->bytes_marked);
        random_access(files, n_files, POSIX_FADV_NORMAL);
        close_second(files, n_files);
        return 0;
}
