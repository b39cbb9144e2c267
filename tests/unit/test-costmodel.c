/* SPDX-License-Identifier: MIT */
/* The cost model and the report's analysis, without any I/O (the reference
 * profiles are read from the source tree). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/costmodel.h"
#include "util/json.h"
#include "report/report.h"
#include "replay/policy.h"
#include "util/util.h"
#include "tests.h"

#define K 1024ULL
#define M (1024ULL * 1024)
#define G (1024ULL * 1024 * 1024)

static void load_reference(const char *name, struct cost_profile *p)
{
        const char *src = getenv("SRCDIR") ? getenv("SRCDIR") : ".";
        _cleanup_free_ char *path = NULL, *text = NULL;

        CHECK(asprintf(&path, "%s/profiles/%s.json", src, name) > 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        CHECK_EQ(cost_profile_parse(text, name, p), 0);
}

static void test_json_reader(void)
{
        struct jv *v = NULL;
        static const char *const bad[] = {
                "", "{", "{\"a\":}", "[1,]", "{\"a\" 1}", "tru", "\"abc", "{\"a\":1}x", "01x", "{\"a\":\"\\q\"}",
                "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
                "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "1e999", "0x10", "01", "1.", ".5", "+1", "-", "1e", "1e+", "inf",
                "NaN", "[1 2]",
        };

        CHECK_EQ(jv_parse("-0.5E-2", &v), 0);
        CHECK(v && jv_number(v, 0) == -0.005);
        jv_free(v);
        CHECK_EQ(jv_parse(" {\"a\": [1, 2.5e3, -4], \"b\": {\"c\": true}, \"s\": \"x\\u0041\\n\", \"n\": null} ", &v), 0);
        CHECK(v && v->type == JV_OBJECT && v->n_items == 4);
        CHECK(jv_number(&jv_get(v, "a")->items[1], 0) == 2500);
        CHECK(jv_number(&jv_get(v, "a")->items[2], 0) == -4);
        CHECK(jv_get(jv_get(v, "b"), "c")->b);
        CHECK(strcmp(jv_get(v, "s")->s, "xA\n") == 0);
        CHECK(jv_get(v, "n")->type == JV_NULL);
        CHECK(jv_get(v, "missing") == NULL);
        CHECK(jv_number(jv_get(v, "s"), 7) == 7);
        jv_free(v);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                v = NULL;
                CHECK_EQ(jv_parse(bad[i], &v), -EINVAL);
                CHECK(v == NULL);
        }
}

/* Every prefix and every single-byte change of a real profile: parsed or
 * refused, never read out of bounds (the sanitizer and valgrind runs). */
static void test_profile_damage(void)
{
        const char *src = getenv("SRCDIR") ? getenv("SRCDIR") : ".";
        _cleanup_free_ char *path = NULL, *text = NULL;
        struct cost_profile p;
        size_t n, refused = 0;

        CHECK(asprintf(&path, "%s/profiles/hdd-7200.json", src) > 0);
        CHECK_EQ(read_small_file(path, &text, 1 << 20), 0);
        n = strlen(text);
        for (size_t i = 0; i + 1 < n; i++) {
                char *cut = strndup(text, i);
                refused += cost_profile_parse(cut, "cut", &p) == -EINVAL;
                free(cut);
        }
        CHECK_EQ(refused, n - 1);      /* every prefix short of the closing brace refused */
        for (size_t i = 0; i < n; i++) {
                static const char flips[] = { '"', '{', '}', '[', ']', ',', ':', '\\', '0', 'x', '\0' };
                for (size_t k = 0; k < ARRAY_SIZE(flips); k++) {
                        char *t = strdup(text);
                        t[i] = flips[k];
                        int r = cost_profile_parse(t, "flip", &p);
                        CHECK(r == 0 || r == -EINVAL);
                        if (r == 0)
                                CHECK(p.lat_us > 0 && p.seq_bps > 0);
                        free(t);
                }
        }
}

static void test_profile_parse(void)
{
        struct cost_profile p;

        load_reference("hdd-7200", &p);
        CHECK(p.rotational);
        CHECK(p.lat_us == 13000);
        CHECK(p.seq_bps == 150e6);
        CHECK_EQ(p.n_seek, 4);
        CHECK(!p.remote);
        load_reference("share-2ms", &p);
        CHECK(p.remote);
        CHECK(p.open_stat_us == 4000);
        load_reference("nvme", &p);
        CHECK(!p.rotational);
        CHECK(p.iops[3] > p.iops[0]);
        /* refused: no latency, descending seek distances, not an object */
        CHECK_EQ(cost_profile_parse("{\"sequential_mbps\": 100}", "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 100, \"sequential_mbps\": 100, \"seek_cost\": ["
                                    "{\"distance_bytes\": 100, \"latency_us\": 5}, "
                                    "{\"distance_bytes\": 50, \"latency_us\": 6}]}", "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("[1]", "x", &p), -EINVAL);
        /* a seek distance under a byte, a rate that makes every read take forever */
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 100, \"sequential_mbps\": 100, \"seek_cost\": ["
                                    "{\"distance_bytes\": 0.5, \"latency_us\": 5}]}", "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 100, \"sequential_mbps\": 1e-300}", "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 1e-300, \"sequential_mbps\": 100}", "x", &p), -EINVAL);
        /* a probe of a read-only directory: metadata only, no reads to cost */
        CHECK_EQ(cost_profile_parse("{\"metadata\": {\"open_stat_us\": 4000}}", "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": -1, \"sequential_mbps\": 100}", "x", &p), -EINVAL);
        /* a share's client model: named, refused when unknown or no
         * string, strict when none is named */
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000}, \"client\": \"nfs\"}", "n", &p), 0);
        CHECK(p.remote);
        CHECK(strcmp(p.client.name, "nfs") == 0);
        CHECK(p.client.names_s == 30 && p.client.file_attrs_s == 3 && p.client.dir_attrs_s == 30);
        CHECK(p.client.negative_s == 30 && p.client.listing_attrs && p.client.access_cached);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"client\": \"smb\"}",
                                    "m", &p), 0);
        CHECK(strcmp(p.client.name, "smb") == 0);
        CHECK(p.client.negative_s == 1 && p.client.listing_attrs);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"client\": \"afs\"}",
                                    "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"client\": 1}", "x", &p),
                 -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"client\": \"\"}",
                                    "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000}}", "s", &p), 0);
        CHECK(strcmp(p.client.name, "strict") == 0);
        CHECK(p.client.names_s == 1 && p.client.negative_s == 0);
        CHECK(!p.client.listing_attrs && !p.client.access_cached);
        {
                struct cost_client c;
                CHECK_EQ(cost_client_by_name("NFS", &c), -EINVAL);
                CHECK_EQ(cost_client_by_name("strict", &c), 0);
                CHECK(strcmp(c.name, "strict") == 0);
        }
}

/* A share's round trips at depth: as many as are in flight where the probe
 * measured nothing; else what it measured opening files at once (files a
 * second x one open + stat's time), between its depths in proportion,
 * beyond the deepest as efficient as there, never more than in flight. */
static void test_parallel(void)
{
        struct cost_profile p;

        load_reference("share-2ms", &p);
        CHECK(cost_parallel(&p, 8) == 8 && cost_parallel(&p, 32) == 32 && cost_parallel(&p, 1) == 1);
        /* 4 ms an open + stat: 1 000 a second at 8 is 4 at once; 4 000 at
         * 32 is 16; 50 000 at 64 would be 200, more than 64 */
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000, \"parallel\": [{\"depth\": 8, \"open_stat_per_s\": 1000}, "
                                    "{\"depth\": 32, \"open_stat_per_s\": 4000}, "
                                    "{\"depth\": 64, \"open_stat_per_s\": 50000}]}}", "p", &p), 0);
        CHECK_EQ(p.n_par, 3);
        CHECK(cost_parallel(&p, 1) == 1);
        CHECK(cost_parallel(&p, 8) == 4);
        CHECK(cost_parallel(&p, 32) == 16);
        CHECK(cost_parallel(&p, 20) == 10);             /* halfway from 8 to 32 */
        CHECK(cost_parallel(&p, 64) == 64);
        CHECK(cost_parallel(&p, 128) == 128);           /* as efficient as at 64 */
        CHECK(fabs(cost_parallel(&p, 4) - (1 + 3.0 * 3 / 7)) < 1e-9);   /* from (1, 1) to (8, 4) */
        /* slower at depth than one at a time: one at a time (at 8; at 32
         * no more than 4 times that) */
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000, \"parallel\": [{\"depth\": 8, \"open_stat_per_s\": 10}]}}",
                                    "q", &p), 0);
        CHECK(cost_parallel(&p, 8) == 1 && cost_parallel(&p, 32) == 4);
        /* 8 measured only, 6 of 8 overlap: 24 of 32 */
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000, \"parallel\": [{\"depth\": 8, \"open_stat_per_s\": 1500}]}}",
                                    "r", &p), 0);
        CHECK(cost_parallel(&p, 32) == 24);
        /* refused: depths not ascending, a depth under 2, no rate */
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000, \"parallel\": [{\"depth\": 32, \"open_stat_per_s\": 10}, "
                                    "{\"depth\": 8, \"open_stat_per_s\": 10}]}}", "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000, \"parallel\": [{\"depth\": 1, \"open_stat_per_s\": 10}]}}",
                                    "x", &p), -EINVAL);
        CHECK_EQ(cost_profile_parse("{\"latency_qd1_us\": 2000, \"sequential_mbps\": 117, \"metadata\": "
                                    "{\"open_stat_us\": 4000, \"parallel\": [{\"depth\": 8}]}}", "x", &p), -EINVAL);
}

/* docs/FIELD.md: a boot read 226 MB at 3 113 places on a 7200 rpm disk; ~20 ms
 * per move predicted 65 s, 63.4 s were measured.  The same bytes in one
 * sweep take a few seconds. */
static void test_origin_arithmetic(void)
{
        struct cost_profile p;
        const size_t n = 3113;
        const uint64_t total = 226000000, disk = 500000000000ULL;
        struct cost_req *q = calloc(n, sizeof(*q));
        struct cost_result c;
        uint64_t left = total, x = 88172645463325252ULL;

        load_reference("hdd-7200", &p);
        for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;  /* xorshift: scattered over the disk */
                q[i].pos = x % (disk - M) / 4096 * 4096;
                q[i].len = i + 1 < n ? total / n / 4096 * 4096 : left;
                left -= q[i].len;
        }
        cost_estimate(&p, q, n, 1, NULL, &c);
        CHECK_EQ(c.requests, n);
        CHECK_EQ(c.bytes, total);
        CHECK_EQ(c.moves, n);
        /* "about a minute": between 30 and 90 s (the reference averages
         * 13 ms a random read; the field report's older disk took 20) */
        CHECK(c.seconds > 30 && c.seconds < 90);
        CHECK(c.positioning_s > 20 * c.transfer_s);
        fprintf(stderr, "origin: %zu scattered reads, 226 MB: %.1f s\n", n, c.seconds);

        /* the field report's own arithmetic: ~20 ms per head move x 3 113 =
         * 65 s predicted (63.4 s measured): a profile of that disk, positions
         * not known */
        {
                struct cost_profile old = { .lat_us = 20000, .seq_bps = 100e6, .rotational = true };
                struct cost_req *u = calloc(n, sizeof(*u));
                for (size_t i = 0; i < n; i++)
                        u[i] = (struct cost_req){ COST_POS_UNKNOWN, q[i].len, 0 };
                cost_estimate(&old, u, n, 1, NULL, &c);
                CHECK(fabs(c.seconds - (3113 * 0.020 + 2.26)) < 0.01);
                CHECK(c.seconds > 63.4 * 0.95 && c.seconds < 65 * 1.05);
                free(u);
        }

        /* one sweep: the same bytes laid out contiguously */
        for (size_t i = 0; i < n; i++)
                q[i].pos = i == 0 ? 1000 * M : q[i - 1].pos + q[i - 1].len;
        cost_estimate(&p, q, n, 1, NULL, &c);
        CHECK_EQ(c.moves, 1);
        CHECK(c.seconds > 1 && c.seconds < 5);
        fprintf(stderr, "origin: one sweep: %.2f s\n", c.seconds);
        free(q);
}

/* What a request at pos costs before its transfer, the previous one having
 * ended at prev_end after a seek there. */
static double pos_us(const struct cost_profile *p, uint64_t prev_end, uint64_t pos)
{
        struct cost_head h = { prev_end, prev_end };
        double a, b;

        cost_request(p, &h, pos, 4096, &a, &b);
        return a;
}

static void test_positioning(void)
{
        struct cost_profile hdd, nvme, share;
        struct cost_req q[64];
        struct cost_result c1, c32;

        load_reference("hdd-7200", &hdd);
        load_reference("nvme", &nvme);
        load_reference("share-2ms", &share);
        /* rotational: contiguous costs nothing, a short forward skip its bytes,
         * distance costs more, unknown positions cost the average, what the
         * drive streamed since its last seek is in its buffer */
        CHECK(pos_us(&hdd, 10 * M, 10 * M) == 0);
        CHECK(fabs(pos_us(&hdd, 10 * M, 10 * M + 150000) - 1000) < 1);
        CHECK(pos_us(&hdd, 0, 100 * G) > pos_us(&hdd, 0, 10 * M));
        CHECK(pos_us(&hdd, 100 * G, 0) == pos_us(&hdd, 0, 100 * G));
        CHECK(pos_us(&hdd, COST_POS_UNKNOWN, 5) == hdd.lat_us);
        CHECK(pos_us(&hdd, 4096, COST_POS_UNKNOWN) == hdd.lat_us);
        CHECK(pos_us(&hdd, 0, 1000 * G) == 16000);     /* past the curve: its end */
        {
                struct cost_head h = COST_HEAD_INIT;
                double a, b;
                cost_request(&hdd, &h, 50 * G, 4 * M, &a, &b);          /* a seek, then 4 MiB streamed */
                CHECK(a == hdd.lat_us);
                CHECK(fabs(b - 4 * M / 150e6 * 1e6) < 1);
                cost_request(&hdd, &h, 50 * G + 1 * M, 64 * K, &a, &b);  /* behind the head, buffered */
                CHECK(a == 0);
                CHECK_EQ(h.at, 50 * G + 4 * M);
                cost_request(&hdd, &h, 50 * G - 64 * K, 4 * K, &a, &b); /* before the stream: a seek */
                CHECK(a > 500);
                CHECK_EQ(h.stream_lo, 50 * G - 64 * K);
        }
        {
                /* a request from inside the buffer on past the head: no move */
                struct cost_head h = COST_HEAD_INIT;
                double a, b;
                cost_request(&hdd, &h, 50 * G, 1 * M, &a, &b);
                cost_request(&hdd, &h, 50 * G + 512 * K, 1 * M, &a, &b);
                CHECK(a == 0);
                CHECK_EQ(h.at, 50 * G + 1536 * K);
                CHECK_EQ(h.stream_lo, 50 * G);
        }
        {
                /* a run of 10 requests: on a disk one stream, elsewhere 10 commands */
                struct cost_req run = { 10 * G, 10 * 128 * K, 128 * K };
                struct cost_head h = COST_HEAD_INIT;
                double a, b;
                CHECK_EQ(cost_run(&nvme, &h, &run, &a, &b), 10);
                CHECK(fabs(a - 10 * nvme.lat_us) < 1e-6);
                h = COST_HEAD_INIT;
                CHECK_EQ(cost_run(&hdd, &h, &run, &a, &b), 10);
                CHECK(a == hdd.lat_us);
        }
        /* solid: every request pays the same, wherever it is */
        CHECK(pos_us(&nvme, 0, 100 * G) == nvme.lat_us);
        CHECK(pos_us(&nvme, 10 * M, 10 * M) == nvme.lat_us);

        /* queue depth helps a solid device, not a disk's head */
        for (size_t i = 0; i < ARRAY_SIZE(q); i++)
                q[i] = (struct cost_req){ (uint64_t)i * 7 * G % (400 * G), 4 * K };
        cost_estimate(&nvme, q, ARRAY_SIZE(q), 1, NULL, &c1);
        cost_estimate(&nvme, q, ARRAY_SIZE(q), 32, NULL, &c32);
        CHECK(c32.seconds < c1.seconds / 4);
        cost_estimate(&hdd, q, ARRAY_SIZE(q), 1, NULL, &c1);
        cost_estimate(&hdd, q, ARRAY_SIZE(q), 32, NULL, &c32);
        CHECK(c32.seconds == c1.seconds);
        /* a share pays a round trip per open too, fewer in parallel */
        {
                struct cost_meta one = { 100, 50, 1 }, many = { 100, 50, 16 };
                cost_estimate(&share, q, ARRAY_SIZE(q), 1, &one, &c1);
                CHECK(fabs(c1.metadata_s - (100 * 4000e-6 + 50 * 2000e-6)) < 1e-9);
                CHECK(c1.seconds > 64 * 2000e-6 + c1.metadata_s - 1e-9);
                cost_estimate(&share, q, ARRAY_SIZE(q), 16, &many, &c32);
                CHECK(c32.seconds < c1.seconds / 4);
                /* a local device's metadata is in its requests */
                cost_estimate(&nvme, q, ARRAY_SIZE(q), 1, &one, &c32);
                CHECK(c32.metadata_s == 0);
        }
        cost_estimate(&hdd, NULL, 0, 1, NULL, &c1);
        CHECK(c1.seconds == 0);
}

/* Two files at opposite ends of a disk, read alternately in 4 KiB pieces
 * (the Vista registry case), plus some metadata. */
/* The report's prediction with the replay readset would make for a
 * device of the profile's kind (replay_plan(), as readset report does). */
static int predict(struct report *r, const struct readset *rs, const struct rp_layout *lay,
                   const struct cost_profile *p, bool main_only, bool shares, struct rp_scenarios *ret)
{
        struct replay_options o;
        struct device_profile dev;

        replay_options_init(&o);
        if (p->rotational)
                device_profile_rotational(&dev);
        else
                device_profile_solid(&dev);
        return report_predict_replay(r, rs, lay, p, &o, &dev, main_only, shares, ret);
}

static void test_report(void)
{
        struct readset *rs = readset_new();
        struct rs_file *a = readset_add_file(rs, "/w/hive-a", 1, 1);
        struct rs_file *b = readset_add_file(rs, "/w/hive-b", 1, 2);
        struct rs_file *m = readset_add_file(rs, "/dev/sda1", 1, 0);
        struct rp_extent ea[2] = { { 0, 1 * G, 512 * K }, { 512 * K, 3 * G, 512 * K } };
        struct rp_extent eb = { 0, 400 * G, 1 * M };
        struct rp_layout lay[3] = { { ea, 2, true }, { &eb, 1, true }, { NULL, 0, false } };
        struct report *r = NULL;
        struct cost_profile hdd, nvme;
        struct rp_scenarios s;

        a->kind = b->kind = RS_FILE_REGULAR;
        a->size = b->size = 1 * M;
        m->kind = RS_FILE_BLOCKDEV;
        for (uint64_t i = 0; i < 100; i++) {
                if (i < 64)
                        CHECK_EQ(readset_file_add_range(a, i * 8 * K, 4 * K, 10 * i, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
                CHECK_EQ(readset_file_add_range(b, i * 8 * K, 4 * K, 10 * i + 5, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
        }
        /* a range across a's two extents becomes two pieces */
        CHECK_EQ(readset_file_add_range(a, 508 * K, 8 * K, 2000, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
        CHECK_EQ(readset_file_add_range(m, 2 * G, 4 * K, 3000, RS_RANGE_FILLED), 0);
        CHECK_EQ(readset_file_add_range(m, 2 * G + 64 * K, 4 * K, 3001, RS_RANGE_FILLED), 0);

        CHECK_EQ(report_build(rs, lay, 128 * K, &r), 0);
        CHECK_EQ(r->n_pieces, 168);
        CHECK_EQ(r->meta_ranges, 2);
        CHECK_EQ(r->data_ranges, 165);
        CHECK_EQ(r->files[0].extents_touched, 2);
        CHECK_EQ(r->files[1].extents_touched, 1);
        CHECK_EQ(r->extents_touched, 3);
        CHECK_EQ(r->small_ranges, 167);
        CHECK_EQ(r->pos_min, 1 * G);
        CHECK_EQ(r->pos_max, 400 * G + 796 * K);
        /* first-access order: a, b, a, b ... then b alone, the split range, the metadata */
        CHECK_EQ(r->pieces[0].file, 0);
        CHECK_EQ(r->pieces[1].file, 1);
        CHECK_EQ(r->pieces[164].phys, 1 * G + 508 * K);
        CHECK_EQ(r->pieces[164].length, 4 * K);
        CHECK_EQ(r->pieces[165].phys, 3 * G);
        CHECK_EQ(r->pieces[165].offset, 512 * K);
        CHECK_EQ(r->pieces[166].phys, 2 * G);
        CHECK_EQ(r->hist[RP_HIST_FAR], 128);     /* a <-> b */
        CHECK_EQ(r->hist[RP_HIST_1M], 37);       /* b alone, and metadata to metadata */
        CHECK_EQ(r->hist[RP_HIST_4G], 2);        /* across a's extents, then to the metadata */
        CHECK_EQ(r->hist[RP_HIST_CONTIG], 0);
        CHECK_EQ(r->hist[RP_HIST_UNKNOWN], 0);
        CHECK_EQ(r->alt.a, 0);
        CHECK_EQ(r->alt.b, 1);
        CHECK_EQ(r->alt.switches, 128);
        CHECK(r->alt.distance > 390 * G);

        load_reference("hdd-7200", &hdd);
        load_reference("nvme", &nvme);
        CHECK_EQ(predict(r, rs, lay, &hdd, true, true, &s), 0);
        CHECK_EQ(s.plain.requests, 168);
        /* alternating across the disk: every request a full stroke */
        CHECK(s.plain.seconds > 128 * 0.012);
        /* the replay reads each file in one sweep: a few moves */
        CHECK(s.replay.seconds < s.plain.seconds / 20);
        CHECK(s.layout.seconds <= s.replay.seconds);
        CHECK(s.sequential.seconds <= s.layout.seconds);
        CHECK(fabs(r->files[0].plain_s + r->files[1].plain_s + r->files[2].plain_s - s.plain.seconds) < 1e-6);
        CHECK_EQ(predict(r, rs, lay, &nvme, true, false, &s), 0);
        CHECK(s.replay.seconds < s.plain.seconds);
        report_free(r);

        /* no layouts: positions unknown, every piece a random read */
        CHECK_EQ(report_build(rs, NULL, 128 * K, &r), 0);
        CHECK_EQ(r->n_pieces, 167);
        CHECK_EQ(r->hist[RP_HIST_UNKNOWN], 165);
        CHECK_EQ(r->hist[RP_HIST_1M], 1);        /* the metadata's positions are known */
        CHECK_EQ(r->alt.switches, 0);
        CHECK_EQ(predict(r, rs, NULL, &hdd, false, false, &s), 0);
        CHECK(fabs(s.plain.positioning_s - 166 * 0.013) < 0.001);
        report_free(r);

        /* a library on another device: no position, left out of the main
         * device's estimate, counted as a random read on the reference */
        {
                struct rs_file *lib = readset_add_file(rs, "/usr/lib/libx.so", 2, 9);
                struct rp_layout lay4[4] = { lay[0], lay[1], lay[2], { &eb, 1, true } };
                struct rp_scenarios all, main_only;
                lib->kind = RS_FILE_REGULAR;
                lib->size = 1 * M;
                CHECK_EQ(readset_file_add_range(lib, 0, 64 * K, 1, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
                CHECK_EQ(report_build(rs, lay4, 128 * K, &r), 0);
                CHECK_EQ(r->main_dev, 1);
                CHECK_EQ(r->other_dev_pieces, 1);
                CHECK_EQ(r->other_dev_bytes, 64 * K);
                CHECK_EQ(r->pos_max, 400 * G + 796 * K);   /* its extent (at 400 G) does not count */
                CHECK_EQ(predict(r, rs, lay4, &hdd, true, false, &main_only), 0);
                CHECK_EQ(predict(r, rs, lay4, &hdd, false, false, &all), 0);
                CHECK_EQ(main_only.plain.requests, 168);
                CHECK_EQ(all.plain.requests, 169);
                CHECK_EQ(all.plain.bytes - main_only.plain.bytes, 64 * K);
                /* what the replay reads is the plan's, on every device */
                CHECK_EQ(all.replay_bytes, main_only.replay_bytes);
                CHECK_EQ(main_only.replay_bytes - main_only.replay.bytes, 64 * K);
                CHECK(all.plain.seconds > main_only.plain.seconds + 0.010);
                report_free(r);
        }
        readset_free(rs);
}

/* Files not written back yet (delayed allocation: a known map with no
 * extent in it) or with no map at all: the replay is never predicted
 * slower than the plain start for want of their positions.  A fresh
 * checkout's build: many files read whole, a few of them large; with some
 * metadata (which the replay sorts) or none (nothing the replay is seen
 * to gain: its own overhead would make it slower). */
static void no_positions(bool meta)
{
        struct readset *rs = readset_new();
        struct rp_layout *pending = calloc(64, sizeof(*pending));
        struct cost_profile hdd;
        uint64_t t = 0;

        CHECK(pending != NULL);
        /* (a pointer into rs->files moves as files are added) */
        if (meta)
                readset_add_file(rs, "/dev/sda1", 1, 0)->kind = RS_FILE_BLOCKDEV;
        for (uint64_t i = 0; i < 60; i++) {
                char path[64];
                struct rs_file *f;
                uint64_t size = i % 12 == 0 ? 3 * M : (4 + i % 7 * 4) * K;
                snprintf(path, sizeof(path), "/src/tree/f%02" PRIu64, i);
                f = readset_add_file(rs, path, 1, 100 + i);
                f->kind = RS_FILE_REGULAR;
                f->size = size;
                CHECK_EQ(readset_file_add_range(f, 0, size, t += 50, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
                if (meta && i % 4 == 0)
                        CHECK_EQ(readset_file_add_range(&rs->files[0], (1 + i) * M, 4 * K, t += 10, RS_RANGE_FILLED), 0);
        }
        for (size_t i = 0; i < rs->n_files; i++)
                pending[i].known = rs->files[i].kind == RS_FILE_REGULAR;
        load_reference("hdd-7200", &hdd);
        for (int k = 0; k < 2; k++) {
                struct rp_layout *lay = k == 0 ? pending : NULL;
                struct report *r = NULL;
                struct rp_scenarios s;
                CHECK_EQ(report_build(rs, lay, 128 * K, &r), 0);
                CHECK_EQ(predict(r, rs, lay, &hdd, true, false, &s), 0);
                CHECK(s.replay.seconds <= s.plain.seconds);
                /* no more seeks than the plain start's: not one per piece */
                CHECK(s.replay.seeks <= s.plain.seeks);
                CHECK_EQ(s.replay_unpositioned_bytes, s.replay.bytes - (meta ? 15 * 4 * K : 0));
                report_free(r);
        }
        free(pending);
        readset_free(rs);
}

static void test_no_positions(void)
{
        no_positions(true);
        no_positions(false);
}

int main(void)
{
        test_json_reader();
        test_profile_parse();
        test_profile_damage();
        test_parallel();
        test_origin_arithmetic();
        test_positioning();
        test_report();
        test_no_positions();
        TESTS_DONE();
}
