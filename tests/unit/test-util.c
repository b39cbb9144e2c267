/* SPDX-License-Identifier: MIT */
#include <limits.h>
#include <sys/sysmacros.h>

#include "util/util.h"
#include "tests.h"

/* Digits only, at least one, up to UINT64_MAX; the end is the caller's. */
static void test_parse_u64_prefix(void)
{
        const char *end = NULL;
        const char *s = "123;x";
        uint64_t v = 7;

        CHECK_EQ(parse_u64_prefix(s, &v, &end), 0);
        CHECK_EQ(v, 123);
        CHECK(end == s + 3);
        s = "18446744073709551615 kB";
        CHECK_EQ(parse_u64_prefix(s, &v, &end), 0);
        CHECK(v == UINT64_MAX && end == s + 20);
        CHECK_EQ(parse_u64_prefix("007", &v, &end), 0);
        CHECK_EQ(v, 7);
        /* nothing stored on an error */
        v = 5, end = NULL;
        CHECK_EQ(parse_u64_prefix("18446744073709551616", &v, &end), -ERANGE);
        CHECK_EQ(parse_u64_prefix("99999999999999999990;", &v, &end), -ERANGE);
        CHECK_EQ(parse_u64_prefix("", &v, &end), -EINVAL);
        CHECK_EQ(parse_u64_prefix("-1", &v, &end), -EINVAL);
        CHECK_EQ(parse_u64_prefix("+1", &v, &end), -EINVAL);
        CHECK_EQ(parse_u64_prefix(" 1", &v, &end), -EINVAL);
        CHECK_EQ(parse_u64_prefix("\t1", &v, &end), -EINVAL);
        CHECK_EQ(parse_u64_prefix(";1", &v, &end), -EINVAL);
        CHECK(v == 5 && end == NULL);
        /* the whole string: nothing before or after the digits */
        CHECK_EQ(parse_u64("18446744073709551615", &v), 0);
        CHECK(v == UINT64_MAX);
        CHECK_EQ(parse_u64("18446744073709551616", &v), -ERANGE);
        CHECK_EQ(parse_u64("\n1", &v), -EINVAL);
        CHECK_EQ(parse_u64("1\n", &v), -EINVAL);
        CHECK_EQ(parse_u64("0x10", &v), -EINVAL);
}

/* A '-' and digits, INT_MIN..INT_MAX, the whole string. */
static void test_parse_int(void)
{
        int v = 0;

        CHECK_EQ(parse_int("-1", &v), 0);
        CHECK_EQ(v, -1);
        CHECK_EQ(parse_int("1000", &v), 0);
        CHECK_EQ(v, 1000);
        CHECK_EQ(parse_int("-0", &v), 0);
        CHECK_EQ(v, 0);
        CHECK_EQ(parse_int("2147483647", &v), 0);
        CHECK_EQ(v, INT_MAX);
        CHECK_EQ(parse_int("-2147483648", &v), 0);
        CHECK_EQ(v, INT_MIN);
        v = 9;
        CHECK_EQ(parse_int("2147483648", &v), -ERANGE);
        CHECK_EQ(parse_int("-2147483649", &v), -ERANGE);
        CHECK_EQ(parse_int("-99999999999999999999", &v), -ERANGE);
        CHECK_EQ(parse_int("", &v), -EINVAL);
        CHECK_EQ(parse_int("-", &v), -EINVAL);
        CHECK_EQ(parse_int("--1", &v), -EINVAL);
        CHECK_EQ(parse_int("+1", &v), -EINVAL);
        CHECK_EQ(parse_int(" 1", &v), -EINVAL);
        CHECK_EQ(parse_int("- 1", &v), -EINVAL);
        CHECK_EQ(parse_int("1x", &v), -EINVAL);
        CHECK_EQ(parse_int("1 ", &v), -EINVAL);
        CHECK_EQ(v, 9);
}

/* "MAJOR:MINOR", each below 2^32, nothing between. */
static void test_parse_dev(void)
{
        const char *end = NULL, *s = "259:3 12 /x";
        dev_t d = 0;

        CHECK_EQ(parse_dev("8:1", &d), 0);
        CHECK(d == makedev(8, 1));
        CHECK_EQ(parse_dev("4294967295:4294967295", &d), 0);
        CHECK(major(d) == UINT32_MAX && minor(d) == UINT32_MAX);
        CHECK_EQ(parse_dev_prefix(s, &d, &end), 0);
        CHECK(d == makedev(259, 3) && end == s + 5);
        d = makedev(1, 1), end = NULL;
        CHECK_EQ(parse_dev("4294967296:0", &d), -ERANGE);
        CHECK_EQ(parse_dev("0:4294967296", &d), -ERANGE);
        CHECK_EQ(parse_dev("", &d), -EINVAL);
        CHECK_EQ(parse_dev("8", &d), -EINVAL);
        CHECK_EQ(parse_dev("8:", &d), -EINVAL);
        CHECK_EQ(parse_dev(":1", &d), -EINVAL);
        CHECK_EQ(parse_dev("8.1", &d), -EINVAL);
        CHECK_EQ(parse_dev("8 :1", &d), -EINVAL);
        CHECK_EQ(parse_dev("8: 1", &d), -EINVAL);
        CHECK_EQ(parse_dev("-8:1", &d), -EINVAL);
        CHECK_EQ(parse_dev("8:-1", &d), -EINVAL);
        CHECK_EQ(parse_dev("8:+1", &d), -EINVAL);
        CHECK_EQ(parse_dev("8:1x", &d), -EINVAL);
        CHECK_EQ(parse_dev("8:1:2", &d), -EINVAL);
        CHECK_EQ(parse_dev("8:1\n", &d), -EINVAL);
        CHECK_EQ(parse_dev_prefix("8:", &d, &end), -EINVAL);
        CHECK(d == makedev(1, 1) && end == NULL);
}

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

/* a line of text output fits its width: the middle of a long path goes */
static void test_printable_elided(void)
{
        char buf[256];

        CHECK(strcmp(printable_elided("/usr/lib/libc.so.6", 18, buf, sizeof(buf)), "/usr/lib/libc.so.6") == 0);
        CHECK(strcmp(printable_elided("/usr/lib/x86_64/libc.so.6", 18, buf, sizeof(buf)), "/usr/li...ibc.so.6") == 0);
        CHECK_EQ(strlen(buf), 18);
        /* a control character is made printable first, then counted */
        CHECK(strcmp(printable_elided("/a\nb/c", 40, buf, sizeof(buf)), "/a\\x0ab/c") == 0);
        CHECK(strcmp(printable_elided("/a\tbcdefghij/klm", 12, buf, sizeof(buf)), "/a\\x...j/klm") == 0);
        /* UTF-8: a character is one column, never cut in two */
        CHECK(strcmp(printable_elided("/\xc3\xa9t\xc3\xa9/\xc3\xa9t\xc3\xa9/\xc3\xa9t\xc3\xa9", 9, buf, sizeof(buf)),
                     "/\xc3\xa9t...\xc3\xa9t\xc3\xa9") == 0);
        /* too narrow to say anything of it: left whole */
        CHECK(strcmp(printable_elided("/abcdef", 4, buf, sizeof(buf)), "/abcdef") == 0);
}

/* the start given up instead, the end kept whole in a buffer too small
 * for all of the path (a character never cut in two) */
static void test_printable_tail(void)
{
        char small[24], path[200];

        memset(path, 'a', sizeof(path));
        memcpy(path + sizeof(path) - 12, "/\xc3\xa9tc/config", 12);
        path[sizeof(path) - 1] = 0;
        CHECK(strcmp(printable_tail(path, 12, small, sizeof(small)), "...\xc3\xa9tc/confi") == 0);
        CHECK(strcmp(printable_elided(path, 12, small, sizeof(small)), "aaaa...confi") == 0);
        CHECK(strcmp(printable_tail("/short", 20, small, sizeof(small)), "/short") == 0);
}

/* text broken into lines between words, never inside one */
static void test_text_line_break(void)
{
        const char *next;

        CHECK_EQ(text_line_break("aaa bbb ccc", 80, &next), 11);
        CHECK(*next == 0);
        CHECK_EQ(text_line_break("aaa bbb ccc", 7, &next), 7);
        CHECK(strcmp(next, "ccc") == 0);
        CHECK_EQ(text_line_break("aaa bbb ccc", 6, &next), 3);
        CHECK(strcmp(next, "bbb ccc") == 0);
        /* a word wider than a line: a line of its own */
        CHECK_EQ(text_line_break("aaaaaaaaaa bb", 5, &next), 10);
        CHECK(strcmp(next, "bb") == 0);
        /* the indentation a line begins with is no place to break */
        CHECK_EQ(text_line_break("  skipped    1 x", 10, &next), 9);
        CHECK(strcmp(next, "1 x") == 0);
        CHECK_EQ(text_line_break("ab  ", 10, &next), 2);
        /* a UTF-8 character is one column */
        CHECK_EQ(text_line_break("\xc3\xa9\xc3\xa9 \xc3\xa9\xc3\xa9", 2, &next), 4);
        CHECK(strcmp(next, "\xc3\xa9\xc3\xa9") == 0);
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
        test_parse_u64_prefix();
        test_parse_int();
        test_parse_dev();
        test_invoking_uid();
        test_printable_elided();
        test_printable_tail();
        test_text_line_break();
        TESTS_DONE();
}
