/* SPDX-License-Identifier: MIT */
#include "json.h"

#include <inttypes.h>
#include <string.h>

#include "banned.h"

void json_begin(struct json *j, FILE *f, bool pretty)
{
        memset(j, 0, sizeof(*j));
        j->f = f;
        j->pretty = pretty;
}

static void write_escaped(FILE *f, const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        fputc('"', f);
        while (*p) {
                unsigned char c = *p;
                if (c == '"' || c == '\\') {
                        fputc('\\', f);
                        fputc(c, f);
                        p++;
                } else if (c < 0x20 || c == 0x7f) {
                        fprintf(f, "\\u%04x", c);
                        p++;
                } else if (c < 0x80) {
                        fputc(c, f);
                        p++;
                } else {
                        /* Pass valid UTF-8 through; escape stray bytes as U+00XX so
                         * the output stays valid JSON. */
                        /* Pass well-formed UTF-8 through (no overlong forms, no
                         * surrogates, nothing above U+10FFFF); escape any other
                         * byte as U+00XX so that the output stays valid JSON. */
                        int n = (c >= 0xc2 && c <= 0xdf) ? 1 : (c >= 0xe0 && c <= 0xef) ? 2 :
                                (c >= 0xf0 && c <= 0xf4) ? 3 : -1;
                        bool ok = n > 0;
                        for (int i = 1; ok && i <= n; i++)
                                ok = (p[i] & 0xc0) == 0x80;
                        if (ok && c == 0xe0 && p[1] < 0xa0)
                                ok = false;
                        if (ok && c == 0xed && p[1] >= 0xa0)
                                ok = false;
                        if (ok && c == 0xf0 && p[1] < 0x90)
                                ok = false;
                        if (ok && c == 0xf4 && p[1] >= 0x90)
                                ok = false;
                        if (ok) {
                                fwrite(p, 1, (size_t)n + 1, f);
                                p += n + 1;
                        } else {
                                fprintf(f, "\\u%04x", c);
                                p++;
                        }
                }
        }
        fputc('"', f);
}

static void prefix(struct json *j, const char *key)
{
        if (j->need_comma[j->depth])
                fputc(',', j->f);
        if (j->pretty && j->depth > 0) {
                fputc('\n', j->f);
                for (int i = 0; i < j->depth; i++)
                        fputs("  ", j->f);
        }
        j->need_comma[j->depth] = true;
        if (key) {
                write_escaped(j->f, key);
                fputs(j->pretty ? ": " : ":", j->f);
        }
}

static void open_(struct json *j, const char *key, char c)
{
        prefix(j, key);
        fputc(c, j->f);
        if (j->depth + 1 < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])))
                j->depth++;
        j->need_comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
        bool had = j->need_comma[j->depth];
        if (j->depth > 0)
                j->depth--;
        if (j->pretty && had) {
                fputc('\n', j->f);
                for (int i = 0; i < j->depth; i++)
                        fputs("  ", j->f);
        }
        fputc(c, j->f);
}

void json_object_open(struct json *j, const char *key) { open_(j, key, '{'); }
void json_object_close(struct json *j) { close_(j, '}'); }
void json_array_open(struct json *j, const char *key) { open_(j, key, '['); }
void json_array_close(struct json *j) { close_(j, ']'); }

void json_string(struct json *j, const char *key, const char *v)
{
        prefix(j, key);
        if (v)
                write_escaped(j->f, v);
        else
                fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v) { prefix(j, key); fprintf(j->f, "%" PRIu64, v); }
void json_i64(struct json *j, const char *key, int64_t v) { prefix(j, key); fprintf(j->f, "%" PRId64, v); }
void json_double(struct json *j, const char *key, double v) { prefix(j, key); fprintf(j->f, "%.6g", v); }
void json_bool(struct json *j, const char *key, bool v) { prefix(j, key); fputs(v ? "true" : "false", j->f); }
void json_end(struct json *j) { fputc('\n', j->f); }
