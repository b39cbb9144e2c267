/* SPDX-License-Identifier: MIT */
#include "cmd/run-cli.h"
#include "pack/portable.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/record-cli.h"
#include "model/compare.h"
#include "model/format.h"
#include "model/store.h"
#include "pack/squashfs.h"
#include "util/json.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

int run_auto_prepare(const char *dir, char *const *cmd, char **ret)
{
        char why[512];
        int r = store_prepare(dir, why, sizeof(why));

        if (r < 0) {
                log_warning("cannot create '%s': %s; the command runs without readset", dir, why);
                return r;
        }
        r = trust_check_dir(dir, why, sizeof(why));
        if (r == -EPERM) {
                log_warning("refusing --auto directory '%s': %s; as root, readset keeps read sets only where "
                            "root or you alone can change them (--allow-untrusted uses it anyway; "
                            "docs/SECURITY.md); the command runs without readset", dir, why);
                return r;
        }
        if (r < 0) {
                log_warning_errno(r, "cannot use '%s'; the command runs without readset", dir);
                return r;
        }
        r = store_path(dir, cmd, ret);
        if (r < 0) {
                log_warning_errno(r, "out of memory; the command runs without readset");
                return r;
        }
        return 0;
}

void run_auto_remove_left(const char *dir, const char *file)
{
        char why[512];
        unsigned n = store_remove_left(dir, file);

        if (n) {
                log_info("removed %u file%s left by a run that was killed", n, n == 1 ? "" : "s");
                log_info("  in '%s'", cmd_fit(dir, 15, why, sizeof(why)));
        }
}

/* A read set that cannot be used (r, why: from format_load/decode): with
 * --auto it is recorded anew; otherwise the command runs without a replay.
 * Said once, as a warning: the command runs either way.  0. */
static int unusable(const char *file, int r, const char *why, bool is_auto)
{
        if (is_auto)
                log_warning("'%s' is unusable (%s): recording it again", file, why ? why : strerror(-r));
        else if (why && r == -EPERM)
                log_warning("refusing '%s': %s; as root, readset reads only what root or you alone can change "
                            "(--allow-untrusted reads it anyway; docs/SECURITY.md); the command runs without a "
                            "replay", file, why);
        else
                log_warning("cannot read '%s': %s; the command runs without a replay", file,
                            why ? why : strerror(-r));
        return 0;
}

/* The device of the read set's first file, asked in a process of its own:
 * a share whose server is gone does not keep the command from starting
 * (1 s at most, then it starts as if the device were solid state). */
static void peek_device(const struct replay_args *a, const char *first, struct device_profile *ret,
                        struct device_note *note)
{
        if (replay_peek_device(&a->opts.policy, first, now_us() + 1000000, ret, note) == -ETIMEDOUT)
                log_warning("'%s' did not answer in 1 s (a share whose server is slow or gone?): the "
                            "command starts first", first);
}

/* A portable read set's names are below --root. */
static void below_root(const struct replay_args *a, char **path)
{
        char *j = NULL;

        if (a->root && *path && (*path)[0] == '/' && asprintf(&j, "%s%s", a->root, *path) >= 0) {
                free(*path);
                *path = j;
        }
}

int run_load(const char *file, struct replay_args *a, bool is_auto, struct run_loaded *ld)
{
        _cleanup_free_ char *first = NULL, *main_file = NULL;
        const char *why = NULL;
        char refusal[512];
        struct device_profile peeked;
        struct device_note note;
        int r;

        *ld = (struct run_loaded){ .file = file, .a = a };
        if (is_auto && access(file, F_OK) < 0)
                return 0;       /* the first run: it records */
        /* loaded once: its first file's device now, decoded later */
        r = format_load(file, &ld->buf, &ld->len, refusal, sizeof(refusal));
        if (r < 0 && refusal[0])
                why = refusal;
        if (r >= 0)
                r = format_peek_first_file_buf(ld->buf, ld->len, &first, &why);
        if (r < 0) {
                free(TAKE_PTR(ld->buf));
                return unusable(file, r, why, is_auto);
        }
        /* The first file's device is the program's own; the plan is for the
         * device most bytes come from, which may be another (python3 copied
         * onto a disk starts with libc from solid state): that one is
         * peeked too, from the same prefix, and either being a disk plans
         * first (docs/DECISIONS.md, "Run: start at once") */
        if (format_peek_main_file_buf(ld->buf, ld->len, &main_file, &why) < 0)
                main_file = NULL;       /* (the first peek said nothing else) */
        below_root(a, &first);
        peek_device(a, first, &peeked, &note);
        say_device_note(&note);
        ld->plan_first = peeked.rotational;
        if (!ld->plan_first && main_file && (!first || strcmp(main_file, first) != 0)) {
                below_root(a, &main_file);
                peek_device(a, main_file, &peeked, &note);
                ld->plan_first = peeked.rotational;
        }
        return 0;
}

int run_decode(struct run_loaded *ld, bool is_auto, struct readset **ret_rs)
{
        const char *why = NULL;
        int r = format_decode(ld->buf, ld->len, ret_rs, &why);

        free(TAKE_PTR(ld->buf));
        if (r < 0)      /* damage past the header */
                return unusable(ld->file, r, why, is_auto);
        r = replay_args_bind(ld->a, *ret_rs, ld->file);
        if (r < 0) {
                /* (said) */
                log_warning("the command runs without a replay");
                readset_free(TAKE_PTR(*ret_rs));
        }
        return 0;
}

bool run_waits_for_cpu(const struct replay_args *a)
{
        /* a start from an xz-compressed image waits for the decompressor,
         * not the device (one per mount here): a replay beside it only
         * competes (emulated USB stick: 4.2 s with it, 3.1 s plain, 2.96 s
         * with the whole image cached) */
        if (!a->root || portable_image_compressor(a->root) != SQFS_COMP_XZ)
                return false;
        if (a->verbose)
                log_info("'%s' is mounted from an xz-compressed image: the start waits for its decompressor, not "
                         "the device: the command runs without a replay", a->root);
        return true;
}

void run_loaded_free(struct run_loaded *ld)
{
        free(TAKE_PTR(ld->buf));
}

void run_record_start(struct run_recording *rr, struct child *c, void (*release)(void *userdata))
{
        struct recorder_options ro = { .pid = c->pid, .buffer_kb = RECORDER_DEFAULT_BUFFER_KB, .lookups = true,
                                       .max_walk = RECORDER_DEFAULT_MAX_WALK };

        rr->on = recorder_open_async(&ro, release, c, &rr->setup) >= 0;
        if (!rr->on) {
                log_warning("cannot record here; the command runs unrecorded");
                release(c);
        }
}

void say_run_json(const struct replay_result *res, const struct readset *rs, int code)
{
        struct json j;

        fflush(stderr);
        json_begin(&j, stderr, false);
        json_object_open(&j, NULL);
        json_bool(&j, "replayed", res && res->planned_ok);
        json_i64(&j, "exit_status", code);
        if (res)
                json_replay_stats(&j, res, rs);
        json_object_close(&j);
        json_end(&j);
}

int run_plain(char **cmd, bool json)
{
        struct child c = { .pid = -1 };
        int code, r;

        if (!json)
                return record_exec_unrecorded(cmd);
        r = child_start(&c, cmd, false);
        if (r < 0)
                return log_errno(r, "cannot fork");
        code = record_wait_unrecorded(&c, cmd);
        child_close(&c);
        if (code >= 0)
                say_run_json(NULL, NULL, code);
        return code;
}

/* --stats as one JSON object, the last line of standard error */
static void json_stats(const struct replay_result *res, const struct readset_usage *u, const struct readset *old,
                       int code)
{
        const struct engine_stats *st = &res->st;
        double hit = readset_usage_hit_ratio(u), used = 100.0 * readset_usage_used(u);
        struct json j;

        fflush(stderr);
        json_begin(&j, stderr, false);
        json_object_open(&j, NULL);
        json_bool(&j, "replayed", old != NULL);
        json_i64(&j, "exit_status", code);
        json_u64(&j, "bytes_read", st->bytes);
        json_u64(&j, "bytes_already_cached", st->bytes_cached);
        json_u64(&j, "elapsed_us", st->elapsed_us);
        json_bool(&j, "stopped_early", st->stopped);
        json_u64(&j, "bytes_fetched_by_command", u->new_filled);
        json_u64(&j, "bytes_accessed_by_command", u->new_accessed);
        json_double(&j, "hit_ratio", old ? hit : 0.0);
        if (old)
                json_double(&j, "read_set_used", used / 100.0);
        if (old)
                json_skipped(&j, res, old);
        json_pace(&j, res);
        json_object_close(&j);
        json_end(&j);
}

static void say_stats(const struct replay_result *res, const struct readset_usage *u, const struct readset *old,
                      const struct replay_args *a, bool json, int code)
{
        const struct engine_stats *st = &res->st;
        double hit = readset_usage_hit_ratio(u), used = 100.0 * readset_usage_used(u);
        char b1[32], b2[32], b3[32];

        if (json) {
                json_stats(res, u, old, code);
                return;
        }
        log_info("replayed %s (%s already cached) in %.1f ms", format_bytes(st->bytes, b1),
                 format_bytes(st->bytes_cached, b2), st->elapsed_us / 1e3);
        if (st->stopped)
                log_info("  (the replay stopped when the command exited)");
        log_info("the command still fetched %s itself (misses); hit ratio %.1f%%", format_bytes(u->new_filled, b3),
                 old ? 100.0 * hit : 0.0);
        if (old)
                log_info("%.1f%% of the read set was used this time", used);
        if (res->paced && !a->verbose)  /* (-v says it after the command) */
                say_paced(res);
}

/* The recording kept as the read set, or why not. */
static void judge(const struct child *c, char *const *cmd, struct readset *cur, const struct readset *old,
                  const struct readset_usage *u, const char *auto_file, uint64_t stale_percent)
{
        char path[4 * PATH_MAX + 8];
        int r;

        /* a portable read set is made by pack, from the tree: a recording
         * here would tie it to this copy */
        if (old && readset_is_portable(old))
                return;
        switch (store_judge(old != NULL, u, stale_percent, child_cut_short(c))) {
        case STORE_KEEP_OLD:
                return;
        case STORE_CUT_SHORT:
                log_info("the command was interrupted: its recording is not kept");
                return;
        case STORE_REPLACE:
                break;
        }
        r = record_describe(cur, cmd, false);
        if (r >= 0)
                r = store_keep(auto_file, cur);
        if (r < 0)
                log_errno(r, "cannot save '%s'", auto_file);
        else if (old) {
                log_info("read set was stale (%.0f%% used): recorded anew into", 100.0 * readset_usage_used(u));
                log_info("  '%s'", cmd_fit(auto_file, 14, path, sizeof(path)));
        } else {
                log_info("recorded '%s'", cmd_fit(auto_file, 20, path, sizeof(path)));
                log_info("  (later runs replay it)");
        }
}

bool run_record_finish(struct run_recording *rr, const struct child *c, char *const *cmd, bool ran,
                       const struct readset *old, const char *auto_file, uint64_t stale_percent,
                       const struct replay_result *stats, const struct replay_args *a, bool json, int code)
{
        _cleanup_readset_ struct readset *cur = NULL;
        struct readset_usage u = { 0 };
        struct recorder_status rst;
        struct recorder *rec;
        const char *what;
        int r;

        rec = recorder_setup_wait(TAKE_PTR(rr->setup), &r, &what);
        rr->on = false;
        if (!rec) {
                say_recorder_setup_failed(r, what, true);
                log_warning("the command ran, but could not be recorded");
                return false;
        }
        r = recorder_stop(rec);
        if (r >= 0)
                r = recorder_finish(rec, &cur);
        recorder_get_status(rec, &rst);
        recorder_free(rec);
        say_recorder_warnings(&rst, true);
        say_recorder_warnings(&rst, false);
        if (r < 0) {
                log_errno(r, "the command ran, but could not be recorded");
                return false;
        }
        if (!ran)
                return false;   /* no start to learn from (it could not be run: said) */
        if (old && readset_compare(old, cur, &u) < 0) {
                log_errno(-ENOMEM, "cannot compare the recording with the read set");
                return false;
        }
        if (auto_file)
                judge(c, cmd, cur, old, &u, auto_file, stale_percent);
        /* last: its JSON is the last line of standard error */
        if (stats)
                say_stats(stats, &u, old, a, json, code);
        return stats != NULL;
}
