/* SPDX-License-Identifier: MIT */
/* What several verbs share. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/format.h"
#include "util/util.h"
#include "util/banned.h"

int cmd_load_readset(const char *path, struct readset **ret)
{
        char why[512];
        int r = format_read(path, ret, why, sizeof(why));

        return r >= 0 ? 0 : say_cannot_read(path, r, why[0] ? why : NULL);
}

int say_cannot_read(const char *path, int r, const char *why)
{
        if (why && r == -EPERM)
                return log_error("refusing '%s': %s; as root, readset reads only what root or you alone can "
                                 "change (--allow-untrusted reads it anyway; docs/SECURITY.md)", path, why);
        if (why)
                return log_error("cannot read '%s': %s", path, why);
        return log_errno(r, "cannot read '%s'", path);
}

/* getopt_long refused a long option: optind is past its word ("--name"
 * or "--name=value"); optopt is 0 when no option has that name (or
 * several start so), else the val of the one named.  A short option
 * refused inside a group ("-xv") leaves optind on its word: the word
 * before may then be a long option, or a value starting "--", even one
 * whose val is optopt (a long-only option's val may be a letter the verb
 * has not).  So a long option named is the one refused only where it
 * could be: "--name=value" of one taking none, or "--name" needing a
 * value as the last word. */
int cmd_option_error(const char *verb, int argc, char **argv, const char *short_options,
                     const struct option *long_options)
{
        const char *w = optind > 0 && optind <= argc ? argv[optind - 1] : "";
        const char *s;

        if (strncmp(w, "--", 2) == 0 && w[2]) {
                const char *name = w + 2;
                int len = (int)strcspn(name, "=");
                const struct option *hit = NULL;
                size_t n = 0;

                for (const struct option *o = long_options; o->name; o++) {
                        if (strncmp(o->name, name, (size_t)len) != 0)
                                continue;
                        hit = o;
                        if (o->name[len] == 0) {        /* exact: never ambiguous */
                                n = 1;
                                break;
                        }
                        n++;
                }
                if (optopt == 0 && n > 1) {
                        char list[256];
                        size_t k = 0;

                        list[0] = 0;
                        for (const struct option *o = long_options; o->name && k < sizeof(list); o++)
                                if (strncmp(o->name, name, (size_t)len) == 0)
                                        k += (size_t)snprintf(list + k, sizeof(list) - k, "%s--%s", k ? ", " : "",
                                                              o->name);
                        return log_usage(verb, "ambiguous option '--%.*s' (%s)", len, name, list);
                }
                if (optopt == 0)
                        return log_usage(verb, "unknown option '--%.*s'", len, name);
                if (n == 1 && optopt == hit->val) {
                        if (name[len] == '=' && hit->has_arg == no_argument)
                                return log_usage(verb, "option '--%s' takes no value", hit->name);
                        if (name[len] != '=' && hit->has_arg == required_argument && optind == argc)
                                return log_usage(verb, "option '--%s' needs a value", hit->name);
                }
        }
        s = optopt > 0 && optopt != ':' && optopt != '+' ? strchr(short_options, optopt) : NULL;
        if (s && s[1] == ':')
                return log_usage(verb, "option '-%c' needs a value", optopt);
        if (optopt > ' ' && optopt < 127)
                return log_usage(verb, "unknown option '-%c'", optopt);
        return log_usage(verb, "unknown option");
}

/* Letters that meant something else in one verb than in the others
 * (docs/HACKING.md, Common options; NEWS): kept for one release with their
 * old meaning, each use warned of.  now: what -letter means in every verb
 * (NULL: nothing yet); mine: it will mean that in this verb too. */
static const struct {
        const char *verb, *was, *now;
        char letter;
        bool mine;
} old_letters[] = {
        { "probe", "--quick", "--quiet", 'q', true },
        { "probe", "--save", "--stats", 's', false },
        { "report", "--top", "--dry-run", 'n', false },
        { "report", "--svg", "--stats", 's', false },
        { "boot", "--last", "--dry-run", 'n', false },
        { "run", "--auto", "--system-wide", 'a', false },
        { "build", "--paths", "--profile", 'p', false },
};

/* letter's row of old_letters in verb, or -1 */
static int old_letter_at(const char *verb, int letter)
{
        for (size_t i = 0; i < ARRAY_SIZE(old_letters); i++)
                if (old_letters[i].letter == letter && strcmp(old_letters[i].verb, verb) == 0)
                        return (int)i;
        return -1;
}

bool cmd_old_letter(const char *verb, int letter)
{
        return old_letter_at(verb, letter) >= 0;
}

void say_old_letter(const char *verb, int letter)
{
        int i = old_letter_at(verb, letter);

        if (i < 0)
                return;
        if (old_letters[i].mine)
                log_warning("-%c will mean %s in the next release; use %s", letter, old_letters[i].now,
                            old_letters[i].was);
        else
                log_warning("-%c will no longer mean %s in the next release (-%c is %s in every verb "
                            "that has it); use %s", letter, old_letters[i].was, letter, old_letters[i].now,
                            old_letters[i].was);
}

/* The names every option taking a device accepts (device/names.h), and
 * what else it takes. */
static void device_names_text(char *buf, size_t size)
{
        size_t n;

        device_names_list(buf, size);
        n = strlen(buf);
        snprintf(buf + n, size - n, ", or a profile file (readset probe -o)");
}

int cmd_device_name(const char *verb, const char *opt, const char *arg, struct device_name *ret)
{
        char names[512];
        int r = device_name_parse(arg, ret);

        if (r >= 0)
                return 0;
        if (r == -ENAMETOOLONG)
                return log_usage(verb, "%s '%s': name too long", opt, arg);
        device_names_text(names, sizeof(names));
        return log_usage(verb, "unknown %s '%s' (%s)", opt, arg, names);
}

void print_device_names(int indent)
{
        char names[512];
        const char *p = names;
        int col = 0;

        device_names_text(names, sizeof(names));
        while (*p) {
                size_t w = strcspn(p, " ");
                if (col == 0)
                        col = printf("%*s", indent, "");
                else if (col + 1 + (int)w > 79)
                        col = printf("\n%*s", indent, "") - 1;
                else
                        col += printf(" ");
                col += printf("%.*s", (int)w, p);
                p += w;
                p += strspn(p, " ");
        }
        printf("\n");
}

const char *cmd_fit(const char *s, size_t used, char *buf, size_t size)
{
        return printable_elided(s, used + 20 < CMD_COLUMNS ? CMD_COLUMNS - used : 20, buf, size);
}

/* fmt's text broken between words: the first line width columns, the
 * others indent and width less it; on stdout, or said with log_info(). */
static void __attribute__((format(printf, 4, 0)))
put_wrapped(bool info, size_t width, const char *indent, const char *fmt, va_list ap)
{
        _cleanup_free_ char *s = NULL;
        const char *next;

        if (vasprintf(&s, fmt, ap) < 0)
                return;
        for (const char *p = s; *p; p = next) {
                size_t n = text_line_break(p, p == s ? width : width - strlen(indent), &next);

                if (info)
                        log_info("%s%.*s", p == s ? "" : indent, (int)n, p);
                else
                        printf("%s%.*s\n", p == s ? "" : indent, (int)n, p);
        }
}

void cmd_printf_wrapped(const char *indent, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        put_wrapped(false, CMD_COLUMNS, indent, fmt, ap);
        va_end(ap);
}

void cmd_info_wrapped(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        put_wrapped(true, CMD_LOG_COLUMNS, "  ", fmt, ap);
        va_end(ap);
}
