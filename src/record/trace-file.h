/* SPDX-License-Identifier: MIT */
/* A read set from a saved text trace of the filemap events (tracefs's trace
 * or trace_pipe, as text): the fixture event source, the whole pipeline
 * below the tracer run from a file, without root.  Never prints. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "model/readset.h"

struct trace_file_options {
        const char *paths_list;         /* lines "MAJOR:MINOR INODE PATH" naming the files, or NULL */
        uint64_t max_walk;              /* directory entries the walk of the mounts may visit (0: none) */
};

/* What stopped trace_file_build(), in the order it is done. */
enum trace_file_step {
        TRACE_FILE_DONE,
        TRACE_FILE_MEMORY,      /* out of memory for the builder or the read set */
        TRACE_FILE_EVENT,       /* an event not added */
        TRACE_FILE_BINARY,      /* -EBADMSG: a NUL byte (at trace_line): not a text trace */
        TRACE_FILE_READ,        /* the trace not read (ferror) */
        TRACE_FILE_NO_EVENTS,   /* -ENODATA: not one filemap event in it (trace_line: the
                                   first line that is no trace's, 0 if every line is one) */
        TRACE_FILE_PATHS,       /* path resolution not set up */
        TRACE_FILE_LIST,        /* the paths list: -EBADMSG at bad_line, else not read */
        TRACE_FILE_RESOLVE,     /* paths not resolved */
        TRACE_FILE_BUILD,       /* the read set not built */
};

struct trace_file_result {
        enum trace_file_step failed;
        int error;                      /* -errno of the step that failed */
        unsigned bad_line;              /* TRACE_FILE_LIST, -EBADMSG: the line not understood */
        unsigned trace_line;            /* TRACE_FILE_BINARY, TRACE_FILE_NO_EVENTS: the trace's line */
        uint64_t malformed;             /* event lines not understood: skipped */
};

/* The read set of the trace read from in: 4 KiB pages (as on x86-64), times
 * relative to its first event, its duration the last event's; the command
 * left for the caller to name.  A trace without one filemap event (an empty
 * input, any other text) or with a NUL byte (a binary file) is refused.
 * 0, or -errno with res->failed saying where. */
int trace_file_build(FILE *in, const struct trace_file_options *o, struct readset **ret, struct trace_file_result *res);
