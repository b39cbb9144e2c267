/* SPDX-License-Identifier: MIT */
#include "daemon/execs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "util/mounts.h"
#include "util/util.h"
#include "util/banned.h"

#define MAX_MARKED 512

struct execs {
        int fd;
        uint64_t marked[MAX_MARKED];   /* st_dev of the file systems marked */
        unsigned n_marked;
        uint64_t overflows;
};

/* Where no program is run from, or where fanotify would see every device
 * anyone opens. */
static bool unmarked_fstype(const char *t)
{
        static const char *const skip[] = {
                "proc", "sysfs", "cgroup", "cgroup2", "tracefs", "debugfs", "securityfs",
                "devpts", "mqueue", "bpf", "pstore", "configfs", "fusectl", "binfmt_misc",
                "autofs", "efivarfs", "nsfs", "rpc_pipefs", "selinuxfs", "devtmpfs",
        };
        for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
                if (strcmp(t, skip[i]) == 0)
                        return true;
        return false;
}

/* A FUSE file system a user mounted (fusermount): its server is that
 * user's, and could leave a question about a file there unanswered, with
 * the daemon waiting */
static bool users_fuse(const struct mount_ent *m)
{
        const char *u;

        if (strncmp(m->fstype, "fuse", 4) != 0 || !m->super)
                return false;
        u = strstr(m->super, "user_id=");
        return u && strncmp(u + 8, "0,", 2) != 0 && strcmp(u + 8, "0") != 0;
}

int execs_rescan(struct execs *x)
{
        struct mounts mt = { 0 };
        uint64_t was[MAX_MARKED];
        unsigned n_was = x->n_marked;
        int r, added = 0;

        if ((r = mounts_read(&mt)) < 0) {
                mounts_free(&mt);
                return r;
        }
        /* marked again from what is mounted now (marking a file system
         * marked already changes nothing; one unmounted takes its mark with
         * it, and a new one may have the number an old one had) */
        memcpy(was, x->marked, n_was * sizeof(*was));
        x->n_marked = 0;
        for (size_t i = 0; i < mt.n && x->n_marked < MAX_MARKED; i++) {
                const struct mount_ent *m = &mt.m[i];
                bool seen = false;

                if (unmarked_fstype(m->fstype) || users_fuse(m))
                        continue;
                for (unsigned k = 0; k < x->n_marked && !seen; k++)
                        seen = x->marked[k] == m->dev;
                if (seen)
                        continue;
                if (fanotify_mark(x->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN_EXEC, AT_FDCWD, m->mnt) == 0) {
                        bool before = false;

                        for (unsigned k = 0; k < n_was && !before; k++)
                                before = was[k] == m->dev;
                        x->marked[x->n_marked++] = m->dev;
                        added += !before;
                }
        }
        mounts_free(&mt);
        return added;
}

int execs_open(struct execs **ret)
{
        struct execs *x = calloc(1, sizeof(*x));
        int r;

        if (!x)
                return -ENOMEM;
        x->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
                              O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME);
        if (x->fd < 0) {
                r = -errno;
                free(x);
                return r;
        }
        if ((r = execs_rescan(x)) < 0 || x->n_marked == 0) {
                execs_close(x);
                return r < 0 ? r : -ENODEV;
        }
        *ret = x;
        return 0;
}

int execs_fd(const struct execs *x) { return x->fd; }
unsigned execs_marks(const struct execs *x) { return x->n_marked; }
uint64_t execs_overflows(const struct execs *x) { return x->overflows; }

int execs_read(struct execs *x, void (*fn)(void *userdata, const struct exec_event *ev), void *userdata)
{
        char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
        int n = 0;

        for (;;) {
                ssize_t len = read(x->fd, buf, sizeof(buf));
                struct fanotify_event_metadata *m;

                if (len < 0)
                        return errno == EAGAIN || errno == EINTR ? n : -errno;
                if (len == 0)
                        return n;
                for (m = (void *)buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
                        struct exec_event ev;

                        if (m->vers != FANOTIFY_METADATA_VERSION)
                                return -EPROTO;
                        if (m->mask & FAN_Q_OVERFLOW)
                                x->overflows++;
                        if (m->fd < 0)
                                continue;
                        if (!(m->mask & FAN_OPEN_EXEC)) {
                                close(m->fd);
                                continue;
                        }
                        ev = (struct exec_event){ .pid = m->pid, .fd = m->fd, .at_us = now_us() };
                        fn(userdata, &ev);
                        n++;
                }
        }
}

void execs_close(struct execs *x)
{
        if (!x)
                return;
        if (x->fd >= 0)
                close(x->fd);
        free(x);
}
