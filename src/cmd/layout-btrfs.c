/* SPDX-License-Identifier: MIT */
/* readset layout --compress on btrfs: what the layout (layout/btrfs.h)
 * found and did, said in text (the JSON is the verb's, one schema). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/layout-cli.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

static void print_skips_text(const struct layout *l)
{
        bool any = false;

        for (int k = 1; k < _LAYOUT_SKIP_MAX; k++) {
                if (!l->skipped[k])
                        continue;
                printf("%s %s %" PRIu64, any ? "," : "  skipped   ", layout_skip_name(k), l->skipped[k]);
                any = true;
        }
        if (any)
                printf("\n");
        for (int k = 1; k < _LAYOUT_SKIP_MAX; k++)
                if (l->skipped[k] && layout_skip_advice(k))
                        cmd_printf_wrapped("      ", "    %s: %s", layout_skip_name(k), layout_skip_advice(k));
}

void layout_btrfs_print_survey(const struct layout *l, const struct layout_args *a)
{
        char b1[32], p1[4 * PATH_MAX + 8], p2[4 * PATH_MAX + 8];

        cmd_printf_wrapped("  ", "layout of %s on %s (btrfs), rewritten compressed with %s in first-access order",
                           printable_elided(a->path, 50, p1, sizeof(p1)), printable_elided(l->fs.mnt, 50, p2, sizeof(p2)),
                           blayout_compress_name(l->compress));
        printf("  files      %zu of the read set there; %" PRIu64 " to rewrite (%s)\n", l->n_files, l->move_files,
               format_bytes(l->move_bytes, b1));
        printf("  now        %" PRIu64 " runs of data in access order, %" PRIu64 " compressed extents\n",
               l->pieces_now, l->encoded_before);
        print_skips_text(l);
}

void layout_btrfs_print_run(const struct layout *l, double seconds)
{
        char b1[32];

        cmd_printf_wrapped("             ", "  rewrote    %" PRIu64 " files (%s), %" PRIu64 " verified from the "
               "device; now %" PRIu64 " runs, %" PRIu64 " compressed extents (%.1f s)", l->moved_files, format_bytes(l->moved_bytes, b1),
               l->verified_files, l->pieces_measured, l->encoded_after, seconds);
}

int layout_btrfs_say_end(const struct layout *l)
{
        if (l->sync_failed)
                return log_errno(l->stopped, "cannot sync %s after the rewrites", l->fs.mnt);
        switch (l->stopped) {
        case 0: return 0;
        case -EINTR:
                return log_error("interrupted after %" PRIu64 " files: every file keeps its content; run layout "
                                 "again to go on", l->moved_files);
        case -ENOSPC:
                return log_error("the file system filled up after %" PRIu64 " files: every file keeps its content",
                                 l->moved_files);
        case -EIO:
                return log_error("%s: read back from the device after its rewrite, it differs from before (a "
                                 "writer changed it meanwhile, or the device failed): layout stopped checking here",
                                 l->rs->files[l->files[l->stop_file].file].path);
        default:
                return log_errno(l->stopped, "layout stopped");
        }
}
