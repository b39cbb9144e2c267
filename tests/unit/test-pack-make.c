/* SPDX-License-Identifier: MIT */
/* pack/make.c: pack --image's steps and the whole of it, over a small tree
 * in /var/tmp (the image tool's run: where mksquashfs is installed). */
#include "pack/make.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs/checksum.h"
#include "model/format.h"
#include "pack/portable.h"
#include "util/trust.h"
#include "util/util.h"
#include "tests.h"

static char top[64];            /* the test's directory */
static char tree[PATH_MAX];     /* top/tree, resolved */

static void path_of(char *buf, size_t size, const char *name)
{
        snprintf(buf, size, "%s/%s", top, name);
}

static void make_file(const char *name, size_t size, char fill)
{
        char path[PATH_MAX];

        path_of(path, sizeof(path), name);
        test_fill_file(path, size, fill);
}

static void set_mtime(const char *name, time_t s)
{
        char path[PATH_MAX];
        struct timespec t[2] = { { s, 0 }, { s, 0 } };

        path_of(path, sizeof(path), name);
        CHECK_EQ(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

/* Is top/name there? */
static bool there(const char *name)
{
        char path[PATH_MAX];
        struct stat st;

        path_of(path, sizeof(path), name);
        return lstat(path, &st) == 0;
}

/* Entries of top/dir whose name holds part. */
static int count_in(const char *dir, const char *part)
{
        char path[PATH_MAX];
        struct dirent *de;
        DIR *d;
        int n = 0;

        path_of(path, sizeof(path), dir);
        d = opendir(path);
        CHECK(d != NULL);
        while (d && (de = readdir(d)))
                n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && strstr(de->d_name, part);
        if (d)
                closedir(d);
        return n;
}

static void remove_in(const char *dir)
{
        char path[PATH_MAX];
        struct dirent *de;
        DIR *d;

        path_of(path, sizeof(path), dir);
        d = opendir(path);
        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        CHECK_EQ(unlinkat(dirfd(d), de->d_name, 0), 0);
        if (d)
                closedir(d);
}

/* The tree: a, b and sub/c, their mtimes 1000, 5000 (the newest), 3000. */
static void setup(void)
{
        char path[PATH_MAX];

        snprintf(top, sizeof(top), "/var/tmp/readset-pack.XXXXXX");
        if (!mkdtemp(top))
                TEST_SKIP("cannot create a directory in /var/tmp");
        path_of(tree, sizeof(tree), "tree");
        CHECK_EQ(mkdir(tree, 0755), 0);
        path_of(tree, sizeof(tree), "tree/sub");
        CHECK_EQ(mkdir(tree, 0755), 0);
        path_of(tree, sizeof(tree), "out");
        CHECK_EQ(mkdir(tree, 0755), 0);
        path_of(tree, sizeof(tree), "treeX");   /* a sibling whose name begins as the tree's */
        CHECK_EQ(mkdir(tree, 0755), 0);
        make_file("tree/a", 20000, 'a');
        make_file("tree/b", 9000, 'b');
        make_file("tree/sub/c", 70000, 'c');
        set_mtime("tree/a", 1000);
        set_mtime("tree/b", 5000);
        set_mtime("tree/sub/c", 3000);
        set_mtime("tree/sub", 2000);
        set_mtime("tree", 2000);
        path_of(path, sizeof(path), "tree");
        if (!realpath(path, tree))
                TEST_SKIP("cannot resolve the tree");
}

static void teardown(void)
{
        char path[PATH_MAX];

        remove_in("tree/sub");
        path_of(path, sizeof(path), "tree/sub");
        CHECK_EQ(rmdir(path), 0);
        remove_in("tree");
        remove_in("out");
        CHECK_EQ(rmdir(tree), 0);
        path_of(path, sizeof(path), "out");
        CHECK_EQ(rmdir(path), 0);
        path_of(path, sizeof(path), "treeX");
        CHECK_EQ(rmdir(path), 0);
        CHECK_EQ(rmdir(top), 0);
}

/* The read set of a start that read c, a, b (in that order) whole, made
 * portable below the tree. */
static struct readset *portable(void)
{
        static const char *const names[] = { "tree/sub/c", "tree/a", "tree/b" };
        _cleanup_readset_ struct readset *rs = readset_new();
        struct readset *p = NULL;
        struct portable_counts c;
        int r;

        CHECK(rs != NULL);
        for (size_t i = 0; rs && i < 3; i++) {
                char path[PATH_MAX];
                struct stat st;
                struct rs_file *f;

                path_of(path, sizeof(path), names[i]);
                CHECK_EQ(stat(path, &st), 0);
                f = readset_add_file(rs, path, st.st_dev, st.st_ino);
                CHECK(f != NULL);
                if (!f)
                        return NULL;
                f->kind = RS_FILE_REGULAR;
                f->size = (uint64_t)st.st_size;
                f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
                CHECK_EQ(readset_file_add_range(f, 0, (uint64_t)st.st_size, i, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
        }
        rs->created_unix = 1234567;
        rs->page_size = 4096;
        r = portable_make(rs, tree, -1, &p, &c);
        if (r == -ELIBACC) {
                teardown();
                TEST_SKIP("no digests here: OpenSSL's libcrypto is not installed");
        }
        CHECK_EQ(r, 0);
        CHECK(p && p->n_files == 3);
        return p;
}

static void options(struct pack_make_options *o, enum pack_image image, enum pack_compress comp, const char *out,
                    char *buf, size_t size)
{
        path_of(buf, size, out);
        *o = (struct pack_make_options){ .image = image, .compress = comp, .root = tree, .out = buf,
                                         .source_date_epoch = -1, .created_unix = 1234567 };
}

/* An image inside its own tree is refused before anything is made. */
static void test_inside(void)
{
        _cleanup_readset_ struct readset *p = portable();
        struct pack_make_options o;
        struct pack_make_result m;
        char out[PATH_MAX];

        if (!p)
                return;
        path_of(out, sizeof(out), "tree/x.img");
        CHECK(pack_inside_tree(out, tree));
        path_of(out, sizeof(out), "tree/sub/x.img");
        CHECK(pack_inside_tree(out, tree));
        path_of(out, sizeof(out), "out/x.img");
        CHECK(!pack_inside_tree(out, tree));
        path_of(out, sizeof(out), "treeX/x.img");       /* not below: only named alike */
        CHECK(!pack_inside_tree(out, tree));
        CHECK(pack_inside_tree(out, "/"));
        path_of(out, sizeof(out), "tree/../out/x.img");
        CHECK(!pack_inside_tree(out, tree));

        options(&o, PACK_SQUASHFS, PACK_GZIP, "tree/sub/x.img", out, sizeof(out));
        CHECK(pack_make(&o, p, &m) < 0);
        CHECK_EQ(m.failed, PACK_MAKE_INSIDE);
        CHECK_EQ(count_in("tree/sub", "x.img"), 0);
        CHECK_EQ(count_in("tree/sub", ".pack."), 0);
        pack_make_result_done(&m);
}

/* Its working directory: new, readset's own, beside the output. */
static void test_private_dir(void)
{
        char out[PATH_MAX], want[PATH_MAX], *dir = NULL;
        struct stat st;

        path_of(out, sizeof(out), "out/x.img");
        CHECK_EQ(pack_private_dir_beside(out, &dir), 0);
        path_of(want, sizeof(want), "out/.x.img.pack.");
        CHECK(dir && strncmp(dir, want, strlen(want)) == 0 && strlen(dir) == strlen(want) + 6);
        CHECK(dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
        CHECK_EQ(count_in("out", ".x.img.pack."), 1);
        if (dir)
                CHECK_EQ(rmdir(dir), 0);
        free(dir);
        dir = NULL;
        /* beside a name whose directory is not there: nothing */
        path_of(out, sizeof(out), "none/x.img");
        CHECK_EQ(pack_private_dir_beside(out, &dir), -ENOENT);
        CHECK(dir == NULL);
}

/* The image's time: SOURCE_DATE_EPOCH (even 0), else the recording's; for
 * EROFS without it, the tree's newest mtime is set for the tool. */
static void test_epoch(void)
{
        _cleanup_readset_ struct readset *p = portable();
        struct pack_make_options o;
        struct pack_make_result m;
        char out[PATH_MAX], empty[PATH_MAX], *path = getenv("PATH");
        _cleanup_free_ char *saved = path ? strdup(path) : NULL;
        uint64_t newest = 0;

        if (!p)
                return;
        CHECK_EQ(pack_mkfs_time(-1, 1234567), 1234567);
        CHECK_EQ(pack_mkfs_time(1700000000, 1234567), 1700000000);
        CHECK_EQ(pack_mkfs_time(0, 1234567), 0);
        CHECK_EQ(pack_mkfs_time(-1, (uint64_t)UINT32_MAX + 5), UINT32_MAX);
        CHECK_EQ(pack_newest_mtime(tree, &newest), 0);
        CHECK_EQ(newest, 5000);

        /* (no tool on PATH: the epoch is set before it is looked for) */
        path_of(empty, sizeof(empty), "treeX");
        CHECK_EQ(setenv("PATH", empty, 1), 0);
        CHECK_EQ(unsetenv("SOURCE_DATE_EPOCH"), 0);
        options(&o, PACK_EROFS, PACK_LZ4, "out/x.erofs", out, sizeof(out));
        CHECK(pack_make(&o, p, &m) < 0);
        CHECK_EQ(m.mkfs_time, 1234567);
        CHECK_EQ(m.tool_epoch, 5000);
        CHECK(getenv("SOURCE_DATE_EPOCH") && strcmp(getenv("SOURCE_DATE_EPOCH"), "5000") == 0);
        pack_make_result_done(&m);
        /* given, it is the image's, and the tool's as it is */
        CHECK_EQ(setenv("SOURCE_DATE_EPOCH", "77", 1), 0);
        o.source_date_epoch = 77;
        CHECK(pack_make(&o, p, &m) < 0);
        CHECK_EQ(m.mkfs_time, 77);
        CHECK_EQ(m.tool_epoch, 0);
        CHECK(strcmp(getenv("SOURCE_DATE_EPOCH"), "77") == 0);
        pack_make_result_done(&m);
        CHECK_EQ(unsetenv("SOURCE_DATE_EPOCH"), 0);
        CHECK_EQ(saved ? setenv("PATH", saved, 1) : unsetenv("PATH"), 0);
}

/* A name-based UUID from the read set's digest: the same read set, the
 * same UUID; another, another. */
static void test_uuid(void)
{
        _cleanup_readset_ struct readset *p = portable();
        _cleanup_free_ uint8_t *enc = NULL;
        uint8_t u1[16], u2[16];
        struct content_sum sum;
        size_t len = 0;

        if (!p)
                return;
        CHECK_EQ(pack_image_uuid(p, u1), 0);
        CHECK_EQ(pack_image_uuid(p, u2), 0);
        CHECK(memcmp(u1, u2, 16) == 0);
        CHECK_EQ(u1[6] >> 4, 5);                /* version 5: name-based */
        CHECK_EQ(u1[8] & 0xc0, 0x80);           /* RFC 4122's variant */
        CHECK_EQ(format_encode(p, &enc, &len), 0);
        CHECK_EQ(checksum_buf(enc, len, &sum), 0);
        CHECK(memcmp(u1, sum.d, 6) == 0 && u1[7] == sum.d[7] && memcmp(u1 + 9, sum.d + 9, 7) == 0);
        p->files[1].ranges[0].length = 4096;
        CHECK_EQ(pack_image_uuid(p, u2), 0);
        CHECK(memcmp(u1, u2, 16) != 0);
}

/* No image tool: which one, and its package; nothing left. */
static void test_missing_tool(void)
{
        _cleanup_readset_ struct readset *p = portable();
        struct pack_make_options o;
        struct pack_make_result m;
        char out[PATH_MAX], empty[PATH_MAX], *path = getenv("PATH");
        _cleanup_free_ char *saved = path ? strdup(path) : NULL;

        if (!p)
                return;
        path_of(empty, sizeof(empty), "treeX");
        CHECK_EQ(setenv("PATH", empty, 1), 0);
        options(&o, PACK_SQUASHFS, PACK_ZSTD, "out/x.img", out, sizeof(out));
        CHECK_EQ(pack_make(&o, p, &m), -ENOENT);
        CHECK_EQ(m.failed, PACK_MAKE_TOOL_MISSING);
        CHECK(strcmp(m.tool, "mksquashfs") == 0 && strcmp(m.package, "squashfs-tools") == 0);
        pack_make_result_done(&m);
        options(&o, PACK_EROFS, PACK_LZ4, "out/x.img", out, sizeof(out));
        o.source_date_epoch = 1;        /* (this process's SOURCE_DATE_EPOCH left alone) */
        CHECK_EQ(pack_make(&o, p, &m), -ENOENT);
        CHECK_EQ(m.failed, PACK_MAKE_TOOL_MISSING);
        CHECK(strcmp(m.tool, "mkfs.erofs") == 0 && strcmp(m.package, "erofs-utils") == 0);
        pack_make_result_done(&m);
        CHECK_EQ(count_in("out", "x.img"), 0);
        CHECK_EQ(saved ? setenv("PATH", saved, 1) : unsetenv("PATH"), 0);
}

static bool have_tool(const char *name)
{
        char cmd[128];
        char *argv[] = { "sh", "-c", cmd, NULL };
        pid_t pid;
        int status;

        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null", name);
        pid = fork();
        if (pid == 0) {
                execvp(argv[0], argv);
                _exit(127);
        }
        return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void called(const struct pack_make_options *o, void *userdata)
{
        (void)o;
        ++*(int *)userdata;
}

/* A squashfs image made whole: the image, its read set beside it (with the
 * image's spans, read back), the working directory gone. */
static void test_made(void)
{
        _cleanup_readset_ struct readset *p = portable(), *back = NULL;
        struct pack_make_options o;
        struct pack_make_result m;
        char out[PATH_MAX], why[256];
        struct stat st;
        int calls = 0;

        if (!p)
                return;
        options(&o, PACK_SQUASHFS, PACK_GZIP, "out/x.img", out, sizeof(out));
        o.tool_starts = called;
        o.userdata = &calls;
        CHECK_EQ(pack_make(&o, p, &m), 0);
        CHECK_EQ(m.failed, PACK_MAKE_DONE);
        CHECK_EQ(calls, 1);
        CHECK(!m.files_only);
        CHECK(stat(out, &st) == 0 && S_ISREG(st.st_mode));
        CHECK(m.have_size && m.size == (uint64_t)st.st_size);
        CHECK_EQ(m.ordered, 3);
        CHECK(m.side && strcmp(m.side + strlen(out), ".readset") == 0 && strncmp(m.side, out, strlen(out)) == 0);
        CHECK(m.side && format_read(m.side, &back, why, sizeof(why)) == 0);
        CHECK(back && readset_is_portable(back) && back->n_files == 3 && back->image && back->image->n_spans > 0);
        CHECK(back && back->image && back->image->size == (uint64_t)st.st_size);
        CHECK_EQ(count_in("out", ".pack."), 0);
        CHECK_EQ(count_in("out", "x.img"), 2);
        pack_make_result_done(&m);
        remove_in("out");
}

/* xz and lz4: the image's metadata read back, as gzip's (spans); EROFS:
 * made, its read set replays the files (no spans). */
static void test_files_only(bool erofs)
{
        static const enum pack_compress with_spans[] = { PACK_XZ, PACK_LZ4 };
        _cleanup_readset_ struct readset *p = portable();
        struct pack_make_options o;
        struct pack_make_result m;
        char out[PATH_MAX], why[256];

        if (!p)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(with_spans); i++) {
                _cleanup_readset_ struct readset *back = NULL;
                options(&o, PACK_SQUASHFS, with_spans[i], "out/x.img", out, sizeof(out));
                CHECK_EQ(pack_make(&o, p, &m), 0);
                CHECK_EQ(m.failed, PACK_MAKE_DONE);
                CHECK(!m.files_only);
                CHECK(m.side && format_read(m.side, &back, why, sizeof(why)) == 0);
                CHECK(back && back->n_files == 3 && back->image && back->image->n_spans > 0);
                pack_make_result_done(&m);
                remove_in("out");
        }
        if (erofs) {
                _cleanup_readset_ struct readset *back = NULL;
                options(&o, PACK_EROFS, PACK_LZ4, "out/x.img", out, sizeof(out));
                CHECK_EQ(pack_make(&o, p, &m), 0);
                CHECK_EQ(m.failed, PACK_MAKE_DONE);
                CHECK(m.side && format_read(m.side, &back, why, sizeof(why)) == 0);
                CHECK(back && back->n_files == 3 && !back->image);
                pack_make_result_done(&m);
                remove_in("out");
        }
}

/* The tool failing leaves nothing; the last rename failing leaves the read
 * set alone (written first: never an image without it). */
static void test_failed(void)
{
        _cleanup_readset_ struct readset *p = portable();
        struct pack_make_options o;
        struct pack_make_result m;
        char out[PATH_MAX], in[PATH_MAX];
        int e, null;

        if (!p)
                return;
        /* (the tool's own complaint kept off the test's output) */
        e = dup(2);
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        CHECK(e >= 0 && null >= 0 && dup2(null, 2) == 2);
        options(&o, PACK_SQUASHFS, PACK_GZIP, "out/x.img", out, sizeof(out));
        o.block_size = 3000;    /* mksquashfs takes powers of two */
        CHECK_EQ(pack_make(&o, p, &m), -EIO);
        dup2(e, 2);
        close(e);
        close(null);
        CHECK_EQ(m.failed, PACK_MAKE_TOOL_FAILED);
        CHECK_EQ(count_in("out", ""), 0);
        pack_make_result_done(&m);

        /* a directory with a file in it where the image goes */
        path_of(out, sizeof(out), "out/x.img");
        CHECK_EQ(mkdir(out, 0755), 0);
        make_file("out/x.img/keep", 10, 'k');
        options(&o, PACK_SQUASHFS, PACK_GZIP, "out/x.img", out, sizeof(out));
        CHECK(pack_make(&o, p, &m) < 0);
        CHECK_EQ(m.failed, PACK_MAKE_RENAME);
        CHECK(there("out/x.img.readset") && there("out/x.img/keep"));
        CHECK_EQ(count_in("out", ".pack."), 0);
        pack_make_result_done(&m);
        remove_in("out/x.img");
        path_of(in, sizeof(in), "out/x.img");
        CHECK_EQ(rmdir(in), 0);
        remove_in("out");
}

int main(void)
{
        trust_allow_untrusted();        /* (read back from /var/tmp, as root too) */
        setup();
        test_inside();
        test_private_dir();
        test_epoch();
        test_uuid();
        test_missing_tool();
        if (have_tool("mksquashfs")) {
                test_made();
                test_files_only(have_tool("mkfs.erofs"));
                test_failed();
        } else {
                teardown();
                TEST_SKIP("needs mksquashfs (squashfs-tools)");
        }
        teardown();
        TESTS_DONE();
}
