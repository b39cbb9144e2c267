/* SPDX-License-Identifier: MIT */
/* The command readset runs (record, run): started, if asked, stopped at a
 * gate until readset is ready for it; standing in for it, readset passes
 * the signals it gets on (INT, TERM, HUP, QUIT) and ends with its status.
 * One child at a time (the signal handler's state is process-wide). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct child {
        pid_t pid;
        int pidfd;          /* signals go through it; -1 where pidfd_open is refused */
        int gate;           /* gated: the write end the command waits on; -1 once released */
        int errpipe;        /* the read end where a failed exec leaves its errno */
        int status;         /* wait status, once reaped */
        bool exited;
};

/* Start argv[0] (searched in PATH) with argv, the signals to pass on
 * blocked across the fork (none falls between the fork and the handler),
 * the command getting readset's signal mask back.  gated: it execs only
 * once child_release() is called (or readset is gone: it then exits 127).
 * From now on the signals readset gets are passed on, but for those the
 * terminal sent (they reached the command's process group already) and a
 * hangup when readset leads the session (the kernel tells the leader
 * alone).  -errno if it cannot fork. */
int child_start(struct child *c, char **argv, bool gated);
/* Let a gated command exec. */
int child_release(struct child *c);
/* Has it ended?  Reaps it when it has (never blocks). */
bool child_done(struct child *c);
/* Wait until it ends; -errno if waiting fails. */
int child_wait(struct child *c);
/* Its exit status as a shell reports it: its own, 128 + N after signal N;
 * 127 (not found) or 126 (not executable) when the exec failed, with
 * *ret_exec_errno (may be NULL) the reason, else 0. */
int child_exit_code(struct child *c, int *ret_exec_errno);
/* Whether a signal readset got was passed on. */
bool child_signal_passed_on(void);
/* Whether it was cut short by a signal: one was passed on, it died of one,
 * or (a shell around it) exited with 128 plus a signal's number, the
 * shells' way (255, a common "failed", is no signal's). */
bool child_cut_short(const struct child *c);
/* Kill it (SIGKILL) and reap it: for a set-up that failed. */
void child_kill(struct child *c);
/* Stop passing signals on and close what is left: signals stop readset
 * again (until then, one that comes after the command ended reaches
 * nobody, so that readset can finish its work).  Safe to call again. */
void child_close(struct child *c);

/* Go on in the background, detached: a new session, no terminal, none of
 * the caller's pipes held open, in /.  In the parent *ret_parent is true
 * (it returns at once), in the detached child false.  -errno. */
int child_detach(bool *ret_parent);

/* Run a helper program (systemctl) to its end, deadline_us (now_us(); 0:
 * none) at most, then killed: its stdin /dev/null, its stdout into out
 * (out_size bytes at most, NUL-terminated; /dev/null when out is NULL), its
 * stderr readset's unless quiet.  Not one of the signal-passing children
 * above.  Its exit status; -ENOENT when it could not be run, -ETIMEDOUT,
 * or -errno. */
int child_run(char *const *argv, char *out, size_t out_size, bool quiet, uint64_t deadline_us);
/* The same to its end (its stdout /dev/null), tick(userdata, its pid)
 * called every 50 ms while it runs: how far a long one is (pack's image
 * tool). */
int child_run_watched(char *const *argv, bool quiet, void (*tick)(void *userdata, pid_t pid), void *userdata);
