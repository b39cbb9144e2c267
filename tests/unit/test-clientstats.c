/* SPDX-License-Identifier: MIT */
/* record/clientstats.c: the network clients' counters from sample texts of
 * NFS's mountstats, CIFS's Stats and the emulator's file (this kernel has
 * neither NFS nor CIFS: tests/fixtures/clientstats/, written from their
 * documented formats); cut or damaged text gives an error, never a crash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/clientstats.h"
#include "util/util.h"
#include "tests.h"

static char *fixture(const char *name)
{
        const char *src = getenv("SRCDIR") ? getenv("SRCDIR") : ".";
        char path[4096];
        char *text = NULL;

        snprintf(path, sizeof(path), "%s/tests/fixtures/clientstats/%s", src, name);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        return text ? text : strdup("");
}

static void test_nfs(void)
{
        char *text = fixture("mountstats");
        uint64_t v = 0;

        /* v4: the ops column summed (3410, which xprt's sends agree with);
         * the mount point's \040 is a space */
        CHECK_EQ(clientstats_parse_nfs(text, "/home/shared dir", &v), 0);
        CHECK_EQ(v, 3410);
        CHECK_EQ(clientstats_parse_nfs(text, "/opt/tools", &v), 0);   /* v3 */
        CHECK_EQ(v, 40);
        CHECK_EQ(clientstats_parse_nfs(text, "/run", &v), -ENOENT);   /* not NFS */
        CHECK_EQ(clientstats_parse_nfs(text, "/opt", &v), -ENOENT);
        CHECK_EQ(clientstats_parse_nfs(text, "/home/shared\\040dir", &v), -ENOENT);
        CHECK_EQ(v, 40);        /* untouched on failure */
        free(text);
}

static void test_nfs_damaged(void)
{
        uint64_t v = 7;

        /* cut before its statistics; an op without a count; a count that is not one */
        CHECK_EQ(clientstats_parse_nfs("device s:/e mounted on /m with fstype nfs statvers=1.1\n\tage:\t3\n",
                                       "/m", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_nfs("device s:/e mounted on /m with fstype nfs\n\tper-op statistics\n", "/m", &v),
                 -EBADMSG);
        CHECK_EQ(clientstats_parse_nfs("device s:/e mounted on /m with fstype nfs\n\tper-op statistics\n"
                                       "\t  NULL: 1 1 0\n\t  READ:\n", "/m", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_nfs("device s:/e mounted on /m with fstype nfs\n\tper-op statistics\n"
                                       "\t  READ: -3 1 0\n", "/m", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_nfs("device s:/e mounted on /m with fstype nfs\n\tper-op statistics\n"
                                       "\t  READ: 18446744073709551615 1\n\t  OPEN: 1 1\n", "/m", &v), -EBADMSG);
        CHECK_EQ(v, 7);
        /* cut in a line of its statistics: what is whole counts */
        CHECK_EQ(clientstats_parse_nfs("device s:/e mounted on /m with fstype nfs4\n\tper-op statistics\n"
                                       "\t  READ: 5 5 0\n\t  OPEN: 3", "/m", &v), 0);
        CHECK_EQ(v, 8);
}

static void test_cifs(void)
{
        char *text = fixture("cifs-stats"), *old = fixture("cifs-stats-old");
        uint64_t v = 0;

        CHECK_EQ(clientstats_parse_cifs(text, "//fileserver/builds", &v), 0);
        CHECK_EQ(v, 6327);
        /* a mount of a directory of the share uses the share's counters */
        CHECK_EQ(clientstats_parse_cifs(text, "//fileserver/builds/x86/release", &v), 0);
        CHECK_EQ(v, 6327);
        CHECK_EQ(clientstats_parse_cifs(text, "//10.1.2.3/home", &v), 0);   /* (names' case is not kept) */
        CHECK_EQ(v, 91);
        CHECK_EQ(clientstats_parse_cifs(text, "//fileserver/build", &v), -ENOENT);
        CHECK_EQ(clientstats_parse_cifs(text, "//otherserver/builds", &v), -ENOENT);
        /* no "SMBs": the commands' counts, summed */
        CHECK_EQ(clientstats_parse_cifs(old, "//oldbox/data", &v), 0);
        CHECK_EQ(v, 51);
        CHECK_EQ(clientstats_parse_cifs("1) \\\\s\\x\nSMBs: 12x\n", "//s/x", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_cifs("1) \\\\s\\x\nBytes read: 0\n2) \\\\s\\y\nSMBs: 3\n", "//s/x", &v), -EBADMSG);
        CHECK_EQ(v, 51);
        free(text);
        free(old);
}

static void test_slowdev(void)
{
        char *text = fixture("slowdev-stats");
        uint64_t v = 0;

        CHECK_EQ(clientstats_parse_slowdev(text, &v), 0);
        CHECK_EQ(v, 4123);
        CHECK_EQ(clientstats_parse_slowdev("client nfs\nround_trips\n", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_slowdev("round_trips 12 13\n", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_slowdev("round_trips_x 12\n", &v), -EBADMSG);
        CHECK_EQ(clientstats_parse_slowdev("", &v), -EBADMSG);
        CHECK_EQ(v, 4123);
        free(text);
}

/* Every prefix of every sample, and each with one byte changed: an error
 * or a count, never a crash nor a read past the text (valgrind, ASan). */
static void test_cut(void)
{
        const char *names[] = { "mountstats", "cifs-stats", "cifs-stats-old", "slowdev-stats" };

        for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
                char *text = fixture(names[k]);
                size_t n = strlen(text);

                for (size_t cut = 0; cut <= n; cut += 3) {
                        char *t = strndup(text, cut);
                        uint64_t v;
                        int r;

                        r = clientstats_parse_nfs(t, "/home/shared dir", &v);
                        CHECK(r == 0 || r == -ENOENT || r == -EBADMSG);
                        r = clientstats_parse_cifs(t, "//fileserver/builds", &v);
                        CHECK(r == 0 || r == -ENOENT || r == -EBADMSG);
                        r = clientstats_parse_slowdev(t, &v);
                        CHECK(r == 0 || r == -EBADMSG);
                        if (cut > 0) {     /* (a byte of the text, not its end) */
                                t[cut / 2] = (char)(t[cut / 2] ^ 0x21);
                                r = clientstats_parse_nfs(t, "/opt/tools", &v);
                                CHECK(r == 0 || r == -ENOENT || r == -EBADMSG);
                                r = clientstats_parse_cifs(t, "//10.1.2.3/Home", &v);
                                CHECK(r == 0 || r == -ENOENT || r == -EBADMSG);
                        }
                        free(t);
                }
                free(text);
        }
}

static void test_kind(void)
{
        struct mount_ent m = { .mnt = "/m", .fstype = "nfs4", .source = "s:/e", .super = "rw" };

        CHECK_EQ(clientstats_kind(&m), RS_CLIENT_NFS);
        m.fstype = "smb3";
        CHECK_EQ(clientstats_kind(&m), RS_CLIENT_CIFS);
        m.fstype = "fuse.slowdev-share";
        m.super = "ro,user_id=0,group_id=0,allow_other";
        CHECK_EQ(clientstats_kind(&m), RS_CLIENT_SLOWDEV);
        /* a FUSE daemon a user mounted, whatever it calls itself, is never read */
        m.super = "ro,user_id=1000,group_id=1000";
        CHECK_EQ(clientstats_kind(&m), 0);
        m.fstype = "fuse";
        m.super = "ro,user_id=0,group_id=0";
        CHECK_EQ(clientstats_kind(&m), 0);
        m.fstype = "ext4";
        CHECK_EQ(clientstats_kind(&m), 0);
}

/* after - before, less what readset's own opens cost there */
static void test_store(void)
{
        struct clientstats_mount mm[3] = {
                { .mnt = "/s", .kind = RS_CLIENT_SLOWDEV, .have_before = true, .have_after = true,
                  .before = 100, .after = 135, .opens = 8 },
                { .mnt = "/n", .kind = RS_CLIENT_NFS, .have_before = true, .have_after = false, .before = 1 },
                { .mnt = "/c", .kind = RS_CLIENT_CIFS, .have_before = true, .have_after = true,
                  .before = 50, .after = 40 },  /* reset meanwhile */
        };
        struct clientstats s = { mm, 3 };
        struct readset *rs = readset_new();

        CHECK_EQ(clientstats_store(&s, rs), 0);
        CHECK_EQ(rs->n_clients, 1);
        if (rs->n_clients == 1) {
                CHECK(strcmp(rs->clients[0].mount, "/s") == 0);
                CHECK_EQ(rs->clients[0].requests, 27);
        }
        readset_free(rs);
}

int main(void)
{
        test_nfs();
        test_nfs_damaged();
        test_cifs();
        test_slowdev();
        test_cut();
        test_kind();
        test_store();
        TESTS_DONE();
}
