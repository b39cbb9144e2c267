/* SPDX-License-Identifier: MIT */
/* Subcommands.  Each returns an exit status (>= 0) or -1 (failure, exit 1)
 * or -2 (usage error, exit 2); main() maps them. */
#pragma once

struct readset;

/* Read a read set, printing one line on failure (then returns -1). */
int load_readset(const char *path, struct readset **ret);

int cmd_record(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
