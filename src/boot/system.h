/* SPDX-License-Identifier: MIT */
/* The boot session's real environment (boot/session.h): systemd (its
 * readiness protocol, the boot's end and total), the kernel's command
 * line, the clock, and the recorder (every process but readset's). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "boot/session.h"

#define BOOT_UNIT "readset-boot.service"

/* what one boot's recording keeps at most: about 40 MB (the rest counted) */
#define BOOT_MAX_EVENTS (1u << 20)

/* env's sys and rec set to the real ones (replay and say are the
 * caller's). */
void boot_env_system(struct boot_env *env);

/* systemd's readiness protocol (sd_notify(3)): one datagram to
 * $NOTIFY_SOCKET.  Nothing when not started by systemd. */
void boot_notify_ready(void);
/* /proc/cmdline holds readset=off (or readset=0) */
bool boot_cmdline_off(void);
/* Wait until systemd reports the boot finished (systemctl
 * is-system-running --wait), deadline_us at most: 0 and systemd's total
 * ("Startup finished", firmware and loader included when known; 0:
 * unknown) in *ret_total_us, -ETIMEDOUT, -EHOSTDOWN (not booted by
 * systemd), or -errno. */
int boot_wait_systemd(uint64_t deadline_us, uint64_t *ret_total_us);
/* The boot's end from outside: a line on fd (the boot's seconds, or
 * nothing), deadline_us at most.  0 and the seconds in *ret_total_us (0:
 * none given, or not a number of seconds), -ETIMEDOUT, or -errno. */
int boot_wait_line(int fd, uint64_t deadline_us, uint64_t *ret_total_us);
/* "2.5" seconds as 2500000 us (up to six decimals, below 1e6 s, above 0):
 * 0 or -EINVAL / -ERANGE. */
int boot_parse_seconds(const char *s, uint64_t *ret_us);
/* The boot's unit enabled (systemctl enable: by the running systemd, or
 * offline in a chroot or an image) where state is BOOT_STATE_DIR (another
 * state is a test's, or a container's driven from outside): 0 (or nothing
 * to do: no systemctl), or -errno (-EIO: systemctl failed). */
int boot_unit_enable(const char *state);
/* ... and disabled (not enabled, or not installed: nothing to undo). */
void boot_unit_disable(const char *state);
