/* SPDX-License-Identifier: MIT */
/* slowdev-fuse: slow storage emulated with FUSE, for benchmarks and tests.
 *
 *   slowdev-fuse disk MODEL IMAGE MOUNTPOINT [FUSE options]
 *       MOUNTPOINT/image is IMAGE, its reads delayed by a device model
 *       (hdd, usb, sd, nvme); a loop device goes on top (bench/slowdev).
 *   slowdev-fuse share rtt=US[,mbps=N][,client=MODEL][,...] SOURCE MOUNTPOINT
 *       a read-only passthrough of SOURCE where every request the client
 *       model cannot answer from its caches pays a network round trip
 *       (slowdev-share.c).
 *   slowdev-fuse expect MODEL SIZE
 *       what the model predicts for readset probe on a device of SIZE
 *       bytes: 4 KiB random read latency at queue depth 1 and sequential
 *       bandwidth (used by the tests to check probe against the model).
 *
 * The models and their sources are in docs/SLOWDEV.md.  Writes are not
 * delayed (building a test tree on a 63-second disk would take hours) and
 * do not move the modelled head: the models are about cold reads.
 *
 * Every read is timed from the moment the daemon receives it: a
 * single-actuator device serves one request at a time; a disk chooses among
 * the waiting ones the one it can reach soonest, seek and rotation counted
 * (shortest access time first, what NCQ firmware does), so that the order
 * of requests matters as on the real device.
 *
 * SIGUSR1 turns the delays off, SIGUSR2 back on (bench/slowdev fast|slow);
 * SIGURG stalls the share: every request waits until the next signal, as
 * on a share whose server is gone (bench/slowdev stall).
 * In disk mode, MOUNTPOINT/stats gives the request counters and
 * MOUNTPOINT/control takes "slow", "zero", "warm" or "overhead_us=N": the
 * cost of the kernel, FUSE and loop path and of the emulator's own queue
 * (measured by "slowdev-fuse calibrate DEVICE" in "zero" mode: every step,
 * with a fixed 200 us for the model), taken off every modelled delay so that a
 * request costs what the model says end to end, not that plus the path. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "slowdev-fuse.h"

/* ---- device models ------------------------------------------------------ */

struct model {
        const char *name;
        unsigned servers;       /* requests served at once (1: single actuator / no queueing) */
        bool reorder;           /* picks the waiting request it can serve soonest (NCQ) */
        double cmd_us;          /* fixed cost per command */
        double outer_mbps;      /* transfer rate at offset 0 ... */
        double inner_mbps;      /* ... falling linearly to this at the end */
        double rpm;             /* 0: no rotation */
        double seek_min_us;     /* shortest seek (track to track) */
        double seek_full_us;    /* full stroke; seek(d) = min + (full-min)*sqrt(d/size) */
};

static const struct model models[] = {
        /* 7200 rpm 3.5" desktop disk: 4.17 ms average rotational latency
         * (half a turn at 120 turns/s), ~0.8 ms track-to-track and ~16 ms full
         * stroke, giving ~8.9 ms average seek, transfer 200 MB/s at the outer
         * edge to 100 MB/s inside (typical datasheets, e.g. 1-2 TB desktop
         * drives of the 2010s). */
        { "hdd", 1, true, 0, 200, 100, 7200, 800, 16000 },
        /* USB 2.0 SATA bridge (bulk-only transport: one command at a time):
         * 730 us per command, 25 MB/s (the field report, docs/FIELD.md). */
        { "usb", 1, false, 730, 25, 25, 0, 0, 0 },
        /* SD card, UHS-I class 10 without command queueing: ~1 ms per random
         * 4 KiB read (the A1 class guarantees >= 1500 IOPS, plain cards do
         * less), ~30 MB/s sustained. */
        { "sd", 1, false, 1000, 30, 30, 0, 0, 0 },
        /* NVMe SSD: ~80 us per 4 KiB read at queue depth 1 (consumer drives
         * measure 60-100 us), many commands in parallel.  Real drives read
         * 2-3.5 GB/s; the emulator's FUSE + loop path cannot pass more than
         * 1.5-2 GB/s on our VMs, so the model is capped at 1 GB/s. */
        { "nvme", 32, false, 80, 1000, 1000, 0, 0, 0 },
};

static const struct model *model_find(const char *name)
{
        for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
                if (strcmp(models[i].name, name) == 0)
                        return &models[i];
        return NULL;
}

static double model_rate(const struct model *m, uint64_t off, uint64_t size)
{
        double f = size ? (double)off / (double)size : 0;
        if (f > 1)
                f = 1;
        return m->outer_mbps + (m->inner_mbps - m->outer_mbps) * f;     /* MB/s = bytes per us */
}

static double model_seek_us(const struct model *m, uint64_t from, uint64_t to, uint64_t size)
{
        double d;
        if (m->rpm == 0 || from == to || size == 0)
                return 0;
        d = (double)(from > to ? from - to : to - from) / (double)size;
        if (d > 1)
                d = 1;
        return m->seek_min_us + (m->seek_full_us - m->seek_min_us) * sqrt(d);
}

/* Rotational wait after arriving at `to` at time t_us: the platter turns
 * at rpm; a sector's angle is its offset within a track (track length =
 * what passes under the head in one turn at the local transfer rate). */
static double model_rotation_us(const struct model *m, uint64_t to, uint64_t size, double t_us)
{
        double turn_us, track_bytes, want, have, w;
        if (m->rpm == 0)
                return 0;
        turn_us = 60e6 / m->rpm;
        track_bytes = model_rate(m, to, size) * turn_us;
        want = fmod((double)to / track_bytes, 1.0);
        have = fmod(t_us / turn_us, 1.0);
        w = want - have;
        if (w < 0)
                w += 1;
        return w * turn_us;
}

/* The drive's view of the platter: where the head is (end of the last
 * read) and how far back the current stream reaches in its read-ahead
 * buffer (bytes that passed under the head since the last seek). */
struct head {
        uint64_t at, stream_lo;
};

#define DRIVE_BUFFER (8ULL << 20)       /* cache of a desktop drive: 8-64 MiB */
#define INTERFACE_MBPS 300.0            /* SATA 3 Gb/s, what a buffer hit costs */

/* Service time of one read at time t_us; moves the head.  A read starting
 * where the previous one ended continues the stream; one a little further
 * along the track waits for the platter to bring it round (reading what
 * passes into the buffer); one inside the buffer costs only the transfer
 * over the interface. */
static double model_service_us(const struct model *m, struct head *h, uint64_t off, uint64_t len,
                               uint64_t size, double t_us)
{
        double us = m->cmd_us, track;

        if (m->rpm == 0)
                return us + (double)len / model_rate(m, off, size);
        track = model_rate(m, h->at, size) * 60e6 / m->rpm;
        if (off >= h->stream_lo && off + len <= h->at)
                return us + (double)len / INTERFACE_MBPS;
        if (off >= h->at && (double)(off - h->at) < track) {
                us += (double)(off - h->at) / model_rate(m, h->at, size);
        } else {
                double s = model_seek_us(m, h->at, off, size);
                us += s + model_rotation_us(m, off, size, t_us + us + s);
                h->stream_lo = off;
        }
        h->at = off + len;
        if (h->at - h->stream_lo > DRIVE_BUFFER)
                h->stream_lo = h->at - DRIVE_BUFFER;
        return us + (double)len / model_rate(m, off, size);
}

/* ---- shared state --------------------------------------------------------- */

_Atomic enum mode mode = MODE_SLOW;
#define ZERO_MODE_US 200.0

struct waiter {
        uint64_t off, len;
        double arrival;         /* when the daemon received it */
        bool go;
        pthread_cond_t cv;
        struct waiter *next;
};

static struct {
        const struct model *m;
        int fd;                 /* the image */
        int dfd;                /* the image with O_DIRECT: reads never touch (or
                                 * wait to fill) this machine's page cache */
        uint64_t size;
        pthread_mutex_t lock;
        struct waiter *pending;
        unsigned busy;
        struct head head;
        bool trace;             /* SLOWDEV_TRACE=1: every read to stderr */
        double free_us;         /* when the (single) server finishes, in model time */
        double bus_free_us;     /* transfers of a many-server device share one bus */
        /* counters */
        uint64_t reads, read_bytes, seeks, writes, write_bytes;
        double busy_us;
        double t0_us;
} dev = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .dfd = -1 };

/* Read the image: O_DIRECT through an aligned buffer when the request is
 * aligned (the loop device's always are), else buffered. */
static pthread_key_t bounce_key;       /* a thread's aligned buffer, freed when it exits */

static ssize_t image_read(char *buf, size_t len, off_t off)
{
        void *bounce = pthread_getspecific(bounce_key);
        ssize_t k;

        if (dev.dfd >= 0 && len <= (2u << 20) && off % 4096 == 0 && len % 512 == 0) {
                if (!bounce && posix_memalign(&bounce, 4096, 2u << 20) == 0)
                        pthread_setspecific(bounce_key, bounce);
                else if (!bounce)
                        bounce = NULL;
                if (bounce) {
                        k = pread(dev.dfd, bounce, (len + 4095) & ~(size_t)4095, off);
                        if (k >= 0) {
                                if ((size_t)k > len)
                                        k = (ssize_t)len;
                                memcpy(buf, bounce, (size_t)k);
                                return k;
                        }
                }
        }
        return pread(dev.fd, buf, len, off);
}


double mono_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* what the kernel + FUSE + loop path costs a request by itself (measured
 * by "slowdev-fuse calibrate" through the device, set via /control) */
static _Atomic double overhead_us;

/* Sleep until t_us, on time: a timer wakes a thread here 100-150 us late,
 * more than the NVMe model's whole delay, so the last SPIN_US are waited
 * out on the CPU.  While there are fewer waiters than CPUs they spin: a
 * sched_yield() beside other busy programs hands over a whole time slice
 * (3 ms late on a 5 ms round trip, measured).  More waiters than CPUs (deep
 * queues on the fast models) yield to each other. */
#define SPIN_US 200.0
static _Atomic int spinners;
int ncpus = 1;

void sleep_until_us(double t_us)
{
        struct timespec ts;
        double early = t_us - SPIN_US;

        if (early > mono_us()) {
                ts.tv_sec = (time_t)(early / 1e6);
                ts.tv_nsec = (long)((early - (double)ts.tv_sec * 1e6) * 1e3);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
        }
        atomic_fetch_add(&spinners, 1);
        while (mono_us() < t_us)
                if (atomic_load(&spinners) > ncpus)
                        sched_yield();
        atomic_fetch_sub(&spinners, 1);
}

void sleep_until_us_relaxed(double t_us)
{
        struct timespec ts;
        double early = t_us - SPIN_US;

        if (atomic_fetch_add(&spinners, 1) >= (ncpus > 1 ? ncpus / 2 : 1)) {
                /* half the CPUs spin already: a timer, late by its slack,
                 * rather than CPUs taken from the programs measured */
                atomic_fetch_sub(&spinners, 1);
                ts.tv_sec = (time_t)(t_us / 1e6);
                ts.tv_nsec = (long)((t_us - (double)ts.tv_sec * 1e6) * 1e3);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
                return;
        }
        atomic_fetch_sub(&spinners, 1);
        sleep_until_us(t_us > early ? t_us : early);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static void on_signal(int sig)
{
        atomic_store(&mode, sig == SIGUSR2 ? MODE_SLOW : sig == SIGURG ? MODE_STALL : MODE_FAST);
}

/* ---- disk mode ---------------------------------------------------------- */

#define STATS_PATH "/stats"
#define CONTROL_PATH "/control"
#define IMAGE_PATH "/image"

/* With dev.lock held: hand free servers to the best waiting requests. */
static void dispatch_locked(void)
{
        while (dev.busy < dev.m->servers && dev.pending) {
                struct waiter **best = &dev.pending;
                if (dev.m->reorder) {
                        /* shortest access time first, as NCQ firmware does:
                         * seek and rotation from where the head is now */
                        double now = mono_us(), bt = 1e300;
                        if (dev.free_us > now)
                                now = dev.free_us;
                        for (struct waiter **w = &dev.pending; *w; w = &(*w)->next) {
                                struct head h = dev.head;
                                double t = model_service_us(dev.m, &h, (*w)->off, (*w)->len, dev.size,
                                                            now - dev.t0_us);
                                if (t < bt) {
                                        bt = t;
                                        best = w;
                                }
                        }
                } else
                        while ((*best)->next)   /* oldest: the list is newest first */
                                best = &(*best)->next;
                struct waiter *w = *best;
                *best = w->next;
                w->go = true;
                dev.busy++;
                pthread_cond_signal(&w->cv);
        }
}

static int disk_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
        (void)fi;
        if (strcmp(path, STATS_PATH) == 0) {
                char text[512];
                int n;
                pthread_mutex_lock(&dev.lock);
                n = snprintf(text, sizeof(text),
                             "model %s\nreads %" PRIu64 "\nread_bytes %" PRIu64 "\nseeks %" PRIu64
                             "\nbusy_us %.0f\nwrites %" PRIu64 "\nwrite_bytes %" PRIu64 "\n",
                             dev.m->name, dev.reads, dev.read_bytes, dev.seeks, dev.busy_us, dev.writes,
                             dev.write_bytes);
                pthread_mutex_unlock(&dev.lock);
                if (off >= n)
                        return 0;
                if ((size_t)(n - off) < len)
                        len = (size_t)(n - off);
                memcpy(buf, text + off, len);
                return (int)len;
        }
        if (strcmp(path, IMAGE_PATH) != 0)
                return -ENOENT;

        struct waiter me = { .off = (uint64_t)off, .len = len, .cv = PTHREAD_COND_INITIALIZER };
        enum mode now_mode = atomic_load(&mode);
        double start, service = 0;
        ssize_t k;

        if (now_mode == MODE_WARM) {
                k = image_read(buf, len, off);
                sleep_until_us(mono_us() + 20000);
                return k < 0 ? -errno : (int)k;
        }
        if (now_mode != MODE_FAST) {
                me.arrival = mono_us();
                pthread_mutex_lock(&dev.lock);
                me.next = dev.pending;
                dev.pending = &me;
                dispatch_locked();
                while (!me.go)
                        pthread_cond_wait(&me.cv, &dev.lock);
                /* model time: a queued request starts when the previous one
                 * ended, not when this thread got round to waking up */
                start = me.arrival;
                if (dev.m->servers == 1 && dev.free_us > start)
                        start = dev.free_us;
                uint64_t was = dev.head.at;
                service = model_service_us(dev.m, &dev.head, me.off, len, dev.size, start - dev.t0_us);
                if (now_mode == MODE_ZERO)
                        service = ZERO_MODE_US;
                else if (dev.m->servers > 1) {
                        /* commands overlap, their transfers queue on the bus */
                        double xfer = (double)len / model_rate(dev.m, me.off, dev.size);
                        double begin = start + dev.m->cmd_us;
                        if (dev.bus_free_us > begin)
                                begin = dev.bus_free_us;
                        dev.bus_free_us = begin + xfer;
                        service = dev.bus_free_us - start;
                }
                if (dev.m->rpm > 0 && dev.head.stream_lo == me.off && me.off != was)
                        dev.seeks++;
                dev.reads++;
                dev.read_bytes += len;
                if (dev.trace)
                        fprintf(stderr, "%.0f read %" PRIu64 " +%zu head %" PRIu64 " service %.0f\n",
                                start - dev.t0_us, me.off, len, was, service);
                dev.busy_us += service;
                dev.free_us = start + service;
                pthread_mutex_unlock(&dev.lock);
        } else
                start = mono_us();

        k = image_read(buf, len, off);
        if (k < 0)
                k = -errno;
        if (me.go) {
                double o = now_mode == MODE_ZERO ? 0 : atomic_load(&overhead_us);
                sleep_until_us(start + (service > o ? service - o : 0));
                pthread_mutex_lock(&dev.lock);
                dev.busy--;
                dispatch_locked();
                pthread_mutex_unlock(&dev.lock);
        }
        pthread_cond_destroy(&me.cv);
        return (int)k;
}

/* "slow", "zero", "warm" or "overhead_us=N" (fast: SIGUSR1) */
static int control(const char *buf, size_t len)
{
        char cmd[64];
        double v;
        if (len >= sizeof(cmd))
                return -EINVAL;
        memcpy(cmd, buf, len);
        cmd[len] = 0;
        cmd[strcspn(cmd, "\n")] = 0;
        if (strcmp(cmd, "slow") == 0)
                atomic_store(&mode, MODE_SLOW);
        else if (strcmp(cmd, "zero") == 0)
                atomic_store(&mode, MODE_ZERO);
        else if (strcmp(cmd, "warm") == 0)
                atomic_store(&mode, MODE_WARM);
        else if (sscanf(cmd, "overhead_us=%lf", &v) == 1 && v >= 0 && v < 1e5)
                atomic_store(&overhead_us, v);
        else
                return -EINVAL;
        return (int)len;
}

static int disk_write(const char *path, const char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
        ssize_t k;
        (void)fi;
        if (strcmp(path, CONTROL_PATH) == 0)
                return control(buf, len);
        if (strcmp(path, IMAGE_PATH) != 0)
                return -EACCES;
        k = pwrite(dev.fd, buf, len, off);
        if (k < 0)
                return -errno;
        pthread_mutex_lock(&dev.lock);
        dev.writes++;
        dev.write_bytes += (uint64_t)k;
        pthread_mutex_unlock(&dev.lock);
        return (int)k;
}

static int disk_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        (void)fi;
        memset(st, 0, sizeof(*st));
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
        } else if (strcmp(path, IMAGE_PATH) == 0) {
                st->st_mode = S_IFREG | 0600;
                st->st_nlink = 1;
                st->st_size = (off_t)dev.size;
                st->st_blksize = 4096;
        } else if (strcmp(path, STATS_PATH) == 0) {
                st->st_mode = S_IFREG | 0444;
                st->st_nlink = 1;
                st->st_size = 4096;
        } else if (strcmp(path, CONTROL_PATH) == 0) {
                st->st_mode = S_IFREG | 0200;
                st->st_nlink = 1;
        } else
                return -ENOENT;
        return 0;
}

static int disk_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                        enum fuse_readdir_flags flags)
{
        (void)off; (void)fi; (void)flags;
        if (strcmp(path, "/") != 0)
                return -ENOENT;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        fill(buf, IMAGE_PATH + 1, NULL, 0, 0);
        fill(buf, STATS_PATH + 1, NULL, 0, 0);
        fill(buf, CONTROL_PATH + 1, NULL, 0, 0);
        return 0;
}

static int disk_open(const char *path, struct fuse_file_info *fi)
{
        if (strcmp(path, CONTROL_PATH) == 0) {
                fi->direct_io = 1;
                return (fi->flags & O_ACCMODE) == O_WRONLY ? 0 : -EACCES;
        }
        if (strcmp(path, STATS_PATH) == 0) {
                fi->direct_io = 1;
                return (fi->flags & O_ACCMODE) == O_RDONLY ? 0 : -EACCES;
        }
        if (strcmp(path, IMAGE_PATH) != 0)
                return -ENOENT;
        fi->direct_io = 1;      /* no page cache of the image: every read reaches the model */
        return 0;
}

static int disk_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
        (void)path; (void)fi;
        return (datasync ? fdatasync(dev.fd) : fsync(dev.fd)) < 0 ? -errno : 0;
}

static int disk_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
        (void)fi;
        /* the device's size is fixed; truncation to it (O_TRUNC-less opens) is harmless */
        if (strcmp(path, CONTROL_PATH) == 0)
                return 0;
        return strcmp(path, IMAGE_PATH) == 0 && (uint64_t)size == dev.size ? 0 : -EPERM;
}

void slowdev_conn_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        conn->max_write = 1 << 20;      /* 1 MiB requests: the kernel then allows 256-page reads */
        conn->max_readahead = 1 << 20;
        if (conn->capable & FUSE_CAP_ASYNC_DIO)
                conn->want |= FUSE_CAP_ASYNC_DIO;
        if (conn->capable & FUSE_CAP_ASYNC_READ)
                conn->want |= FUSE_CAP_ASYNC_READ;
        if (getenv("SLOWDEV_TRACE"))
                fprintf(stderr, "capable %#x want %#x max_write %u max_background %u\n", conn->capable, conn->want, conn->max_write, conn->max_background);
        cfg->use_ino = 1;
        cfg->nullpath_ok = 0;
}

static void *disk_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        slowdev_conn_init(conn, cfg);
        dev.t0_us = mono_us();
        return NULL;
}

static const struct fuse_operations disk_ops = {
        .init = disk_init,
        .getattr = disk_getattr,
        .readdir = disk_readdir,
        .open = disk_open,
        .read = disk_read,
        .write = disk_write,
        .fsync = disk_fsync,
        .truncate = disk_truncate,
};

/* ---- main ----------------------------------------------------------------- */

/* Monte-Carlo of what readset probe sees on the model: QD1 4 KiB reads at
 * uniformly random 4 KiB-aligned offsets; 1 MiB sequential reads from the
 * start, the middle and the end of the device. */
static int expect(const struct model *m, uint64_t size, double floor_us)
{
        struct head head = { 0, 0 };
        uint64_t s = 0x9e3779b97f4a7c15ULL, blocks = size / 4096;
        double t = 0, total = 0, seq = 0;
        int n = 20000;

        for (int i = 0; i < n; i++) {
                uint64_t off;
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                off = (s % blocks) * 4096;
                double us = model_service_us(m, &head, off, 4096, size, t);
                t += us + 50;   /* the host's turnaround between two QD1 reads */
                total += us;
        }
        for (int z = 0; z < 3; z++) {
                uint64_t at = z == 0 ? 0 : z == 1 ? size / 2 : size - (64ULL << 20);
                seq += model_rate(m, at, size);
        }
        seq /= 3;
        /* 1 MiB reads pay the per-command cost unless commands overlap */
        if (m->servers == 1)
                seq = (1 << 20) / ((1 << 20) / seq + m->cmd_us);
        /* nothing is faster than the emulator's own path */
        printf("model %s\nsize %" PRIu64 "\nlatency_qd1_us %.0f\nsequential_mbps %.1f\nrotational %d\n", m->name,
               size, total / n > floor_us ? total / n : floor_us, seq, m->rpm > 0);
        return 0;
}

static void *warm_thread(void *arg)
{
        const char *path = arg;
        void *buf;
        int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
        if (fd >= 0 && posix_memalign(&buf, 4096, 1 << 20) == 0) {
                for (int i = 0; i < 8; i++)
                        if (pread(fd, buf, 1 << 20, (off_t)i << 20) < 0)
                                break;
                free(buf);
        }
        if (fd >= 0)
                close(fd);
        return NULL;
}

/* The path's own cost: median of QD1 4 KiB O_DIRECT random reads of the
 * device (the emulator in "zero" mode), for about a second.  First, many
 * large reads at once held 20 ms each ("warm" mode, through CONTROL), so that
 * the daemon has the threads and buffers a deep queue needs before anything
 * is measured. */
static int control_write(const char *control, const char *what)
{
        int fd = control ? open(control, O_WRONLY | O_CLOEXEC) : -1;
        ssize_t k = fd >= 0 ? write(fd, what, strlen(what)) : -1;
        if (fd >= 0)
                close(fd);
        return k < 0 ? -1 : 0;
}

static int calibrate(const char *path, const char *control)
{
        pthread_t warm_t[32];
        control_write(control, "warm");
        for (int i = 0; i < 32; i++)
                if (pthread_create(&warm_t[i], NULL, warm_thread, (void *)path) != 0)
                        warm_t[i] = 0;
        for (int i = 0; i < 32; i++)
                if (warm_t[i])
                        pthread_join(warm_t[i], NULL);
        control_write(control, "zero");

        static double lat[20000];
        uint64_t s = 0x2545f4914f6cdd1dULL, blocks;
        void *buf;
        struct stat st;
        int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC), n = 0;
        double end;

        if (fd < 0 || fstat(fd, &st) < 0 || posix_memalign(&buf, 4096, 4096) != 0) {
                fprintf(stderr, "slowdev-fuse: cannot read '%s': %s\n", path, strerror(errno));
                return 1;
        }
        blocks = (uint64_t)lseek(fd, 0, SEEK_END) / 4096;
        end = mono_us() + 1e6;
        while (n < 20000 && mono_us() < end && blocks) {
                double t = mono_us();
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                if (pread(fd, buf, 4096, (off_t)((s % blocks) * 4096)) != 4096)
                        break;
                lat[n++] = mono_us() - t;
        }
        close(fd);
        free(buf);
        if (n < 10)
                return 1;
        qsort(lat, (size_t)n, sizeof(double), cmp_double);
        /* "zero" mode holds each read ZERO_MODE_US: the rest is the path,
         * timer wake-up included */
        printf("%.0f\n", lat[n / 2] > ZERO_MODE_US ? lat[n / 2] - ZERO_MODE_US : 0);
        return 0;
}

static int usage(void)
{
        fprintf(stderr, "usage: slowdev-fuse disk hdd|usb|sd|nvme IMAGE MOUNTPOINT [FUSE options]\n"
                        "       slowdev-fuse share rtt=US[,mbps=N][,client=strict|smb|nfs][,names=S][,attrs=S][,negative=S]\n"
                        "                          SOURCE MOUNTPOINT [FUSE options]\n"
                        "       slowdev-fuse expect hdd|usb|sd|nvme SIZE [FLOOR_US]\n"
                        "       slowdev-fuse calibrate DEVICE [CONTROL]\n");
        return 2;
}

int main(int argc, char **argv)
{
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        const struct fuse_operations *ops;
        struct fuse_loop_config *cfg;
        struct fuse *f;
        struct stat st;
        int r;

        if ((argc == 3 || argc == 4) && strcmp(argv[1], "calibrate") == 0)
                return calibrate(argv[2], argc == 4 ? argv[3] : NULL);
        if (argc < 4)
                return usage();
        if (strcmp(argv[1], "expect") == 0) {
                const struct model *m = model_find(argv[2]);
                uint64_t size = strtoull(argv[3], NULL, 0);
                if (!m || size < (256ULL << 20))
                        return usage();
                return expect(m, size, argc > 4 ? strtod(argv[4], NULL) : 0);
        }
        if (argc < 5)
                return usage();
        if (strcmp(argv[1], "disk") == 0) {
                dev.m = model_find(argv[2]);
                if (!dev.m)
                        return usage();
                dev.fd = open(argv[3], O_RDWR | O_CLOEXEC);
                if (dev.fd < 0 || fstat(dev.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                        fprintf(stderr, "slowdev-fuse: cannot use '%s' as an image: %s\n", argv[3], strerror(errno));
                        return 1;
                }
                dev.size = (uint64_t)st.st_size;
                dev.dfd = open(argv[3], O_RDONLY | O_DIRECT | O_CLOEXEC);     /* -1: buffered reads only */
                if (pthread_key_create(&bounce_key, free) != 0)
                        dev.dfd = -1;
                dev.trace = getenv("SLOWDEV_TRACE") != NULL;
                ops = &disk_ops;
        } else if (strcmp(argv[1], "share") != 0)
                return usage();

        signal(SIGUSR1, on_signal);
        signal(SIGUSR2, on_signal);
        signal(SIGURG, on_signal);
        prctl(PR_SET_TIMERSLACK, 1UL);  /* wake up on time: the models are in microseconds */
        cpu_set_t cpus;         /* the CPUs this daemon may run on (a cpuset may allow fewer) */
        ncpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0 ? CPU_COUNT(&cpus) : 1;
        if (strcmp(argv[1], "share") == 0)
                return share_main(argc, argv);
        ops = &disk_ops;

        fuse_opt_add_arg(&args, argv[0]);
        for (int i = 5; i < argc; i++)
                fuse_opt_add_arg(&args, argv[i]);
        f = fuse_new(&args, ops, sizeof(*ops), NULL);
        if (!f)
                return 1;
        if (fuse_mount(f, argv[4]) != 0) {
                fuse_destroy(f);
                return 1;
        }
        if (fuse_set_signal_handlers(fuse_get_session(f)) != 0) {
                fuse_unmount(f);
                fuse_destroy(f);
                return 1;
        }
        /* tell bench/slowdev we are serving */
        fprintf(stdout, "ready\n");
        fflush(stdout);
        cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(cfg, 256);
        fuse_loop_cfg_set_idle_threads(cfg, 64);
        r = fuse_loop_mt(f, cfg);
        fuse_loop_cfg_destroy(cfg);
        fuse_remove_signal_handlers(fuse_get_session(f));
        fuse_unmount(f);
        fuse_destroy(f);
        fuse_opt_free_args(&args);
        return r == 0 ? 0 : 1;
}
