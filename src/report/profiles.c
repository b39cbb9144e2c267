/* SPDX-License-Identifier: MIT */
#include "report/profiles.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "device/device.h"
#include "device/probe.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

#ifndef READSET_PROFILEDIR
#define READSET_PROFILEDIR "/usr/local/share/readset/profiles"
#endif

static const struct { const char *alias, *file; } aliases[] = {
        { "hdd", "hdd-7200" }, { "usb", "usb2-bridge" }, { "sd", "sd-card" },
        { "nvme", "nvme" }, { "share", "share-2ms" },
};

/* The reference profiles beside the build being run: BUILD/../profiles. */
static bool beside_build(char *buf, size_t size)
{
        char *slash;
        ssize_t k = readlink("/proc/self/exe", buf, size > 16 ? size - 16 : 0);

        if (k <= 0)
                return false;
        buf[k] = 0;
        slash = strrchr(buf, '/');
        if (!slash)
                return false;
        snprintf(slash, size - (size_t)(slash - buf), "/../profiles");
        return true;
}

int report_profile_path(const char *name, char *buf, size_t size)
{
        const char *stem = name;
        char exe[PATH_MAX];
        const char *dirs[3] = { getenv("READSET_PROFILE_DIR"), READSET_PROFILEDIR, NULL };
        int n;

        if (strchr(name, '/') || strstr(name, ".json")) {
                n = snprintf(buf, size, "%s", name);
                return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
                if (strcmp(name, aliases[i].alias) == 0)
                        stem = aliases[i].file;
        if (beside_build(exe, sizeof(exe)))
                dirs[2] = exe;
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                if (!dirs[i])
                        continue;
                n = snprintf(buf, size, "%s/%s.json", dirs[i], stem);
                if (n > 0 && (size_t)n < size && access(buf, R_OK) == 0)
                        return 0;
        }
        return -ENOENT;
}

/* The reference profiles installed with readset, or beside the build being
 * run (BUILD/../profiles), are part of the program: the owners of those
 * are not checked (util/trust.h).  Any other profile is the user's. */
static bool in_dir(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(path, dir, n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/');
}

static bool part_of_program(const char *path)
{
        char exe[PATH_MAX];

        return in_dir(path, READSET_PROFILEDIR) || (beside_build(exe, sizeof(exe)) && in_dir(path, exe));
}

int report_profile_load(const char *path, const char *name, struct cost_profile *ret, char *why, size_t why_len)
{
        _cleanup_free_ char *text = NULL;
        int r = part_of_program(path) ? trust_read_regular(path, &text, 1 << 20, why, why_len) :
                trust_read_small_file(path, &text, 1 << 20, why, why_len);   /* util/trust.h */

        if (r < 0)
                return r;
        return cost_profile_parse(text, name, ret);
}

enum report_local report_local_profile(const char *dir, bool may_probe, char *path, size_t size,
                                       struct cost_profile *ret, int *ret_err)
{
        struct stat st;
        int r, e;

        *ret_err = 0;
        path[0] = 0;
        if (stat(dir, &st) < 0) {
                *ret_err = -errno;
                return REPORT_LOCAL_NONE;
        }
        r = device_saved_profile(st.st_dev, path, size, NULL);
        if (r >= 0) {
                char why[512];
                r = report_profile_load(path, "this machine", ret, why, sizeof(why));
                if (r >= 0)
                        return REPORT_LOCAL_CACHED;
                *ret_err = r == -EINVAL ? -EBADMSG : r;
                return REPORT_LOCAL_NONE;
        }
        if (r != -ENOENT)
                *ret_err = r;   /* (-ENODEV: nothing was kept, nor can be) */
        if (r == -ENODEV) {
                *ret_err = 0;
                return may_probe ? REPORT_LOCAL_PROBE_ONCE : REPORT_LOCAL_NONE;
        }
        if (!may_probe)
                return REPORT_LOCAL_NONE;
        /* a probe now is kept as this device's own */
        e = device_probe_cache_prepare(st.st_dev, path, size);
        if (e < 0) {
                *ret_err = e;
                return REPORT_LOCAL_NONE;
        }
        return REPORT_LOCAL_PROBE_KEEP;
}

#define QUICK_SECONDS 2.0
#define QUICK_SCRATCH (128ULL << 20)

int report_probe_profile(const char *dir, const char *save_path, struct cost_profile *ret, const char **ret_what)
{
        const struct probe_options o = { .seconds = QUICK_SECONDS, .scratch_bytes = QUICK_SCRATCH, .meta_files = 500 };
        struct probe_report pr;
        struct probe_failure f;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *mem;
        int r;

        *ret_what = "probe";
        r = probe_target(dir, &o, &pr, &f);
        if (r < 0) {
                *ret_what = f.what;
                return r;
        }
        if (save_path) {
                *ret_what = "save the profile to";
                r = probe_report_save(save_path, &pr);
                if (r < 0)
                        return r;
        }
        /* the cost model reads the profile as probe writes it */
        mem = open_memstream(&text, &len);
        if (!mem)
                return -errno;
        probe_report_write(mem, &pr);
        if (fclose(mem) != 0)
                return -ENOMEM;
        *ret_what = "cost reads with the probe of";
        return cost_profile_parse(text, "this machine", ret);
}
