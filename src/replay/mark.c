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
 * was about to ask next: PostgreSQL's load after keep's restore (bench/keep)
 * began 30% below its warm throughput and stayed 10% below after 40 s;
 * with the pages marked it began 22% below and was at 95% after 10 s.
 *
 * The mark is a read of one byte (preadv2(RWF_NOWAIT): never waits for the
 * device) of each page mincore(2) says is resident, so no page is read in
 * for it.  The kernel marks a folio once for consecutive reads inside it
 * (filemap_read()), so one byte per page marks each folio once, whatever
 * its size; two passes mark it twice.  Coldest rank first: the active list
 * gives back its oldest first, so the pages the most snapshots agreed on
 * are the last it gives back.  The cost is CPU only: two system calls per
 * resident page (0.46 s for 140 MiB, with the search of what is resident). */
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
        uint32_t file;
        uint64_t offset, length;
        uint64_t rank;            /* the snapshot's rank: 0 the pages the most snapshots agreed on */
        size_t vec;               /* where its pages' residency starts in the vector */
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

/* What of a piece (inside its file) is resident, one byte per page into v
 * (mincore's): false where it cannot be told (then nothing of it is
 * marked). */
static bool resident(int fd, const struct piece *p, unsigned char *v)
{
        size_t len = (size_t)p->length;
        void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)p->offset);
        bool ok;

        if (m == MAP_FAILED)
                return false;
        ok = mincore(m, len, v) == 0;
        munmap(m, len);
        return ok;
}

/* One pass: one byte of every resident page read; the bytes of the pages
 * found so, added to *marked. */
static void mark_pass(struct eng *e, const struct piece *p, size_t n, const unsigned char *v, uint64_t page,
                      uint64_t *marked)
{
        char c;
        struct iovec io = { &c, 1 };

        for (size_t i = 0; i < n; i++) {
                int fd = engine_fd(e, p[i].file);
                uint64_t pages = p[i].length / page;
                if (fd < 0)
                        continue;
                for (uint64_t k = 0; k < pages; k++)
                        if ((v[p[i].vec + k] & 1) &&
                            preadv2(fd, &io, 1, (off_t)(p[i].offset + k * page), RWF_NOWAIT) == 1)
                                *marked += page;
        }
}

void engine_mark_used(struct eng *e, const size_t *last_read, struct engine_stats *st)
{
        const struct readset *rs = e->rs;
        const struct plan *plan = e->plan;
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), pages = 0, first = 0;
        _cleanup_free_ struct piece *p = NULL;
        _cleanup_free_ uint32_t *files = NULL;
        _cleanup_free_ unsigned char *v = NULL;
        size_t n = 0, cap = 0, n_files = 0, cap_files = 0;

        /* the files whose last read is in this window: all of theirs is in */
        for (size_t i = e->from; i < e->to; i++) {
                uint32_t f = plan->reads[i].file;
                const struct rs_file *rf = &rs->files[f];
                int fd = engine_fd(e, f);
                struct stat s;
                if (last_read[f] != i || fd < 0 || fstat(fd, &s) < 0)
                        continue;
                if (grow_array(&files, &cap_files, n_files + 1, sizeof(*files)) < 0)
                        return;
                files[n_files++] = f;
                for (size_t j = 0; j < rf->n_ranges; j++) {
                        const struct rs_range *r = &rf->ranges[j];
                        uint64_t len = r->offset < (uint64_t)s.st_size ? MIN(r->length, (uint64_t)s.st_size - r->offset) : 0;
                        if (r->offset % page || !len)
                                continue;
                        if (grow_array(&p, &cap, n + 1, sizeof(*p)) < 0)
                                return;
                        len = (len + page - 1) / page * page;
                        p[n++] = (struct piece){ f, r->offset, len, r->time_us, (size_t)pages };
                        pages += len / page;
                }
        }
        if (!n || !(v = calloc((size_t)pages, 1)))
                return;
        for (size_t i = 0; i < n; i++)
                if (!resident(engine_fd(e, p[i].file), &p[i], v + p[i].vec))
                        p[i].length = 0;
        qsort_safe(p, n, sizeof(*p), cmp_piece);
        /* the descriptors read no more than asked, should a page go meanwhile */
        for (size_t i = 0; i < n_files; i++)
                (void)posix_fadvise(engine_fd(e, files[i]), 0, 0, POSIX_FADV_RANDOM);
        mark_pass(e, p, n, v, page, &first);
        mark_pass(e, p, n, v, page, &st->bytes_marked);
        for (size_t i = 0; i < n_files; i++)
                (void)posix_fadvise(engine_fd(e, files[i]), 0, 0, POSIX_FADV_NORMAL);
}
