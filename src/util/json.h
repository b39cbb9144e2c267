/* SPDX-License-Identifier: MIT */
/* A tiny streaming JSON writer for --json output. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
        FILE *f;
        int depth;
        bool need_comma[64];
        bool pretty;
};

void json_begin(struct json *j, FILE *f, bool pretty);
void json_object_open(struct json *j, const char *key);  /* key NULL inside arrays */
void json_object_close(struct json *j);
void json_array_open(struct json *j, const char *key);
void json_array_close(struct json *j);
void json_string(struct json *j, const char *key, const char *value);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_end(struct json *j);

/* ---- reading: a small tree parser for profiles ------------------------ */

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
        enum jv_type type;
        bool b;
        double n;
        char *s;              /* JV_STRING; for members of an object, key holds the name */
        char *key;
        struct jv *items;     /* JV_ARRAY / JV_OBJECT */
        size_t n_items;
};

/* Parse a whole JSON text (at most 64 levels deep).  Returns 0 or -EINVAL. */
int jv_parse(const char *text, struct jv **ret);
void jv_free(struct jv *v);
static inline void jv_freep(struct jv **v) { jv_free(*v); }
#define _cleanup_jv_ __attribute__((cleanup(jv_freep)))

/* Member `key` of an object, or NULL (also when v is NULL or no object). */
const struct jv *jv_get(const struct jv *v, const char *key);
/* The number at v, or def when v is NULL or not a finite number. */
double jv_number(const struct jv *v, double def);
