/* SPDX-License-Identifier: MIT */
/* What several verbs share. */
#include "cmd/cmd.h"
#include "model/format.h"
#include "util/util.h"
#include "util/banned.h"

int cmd_load_readset(const char *path, struct readset **ret)
{
        const char *why = NULL;
        int r = format_read(path, ret, &why);

        if (r >= 0)
                return 0;
        if (why)
                return log_error("cannot read '%s': %s", path, why);
        return log_errno(r, "cannot read '%s'", path);
}
