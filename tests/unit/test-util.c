/* SPDX-License-Identifier: MIT */
#include "util/util.h"
#include "tests.h"

int main(void)
{
        uint64_t v = 0;
        char buf[32];

        CHECK_EQ(parse_u64("12", &v), 0);
        CHECK_EQ(v, 12);
        CHECK(parse_u64("12abc", &v) < 0);
        CHECK(parse_u64("-1", &v) < 0);
        CHECK(parse_u64("", &v) < 0);
        CHECK(parse_u64(" 1", &v) < 0);
        CHECK(parse_u64("99999999999999999999999", &v) < 0);
        CHECK_EQ(parse_size("4K", &v), 0);
        CHECK_EQ(v, 4096);
        CHECK_EQ(parse_size("2G", &v), 0);
        CHECK_EQ(v, 2ULL << 30);
        CHECK(parse_size("20000000000T", &v) < 0);
        CHECK(parse_size("K", &v) < 0);
        CHECK(strcmp(format_bytes(512, buf), "512 B") == 0);
        CHECK(strcmp(format_bytes(1536, buf), "1.5 KiB") == 0);
        TESTS_DONE();
}
