/* SPDX-License-Identifier: MIT */
/* Path lookups (open, stat, access, readlink, readdir, exec) of a process
 * tree with their outcomes, from a BPF program on the syscall tracepoints.
 * See docs/DECISIONS.md for why BPF and not tracefs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/readset.h"

struct lookups;

/* -EOPNOTSUPP when readset was built without BPF support.  all: trace
 * every process but this one (its threads included) and those
 * lookups_ignore() names; else only the trees lookups_follow() names.
 * Lookups made before lookups_set_start() are not kept. */
int lookups_open(struct lookups **ret, bool all);
/* The same, its programs loaded but, without attach, not on their
 * tracepoints until lookups_attach(): a recorder opened ahead (readset
 * auto's) costs every path lookup and fork on the machine nothing while
 * it follows nobody. */
int lookups_open_as(struct lookups **ret, bool all, bool attach);
int lookups_attach(struct lookups *l);
int lookups_follow(struct lookups *l, pid_t pid);
/* Recording every process: leave pid out too (the guardian). */
int lookups_ignore(struct lookups *l, pid_t pid);
void lookups_set_start(struct lookups *l, uint64_t start_ns);
/* Hand each lookup to fn as it is drained (op an RS_LOOKUP_*, path
 * absolute) instead of keeping it: following a start as it runs. */
void lookups_observe(struct lookups *l, void (*fn)(void *userdata, uint32_t op, int32_t result, const char *path),
                     void *userdata);
int lookups_fd(struct lookups *l);
/* The descriptors of its BPF objects (programs, maps, links, BTF), at most
 * max into fds: what a guardian of this recorder holds, and no other's.
 * How many. */
size_t lookups_own_fds(const struct lookups *l, int *fds, size_t max);
int lookups_drain(struct lookups *l);
/* Drain what is left and append the lookups to rs (sets rs->lookups_lost). */
int lookups_finish(struct lookups *l, struct readset *rs);
/* Keep at most max_lookups (0: no limit); the rest count as lost. */
void lookups_set_limit(struct lookups *l, uint64_t max_lookups);
void lookups_close(struct lookups *l);
