/* SPDX-License-Identifier: MIT */
/* What replay and run share on the command line and in their output. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "pack/portable.h"
#include "fs/open.h"
#include "record/follow.h"
#include "report/summary.h"
#include "util/json.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

void replay_args_init(struct replay_args *a)
{
        replay_session_options_init(&a->opts);
        a->opts.follower = &record_follower;
        a->opts.open_image = portable_image_open;
        a->opts.image_here = portable_image_here;
        a->verbose = false;
        a->root = NULL;
        a->image_root = NULL;
}

void replay_args_free(struct replay_args *a)
{
        free(TAKE_PTR(a->image_root));
        a->opts.image_root = NULL;
        a->opts.image = NULL;
}

void say_skipped(const struct replay_result *res, const struct readset *rs)
{
        char buf[4 * PATH_MAX + 8];

        if (!res->skips)
                return;
        for (size_t i = 0; i < rs->n_files; i++)
                if (res->skips[i] != FS_SKIP_NONE)
                        log_info("skipped '%s': %s", cmd_fit(rs->files[i].path,
                                                             21 + strlen(fs_skip_name((enum fs_skip)res->skips[i])),
                                                             buf, sizeof(buf)),
                                 fs_skip_name((enum fs_skip)res->skips[i]));
}

void json_skipped(struct json *j, const struct replay_result *res, const struct readset *rs)
{
        json_array_open(j, "skipped_files");
        for (size_t i = 0; res->skips && i < rs->n_files; i++) {
                if (res->skips[i] == FS_SKIP_NONE)
                        continue;
                json_object_open(j, NULL);
                json_string(j, "path", rs->files[i].path);
                json_string(j, "reason", fs_skip_name((enum fs_skip)res->skips[i]));
                json_object_close(j);
        }
        json_array_close(j);
}

int replay_args_parse(struct replay_args *a, int c, const char *arg, const char *verb)
{
        uint64_t v;
        int r;

        switch (c) {
        case 'd':
        {
                char why[512] = "";
                struct device_name n;
                if (cmd_device_name(verb, "--device", arg, &n) < 0)
                        return CMD_USAGE;
                r = replay_options_set_device(&a->opts.policy, arg, why, sizeof(why));
                if (r == -EPERM && why[0])
                        return say_cannot_read(arg, r, why);
        }
                if (r < 0)
                        return log_usage(verb, "invalid --device '%s': %s", arg,
                                         r == -EINVAL ? "no \"rotational\" verdict in it" : strerror(-r));
                return 1;
        case 'm':
                r = engine_method_from_name(arg);
                if (r < 0)
                        return log_usage(verb, "unknown --method '%s' (readahead, fadvise, read)", arg);
                a->opts.engine.method = (enum engine_method)r;
                return 1;
        case 'Q':
                if (parse_u64(arg, &v) < 0 || v < 1 || v > 4096)
                        return log_usage(verb, "invalid --queue-depth '%s' (1..4096)", arg);
                a->opts.engine.queue_depth = (uint32_t)v;
                return 1;
        case 'B':
                if (parse_size(arg, &a->opts.policy.max_bytes) < 0 || a->opts.policy.max_bytes == 0)
                        return log_usage(verb, "invalid --max-bytes '%s'", arg);
                return 1;
        case 'T':
                if (parse_u64(arg, &v) < 0 || v < 1 || v > 16)
                        return log_usage(verb, "invalid --threads '%s' (1..16)", arg);
                a->opts.engine.threads = (uint32_t)v;
                a->opts.threads_given = true;
                return 1;
        case 'L':
                a->opts.engine.lookups = false;
                return 1;
        case REPLAY_OPT_ALL_LOOKUPS:
                a->opts.policy.all_lookups = true;
                return 1;
        case 'v':
                a->verbose = true;
                return 1;
        case REPLAY_OPT_PACE:
                a->opts.pace = PACE_ON;
                return 1;
        case REPLAY_OPT_NO_PACE:
                a->opts.pace = PACE_OFF;
                return 1;
        case REPLAY_OPT_MAX_EVICT:
                if (parse_u64(arg, &v) < 0 || v > 100)
                        return log_usage(verb, "invalid --max-evict '%s' (a percentage, 0..100)", arg);
                a->opts.policy.max_evict_percent = (uint32_t)v;
                return 1;
        case CMD_OPT_ALLOW_UNTRUSTED:
                trust_allow_untrusted();
                return 1;
        case REPLAY_OPT_ROOT:
                a->root = arg;
                return 1;
        }
        return 0;
}

int replay_args_bind(struct replay_args *a, struct readset *rs, const char *path)
{
        _cleanup_free_ char *root = NULL;
        struct stat st;

        if (!readset_is_portable(rs))
                return a->root ? log_error("--root: '%s' is not a portable read set (readset pack --portable makes one)",
                                           path) : 0;
        root = realpath(a->root ? a->root : "/", NULL);
        if (!root || stat(root, &st) < 0)
                return log_errno(-errno, "--root: cannot resolve '%s'", a->root ? a->root : "/");
        if (!S_ISDIR(st.st_mode))
                return log_error("--root: '%s' is not a directory", a->root);
        if (portable_bind(rs, root, (uint64_t)st.st_dev) < 0)
                return log_errno(-ENOMEM, "cannot bind '%s' to '%s'", path, root);
        a->image_root = TAKE_PTR(root);
        a->opts.image_root = a->image_root;
        a->opts.image = rs->image;
        return 0;
}

void say_device_note(const struct device_note *n)
{
        static char said[PATH_MAX];

        if (!n->reason || strcmp(said, n->path) == 0)
                return;
        log_warning("ignoring %s: %s", n->path, device_note_text(n));
        snprintf(said, sizeof(said), "%s", n->path);
}

int replay_args_device(const struct replay_args *a, const struct readset *rs, struct device_profile *ret)
{
        struct device_note note;
        int r = replay_device(rs, &a->opts.policy, ret, &note);

        if (r < 0)
                return log_errno(r, "cannot find the read set's device");
        say_device_note(&note);
        return 0;
}

int replay_args_plan(const struct replay_args *a, const struct readset *rs, struct device_profile *dev,
                     struct plan **ret)
{
        struct device_profile d;
        int r = replay_args_device(a, rs, &d);

        if (r < 0)
                return r;
        r = replay_plan(rs, &d, &a->opts.policy, NULL, ret);
        if (r < 0)
                return log_errno(r, "cannot plan the replay");
        if (dev)
                *dev = d;
        return 0;
}

/* -v: every read of the plan, in the order it is submitted, in 80 columns */
static void print_plan_reads(const struct readset *rs, const struct plan *plan)
{
        char tail[PATH_MAX + 16], label[PATH_MAX + 16];

        printf("\nreads, in plan order (%s):\n%14s %10s  %s\n",
               plan->by_position ? "metadata, then data by position on the device" :
                                   "metadata, then data as the start first needed it",
               "OFFSET", "LENGTH", "FILE");
        for (size_t i = 0; i < plan->n_reads; i++) {
                const struct plan_read *p = &plan->reads[i];
                const struct rs_file *f = &rs->files[p->file];

                snprintf(label, sizeof(label), "%s%s", f->path, f->kind == RS_FILE_BLOCKDEV ? " [metadata]" : "");
                printf("%14" PRIu64 " %10" PRIu64 "  %s\n", p->offset, p->length,
                       rp_tail(label, 80 - 27, tail, sizeof(tail)));
        }
}

void print_plan(const struct readset *rs, const struct device_profile *dev, const struct plan *plan,
                const struct engine_options *eo, uint64_t plan_us, bool json, bool verbose)
{
        const char *kind = dev->rotational ? " (rotational" : " (solid-state";
        const char *how = dev->measured ? ", as probe measured it)" : ")";
        char b1[32], b2[32], name[4 * sizeof(dev->name) + 8];

        if (json) {
                struct json j;
                json_begin(&j, stdout, true);
                json_object_open(&j, NULL);
                json_string(&j, "device", dev->name);
                json_bool(&j, "rotational", dev->rotational);
                json_bool(&j, "measured", dev->measured);
                json_u64(&j, "reads", plan->n_reads);
                json_u64(&j, "metadata_reads", plan->n_meta);
                json_u64(&j, "bytes", plan->bytes);
                json_u64(&j, "bytes_over_budget", plan->bytes_cut);
                json_u64(&j, "lookups", plan->n_lookups);
                json_u64(&j, "lookups_thinned", plan->lookups_thinned);
                json_u64(&j, "plan_us", plan_us);
                json_object_close(&j);
                json_end(&j);
                return;
        }
        printf("device:    %s%s%s\n", cmd_fit(dev->name, 11 + strlen(kind) + strlen(how), name, sizeof(name)), kind,
               how);
        printf("reads:     up to %s, %u threads; gaps under %s read through\n", format_bytes(dev->max_request, b1),
               engine_threads(eo), format_bytes(dev->bridge_bytes, b2));
        printf("plan:      %zu reads (%zu of metadata), %s; %s over the budget\n", plan->n_reads, plan->n_meta,
               format_bytes(plan->bytes, b1), format_bytes(plan->bytes_cut, b2));
        printf("lookups:   %zu paths to stat%s\n", plan->n_lookups, eo->lookups ? "" : " (not done: --no-lookups)");
        if (plan->lookups_thinned)
                printf("           %zu more left out (one per directory in 64; --all-lookups)\n",
                       plan->lookups_thinned);
        if (verbose)
                print_plan_reads(rs, plan);
}

void say_replay_notes(const struct replay_result *res, int r, const struct replay_args *a)
{
        char root[4 * PATH_MAX + 8];

        say_device_note(&res->note);
        if (res->plan_error)
                log_errno(res->plan_error, "%s", res->plan_what);
        if (res->pace_no_memory)
                log_warning("out of memory: the lookups are not paced");
        if (res->image_other && a->verbose)
                cmd_info_wrapped("%s is mounted from another image than the read set was packed in: where its "
                                 "files lie there is read (squashfs), and each file is checked by content",
                                 printable_elided(a->image_root, 50, root, sizeof(root)));
        if (r == -ECHILD)
                log_error("the replay's process was killed by signal %d (%s)", res->signal,
                          res->signal ? strsignal(res->signal) : "?");
}

void say_paced(const struct replay_result *res)
{
        const struct pace_stats *p = &res->pace;

        log_info("paced %" PRIu64 " lookups on a share %s:", p->sequence,
                 res->pace_followed ? "following the start's own" : "by the recorded timeline (no BPF here)");
        log_info("  %" PRIu64 " warmed (%" PRIu64 " again after they expired), %" PRIu64 " left to the start",
                 p->warmed, p->rewarmed, p->skipped);
        log_info("  (left to it: listings, what it had at once when recorded)");
        if (p->negatives_kept == 0)
                log_info("  (failed lookups: this client keeps none; %" PRIu64 " stats of their directories)",
                         p->dirs_warmed);
        log_info("  the start reached %" PRIu64 " of them (%" PRIu64 " of its lookups seen)", p->reached,
                 p->observed);
}

void json_pace(struct json *j, const struct replay_result *res)
{
        if (!res->paced)
                return;
        json_object_open(j, "paced");
        json_bool(j, "followed", res->pace_followed);
        json_u64(j, "sequence", res->pace.sequence);
        json_u64(j, "warmed", res->pace.warmed);
        json_u64(j, "rewarmed", res->pace.rewarmed);
        json_u64(j, "observed", res->pace.observed);
        json_u64(j, "reached", res->pace.reached);
        json_u64(j, "left_to_the_start", res->pace.skipped);
        json_u64(j, "directories_warmed", res->pace.dirs_warmed);
        if (res->pace.negatives_kept >= 0)
                json_bool(j, "client_keeps_failed_lookups", res->pace.negatives_kept);
        json_object_close(j);
}

void json_replay_stats(struct json *j, const struct replay_result *res, const struct readset *rs)
{
        const struct engine_stats *st = &res->st;

        json_u64(j, "elapsed_us", st->elapsed_us);
        json_u64(j, "metadata_us", st->meta_us);
        json_u64(j, "data_us", st->submit_us);
        json_u64(j, "files", st->files);
        json_u64(j, "files_opened", st->files_opened);
        json_u64(j, "files_changed", st->files_changed);
        json_u64(j, "files_content_differs", st->files_differ);
        json_u64(j, "files_content_checked", st->files_checked);
        json_u64(j, "bytes_read_to_check_content", st->bytes_checked);
        json_u64(j, "files_missing", st->files_missing);
        json_u64(j, "files_not_regular", st->files_not_regular);
        json_u64(j, "files_error", st->files_error);
        json_u64(j, "files_refused", st->files_refused);
        json_u64(j, "open_file_windows", st->windows);
        json_u64(j, "reads", st->reads);
        json_u64(j, "bytes_planned", res->planned);
        json_u64(j, "bytes_over_budget", res->cut);
        json_u64(j, "bytes_read", st->bytes);
        json_u64(j, "bytes_already_cached", st->bytes_cached);
        json_u64(j, "bytes_skipped", st->bytes_skipped);
        json_u64(j, "bytes_not_resident", st->bytes_missing);
        json_u64(j, "bytes_marked_used", st->bytes_marked);
        json_u64(j, "lookups", st->lookups);
        json_u64(j, "image_bytes_read", st->image_bytes);
        json_bool(j, "image_verified", st->image_verified);
        json_pace(j, res);
        json_bool(j, "stopped_early", st->stopped);
        if (st->fell_back)
                json_string(j, "io_uring_unavailable", st->fell_back);
        json_skipped(j, res, rs);
}

void print_replay_stats(const struct replay_result *res, const struct replay_args *a, const struct readset *rs,
                        bool json)
{
        const struct engine_stats *st = &res->st;
        char b1[32], b2[32], b3[32], differ[48] = "";

        if (json) {
                struct json j;
                json_begin(&j, stdout, true);
                json_object_open(&j, NULL);
                json_replay_stats(&j, res, rs);
                json_object_close(&j);
                json_end(&j);
                return;
        }
        if (st->fell_back)
                log_warning("io_uring is unavailable: %s; replayed with readahead(2)", st->fell_back);
        log_info("replayed %s in %" PRIu64 " requests from %" PRIu64 " files in %.1f ms", format_bytes(st->bytes, b1),
                 st->reads, st->files_opened, st->elapsed_us / 1e3);
        log_info("  %s cached already; %" PRIu64 " lookups", format_bytes(st->bytes_cached, b2), st->lookups);
        if (st->files_differ)
                snprintf(differ, sizeof(differ), " (%" PRIu64 " in content)", st->files_differ);
        if (st->image_verified || st->image_bytes)
                log_info("read %s of the image the files are packed in, in its order:",
                         format_bytes(st->image_bytes, b3));
        if (st->image_verified)
                log_info("  the very image packed: its files not checked one by one");
        else if (st->image_bytes)
                log_info("  not the image packed (its bytes differ): its files checked one by one");
        if (st->files_checked)
                log_info("checked the content of %" PRIu64 " files, reading %s (counted as cached)",
                         st->files_checked, format_bytes(st->bytes_checked, b3));
        if (res->paced)
                say_paced(res);
        if (st->files_changed || st->files_missing || st->files_not_regular || st->files_error || st->files_refused) {
                uint64_t n = st->files_changed + st->files_missing + st->files_not_regular + st->files_error +
                             st->files_refused;
                log_info("skipped %" PRIu64 " file%s (%s%s):", n, n == 1 ? "" : "s", format_bytes(st->bytes_skipped, b3),
                         a->verbose ? "" : "; -v names them");
                log_info("  %" PRIu64 " changed%s, %" PRIu64 " missing, %" PRIu64 " unreadable", st->files_changed,
                         differ, st->files_missing, st->files_error);
                log_info("  %" PRIu64 " no longer regular, %" PRIu64 " refused (pseudo-files, no identity)",
                         st->files_not_regular, st->files_refused);
        }
        if (a->verbose)
                say_skipped(res, rs);
        if (res->cut) {
                log_info("left out %s over the memory budget", format_bytes(res->cut, b1));
                log_info("  (free memory and --max-evict %u%% of what others cache)",
                         a->opts.policy.max_evict_percent);
        }
        if (st->bytes_missing)
                log_info("%s not resident after replay (memory pressure?)", format_bytes(st->bytes_missing, b1));
        if (st->bytes_marked)
                log_info("marked %s of the snapshot's pages used, as the service's hot pages were",
                         format_bytes(st->bytes_marked, b1));
}
