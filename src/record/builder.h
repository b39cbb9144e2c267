/* SPDX-License-Identifier: MIT */
/* The builder: raw page events of a recording -> the files and ranges of a
 * read set (per file, first-access order; files by first access). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/readset.h"

enum rs_event_kind {
        RS_EV_ACCESS = 0, /* get_pages, fault, map_pages */
        RS_EV_FILL = 1,   /* add_to_page_cache */
};

struct rs_event {
        uint64_t time_us;   /* since recording start */
        uint32_t kdev;      /* kernel dev_t encoding (major << 20 | minor) */
        uint64_t ino;
        uint64_t first_page; /* inclusive */
        uint64_t end_page;   /* exclusive */
        uint32_t kind;       /* enum rs_event_kind */
        uint32_t pid;
};

struct rs_builder;

struct rs_builder *builder_new(void);
void builder_free(struct rs_builder *b);
static inline void builder_freep(struct rs_builder **p) { builder_free(*p); }
#define _cleanup_builder_ __attribute__((cleanup(builder_freep)))

int builder_add(struct rs_builder *b, const struct rs_event *ev);
uint64_t builder_n_events(const struct rs_builder *b);
/* Keep at most max_events events (each a new range of a file; 0: no
 * limit, the default), so that whatever is recorded the builder's memory
 * stays bounded (about 40 bytes an event); the events past it are counted
 * and dropped. */
void builder_set_limit(struct rs_builder *b, uint64_t max_events);
uint64_t builder_n_dropped(const struct rs_builder *b);

/* Keys the builder has seen, in first-seen order, so the caller can resolve
 * them to paths.  Returns the number of keys. */
size_t builder_n_keys(const struct rs_builder *b);
void builder_key(const struct rs_builder *b, size_t i, uint32_t *ret_kdev, uint64_t *ret_ino);

/* What the resolver learned about one key. */
struct rs_identity {
        const char *path;   /* NULL when unresolved */
        uint32_t kind;      /* enum rs_file_kind */
        uint32_t flags;     /* enum rs_file_flags */
        uint64_t dev;       /* userspace st_dev */
        uint64_t size;
        int64_t mtime_ns;
};

typedef int (*rs_resolve_fn)(void *userdata, uint32_t kdev, uint64_t ino, struct rs_identity *ret);

/* Turn the collected events into files and ranges of rs: per file, ranges in
 * first-access order with pages already seen removed; files ordered by their
 * first access.  The resolver is called once per key. */
int builder_finish(struct rs_builder *b, struct readset *rs, uint32_t page_size,
                   rs_resolve_fn resolve, void *userdata);
