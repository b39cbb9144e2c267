/* SPDX-License-Identifier: MIT */
/* Fuzz target: any bytes given to the JSON reader (device profiles are user
 * input) give a clean result, and what it reads is what the readers of
 * profiles ask of it.  What parses must write back as JSON that parses to
 * the same shape. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "report/costmodel.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(const struct jv *v)
{
        size_t n = 1;
        for (size_t i = 0; i < v->n_items; i++)
                n += count(&v->items[i]);
        return n;
}

static void write_back(struct json *j, const struct jv *v, const char *key)
{
        switch (v->type) {
        case JV_NULL: json_string(j, key, NULL); break;
        case JV_BOOL: json_bool(j, key, v->b); break;
        case JV_NUMBER: json_double(j, key, v->n); break;
        case JV_STRING: json_string(j, key, v->s); break;
        case JV_ARRAY:
        case JV_OBJECT:
                if (v->type == JV_ARRAY)
                        json_array_open(j, key);
                else
                        json_object_open(j, key);
                for (size_t i = 0; i < v->n_items; i++)
                        write_back(j, &v->items[i], v->type == JV_OBJECT ? v->items[i].key : NULL);
                if (v->type == JV_ARRAY)
                        json_array_close(j);
                else
                        json_object_close(j);
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1);
        struct jv *v = NULL, *again = NULL;
        struct cost_profile p;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        if (jv_parse(text, &v) == 0) {
                char *out = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&out, &len);
                struct json j;

                (void)jv_get(v, "rotational");
                (void)jv_number(jv_get(v, "latency_qd1_us"), 0);
                if (f) {
                        json_begin(&j, f, true);
                        write_back(&j, v, NULL);
                        json_end(&j);
                        fclose(f);
                        /* NaN and infinity are written as null: the same shape */
                        if (jv_parse(out, &again) != 0 || count(again) != count(v))
                                __builtin_trap();
                }
                jv_free(again);
                free(out);
                jv_free(v);
        }
        (void)cost_profile_parse(text, "fuzz", &p);
        free(text);
        return 0;
}
