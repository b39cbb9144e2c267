/* SPDX-License-Identifier: MIT */
/* The steps of a replay that the fill methods (fill-*.c) and the warmers
 * (warm.c) share: the state of one replay, a file opened once through the
 * identity-checked open and counted once, the cache asked first, a read
 * settled, the stop asked.  The phases that call them are engine.c's. */
#include "replay/steps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/open.h"
#include "replay/residency.h"
#include "util/util.h"
#include "util/banned.h"

unsigned engine_threads(const struct engine_options *opt)
{
        /* opening a file waits for its inode: more submitters than CPUs keep
         * more of those reads in flight (8 measured best on 2 CPUs here) */
        long n = opt->threads ? (long)opt->threads : 4 * sysconf(_SC_NPROCESSORS_ONLN);
        return (unsigned)MAX(1, MIN(n, 16));
}

/* ---- the steps every method shares -------------------------------------- */

void engine_wake_warmers(struct eng *e)
{
        pthread_mutex_lock(&e->wake_lock);
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->wake_lock);
}

bool engine_stopping(struct eng *e, struct engine_stats *st, bool poll_callback)
{
        /* the callback (a waitpid, say) is not thread-safe: one caller at a
         * time; one that finds another asking waits for its answer (with a
         * trylock it went on as if told to go on: a warmer made a lookup
         * after the stop was said, once in a few hundred runs of test-warm) */
        if (!atomic_load(&e->stop) && poll_callback && e->opt->stop) {
                pthread_mutex_lock(&e->stop_lock);
                if (!atomic_load(&e->stop) && e->opt->stop(e->opt->stop_userdata)) {
                        atomic_store(&e->stop, true);
                        engine_wake_warmers(e);
                }
                pthread_mutex_unlock(&e->stop_lock);
        }
        if (atomic_load(&e->stop)) {
                st->stopped = true;
                return true;
        }
        return false;
}

int engine_fd(struct eng *e, uint32_t file)
{
        return atomic_load_explicit(&e->fds[file], memory_order_relaxed);
}

static int open_file(struct eng *e, uint32_t file, struct engine_stats *st)
{
        const struct rs_file *f = &e->rs->files[file];
        enum fs_skip why;
        /* (the image they are packed in checked already: the files are its) */
        bool trusted = atomic_load(&e->trusted);
        /* known by content, no image checked: its ranges are read first,
         * queued with the others, and checked after (engine_check_contents):
         * checked at the open, each file's were read one request after
         * another, as the start would (a default-order squashfs on the
         * emulated 7200 rpm disk: run 3.2 s against 2.6 plain) */
        bool later = (f->flags & RS_FILE_BY_CONTENT) && !trusted && !e->dry;
        int fd = fs_open_recorded(f, O_RDONLY | (trusted ? FS_OPEN_IDENTITY_ONLY : later ? FS_OPEN_CONTENT_LATER : 0),
                                  &why);

        if (e->opt->skip_reasons)
                e->opt->skip_reasons[file] = (uint8_t)why;
        if (e->counted[file] && why == FS_SKIP_NONE)
                return fd;      /* reopened in a later window: counted once */
        e->counted[file] = 1;
        switch (why) {
        case FS_SKIP_NONE:
                st->files_opened++;
                if (later)
                        e->counted[file] = COUNTED_CHECK_LATER;
                else if ((f->flags & RS_FILE_BY_CONTENT) && !trusted) {
                        /* its ranges were read to check it */
                        st->files_checked++;
                        for (size_t k = 0; k < f->n_ranges; k++)
                                st->bytes_checked += f->ranges[k].offset >= f->size ? 0 :
                                        MIN(f->ranges[k].length, f->size - f->ranges[k].offset);
                }
                break;
        case FS_SKIP_MISSING: st->files_missing++; break;
        case FS_SKIP_NOT_REGULAR: st->files_not_regular++; break;
        case FS_SKIP_CHANGED: st->files_changed++; break;
        case FS_SKIP_CONTENT: st->files_changed++, st->files_differ++; break;
        case FS_SKIP_PSEUDO:
        case FS_SKIP_PRIVATE:
        case FS_SKIP_UNKNOWN: st->files_refused++; break;
        default: st->files_error++; break;
        }
        return fd >= 0 ? fd : FD_SKIPPED;
}

int engine_get_fd(struct eng *e, uint32_t file, struct engine_stats *st)
{
        int fd = atomic_load(&e->fds[file]), untried = FD_UNTRIED;

        if (fd == FD_UNTRIED && atomic_compare_exchange_strong(&e->fds[file], &untried, FD_OPENING)) {
                fd = open_file(e, file, st);
                if (fd >= 0 && e->opt->skip_cached)
                        e->by_reading[file] = residency_by_reading(fd);
                atomic_store(&e->fds[file], fd);
                return fd;
        }
        /* another thread is opening it (by position, files are not owned);
         * an open takes a metadata read (and, for a file known by content,
         * the reads of its check): wait without burning CPU */
        while ((fd = atomic_load(&e->fds[file])) == FD_OPENING) {
                struct timespec ts = { 0, 50000 };
                nanosleep(&ts, NULL);
        }
        return fd;
}

static bool all_there(int fd, uint64_t off, uint64_t len, enum residency_kind kind)
{
        int64_t have = residency_check(fd, off, len, kind);
        return have >= 0 && (uint64_t)have >= len;
}

void engine_settle_range(int fd, const struct plan_read *pr, bool issued, uint8_t *buf, struct engine_stats *st)
{
        uint64_t off = pr->offset, len = pr->length, end = pr->offset + pr->length;
        int64_t have;
        struct stat s;

        /* submitted: some of its pages may still be being read in, which
         * only "up to date" leaves out; found cached and not submitted:
         * present will do */
        if (all_there(fd, off, len, issued ? RESIDENCY_UPTODATE : RESIDENCY_PRESENT))
                return;
        while (len > 0) {
                size_t n = (size_t)MIN(len, (uint64_t)SETTLE_BUF);
                ssize_t k = pread(fd, buf, n, (off_t)off);
                if (k <= 0)
                        break;      /* end of a file that shrank, or an I/O error */
                off += (uint64_t)k;
                len -= (uint64_t)k;
        }
        /* the reads waited: present will do */
        have = residency_count(fd, pr->offset, pr->length, RESIDENCY_PRESENT);
        if (have < 0 || (uint64_t)have >= pr->length)
                return;
        /* a range past the end of a file that shrank is not missing */
        if (fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && end > (uint64_t)s.st_size) {
                uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
                end = ((uint64_t)s.st_size + page - 1) / page * page;
        }
        if (end > pr->offset && (uint64_t)have < end - pr->offset)
                st->bytes_missing += end - pr->offset - (uint64_t)have;
}

/* After a run of COLD_RUN reads with nothing cached, ask only one read in
 * CHECK_EVERY. */
#define COLD_RUN 16
#define CHECK_EVERY 64

static bool probe_says_cached(struct eng *e, struct cache_probe *p, int fd, uint64_t off, uint64_t len)
{
        int64_t have;

        if (p->cold_run >= COLD_RUN && ++p->since < CHECK_EVERY)
                return false;
        p->since = 0;
        have = residency_check(fd, off, len, RESIDENCY_PRESENT);
        if ((have < 0 || (uint64_t)have < len) && !atomic_exchange(&e->cold_seen, true))
                engine_wake_warmers(e);
        if (have > 0)
                p->cold_run = 0;
        else if (p->cold_run < COLD_RUN)
                p->cold_run++;
        return have >= 0 && (uint64_t)have >= len;
}

/* On a warm cache one question per file instead of one per read: is all of
 * what the plan reads of it cached?  Asked while the probe asks. */
static bool file_all_cached(struct eng *e, uint32_t file, int fd, const struct cache_probe *probe)
{
        unsigned char state = atomic_load(&e->file_cached[file]), unknown = FILE_UNKNOWN;
        uint64_t lo = e->span_lo[file], hi = e->span_hi[file];

        if (state != FILE_UNKNOWN)
                return state == FILE_ALL_CACHED;
        if (!probe || probe->cold_run >= COLD_RUN || hi <= lo ||
            !atomic_compare_exchange_strong(&e->file_cached[file], &unknown, FILE_CHECKING))
                return false;
        state = all_there(fd, lo, hi - lo, RESIDENCY_PRESENT) ? FILE_ALL_CACHED : FILE_NOT_ALL;
        atomic_store(&e->file_cached[file], state);
        return state == FILE_ALL_CACHED;
}

int engine_prepare_read(struct eng *e, size_t i, struct engine_stats *st, struct cache_probe *probe)
{
        const struct plan_read *pr = &e->plan->reads[i];
        int fd = engine_get_fd(e, pr->file, st);

        if (e->opt->progress_bytes)
                atomic_fetch_add_explicit(e->opt->progress_bytes, pr->length, memory_order_relaxed);
        if (fd < 0) {
                st->bytes_skipped += pr->length;
                return -1;
        }
        if (e->opt->skip_cached) {
                bool cached;
                if (probe && file_all_cached(e, pr->file, fd, probe)) {
                        probe->cold_run = 0;
                        cached = true;
                } else if (e->by_reading[pr->file] && atomic_load(&e->file_cached[pr->file]) == FILE_NOT_ALL)
                        cached = false;  /* asking again would find what the first question fetched */
                else if (probe)
                        cached = probe_says_cached(e, probe, fd, pr->offset, pr->length);
                else
                        cached = all_there(fd, pr->offset, pr->length, RESIDENCY_PRESENT);
                if (cached) {
                        /* found there now: the wait does not ask again */
                        atomic_store(&e->issued[i], READ_FOUND_CACHED);
                        st->bytes_cached += pr->length;
                        return -1;
                }
        }
        st->bytes += pr->length;
        return fd;
}

void engine_add_stats(struct engine_stats *a, const struct engine_stats *b)
{
        a->files_opened += b->files_opened;
        a->files_changed += b->files_changed;
        a->files_differ += b->files_differ;
        a->files_checked += b->files_checked;
        a->bytes_checked += b->bytes_checked;
        a->files_missing += b->files_missing;
        a->files_not_regular += b->files_not_regular;
        a->files_error += b->files_error;
        a->reads += b->reads;
        a->bytes += b->bytes;
        a->bytes_cached += b->bytes_cached;
        a->bytes_skipped += b->bytes_skipped;
        a->files_refused += b->files_refused;
        a->bytes_missing += b->bytes_missing;
        a->bytes_marked += b->bytes_marked;
        a->lookups += b->lookups;
        a->image_bytes += b->image_bytes;
        a->image_verified |= b->image_verified;
        a->stopped |= b->stopped;
}

/* ---- the state of one replay ------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
        int x = *(const int *)a, y = *(const int *)b;
        return x < y ? -1 : x > y;
}

/* The bytes its ranges were read for now in the page cache (or on their
 * way): checked, and counted as checked; one whose bytes differ counted as
 * such, and as not opened (its reads were spent for nothing).  Not once a
 * stop was asked (the replay's reads are no longer wanted). */
void engine_check_contents(struct eng *e, struct engine_stats *st)
{
        for (size_t i = 0; i < e->rs->n_files && !atomic_load(&e->stop); i++) {
                const struct rs_file *f = &e->rs->files[i];
                int fd = engine_fd(e, (uint32_t)i), r;
                if (fd < 0 || e->counted[i] != COUNTED_CHECK_LATER)
                        continue;
                e->counted[i] = 1;
                r = fs_content_matches(fd, f);
                st->files_checked++;
                for (size_t k = 0; k < f->n_ranges; k++)
                        st->bytes_checked += f->ranges[k].offset >= f->size ? 0 :
                                MIN(f->ranges[k].length, f->size - f->ranges[k].offset);
                if (r > 0)
                        continue;
                st->files_opened--;
                if (r == 0)
                        st->files_changed++, st->files_differ++;
                else
                        st->files_error++;
                if (e->opt->skip_reasons)
                        e->opt->skip_reasons[i] = (uint8_t)(r == 0 ? FS_SKIP_CONTENT : FS_SKIP_ERROR);
        }
}

/* The files' descriptors, one close_range(2) per run of consecutive
 * numbers (they mostly are: a warm replay of 3 000 files spent 3 000 calls
 * closing them one by one). */
void engine_close_files(struct eng *e, bool keep_devices)
{
        _cleanup_free_ int *fds = malloc((e->rs->n_files ? e->rs->n_files : 1) * sizeof(int));
        size_t n = 0;

        for (size_t i = 0; i < e->rs->n_files; i++) {
                int fd = engine_fd(e, (uint32_t)i);
                if (fd < 0 || (keep_devices && e->rs->files[i].kind == RS_FILE_BLOCKDEV))
                        continue;
                /* a later window opens it again, checked again */
                atomic_store(&e->fds[i], FD_UNTRIED);
                if (!fds)
                        close(fd);
                else
                        fds[n++] = fd;
        }
        qsort_safe(fds, n, sizeof(int), cmp_int);
        for (size_t i = 0; i < n;) {
                size_t j = i + 1;
                while (j < n && fds[j] == fds[j - 1] + 1)
                        j++;
                if (j - i == 1 || close_range((unsigned)fds[i], (unsigned)fds[j - 1], 0) < 0)
                        for (size_t k = i; k < j; k++)
                                close(fds[k]);
                i = j;
        }
}

void engine_state_free(struct eng *e)
{
        free(e->fds);
        free(e->issued);
        free(e->file_cached);
        free(e->span_lo);
        free(e->span_hi);
        free(e->by_reading);
        free(e->counted);
        pthread_cond_destroy(&e->wake);
        pthread_mutex_destroy(&e->wake_lock);
        pthread_mutex_destroy(&e->stop_lock);
}

int engine_state_init(struct eng *e, const struct readset *rs, const struct plan *plan,
                      const struct engine_options *opt, struct engine_stats *st)
{
        size_t nf = rs->n_files ? rs->n_files : 1;
        _cleanup_free_ uint8_t *seen = calloc(nf, 1);

        *e = (struct eng){ .rs = rs, .plan = plan, .opt = opt, .dry = opt->method == ENGINE_NULL };
        atomic_init(&e->stop, false);
        atomic_init(&e->next, plan->n_meta);
        atomic_init(&e->cold_seen, !opt->skip_cached);
        atomic_init(&e->workers_done, false);
        pthread_mutex_init(&e->stop_lock, NULL);
        pthread_mutex_init(&e->wake_lock, NULL);
        pthread_cond_init(&e->wake, NULL);
        e->fds = malloc(nf * sizeof(*e->fds));
        e->issued = calloc(plan->n_reads ? plan->n_reads : 1, sizeof(*e->issued));
        e->file_cached = calloc(nf, sizeof(*e->file_cached));
        e->span_lo = malloc(nf * sizeof(*e->span_lo));
        e->span_hi = calloc(nf, sizeof(*e->span_hi));
        e->by_reading = calloc(nf, sizeof(*e->by_reading));
        e->counted = calloc(nf, 1);
        e->from = plan->n_meta;
        e->to = plan->n_reads;
        if (!e->fds || !e->issued || !e->file_cached || !e->span_lo || !e->span_hi || !e->by_reading || !e->counted ||
            !seen) {
                engine_state_free(e);
                return -ENOMEM;
        }
        for (size_t i = 0; i < rs->n_files; i++) {
                atomic_init(&e->fds[i], FD_UNTRIED);
                e->span_lo[i] = UINT64_MAX;
        }
        for (size_t i = 0; i < plan->n_reads; i++) {
                const struct plan_read *pr = &plan->reads[i];
                if (!seen[pr->file]) {
                        seen[pr->file] = 1;
                        st->files++;
                }
                if (i < plan->n_meta)
                        continue;
                e->span_lo[pr->file] = MIN(e->span_lo[pr->file], pr->offset);
                e->span_hi[pr->file] = MAX(e->span_hi[pr->file], pr->offset + pr->length);
        }
        return 0;
}
