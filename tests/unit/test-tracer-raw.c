/* SPDX-License-Identifier: MIT */
/* Decoding binary ring-buffer pages: hand-built pages in the layout that this
 * kernel's events/header_page and format files describe. */
#include <errno.h>
#include <string.h>

#include "record/tracer.h"
#include "tests.h"

#include "../tracer-formats.h"

static uint8_t page[4096];
static size_t pos;

static void put(uint64_t v, int size, size_t at)
{
        for (int i = 0; i < size; i++)
                page[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void hdr(uint32_t type_len, uint32_t delta)
{
        put(type_len | delta << 5, 4, pos);
        pos += 4;
}

static void record(uint16_t id, uint64_t ino, uint32_t dev, uint64_t index, uint64_t last, size_t len)
{
        memset(page + pos, 0, len);
        put(id, 2, pos);
        put(77, 4, pos + 4);
        if (id == 600) {
                put(0x1234, 8, pos + 8);
                put(ino, 8, pos + 16);
                put(index, 8, pos + 24);
                put(dev, 4, pos + 32);
                put(last, 1, pos + 36);   /* order */
        } else {
                put(ino, 8, pos + 8);
                put(dev, 4, pos + 16);
                put(index, 8, pos + 24);
                if (len >= 40)
                        put(last, 8, pos + 32);
        }
        pos += len;
}

struct seen {
        struct rs_event ev[16];
        int n;
};

static int collect(void *ud, const struct rs_event *ev)
{
        struct seen *s = ud;
        if (s->n < 16)
                s->ev[s->n++] = *ev;
        return 0;
}

int main(void)
{
        const char *fmts[4] = { fmt_get_pages, fmt_map_pages, fmt_fault, fmt_add };
        struct tracer_raw rf;
        struct seen s = { .n = 0 };
        uint32_t dev = (254u << 20) | 1;
        int n;

        CHECK_EQ(tracer_raw_init(&rf, header_page, fmts), 0);
        CHECK_EQ(rf.data_off, 16);
        CHECK_EQ(rf.fmt[3].off_order, 36);
        rf.start_us = 1000000;   /* the page starts at 1 s */

        pos = 16;
        hdr(10, 500);                          /* get_pages at +500 ns, 40-byte record */
        record(599, 0x11, dev, 4, 7, 40);
        hdr(30, 0); put(1, 4, pos); pos += 4;  /* time extend: +(1 << 27) ns */
        hdr(29, 5); put(12, 4, pos); pos += 4; pos += 8;   /* a discarded 12-byte event */
        hdr(0, 1000); put(44, 4, pos); pos += 4;           /* long form: array[0] = 4 + 40 */
        record(600, 0x12, dev, 256, 2, 40);                /* order 2: 4 pages */
        hdr(8, 0);                                          /* an event that is not ours */
        record(5, 0, 0, 0, 0, 32);
        hdr(8, 10);                                         /* fault, 32 bytes */
        record(597, 0x13, dev, 9, 0, 32);
        hdr(10, 0);                                         /* map_pages with last < index: bad */
        record(598, 0x14, dev, 9, 3, 40);
        put(1000000000ULL, 8, 0);
        put((pos - 16) | (1ULL << 31), 8, 8);               /* commit, with MISSED_EVENTS set */
        hdr(29, 0);                                         /* end-of-page padding */

        n = tracer_parse_page(&rf, page, sizeof(page), collect, &s);
        CHECK_EQ(n, 3);
        CHECK_EQ(s.n, 3);
        CHECK_EQ(rf.bad_lines, 1);
        CHECK_EQ(s.ev[0].kind, RS_EV_ACCESS);
        CHECK_EQ(s.ev[0].ino, 0x11);
        CHECK_EQ(s.ev[0].kdev, dev);
        CHECK_EQ(s.ev[0].first_page, 4);
        CHECK_EQ(s.ev[0].end_page, 8);
        CHECK_EQ(s.ev[0].time_us, 0);
        CHECK_EQ(s.ev[0].pid, 77);
        CHECK_EQ(s.ev[1].kind, RS_EV_FILL);
        CHECK_EQ(s.ev[1].first_page, 256);
        CHECK_EQ(s.ev[1].end_page, 260);
        /* 1 s + 500 + (1 << 27) + 5 + 1000 ns */
        CHECK_EQ(s.ev[1].time_us, (500 + (1ULL << 27) + 5 + 1000) / 1000);
        CHECK_EQ(s.ev[2].kind, RS_EV_ACCESS);
        CHECK_EQ(s.ev[2].first_page, 9);
        CHECK_EQ(s.ev[2].end_page, 10);

        /* A commit that claims more than the page holds stops at the page. */
        s.n = 0;
        put(1ULL << 20, 8, 8);
        n = tracer_parse_page(&rf, page, 200, collect, &s);
        CHECK(n >= 0 && n <= 3);
        /* Too short for a header: nothing. */
        CHECK_EQ(tracer_parse_page(&rf, page, 8, collect, &s), 0);
        /* Garbage pages never crash. */
        for (unsigned round = 0, seed = 1; round < 2000; round++) {
                for (size_t i = 0; i < sizeof(page); i++) {
                        seed = seed * 1103515245u + 12345u;
                        page[i] = (uint8_t)(seed >> 16);
                }
                /* half the pages get a plausible commit, the rest keep garbage */
                if (round % 2)
                        put(seed % 5000, 8, 8);
                s.n = 0;
                CHECK(tracer_parse_page(&rf, page, sizeof(page), collect, &s) >= 0);
        }
        /* Formats missing a field are refused. */
        {
                const char *bad[4] = { fmt_fault, fmt_map_pages, fmt_fault, fmt_add };
                CHECK_EQ(tracer_raw_init(&rf, header_page, bad), -EPROTO);
                CHECK_EQ(tracer_raw_init(&rf, "nothing", fmts), -EPROTO);
        }
        /* ... and numbers in them that are not whole numbers, or too big */
        {
#define FAULT(id, ino_off) "name: mm_filemap_fault\nID: " id "\nformat:\n" COMMON \
                "\tfield:unsigned long i_ino;\toffset:" ino_off ";\tsize:8;\tsigned:0;\n" \
                "\tfield:dev_t s_dev;\toffset:16;\tsize:4;\tsigned:0;\n" \
                "\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n"
                static const char *const damaged[] = { FAULT("597x", "8"), FAULT("+597", "8"),
                                                       FAULT("4294967893", "8"), FAULT("597", "8x"),
                                                       FAULT("597", " 8"), FAULT("597", "-8") };
                const char *f[4] = { fmt_get_pages, fmt_map_pages, FAULT("597", "8"), fmt_add };

                CHECK_EQ(tracer_raw_init(&rf, header_page, f), 0);
                CHECK_EQ(rf.fmt[2].id, 597);
                for (size_t i = 0; i < sizeof(damaged) / sizeof(damaged[0]); i++) {
                        f[2] = damaged[i];
                        CHECK_EQ(tracer_raw_init(&rf, header_page, f), -EPROTO);
                }
#undef FAULT
        }
        TESTS_DONE();
}
