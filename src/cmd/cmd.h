/* SPDX-License-Identifier: MIT */
/* Subcommands.  Each returns an exit status (>= 0) or -1 (failure, exit 1)
 * or -2 (usage error, exit 2); main() maps them. */
#pragma once

#include <signal.h>
#include <stdbool.h>

struct readset;

/* Read a read set, printing one line on failure (then returns -1). */
int load_readset(const char *path, struct readset **ret);

/* Whether a signal readset got is to be passed on to the command it runs
 * (record, run): not one the terminal sent (SI_KERNEL), which reached the
 * command's process group already, except a hangup, which the kernel sends
 * to the session leader alone.  Async-signal-safe. */
static inline bool signal_to_pass_on(int sig, int si_code, bool session_leader)
{
        return si_code != SI_KERNEL || (sig == SIGHUP && session_leader);
}

int cmd_record(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
