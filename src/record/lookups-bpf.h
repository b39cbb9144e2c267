/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Shared between lookups.bpf.c and lookups.c. */
#pragma once

#define LOOKUP_PATH_MAX 384
#define LOOKUP_AT_FDCWD (-100)
#define LOOKUP_NR_FORK 0xffffffffu

/* x86_64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
#define NR_open 2
#define NR_stat 4
#define NR_lstat 6
#define NR_access 21
#define NR_dup 32
#define NR_dup2 33
#define NR_execve 59
#define NR_fcntl 72
#define NR_chdir 80
#define NR_fchdir 81
#define NR_readlink 89
#define NR_getdents64 217
#define NR_openat 257
#define NR_newfstatat 262
#define NR_readlinkat 267
#define NR_faccessat 269
#define NR_dup3 292
#define NR_execveat 322
#define NR_statx 332
#define NR_openat2 437
#define NR_faccessat2 439

/* fcntl commands that duplicate a descriptor */
#define LOOKUP_F_DUPFD 0
#define LOOKUP_F_DUPFD_CLOEXEC 1030

struct lookup_record {
        __u64 ts;       /* CLOCK_MONOTONIC ns at syscall entry */
        __u32 tgid;
        __u32 nr;       /* syscall number, or LOOKUP_NR_FORK */
        __s32 dfd;      /* directory fd, fd (getdents64, fchdir, the old fd of a dup), or parent tgid (fork) */
        __s32 len;      /* bytes of path including NUL; LOOKUP_PATH_MAX = maybe cut */
        __s64 ret;      /* syscall result */
        char path[LOOKUP_PATH_MAX];
};
