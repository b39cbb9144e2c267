/* SPDX-License-Identifier: MIT */
/* report/amplification.c: the client's requests against the lookups made
 * below its mount, as JSON and as text. */
#include <stdlib.h>
#include <string.h>

#include "report/amplification.h"
#include "tests.h"

static struct readset *sample(void)
{
        struct readset *rs = readset_new();

        readset_add_lookup(rs, 1, RS_LOOKUP_OPEN, 0, 9, "/mnt/s");
        readset_add_lookup(rs, 2, RS_LOOKUP_STAT, 0, 9, "/mnt/s/a/b");
        readset_add_lookup(rs, 3, RS_LOOKUP_STAT, -2, 9, "/mnt/s/a/nope");
        readset_add_lookup(rs, 4, RS_LOOKUP_OPEN, 0, 9, "/mnt/sx/c");     /* not below /mnt/s */
        readset_add_lookup(rs, 5, RS_LOOKUP_OPEN, 0, 9, "/usr/lib/x.so");
        readset_add_client(rs, "/mnt/s", RS_CLIENT_SLOWDEV, 30);
        readset_add_client(rs, "/mnt/empty", RS_CLIENT_NFS, 4);
        readset_add_client(rs, "/usr", RS_CLIENT_CIFS, 5);
        return rs;
}

static void test_lookups(void)
{
        struct readset *rs = sample();

        CHECK_EQ(amplification_lookups(rs, "/mnt/s"), 3);
        CHECK_EQ(amplification_lookups(rs, "/mnt/s/"), 3);
        CHECK_EQ(amplification_lookups(rs, "/mnt/sx"), 1);
        CHECK_EQ(amplification_lookups(rs, "/"), 5);
        CHECK_EQ(amplification_lookups(rs, "/mnt/empty"), 0);
        readset_free(rs);
}

static char *written(const struct readset *rs, bool json)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct json j;

        if (json) {
                json_begin(&j, f, false);
                json_object_open(&j, NULL);
                amplification_write_json(&j, rs);
                json_object_close(&j);
                json_end(&j);
        } else
                amplification_write_text(f, rs, 80);
        fclose(f);
        return buf;
}

static void test_output(void)
{
        struct readset *rs = sample();
        char *json = written(rs, true), *text = written(rs, false);

        CHECK(strstr(json, "\"mount\":\"/mnt/s\",\"client\":\"slowdev\",\"requests_sent\":30,\"lookups_made\":3,"
                           "\"amplification\":10}") != NULL);
        /* no lookups: no ratio */
        CHECK(strstr(json, "\"requests_sent\":4,\"lookups_made\":0}") != NULL);
        CHECK(strstr(text, "  /mnt/s (slowdev): 30 for 3 lookups, 10.0x\n") != NULL);
        CHECK(strstr(text, "  /mnt/empty (nfs): 4 for no lookup\n") != NULL);
        CHECK(strstr(text, "  /usr (cifs): 5 for 1 lookup, 5.0x\n") != NULL);
        free(json);
        free(text);
        rs->n_clients = 0;      /* (freed with the rest all the same) */
        json = written(rs, true);
        text = written(rs, false);
        CHECK(strstr(json, "\"client_requests\":[]") != NULL);
        CHECK_EQ(strlen(text), 0);
        rs->n_clients = 3;
        free(json);
        free(text);
        readset_free(rs);
}

/* a long mount point is elided, its figures kept, within 80 columns */
static void test_width(void)
{
        struct readset *rs = readset_new();
        char mount[200] = "/";
        char *text, *line;

        memset(mount + 1, 'd', 150);
        readset_add_client(rs, mount, RS_CLIENT_CIFS, 123456);
        text = written(rs, false);
        line = strstr(text, "  /");
        CHECK(line && strchr(line, '\n') && strchr(line, '\n') - line <= 80);
        CHECK(line && strstr(line, "(cifs): 123456 for no lookup\n"));
        free(text);
        readset_free(rs);
}

int main(void)
{
        test_lookups();
        test_output();
        test_width();
        TESTS_DONE();
}
