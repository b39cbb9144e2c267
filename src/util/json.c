/* SPDX-License-Identifier: MIT */
#include "util/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/banned.h"

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
void json_double(struct json *j, const char *key, double v)
{
        /* JSON has no NaN or infinity */
        prefix(j, key);
        if (isfinite(v))
                fprintf(j->f, "%.6g", v);
        else
                fputs("null", j->f);
}
void json_bool(struct json *j, const char *key, bool v) { prefix(j, key); fputs(v ? "true" : "false", j->f); }
void json_end(struct json *j) { fputc('\n', j->f); }

/* ---- reading ---------------------------------------------------------- */

struct jparser {
        const char *p;
        int depth;
};

static void jv_clear(struct jv *v)
{
        for (size_t i = 0; i < v->n_items; i++)
                jv_clear(&v->items[i]);
        free(v->items);
        free(v->s);
        free(v->key);
}

void jv_free(struct jv *v)
{
        if (!v)
                return;
        jv_clear(v);
        free(v);
}

static void skip_ws(struct jparser *jp)
{
        while (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r')
                jp->p++;
}

/* A string at jp->p (after the opening quote is checked); \u escapes
 * outside ASCII become '?': profiles only need the ASCII ones. */
static int parse_string(struct jparser *jp, char **ret)
{
        size_t len = 0, cap = 16;
        char *s = malloc(cap);

        if (!s)
                return -ENOMEM;
        jp->p++;
        for (;;) {
                char c = *jp->p++;
                if (c == '\0' || (unsigned char)c < 0x20) {
                        free(s);
                        return -EINVAL;
                }
                if (c == '"')
                        break;
                if (c == '\\') {
                        char e = *jp->p++;
                        switch (e) {
                        case '"': case '\\': case '/': c = e; break;
                        case 'b': c = '\b'; break;
                        case 'f': c = '\f'; break;
                        case 'n': c = '\n'; break;
                        case 'r': c = '\r'; break;
                        case 't': c = '\t'; break;
                        case 'u': {
                                unsigned u = 0;
                                for (int i = 0; i < 4; i++) {
                                        char h = *jp->p++;
                                        u <<= 4;
                                        if (h >= '0' && h <= '9') u |= (unsigned)(h - '0');
                                        else if (h >= 'a' && h <= 'f') u |= (unsigned)(h - 'a' + 10);
                                        else if (h >= 'A' && h <= 'F') u |= (unsigned)(h - 'A' + 10);
                                        else { free(s); return -EINVAL; }
                                }
                                c = u >= 0x20 && u < 0x7f ? (char)u : '?';
                                break;
                        }
                        default:
                                free(s);
                                return -EINVAL;
                        }
                }
                if (grow_array(&s, &cap, len + 2, 1) < 0) {
                        free(s);
                        return -ENOMEM;
                }
                s[len++] = c;
        }
        s[len] = '\0';
        *ret = s;
        return 0;
}

static int parse_value(struct jparser *jp, struct jv *v);

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* JSON's number grammar, which strtod is wider than (hex, "inf", "01", "1."):
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number_ok(const char *p)
{
        if (*p == '-')
                p++;
        if (*p == '0')
                p++;
        else if (is_digit(*p))
                while (is_digit(*p))
                        p++;
        else
                return false;
        if (*p == '.') {
                if (!is_digit(*++p))
                        return false;
                while (is_digit(*p))
                        p++;
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                if (!is_digit(*p))
                        return false;
                while (is_digit(*p))
                        p++;
        }
        /* what follows must end the number */
        return !(is_digit(*p) || *p == '.' || *p == 'x' || *p == 'X' || *p == 'e' || *p == 'E');
}

static int parse_items(struct jparser *jp, struct jv *v, bool object)
{
        size_t cap = 0;
        char close = object ? '}' : ']';
        int r;

        jp->p++;
        skip_ws(jp);
        if (*jp->p == close) {
                jp->p++;
                return 0;
        }
        for (;;) {
                char *key = NULL;
                skip_ws(jp);
                if (object) {
                        if (*jp->p != '"')
                                return -EINVAL;
                        r = parse_string(jp, &key);
                        if (r < 0)
                                return r;
                        skip_ws(jp);
                        if (*jp->p++ != ':') {
                                free(key);
                                return -EINVAL;
                        }
                }
                if (grow_array(&v->items, &cap, v->n_items + 1, sizeof(*v->items)) < 0) {
                        free(key);
                        return -ENOMEM;
                }
                struct jv *item = &v->items[v->n_items++];
                memset(item, 0, sizeof(*item));
                item->key = key;
                r = parse_value(jp, item);
                if (r < 0)
                        return r;
                skip_ws(jp);
                if (*jp->p == ',') {
                        jp->p++;
                        continue;
                }
                if (*jp->p++ != close)
                        return -EINVAL;
                return 0;
        }
}

static int parse_value(struct jparser *jp, struct jv *v)
{
        int r;

        skip_ws(jp);
        switch (*jp->p) {
        case '{':
        case '[':
                if (++jp->depth > 64)
                        return -EINVAL;
                v->type = *jp->p == '{' ? JV_OBJECT : JV_ARRAY;
                r = parse_items(jp, v, v->type == JV_OBJECT);
                jp->depth--;
                return r;
        case '"':
                v->type = JV_STRING;
                return parse_string(jp, &v->s);
        case 't':
        case 'f':
        case 'n': {
                static const struct { const char *word; enum jv_type t; bool b; } words[] = {
                        { "true", JV_BOOL, true }, { "false", JV_BOOL, false }, { "null", JV_NULL, false },
                };
                for (size_t i = 0; i < ARRAY_SIZE(words); i++)
                        if (strncmp(jp->p, words[i].word, strlen(words[i].word)) == 0) {
                                jp->p += strlen(words[i].word);
                                v->type = words[i].t;
                                v->b = words[i].b;
                                return 0;
                        }
                return -EINVAL;
        }
        default: {
                char *end;
                if (!json_number_ok(jp->p))
                        return -EINVAL;
                v->n = strtod(jp->p, &end);
                if (end == jp->p || !isfinite(v->n))
                        return -EINVAL;
                v->type = JV_NUMBER;
                jp->p = end;
                return 0;
        }
        }
}

int jv_parse(const char *text, struct jv **ret)
{
        struct jparser jp = { .p = text };
        struct jv *v = calloc(1, sizeof(*v));
        int r;

        if (!v)
                return -ENOMEM;
        r = parse_value(&jp, v);
        if (r >= 0) {
                skip_ws(&jp);
                if (*jp.p != '\0')
                        r = -EINVAL;
        }
        if (r < 0) {
                jv_free(v);
                return r == -ENOMEM ? r : -EINVAL;
        }
        *ret = v;
        return 0;
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
        if (!v || v->type != JV_OBJECT)
                return NULL;
        for (size_t i = 0; i < v->n_items; i++)
                if (v->items[i].key && strcmp(v->items[i].key, key) == 0)
                        return &v->items[i];
        return NULL;
}

double jv_number(const struct jv *v, double def)
{
        return v && v->type == JV_NUMBER ? v->n : def;
}
