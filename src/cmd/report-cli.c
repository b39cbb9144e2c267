/* SPDX-License-Identifier: MIT */
#include "cmd/report-cli.h"

#include <errno.h>
#include <limits.h>

#include "report/profiles.h"
#include "util/log.h"
#include "util/banned.h"

int say_local_profile(const char *dir, bool may_probe, struct cost_profile *ret)
{
        char path[PATH_MAX];
        const char *what;
        int err, r;
        enum report_local next = report_local_profile(dir, may_probe, path, sizeof(path), ret, &err);

        if (err == -EBADMSG)
                log_warning("the cached profile %s cannot cost reads; remove it to probe again", path);
        else if (err == -ESTALE)
                log_warning("the cached profile %s was measured on another device that had these numbers%s", path,
                            may_probe ? ": probing this one" : "");
        switch (next) {
        case REPORT_LOCAL_CACHED:
                return 0;
        case REPORT_LOCAL_NONE:
                return err < 0 ? err : -ENOENT;
        case REPORT_LOCAL_PROBE_ONCE:
                log_info("probing %s (about 3 s; not cached: no block device tells this file system apart)", dir);
                break;
        case REPORT_LOCAL_PROBE_KEEP:
                log_info("no profile of this device yet: probing %s (about 3 s; cached in %s)", dir, path);
                break;
        }
        r = report_probe_profile(dir, next == REPORT_LOCAL_PROBE_KEEP ? path : NULL, ret, &what);
        if (r < 0)
                log_warning_errno(r, "cannot %s '%s'", what, dir);
        return r;
}
