/* SPDX-License-Identifier: MIT */
/* readset auto's pure parts: a start's key (daemon/key.h), the
 * configuration's lines (daemon/daemon.h), a program's info file, the
 * store's bound and forget (daemon/programs.h), and the read set the
 * start's early files are put before (model/readset.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/key.h"
#include "daemon/programs.h"
#include "model/readset.h"
#include "tests.h"
#include "util/util.h"

static char dir[] = "/tmp/readset-test-auto.XXXXXX";

static void script_is(const char *base, const char *want, int argc, ...)
{
        char *argv[16], buf[PATH_MAX];
        va_list ap;

        va_start(ap, argc);
        for (int i = 0; i < argc; i++)
                argv[i] = va_arg(ap, char *);
        va_end(ap);
        key_script_of_argv(base, argv, argc, "/home/u", buf, sizeof(buf));
        if (strcmp(buf, want) != 0) {
                fprintf(stderr, "%s: script '%s', want '%s'\n", base, buf, want);
                tests_failed++;
        }
}

static void test_interpreters(void)
{
        CHECK(key_is_interpreter("python3"));
        CHECK(key_is_interpreter("python3.11"));
        CHECK(key_is_interpreter("python"));
        CHECK(key_is_interpreter("sh"));
        CHECK(key_is_interpreter("node"));
        CHECK(key_is_interpreter("java"));
        CHECK(!key_is_interpreter("python3-config"));
        CHECK(!key_is_interpreter("git"));
        CHECK(!key_is_interpreter("shx"));
        CHECK(!key_is_interpreter(""));
        CHECK(!key_is_interpreter("env"));
        CHECK(key_is_launcher("env"));
        CHECK(key_is_launcher("nice"));
        CHECK(key_is_launcher("setpriv"));
        CHECK(!key_is_launcher("python3"));
        CHECK(!key_is_launcher("timeout"));     /* forks: its child is a start of its own */
}

static void test_scripts(void)
{
        script_is("python3", "/home/u/tool.py", 2, "python3", "tool.py");
        script_is("python3", "/opt/x.py", 4, "python3", "-B", "/opt/x.py", "arg");
        script_is("python3", "/opt/x.py", 4, "python3", "-W", "ignore", "/opt/x.py");
        script_is("python3", "module:http.server", 3, "python3", "-m", "http.server");
        script_is("python3", "", 3, "python3", "-c", "print(1)");
        script_is("python3", "", 2, "python3", "-");
        script_is("python3", "", 1, "python3");
        script_is("python3", "", 2, "python3", "-m");
        script_is("sh", "/etc/x.sh", 3, "/bin/sh", "-e", "/etc/x.sh");
        script_is("sh", "", 3, "sh", "-c", "ls");
        script_is("node", "/home/u/app.js", 4, "node", "--require", "x", "app.js");
        script_is("java", "/srv/a.jar", 3, "java", "-jar", "/srv/a.jar");
        script_is("java", "class:org.Main", 4, "java", "-cp", "lib/*", "org.Main");
        script_is("java", "", 2, "java", "-jar");
        script_is("perl", "", 3, "perl", "-e", "print 1");
        script_is("perl", "", 3, "perl", "-ne", "print");
        script_is("perl", "/home/u/t.pl", 4, "perl", "-I", "lib", "t.pl");
        script_is("node", "", 3, "node", "--eval", "1");
        script_is("node", "", 3, "node", "-p", "1");
        /* option clusters: code on the command line is the interpreter's */
        script_is("sh", "", 3, "sh", "-ec", "ls");
        script_is("bash", "", 3, "bash", "-lc", "ls");
        script_is("python3", "", 3, "python3", "-Ic", "1");
        script_is("python3", "module:pip", 3, "python3", "-Bm", "pip");
        script_is("python3", "module:venv", 2, "python3", "-mvenv");
        script_is("python3", "/home/u/x.py", 3, "python3", "--", "x.py");
        script_is("bash", "/home/u/x.sh", 4, "bash", "-o", "pipefail", "x.sh");
        script_is("bash", "/home/u/x.sh", 3, "bash", "+x", "x.sh");
        script_is("awk", "", 2, "awk", "{print $1}");
        script_is("awk", "", 4, "awk", "-F", ":", "{print $1}");
        script_is("awk", "/home/u/p.awk", 3, "awk", "-f", "p.awk");
        script_is("java", "module:org.app", 3, "java", "-m", "org.app");
}

static void test_names(void)
{
        struct start_key a = { 0 }, b = { 0 }, c = { 0 };

        snprintf(a.exe, sizeof(a.exe), "/usr/bin/python3.11");
        snprintf(a.script, sizeof(a.script), "/home/u/my tool.py");
        b = a;
        snprintf(b.script, sizeof(b.script), "/home/v/my tool.py");
        snprintf(c.exe, sizeof(c.exe), "/usr/bin/.hidden\nname");
        key_name(&a);
        key_name(&b);
        key_name(&c);
        CHECK(strncmp(a.name, "python3.11-my_tool.py-", 22) == 0);
        CHECK(strcmp(a.name, b.name) != 0);     /* the same base names, other scripts */
        CHECK(strncmp(b.name, "python3.11-my_tool.py-", 22) == 0);
        CHECK(c.name[0] != '.' && !strchr(c.name, '\n') && !strchr(c.name, '/'));
        CHECK(strlen(a.name) < NAME_MAX - 16);
        /* two users' starts of one program are two programs */
        b = a;
        b.uid = 1000;
        key_name(&b);
        CHECK(strcmp(a.name, b.name) != 0);
}

static void test_loader(void)
{
        struct exec_file ef;
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), sh = open("/bin/sh", O_RDONLY | O_CLOEXEC);
        int txt = open("/etc/hostname", O_RDONLY | O_CLOEXEC);

        CHECK(fd >= 0);
        if (fd >= 0) {
                /* this test is a dynamic program: its loader, by name */
                CHECK_EQ(key_exec_file(fd, &ef), 0);
                CHECK(ef.elf && ef.path[0] == '/');
                CHECK(strncmp(ef.loader, "ld-", 3) == 0);
                close(fd);
        }
        if (sh >= 0) {
                CHECK_EQ(key_exec_file(sh, &ef), 0);
                CHECK(ef.elf);
                close(sh);
        }
        if (txt >= 0) {
                CHECK_EQ(key_exec_file(txt, &ef), 0);
                CHECK(!ef.elf && !ef.loader[0]);
                CHECK(strcmp(ef.path, "/etc/hostname") == 0);
                close(txt);
        }
}

static const char *write_conf(const char *text)
{
        static char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/auto.conf", dir);
        f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
                fputs(text, f);
                fclose(f);
        }
        return path;
}

static void test_config(void)
{
        struct daemon_options o;
        char *text = NULL;
        unsigned line;

        daemon_options_init(&o);
        CHECK_EQ(daemon_options_load(&o, "/nonexistent/auto.conf", &text, &line), 0);
        CHECK(text == NULL);
        CHECK_EQ(daemon_options_load(&o, write_conf("# rules\n\nonly /opt\n  never  /opt/secret  \nnever-uid 1001\n"
                                                     "window-ms 2000\nmin-bytes 1M\nmax-programs 7\nmax-store 2M\n"),
                                     &text, &line), 0);
        CHECK_EQ(o.n_only, 1);
        CHECK(o.n_only && strcmp(o.only[0], "/opt") == 0);
        CHECK_EQ(o.n_never, 1);
        CHECK(o.n_never && strcmp(o.never[0], "/opt/secret") == 0);
        CHECK_EQ(o.n_never_uid, 1);
        CHECK_EQ(o.never_uid[0], 1001);
        CHECK_EQ(o.window_ms, 2000);
        CHECK_EQ(o.min_bytes, 1 << 20);
        CHECK_EQ(o.max_keys, 7);
        CHECK_EQ(o.max_store_bytes, 2 << 20);
        free(text);
        /* a bad line is named, whatever else is right */
        daemon_options_init(&o);
        CHECK_EQ(daemon_options_load(&o, write_conf("only /a\nwindow-ms 0\n"), &text, &line), -EINVAL);
        CHECK_EQ(line, 2);
        free(text);
        daemon_options_init(&o);
        CHECK_EQ(daemon_options_load(&o, write_conf("only relative/path\n"), &text, &line), -EINVAL);
        CHECK_EQ(line, 1);
        free(text);
        daemon_options_init(&o);
        CHECK_EQ(daemon_options_load(&o, write_conf("bogus word\n"), &text, &line), -EINVAL);
        free(text);
        daemon_options_init(&o);
        CHECK_EQ(daemon_options_load(&o, write_conf("never\n"), &text, &line), -EINVAL);
        free(text);
        unlink(write_conf(""));
}

static void info(const char *name, const char *exe, const char *script, uint64_t last)
{
        struct program_info p = { .uid = 1000, .dev = 7, .ino = 9, .size = 100, .mtime_ns = 5, .last_unix = last,
                                  .read_set_bytes = 4096 };
        char path[PATH_MAX];
        int fd;

        snprintf(p.exe, sizeof(p.exe), "%s", exe);
        snprintf(p.script, sizeof(p.script), "%s", script);
        CHECK_EQ(programs_info_save(dir, name, &p), 0);
        CHECK_EQ(programs_file(dir, name, "readset", path, sizeof(path)), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK_EQ(write(fd, "0123456789", 10), 10);
                close(fd);
        }
}

static int count(void *userdata, const char *name)
{
        (void)name;
        (*(unsigned *)userdata)++;
        return 0;
}

static unsigned programs(void)
{
        unsigned n = 0;

        CHECK_EQ(programs_each(dir, count, &n), 0);
        return n;
}

static void test_store(void)
{
        struct program_info p;
        struct start_key k = { .dev = 7, .ino = 9, .size = 100, .mtime_ns = 5 };
        char path[PATH_MAX];
        struct stat st;

        info("a", "/usr/bin/a", "", 10);
        CHECK_EQ(programs_info_load(dir, "a", &p), 0);
        CHECK(strcmp(p.exe, "/usr/bin/a") == 0 && p.script[0] == 0);
        CHECK_EQ(p.uid, 1000);
        CHECK_EQ(p.last_unix, 10);
        CHECK_EQ(p.read_set_bytes, 4096);
        CHECK(!p.small);
        CHECK(programs_same_program(&p, &k));
        k.mtime_ns = 6;
        CHECK(!programs_same_program(&p, &k));
        CHECK_EQ(programs_file(dir, "a", "info", path, sizeof(path)), 0);
        CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
        /* a torn or foreign info file is no program */
        CHECK_EQ(write_file_atomic_text(path, "exe relative\n"), 0);
        CHECK(programs_info_load(dir, "a", &p) < 0);
        CHECK_EQ(programs_forget(dir, "a"), 1);         /* by its name in the store */

        info("b", "/usr/bin/b", "", 20);
        info("c", "/usr/bin/python3", "/srv/tool.py", 30);
        info("d", "/usr/bin/python3", "/srv/other.py", 40);
        info("e", "/opt/e", "", 50);
        CHECK_EQ(programs(), 4);
        /* the bound: the least recently started go first, never the one kept */
        CHECK_EQ(programs_bound(dir, 3, UINT64_MAX, "b"), 1);
        CHECK_EQ(programs(), 3);
        CHECK_EQ(programs_info_load(dir, "b", &p), 0);
        CHECK(programs_info_load(dir, "c", &p) < 0);
        CHECK_EQ(programs_bound(dir, 10, UINT64_MAX, NULL), 0);
        CHECK(programs_bound(dir, 10, 1, "e") == 2);     /* bytes: all but the one kept */
        CHECK_EQ(programs(), 1);
        info("c", "/usr/bin/python3", "/srv/tool.py", 30);
        info("d", "/usr/bin/python3", "/srv/other.py", 40);
        /* forget: by script, by program (both its scripts), by file name */
        CHECK_EQ(programs_forget(dir, "/srv/tool.py"), 1);
        CHECK_EQ(programs_forget(dir, "/srv/tool.py"), 0);
        info("c", "/usr/bin/python3", "/srv/tool.py", 30);
        CHECK_EQ(programs_forget(dir, "python3"), 2);
        CHECK_EQ(programs_forget(dir, "e"), 1);
        CHECK_EQ(programs(), 0);
}

static void test_put_first(void)
{
        _cleanup_readset_ struct readset *rs = readset_new(), *early = readset_new();
        struct rs_file *f;

        CHECK(rs && early);
        if (!rs || !early)
                return;
        f = readset_add_file(rs, "/lib/libc.so.6", 1, 10);
        CHECK_EQ(readset_file_add_range(f, 0, 8192, 500, RS_RANGE_ACCESSED), 0);
        f = readset_add_file(early, "/usr/bin/prog", 1, 11);
        CHECK_EQ(readset_file_add_range(f, 4096, 4096, 7, RS_RANGE_FILLED), 0);
        f = readset_add_file(early, "/lib/libc.so.6", 1, 10);          /* recorded already */
        CHECK_EQ(readset_file_add_range(f, 0, 65536, 0, 0), 0);
        readset_add_file(early, "/empty", 1, 12);                        /* nothing cached */
        CHECK_EQ(readset_put_first(rs, early), 1);
        CHECK_EQ(rs->n_files, 2);
        CHECK(strcmp(rs->files[0].path, "/usr/bin/prog") == 0);
        CHECK_EQ(rs->files[0].ranges[0].time_us, 0);
        CHECK_EQ(rs->files[0].ranges[0].flags, RS_RANGE_ACCESSED);
        CHECK(strcmp(rs->files[1].path, "/lib/libc.so.6") == 0);
        CHECK_EQ(rs->files[1].ranges[0].length, 8192);
        CHECK_EQ(readset_validate(rs), 0);
}

int main(void)
{
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /tmp");
        test_interpreters();
        test_scripts();
        test_names();
        test_loader();
        test_config();
        test_store();
        test_put_first();
        CHECK_EQ(test_dir_entries(dir), 0);
        rmdir(dir);
        TESTS_DONE();
}
