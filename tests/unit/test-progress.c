/* SPDX-License-Identifier: MIT */
/* The progress line (cmd/progress.c): its arithmetic and width with an
 * injected clock, its redraws, and nothing at all when standard error is
 * not a terminal or quiet was asked. */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/progress.h"
#include "tests.h"
#include "util/banned.h"

#define GIB (1ULL << 30)

static size_t fmt(char *buf, unsigned width, const char *step, enum progress_unit unit, uint64_t done,
                  uint64_t total, uint64_t elapsed_us, uint64_t step_done)
{
        struct progress_report r = { step, unit, done, total };
        return progress_format(buf, 256, width, "replay", &r, elapsed_us, step_done);
}

static void test_format(void)
{
        char b[256];

        /* 1 GiB in 10 s: 102.4 MiB/s, 3 GiB more take 30 s */
        fmt(b, 200, NULL, PROGRESS_BYTES, GIB, 4 * GIB, 10000000, 0);
        CHECK(strcmp(b, "replay: 1.0 GiB of 4.0 GiB (25%), 102.4 MiB/s, 30 s left") == 0);
        /* the rate is the step's: what was done before it does not count */
        fmt(b, 200, "moving", PROGRESS_FILES, 300, 1000, 2000000, 100);
        CHECK(strcmp(b, "replay: moving, 300 of 1000 files (30%), 100 files/s, 7 s left") == 0);
        /* before a second has passed: no rate, no guess */
        fmt(b, 200, NULL, PROGRESS_BYTES, GIB, 4 * GIB, 999999, 0);
        CHECK(strcmp(b, "replay: 1.0 GiB of 4.0 GiB (25%)") == 0);
        /* time: what is left of the plan, rounded up, tenths under 10 s;
         * minutes, hours */
        fmt(b, 200, "random reads", PROGRESS_US, 4000000, 12500000, 4000000, 0);
        CHECK(strcmp(b, "replay: random reads, 4.0 s of 12 s (32%), 8.5 s left") == 0);
        fmt(b, 200, NULL, PROGRESS_US, 420000, 2130000, 420000, 0);
        CHECK(strcmp(b, "replay: 0.4 s of 2.1 s (19%), 1.8 s left") == 0);
        fmt(b, 200, NULL, PROGRESS_BYTES, 0, 125ULL << 20, 1000000, 0);
        CHECK(strcmp(b, "replay: 0 B of 125.0 MiB (0%)") == 0);
        fmt(b, 200, NULL, PROGRESS_BYTES, 1 << 20, 126ULL << 20, 1000000, 0);
        CHECK(strcmp(b, "replay: 1.0 MiB of 126.0 MiB (0%), 1.0 MiB/s, 2:05 left") == 0);
        fmt(b, 200, NULL, PROGRESS_FILES, 1, 3726, 1000000, 0);
        CHECK(strcmp(b, "replay: 1 of 3726 files (0%), 1 files/s, 1:02:05 left") == 0);
        /* files beside bytes */
        {
                struct progress_report r = { NULL, PROGRESS_BYTES, GIB, 4 * GIB, 12, 340 };
                progress_format(b, sizeof(b), 200, "layout", &r, 10000000, 0);
                CHECK(strcmp(b, "layout: 12/340 files, 1.0 GiB of 4.0 GiB (25%), 102.4 MiB/s, 30 s left") == 0);
        }
        /* unknown total: how far, no percentage; past the total: 100% */
        fmt(b, 200, "looking through the tree", PROGRESS_FILES, 42, 0, 0, 0);
        CHECK(strcmp(b, "replay: looking through the tree, 42 files") == 0);
        fmt(b, 200, NULL, PROGRESS_US, 13000000, 12000000, 13000000, 0);
        CHECK(strcmp(b, "replay: 12 s of 12 s (100%), 0.0 s left") == 0);
}

static void test_width(void)
{
        char b[256];

        /* never to the last column: a terminal wraps there */
        for (unsigned w = 1; w < 80; w++) {
                size_t n = fmt(b, w, "a long step name", PROGRESS_BYTES, GIB, 4 * GIB, 10000000, 0);
                CHECK(n == strlen(b));
                CHECK(n <= w - 1);
        }
        CHECK_EQ(fmt(b, 20, NULL, PROGRESS_BYTES, GIB, 4 * GIB, 10000000, 0), 19);
        CHECK(strcmp(b, "replay: 1.0 GiB of ") == 0);
        /* not inside a character */
        {
                struct progress_report r = { NULL, PROGRESS_BYTES, 0, 0 };
                progress_format(b, sizeof(b), 9, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", &r, 0, 0);
                CHECK(strcmp(b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9") == 0);
                progress_format(b, sizeof(b), 8, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", &r, 0, 0);
                CHECK(strcmp(b, "\xc3\xa9\xc3\xa9\xc3\xa9") == 0);
        }
        /* narrower: the rate left out first, then the step */
        fmt(b, 200, "random reads at depths 4 to 64", PROGRESS_BYTES, GIB, 4 * GIB, 10000000, 0);
        CHECK(strcmp(b, "replay: random reads at depths 4 to 64, 1.0 GiB of 4.0 GiB (25%), 102.4 MiB/s, 30 s left") == 0);
        fmt(b, 80, "random reads at depths 4 to 64", PROGRESS_BYTES, GIB, 4 * GIB, 10000000, 0);
        CHECK(strcmp(b, "replay: random reads at depths 4 to 64, 1.0 GiB of 4.0 GiB (25%), 30 s left") == 0);
        fmt(b, 60, "random reads at depths 4 to 64", PROGRESS_BYTES, GIB, 4 * GIB, 10000000, 0);
        CHECK(strcmp(b, "replay: 1.0 GiB of 4.0 GiB (25%), 30 s left") == 0);
}

static uint64_t fake_us;
static uint64_t fake_clock(void *userdata)
{
        (void)userdata;
        return fake_us;
}

static void test_redraw(void)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct progress p;
        struct progress_report r = { NULL, PROGRESS_BYTES, 0, 100 << 20 };

        if (!f) {
                CHECK(f);
                return;
        }
        fake_us = 5000000;
        progress_start_on(&p, "replay", f, 80, fake_clock, NULL);
        progress_update(&p, &r);                /* the first: at once */
        fake_us += PROGRESS_REDRAW_US - 1;
        r.done = 1 << 20;
        progress_update(&p, &r);                /* too soon */
        fake_us += 1;
        r.done = 2 << 20;
        progress_update(&p, &r);
        r.step = "checking";
        progress_update(&p, &r);                /* a new step: at once */
        progress_done(&p);
        progress_done(&p);
        fclose(f);
        CHECK(text && strcmp(text, "\rreplay: 0 B of 100.0 MiB (0%)"
                                   "\rreplay: 2.0 MiB of 100.0 MiB (2%)"
                                   "\rreplay: checking, 2.0 MiB of 100.0 MiB (2%)"
                                   "\r" "                                           " "\r") == 0);
        free(text);
        /* a shorter line blanks the longer one's tail */
        text = NULL;
        f = open_memstream(&text, &len);
        if (!f)
                return;
        progress_start_on(&p, "x", f, 80, fake_clock, NULL);
        r = (struct progress_report){ "abcdef", PROGRESS_FILES, 5, 0 };
        progress_update(&p, &r);
        r.step = "ab";
        progress_update(&p, &r);
        fclose(f);
        CHECK(text && strcmp(text, "\rx: abcdef, 5 files\rx: ab, 5 files    ") == 0);
        free(text);
}

/* Standard error a file, or a terminal with quiet: nothing; a terminal:
 * the line. */
static void test_only_on_a_terminal(void)
{
        char path[] = "/tmp/test-progress.XXXXXX";
        struct progress_report r = { NULL, PROGRESS_BYTES, 1, 2 };
        struct progress p;
        int saved, fd, pt;
        struct stat st;

        fflush(stderr);
        saved = dup(STDERR_FILENO);
        fd = mkostemp(path, O_CLOEXEC);
        CHECK(saved >= 0 && fd >= 0);
        if (saved < 0 || fd < 0)
                return;
        unlink(path);
        dup2(fd, STDERR_FILENO);
        progress_start(&p, "replay", false);
        progress_update(&p, &r);
        progress_done(&p);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        CHECK(!p.on);
        CHECK(fstat(fd, &st) == 0 && st.st_size == 0);
        close(fd);
        /* a terminal: a pseudo-terminal's other end */
        pt = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (pt >= 0 && grantpt(pt) == 0 && unlockpt(pt) == 0 && ptsname(pt) &&
            (fd = open(ptsname(pt), O_RDWR | O_NOCTTY | O_CLOEXEC)) >= 0) {
                dup2(fd, STDERR_FILENO);
                progress_start(&p, "replay", true);
                CHECK(!p.on);
                progress_start(&p, "replay", false);
                CHECK(p.on);
                dup2(saved, STDERR_FILENO);
                close(fd);
        } else
                printf("no pseudo-terminal: the terminal's case not tried\n");
        if (pt >= 0)
                close(pt);
        close(saved);
}

int main(void)
{
        test_format();
        test_width();
        test_redraw();
        test_only_on_a_terminal();
        TESTS_DONE();
}
