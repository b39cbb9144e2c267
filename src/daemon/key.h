/* SPDX-License-Identifier: MIT */
/* What a start is known by: the program that was exec'd and, for the
 * interpreters and hosts (sh, python3, node, java, env ...), the script or
 * module it runs, as Windows' prefetcher keys hosting programs by their
 * command line; and who ran it.  `-c` strings and scripts on standard input are the
 * interpreter's own start.  Pure, apart from start_key_of_pid(), which
 * reads /proc. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct start_key {
        char exe[PATH_MAX];        /* the program, as /proc/PID/exe names it */
        char script[PATH_MAX];     /* "" or the script (absolute) or "module:NAME" */
        bool script_opened;        /* the exec opened it (a "#!" line): not only named in its arguments */
        uint64_t dev, ino, size, mtime_ns;   /* the program's identity at the exec */
        uid_t uid;                 /* who ran it (real uid) */
        char name[NAME_MAX - 32];  /* its file name in the store (no suffix) */
};

/* Is the program of this file name an interpreter or host whose script
 * tells its starts apart? */
bool key_is_interpreter(const char *base);
/* Does the program of this file name run another in its own process,
 * changing only how (env, nice, ionice, taskset, setpriv ...)?  Its start
 * is the program it runs: that exec is keyed instead. */
bool key_is_launcher(const char *base);
/* The script of an interpreter's argv (argc words), or "" (a -c string,
 * standard input, options only); cwd makes a relative one absolute.
 * "module:NAME" for python's -m NAME.  Into buf (size bytes). */
void key_script_of_argv(const char *base, char *const *argv, int argc, const char *cwd, char *buf, size_t size);
/* FNV-1a of s, on from h (KEY_HASH_SEED to begin): the store's names'
 * hash, and the daemon's table's. */
#define KEY_HASH_SEED 0xcbf29ce484222325ULL
uint64_t key_hash(uint64_t h, const char *s);
/* The store's name of a key from exe, script and uid: the program's (and
 * the script's) base name, cut and made plain, and a hash of the three, so
 * that two programs of one name, or two users' starts of one, stay apart.
 * Into k->name. */
void key_name(struct start_key *k);

/* The file an exec opened, as its event gives it: its path; whether it is
 * an ELF program (else a script, whose interpreter the exec opens next);
 * and the file name of the dynamic loader it names (PT_INTERP, which its
 * exec opens next; "" for a static one), read off the descriptor once.
 * -errno when it has no path. */
struct exec_file {
        char path[PATH_MAX];
        bool elf;
        char loader[NAME_MAX + 1];
};
int key_exec_file(int fd, struct exec_file *ret);
/* The mount namespace whose names are the host's files. */
struct key_ns {
        uint64_t dev, ino;
};
int key_host_ns(struct key_ns *ret);
/* The key of the start whose exec opened exe_fd, an ELF program (at
 * exe_path, as key_exec_file() found it; NULL: asked again), in pid;
 * script: the script the same exec opened first (a "#!" line), or NULL.
 * An interpreter's script is then read from its arguments: -EAGAIN until
 * the exec has replaced the program pid ran before.  -ESRCH once pid is
 * gone, -EXDEV when it runs in another mount namespace than host (its
 * names mean other files there). */
int start_key_of_exec(pid_t pid, int exe_fd, const char *exe_path, const char *script, const struct key_ns *host,
                      struct start_key *ret);
