/* SPDX-License-Identifier: MIT */
/* Work that may wait on a server that never answers, done in a process of
 * its own that the caller can walk away from.  A lookup, open or read on a
 * share blocks for as long as its server takes; on FUSE a request its
 * daemon holds waits even past SIGKILL, and so does the whole process of a
 * thread waiting there (its exit waits for every thread).  Only a separate
 * process can be left behind.  It shares its results with the caller
 * through a mapping, holds none of the caller's descriptors but its stderr
 * (a recorder's, a gate's, a guardian's pipe stay the caller's alone; its
 * stdin and stdout are /dev/null), and that one only until it says it is
 * done (bounded_say_done(): whoever reads the caller's output through a
 * pipe is not kept waiting by its teardown), and ends with the caller
 * (PR_SET_PDEATHSIG). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bounded;

/* Start fn(userdata, shared) in a child process, shared being shared_size
 * bytes, zeroed, visible to both.  NULL and *ret_err when no process could
 * be had (the caller may then do the work itself). */
struct bounded *bounded_start(int (*fn)(void *userdata, void *shared), void *userdata, size_t shared_size,
                              int *ret_err);
void *bounded_shared(struct bounded *b);
/* Wait for it.  Every 10 ms (at once when it ends) the caller asks
 * give_up(give_up_userdata) (NULL: never) and looks at the clock; once it
 * says so or deadline_us (now_us(); 0: none) has passed, the child is told
 * to stop (bounded_stopping()) and given grace_us more.  Returns fn's
 * result (the shared bytes then to read, until bounded_free()); -ETIMEDOUT
 * when the child had not returned (sent SIGKILL and left); -EINTR when a signal of the
 * terminal's (INT, TERM, HUP, QUIT) killed it; -ECHILD when another signal
 * did (a crash: *ret_signal says which). */
int bounded_wait(struct bounded *b, uint64_t deadline_us, bool (*give_up)(void *userdata), void *give_up_userdata,
                 uint64_t grace_us, int *ret_signal);
/* While waiting, also poll fd (a pidfd of what give_up() asks about): once
 * it is readable, give_up() is asked at once rather than within 10 ms. */
void bounded_watch_fd(struct bounded *b, int fd);
/* Has fn said so, by bounded_say_ready() (a step it reached)? */
bool bounded_ready(struct bounded *b);
void bounded_free(struct bounded *b);

/* In fn: has the caller asked it to stop?  Say a step was reached; wait
 * for the caller's go (bounded_go()) or a stop. */
bool bounded_stopping(const void *shared);
void bounded_say_ready(void *shared);
/* Its results (the shared bytes, r as fn's result) are final: the caller
 * goes on without waiting for its exit, while it tears down what is slow
 * to (fn's return does the same; a child that said so is reaped by
 * whoever inherits it). */
void bounded_say_done(void *shared, int r);
void bounded_wait_go(const void *shared);
void bounded_go(struct bounded *b);
