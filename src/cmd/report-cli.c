/* SPDX-License-Identifier: MIT */
#include "cmd/report-cli.h"

#include <errno.h>
#include <limits.h>

#include "cmd/cmd.h"
#include "cmd/progress.h"
#include "report/profiles.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

int say_local_profile(const char *dir, bool may_probe, struct cost_profile *ret)
{
        char path[PATH_MAX], p1[4 * PATH_MAX + 8], p2[4 * PATH_MAX + 8];
        const char *what;
        struct progress pg;
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
                cmd_info_wrapped("probing %s (about 3 s; not cached: no block device tells this file system apart)",
                                 printable_elided(dir, 60, p1, sizeof(p1)));
                break;
        case REPORT_LOCAL_PROBE_KEEP:
                cmd_info_wrapped("no profile of this device yet: probing %s (about 3 s; cached in %s)",
                                 printable_elided(dir, 60, p1, sizeof(p1)), printable_elided(path, 60, p2, sizeof(p2)));
                break;
        }
        /* (how far, on a terminal: as probe's own) */
        progress_start(&pg, "probe", false);
        r = report_probe_profile(dir, next == REPORT_LOCAL_PROBE_KEEP ? path : NULL, progress_report_to, &pg, ret,
                                 &what);
        progress_done(&pg);
        if (r < 0)
                log_warning_errno(r, "cannot %s '%s'", what, dir);
        return r;
}
