/* SPDX-License-Identifier: MIT */
/* The default fill method: readahead(2) from several threads.  It queues
 * the I/O and returns; its calls are chunked to what one call reads at most
 * (max(read_ahead_kb, max_sectors_kb)).  Each thread takes its own files in
 * plan order, or, where the plan is sorted by position (a disk), all of
 * them take the next read from one cursor, so that what is in flight stays
 * together on the device.  docs/DECISIONS.md has the measurements. */
#include "replay/steps.h"

#include <fcntl.h>
#include <stdlib.h>

#include "util/util.h"
#include "util/banned.h"

struct worker {
        struct eng *e;
        unsigned tid, n;          /* handles the files with index % n == tid */
        struct engine_stats st;
        uint8_t *buf;             /* for reads that settle what readahead left out */
        pthread_t thread;
};

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct eng *e = w->e;
        const struct plan *plan = e->plan;
        size_t from = e->from, to = e->to;
        uint64_t cap = MAX(e->opt->readahead_cap, 4096);
        struct cache_probe probe = { 0, 0 };

        for (size_t k = from; k < to; k++) {
                size_t i = plan->by_position ? atomic_fetch_add(&e->next, 1) : k;
                const struct plan_read *pr;
                uint64_t off, len;
                int fd;

                if (i >= to)
                        break;
                pr = &plan->reads[i];
                off = pr->offset;
                len = pr->length;
                if (engine_stopping(e, &w->st, (k & 31) == 0))
                        break;
                if (!plan->by_position && pr->file % w->n != w->tid)
                        continue;
                fd = engine_prepare_read(e, i, &w->st, &probe);
                if (fd < 0)
                        continue;
                atomic_store(&e->issued[i], READ_ISSUED);
                while (len > 0) {
                        uint64_t n = MIN(len, cap);
                        (void)readahead(fd, (off64_t)off, n);
                        w->st.reads++;
                        off += n;
                        len -= n;
                }
        }
        if (e->opt->wait && !w->st.stopped)
                for (size_t i = from; i < to; i++) {
                        const struct plan_read *pr = &plan->reads[i];
                        unsigned char state = atomic_load(&e->issued[i]);
                        int sfd;
                        if (pr->file % w->n != w->tid || state == READ_FOUND_CACHED)
                                continue;
                        /* in order, another thread may still be opening this
                         * file, or not have got to it: get_fd waits, or opens */
                        sfd = plan->by_position ? engine_get_fd(e, pr->file, &w->st) : engine_fd(e, pr->file);
                        if (sfd >= 0)
                                engine_settle_range(sfd, pr, state == READ_ISSUED, w->buf, &w->st);
                }
        return NULL;
}

static int fill(struct eng *e, struct engine_stats *st)
{
        unsigned n = engine_threads(e->opt);
        struct worker *w = calloc(n, sizeof(*w));
        bool *started = calloc(n, sizeof(bool));
        int r = 0;

        if (!w || !started) {
                free(w);
                free(started);
                return -ENOMEM;
        }
        for (unsigned i = 0; i < n; i++) {
                w[i] = (struct worker){ .e = e, .tid = i, .n = n };
                w[i].buf = malloc(SETTLE_BUF);
                if (!w[i].buf)
                        r = -ENOMEM;
        }
        if (r == 0) {
                /* worker 0 runs here, the others in threads; the share of a
                 * thread that could not start is done here after */
                for (unsigned i = 1; i < n; i++)
                        started[i] = pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0;
                worker_main(&w[0]);
                for (unsigned i = 1; i < n; i++) {
                        if (started[i])
                                pthread_join(w[i].thread, NULL);
                        else
                                worker_main(&w[i]);
                }
                for (unsigned i = 0; i < n; i++)
                        engine_add_stats(st, &w[i].st);
        }
        for (unsigned i = 0; i < n; i++)
                free(w[i].buf);
        free(w);
        free(started);
        return r;
}

const struct fill_method fill_readahead = { "readahead", fill };
