/* SPDX-License-Identifier: MIT */
/* record/trace-file.c: a read set from a saved text trace (the fixture,
 * tests/fixtures/small.trace, and traces written here). */
#include "record/trace-file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/readset.h"
#include "util/util.h"
#include "tests.h"

static char fixtures[4096];

static const char *fixture(const char *name, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s", fixtures, name);
        return buf;
}

/* The fixture with its paths list, no walk: the files in first-access
 * order, times from the first event, the malformed line counted. */
static void test_fixture(void)
{
        _cleanup_readset_ struct readset *rs = NULL;
        struct trace_file_options o = { 0 };
        struct trace_file_result res;
        char trace[4200], list[4200];
        FILE *in = fopen(fixture("small.trace", trace, sizeof(trace)), "re");

        CHECK(in != NULL);
        if (!in)
                return;
        o.paths_list = fixture("small.paths", list, sizeof(list));
        CHECK_EQ(trace_file_build(in, &o, &rs, &res), 0);
        fclose(in);
        CHECK_EQ(res.failed, TRACE_FILE_DONE);
        CHECK_EQ(res.malformed, 1);
        if (!rs)
                return;
        CHECK_EQ(rs->n_files, 5);
        CHECK_EQ(rs->events, 9);
        CHECK_EQ(rs->page_size, 4096);
        CHECK_EQ(rs->duration_us, 800);         /* 1000.000900 - 1000.000100 */
        CHECK(rs->n_files == 5 && strcmp(rs->files[0].path, "/usr/lib/libfirst.so") == 0 &&
              strcmp(rs->files[2].path, "/usr/share/mapped.dat") == 0 && strcmp(rs->files[3].path, "/etc/config") == 0);
        CHECK(rs->n_files && rs->files[0].n_ranges && rs->files[0].ranges[0].time_us == 0);
        CHECK(rs->n_files > 2 && rs->files[2].n_ranges && rs->files[2].ranges[0].time_us == 200);
        CHECK(rs->command == NULL);
}

/* Times before the first event's (CPUs' buffers interleaved) count from
 * it: 0; the duration is the latest. */
static void test_times(void)
{
        static char text[] =
                "p-1 [000] ..... 50.000300: mm_filemap_get_pages: dev=254:1 ino=b ofs=0-4095\n"
                "p-1 [001] ..... 50.000100: mm_filemap_get_pages: dev=254:1 ino=c ofs=0-4095\n"
                "p-1 [000] ..... 50.000900: mm_filemap_get_pages: dev=254:1 ino=d ofs=0-4095\n"
                "p-1 [001] ..... 50.000500: mm_filemap_get_pages: dev=254:1 ino=e ofs=0-4095\n"
                "p-1 [001] ..... 50.000600: mm_filemap_get_pages: dev=254:1 ino=\n";
        _cleanup_readset_ struct readset *rs = NULL;
        struct trace_file_options o = { 0 };
        struct trace_file_result res;
        FILE *in = fmemopen(text, strlen(text), "r");

        CHECK(in != NULL);
        if (!in)
                return;
        CHECK_EQ(trace_file_build(in, &o, &rs, &res), 0);
        fclose(in);
        CHECK_EQ(res.malformed, 1);
        CHECK(rs && rs->duration_us == 600);
        CHECK(rs && rs->n_files == 4);
        for (size_t i = 0; rs && i < rs->n_files; i++)
                if (rs->files[i].ino == 0xc)
                        CHECK_EQ(rs->files[i].ranges[0].time_us, 0);
}

/* A list that is not one: its line; a list not there: its errno; a trace
 * that cannot be read. */
static void test_failures(void)
{
        static char bad[] = "254:1 11 /usr/lib/libfirst.so\nnot a line\n";
        static char text[] = "p-1 [000] ..... 50.000300: mm_filemap_get_pages: dev=254:1 ino=b ofs=0-4095\n";
        struct readset *rs = NULL;
        struct trace_file_options o = { 0 };
        struct trace_file_result res;
        char list[] = "/var/tmp/readset-trace.XXXXXX";
        int fd = mkstemp(list);
        FILE *in;

        CHECK(fd >= 0);
        CHECK(fd >= 0 && write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
        if (fd >= 0)
                close(fd);
        o.paths_list = list;
        in = fmemopen(text, strlen(text), "r");
        CHECK_EQ(trace_file_build(in, &o, &rs, &res), -EBADMSG);
        CHECK_EQ(res.failed, TRACE_FILE_LIST);
        CHECK_EQ(res.bad_line, 2);
        CHECK(rs == NULL);
        fclose(in);
        CHECK_EQ(unlink(list), 0);

        in = fmemopen(text, strlen(text), "r");
        CHECK_EQ(trace_file_build(in, &o, &rs, &res), -ENOENT);
        CHECK_EQ(res.failed, TRACE_FILE_LIST);
        fclose(in);

        /* a directory: opened, never read */
        in = fopen("/", "re");
        CHECK(in != NULL);
        if (in) {
                o.paths_list = NULL;
                CHECK(trace_file_build(in, &o, &rs, &res) < 0);
                CHECK_EQ(res.failed, TRACE_FILE_READ);
                CHECK(rs == NULL);
                fclose(in);
        }
}

/* build one text; its result's step, line and errno */
static int build_text(const char *text, size_t len, struct trace_file_result *res)
{
        struct readset *rs = NULL;
        struct trace_file_options o = { 0 };
        FILE *in = len ? fmemopen((void *)text, len, "r") : fopen("/dev/null", "re");
        int r;

        CHECK(in != NULL);
        if (!in)
                return -ENOMEM;
        r = trace_file_build(in, &o, &rs, res);
        fclose(in);
        if (r < 0)
                CHECK(rs == NULL);
        readset_free(rs);
        return r;
}

/* Input with no filemap event in it is no trace: empty, any other text
 * (its first line that is no trace's named), a trace of other events, or
 * only malformed event lines; a NUL byte makes a binary file, refused at
 * its line.  Lines that are no trace's around events do not refuse them. */
static void test_not_a_trace(void)
{
        static const char passwd[] = "# tracer: nop\n\nroot:x:0:0:root:/root:/bin/sh\nbin:x:1:1::/:/bin/false\n";
        static const char other[] = "# tracer: nop\nCPU:1 [LOST 3 EVENTS]\n"
                                    "  sh-7 [001] d..2. 9.000100: sched_switch: prev_comm=sh\n";
        static const char bad[] = "p-1 [000] ..... 50.000600: mm_filemap_get_pages: dev=254:1 ino=\n";
        static const char binary[] = "# tracer: nop\nRSET\0\1\2\n"
                                     "p-1 [000] ..... 50.000300: mm_filemap_get_pages: dev=254:1 ino=b ofs=0-4095\n";
        static const char mixed[] = "a note\n"
                                    "p-1 [000] ..... 50.000300: mm_filemap_get_pages: dev=254:1 ino=b ofs=0-4095\n";
        struct trace_file_result res;

        CHECK_EQ(build_text("", 0, &res), -ENODATA);
        CHECK_EQ(res.failed, TRACE_FILE_NO_EVENTS);
        CHECK_EQ(res.trace_line, 0);

        CHECK_EQ(build_text(passwd, strlen(passwd), &res), -ENODATA);
        CHECK_EQ(res.failed, TRACE_FILE_NO_EVENTS);
        CHECK_EQ(res.trace_line, 3);

        CHECK_EQ(build_text(other, strlen(other), &res), -ENODATA);
        CHECK_EQ(res.failed, TRACE_FILE_NO_EVENTS);
        CHECK_EQ(res.trace_line, 0);

        CHECK_EQ(build_text(bad, strlen(bad), &res), -ENODATA);
        CHECK_EQ(res.failed, TRACE_FILE_NO_EVENTS);
        CHECK_EQ(res.malformed, 1);

        CHECK_EQ(build_text(binary, sizeof(binary) - 1, &res), -EBADMSG);
        CHECK_EQ(res.failed, TRACE_FILE_BINARY);
        CHECK_EQ(res.trace_line, 2);

        CHECK_EQ(build_text(mixed, strlen(mixed), &res), 0);
        CHECK_EQ(res.failed, TRACE_FILE_DONE);
}

int main(void)
{
        const char *src = getenv("SRCDIR");

        snprintf(fixtures, sizeof(fixtures), "%s/tests/fixtures", src ? src : ".");
        if (access(fixtures, R_OK) < 0)
                TEST_SKIP("no tests/fixtures (SRCDIR)");
        test_fixture();
        test_times();
        test_failures();
        test_not_a_trace();
        TESTS_DONE();
}
