/* SPDX-License-Identifier: MIT */
#include "util/ioprio.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/banned.h"

/* linux/ioprio.h: the class in the top bits, its level below */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_WHO_PROCESS 1

int io_priority_from_name(const char *s)
{
        if (strcmp(s, "idle") == 0)
                return IO_PRIORITY_IDLE;
        if (strcmp(s, "best-effort") == 0)
                return IO_PRIORITY_BEST_EFFORT;
        return -EINVAL;
}

int io_priority_set(enum io_priority p)
{
        int v = p == IO_PRIORITY_IDLE ? IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT
                                      : IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT | 4;
        return syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, v) < 0 ? -errno : 0;
}
