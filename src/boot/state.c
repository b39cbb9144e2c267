/* SPDX-License-Identifier: MIT */
/* The boot's state directory. */
#include "boot/state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot/plan.h"
#include "model/format.h"
#include "model/readset.h"
#include "model/store.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

void boot_state_paths(const char *dir, struct boot_state *p)
{
        snprintf(p->dir, sizeof(p->dir), "%s", dir);
        snprintf(p->enabled, sizeof(p->enabled), "%s/enabled", dir);
        snprintf(p->history, sizeof(p->history), "%s/history", dir);
        snprintf(p->plan, sizeof(p->plan), "%s/plan.readset", dir);
        snprintf(p->stale, sizeof(p->stale), "%s/stale", dir);
        snprintf(p->lock, sizeof(p->lock), "%s/lock", dir);
        for (int i = 0; i < BOOT_KEEP; i++)
                snprintf(p->boot[i], sizeof(p->boot[i]), "%s/boot.%d.readset", dir, i);
}

bool boot_state_has(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int boot_state_make_dir(const char *dir)
{
        return make_dir_and_parent(dir);
}

int boot_state_check(const char *dir, char *why, size_t size)
{
        return trust_check_dir(dir, why, size);
}

const char *boot_state_stale(const struct boot_state *p, char *buf, size_t size)
{
        _cleanup_free_ char *s = NULL;

        if (!boot_state_has(p->stale) || read_small_line(p->stale, &s, 4096) < 0)
                return NULL;
        snprintf(buf, size, "%s", s[0] ? s : "marked stale");
        return buf;
}

int boot_state_enable(const struct boot_state *p)
{
        return boot_state_has(p->enabled) ? 0 : write_file_atomic_text(p->enabled, "1\n");
}

int boot_state_mark_stale(const struct boot_state *p, const char *why)
{
        char line[512];

        snprintf(line, sizeof(line), "%s\n", why ? why : "marked stale");
        return write_file_atomic_text(p->stale, line);
}

int boot_state_remove(const struct boot_state *p, void (*failed)(void *userdata, const char *path, int err),
                      void *userdata, int *ret_dir_err)
{
        const char *files[] = { p->enabled, p->history, p->plan, p->stale, p->lock, p->boot[0], p->boot[1],
                                p->boot[2] };
        int r = 0;

        _Static_assert(BOOT_KEEP == 3, "the boots removed by name");
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                if (unlink(files[i]) < 0 && errno != ENOENT) {
                        r = -errno;
                        failed(userdata, files[i], r);
                }
        (void)store_remove_left(p->dir, p->plan);
        for (int i = 0; i < BOOT_KEEP; i++)
                (void)store_remove_left(p->dir, p->boot[i]);
        *ret_dir_err = rmdir(p->dir) < 0 && errno != ENOENT ? -errno : 0;
        return r;
}

int boot_state_lock(const struct boot_state *p)
{
        _cleanup_close_ int fd = open(p->lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
                return -errno;
        return TAKE_FD(fd);
}

int boot_state_keep(const struct boot_state *p, const struct readset *rs, bool stale,
                    void (*left_out)(void *userdata, const char *path, const char *why), void *userdata,
                    size_t *ret_merged)
{
        struct readset *boots[BOOT_KEEP] = { 0 };
        _cleanup_readset_ struct readset *plan = NULL;
        size_t n = 0;
        int r;

        *ret_merged = 0;
        if (stale)
                for (int i = 0; i < BOOT_KEEP; i++)
                        (void)unlink(p->boot[i]);
        else
                for (int i = BOOT_KEEP - 1; i > 0; i--)
                        if (rename(p->boot[i - 1], p->boot[i]) < 0 && errno != ENOENT)
                                return -errno;
        if ((r = store_keep(p->boot[0], rs)) < 0)
                return r;
        for (int i = 0; i < BOOT_KEEP; i++) {
                char why[256];
                if (!boot_state_has(p->boot[i]))
                        continue;
                if (format_read(p->boot[i], &boots[n], why, sizeof(why)) < 0) {
                        left_out(userdata, p->boot[i], why);
                        continue;
                }
                n++;
        }
        r = n ? boot_plan_merge(boots, n, &plan) : -ENOENT;
        for (size_t i = 0; i < n; i++)
                readset_free(boots[i]);
        if (r < 0)
                return r;
        if ((r = store_keep(p->plan, plan)) < 0)
                return r;
        *ret_merged = n;
        return 0;
}

int boot_state_status(const struct boot_state *p, struct boot_status *ret)
{
        struct loop_options lo;
        int r;

        *ret = (struct boot_status){ .enabled = boot_state_has(p->enabled), .have_plan = boot_state_has(p->plan) };
        ret->stale = boot_state_stale(p, ret->stale_buf, sizeof(ret->stale_buf));
        if ((r = history_load(p->history, &ret->h, &ret->bad)) < 0)
                return r;
        if (ret->have_plan) {
                _cleanup_readset_ struct readset *plan = NULL;
                char why[256];
                if (format_read(p->plan, &plan, why, sizeof(why)) >= 0)
                        readset_totals(plan, &ret->t);
                else
                        ret->have_plan = false;
        }
        loop_options_for_boot(&lo);
        loop_decide(&lo, &ret->h, ret->have_plan, ret->stale, &ret->d);
        return 0;
}
