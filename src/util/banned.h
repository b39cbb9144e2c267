/* SPDX-License-Identifier: MIT */
/* Functions that must not be used in readset (see docs/HACKING.md). */
#pragma once
#define BANNED(f) sorry_##f##_is_banned_in_readset
#undef strcpy
#define strcpy(a, b) BANNED(strcpy)
#undef strcat
#define strcat(a, b) BANNED(strcat)
#undef strncpy
#define strncpy(a, b, n) BANNED(strncpy)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef strtok
#define strtok(a, b) BANNED(strtok)
#undef atoi
#define atoi(a) BANNED(atoi)
#undef localtime
#define localtime(a) BANNED(localtime)
#undef mktemp
#define mktemp(a) BANNED(mktemp)
