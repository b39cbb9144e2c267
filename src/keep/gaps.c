/* SPDX-License-Identifier: MIT */
#include "keep/gaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fs/open.h"
#include "replay/residency.h"
#include "util/util.h"
#include "util/banned.h"

/* no more than this many pages noted in all (1 TiB of files): past it,
 * nothing more is dropped */
#define GAPS_MAX_PAGES (1ULL << 28)

struct keep_gaps {
        unsigned char **before;   /* per file: mincore's vector, or NULL */
        size_t n_files;
};

struct span {
        uint64_t start, end;
};

static int cmp_span(const void *a, const void *b)
{
        const struct span *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start;
}

/* The file's ranges by offset (NULL where it has fewer than two: no gap). */
static struct span *spans_of(const struct rs_file *f)
{
        struct span *s;

        if (f->kind != RS_FILE_REGULAR || f->n_ranges < 2 || !(s = malloc(f->n_ranges * sizeof(*s))))
                return NULL;
        for (size_t j = 0; j < f->n_ranges; j++)
                s[j] = (struct span){ f->ranges[j].offset, f->ranges[j].offset + f->ranges[j].length };
        qsort_safe(s, f->n_ranges, sizeof(*s), cmp_span);
        return s;
}

/* mincore's vector of the file's first `pages` pages, or NULL. */
static unsigned char *residency_vector(int fd, uint64_t pages, size_t page)
{
        unsigned char *vec;
        void *map;

        if (!residency_mincore_truthful(fd) || !(vec = calloc(pages, 1)))
                return NULL;
        map = mmap(NULL, pages * page, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
                free(vec);
                return NULL;
        }
        if (mincore(map, pages * page, vec) < 0) {
                free(vec);
                vec = NULL;
        }
        munmap(map, pages * page);
        return vec;
}

static uint64_t file_pages(const struct rs_file *f, size_t page)
{
        return (f->size + page - 1) / page;
}

struct keep_gaps *keep_gaps_note(const struct readset *rs)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        struct keep_gaps *g = calloc(1, sizeof(*g));
        uint64_t total = 0;
        bool any = false;

        if (!g || !(g->before = calloc(rs->n_files ? rs->n_files : 1, sizeof(*g->before)))) {
                free(g);
                return NULL;
        }
        g->n_files = rs->n_files;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                _cleanup_free_ struct span *s = spans_of(f);
                enum fs_skip why;
                uint64_t pages = file_pages(f, page);
                int fd;

                if (!s || !pages || total + pages > GAPS_MAX_PAGES)
                        continue;
                fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);
                if (fd < 0)
                        continue;
                g->before[i] = residency_vector(fd, pages, page);
                close(fd);
                if (g->before[i]) {
                        total += pages;
                        any = true;
                }
        }
        if (!any) {
                keep_gaps_free(g);
                return NULL;
        }
        return g;
}

void keep_gaps_free(struct keep_gaps *g)
{
        if (!g)
                return;
        for (size_t i = 0; i < g->n_files; i++)
                free(g->before[i]);
        free(g->before);
        free(g);
}

uint64_t keep_gaps_drop(const struct keep_gaps *g, const struct readset *rs)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        uint64_t dropped = 0;

        if (!g)
                return 0;
        for (size_t i = 0; i < g->n_files && i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                _cleanup_free_ struct span *s = NULL;
                _cleanup_free_ unsigned char *now = NULL;
                uint64_t pages = file_pages(f, page);
                enum fs_skip why;
                int fd;

                if (!g->before[i] || !(s = spans_of(f)))
                        continue;
                /* the same file still (a file replaced meanwhile is not
                 * this one's to touch) */
                fd = fs_open_recorded(f, O_RDONLY | FS_OPEN_IDENTITY_ONLY, &why);
                if (fd < 0)
                        continue;
                now = residency_vector(fd, pages, page);
                for (size_t j = 1; now && j < f->n_ranges; j++) {
                        uint64_t a = (s[j - 1].end + page - 1) / page, b = MIN(s[j].start / page, pages);
                        /* the pages of the gap that are cached now and were not */
                        for (uint64_t p = a; p < b;) {
                                uint64_t q;
                                if (!(now[p] & 1) || (g->before[i][p] & 1)) {
                                        p++;
                                        continue;
                                }
                                for (q = p; q < b && (now[q] & 1) && !(g->before[i][q] & 1); q++)
                                        ;
                                if (posix_fadvise(fd, (off_t)(p * page), (off_t)((q - p) * page),
                                                  POSIX_FADV_DONTNEED) == 0)
                                        dropped += (q - p) * page;
                                p = q;
                        }
                }
                close(fd);
        }
        return dropped;
}
