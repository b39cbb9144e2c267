/* SPDX-License-Identifier: MIT */
#include "report/amplification.h"

#include <inttypes.h>
#include <string.h>

#include "util/util.h"
#include "util/banned.h"

static bool below(const char *p, const char *mount, size_t n)
{
        return strncmp(p, mount, n) == 0 && (p[n] == 0 || p[n] == '/');
}

uint64_t amplification_lookups(const struct readset *rs, const char *mount)
{
        size_t n = strlen(mount);
        uint64_t k = 0;

        /* "/" holds everything; "/mnt/s" holds "/mnt/s/x", not "/mnt/sx" */
        while (n > 0 && mount[n - 1] == '/')
                n--;
        for (size_t i = 0; i < rs->n_lookups; i++)
                k += below(rs->lookups[i].path, mount, n);
        return k;
}

/* Only lookups are the denominator: the requests sent also hold the data
 * read, so a start that reads much through few lookups shows a high
 * ratio for its reads, not for its names (the read set's ranges are not
 * requests: the client's readahead decides how many those take). */
void amplification_write_json(struct json *j, const struct readset *rs)
{
        json_array_open(j, "client_requests");
        for (size_t i = 0; i < rs->n_clients; i++) {
                const struct rs_client *c = &rs->clients[i];
                uint64_t made = amplification_lookups(rs, c->mount);

                json_object_open(j, NULL);
                json_string(j, "mount", c->mount);
                json_string(j, "client", rs_client_kind_name(c->kind));
                json_u64(j, "requests_sent", c->requests);
                json_u64(j, "lookups_made", made);
                if (made)
                        json_double(j, "amplification", (double)c->requests / (double)made);
                json_object_close(j);
        }
        json_array_close(j);
}

void amplification_write_text(FILE *f, const struct readset *rs, size_t width)
{
        if (!rs->n_clients)
                return;
        fprintf(f, "\nRequests the network clients sent during the start\n");
        for (size_t i = 0; i < rs->n_clients; i++) {
                const struct rs_client *c = &rs->clients[i];
                uint64_t made = amplification_lookups(rs, c->mount);
                char tail[128], mount[256];
                int n;

                if (made)
                        n = snprintf(tail, sizeof(tail), " (%s): %" PRIu64 " for %" PRIu64 " lookup%s, %.1fx",
                                     rs_client_kind_name(c->kind), c->requests, made, made == 1 ? "" : "s",
                                     (double)c->requests / (double)made);
                else
                        n = snprintf(tail, sizeof(tail), " (%s): %" PRIu64 " for no lookup",
                                     rs_client_kind_name(c->kind), c->requests);
                /* the figures whole, the mount point elided to what is left */
                if (n < 0 || (size_t)n + 2 + 8 > width)
                        n = (int)width - 10;
                fprintf(f, "  %s%s\n", printable_elided(c->mount, width - 2 - (size_t)n, mount, sizeof(mount)), tail);
        }
}
