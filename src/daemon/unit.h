/* SPDX-License-Identifier: MIT */
/* readset auto's systemd unit (readset-auto.service, shipped off) turned
 * on and off, and the kernel command-line word that keeps it off for one
 * boot. */
#pragma once

#include <stdbool.h>

#define AUTO_UNIT "readset-auto.service"
#define AUTO_CMDLINE_OFF "readset.auto=0"

/* Is PID 1 systemd (is there a running systemd to ask)? */
bool auto_systemd_running(void);
/* systemctl enable --now (on) or disable --now of the unit: 0; where PID 1
 * is not systemd (a chroot, an image being made, another init) the links
 * alone, made or removed by systemctl itself: 1; -ENOMEDIUM where there is
 * no systemctl; -errno, or -EIO when systemctl refused (and said why). */
int auto_unit_set(bool on);
/* Does the kernel command line say readset.auto=0 (or readset=off)? */
bool auto_cmdline_off(void);
