/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Path lookups of one process tree (or of every process but the
 * recorder): which names it opens, stats, accesses,
 * reads links of, lists or executes, and what came back (including ENOENT),
 * with the descriptor calls (dup, fcntl F_DUPFD, fchdir) that names relative
 * to a directory descriptor need to be made absolute.
 * Syscall tracepoints only carry user pointers, so the names are copied here,
 * at syscall entry, and paired with the result at exit. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "lookups-bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* x86_64 struct pt_regs, as in the uapi <asm/ptrace.h>: a fixed layout, so
 * no kernel BTF (and no 100 ms of parsing it at load time) is needed. */
struct pt_regs {
        unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
        unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

static unsigned long reg(const unsigned long *field)
{
        unsigned long v = 0;
        bpf_probe_read_kernel(&v, sizeof(v), field);
        return v;
}

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(map_flags, BPF_F_NO_PREALLOC);  /* allocating 64k entries up front costs ms */
        __uint(max_entries, 65536);
        __type(key, __u32);   /* tgid */
        __type(value, __u8);
} traced SEC(".maps");

struct pending {
        __u64 ts;
        __u64 name;    /* user pointer, read at exit: the kernel has faulted it in by then */
        __s32 dfd;
        __u32 nr;
        __s32 len;     /* > 0: path[] was read at entry (exec replaces the memory) */
        char path[LOOKUP_PATH_MAX];
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct pending);
} scratch SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __uint(max_entries, 16384);
        __type(key, __u64);   /* pid_tgid */
        __type(value, struct pending);
} inflight SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 4 << 20);  /* ~40 000 typical records; drained every DRAIN_MS */
} records SEC(".maps");

/* [0] records dropped (ring full), [1] names that could not be read */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 2);
        __type(key, __u32);
        __type(value, __u64);
} counters SEC(".maps");

static void count(__u32 i)
{
        __u64 *v = bpf_map_lookup_elem(&counters, &i);
        if (v)
                __sync_fetch_and_add(v, 1);
}

/* Set before loading: trace every process but those in `ignored` (the
 * recorder and its guardian: a recording of the whole system), instead of
 * the tree in `traced`. */
const volatile __u32 trace_all = 0;

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 1024);  /* readset's processes and threads */
        __type(key, __u32);   /* tgid */
        __type(value, __u8);
} ignored SEC(".maps");

static int tgid_traced(__u32 tgid)
{
        if (trace_all)
                return bpf_map_lookup_elem(&ignored, &tgid) == 0;
        return bpf_map_lookup_elem(&traced, &tgid) != 0;
}

static int is_traced(void)
{
        return tgid_traced(bpf_get_current_pid_tgid() >> 32);
}

SEC("raw_tracepoint/sys_enter")
int on_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
        struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
        long nr = (long)ctx->args[1];
        __u64 id = bpf_get_current_pid_tgid();
        struct pending *p;
        __u32 zero = 0;

        switch (nr) {
        case NR_open: case NR_stat: case NR_lstat: case NR_access: case NR_execve:
        case NR_readlink: case NR_chdir:
        case NR_openat: case NR_newfstatat: case NR_readlinkat: case NR_faccessat:
        case NR_faccessat2: case NR_execveat: case NR_statx: case NR_openat2:
        case NR_getdents64: case NR_fchdir:
        case NR_dup: case NR_dup2: case NR_dup3:
                break;
        case NR_fcntl: {
                /* only the duplications: the others are frequent and name nothing */
                long cmd = (long)reg(&regs->si);
                if (cmd != LOOKUP_F_DUPFD && cmd != LOOKUP_F_DUPFD_CLOEXEC)
                        return 0;
                break;
        }
        default:
                return 0;
        }
        if (!is_traced())
                return 0;
        p = bpf_map_lookup_elem(&scratch, &zero);
        if (!p)
                return 0;
        p->dfd = LOOKUP_AT_FDCWD;
        p->nr = (__u32)nr;
        p->name = 0;
        p->len = 0;
        switch (nr) {
        case NR_open: case NR_stat: case NR_lstat: case NR_access: case NR_execve:
        case NR_readlink: case NR_chdir:
                p->name = reg(&regs->di);
                break;
        case NR_getdents64: case NR_fchdir:
        case NR_dup: case NR_dup2: case NR_dup3: case NR_fcntl:
                p->dfd = (__s32)reg(&regs->di);
                break;
        default:
                p->dfd = (__s32)reg(&regs->di);
                p->name = reg(&regs->si);
                break;
        }
        if (nr == NR_execve || nr == NR_execveat) {
                /* After a successful exec the old memory is gone: read now. */
                p->len = bpf_probe_read_user_str(p->path, sizeof(p->path), (const void *)p->name);
                if (p->len <= 0)
                        p->len = 0;
        }
        p->ts = bpf_ktime_get_ns();
        bpf_map_update_elem(&inflight, &id, p, BPF_ANY);
        return 0;
}

/* Records are built here and copied into the ring at their real size
 * (header + name): most names are far shorter than LOOKUP_PATH_MAX. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct lookup_record);
} recbuf SEC(".maps");

#define HEADER_SIZE ((__u64)__builtin_offsetof(struct lookup_record, path))

static void emit(struct lookup_record *r)
{
        __u64 size = HEADER_SIZE + (r->len > 0 ? (__u64)r->len : 0);

        if (size > sizeof(*r))
                size = sizeof(*r);
        if (bpf_ringbuf_output(&records, r, size, BPF_RB_NO_WAKEUP) < 0)  /* drained on a timer */
                count(0);
}

SEC("raw_tracepoint/sys_exit")
int on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
        __u64 id = bpf_get_current_pid_tgid();
        struct pending *p = bpf_map_lookup_elem(&inflight, &id);
        struct lookup_record *r;
        long ret = (long)ctx->args[1];
        __u32 zero = 0;

        if (!p)
                return 0;
        r = bpf_map_lookup_elem(&recbuf, &zero);
        if (!r) {
                bpf_map_delete_elem(&inflight, &id);
                return 0;
        }
        r->ts = p->ts;
        r->tgid = id >> 32;
        r->nr = p->nr;
        r->dfd = p->dfd;
        r->ret = ret;
        r->len = 0;
        r->path[0] = 0;
        if (p->len > 0) {
                r->len = p->len;
                bpf_probe_read_kernel(r->path, sizeof(r->path), p->path);
        } else if (p->name) {
                r->len = bpf_probe_read_user_str(r->path, sizeof(r->path), (const void *)p->name);
                if (r->len < 0) {
                        count(1);
                        r->len = 0;
                } else if (r->len <= 1) {
                        /* "" with AT_EMPTY_PATH: an fstat on an fd, not a lookup */
                        bpf_map_delete_elem(&inflight, &id);
                        return 0;
                }
        }
        emit(r);
        bpf_map_delete_elem(&inflight, &id);
        return 0;
}

/* The sched_process_fork record changed layout over time; userspace reads
 * the event's format and loads the matching one of these. */
struct fork_v1 {           /* comm arrays inline */
        __u64 common;
        char parent_comm[16];
        int parent_pid;
        char child_comm[16];
        int child_pid;
};

struct fork_v2 {           /* comm as __data_loc (Linux 6.x) */
        __u64 common;
        __u32 parent_comm_loc;
        int parent_pid;
        __u32 child_comm_loc;
        int child_pid;
};

static int on_fork(__u32 parent, __u32 child)
{
        struct lookup_record *r;
        __u32 ptgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
        __u8 one = 1;

        /* Runs in the parent.  A new thread's id joins the map too: harmless,
         * its process is traced already. */
        (void)parent;
        /* following every process but readset's own: what readset starts
         * (the boot's replay) is its own too */
        if (trace_all && bpf_map_lookup_elem(&ignored, &ptgid)) {
                bpf_map_update_elem(&ignored, &child, &one, BPF_ANY);
                return 0;
        }
        if (!tgid_traced(ptgid))
                return 0;
        if (!trace_all)
                bpf_map_update_elem(&traced, &child, &one, BPF_ANY);
        r = bpf_map_lookup_elem(&recbuf, &zero);
        if (!r)
                return 0;
        r->ts = bpf_ktime_get_ns();
        r->tgid = child;
        r->nr = LOOKUP_NR_FORK;
        r->dfd = (__s32)ptgid;
        r->ret = 0;
        r->len = 0;
        r->path[0] = 0;
        emit(r);
        return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int on_fork_v1(struct fork_v1 *ctx)
{
        return on_fork((__u32)ctx->parent_pid, (__u32)ctx->child_pid);
}

SEC("tracepoint/sched/sched_process_fork")
int on_fork_v2(struct fork_v2 *ctx)
{
        return on_fork((__u32)ctx->parent_pid, (__u32)ctx->child_pid);
}
