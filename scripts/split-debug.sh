#!/bin/sh
# split-debug.sh IN OUT DEBUG: OUT is IN without its debug sections and its
# symbol table, linked (.gnu_debuglink) to DEBUG, which holds both: gdb,
# valgrind and perf find them there, while a cold start of readset reads only
# what it runs (the debug sections were half the file, the symbol table 130
# KB more, and the kernel reads a small file whole).
set -eu
objcopy --only-keep-debug "$1" "$3"
objcopy --strip-all --add-gnu-debuglink="$3" "$1" "$2.tmp"
mv -f "$2.tmp" "$2"
