/* SPDX-License-Identifier: MIT */
/* Work that may wait on a server that never answers, done in a process of
 * its own that the caller can walk away from.  A lookup, open or read on a
 * share blocks for as long as its server takes; on FUSE a request its
 * daemon holds waits even past SIGKILL, and so does the whole process of a
 * thread waiting there (its exit waits for every thread).  Only a separate
 * process can be left behind.  It shares its results with the caller
 * through a mapping, and ends with the caller (PR_SET_PDEATHSIG). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Run fn(userdata, shared) in a child process, shared being shared_size
 * bytes zeroed and visible to both.  Every 10 ms the caller asks
 * give_up(give_up_userdata) (NULL: never) and looks at the clock; once it
 * says so or deadline_us (now_us(); 0: none) has passed, the child is told
 * to stop (bounded_stopping()) and given grace_us more.  Returns fn's
 * result, with *ret_shared to read and bounded_free() after; or -ETIMEDOUT
 * when the child had not returned (sent SIGKILL, left; nothing to free);
 * -EINTR when it was killed (a signal of the terminal's). */
int bounded_run(int (*fn)(void *userdata, void *shared), void *userdata, size_t shared_size, uint64_t deadline_us,
                bool (*give_up)(void *userdata), void *give_up_userdata, uint64_t grace_us, void **ret_shared);
void bounded_free(void *shared, size_t shared_size);
/* In fn: has the caller asked it to stop? */
bool bounded_stopping(const void *shared);
