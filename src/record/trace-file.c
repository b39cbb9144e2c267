/* SPDX-License-Identifier: MIT */
#include "record/trace-file.h"

#include <errno.h>
#include <stdlib.h>

#include "record/builder.h"
#include "record/paths.h"
#include "record/tracer.h"
#include "util/util.h"
#include "util/banned.h"

#define TRACE_FILE_PAGE_SHIFT 12        /* 4 KiB pages, as on x86-64 */

/* r (< 0) as the failure of step. */
static int fail(struct trace_file_result *res, enum trace_file_step step, int r)
{
        res->failed = step;
        res->error = r;
        return r;
}

/* Every event line of in into b, times relative to the first; the last
 * event's time in *last_us. */
static int add_events(FILE *in, struct rs_builder *b, uint64_t *last_us, struct trace_file_result *res)
{
        _cleanup_free_ char *line = NULL;
        uint64_t start_us = 0;
        bool have_start = false;
        size_t cap = 0;
        int r;

        *last_us = 0;
        while (getline(&line, &cap, in) > 0) {
                struct rs_event ev;

                r = tracer_parse_line(line, 0, TRACE_FILE_PAGE_SHIFT, &ev);
                if (r < 0) {
                        res->malformed++;
                        continue;
                }
                if (r == 0)
                        continue;
                if (!have_start) {
                        start_us = ev.time_us;
                        have_start = true;
                }
                ev.time_us = ev.time_us >= start_us ? ev.time_us - start_us : 0;
                *last_us = MAX(*last_us, ev.time_us);
                r = builder_add(b, &ev);
                if (r < 0)
                        return fail(res, TRACE_FILE_EVENT, r);
        }
        if (ferror(in))
                return fail(res, TRACE_FILE_READ, -EIO);
        return 0;
}

/* The events' files named: the list's, then the walk's. */
static int resolve(const struct trace_file_options *o, struct rs_builder *b, struct readset *rs,
                   struct trace_file_result *res)
{
        struct paths *paths = NULL;
        int r;

        r = paths_open(&paths, false);
        if (r < 0)
                return fail(res, TRACE_FILE_PATHS, r);
        if (o->paths_list && (r = paths_learn_list(paths, o->paths_list, &res->bad_line)) < 0)
                fail(res, TRACE_FILE_LIST, r);
        else if ((r = paths_prepare(paths, b, o->max_walk)) < 0)
                fail(res, TRACE_FILE_RESOLVE, r);
        else if ((r = builder_finish(b, rs, 1u << TRACE_FILE_PAGE_SHIFT, paths_resolve, paths)) < 0)
                fail(res, TRACE_FILE_BUILD, r);
        paths_close(paths);
        return r;
}

int trace_file_build(FILE *in, const struct trace_file_options *o, struct readset **ret, struct trace_file_result *res)
{
        _cleanup_builder_ struct rs_builder *b = builder_new();
        _cleanup_readset_ struct readset *rs = readset_new();
        uint64_t last_us;
        int r;

        *res = (struct trace_file_result){ 0 };
        if (!b || !rs)
                return fail(res, TRACE_FILE_MEMORY, -ENOMEM);
        r = add_events(in, b, &last_us, res);
        if (r >= 0)
                r = resolve(o, b, rs, res);
        if (r < 0)
                return r;
        rs->duration_us = last_us;
        *ret = TAKE_PTR(rs);
        return 0;
}
