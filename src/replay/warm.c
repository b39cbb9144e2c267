/* SPDX-License-Identifier: MIT */
/* What every open and stat of the start needs before its data: the
 * filesystem metadata the read set recorded (inode tables, directories, as
 * ranges of the block device), and the warmers, threads beside the fill
 * that stat the plan's files ahead of it and then the paths the start
 * looked up. */
#include "replay/warm.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

/* One warmer per fill thread (each stat may wait for a metadata read: more
 * of them in flight), at most this many. */
#define MAX_WARMERS 16

/* The block device ranges: readahead on the device (when it may be opened;
 * some sandboxes forbid it, and only root may), then wait. */
void warm_metadata(struct eng *e, struct engine_stats *st)
{
        const struct plan *plan = e->plan;
        _cleanup_free_ uint8_t *buf = NULL;

        for (size_t i = 0; i < plan->n_meta; i++) {
                const struct plan_read *pr = &plan->reads[i];
                int fd;
                if (engine_stopping(e, st, (i & 31) == 0))
                        return;
                fd = engine_prepare_read(e, i, st, NULL);
                if (fd < 0)
                        continue;
                atomic_store(&e->issued[i], READ_ISSUED);
                st->reads++;
                if (!e->dry)
                        (void)readahead(fd, (off64_t)pr->offset, pr->length);
        }
        if (e->dry)
                return;
        buf = malloc(SETTLE_BUF);
        if (!buf)
                return;
        for (size_t i = 0; i < plan->n_meta; i++) {
                const struct plan_read *pr = &plan->reads[i];
                if (engine_stopping(e, st, (i & 31) == 0))
                        return;
                if (engine_fd(e, pr->file) >= 0)
                        engine_settle_range(engine_fd(e, pr->file), pr, atomic_load(&e->issued[i]) == READ_ISSUED,
                                            buf, st);
        }
}

struct warmer {
        struct eng *e;
        unsigned tid, n;
        uint64_t done;
        pthread_t thread;
        bool started;
        char dents[32768];
};

struct warmers {
        struct warmer *w;
        unsigned n;
};

/* A directory the start listed: list it, which reads its blocks. */
static void list_dir(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0)
                return;
        while (syscall(SYS_getdents64, fd, buf, size) > 0)
                ;
        close(fd);
}

/* A stat of every file the plan reads, in plan order (so that a fill thread
 * opening it finds its inode read already: opening is otherwise one
 * synchronous metadata read per file), then of every other path the start
 * looked up, found or not (positive and negative dentries). */
static void *warmer_main(void *arg)
{
        struct warmer *j = arg;
        struct eng *e = j->e;
        const struct plan *plan = e->plan;
        struct stat s;

        /* On a warm cache this would only double the fill threads' opens:
         * start once one of them has met data that is not cached. */
        pthread_mutex_lock(&e->wake_lock);
        while (!atomic_load(&e->cold_seen) && !atomic_load(&e->workers_done) && !atomic_load(&e->stop))
                pthread_cond_wait(&e->wake, &e->wake_lock);
        pthread_mutex_unlock(&e->wake_lock);
        for (size_t i = plan->n_meta; i < plan->n_reads && atomic_load(&e->cold_seen); i++) {
                uint32_t f = plan->reads[i].file;
                if (atomic_load(&e->stop))
                        return NULL;
                if (f % j->n != j->tid || (i > plan->n_meta && plan->reads[i - 1].file == f))
                        continue;
                if (engine_fd(e, f) == FD_UNTRIED)   /* a fill thread has not got there yet */
                        (void)fstatat(AT_FDCWD, e->rs->files[f].path, &s, AT_SYMLINK_NOFOLLOW);
        }
        if (!e->opt->lookups)
                return NULL;
        for (size_t i = j->tid; i < plan->n_lookups; i += j->n) {
                const struct rs_lookup *l = &e->rs->lookups[plan->lookups[i]];
                struct engine_stats ignored = { 0 };
                /* the fill threads may be done: the stop callback is asked here too */
                if (engine_stopping(e, &ignored, (j->done & 15) == 0))
                        break;
                if (l->op == RS_LOOKUP_READDIR && l->result == 0)
                        list_dir(l->path, j->dents, sizeof(j->dents));
                else
                        (void)fstatat(AT_FDCWD, l->path, &s, AT_SYMLINK_NOFOLLOW);
                j->done++;
        }
        return NULL;
}

struct warmers *warmers_start(struct eng *e, unsigned n)
{
        struct warmers *w = calloc(1, sizeof(*w));

        n = MIN(MAX(n, 1u), (unsigned)MAX_WARMERS);
        if (!w || !(w->w = calloc(n, sizeof(*w->w)))) {
                free(w);
                return NULL;    /* the replay goes on without them */
        }
        w->n = n;
        for (unsigned i = 0; i < n; i++) {
                w->w[i].e = e;
                w->w[i].tid = i;
                w->w[i].n = n;
                w->w[i].started = pthread_create(&w->w[i].thread, NULL, warmer_main, &w->w[i]) == 0;
        }
        return w;
}

void warmers_join(struct warmers *w, struct engine_stats *st)
{
        if (!w)
                return;
        for (unsigned i = 0; i < w->n; i++)
                if (w->w[i].started) {
                        pthread_join(w->w[i].thread, NULL);
                        st->lookups += w->w[i].done;
                }
        free(w->w);
        free(w);
}
