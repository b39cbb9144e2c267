/* SPDX-License-Identifier: MIT */
/* The io_uring fill methods (liburing), from one thread with up to
 * queue_depth requests in flight: buffered reads into a scratch ring
 * ("read"; the data is there when a read completes), or
 * IORING_OP_FADVISE(WILLNEED) ("fadvise", then waited for as readahead
 * is).  Slower than readahead(2) here: a buffered read of pages not cached
 * is retried page by page, and fadvise runs in io_uring's workers, one
 * wake-up per request (docs/DECISIONS.md). */
#include "replay/steps.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/util.h"
#include "util/banned.h"

struct ring {
        struct io_uring ring;
        bool read;                /* "read", else "fadvise" */
        uint32_t qd;
        uint64_t chunk;           /* bytes per request */
        uint8_t *bufs;            /* read: qd buffers of chunk bytes */
        uint32_t *free_slots;
        uint32_t n_free, inflight;
};

static int reap(struct ring *q, unsigned min)
{
        struct io_uring_cqe *cqe;
        unsigned got = 0;

        while (q->inflight > 0) {
                int r = got < min ? io_uring_wait_cqe(&q->ring, &cqe) : io_uring_peek_cqe(&q->ring, &cqe);
                if (r == -EAGAIN)
                        break;
                if (r == -EINTR)
                        continue;
                if (r < 0)
                        return r;
                if (q->read)
                        q->free_slots[q->n_free++] = (uint32_t)io_uring_cqe_get_data64(cqe);
                /* a failed read of one range (a file truncated since, say) is
                 * not fatal: the final residency check counts it */
                io_uring_cqe_seen(&q->ring, cqe);
                q->inflight--;
                got++;
        }
        return 0;
}

static int issue(struct ring *q, int fd, uint64_t off, uint64_t len, struct engine_stats *st)
{
        while (len > 0) {
                uint64_t n = MIN(len, q->chunk);
                struct io_uring_sqe *sqe;
                int r;

                while (q->inflight >= q->qd || (q->read && q->n_free == 0)) {
                        io_uring_submit(&q->ring);
                        r = reap(q, 1);
                        if (r < 0)
                                return r;
                }
                sqe = io_uring_get_sqe(&q->ring);
                if (!sqe) {
                        io_uring_submit(&q->ring);
                        sqe = io_uring_get_sqe(&q->ring);
                        if (!sqe)
                                return -EBUSY;
                }
                if (q->read) {
                        uint32_t slot = q->free_slots[--q->n_free];
                        io_uring_prep_read(sqe, fd, q->bufs + (uint64_t)slot * q->chunk, (unsigned)n, off);
                        io_uring_sqe_set_data64(sqe, slot);
                } else {
                        io_uring_prep_fadvise(sqe, fd, off, (off_t)n, POSIX_FADV_WILLNEED);
                        io_uring_sqe_set_data64(sqe, 0);
                }
                q->inflight++;
                st->reads++;
                off += n;
                len -= n;
        }
        return 0;
}

static void ring_free(struct ring *q)
{
        io_uring_queue_exit(&q->ring);
        /* reads still in flight (a failure while reaping) may yet land in
         * the buffers: those stay mapped, to the end of the process */
        if (q->bufs && q->inflight == 0)
                munmap(q->bufs, (size_t)q->qd * q->chunk);
        free(q->free_slots);
}

/* On failure nothing is left to free. */
static int ring_init(struct ring *q, const struct engine_options *opt, bool read)
{
        int r;

        *q = (struct ring){ .read = read, .qd = MAX(opt->queue_depth, 1u) };
        q->chunk = read ? MAX(opt->request_bytes, 4096) : MAX(opt->readahead_cap, 4096);
        r = io_uring_queue_init(MAX(q->qd * 2, 8u), &q->ring, 0);
        if (r < 0)
                return r;
        if (read) {
                q->bufs = mmap(NULL, (size_t)q->qd * q->chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
                q->free_slots = malloc(q->qd * sizeof(uint32_t));
                if (q->bufs == MAP_FAILED)
                        q->bufs = NULL;
                if (!q->bufs || !q->free_slots) {
                        ring_free(q);
                        return -ENOMEM;
                }
                for (uint32_t i = 0; i < q->qd; i++)
                        q->free_slots[q->n_free++] = i;
        }
        return 0;
}

static int fill(struct eng *e, struct engine_stats *st, bool read)
{
        const struct plan *plan = e->plan;
        _cleanup_free_ uint8_t *buf = malloc(SETTLE_BUF);
        struct ring q;
        int r;

        if (!buf)
                return -ENOMEM;
        r = ring_init(&q, e->opt, read);
        if (r < 0)
                return r;
        for (size_t i = e->from, last = SIZE_MAX; i < e->to && r >= 0; i++) {
                const struct plan_read *pr = &plan->reads[i];
                int fd;

                if ((i & 31) == 0 && engine_stopping(e, st, true))
                        break;
                fd = engine_prepare_read(e, i, st, NULL);
                if (fd < 0)
                        continue;
                /* the plan's bytes and no more: a buffered read of pages not
                 * cached would start the kernel's readahead past them (up to
                 * read_ahead_kb, 8 MiB on a virtual disk), reading gaps and
                 * ranges the budget left out into the memory the plan's
                 * pages need; the engine's descriptor is its own */
                if (read && pr->file != last) {
                        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
                        last = pr->file;
                }
                /* read into buffers: the data is there when the read completes */
                atomic_store(&e->issued[i], read ? READ_NOT_ISSUED : READ_ISSUED);
                r = issue(&q, fd, pr->offset, pr->length, st);
        }
        if (r >= 0) {
                io_uring_submit(&q.ring);
                r = reap(&q, q.inflight);
        }
        ring_free(&q);
        if (r < 0)
                return r;
        if (e->opt->wait && !st->stopped)
                for (size_t i = e->from; i < e->to; i++) {
                        unsigned char state = atomic_load(&e->issued[i]);
                        int fd = engine_fd(e, plan->reads[i].file);
                        if (state != READ_FOUND_CACHED && fd >= 0)
                                engine_settle_range(fd, &plan->reads[i], state == READ_ISSUED, buf, st);
                }
        return 0;
}

static int fill_read(struct eng *e, struct engine_stats *st) { return fill(e, st, true); }
static int fill_fadvise(struct eng *e, struct engine_stats *st) { return fill(e, st, false); }

const struct fill_method fill_uring_read = { "read", fill_read, true };
const struct fill_method fill_uring_fadvise = { "fadvise", fill_fadvise, true };
