/* SPDX-License-Identifier: MIT */
/* Runs the fuzz target over every file of a corpus directory, plus every
 * truncation and a few thousand mutations of each, without libFuzzer; then
 * over every finding libFuzzer kept for this target (FOUND-DIR/PREFIX*),
 * which stay there as regression inputs once fixed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Truncations and mutations in all, spread over the corpus: plain and
 * under ASan ~1 s; under valgrind (make check's third pass) a twentieth of
 * them, so that the slowest pass takes seconds, not the minutes a busy
 * machine would make of it (every file and finding is still replayed
 * whole). */
#define INPUTS 200000u
#define INPUTS_VALGRIND 10000u

static int under_valgrind(void)
{
        const char *p = getenv("LD_PRELOAD");
        return p && strstr(p, "vgpreload") != NULL;
}

static unsigned replay_found(const char *dir, const char *prefix)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        unsigned n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                char path[4096];
                uint8_t *buf;
                size_t len;
                FILE *f;

                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                f = fopen(path, "rb");
                if (!f)
                        continue;
                buf = malloc(1 << 20);
                len = buf ? fread(buf, 1, 1 << 20, f) : 0;
                fclose(f);
                if (buf)
                        LLVMFuzzerTestOneInput(buf, len);
                free(buf);
                n++;
        }
        closedir(d);
        return n;
}

int main(int argc, char **argv)
{
        DIR *d;
        struct dirent *de;
        unsigned files = 0, runs = 0, seed = 1, per_file, inputs = under_valgrind() ? INPUTS_VALGRIND : INPUTS;

        if (argc != 2 && argc != 4) {
                fprintf(stderr, "usage: %s CORPUS-DIR [FOUND-DIR PREFIX]\n", argv[0]);
                return 2;
        }
        if (argc == 4) {
                unsigned found = replay_found(argv[2], argv[3]);
                if (found)
                        printf("%u findings replayed, no crash\n", found);
        }
        d = opendir(argv[1]);
        if (!d) {
                perror(argv[1]);
                return 1;
        }
        /* every file, and its share of the inputs */
        while ((de = readdir(d)))
                files += de->d_name[0] != '.';
        per_file = files ? inputs / files : 0;
        per_file = per_file < 16 ? 16 : per_file;
        rewinddir(d);
        files = 0;
        while ((de = readdir(d))) {
                char path[4096];
                uint8_t *buf, *mut;
                size_t len;
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
                f = fopen(path, "rb");
                if (!f)
                        continue;
                buf = malloc(1 << 20);
                len = fread(buf, 1, 1 << 20, f);
                fclose(f);
                mut = malloc(len ? len : 1);
                for (size_t n = 0, step = len / (per_file / 2) + 1; n <= len; n += step, runs++)
                        LLVMFuzzerTestOneInput(buf, n);
                LLVMFuzzerTestOneInput(buf, len);
                for (unsigned i = 0; i < per_file / 2 && len; i++, runs++) {
                        memcpy(mut, buf, len);
                        for (int k = 0; k < 1 + (int)(i % 4); k++) {
                                seed = seed * 1103515245u + 12345u;
                                mut[(seed >> 8) % len] = (uint8_t)(seed >> 16);
                        }
                        LLVMFuzzerTestOneInput(mut, len);
                }
                free(mut);
                free(buf);
                files++;
        }
        closedir(d);
        if (files == 0) {
                fprintf(stderr, "empty corpus '%s'\n", argv[1]);
                return 1;
        }
        printf("%u corpus files, %u inputs%s, no crash\n", files, runs,
               inputs == INPUTS ? "" : " (under valgrind: a twentieth)");
        return 0;
}
