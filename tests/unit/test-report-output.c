/* SPDX-License-Identifier: MIT */
/* What readset report writes (report/summary.h, render.h, svg.h): the
 * rankings and findings of a small read set, its JSON as util/json.c's
 * reader reads it back, its text, and an SVG that is well formed whatever
 * the paths hold. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "report/render.h"
#include "report/summary.h"
#include "report/svg.h"
#include "tests.h"
#include "util/json.h"
#include "util/util.h"

#define K 1024ULL
#define G (1024ULL * 1024 * 1024)

/* big: 10 reads of 64 KiB; many: 50 of 4 KiB, in another directory
 * whose name XML and JSON must escape; ahead: one page read ahead only;
 * one that could not be named; one read once, in the directory that comes
 * first by name. */
static struct readset *sample(void)
{
        struct readset *rs = readset_new();
        struct rs_file *big, *many, *ahead, *unnamed, *first;

        CHECK(rs != NULL);
        if (!rs)
                return NULL;
        rs->page_size = 4096;
        rs->command = strdup("start it");
        big = readset_add_file(rs, "/z1/big", 1, 1);
        many = readset_add_file(rs, "/d2<&>\"q/many", 1, 2);
        ahead = readset_add_file(rs, "/z1/ahead", 1, 3);
        unnamed = readset_add_file(rs, "1:5:99", 1, 99);
        first = readset_add_file(rs, "/a0/one", 1, 4);
        CHECK(big && many && ahead && unnamed && first);
        if (!big || !many || !ahead || !unnamed || !first)
                return rs;
        big->size = many->size = ahead->size = first->size = 1 << 20;
        CHECK_EQ(readset_file_add_range(first, 0, 4 * K, 7002, RS_RANGE_ACCESSED), 0);
        unnamed->kind = RS_FILE_UNRESOLVED;
        for (uint64_t i = 0; i < 10; i++)
                CHECK_EQ(readset_file_add_range(big, i * 64 * K, 64 * K, 100 * i, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
        for (uint64_t i = 0; i < 50; i++)
                CHECK_EQ(readset_file_add_range(many, i * 8 * K, 4 * K, 100 * i + 50, RS_RANGE_ACCESSED | RS_RANGE_FILLED), 0);
        CHECK_EQ(readset_file_add_range(ahead, 0, 4 * K, 7000, RS_RANGE_FILLED), 0);
        CHECK_EQ(readset_file_add_range(unnamed, 0, 4 * K, 7001, RS_RANGE_ACCESSED), 0);
        return rs;
}

static bool has_finding(const struct report_summary *s, const char *part)
{
        for (size_t i = 0; i < s->n_findings; i++)
                if (strstr(s->findings[i], part))
                        return true;
        return false;
}

static void test_summary(const struct readset *rs, const struct report *r, const struct report_summary *s)
{
        (void)r;
        /* every file ranked, the largest first */
        CHECK_EQ(s->by_bytes[0].file, 0);
        CHECK_EQ(s->by_ranges[0].file, 1);
        for (size_t i = 1; i < rs->n_files; i++) {
                CHECK(s->by_bytes[i - 1].key >= s->by_bytes[i].key);
                CHECK(s->by_ranges[i - 1].key >= s->by_ranges[i].key);
        }
        /* the directories of regular files */
        CHECK_EQ(s->n_dirs, 3);
        if (s->n_dirs == 3) {
                CHECK(strcmp(s->dirs[0].dir, "/z1") == 0);
                CHECK_EQ(s->dirs[0].files, 2);
                CHECK_EQ(s->dirs[0].bytes, 640 * K + 4 * K);
                CHECK(strcmp(s->dirs[s->dir_by_ranges[0]].dir, "/d2<&>\"q") == 0);
                CHECK_EQ(s->dirs[s->dir_by_ranges[0]].ranges, 50);
        }
        /* what is plain from the read set alone */
        CHECK(has_finding(s, "16 KiB or less"));
        CHECK(has_finding(s, "1 file could not be named: replay cannot warm it"));
        CHECK(!has_finding(s, "deleted"));      /* (none was: not said as "0 were") */
        CHECK(!has_finding(s, "read ahead and never used"));
}

static void test_tail_secs(void)
{
        char buf[64], sb[32];

        CHECK(strcmp(rp_tail("/short", 20, buf, sizeof(buf)), "/short") == 0);
        CHECK(strcmp(rp_tail("/a/very/long/path/name", 10, buf, sizeof(buf)), ".../name") != 0);
        CHECK(strcmp(rp_tail("/a/very/long/path/name", 10, buf, sizeof(buf)), "...th/name") == 0);
        CHECK(strcmp(rp_tail("/a\nb", 20, buf, sizeof(buf)), "/a\\x0ab") == 0);
        CHECK(strcmp(format_seconds(0.000012, sb), "12 us") == 0);
        CHECK(strcmp(format_seconds(0.34, sb), "340 ms") == 0);
        CHECK(strcmp(format_seconds(1.25, sb), "1.25 s") == 0);
        CHECK(strcmp(format_seconds(120, sb), "120 s") == 0);
}

static char *write_to_string(void (*fn)(FILE *, const struct report_doc *), const struct report_doc *d)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        CHECK(f != NULL);
        if (!f)
                return NULL;
        fn(f, d);
        fclose(f);
        return text;
}

static void test_json(const struct report_doc *d)
{
        _cleanup_free_ char *text = write_to_string(report_write_json, d);
        _cleanup_jv_ struct jv *v = NULL;
        const struct jv *top, *findings;

        CHECK(text != NULL);
        if (!text)
                return;
        CHECK_EQ(jv_parse(text, &v), 0);
        if (!v)
                return;
        CHECK(strcmp(jv_get(v, "read_set")->s, "/x/sample.readset") == 0);
        CHECK(strcmp(jv_get(v, "command")->s, "start it") == 0);
        CHECK_EQ(jv_number(jv_get(jv_get(v, "totals"), "files"), -1), 5);
        CHECK_EQ(jv_number(jv_get(jv_get(v, "totals"), "ranges"), -1), 63);
        top = jv_get(v, "top_files_by_ranges");
        CHECK(top && top->type == JV_ARRAY && top->n_items == 5);
        if (top && top->n_items >= 1)
                CHECK(strcmp(jv_get(&top->items[0], "path")->s, "/d2<&>\"q/many") == 0);
        top = jv_get(v, "top_files_by_bytes");
        CHECK(top && top->type == JV_ARRAY && top->n_items == 5);
        if (top && top->n_items >= 1)
                CHECK_EQ(jv_number(jv_get(&top->items[0], "bytes"), -1), 640 * K);
        findings = jv_get(v, "findings");
        CHECK(findings && findings->type == JV_ARRAY && findings->n_items == d->sum->n_findings);
        CHECK(jv_get(v, "disk") && jv_get(jv_get(v, "disk"), "moves"));
        CHECK(jv_get(v, "predictions") && jv_get(v, "predictions")->n_items == 0);
}

static void test_text(const struct report_doc *d)
{
        _cleanup_free_ char *text = write_to_string(report_write_text, d);

        CHECK(text != NULL);
        if (!text)
                return;
        CHECK(strncmp(text, "readset report: /x/sample.readset\n", 34) == 0);
        CHECK(strstr(text, "/z1/big") != NULL);
        CHECK(strstr(text, "16 KiB or less") != NULL);
}

/* Well formed: every tag closed in order, no bare '<' or '&' in text or
 * attributes. */
static bool well_formed(const char *s)
{
        char stack[64][32];
        int depth = 0;

        while (*s) {
                if (*s == '&') {
                        if (strncmp(s, "&lt;", 4) && strncmp(s, "&gt;", 4) && strncmp(s, "&amp;", 5) &&
                            strncmp(s, "&quot;", 6) && strncmp(s, "&apos;", 6) && strncmp(s, "&#", 2))
                                return false;
                        s++;
                        continue;
                }
                if (*s != '<') {
                        s++;
                        continue;
                }
                if (s[1] == '?' || s[1] == '!') {
                        const char *end = strchr(s, '>');
                        if (!end)
                                return false;
                        s = end + 1;
                        continue;
                }
                {
                        bool closing = s[1] == '/';
                        const char *name = s + 1 + closing;
                        size_t len = strcspn(name, " \t\n/>");
                        const char *end = name + len;
                        char quote = 0;

                        if (len == 0 || len >= sizeof(stack[0]))
                                return false;
                        /* to the tag's end, past quoted attributes */
                        for (; *end && (quote || *end != '>'); end++) {
                                if (quote && *end == quote)
                                        quote = 0;
                                else if (!quote && (*end == '"' || *end == '\''))
                                        quote = *end;
                                else if (*end == '<')
                                        return false;
                        }
                        if (!*end)
                                return false;
                        if (closing) {
                                if (depth == 0 || strlen(stack[depth - 1]) != len ||
                                    strncmp(stack[depth - 1], name, len) != 0)
                                        return false;
                                depth--;
                        } else if (end[-1] != '/') {
                                if (depth == 64)
                                        return false;
                                memcpy(stack[depth], name, len);
                                stack[depth++][len] = 0;
                        }
                        s = end + 1;
                }
        }
        return depth == 0;
}

static void test_svg(const struct readset *rs, const struct report *r)
{
        char dir[] = "/tmp/readset-test-report.XXXXXX", path[64];
        char *text = NULL;

        CHECK(!well_formed("<svg><g></svg></g>"));
        CHECK(!well_formed("<svg><text>a & b</text></svg>"));
        CHECK(well_formed("<?xml version=\"1.0\"?><svg a=\"<&lt;\"><g/><text>a &amp; b</text></svg>") == false);
        CHECK(well_formed("<?xml version=\"1.0\"?><svg a=\"x&gt;\"><g/><text>a &amp; b</text></svg>"));
        if (!mkdtemp(dir)) {
                CHECK(!"mkdtemp");
                return;
        }
        snprintf(path, sizeof(path), "%s/r.svg", dir);
        CHECK_EQ(report_svg_write(path, rs, r), 0);
        CHECK_EQ(read_small_file(path, &text, 4 << 20), 0);
        if (text) {
                CHECK(strstr(text, "<svg") != NULL);
                CHECK(strstr(text, "</svg>") != NULL);
                CHECK(well_formed(text));
                /* the directory's name is there, escaped */
                CHECK(strstr(text, "/d2&lt;&amp;&gt;") != NULL);
        }
        free(text);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        _cleanup_readset_ struct readset *rs = sample();
        struct rp_extent big_ext = { .logical = 0, .physical = 1 * G, .length = 1 << 20 };
        struct rp_extent many_ext = { .logical = 0, .physical = 3 * G, .length = 1 << 20 };
        struct rp_layout lay[5] = { { &big_ext, 1, true }, { &many_ext, 1, true }, { NULL, 0, false }, { NULL, 0, false },
                                    { NULL, 0, false } };
        struct report *r = NULL;
        struct report_summary s = { 0 };
        struct report_doc d;

        test_tail_secs();
        if (!rs || rs->n_files != 5)
                TESTS_DONE();
        CHECK_EQ(report_build(rs, lay, 128 * K, &r), 0);
        if (!r)
                TESTS_DONE();
        CHECK_EQ(report_summarize(rs, r, NULL, &s), 0);
        test_summary(rs, r, &s);
        d = (struct report_doc){ .path = "/x/sample.readset", .rs = rs, .r = r, .cols = NULL, .n_cols = 0,
                                 .top = 10, .sum = &s };
        test_json(&d);
        test_text(&d);
        test_svg(rs, r);
        report_summary_free(&s);
        report_free(r);
        TESTS_DONE();
}
