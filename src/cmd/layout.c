/* SPDX-License-Identifier: MIT */
/* readset layout: move a read set's files into one run of consecutive
 * blocks in first-access order (ext4), or say what that would do. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/layout-cli.h"
#include "cmd/progress.h"
#include "fs/checksum.h"
#include "cmd/report-cli.h"
#include "layout/layout.h"
#include "report/profiles.h"
#include "report/report.h"
#include "util/ioprio.h"
#include "util/json.h"
#include "util/signals.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

static void layout_help(void)
{
        printf("usage: readset layout [OPTIONS] FILE\n"
               "\n"
               "Move the data of the files the cold start recorded in FILE so that, in the\n"
               "order the start first reads them, they lie in one run of consecutive blocks,\n"
               "file after file (where ext4 puts a large new file: soon after mounting, the\n"
               "start of the device, a disk's fastest tracks).\n"
               "Online, on a mounted ext4, with the kernel's atomic extent exchange: inode\n"
               "numbers, names and contents stay; every moved file is read back from the\n"
               "device and compared with its checksum from before.  Files outside the read\n"
               "set are never touched.  Safe to interrupt at any moment; moves nothing where\n"
               "it would not reduce the runs of blocks the start reads, nor, unless --force,\n"
               "on a device that probe measures as solid state (little to gain, writes to pay).\n"
               "Needs root, never prompts; at idle I/O priority by default.\n"
               "\n"
               "options:\n"
               "  -n, --dry-run        say what would move and the predicted gain; change\n"
               "                       nothing (does not need root)\n"
               "  -j, --json           the figures as one JSON object on stdout\n"
               "  -f, --force          move also on a solid-state device\n"
               "  -p, --profile NAME   the device's profile, its verdict and costs (default:\n"
               "                       the one cached for the device, else a quick probe):\n");
        print_device_names(23);
        printf(
               "  -C, --under DIR      only the files below DIR (and DIR's file system);\n"
               "                       default: the files of the file system most of the\n"
               "                       read set lies on\n"
               "      --move WHAT      ranges: only the ranges the start brought in (gaps up to\n"
               "                       64 KiB bridged), the rest of each file left where it is;\n"
               "                       files: whole files; auto (default): whole where the start\n"
               "                       brought in 7/8 of a file or more, else its ranges\n"
               "      --io-priority C  idle (default) or best-effort\n"
               "      --undo-leftovers only remove what a layout left behind, and say what: only\n"
               "                       a layout that stopped on a failed check leaves something\n"
               "                       (the file's old data, pinned, and a note); the donor\n"
               "                       space of any other end is unnamed and freed by the\n"
               "                       kernel\n"
               "      --compress ALG   on btrfs: rewrite the files compressed (zstd, lzo, zlib),\n"
               "                       one after the other in first-access order (the kernel's\n"
               "                       defragment); files sharing extents with a snapshot or a\n"
               "                       copy, nodatacow and compressed ones are left alone\n"
               "      --unshare        with --compress: rewrite shared files too\n"
               "  -q, --quiet          no progress and no notes on stderr (errors and\n"
               "                       warnings still)\n"
               "      --allow-untrusted\n"
               "                       as root, read files others can change too\n"
               "                       (docs/SECURITY.md)\n"
               "  -h, --help           show this help\n"
               "\n"
               "On btrfs, layout rewrites compressed (--compress), each file copy-on-write:\n"
               "old extents or new, whatever happens; each read back and compared.\n"
               "Other file systems are refused with their name.  docs/LAYOUT.md says what is\n"
               "skipped and why, and what the kernel guarantees across a crash.\n");
}

#define OPT_IOPRIO 0x100
#define OPT_UNDO 0x101
#define OPT_MOVE 0x102
#define OPT_COMPRESS 0x103
#define OPT_UNSHARE 0x104

static volatile sig_atomic_t stop_requested;

/* How far the run is, as the line: "layout: 12/340 files, 1.2 GiB of ..." */
static void show_progress(void *userdata, const struct layout *l, uint64_t files, uint64_t bytes)
{
        progress_update(userdata, &(struct progress_report){ NULL, PROGRESS_BYTES, bytes, l->move_bytes, files,
                                                             l->move_files });
}

/* The profile the prediction is made on: --profile's, else this
 * machine's (dev_name its device): 0, 1 when there is none (said),
 * CMD_FAILED. */
static int choose_profile(const char *arg_profile, const char *mnt, const char *dev_name, struct cost_profile *ret)
{
        struct cost_profile cp;
        char path[PATH_MAX], why[512] = "";
        int e;

        if (arg_profile) {
                if ((e = report_profile_path(arg_profile, path, sizeof(path))) < 0)
                        return log_errno(e, "cannot find the profile '%s'%s", arg_profile,
                                         e == -ENOENT ? " (a reference profile: not installed in " READSET_PROFILEDIR ")" :
                                                        "");
                e = report_profile_load(path, arg_profile, &cp, why, sizeof(why));
                if (e == -EPERM && why[0])
                        return say_cannot_read(path, e, why);
                if (e < 0)
                        return log_errno(e, "cannot use the profile '%s' (%s)", arg_profile, path);
                snprintf(cp.name, sizeof(cp.name), "%.90s", arg_profile);
        } else {
                e = say_local_profile(mnt, true, &cp);
                if (e < 0) {
                        log_warning_errno(e, "no profile of this device");
                        log_info("  (no prediction, and no measured verdict)");
                        return 1;
                }
                snprintf(cp.name, sizeof(cp.name), "this machine (%.40s)", dev_name);
        }
        *ret = cp;
        return 0;
}

/* The report's prediction for this device (report_predict_here). */
static int predict(const struct readset *whole, const struct layout_fs *fs, const char *arg_profile,
                   struct prediction *ret)
{
        _cleanup_readset_ struct readset *rs = NULL;
        struct replay_args here;
        struct device_profile dev;
        struct cost_profile cp;
        int e;

        *ret = (struct prediction){};
        e = readset_part(whole, fs->dev, fs->under[0] ? fs->under : NULL, &rs);
        if (e < 0)
                return log_errno(e, "out of memory");
        replay_args_init(&here);
        if (replay_args_device(&here, rs, &dev) < 0)
                return CMD_FAILED;
        e = choose_profile(arg_profile, fs->mnt, dev.name, &cp);
        if (e != 0)
                return e > 0 ? 0 : e;
        /* the replay planned for what the profile measured */
        if (cp.rotational)
                device_profile_rotational(&dev);
        else
                device_profile_solid(&dev);
        e = report_predict_here(rs, &cp, &here.opts.policy, &dev, &ret->s);
        if (e < 0) {
                log_warning_errno(e, "cannot predict the gain");
                return 0;
        }
        ret->have = true;
        ret->rotational = cp.rotational;
        snprintf(ret->profile, sizeof(ret->profile), "%s", cp.name);
        return 0;
}

/* One schema for every backend: ext4's keys; those of moving blocks
 * (ext4's) and of compressing (btrfs's) where the backend has them. */
static void print_json(const struct layout *l, const char *rs_path, const struct prediction *pr, bool dry_run,
                       bool ran, const char *decision, double seconds)
{
        struct json j;
        const struct readset *rs = l->rs;
        bool blocks = !l->fs.ops->compresses, compresses = l->fs.ops->compresses;

        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_string(&j, "read_set", rs_path);
        json_string(&j, "mount", l->fs.mnt);
        json_string(&j, "fstype", l->fs.fstype);
        if (l->fs.under[0])
                json_string(&j, "under", l->fs.under);
        json_u64(&j, "files_outside", l->outside_files);
        json_u64(&j, "block_size", l->fs.block_size);
        json_bool(&j, "dry_run", dry_run);
        if (blocks)
                json_string(&j, "move", l->what == LAYOUT_RANGES ? "ranges" : l->what == LAYOUT_FILES ? "files" : "auto");
        if (compresses)
                json_string(&j, "compress", blayout_compress_name(l->compress));
        json_string(&j, "decision", decision);
        json_u64(&j, "files", l->n_files);
        if (blocks) {
                json_u64(&j, "movable_files", l->movable_files);
                json_u64(&j, "movable_bytes", l->movable_blocks * l->fs.block_size);
                json_u64(&j, "files_in_place", l->keep_files);
                json_u64(&j, "bytes_in_place", l->keep_blocks * l->fs.block_size);
        }
        json_u64(&j, "files_to_move", l->move_files);
        json_u64(&j, "bytes_to_move", l->move_bytes);
        if (blocks)
                json_u64(&j, "usable_free_bytes", l->avail_blocks * l->fs.block_size);
        json_u64(&j, "pieces_now", l->pieces_now);
        if (blocks)
                json_u64(&j, "pieces_after", l->pieces_after);
        json_u64(&j, "metadata_bytes", l->meta_bytes);
        json_u64(&j, "metadata_ranges", l->meta_ranges);
        if (compresses)
                json_u64(&j, "compressed_extents_before", l->encoded_before);
        if (pr->have) {
                json_object_open(&j, "predicted");
                json_string(&j, "device", pr->profile);
                json_bool(&j, "rotational", pr->rotational);
                json_double(&j, "plain_s", pr->s.plain.seconds);
                json_double(&j, "replay_s", pr->s.replay.seconds);
                json_double(&j, "after_layout_s", pr->s.layout.seconds);
                json_object_close(&j);
        }
        json_object_open(&j, "skipped");
        for (int w = 1; w < _LAYOUT_SKIP_MAX; w++)
                if (l->skipped[w])
                        json_u64(&j, layout_skip_name(w), l->skipped[w]);
        json_object_close(&j);
        json_array_open(&j, "skipped_files");
        for (size_t i = 0; i < l->n_files; i++) {
                const struct layout_file *lf = &l->files[i];
                if (!lf->skip)
                        continue;
                json_object_open(&j, NULL);
                json_string(&j, "path", rs->files[lf->file].path);
                json_string(&j, "reason", layout_skip_name(lf->skip));
                if (lf->err)
                        json_string(&j, "error", strerror(-lf->err));
                json_object_close(&j);
        }
        json_array_close(&j);
        if (ran) {
                if (blocks) {
                        json_u64(&j, "donor_runs", l->donor_runs);
                        json_u64(&j, "donor_offset", l->donor_physical);
                }
                json_u64(&j, "moved_files", l->moved_files);
                json_u64(&j, "moved_bytes", l->moved_bytes);
                json_u64(&j, "verified_files", l->verified_files);
                if (blocks)
                        json_u64(&j, "exchanges", l->exchanges);
                json_u64(&j, "pieces_measured", l->pieces_measured);
                if (compresses)
                        json_u64(&j, "compressed_extents_after", l->encoded_after);
                json_double(&j, "seconds", seconds);
                if (l->stopped)
                        json_string(&j, "stopped", layout_stop_name(l->stopped));
                if (l->rescue[0])
                        json_string(&j, "rescue", l->rescue);
        }
        json_object_close(&j);
        json_end(&j);
}

/* Each reason files were skipped for, what to do about it, the first
 * three of them named */
static void print_skipped(const struct layout *l)
{
        char path[4 * PATH_MAX + 8];

        for (int w = 1; w < _LAYOUT_SKIP_MAX; w++) {
                const char *advice = layout_skip_advice(w);
                unsigned shown = 0;
                if (!l->skipped[w])
                        continue;
                cmd_printf_wrapped("               ", "  skipped    %" PRIu64 " %s%s%s", l->skipped[w],
                                   layout_skip_name(w), advice ? ": " : "", advice ? advice : "");
                for (size_t i = 0; i < l->n_files && shown < 3; i++)
                        if (l->files[i].skip == w) {
                                printf("               %s\n", cmd_fit(l->rs->files[l->files[i].file].path, 15,
                                                                     path, sizeof(path)));
                                shown++;
                        }
                if (l->skipped[w] > shown)
                        printf("               ... (--json names them all)\n");
        }
}

static void print_text(const struct layout *l, const char *rs_path, const struct prediction *pr)
{
        char b1[32], b2[32], p1[4 * PATH_MAX + 8], p2[4 * PATH_MAX + 8];
        uint64_t skipped = 0;

        cmd_printf_wrapped("  ", "layout of %s on %s (%s)", printable_elided(rs_path, 50, p1, sizeof(p1)),
                           printable_elided(l->fs.mnt, 50, p2, sizeof(p2)), l->fs.fstype);
        if (l->fs.under[0])
                printf("  files below %s\n", cmd_fit(l->fs.under, 14, p1, sizeof(p1)));
        for (int w = 1; w < _LAYOUT_SKIP_MAX; w++)
                skipped += l->skipped[w];
        printf("  files      %zu regular: %" PRIu64 " to move (%s), %" PRIu64 " skipped\n", l->n_files,
               l->move_files, format_bytes(l->move_blocks * l->fs.block_size, b1), skipped);
        printf("             %" PRIu64 " already in place (%s)\n", l->keep_files,
               format_bytes(l->keep_blocks * l->fs.block_size, b2));
        if (l->outside_files)
                printf("             %" PRIu64 " more outside it: left alone\n", l->outside_files);
        printf("  pieces     %" PRIu64 " runs of blocks in first-access order now, %" PRIu64 " after\n",
               l->pieces_now, l->pieces_after);
        if (l->meta_bytes) {
                printf("  metadata   %s in %" PRIu64 " ranges (inode tables, directories)\n",
                       format_bytes(l->meta_bytes, b1), l->meta_ranges);
                printf("             which no layout moves\n");
        }
        if (pr->have) {
                printf("  predicted  on %s, for a cold start:\n", cmd_fit(pr->profile, 38, p1, sizeof(p1)));
                printf("             plain %.2f s; replay %.2f s now, %.2f s after layout\n", pr->s.plain.seconds,
                       pr->s.replay.seconds, pr->s.layout.seconds);
        }
        print_skipped(l);
}

/* The tests' failpoints: READSET_LAYOUT_FAILPOINT=kill:N (SIGKILL) or
 * interrupt:N (SIGINT, as a Ctrl-C) after the Nth extent exchange;
 * corrupt:N the Nth file's read-back taken as differing. */
static int failpoint(const char *v, struct layout_options *o)
{
        const char *n = NULL;

        if (!v || !*v)
                return 0;
        if (strncmp(v, "kill:", 5) == 0)
                o->fail_signal = SIGKILL, n = v + 5;
        else if (strncmp(v, "interrupt:", 10) == 0)
                o->fail_signal = SIGINT, n = v + 10;
        else if (strncmp(v, "corrupt:", 8) == 0) {
                if (parse_u64(v + 8, &o->fail_corrupt) < 0 || !o->fail_corrupt)
                        return log_usage("layout", "invalid READSET_LAYOUT_FAILPOINT '%s'", v);
                return 0;
        }
        if (!n || parse_u64(n, &o->fail_after) < 0 || !o->fail_after)
                return log_usage("layout", "invalid READSET_LAYOUT_FAILPOINT '%s' (kill:N, interrupt:N or corrupt:N)",
                                 v);
        return 0;
}

static void say_removed(void *userdata, const char *name)
{
        struct json *j = userdata;
        char buf[4 * PATH_MAX + 8];

        if (j)
                json_string(j, NULL, name);
        else
                printf("removed %s\n", cmd_fit(name, 8, buf, sizeof(buf)));
}

/* --undo-leftovers: what a layout that stopped on a failed check pinned
 * (the donor holding a file's old data, and its note) removed.  The donor
 * of any other end is unnamed: the kernel frees it. */
static int undo_leftovers(const struct layout_fs *fs, bool json)
{
        _cleanup_close_ int dir = open(fs->mnt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        char mnt[4 * PATH_MAX + 8];
        struct json j;
        int n;

        if (dir < 0)
                return log_errno(-errno, "cannot open '%s'", fs->mnt);
        if (geteuid() != 0)
                return log_error("--undo-leftovers removes files of root's and needs root");
        if (flock(dir, LOCK_EX | LOCK_NB) < 0)
                return log_error("a layout is running on %s now: its donor space is freed when it ends", fs->mnt);
        if (json) {
                json_begin(&j, stdout, true);
                json_object_open(&j, NULL);
                json_string(&j, "mount", fs->mnt);
                json_array_open(&j, "removed");
        }
        n = layout_leftovers(dir, true, say_removed, json ? &j : NULL);
        if (json) {
                json_array_close(&j);
                json_object_close(&j);
                json_end(&j);
        }
        if (n < 0)
                return log_errno(n, "cannot remove what a layout left in %s", fs->mnt);
        if (!json && n == 0)
                cmd_printf_wrapped("  ", "no leftovers on %s: a layout's donor space is unnamed and freed however "
                                   "it ends", printable_elided(fs->mnt, 60, mnt, sizeof(mnt)));
        return 0;
}

/* The options of readset layout, as getopt reads them (main.c lists them for
 * completion and the tests). */
const char layout_short_options[] = "njfp:C:qh";
const struct option layout_long_options[] = {
        { "dry-run", no_argument, NULL, 'n' },
        { "json", no_argument, NULL, 'j' },
        { "force", no_argument, NULL, 'f' },
        { "profile", required_argument, NULL, 'p' },
        { "under", required_argument, NULL, 'C' },
        { "quiet", no_argument, NULL, 'q' },
        { "move", required_argument, NULL, OPT_MOVE },
        { "io-priority", required_argument, NULL, OPT_IOPRIO },
        { "undo-leftovers", no_argument, NULL, OPT_UNDO },
        { "compress", required_argument, NULL, OPT_COMPRESS },
        { "unshare", no_argument, NULL, OPT_UNSHARE },
        TRUST_LONG_OPTION,
        { "help", no_argument, NULL, 'h' },
        {}
};

static int parse_args(int argc, char **argv, struct layout_args *a)
{
        struct device_name name;
        int c;

        *a = (struct layout_args){ .what = LAYOUT_AUTO, .ioprio = "idle" };
        while ((c = getopt_long(argc, argv, layout_short_options, layout_long_options, NULL)) >= 0) {
                switch (c) {
                case 'n': a->dry = true; break;
                case 'j': a->json = true; break;
                case 'f': a->force = true; break;
                case 'p':
                        if (cmd_device_name("layout", "--profile", optarg, &name) < 0)
                                return CMD_USAGE;
                        a->profile = optarg;
                        break;
                case 'C': a->under = optarg; break;
                case 'q':
                        a->quiet = true;
                        log_set_quiet(true);
                        break;
                case OPT_UNDO: a->undo = true; break;
                case OPT_COMPRESS:
                        if ((a->compress = blayout_compress_from_name(optarg)) < 0)
                                return log_usage("layout", "invalid --compress '%s' (zstd, lzo or zlib)", optarg);
                        break;
                case OPT_UNSHARE: a->unshare = true; break;
                case OPT_MOVE:
                        if (strcmp(optarg, "auto") == 0)
                                a->what = LAYOUT_AUTO;
                        else if (strcmp(optarg, "files") == 0)
                                a->what = LAYOUT_FILES;
                        else if (strcmp(optarg, "ranges") == 0)
                                a->what = LAYOUT_RANGES;
                        else
                                return log_usage("layout", "invalid --move '%s' (auto, files or ranges)", optarg);
                        break;
                case OPT_IOPRIO:
                        if (io_priority_from_name(optarg) < 0)
                                return log_usage("layout", "invalid --io-priority '%s' (idle or best-effort)", optarg);
                        a->ioprio = optarg;
                        break;
                case CMD_OPT_ALLOW_UNTRUSTED: trust_allow_untrusted(); break;
                case 'h': layout_help(); return 1;
                default: return CMD_OPTION_ERROR(layout, argc, argv);
                }
        }
        if (optind + 1 != argc)
                return log_usage("layout", optind == argc ? "missing read set file" : "too many arguments");
        a->path = argv[optind];
        return 0;
}

static int say_no_fs(int e, const struct layout_fs *fs, const struct layout_args *a)
{
        switch (e) {
        case -EMEDIUMTYPE:
                return log_error("%s is %s: readset layout moves data on ext4 and (compressed) btrfs only", fs->mnt,
                                 fs->fstype);
        case -EROFS:
                return log_error("%s is mounted read-only: nothing can be moved", fs->mnt);
        case -EOPNOTSUPP:
                return log_error("%s is mounted data=journal: the kernel exchanges no extents there", fs->mnt);
        case -ENOTDIR:
                return log_error("'%s' is not a directory", a->under);
        case -ENXIO:
                return log_error("cannot find the mount point of %s's file system", a->under ? a->under : a->path);
        case -ENOENT:
                if (!a->under)
                        return log_error("no file of %s is on this machine any more: nothing to lay out", a->path);
                /* fall through */
        default:
                return log_errno(e, "cannot find the file system of %s", a->under ? a->under : a->path);
        }
}

/* What the survey decided (layout_verdict), said: 0 when the run is to go
 * on, 1 when it is said and done (nothing to move), CMD_FAILED. */
static int say_decision(const struct layout *l, const struct layout_args *a, const struct prediction *pr)
{
        enum layout_verdict v = layout_verdict(l, pr->have && !pr->rotational, a->force);
        bool compresses = l->fs.ops->compresses;
        char b1[32], p1[4 * PATH_MAX + 8];

        if (compresses && !a->json)
                layout_btrfs_print_survey(l, a);
        if (v == LAYOUT_VERDICT_MOVE && !a->dry)
                return 0;
        if (a->json)
                print_json(l, a->path, pr, a->dry, false, layout_verdict_name(v), 0);
        else if (!compresses)
                print_text(l, a->path, pr);
        if (v == LAYOUT_VERDICT_NO_SPACE)
                return log_error("no room on %s for even the first file: %s usable, nothing moved", l->fs.mnt,
                                 format_bytes(l->avail_blocks * l->fs.block_size, b1));
        if (a->json)
                return 1;
        if (compresses)
                printf(a->dry ? "dry run: nothing rewritten\n" : "nothing rewritten: no file can be\n");
        else if (v == LAYOUT_VERDICT_NO_GAIN)
                cmd_printf_wrapped("  ", "nothing moved: the files already lie in %" PRIu64 " run%s of blocks in "
                                   "access order; moving them would not reduce that", l->pieces_now, l->pieces_now == 1 ? "" : "s");
        else if (v == LAYOUT_VERDICT_NOTHING_MOVABLE)
                printf("nothing moved: no file of the read set can be moved (see skipped)\n");
        else if (v == LAYOUT_VERDICT_SOLID_STATE)
                cmd_printf_wrapped("  ", "nothing moved: %s measures as solid state, where a layout gains little "
                                   "and costs %s of writes (--force moves anyway)", cmd_fit(l->fs.mnt, 40, p1, sizeof(p1)), format_bytes(l->move_blocks * l->fs.block_size, b1));
        else
                printf("dry run: nothing moved\n");
        return 1;
}

/* How a run ended, said; the exit status. */
static int say_end(const struct layout *l)
{
        const char *stop_path = l->files && l->n_files ? l->rs->files[l->files[l->stop_file].file].path : "?";

        if (l->sync_failed)
                return log_errno(l->stopped, "cannot sync %s after the moves", l->fs.mnt);
        switch (l->stopped) {
        case 0:
                if (!l->moved_files && l->skipped[LAYOUT_SKIP_REFUSED])
                        return log_error("the kernel refused every exchange on %s", l->fs.mnt);
                return 0;
        case -EINTR:
                return log_error("interrupted after %" PRIu64 " files: every file keeps its content; "
                                 "run layout again to go on", l->moved_files);
        case -ENOSPC:
                return log_error("the file system filled up after %" PRIu64 " files: every file keeps its "
                                 "content", l->moved_files);
        case -EOPNOTSUPP:
                return log_error("the kernel exchanges no extents on %s (bigalloc, or no EXT4_IOC_MOVE_EXT): "
                                 "nothing moved", l->fs.mnt);
        case -EIO:
                if (l->rescued)
                        return log_error("%s: read back from the device after its move, it %s: layout stopped; its "
                                         "data from before is kept in %s (%s.txt says where)", stop_path,
                                         l->stop_err < 0 ? "could not be read" : "differs from before",
                                         l->rescue, l->rescue);
                return log_error("%s: read back from the device after its move, it %s: layout stopped, and ITS "
                                 "OLD BLOCKS COULD NOT BE KEPT: check the file", stop_path,
                                 l->stop_err < 0 ? "could not be read" : "differs from before");
        default:
                return log_errno(l->stopped, "layout stopped at %s", stop_path);
        }
}

/* Why a run could not start, said. */
static int say_not_run(const struct layout *l, const struct layout_args *a, int e)
{
        char b1[32];

        switch (e) {
        case -EBUSY: return log_error("another readset layout is running on %s", l->fs.mnt);
        case -EEXIST:
                return log_error("a layout that stopped on a failed check left %s" LAYOUT_RESCUE_PREFIX "* there: "
                                 "read its note, then 'readset layout --undo-leftovers' removes it", l->fs.mnt);
        case -ENOSPC:
                return log_error("no room for the donor space on %s (%s needed): nothing moved", l->fs.mnt,
                                 format_bytes(l->move_blocks * l->fs.block_size, b1));
        case -EXDEV:
                return log_error("the free space of %s is in pieces: a layout would leave %" PRIu64 " runs of blocks "
                                 "where there are %" PRIu64 " now; nothing moved", l->fs.mnt, l->pieces_after,
                                 l->pieces_now);
        default: return log_errno(e, "cannot lay out %s", a->path);
        }
}

static void print_moved(const struct layout *l, const struct layout_args *a, const struct prediction *pr,
                        double seconds)
{
        char b1[32];

        print_text(l, a->path, pr);
        cmd_printf_wrapped("             ", "  moved      %" PRIu64 " files (%s) into %" PRIu64 " run%s of blocks "
               "at %.1f%% of the device, %" PRIu64 " verified from the device; now %" PRIu64 " runs (%.1f s)",
               l->moved_files, format_bytes(l->moved_blocks * l->fs.block_size, b1), l->donor_runs,
               l->donor_runs == 1 ? "" : "s",
               l->fs.blocks ? 100.0 * (double)l->donor_physical / ((double)l->fs.blocks * l->fs.block_size) : 0,
               l->verified_files, l->pieces_measured, seconds);
}

static int run_and_say(struct layout *l, const struct layout_args *a, const struct prediction *pr)
{
        struct layout_options lo = { .stop = &stop_requested, .progress = show_progress };
        struct progress prog;
        uint64_t t0;
        int e;

        progress_start(&prog, "layout", a->quiet);
        lo.userdata = &prog;
        e = failpoint(getenv("READSET_LAYOUT_FAILPOINT"), &lo);
        if (e < 0)
                return e;
        signals_stop_on(&stop_requested);
        t0 = now_us();
        e = layout_run(l, &lo);
        progress_done(&prog);
        if (e < 0)
                return say_not_run(l, a, e);
        if (a->json)
                print_json(l, a->path, pr, false, true, "move", (now_us() - t0) / 1e6);
        else if (l->fs.ops->compresses)
                layout_btrfs_print_run(l, (now_us() - t0) / 1e6);
        else
                print_moved(l, a, pr, (now_us() - t0) / 1e6);
        return l->fs.ops->compresses ? layout_btrfs_say_end(l) : say_end(l);
}

/* What cannot run whatever the file system, refused. */
static int refuse_early(const struct layout_args *a)
{
        if (!a->dry && geteuid() != 0)
                return log_error("layout moves files' data and needs root (--dry-run does not)");
        if (!a->dry && !a->undo && checksum_available() < 0)
                return log_error("layout checks every file it moves by SHA-256, with OpenSSL's libcrypto, which "
                                 "cannot be opened (install libssl3)");
        return 0;
}

/* What the file system's backend does not take, refused. */
static int refuse_options(const struct layout_fs *fs, const struct layout_args *a)
{
        if (a->compress && !fs->ops->compresses)
                return log_error("%s is %s: --compress rewrites files on btrfs only", fs->mnt, fs->fstype);
        if (a->undo && !fs->ops->leaves_rescue)
                return log_error("%s is %s: a layout there leaves nothing behind", fs->mnt, fs->fstype);
        if (!a->undo && fs->ops->compresses && !a->compress)
                return log_error("%s is %s: layout rewrites files there compressed (--compress zstd)", fs->mnt,
                                 fs->fstype);
        return 0;
}

int cmd_layout(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL;
        _cleanup_layout_ struct layout *l = NULL;
        struct layout_args a;
        struct prediction pr;
        struct layout_fs fs;
        struct layout_request req;
        int e;

        e = parse_args(argc, argv, &a);
        if (e != 0)
                return e > 0 ? 0 : e;
        if (refuse_early(&a) < 0 || cmd_load_readset(a.path, &rs) < 0)
                return CMD_FAILED;
        req = (struct layout_request){ .what = a.what, .compress = a.compress, .unshare = a.unshare };
        if (rs->rec_flags & RS_REC_PORTABLE)
                return log_error("'%s' is a portable read set (readset pack): layout moves the files of a read set "
                                 "recorded here", a.path);
        e = layout_find_fs(rs, a.under, &fs);
        if (e < 0)
                return say_no_fs(e, &fs, &a);
        if (refuse_options(&fs, &a) < 0)
                return CMD_FAILED;
        if (a.undo)
                return undo_leftovers(&fs, a.json);
        e = io_priority_set(io_priority_from_name(a.ioprio));
        if (e < 0)
                log_warning_errno(e, "cannot set the I/O priority %s", a.ioprio);
        /* the prediction is of blocks laid in one run */
        pr = (struct prediction){};
        if (!fs.ops->compresses && (e = predict(rs, &fs, a.profile, &pr)) < 0)
                return e;
        /* a writer opening a file while its lease is checked breaks the
         * lease: that signal must not end readset */
        signals_ignore(SIGIO);
        e = layout_survey(rs, &fs, &req, &l);
        if (e < 0)
                return log_errno(e, "cannot look at the files of %s", a.path);
        e = say_decision(l, &a, &pr);
        if (e != 0)
                return e > 0 ? 0 : e;
        return run_and_say(l, &a, &pr);
}
