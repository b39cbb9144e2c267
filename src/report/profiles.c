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

int report_profile_path(const char *name, char *buf, size_t size)
{
        struct device_name n;
        int r = device_name_parse(name, &n);

        if (r < 0)
                return r;
        if (!n.path[0])
                return -ENOENT;
        r = snprintf(buf, size, "%s", n.path);
        return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

int report_profile_load(const char *path, const char *name, struct cost_profile *ret, char *why, size_t why_len)
{
        _cleanup_free_ char *text = NULL;
        /* the reference profiles are part of the program (device/names.h) */
        int r = device_profile_is_reference(path) ? trust_read_regular(path, &text, 1 << 20, why, why_len) :
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

int report_probe_profile(const char *dir, const char *save_path, progress_fn *progress, void *progress_userdata,
                         struct cost_profile *ret, const char **ret_what)
{
        const struct probe_options o = { .seconds = QUICK_SECONDS, .scratch_bytes = QUICK_SCRATCH, .meta_files = 500,
                                         .progress = progress, .progress_userdata = progress_userdata };
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
