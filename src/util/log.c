/* SPDX-License-Identifier: MIT */
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

static const char program[] = "readset";
/* what the user asked of the whole process (-q): no info lines */
static bool quiet;

void log_set_quiet(bool q)
{
        quiet = q;
}

bool log_quiet(void)
{
        return quiet;
}

static void vlog(const char *prefix, const char *fmt, va_list ap, int err)
{
        fprintf(stderr, "%s: %s", program, prefix);
        vfprintf(stderr, fmt, ap);
        if (err)
                fprintf(stderr, ": %s", strerror(-err));
        fputc('\n', stderr);
}

void log_info(const char *fmt, ...)
{
        va_list ap;

        if (quiet)
                return;
        va_start(ap, fmt);
        vlog("", fmt, ap, 0);
        va_end(ap);
}

void log_warning(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vlog("warning: ", fmt, ap, 0);
        va_end(ap);
}

void log_warning_errno(int err, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vlog("warning: ", fmt, ap, err < 0 ? err : -err);
        va_end(ap);
}

int log_error(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vlog("error: ", fmt, ap, 0);
        va_end(ap);
        return CMD_FAILED;
}

int log_errno(int err, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vlog("error: ", fmt, ap, err < 0 ? err : -err);
        va_end(ap);
        return CMD_FAILED;
}

int log_usage(const char *verb, const char *fmt, ...)
{
        va_list ap;
        /* "readset VERB: ...": one prefix, naming the verb misused */
        fprintf(stderr, "%s%s%s: ", program, verb ? " " : "", verb ? verb : "");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        fprintf(stderr, "see '%s%s%s --help'\n", program, verb ? " " : "", verb ? verb : "");
        return CMD_USAGE;
}

int log_debugv(const char *fmt, va_list ap)
{
        const char *e = getenv("READSET_DEBUG");

        if (!e || strcmp(e, "1") != 0)
                return 0;
        return vfprintf(stderr, fmt, ap);
}
