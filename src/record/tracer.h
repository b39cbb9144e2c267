/* SPDX-License-Identifier: MIT */
/* Page-cache events from a private tracefs instance. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "record/builder.h"

struct tracer;

typedef int (*tracer_event_fn)(void *userdata, const struct rs_event *ev);

/* Create a private instance with the filemap events enabled (but tracing
 * off), per-CPU buffers of buffer_kb.  On failure *ret_what names what is
 * missing (an event, tracefs, ...). */
int tracer_open(struct tracer **ret, uint64_t buffer_kb, const char **ret_what);
/* Follow pid and every process it forks from now on. */
int tracer_follow(struct tracer *t, pid_t pid);
/* Without tracer_follow, every process is traced: leave out pid and every
 * process or thread it starts from now on (readset itself). */
int tracer_exclude(struct tracer *t, pid_t pid);
int tracer_start(struct tracer *t, uint64_t start_ns);
int tracer_stop(struct tracer *t);
/* Read what the kernel has buffered, without blocking, calling fn for every
 * page event.  Returns the number of events or -errno. */
int tracer_drain(struct tracer *t, tracer_event_fn fn, void *userdata);
/* Events the kernel dropped (ring-buffer overruns), summed over CPUs. */
uint64_t tracer_lost(struct tracer *t);
/* Lines that did not parse. */
uint64_t tracer_bad_lines(struct tracer *t);
/* The instance's directory (for tests and messages). */
const char *tracer_instance_path(struct tracer *t);
/* Disable everything and remove the instance.  Safe on NULL. */
void tracer_close(struct tracer *t);
/* Its descriptors (the instance's directory, its pipes), at most max into
 * fds: what a guardian holds.  How many. */
size_t tracer_own_fds(const struct tracer *t, int *fds, size_t max);
/* The instance directory's descriptor (-1: none). */
int tracer_dir_fd(const struct tracer *t);
/* Tracing off and the instance at path removed (dirfd, -1 or its
 * directory's, closed), with system calls alone: what a guardian forked
 * beside other threads may do (tracer_close() does it too). */
void tracer_remove(const char *path, int dirfd);
/* Free t and close its descriptors, leaving the instance to whoever else
 * holds it (see record's detached teardown).  Safe on NULL. */
void tracer_forget(struct tracer *t);

/* Remove instances left behind by readset processes that no longer exist
 * (killed with SIGKILL).  Returns how many were removed. */
int tracer_remove_stale(void);
/* The same where tracefs is mounted already (never mounting it): what every
 * verb does first as root, so that nothing a killed readset left outlives
 * the next readset of any verb. */
int tracer_remove_stale_if_mounted(void);
/* What the reaper does once its readset closed its pipe: wait (10 s at
 * most) until that process is gone or a zombie (its descriptors close
 * before it is one), then tracer_remove_stale().  System calls and stack
 * buffers alone: a reaper is forked beside other threads. */
int tracer_remove_stale_after(pid_t pid);

/* Find (mounting it if needed) the tracefs root.  Returns a static string. */
int tracer_tracefs_root(const char **ret);

/* ---- decoding binary ring-buffer pages (trace_pipe_raw) ---------------- */

/* Where the fields we need sit in one event's record, from its format file. */
struct tracer_evfmt {
        int id;
        int kind;          /* 0 get_pages, 1 map_pages, 2 fault, 3 add_to_page_cache */
        int off_ino, sz_ino;
        int off_dev, sz_dev;
        int off_index, sz_index;
        int off_last, sz_last;    /* get_pages, map_pages */
        int off_order, sz_order;  /* add_to_page_cache */
};

struct tracer_raw {
        struct tracer_evfmt fmt[4];   /* in the kind order above */
        int commit_off, commit_size, data_off;  /* from events/header_page */
        uint64_t start_us;            /* event times are made relative to this */
        uint64_t bad_lines;           /* records or pages that did not decode */
};

/* Learn the layouts from the text of events/header_page and of the four
 * events' format files (get_pages, map_pages, fault, add_to_page_cache). */
int tracer_raw_init(struct tracer_raw *rf, const char *header_page, const char *const formats[4]);
/* Decode one page read from trace_pipe_raw, calling fn for every page event.
 * Returns the number of events or a negative errno from fn. */
int tracer_parse_page(struct tracer_raw *rf, const uint8_t *page, size_t len, tracer_event_fn fn, void *userdata);

/* Parse one line of trace_pipe text.  Returns 1 and fills ev for a page
 * event, 0 for a line to ignore, -EBADMSG for a malformed event line.
 * Times are converted to microseconds since start_us; byte offsets to pages
 * of 1 << page_shift bytes (the traced kernel's page size). */
int tracer_parse_line(const char *line, uint64_t start_us, unsigned page_shift, struct rs_event *ev);

/* A field of a tracepoint's format file ("field:unsigned long i_ino;\t
 * offset:8;\tsize:8;", by the field's name): its offset and size, strictly
 * read; false when it is not there or not well formed. */
bool tracer_format_field(const char *fmt, const char *name, int *ret_off, int *ret_size);
