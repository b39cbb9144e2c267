#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run a command where io_uring is refused (EPERM), as a seccomp filter or a
container's policy refuses it: only for that command, not the machine (the
sysctl kernel.io_uring_disabled would be everyone's).

  no-uring.py CMD [ARGS...]
"""
import ctypes, os, platform, struct, sys

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
AUDIT_ARCH_X86_64, NR_IO_URING_SETUP = 0xc000003e, 425
RET_ALLOW, RET_EPERM = 0x7fff0000, 0x00050000 | 1


def insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if platform.machine() != "x86_64":
        print("no-uring.py: the filter is written for x86-64", file=sys.stderr)
        sys.exit(77)
    prog = b"".join([
        insn(0x20, 0, 0, 4),                     # A = arch
        insn(0x15, 1, 0, AUDIT_ARCH_X86_64),     # not x86-64: allow
        insn(0x06, 0, 0, RET_ALLOW),
        insn(0x20, 0, 0, 0),                     # A = syscall number
        insn(0x15, 0, 1, NR_IO_URING_SETUP),
        insn(0x06, 0, 0, RET_EPERM),
        insn(0x06, 0, 0, RET_ALLOW),
    ])
    buf = ctypes.create_string_buffer(prog)
    fprog = struct.pack("HxxxxxxQ", len(prog) // 8, ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
       libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fbuf), 0, 0) != 0:
        sys.exit(f"no-uring.py: seccomp: {os.strerror(ctypes.get_errno())}")
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
