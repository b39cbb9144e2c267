/* SPDX-License-Identifier: MIT */
/* Touch and free N MiB (default 2048), so that the VM has taken back the
 * memory drop_caches released before a cold run is timed (bench/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
        size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 2048;
        char *p = malloc(mib << 20);

        if (!p) {
                perror("malloc");
                return 1;
        }
        memset(p, 1, mib << 20);
        free(p);
        return 0;
}
