/* SPDX-License-Identifier: MIT */
/* Parsing trace_pipe lines of the filemap events (formats of this kernel). */
#include <errno.h>

#include "record/tracer.h"
#include "tests.h"

int main(void)
{
        struct rs_event ev;

        CHECK_EQ(tracer_parse_line("           clang-1234    [001] ..... 100.000500: mm_filemap_get_pages: dev=254:1 ino=1a2b ofs=4096-12287", 100000000, 12, &ev), 1);
        CHECK_EQ(ev.time_us, 500);
        CHECK_EQ(ev.kdev, (254u << 20) | 1);
        CHECK_EQ(ev.ino, 0x1a2b);
        CHECK_EQ(ev.first_page, 1);
        CHECK_EQ(ev.end_page, 3);
        CHECK_EQ(ev.kind, RS_EV_ACCESS);

        /* comm with spaces and dashes */
        CHECK_EQ(tracer_parse_line(" my prog-x-77 [000] d..1. 5.000001: mm_filemap_fault: dev=8:3 ino=ff ofs=8192", 0, 12, &ev), 1);
        CHECK_EQ(ev.first_page, 2);
        CHECK_EQ(ev.end_page, 3);
        CHECK_EQ(ev.time_us, 5000001);

        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.000000: mm_filemap_map_pages: dev=8:3 ino=10 ofs=0-65535", 0, 12, &ev), 1);
        CHECK_EQ(ev.end_page, 16);

        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.000000: mm_filemap_add_to_page_cache: dev 0:5 ino fe00001 pfn=0x12345 ofs=1048576 order=2", 0, 12, &ev), 1);
        CHECK_EQ(ev.kind, RS_EV_FILL);
        CHECK_EQ(ev.kdev, 5);
        CHECK_EQ(ev.ino, 0xfe00001);
        CHECK_EQ(ev.first_page, 256);
        CHECK_EQ(ev.end_page, 260);

        /* a kernel with 64 KiB pages prints offsets in bytes too */
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.000000: mm_filemap_get_pages: dev=8:3 ino=10 ofs=65536-131071", 0, 16, &ev), 1);
        CHECK_EQ(ev.first_page, 1);
        CHECK_EQ(ev.end_page, 2);
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.000000: mm_filemap_fault: dev=8:3 ino=10 ofs=0", 0, 40, &ev), -EINVAL);

        /* other events and noise are ignored */
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.000000: sched_switch: prev=a", 0, 12, &ev), 0);
        CHECK_EQ(tracer_parse_line("", 0, 12, &ev), 0);
        CHECK_EQ(tracer_parse_line("CPU:1 [LOST 12 EVENTS]", 0, 12, &ev), 0);

        /* malformed event lines are errors, never crashes */
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.000000: mm_filemap_fault: dev=8:3 ino=zz ofs=1", 0, 12, &ev), -EBADMSG);
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... x: mm_filemap_fault: dev=8:3 ino=1 ofs=1", 0, 12, &ev), -EBADMSG);
        CHECK_EQ(tracer_parse_line(": mm_filemap_get_pages: dev=1:1 ino=1 ofs=9-1", 0, 12, &ev), -EBADMSG);
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.0: mm_filemap_get_pages: dev=1:1 ino=11111111111111111 ofs=0-1", 0, 12, &ev), -EBADMSG);
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.0: mm_filemap_add_to_page_cache: dev 1:1 ino 1 pfn=0x1 ofs=0 order=99", 0, 12, &ev), -EBADMSG);
        CHECK_EQ(tracer_parse_line("p-1 [000] ..... 1.0: mm_filemap_get_pages: dev=99999:1 ino=1 ofs=0-1", 0, 12, &ev), -EBADMSG);
        TESTS_DONE();
}
