/* SPDX-License-Identifier: MIT */
/* The verbs (one file each; the table is in main.c) and what they share.
 * A verb parses its arguments, calls the modules, and prints: it returns an
 * exit status (0..255) or CMD_FAILED / CMD_USAGE (util/log.h), which only
 * main() turns into exit codes.  docs/HACKING.md has the recipe for a new
 * verb. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/device.h"
#include "replay/engine.h"
#include "replay/planner.h"
#include "replay/pace.h"
#include "replay/policy.h"
#include "replay/session.h"
#include "util/log.h"

struct readset;

/* Read a read set, saying why not on failure (then CMD_FAILED). */
int cmd_load_readset(const char *path, struct readset **ret);
/* "cannot read 'PATH': WHY" (why NULL: r's text); returns CMD_FAILED. */
int say_cannot_read(const char *path, int r, const char *why);
/* The usage error of an option getopt_long just refused (main() sets
 * opterr to 0: getopt says nothing itself): one line naming it, unknown,
 * ambiguous, needing a value or taking none; CMD_USAGE.  Every verb's
 * default case: return CMD_OPTION_ERROR(verb, argc, argv); */
int cmd_option_error(const char *verb, int argc, char **argv, const char *short_options,
                     const struct option *long_options);
#define CMD_OPTION_ERROR(v, argc, argv) cmd_option_error(#v, argc, argv, v##_short_options, v##_long_options)

/* The common options (docs/HACKING.md): a letter means one thing in every
 * verb.  A letter that meant something else in one verb keeps its old
 * meaning there for one release: cmd_old_letter() says whether letter is
 * such a one in verb (not listed by readset --list-options), and
 * say_old_letter() warns of each use, saying what to use instead. */
bool cmd_old_letter(const char *verb, int letter);
void say_old_letter(const char *verb, int letter);

/* A device's name given to opt (device/names.h): 0, or CMD_USAGE said
 * with every name the verbs take. */
int cmd_device_name(const char *verb, const char *opt, const char *arg, struct device_name *ret);
/* Those names, for --help: wrapped within 80 columns, indented. */
void print_device_names(int indent);

/* Text output fits CMD_COLUMNS columns, a message "readset: " and its
 * text included; a path is elided in its middle to fit (the figures of
 * its line never are).  cmd_fit(): s made printable for a line of which
 * `used` columns are taken already (at least 20 left to it). */
#define CMD_COLUMNS 80
#define CMD_LOG_COLUMNS (CMD_COLUMNS - 9)       /* after "readset: " */
const char *cmd_fit(const char *s, size_t used, char *buf, size_t size);
/* A line of text made with fmt, on stdout, broken between words into
 * lines that fit (a word wider than a line gets one of its own); the
 * lines after the first begin with indent.  cmd_info_wrapped(): the same
 * said through log_info(), the lines after the first indented by two. */
void cmd_printf_wrapped(const char *indent, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmd_info_wrapped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- replay and run: their shared options and output (replay-cli.c) ---- */

/* What replay and run ask of their replay session (replay/session.h),
 * and what only the command needs. */
struct replay_args {
        struct replay_session_options opts;
        bool verbose;             /* -v: name every file skipped */
        const char *root;         /* --root: where a portable read set's tree is (NULL: /) */
        char *image_root;         /* bound: where the image it was packed in may be mounted */
};

#define REPLAY_OPT_ALL_LOOKUPS 0x100
#define REPLAY_OPT_MAX_EVICT 0x101
#define REPLAY_OPT_PACE 0x102
#define REPLAY_OPT_NO_PACE 0x103
#define REPLAY_OPT_ROOT 0x104
/* --allow-untrusted, of every verb that reads a read set or a profile */
#define CMD_OPT_ALLOW_UNTRUSTED 0x200
#define TRUST_LONG_OPTION { "allow-untrusted", no_argument, NULL, CMD_OPT_ALLOW_UNTRUSTED }
#define REPLAY_LONG_OPTIONS \
        { "method", required_argument, NULL, 'm' }, \
        { "queue-depth", required_argument, NULL, 'Q' }, \
        { "threads", required_argument, NULL, 'T' }, \
        { "max-bytes", required_argument, NULL, 'B' }, \
        { "no-lookups", no_argument, NULL, 'L' }, \
        { "all-lookups", no_argument, NULL, REPLAY_OPT_ALL_LOOKUPS }, \
        { "device", required_argument, NULL, 'd' }, \
        { "verbose", no_argument, NULL, 'v' }, \
        { "max-evict", required_argument, NULL, REPLAY_OPT_MAX_EVICT }, \
        { "pace", no_argument, NULL, REPLAY_OPT_PACE }, \
        { "no-pace", no_argument, NULL, REPLAY_OPT_NO_PACE }, \
        { "root", required_argument, NULL, REPLAY_OPT_ROOT }, \
        TRUST_LONG_OPTION

void replay_args_init(struct replay_args *a);
/* One of REPLAY_LONG_OPTIONS (-m, -Q, -T, --max-bytes, --no-lookups,
 * --all-lookups, --device): 1 when c was one, 0 when not, CMD_USAGE after
 * saying what is wrong with it. */
int replay_args_parse(struct replay_args *a, int c, const char *arg, const char *verb);
/* The device the replay of rs plans for, a saved profile passed over said
 * once; CMD_FAILED. */
int replay_args_device(const struct replay_args *a, const struct readset *rs, struct device_profile *ret);
/* The device and the plan a replay of rs makes with a (said on failure:
 * CMD_FAILED); dev may be NULL. */
int replay_args_plan(const struct replay_args *a, const struct readset *rs, struct device_profile *dev,
                     struct plan **ret);
void replay_args_free(struct replay_args *a);   /* safe to call again */
static inline void replay_args_freep(struct replay_args *a) { replay_args_free(a); }
/* A portable read set (pack/portable.h) bound to --root (else /); --root
 * with any other is an error, said.  CMD_FAILED. */
int replay_args_bind(struct replay_args *a, struct readset *rs, const char *path);
/* Every file skipped, by name and reason: as info lines on stderr, or as
 * the array "skipped_files" ({"path", "reason"}) of an open JSON object. */
struct json;
void say_skipped(const struct replay_result *res, const struct readset *rs);
void json_skipped(struct json *j, const struct replay_result *res, const struct readset *rs);
/* Say a saved profile that was passed over (n->reason != 0), once per path. */
void say_device_note(const struct device_note *n);

/* What the session had to say beside its figures (replay_session_wait()
 * returned r): the device note, why it could not plan, that the lookups
 * are not paced, another image mounted (-v), its process killed. */
void say_replay_notes(const struct replay_result *res, int r, const struct replay_args *a);

/* The pacing, as an info line, or as the object "paced" (when it was). */
void say_paced(const struct replay_result *res);
void json_pace(struct json *j, const struct replay_result *res);

/* replay --dry-run: the plan, as text or one JSON object, on stdout;
 * verbose (text): every read, in plan order. */
void print_plan(const struct readset *rs, const struct device_profile *dev, const struct plan *plan,
                const struct engine_options *eo, uint64_t plan_us, bool json, bool verbose);
/* What a replay did: its figures in an open JSON object (replay --json's,
 * run --json's); as text on stderr, or one JSON object on stdout. */
void json_replay_stats(struct json *j, const struct replay_result *res, const struct readset *rs);
void print_replay_stats(const struct replay_result *res, const struct replay_args *a, const struct readset *rs,
                        bool json);

int cmd_record(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_keep(int argc, char **argv);
int cmd_auto(int argc, char **argv);

/* boot's and keep's subcommands, as they run them, by index (NULL past the last) */
const char *boot_subcommand_name(size_t i);
const char *keep_subcommand_name(size_t i);
const char *auto_subcommand_name(size_t i);

/* Each verb's options, as its getopt_long reads them: main.c's verb table
 * carries them, for completion and for the tests that every option is
 * documented. */
#define VERB_OPTIONS(v) \
        extern const char v##_short_options[]; \
        extern const struct option v##_long_options[]
VERB_OPTIONS(record);
VERB_OPTIONS(show);
VERB_OPTIONS(build);
VERB_OPTIONS(replay);
VERB_OPTIONS(run);
VERB_OPTIONS(probe);
VERB_OPTIONS(report);
VERB_OPTIONS(layout);
VERB_OPTIONS(pack);
VERB_OPTIONS(boot);
VERB_OPTIONS(snapshot);
VERB_OPTIONS(keep);
VERB_OPTIONS(auto);
