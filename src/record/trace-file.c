/* SPDX-License-Identifier: MIT */
#include "record/trace-file.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether line (no NUL in it) can be one of a tracefs text trace: blank, a
 * comment ("# tracer: nop"), a lost-events note ("CPU:1 [LOST 3 EVENTS]"),
 * trace-cmd report's head ("cpus=4") or an event's ("TASK-PID [CPU] FLAGS
 * SEC.USEC: NAME: ..."), of any event. */
static bool trace_like(const char *line)
{
        const char *p = line + strspn(line, " \t");

        if (!*p || *p == '\n' || *p == '#' || strncmp(p, "CPU:", 4) == 0 || strncmp(p, "cpus=", 5) == 0)
                return true;
        for (const char *c = strchr(p, ':'); c; c = strchr(c + 1, ':')) {
                const char *t = c;
                size_t frac = 0, whole = 0;

                while (t > p && isdigit((unsigned char)t[-1]))
                        t--, frac++;
                if (!frac || t == p || *--t != '.')
                        continue;
                while (t > p && isdigit((unsigned char)t[-1]))
                        t--, whole++;
                if (whole && t > p && t[-1] == ' ')
                        return true;
        }
        return false;
}

/* Every event line of in into b, times relative to the first; the last
 * event's time in *last_us. */
static int add_events(FILE *in, struct rs_builder *b, uint64_t *last_us, struct trace_file_result *res)
{
        _cleanup_free_ char *line = NULL;
        uint64_t start_us = 0;
        bool have_start = false;
        unsigned n = 0, foreign = 0;
        size_t cap = 0;
        ssize_t len;
        int r;

        *last_us = 0;
        while ((len = getline(&line, &cap, in)) > 0) {
                struct rs_event ev;

                n++;
                if (strlen(line) != (size_t)len) {
                        res->trace_line = n;
                        return fail(res, TRACE_FILE_BINARY, -EBADMSG);
                }
                r = tracer_parse_line(line, 0, TRACE_FILE_PAGE_SHIFT, &ev);
                if (r < 0) {
                        res->malformed++;
                        continue;
                }
                if (r == 0) {
                        /* (what a trace with events holds beside them
                         * is no matter: looked at only before the first) */
                        if (!foreign && !have_start && !trace_like(line))
                                foreign = n;
                        continue;
                }
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
        if (!have_start) {
                res->trace_line = foreign;
                return fail(res, TRACE_FILE_NO_EVENTS, -ENODATA);
        }
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
