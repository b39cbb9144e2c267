/* SPDX-License-Identifier: MIT */
#include "util/util.h"
#include "tests.h"

/* The user who ran readset: sudo's SUDO_UID only when the real user is
 * root, never root itself, never what does not parse. */
static void test_invoking_uid(void)
{
        const char *saved = getenv("SUDO_UID");
        char *keep = saved ? strdup(saved) : NULL;

        setenv("SUDO_UID", "12345", 1);
        CHECK_EQ(invoking_uid(), getuid() == 0 ? 12345 : getuid());
        if (getuid() == 0) {
                setenv("SUDO_UID", "0", 1);
                CHECK_EQ(invoking_uid(), (uid_t)-1);
                setenv("SUDO_UID", "-5", 1);
                CHECK_EQ(invoking_uid(), (uid_t)-1);
                setenv("SUDO_UID", "4294967295", 1);
                CHECK_EQ(invoking_uid(), (uid_t)-1);
                unsetenv("SUDO_UID");
                CHECK_EQ(invoking_uid(), (uid_t)-1);
        }
        if (keep)
                setenv("SUDO_UID", keep, 1);
        else
                unsetenv("SUDO_UID");
        free(keep);
}

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
        test_invoking_uid();
        TESTS_DONE();
}
