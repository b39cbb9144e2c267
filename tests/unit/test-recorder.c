/* SPDX-License-Identifier: MIT */
/* A recording session (record/recorder.h), as root: one process tree
 * followed, the file it reads found in the read set with the pages it read,
 * a file read by another process not; set up and given up at any point.
 * Skipped, with the reason, without root or tracefs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/recorder.h"
#include "tests.h"
#include "util/util.h"

/* (not /tmp: a tmpfs there brings no page into the cache, nothing to
 * record) */
static char dir[] = "/var/tmp/readset-test-recorder.XXXXXX";

static void make_file(const char *path, size_t size)
{
        char buf[4096];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        memset(buf, 'r', sizeof(buf));
        CHECK(fd >= 0);
        for (size_t done = 0; fd >= 0 && done < size; done += sizeof(buf))
                CHECK_EQ(write(fd, buf, sizeof(buf)), (long long)sizeof(buf));
        if (fd >= 0) {
                CHECK_EQ(fsync(fd), 0);
                /* out of the cache: the read brings its pages in */
                CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
                close(fd);
        }
}

/* Read 16 KiB at 64 KiB of path. */
static void read_some(const char *path)
{
        char buf[16384];
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd >= 0) {
                if (pread(fd, buf, sizeof(buf), 65536) < 0) { /* the parent's checks fail */ }
                close(fd);
        }
}

/* A process that reads path once told to (a byte on gate), then exits. */
static pid_t reader(const char *path, int gate[2])
{
        pid_t pid = fork();

        if (pid == 0) {
                char x;
                close(gate[1]);
                if (read(gate[0], &x, 1) == 1)
                        read_some(path);
                _exit(0);
        }
        close(gate[0]);
        return pid;
}

/* path's file in rs, by its device and inode (named or not: a name found
 * by the bounded walk, without fanotify, depends on the machine's speed). */
static const struct rs_file *find(const struct readset *rs, const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return NULL;
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].dev == st.st_dev && rs->files[i].ino == st.st_ino)
                        return &rs->files[i];
        return NULL;
}

static void test_record_tree(void)
{
        struct recorder_options o = { .buffer_kb = RECORDER_DEFAULT_BUFFER_KB, .max_walk = RECORDER_DEFAULT_MAX_WALK };
        char mine[128], other[128];
        struct recorder *r = NULL;
        struct readset *rs = NULL;
        struct recorder_status st;
        const struct rs_file *f;
        const char *what = NULL;
        int gate[2], status = 0, e;
        pid_t pid;

        snprintf(mine, sizeof(mine), "%s/mine", dir);
        snprintf(other, sizeof(other), "%s/other", dir);
        make_file(mine, 256 * 1024);
        make_file(other, 256 * 1024);
        CHECK_EQ(pipe2(gate, O_CLOEXEC), 0);
        pid = reader(mine, gate);
        CHECK(pid > 0);
        o.pid = pid;
        e = recorder_open(&o, &r, &what);
        if (e < 0) {
                char why[256];
                close(gate[1]);
                waitpid(pid, &status, 0);
                unlink(mine);
                unlink(other);
                rmdir(dir);
                snprintf(why, sizeof(why), "cannot record here: %s: %s", what ? what : "?", strerror(-e));
                TEST_SKIP(why);
        }
        CHECK_EQ(recorder_start(r), 0);
        /* the tree's read, and one of this process's (not followed) */
        CHECK_EQ(write(gate[1], "x", 1), 1);
        close(gate[1]);
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        read_some(other);
        CHECK_EQ(recorder_stop(r), 0);
        CHECK_EQ(recorder_finish(r, &rs), 0);
        recorder_get_status(r, &st);
        CHECK_EQ(st.lookups_error, 0);
        recorder_free(r);
        if (!rs)
                goto out;
        CHECK_EQ(readset_validate(rs), 0);
        f = find(rs, mine);
        CHECK(f != NULL);
        if (f) {
                uint64_t lo = UINT64_MAX, hi = 0;
                /* named by fanotify, where it watched */
                if (st.paths.marks > 0) {
                        CHECK(strcmp(f->path, mine) == 0);
                        CHECK_EQ(f->kind, RS_FILE_REGULAR);
                        CHECK_EQ(f->size, 256 * 1024);
                }
                for (size_t i = 0; i < f->n_ranges; i++) {
                        lo = MIN(lo, f->ranges[i].offset);
                        hi = MAX(hi, f->ranges[i].offset + f->ranges[i].length);
                }
                /* the pages read, at least (readahead may add after) */
                CHECK(f->n_ranges > 0);
                CHECK(lo <= 65536);
                CHECK(hi >= 65536 + 16384);
        }
        CHECK(find(rs, other) == NULL);
        readset_free(rs);
out:
        unlink(mine);
        unlink(other);
}

/* Given up at any point: set up and freed, started and freed; finished
 * only once stopped, stopped once. */
static void test_give_up(void)
{
        struct recorder_options o = { .pid = getpid(), .buffer_kb = 64, .max_walk = 1000 };
        struct recorder *r = NULL;
        struct readset *rs = NULL;
        const char *what = NULL;

        recorder_free(NULL);
        CHECK_EQ(recorder_open(&o, &r, &what), 0);
        recorder_free(r);
        r = NULL;
        CHECK_EQ(recorder_open(&o, &r, &what), 0);
        if (r)
                CHECK_EQ(recorder_start(r), 0);
        recorder_free(r);
        r = NULL;
        CHECK_EQ(recorder_open(&o, &r, &what), 0);
        if (!r)
                return;
        CHECK_EQ(recorder_stop(r), -EINVAL);
        CHECK_EQ(recorder_start(r), 0);
        CHECK_EQ(recorder_finish(r, &rs), -EINVAL);
        CHECK(rs == NULL);
        CHECK_EQ(recorder_stop(r), 0);
        CHECK_EQ(recorder_stop(r), -EINVAL);
        CHECK_EQ(recorder_finish(r, &rs), 0);
        readset_free(rs);
        recorder_free(r);
}

int main(void)
{
        if (geteuid() != 0)
                TEST_SKIP("recording needs root (tracefs, fanotify)");
        if (!mkdtemp(dir))
                TEST_SKIP("cannot make a directory in /var/tmp");
        alarm(600);
        test_record_tree();
        test_give_up();
        rmdir(dir);
        TESTS_DONE();
}
