/* SPDX-License-Identifier: MIT */
/* readset layout --compress on btrfs: what layout/btrfs.h did, said. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/layout-cli.h"
#include "util/json.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

static void print_skips_text(const struct blayout *l)
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
                        printf("    %s: %s\n", layout_skip_name(k), layout_skip_advice(k));
}

static void print_json(const struct blayout *l, const struct layout_args *a, bool ran, double seconds)
{
        struct json j;

        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_string(&j, "read_set", a->path);
        json_string(&j, "mount_point", l->fs.mnt);
        json_string(&j, "file_system", "btrfs");
        json_string(&j, "compress", blayout_compress_name(l->compress));
        json_bool(&j, "dry_run", !ran);
        json_u64(&j, "files", l->n_files);
        json_u64(&j, "files_to_rewrite", l->move_files);
        json_u64(&j, "bytes_to_rewrite", l->move_bytes);
        json_u64(&j, "runs_before", blayout_pieces(l, false));
        json_u64(&j, "compressed_extents_before", l->encoded_before);
        if (ran) {
                json_u64(&j, "files_rewritten", l->moved_files);
                json_u64(&j, "bytes_rewritten", l->moved_bytes);
                json_u64(&j, "files_verified", l->verified_files);
                json_u64(&j, "runs_after", blayout_pieces(l, true));
                json_u64(&j, "compressed_extents_after", l->encoded_after);
                json_double(&j, "seconds", seconds);
        }
        json_object_open(&j, "skipped");
        for (int k = 1; k < _LAYOUT_SKIP_MAX; k++)
                if (l->skipped[k])
                        json_u64(&j, layout_skip_name(k), l->skipped[k]);
        json_object_close(&j);
        json_object_close(&j);
        json_end(&j);
}

int layout_btrfs(const struct readset *rs, const struct layout_fs *fs, const struct layout_args *a,
                 const struct layout_options *o)
{
        _cleanup_(blayout_freep) struct blayout *l = NULL;
        uint64_t t0;
        char b1[32];
        int r;

        r = blayout_survey(rs, fs, a->compress, a->unshare, &l);
        if (r < 0)
                return log_errno(r, "cannot look at the files of %s", a->path);
        if (!a->json) {
                printf("layout of %s on %s (btrfs), rewritten compressed with %s in first-access order\n", a->path,
                       fs->mnt, blayout_compress_name(a->compress));
                printf("  files      %zu of the read set there; %" PRIu64 " to rewrite (%s)\n", l->n_files,
                       l->move_files, format_bytes(l->move_bytes, b1));
                printf("  now        %" PRIu64 " runs of data in access order, %" PRIu64 " compressed extents\n",
                       blayout_pieces(l, false), l->encoded_before);
                print_skips_text(l);
        }
        if (a->dry || !l->move_files) {
                if (a->json)
                        print_json(l, a, false, 0);
                else
                        printf(a->dry ? "dry run: nothing rewritten\n" : "nothing rewritten: no file can be\n");
                return 0;
        }
        t0 = now_us();
        r = blayout_run(l, o);
        if (r == -EBUSY)
                return log_error("another readset layout is running on %s", fs->mnt);
        if (r < 0)
                return log_errno(r, "cannot lay out %s", a->path);
        if (a->json)
                print_json(l, a, true, (now_us() - t0) / 1e6);
        else
                printf("  rewrote    %" PRIu64 " files (%s), %" PRIu64 " verified from the device; now %" PRIu64
                       " runs, %" PRIu64 " compressed extents (%.1f s)\n", l->moved_files,
                       format_bytes(l->moved_bytes, b1), l->verified_files, blayout_pieces(l, true), l->encoded_after,
                       (now_us() - t0) / 1e6);
        if (l->sync_failed)
                return log_errno(l->stopped, "cannot sync %s after the rewrites", fs->mnt);
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
                                 rs->files[l->files[l->stop_file].file].path);
        default:
                return log_errno(l->stopped, "layout stopped");
        }
}
