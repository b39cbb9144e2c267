/* SPDX-License-Identifier: MIT */
/* What several verbs share. */
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

const char *cmd_fit(const char *s, size_t used, char *buf, size_t size)
{
        return printable_elided(s, used + 20 < CMD_COLUMNS ? CMD_COLUMNS - used : 20, buf, size);
}

void cmd_printf_wrapped(const char *indent, const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        const char *p, *next;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return;
        for (p = s; *p; p = next) {
                size_t n = text_line_break(p, p == s ? CMD_COLUMNS : CMD_COLUMNS - strlen(indent), &next);
                printf("%s%.*s\n", p == s ? "" : indent, (int)n, p);
        }
}

void cmd_info_wrapped(const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        const char *p, *next;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return;
        for (p = s; *p; p = next) {
                size_t n = text_line_break(p, p == s ? CMD_LOG_COLUMNS : CMD_LOG_COLUMNS - 2, &next);
                log_info("%s%.*s", p == s ? "" : "  ", (int)n, p);
        }
}
