/* SPDX-License-Identifier: MIT */
/* The calling process's I/O priority (ioprio_set(2)): one class, its
 * level, for the whole process. */
#pragma once

enum io_priority {
        IO_PRIORITY_IDLE,         /* served when no other I/O waits */
        IO_PRIORITY_BEST_EFFORT,  /* best effort, the middle level (4): never realtime */
};

/* "idle", "best-effort": the class, or -EINVAL. */
int io_priority_from_name(const char *s);
/* Set it for the calling process (and the threads it starts).  -errno. */
int io_priority_set(enum io_priority p);
