/* SPDX-License-Identifier: MIT */
/* The trust boundary (docs/SECURITY.md): what readset, run as root, accepts
 * as its own input.  A read set, a device profile or a run --auto directory
 * is trusted only when it, every directory above it and every symbolic
 * link on the way are owned by root or by the user who invoked readset
 * (SUDO_UID under sudo), and it and those directories can be written by no
 * one else, as sshd's StrictModes asks of authorized_keys; a directory
 * above may be writable by others if it is sticky and what it holds on the
 * way is root's or that user's (as /tmp: others cannot replace it there).
 * The path as given is walked so too, links' targets included, before
 * anything is opened: no one else can make it lead elsewhere meanwhile.
 * Not root: only the type checks apply (a user reads what the user may).
 * Every check is made on what will be opened, before it is opened for
 * reading: a device node, FIFO or socket at the name is never opened. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The user's "I trust these files" (--allow-untrusted): owners and modes
 * are no longer checked, types still are. */
void trust_allow_untrusted(void);
/* Whether owners and modes are checked (running as root, not allowed). */
bool trust_enforced(void);
/* The users trusted besides root: the invoking user under sudo
 * (util.h's invoking_uid()); (uid_t)-1 when none. */
uid_t trust_invoking_uid(void);

/* Open path, a regular file, for reading (O_RDONLY | O_CLOEXEC | O_NOCTTY |
 * O_NONBLOCK), checked as above.  Returns the descriptor or -errno; on a
 * refusal (-EPERM: an owner or mode; -EINVAL, -EISDIR: not a regular file)
 * why (why_len bytes) says what is wrong, naming the file or directory. */
int trust_open_file(const char *path, char *why, size_t why_len);
/* The same checks of a directory (run --auto's), which must exist: 0 or
 * -errno, why filled on a refusal. */
int trust_check_dir(const char *path, char *why, size_t why_len);
/* trust_open_file() with the type checks only (a regular file on a real
 * file system, looked at before it is opened): for the files that are part
 * of the program (the reference profiles installed with it, or beside a
 * build: as trusted as the program being run), and for text whose content
 * is checked and grants nothing (build's trace and --paths lists). */
int trust_open_regular(const char *path, char *why, size_t why_len);
/* A whole small file through trust_open_file() (max bytes at most, NUL
 * added): 0 or -errno, why filled on a refusal. */
int trust_read_small_file(const char *path, char **ret, size_t max, char *why, size_t why_len);
/* The same through trust_open_regular(). */
int trust_read_regular(const char *path, char **ret, size_t max, char *why, size_t why_len);
