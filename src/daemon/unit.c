/* SPDX-License-Identifier: MIT */
#include "daemon/unit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/child.h"
#include "util/util.h"
#include "util/banned.h"

bool auto_systemd_running(void)
{
        struct stat st;
        return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

static int systemctl(const char *what, bool now)
{
        char *argv[] = { (char *)"systemctl", (char *)what, (char *)"--quiet", (char *)AUTO_UNIT,
                         now ? (char *)"--now" : NULL, NULL };
        int r = child_run(argv, NULL, 0, false, now_us() + 60 * 1000000ULL);

        return r < 0 ? r : r > 0 ? -EIO : 0;
}

int auto_unit_set(bool on)
{
        const char *what = on ? "enable" : "disable";
        int r;

        if (auto_systemd_running())
                return systemctl(what, true);
        /* offline (a chroot, an image being made, another init):
         * systemctl makes or removes the links itself, for the next boot */
        r = systemctl(what, false);
        return r == -ENOENT ? -ENOMEDIUM : r < 0 ? r : 1;
}

bool auto_cmdline_off(void)
{
        _cleanup_free_ char *line = NULL;
        char *w, *save = NULL;

        if (read_small_file("/proc/cmdline", &line, 8192) < 0)
                return false;
        for (w = strtok_r(line, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
                if (strcmp(w, AUTO_CMDLINE_OFF) == 0 || strcmp(w, "readset=off") == 0)
                        return true;
        return false;
}
