/* SPDX-License-Identifier: MIT */
/* readset: record, show and replay the read set of a cold start. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "record/tracer.h"
#include "util/log.h"
#include "util/util.h"
#include "util/banned.h"

#ifndef READSET_VERSION
#define READSET_VERSION "unknown"
#endif

struct verb {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *summary;
        bool hidden;
        const char *short_options;
        const struct option *long_options;
};

#define VERB(v, summary) { #v, cmd_##v, summary, false, v##_short_options, v##_long_options }

static const struct verb verbs[] = {
        VERB(record, "run a command and record the read set of its start"),
        VERB(show, "print a read set (table or --json)"),
        VERB(replay, "warm the page cache with a read set, at the device's speed"),
        VERB(run, "start a command and replay its read set beside it"),
        VERB(report, "show why a cold start is slow and what it costs elsewhere"),
        VERB(layout, "lay a read set's files out on disk in access order (ext4, btrfs)"),
        VERB(pack, "build a compressed image in the order a start reads it (squashfs)"),
        VERB(boot, "record the boot and replay it at the next one (systemd)"),
        VERB(probe, "measure what a read request costs on a device"),
        VERB(build, "build a read set from a saved tracefs text trace"),
};

static void help(FILE *f)
{
        fprintf(f,
                "usage: readset [--version] [--help] VERB [ARGS...]\n"
                "\n"
                "Record what a cold start reads (its read set) and make the next one fast.\n"
                "\n"
                "verbs:\n");
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
                if (!verbs[i].hidden)
                        fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
        fprintf(f,
                "\n"
                "'readset VERB --help' describes one verb; 'man readset' describes them all.\n"
                "\n"
                "example:\n"
                "  sudo readset record -o clang.readset -- clang -O2 -c hello.c\n"
                "  readset show clang.readset\n");
}

/* readset --list-options (not in --help: for completion and the tests):
 * every option of every verb as getopt reads it, one per line,
 * "VERB SHORT LONG ARG": SHORT is "-x" or "-" when the option has no
 * letter, LONG "--name" or "-" when it has no name, ARG "=" when it takes
 * a value, "." when not.  A letter kept for one release with its old
 * meaning (cmd_old_letter) is not listed. */
static void list_options(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
                const struct verb *v = &verbs[i];
                const char *s = v->short_options;

                for (const struct option *o = v->long_options; o->name; o++) {
                        bool letter = o->val > 0 && o->val < 128 && strchr(s, o->val);
                        printf("%s %s%c --%s %s\n", v->name, letter ? "-" : "", letter ? o->val : '-', o->name,
                               o->has_arg == no_argument ? "." : "=");
                }
                /* letters with no long name */
                for (const char *c = s; *c; c++) {
                        bool named = false;

                        if (*c == '+' || *c == ':' || cmd_old_letter(v->name, *c))
                                continue;
                        for (const struct option *o = v->long_options; o->name; o++)
                                named |= o->val == *c;
                        if (!named)
                                printf("%s -%c - %s\n", v->name, *c, c[1] == ':' ? "=" : ".");
                }
        }
}

/* The exit code of what a verb returned (cmd/cmd.h): its exit status, 1
 * for CMD_FAILED, 2 for CMD_USAGE.  Anything else (a -errno let through)
 * is a bug, said as one.  Data goes to stdout: a write error there (full
 * disk, closed pipe) is a failure too. */
static int exit_code(const char *verb, int r)
{
        if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error("cannot write to standard output");
                return r == 0 ? 1 : r == CMD_USAGE ? 2 : r > 0 && r < 256 ? r : 1;
        }
        if (r == CMD_FAILED)
                return 1;
        if (r == CMD_USAGE)
                return 2;
        if (r < 0 || r > 255) {
                log_error("BUG: '%s' returned %d%s%s", verb, r, r < 0 && r > -4096 ? ": " : "",
                          r < 0 && r > -4096 ? strerror(-r) : "");
                return 1;
        }
        return r;
}

int main(int argc, char **argv)
{
        const char *name;
        int r;

        /* Verbs wait for the children they start: an inherited SIGCHLD=SIG_IGN
         * would have the kernel reap them behind our back. */
        signal(SIGCHLD, SIG_DFL);
        if (argc < 2) {
                help(stderr);
                return 2;
        }
        name = argv[1];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
                if (argc > 2 && strcmp(name, "help") == 0) {
                        char *hargv[] = { argv[2], (char *)"--help", NULL };
                        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
                                if (strcmp(verbs[i].name, argv[2]) == 0)
                                        return exit_code(argv[2], verbs[i].fn(2, hargv));
                }
                help(stdout);
                return exit_code("help", 0);
        }
        if (strcmp(name, "--list-options") == 0) {
                list_options();
                return exit_code(name, 0);
        }
        if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
                printf("readset %s\n", READSET_VERSION);
                return exit_code("--version", 0);
        }
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
                if (strcmp(verbs[i].name, name) != 0)
                        continue;
                /* what readsets killed outright left in the kernel (their
                 * guardians killed too): removed by the next one, any verb */
                if (geteuid() == 0)
                        (void)tracer_remove_stale_if_mounted();
                optind = 0;
                r = verbs[i].fn(argc - 1, argv + 1);
                return exit_code(name, r);
        }
        log_usage(NULL, "unknown verb '%s'", name);
        return 2;
}
