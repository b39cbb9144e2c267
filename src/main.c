/* SPDX-License-Identifier: MIT */
/* readset: record, show and replay the read set of a cold start. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "device/names.h"
#include "pack/image.h"
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
        VERB(snapshot, "write what the page cache holds of some files as a read set"),
        VERB(keep, "keep a service's page-cache working set across its restarts"),
        VERB(auto, "learn and speed up every program start on the machine (a daemon)"),
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

/* What completes an option's value, by the option's long name (verb NULL:
 * in any verb): a file name unless this table says otherwise. */
enum value_kind { VALUE_FILE, VALUE_DIR, VALUE_NONE, VALUE_WORDS, VALUE_METHOD, VALUE_DEVICE, VALUE_PACK_COMPRESS };
static const struct {
        const char *verb, *option;
        enum value_kind kind;
        const char *words;      /* VALUE_WORDS */
} option_values[] = {
        { NULL, "method", VALUE_METHOD, NULL },
        { "pack", "image", VALUE_WORDS, "squashfs erofs" },
        { "pack", "compress", VALUE_PACK_COMPRESS, NULL },
        { NULL, "device", VALUE_DEVICE, NULL }, { NULL, "profile", VALUE_DEVICE, NULL },
        { "layout", "compress", VALUE_WORDS, "zstd lzo zlib" },
        { "layout", "move", VALUE_WORDS, "auto files ranges" },
        { "layout", "io-priority", VALUE_WORDS, "idle best-effort" },
        { NULL, "root", VALUE_DIR, NULL }, { NULL, "auto", VALUE_DIR, NULL },
        { NULL, "state", VALUE_DIR, NULL }, { NULL, "under", VALUE_DIR, NULL },
        /* numbers and texts */
        { NULL, "buffer-size", VALUE_NONE, NULL }, { NULL, "max-walk", VALUE_NONE, NULL },
        { NULL, "timeout", VALUE_NONE, NULL }, { NULL, "queue-depth", VALUE_NONE, NULL },
        { NULL, "threads", VALUE_NONE, NULL }, { NULL, "max-bytes", VALUE_NONE, NULL },
        { NULL, "max-evict", VALUE_NONE, NULL }, { NULL, "stale-below", VALUE_NONE, NULL },
        { NULL, "nice", VALUE_NONE, NULL }, { NULL, "top", VALUE_NONE, NULL },
        { NULL, "last", VALUE_NONE, NULL }, { NULL, "settle", VALUE_NONE, NULL },
        { NULL, "seconds", VALUE_NONE, NULL }, { NULL, "size", VALUE_NONE, NULL },
        { NULL, "block-size", VALUE_NONE, NULL }, { NULL, "why", VALUE_NONE, NULL },
};

static const char *method_word(int i) { return engine_method_name((enum engine_method)i); }
static const char *compress_word(int i) { return pack_compress_name((enum pack_compress)i); }

/* Offer the n words name(0) .. name(n - 1). */
static void complete_words(int n, const char *(*name)(int))
{
        printf("COMPREPLY=($(compgen -W \"");
        for (int i = 0; i < n; i++)
                printf("%s%s", i ? " " : "", name(i));
        printf("\" -- \"$cur\"))");
}

/* The case of bash's that completes the value of option o of verb v. */
static void complete_value(const struct verb *v, const struct option *o)
{
        enum value_kind kind = VALUE_FILE;
        const char *words = NULL;

        for (size_t i = 0; i < ARRAY_SIZE(option_values); i++)
                if ((!option_values[i].verb || strcmp(option_values[i].verb, v->name) == 0) &&
                    strcmp(option_values[i].option, o->name) == 0) {
                        kind = option_values[i].kind;
                        words = option_values[i].words;
                        break;
                }
        printf("        ");
        if (o->val > 0 && o->val < 128 && strchr(v->short_options, o->val))
                printf("-%c|", o->val);
        printf("--%s) ", o->name);
        switch (kind) {
        case VALUE_FILE: printf("COMPREPLY=($(compgen -f -- \"$cur\"))"); break;
        case VALUE_DIR: printf("COMPREPLY=($(compgen -d -- \"$cur\"))"); break;
        case VALUE_NONE: printf("return ;;\n"); return;     /* nothing to offer */
        case VALUE_WORDS: printf("COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))", words); break;
        case VALUE_METHOD: complete_words(_ENGINE_METHOD_MAX, method_word); break;
        case VALUE_PACK_COMPRESS: complete_words(_PACK_COMPRESS_MAX, compress_word); break;
        case VALUE_DEVICE: {
                /* the table's names and aliases (device/names.h), or a profile file */
                char list[512], *save = NULL;
                const char *sep = "";
                printf("COMPREPLY=($(compgen -W \"");
                device_names_list(list, sizeof(list));
                for (char *t = strtok_r(list, " ,()", &save); t; t = strtok_r(NULL, " ,()", &save), sep = " ")
                        printf("%s%s", sep, t);
                printf("\" -- \"$cur\") $(compgen -f -- \"$cur\"))");
                break;
        }
        }
        printf("; return ;;\n");
}

/* readset --bash-completion (not in --help: the build makes the installed
 * completion of it): bash's completion of readset, from the verb table,
 * each verb's options as getopt reads them, and boot's subcommands as
 * cmd_boot runs them, so that it offers what readset takes and nothing
 * else. */
static void bash_completion(void)
{
        printf("# SPDX-License-Identifier: MIT\n"
               "# bash completion for readset: made by 'readset --bash-completion' (src/main.c)\n"
               "# from its verbs and their options as readset reads them; do not edit\n"
               "_readset()\n"
               "{\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
               "    local opts= takes= subs= i w args=0\n"
               "    COMPREPLY=()\n"
               "    # --name=value: bash splits it at the '='\n"
               "    if [ \"$cur\" = = ]; then\n"
               "        cur=\n"
               "    elif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 2 ]; then\n"
               "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
               "    fi\n"
               "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
               "        COMPREPLY=($(compgen -W \"");
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
                if (!verbs[i].hidden)
                        printf("%s ", verbs[i].name);
        printf("--help --version\" -- \"$cur\"))\n"
               "        return\n"
               "    fi\n"
               "    case ${COMP_WORDS[1]} in\n");
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
                const struct verb *v = &verbs[i];
                const char *sep = "";

                if (v->hidden)
                        continue;
                printf("    %s)\n        opts=\"", v->name);
                for (const struct option *o = v->long_options; o->name; o++, sep = " ")
                        printf("%s--%s", sep, o->name);
                printf("\"\n        takes=\"");
                sep = "";
                for (const struct option *o = v->long_options; o->name; o++) {
                        if (o->has_arg == no_argument)
                                continue;
                        if (o->val > 0 && o->val < 128 && strchr(v->short_options, o->val))
                                printf("%s-%c", sep, o->val), sep = " ";
                        printf("%s--%s", sep, o->name);
                        sep = " ";
                }
                printf("\"\n");
                if (strcmp(v->name, "boot") == 0 || strcmp(v->name, "keep") == 0 || strcmp(v->name, "auto") == 0) {
                        const char *(*sub)(size_t) = v->name[0] == 'b'   ? boot_subcommand_name
                                                     : v->name[0] == 'k' ? keep_subcommand_name
                                                                         : auto_subcommand_name;
                        printf("        subs=\"");
                        for (size_t k = 0; sub(k); k++)
                                printf("%s%s", k ? " " : "", sub(k));
                        printf("\"\n");
                }
                printf("        case $prev in\n");
                for (const struct option *o = v->long_options; o->name; o++)
                        if (o->has_arg != no_argument)
                                complete_value(v, o);
                printf("        esac ;;\n");
        }
        printf("    *) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
               "    esac\n"
               "    # the words between the verb and this one: options and their\n"
               "    # values, what the verb takes, '--' before a command (record, run)\n"
               "    for ((i = 2; i < COMP_CWORD; i++)); do\n"
               "        w=${COMP_WORDS[i]}\n"
               "        if [ \"$w\" = -- ]; then\n"
               "            if declare -F _command_offset >/dev/null; then\n"
               "                _command_offset $((i + 1))\n"
               "            elif [ $((i + 1)) -eq \"$COMP_CWORD\" ]; then\n"
               "                COMPREPLY=($(compgen -c -- \"$cur\"))\n"
               "            else\n"
               "                COMPREPLY=($(compgen -f -- \"$cur\"))\n"
               "            fi\n"
               "            return\n"
               "        elif [[ \" $takes \" == *\" $w \"* ]]; then\n"
               "            [ \"${COMP_WORDS[i+1]}\" != = ] || i=$((i + 1))\n"
               "            i=$((i + 1))\n"
               "        elif [[ $w != -* && $w != = ]]; then\n"
               "            args=$((args + 1))\n"
               "        fi\n"
               "    done\n"
               "    if [[ $cur == -* ]]; then\n"
               "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
               "    elif [ -n \"$subs\" ] && [ \"$args\" -eq 0 ]; then\n"
               "        COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
               "    else\n"
               "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
               "    fi\n"
               "}\n"
               "complete -F _readset readset\n");
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
        /* the verbs say what getopt refused, in one line (cmd_option_error) */
        opterr = 0;
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
        if (strcmp(name, "--bash-completion") == 0) {
                bash_completion();
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
        if (name[0] == '-' && name[1])
                log_usage(NULL, "unknown option '%s'", name);
        else
                log_usage(NULL, "unknown verb '%s'", name);
        return 2;
}
