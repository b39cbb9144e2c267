/* SPDX-License-Identifier: MIT */
/* Every exec on the machine, as fanotify's FAN_OPEN_EXEC tells it: a
 * notification, never a permission event, so that an exec never waits for
 * the daemon (a stopped or dead one holds nothing: its marks go with its
 * descriptor).  Every local file system is marked (FAN_MARK_FILESYSTEM),
 * and those mounted later once execs_rescan() is called (the daemon calls
 * it when mountinfo changes). */
#pragma once

#include <stdint.h>
#include <sys/types.h>

struct execs;

struct exec_event {
        pid_t pid;          /* the process that opened the file to exec it */
        int fd;             /* the file, read-only (the event's; execs_read()'s caller closes it) */
        uint64_t at_us;     /* when it was read (now_us()) */
};

/* Opened and every local file system marked; -errno (-EPERM: not root). */
int execs_open(struct execs **ret);
/* Readable when events wait (poll it). */
int execs_fd(const struct execs *x);
/* File systems mounted since, marked too; how many were marked now. */
int execs_rescan(struct execs *x);
/* File systems marked. */
unsigned execs_marks(const struct execs *x);
/* What waits, each given to fn (which owns ev->fd from then on), without
 * blocking; events the kernel could not queue are counted in
 * execs_overflows().  The number read, or -errno. */
int execs_read(struct execs *x, void (*fn)(void *userdata, const struct exec_event *ev), void *userdata);
uint64_t execs_overflows(const struct execs *x);
void execs_close(struct execs *x);
