/* SPDX-License-Identifier: MIT */
/* Fuzz target: the recorder's decoders of what tracefs hands it, the text
 * of trace_pipe (record's fallback and `readset build`'s input) and the
 * binary pages of trace_pipe_raw.  The kernel writes these, but a build
 * reads text files anyone can write, and the formats differ between
 * kernels.  The first input byte chooses:
 *   0  lines of text, each parsed; events must describe a non-empty range;
 *   1  one binary page, against the formats of this kernel's events;
 *   2  NUL-separated header_page and four format texts, then a page. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/tracer.h"

#include "../tracer-formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_event(void *userdata, const struct rs_event *ev)
{
        (void)userdata;
        if ((ev->kind == RS_EV_ACCESS || ev->kind == RS_EV_FILL) && ev->end_page <= ev->first_page)
                __builtin_trap();
        return 0;
}

static void lines(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1), *line, *save = NULL;

        if (!text)
                return;
        memcpy(text, data, size);
        text[size] = 0;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct rs_event ev;
                for (unsigned shift = 12; shift <= 16; shift += 4)
                        if (tracer_parse_line(line, 1000, shift, &ev) == 1)
                                check_event(NULL, &ev);
        }
        free(text);
}

static void page(struct tracer_raw *rf, const uint8_t *data, size_t size)
{
        /* trace_pipe_raw hands out whole pages: the decoder gets a page's
         * worth of memory, of which the input fills the start */
        uint8_t *pg = calloc(1, size > 4096 ? size : 4096);

        if (!pg)
                return;
        memcpy(pg, data, size);
        if (tracer_parse_page(rf, pg, size, check_event, NULL) < 0)
                __builtin_trap();
        free(pg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const fmts[4] = { fmt_get_pages, fmt_map_pages, fmt_fault, fmt_add };
        struct tracer_raw rf;

        if (size < 1)
                return 0;
        switch (data[0] % 3) {
        case 0:
                lines(data + 1, size - 1);
                break;
        case 1:
                if (tracer_raw_init(&rf, header_page, fmts) != 0)
                        __builtin_trap();
                rf.start_us = 1000;
                page(&rf, data + 1, size - 1);
                break;
        default: {
                /* header_page\0get\0map\0fault\0add\0page bytes */
                char *copy = malloc(size);
                const char *part[5];
                size_t at = 1, k = 0;

                if (!copy)
                        return 0;
                memcpy(copy, data, size);
                while (k < 5 && at < size) {
                        char *nul = memchr(copy + at, 0, size - at);
                        if (!nul)
                                break;
                        part[k++] = copy + at;
                        at = (size_t)(nul - copy) + 1;
                }
                if (k == 5 && tracer_raw_init(&rf, part[0], part + 1) == 0) {
                        rf.start_us = 0;
                        page(&rf, data + at, size - at);
                }
                free(copy);
                break;
        }
        }
        return 0;
}
