/* SPDX-License-Identifier: MIT */
/* The boot session's real environment. */
#include "boot/system.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "boot/state.h"
#include "record/recorder.h"
#include "util/child.h"
#include "util/util.h"
#include "util/banned.h"

void boot_notify_ready(void)
{
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len;
        int fd;

        if (!path || (path[0] != '/' && path[0] != '@') || (len = strlen(path)) >= sizeof(sa.sun_path))
                return;
        memcpy(sa.sun_path, path, len);
        if (sa.sun_path[0] == '@')
                sa.sun_path[0] = 0;     /* abstract namespace */
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        (void)sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&sa,
                     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
        close(fd);
}

bool boot_cmdline_off(void)
{
        _cleanup_free_ char *s = NULL;
        char *save = NULL;

        if (read_small_file("/proc/cmdline", &s, 65536) < 0)
                return false;
        for (char *w = strtok_r(s, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
                if (strcmp(w, "readset=off") == 0 || strcmp(w, "readset=0") == 0)
                        return true;
        return false;
}

/* The boot's total as systemd's "Startup finished" line gives it, in us;
 * 0 when unknown. */
static uint64_t systemd_total_us(void)
{
        char *argv[] = { "systemctl", "show", "-p", "FinishTimestampMonotonic", "-p", "FirmwareTimestampMonotonic",
                         NULL };
        char buf[1024];
        uint64_t finish = 0, firmware = 0;

        if (child_run(argv, buf, sizeof(buf), false, now_us() + 10000000) != 0)
                return 0;
        for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "FinishTimestampMonotonic=", 25) == 0)
                        (void)parse_u64(line + 25, &finish);
                else if (strncmp(line, "FirmwareTimestampMonotonic=", 27) == 0)
                        (void)parse_u64(line + 27, &firmware);
        }
        return finish ? finish + firmware : 0;
}

int boot_wait_systemd(uint64_t deadline_us, uint64_t *ret_total_us)
{
        char *argv[] = { "systemctl", "is-system-running", "--wait", NULL };
        struct stat st;
        int r;

        *ret_total_us = 0;
        if (stat("/run/systemd/system", &st) < 0)
                return -EHOSTDOWN;      /* not booted by systemd */
        /* it waits on systemd's own bus, no polling here */
        r = child_run(argv, NULL, 0, false, deadline_us);
        if (r < 0)
                return r;
        /* running, or degraded (a unit failed): finished either way */
        *ret_total_us = systemd_total_us();
        return 0;
}

int boot_parse_seconds(const char *s, uint64_t *ret_us)
{
        uint64_t w, f = 0, scale = 100000;
        const char *p;

        while (*s == ' ' || *s == '\t')
                s++;
        if (parse_u64_prefix(s, &w, &p) < 0)
                return -EINVAL;
        if (*p == '.')
                for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
                        f += (uint64_t)(*p - '0') * scale;      /* past microseconds: cut (scale 0) */
        while (isspace((unsigned char)*p))
                p++;
        if (*p)
                return -EINVAL;
        if (w >= 1000000 || (w == 0 && f == 0))
                return -ERANGE;
        *ret_us = w * 1000000 + f;
        return 0;
}

int boot_wait_line(int fd, uint64_t deadline_us, uint64_t *ret_total_us)
{
        char line[128];
        size_t n = 0;

        *ret_total_us = 0;
        for (;;) {
                struct pollfd pf = { .fd = fd, .events = POLLIN };
                uint64_t now = now_us();
                ssize_t k;
                int r;

                if (now >= deadline_us)
                        return -ETIMEDOUT;
                r = poll(&pf, 1, (int)MIN((deadline_us - now) / 1000 + 1, 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                k = read(fd, line + n, sizeof(line) - 1 - n);
                if (k < 0 && errno != EINTR && errno != EAGAIN)
                        return -errno;
                if (k <= 0 || memchr(line + n, '\n', (size_t)k) || n + (size_t)k >= sizeof(line) - 1) {
                        n += k > 0 ? (size_t)k : 0;
                        line[n] = 0;
                        line[strcspn(line, "\n")] = 0;
                        if (boot_parse_seconds(line, ret_total_us) < 0)
                                *ret_total_us = 0;
                        return 0;
                }
                n += (size_t)k;
        }
}

/* The system's state alone has the system's unit: a booted systemd is
 * asked, and offline (a chroot, an image being made, another init)
 * systemctl makes the links itself. */
static bool system_state(const char *state)
{
        return strcmp(state, BOOT_STATE_DIR) == 0;
}

int boot_unit_enable(const char *state)
{
        char *argv[] = { "systemctl", "enable", "--quiet", BOOT_UNIT, NULL };
        int r;

        if (!system_state(state))
                return 0;
        r = child_run(argv, NULL, 0, false, 0);
        if (r == -ENOENT)
                return 0;       /* no systemd installed: no unit to enable */
        return r < 0 ? r : r > 0 ? -EIO : 0;
}

void boot_unit_disable(const char *state)
{
        char *argv[] = { "systemctl", "disable", "--quiet", BOOT_UNIT, NULL };

        if (system_state(state))
                (void)child_run(argv, NULL, 0, true, 0);
}

/* ---- the real environment ---------------------------------------------- */

static bool sys_cmdline_off(void *userdata) { (void)userdata; return boot_cmdline_off(); }
static void sys_notify_ready(void *userdata, bool running) { (void)userdata; (void)running; boot_notify_ready(); }
static uint64_t sys_now_us(void *userdata) { (void)userdata; return now_us(); }
static uint64_t sys_now_unix(void *userdata) { (void)userdata; return (uint64_t)time(NULL); }
static void sys_sleep_us(void *userdata, uint64_t us) { (void)userdata; usleep((useconds_t)us); }

static int sys_wait_finished(void *userdata, uint64_t deadline_us, uint64_t *ret_total_us)
{
        (void)userdata;
        return boot_wait_systemd(deadline_us, ret_total_us);
}

static int rec_open(void *userdata, void **ret_rec, const char **ret_what, int *ret_lookups_err)
{
        struct recorder_options o = { .buffer_kb = RECORDER_DEFAULT_BUFFER_KB, .lookups = true,
                                      .max_walk = RECORDER_DEFAULT_MAX_WALK, .max_events = BOOT_MAX_EVENTS };
        struct recorder_status st;
        struct recorder *rec = NULL;
        int r;

        (void)userdata;
        *ret_lookups_err = 0;
        if ((r = recorder_open(&o, &rec, ret_what)) < 0)
                return r;
        recorder_get_status(rec, &st);
        *ret_lookups_err = st.lookups_error;
        *ret_rec = rec;
        return 0;
}

static int rec_start(void *userdata, void *rec)
{
        int r;

        (void)userdata;
        if ((r = recorder_start(rec)) < 0)
                recorder_free(rec);
        return r;
}

static int rec_finish(void *userdata, void *rec, struct readset **ret, uint64_t *ret_dropped)
{
        struct recorder_status st;
        int r;

        (void)userdata;
        *ret = NULL;
        if ((r = recorder_stop(rec)) >= 0 && (r = recorder_finish(rec, ret)) < 0) {
                readset_free(*ret);
                *ret = NULL;
        }
        recorder_get_status(rec, &st);
        *ret_dropped = st.dropped_events + st.lost_events;
        recorder_free(rec);
        return r < 0 ? r : 0;
}

void boot_env_system(struct boot_env *env)
{
        env->sys = (struct boot_system){ .cmdline_off = sys_cmdline_off, .notify_ready = sys_notify_ready,
                                         .wait_finished = sys_wait_finished, .now_us = sys_now_us,
                                         .now_unix = sys_now_unix, .sleep_us = sys_sleep_us };
        env->rec = (struct boot_recorder){ .open = rec_open, .start = rec_start, .finish = rec_finish };
}
