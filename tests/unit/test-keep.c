/* SPDX-License-Identifier: MIT */
/* keep/keep.c: unit names and their escapes, what enable writes and
 * disable removes, the status read back, the units listed; in /tmp
 * directories of the test's own (no systemd asked: not the system's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keep/keep.h"
#include "util/util.h"
#include "tests.h"

static void test_names(void)
{
        char b[300];

        CHECK_EQ(keep_unit_name("postgresql@15-main", b, sizeof(b)), 0);
        CHECK(strcmp(b, "postgresql@15-main.service") == 0);
        CHECK_EQ(keep_unit_name("nginx.service", b, sizeof(b)), 0);
        CHECK(strcmp(b, "nginx.service") == 0);
        CHECK_EQ(keep_unit_name("a/b", b, sizeof(b)), -EINVAL);
        CHECK_EQ(keep_unit_name("../x", b, sizeof(b)), -EINVAL);
        CHECK_EQ(keep_unit_name("x.socket", b, sizeof(b)), -EINVAL);
        CHECK_EQ(keep_unit_name("", b, sizeof(b)), -EINVAL);
        CHECK_EQ(keep_unit_name("a b", b, sizeof(b)), -EINVAL);
        CHECK_EQ(keep_unit_name("%n", b, sizeof(b)), -EINVAL);   /* no specifier in the drop-in */
        CHECK_EQ(keep_unit_name("foo\\x2dbar", b, sizeof(b)), -EINVAL);   /* systemd would unescape it */
        CHECK_EQ(keep_unit_name("foo@.service", b, sizeof(b)), -EINVAL);   /* a template */
        CHECK_EQ(keep_unit_name("pg@15.4-main", b, sizeof(b)), 0);
        CHECK(strcmp(b, "pg@15.4-main.service") == 0);
        memset(b, 'a', 200);
        b[200] = '\0';
        {
                char c[300];
                CHECK_EQ(keep_unit_name(b, c, sizeof(c)), 0);
                memset(b + 1, '-', 100);   /* escaped 4 times longer: past systemd's 255 */
                CHECK_EQ(keep_unit_name(b, c, sizeof(c)), -EINVAL);
        }
        CHECK_EQ(keep_escape("postgresql@15-main.service", b, sizeof(b)), 0);
        CHECK(strcmp(b, "postgresql\\x4015\\x2dmain.service") == 0);   /* as systemd-escape says */
        CHECK_EQ(keep_escape("postgresql@15-main.service", b, 10), -ENAMETOOLONG);
}

static void test_enable_disable(void)
{
        char top[] = "/tmp/rs-test-keep-XXXXXX", state[256], units[256], p[512], cmd[300];
        char *paths[] = { (char *)"/usr/lib", (char *)"/etc" };
        _cleanup_free_ char *dropin = NULL, *kept = NULL;
        struct keep_unit u;
        struct keep_status st = { .saved_unix = 5, .saved_bytes = 4096, .restore_us = 7 };
        char **names = NULL;
        size_t n = 0;

        CHECK(mkdtemp(top) != NULL);
        snprintf(state, sizeof(state), "%s/lib/keep", top);
        snprintf(units, sizeof(units), "%s/units", top);
        CHECK_EQ(mkdir(units, 0755), 0);
        CHECK_EQ(keep_enable(state, units, "/usr/bin", "db@1.service", paths, 2), 0);
        snprintf(p, sizeof(p), "%s/db@1.service.d/" KEEP_DROPIN, units);
        CHECK_EQ(read_small_file(p, &dropin, 4096), 0);
        CHECK(dropin && strstr(dropin, "Wants=readset-keep-restore@db\\x401.service.service "
                                       "readset-keep-save@db\\x401.service.timer\n"));
        CHECK(dropin && strstr(dropin, "PropagatesStopTo=readset-keep-save@db\\x401.service.timer\n"));
        CHECK(dropin && strstr(dropin, "ExecStopPost=+-/usr/bin/readset keep save db@1.service\n"));
        snprintf(p, sizeof(p), "%s/db@1.service.paths", state);
        CHECK_EQ(read_small_file(p, &kept, 4096), 0);
        CHECK(kept && strcmp(kept, "/usr/lib\n/etc\n") == 0);

        CHECK_EQ(keep_load(state, "db@1.service", &u), 0);
        CHECK_EQ(u.n_paths, 2);
        CHECK(!u.have_snapshot && u.st.saved_unix == 0);
        keep_unit_free(&u);
        CHECK_EQ(keep_status_write(state, "db@1.service", &st), 0);
        CHECK_EQ(keep_load(state, "db@1.service", &u), 0);
        CHECK(u.st.saved_unix == 5 && u.st.saved_bytes == 4096 && u.st.restore_us == 7);
        keep_unit_free(&u);
        CHECK_EQ(keep_load(state, "other.service", &u), -ENOENT);

        CHECK_EQ(keep_enable(state, units, "/usr/bin", "web.service", paths, 1), 0);
        CHECK_EQ(keep_list(state, &names, &n), 0);
        CHECK_EQ(n, 2);
        CHECK(n == 2 && strcmp(names[0], "db@1.service") == 0 && strcmp(names[1], "web.service") == 0);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);

        CHECK_EQ(keep_disable(state, units, "db@1.service"), 0);
        CHECK_EQ(keep_disable(state, units, "db@1.service"), -ENOENT);
        snprintf(p, sizeof(p), "%s/db@1.service.d", units);
        CHECK(access(p, F_OK) < 0);
        CHECK_EQ(keep_disable(state, units, "web.service"), 0);
        CHECK_EQ(keep_list(state, &names, &n), 0);
        CHECK_EQ(n, 0);
        free(names);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
        CHECK_EQ(system(cmd), 0);
}

int main(void)
{
        test_names();
        test_enable_disable();
        TESTS_DONE();
}
