/* SPDX-License-Identifier: MIT */
#include "device/device.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/json.h"
#include "util/mounts.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

void device_profile_solid(struct device_profile *p)
{
        *p = (struct device_profile){
                .name = "solid-state",
                .rotational = false,
                .queue_depth = 32,
                .max_request = 1 << 20,
                /* reading 64 KiB more costs less than one more request here
                 * (~40 us per request, ~2 GB/s) */
                .bridge_bytes = 64 << 10,
                /* reads in the same 10 ms slice of recorded time go file by
                 * file, in offset order: the kernel then finds each file's
                 * page-cache tree and extent map warm from the read before
                 * (a million scattered single-page readahead(2) calls: 10.1 s
                 * of system time in first-access order, 3.4 s grouped this
                 * way in slices of 5 000 reads) */
                .window_us = 10000,
                .readahead_cap = 128 << 10,
        };
}

void device_profile_rotational(struct device_profile *p)
{
        *p = (struct device_profile){
                .name = "rotational",
                .rotational = true,
                .queue_depth = 4,
                .max_request = 4 << 20,
                /* a seek costs ~10 ms, i.e. ~1 MB of transfer */
                .bridge_bytes = 1 << 20,
                /* one sweep by position, for run too: on the emulated 7200 rpm
                 * disk a sweep of the boot tree takes 5 s where the start
                 * itself takes 33 s, and a program reading beside 2-second
                 * windows pulls the head away (15 s); waiting for the sweep
                 * costs it less (7 s) */
                .window_us = UINT64_MAX,
                /* the sweep in plan order from two threads: on the emulated
                 * 7200 rpm disk, the boot tree replays in 2.7 s where 8
                 * threads (the solid-state default) take 3.8-4.3 s and move
                 * the head 3x as often (docs/DECISIONS.md) */
                .submitters = 2,
                .readahead_cap = 128 << 10,
        };
}

static int read_u64_file(const char *path, uint64_t *ret)
{
        _cleanup_free_ char *s = NULL;
        int r = read_small_line(path, &s, 64);

        return r < 0 ? r : parse_u64(s, ret);
}

/* A device's "dev" in sysfs: "MAJOR:MINOR" */
static int read_dev_file(const char *path, dev_t *ret)
{
        _cleanup_free_ char *s = NULL;
        int r = read_small_line(path, &s, 64);

        return r < 0 ? r : parse_dev(s, ret);
}

int device_probe_cache_path(dev_t dev, char *buf, size_t size)
{
        const char *dir = getenv("READSET_CACHE_DIR");
        int n = snprintf(buf, size, "%s/probe-%u:%u.json", dir && *dir ? dir : "/var/cache/readset", major(dev),
                         minor(dev));

        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int device_probe_cache_prepare(dev_t dev, char *buf, size_t size)
{
        _cleanup_free_ char *dir = NULL;
        int r = device_probe_cache_path(dev, buf, size);

        if (r < 0)
                return r;
        dir = strndup(buf, (size_t)(strrchr(buf, '/') - buf));
        if (!dir)
                return -ENOMEM;
        if (*dir && mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (access(*dir ? dir : "/", W_OK) < 0)
                return -errno;
        return 0;
}

/* The sysfs directory of block device dev, and its disk's: the same for a
 * whole disk, "DIR/.." for a partition.  Returns whether it is a partition. */
#define SYSFS_DIR_MAX 64
static bool sysfs_dirs(dev_t dev, char dir[SYSFS_DIR_MAX], char disk[SYSFS_DIR_MAX])
{
        char q[SYSFS_DIR_MAX + 16];
        bool part;

        snprintf(dir, SYSFS_DIR_MAX, "/sys/dev/block/%u:%u", major(dev), minor(dev));
        snprintf(q, sizeof(q), "%s/partition", dir);
        part = access(q, F_OK) == 0;
        snprintf(disk, SYSFS_DIR_MAX, part ? "%s/.." : "%s", dir);
        return part;
}

/* Appends ";name=value" for a sysfs attribute that has a value. */
static void add_attr(char *buf, size_t size, const char *dir, const char *attr, const char *name)
{
        _cleanup_free_ char *s = NULL;
        char path[PATH_MAX];
        size_t used = strlen(buf);

        snprintf(path, sizeof(path), "%s/%s", dir, attr);
        if (read_small_line(path, &s, 512) < 0)
                return;
        for (char *c = s; *c; c++)       /* keep the string plain JSON, one line */
                if (*c < 0x20 || *c == '"' || *c == '\\' || *c == ';')
                        *c = '_';
        if (*s && used < size)
                snprintf(buf + used, size - used, ";%s=%s", name, s);
}

int device_identity(dev_t dev, char *buf, size_t size)
{
        char dir[SYSFS_DIR_MAX], disk[SYSFS_DIR_MAX], q[128];
        _cleanup_free_ char *sz = NULL;
        size_t before;
        bool part;
        static const char *const attrs[][2] = {
                { "wwid", "wwid" }, { "serial", "serial" }, { "device/wwid", "wwid" },
                { "device/serial", "serial" }, { "device/cid", "cid" }, { "device/vendor", "vendor" },
                { "device/model", "model" }, { "dm/uuid", "dm_uuid" }, { "md/uuid", "md_uuid" },
                { "loop/backing_file", "backing_file" },
        };

        part = sysfs_dirs(dev, dir, disk);
        /* no size: tmpfs, overlayfs, btrfs subvolumes, shares, whose numbers
         * are handed out anew at every mount, and nothing tells them apart */
        snprintf(q, sizeof(q), "%s/size", dir);
        if (read_small_line(q, &sz, 64) < 0)
                return -ENODEV;
        snprintf(buf, size, "size=%s", sz);
        if (part)
                add_attr(buf, size, dir, "partition", "partition");
        before = strlen(buf);
        for (size_t i = 0; i < ARRAY_SIZE(attrs); i++)
                add_attr(buf, size, disk, attrs[i][0], attrs[i][1]);
        /* nothing but a size (virtio without a serial, nbd, zram): the
         * kernel's sequence number of the disk, new at every attach and
         * boot, so such a profile lasts until then */
        if (strlen(buf) == before)
                add_attr(buf, size, disk, "diskseq", "diskseq");
        return 0;
}

/* The profile saved at path; when id is given, only if it was measured on
 * the device with that identity (-ESTALE otherwise; -ENOKEY when the file
 * has none: made before identities were kept). */
static int load_probe(const char *path, const char *id, struct device_profile *ret, char *why, size_t why_len)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_jv_ struct jv *profile = NULL;
        const struct jv *v, *rot;
        int r;

        /* util/trust.h; the reference profiles are part of the program */
        r = device_profile_is_reference(path) ? trust_read_regular(path, &text, 1 << 20, why, why_len) :
                trust_read_small_file(path, &text, 1 << 20, why, why_len);
        if (r < 0)
                return r;
        r = jv_parse(text, &profile);
        if (r < 0)
                return r;
        /* the one field the planner uses from a probe profile */
        rot = jv_get(profile, "rotational");
        if (!rot || rot->type != JV_BOOL)
                return -EINVAL;
        if (id) {
                v = jv_get(profile, "device_id");
                if (!v || v->type != JV_STRING)
                        return -ENOKEY;
                if (strcmp(v->s, id) != 0)
                        return -ESTALE;
        }
        if (rot->b)
                device_profile_rotational(ret);
        else
                device_profile_solid(ret);
        ret->measured = true;
        return 0;
}

int device_profile_from_probe(const char *path, struct device_profile *ret, char *why, size_t why_len)
{
        return load_probe(path, NULL, ret, why, why_len);
}

int device_name_profile(const struct device_name *n, struct device_profile *ret, char *why, size_t why_len)
{
        int r;

        switch (n->type) {
        case DEVICE_NAME_KIND:
                if (n->rotational)
                        device_profile_rotational(ret);
                else
                        device_profile_solid(ret);
                return 0;
        case DEVICE_NAME_REFERENCE:
                if (!n->path[0]) {      /* not installed: planned as its kind */
                        if (n->rotational)
                                device_profile_rotational(ret);
                        else
                                device_profile_solid(ret);
                        return 0;
                }
                r = load_probe(n->path, NULL, ret, why, why_len);
                ret->measured = false;          /* a datasheet's, not this machine's */
                return r;
        case DEVICE_NAME_FILE:
                break;
        }
        return load_probe(n->path, NULL, ret, why, why_len);
}

/* The profile saved for dev itself: 0 or the errors of device_saved_profile. */
static int saved_profile_of(dev_t dev, char *path, size_t size, struct device_profile *ret)
{
        char id[1024];
        struct stat st;
        int r;

        r = device_probe_cache_path(dev, path, size);
        if (r < 0)
                return r;
        if (stat(path, &st) < 0)
                return errno == ENOENT ? -ENOENT : -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        r = device_identity(dev, id, sizeof(id));
        if (r < 0)
                return r;
        {
                char why[512];
                return load_probe(path, id, ret, why, sizeof(why));
        }
}

int device_saved_profile(dev_t dev, char *path, size_t size, struct device_profile *ret)
{
        char q[128], dir[SYSFS_DIR_MAX], disk[SYSFS_DIR_MAX], disk_path[PATH_MAX];
        struct device_profile p;
        dev_t disk_dev;
        int r, r_disk;

        r = saved_profile_of(dev, path, size, &p);
        /* a partition with no profile of its own that counts: its disk's */
        if (r == -ENOENT || r == -ESTALE || r == -ENOKEY) {
                if (sysfs_dirs(dev, dir, disk)) {
                        snprintf(q, sizeof(q), "%s/dev", disk);
                        if (read_dev_file(q, &disk_dev) >= 0) {
                                r_disk = saved_profile_of(disk_dev, disk_path, sizeof(disk_path), &p);
                                if (r_disk >= 0 || r == -ENOENT) {
                                        snprintf(path, size, "%s", disk_path);
                                        r = r_disk;
                                }
                        }
                }
        }
        if (r >= 0 && ret)
                *ret = p;
        return r;
}

const char *device_note_text(const struct device_note *n)
{
        switch (n->reason) {
        case 0: return "";
        case -ESTALE: return "measured on another device that had these numbers (readset probe --save measures this one)";
        case -EINVAL: return "no rotational verdict in it (a metadata-only probe?)";
        case -EBADF: return "not a regular file";
        default: return strerror(-n->reason);
        }
}

/* The saved probe profile for dev, if it was measured on the device now
 * there; keeps ret's name.  One passed over is noted. */
static bool measured_profile(dev_t dev, struct device_profile *ret, struct device_note *note)
{
        struct device_profile p;
        struct device_note n = { 0 };
        int r;

        r = device_saved_profile(dev, n.path, sizeof(n.path), &p);
        if (r >= 0) {
                memcpy(p.name, ret->name, sizeof(p.name));
                *ret = p;
                return true;
        }
        /* (-ENOKEY: saved before profiles named their device; not trusted,
         * and not worth a word on every run) */
        if (r != -ENOENT && r != -ENODEV && r != -ENOKEY && note) {
                n.reason = r;
                *note = n;
        }
        return false;
}

/* A file system without a device number of its own (btrfs's files carry
 * an anonymous one per subvolume): the block device it is mounted from. */
static bool mounted_from(const char *path, dev_t *ret)
{
        _cleanup_free_ char *real = realpath(path, NULL);
        struct mounts mt = { 0 };
        const struct mount_ent *m;
        struct stat st;
        bool found = false;

        if (!real || mounts_read(&mt) < 0) {
                mounts_free(&mt);
                return false;
        }
        m = mounts_holding(&mt, real, strlen(real));
        if (m && m->source[0] == '/' && stat(m->source, &st) == 0 && S_ISBLK(st.st_mode)) {
                *ret = st.st_rdev;
                found = true;
        }
        mounts_free(&mt);
        return found;
}

int device_profile_for_path(const char *path, struct device_profile *ret, struct device_note *note)
{
        struct stat st;
        char q[128], base[SYSFS_DIR_MAX], devlink[SYSFS_DIR_MAX];
        uint64_t v;
        dev_t dev;

        if (stat(path, &st) < 0)
                return -errno;
        dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        if (major(dev) == 0)
                (void)mounted_from(path, &dev);
        /* a partition's queue is its disk's */
        (void)sysfs_dirs(dev, devlink, base);
        snprintf(q, sizeof(q), "%s/queue/rotational", base);
        if (read_u64_file(q, &v) >= 0 && v == 1)
                device_profile_rotational(ret);
        else
                device_profile_solid(ret);
        /* Virtual disks often claim to be rotational; until probe measures,
         * treat virtio and NVMe devices as solid-state. */
        {
                char link[PATH_MAX], target[PATH_MAX];
                ssize_t k;
                snprintf(link, sizeof(link), "%s", devlink);   /* the device itself, not "/.." */
                k = readlink(link, target, sizeof(target) - 1);
                if (k > 0) {
                        target[k] = 0;
                        if (strstr(target, "/virtio") || strstr(target, "/nvme"))
                                device_profile_solid(ret);
                        snprintf(ret->name, sizeof(ret->name), "%.63s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
                }
        }
        /* what readset probe measured here, when it was saved */
        if (note)
                note->reason = 0;
        (void)measured_profile(dev, ret, note);
        snprintf(q, sizeof(q), "%s/queue/read_ahead_kb", base);
        if (read_u64_file(q, &v) >= 0)
                ret->readahead_cap = MAX(v << 10, ret->readahead_cap);
        snprintf(q, sizeof(q), "%s/queue/max_sectors_kb", base);
        if (read_u64_file(q, &v) >= 0) {
                ret->readahead_cap = MAX(v << 10, ret->readahead_cap);
                ret->max_request = MIN(ret->max_request < (v << 10) ? (v << 10) : ret->max_request, 4ULL << 20);
        }
        return 0;
}
