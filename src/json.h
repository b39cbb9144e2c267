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
