/* SPDX-License-Identifier: MIT */
#include "cmd/report-cli.h"

#include <errno.h>
#include <limits.h>

#include "report/profiles.h"
#include "util/log.h"
#include "util/banned.h"

int report_local_profile(const char *dir, bool may_probe, struct cost_profile *ret)
{
        char path[PATH_MAX] = "";
        const char *what;
        int r = report_cached_profile(dir, path, sizeof(path), ret);

        if (r >= 0)
                return 0;
        if (r == -EBADMSG) {
                log_warning("the cached profile %s cannot cost reads; remove it to probe again", path);
                return r;
        }
        if (r == -ESTALE)
                log_warning("the cached profile %s was measured on another device that had these numbers%s", path,
                            may_probe ? ": probing this one" : "");
        if (!may_probe || (r != -ENODEV && !path[0]))
                return r;
        if (r == -ENODEV)
                log_info("probing %s (about 3 s; not cached: no block device tells this file system apart)", dir);
        else
                log_info("no profile of this device yet: probing %s (about 3 s; cached in %s)", dir, path);
        r = report_probe_profile(dir, r == -ENODEV ? NULL : path, ret, &what);
        if (r < 0)
                log_warning_errno(r, "cannot %s '%s'", what, dir);
        return r;
}
