/* SPDX-License-Identifier: MIT */
/* What the disk models (slowdev-fuse.c) and the share (slowdev-share.c)
 * have in common: the mode the signals set, the clock, on-time sleeping. */
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <stdatomic.h>

/* How requests are served: by the model; at once (filling the device);
 * calibration (the whole path, a fixed ZERO_MODE_US for the model); warming
 * up (every read held 20 ms, none queued, so that the daemon starts the
 * threads a deep queue needs); not at all until the next signal (a share
 * whose server is gone). */
enum mode { MODE_SLOW, MODE_FAST, MODE_ZERO, MODE_WARM, MODE_STALL };
extern _Atomic enum mode mode;
extern int ncpus;

double mono_us(void);
void sleep_until_us(double t_us);
/* The same, but once half the CPUs have a thread spinning, by a timer alone:
 * for a share's many waiters (each a round trip of milliseconds, where the
 * timer's lateness of ~0.1 ms matters less than CPUs taken from the
 * programs measured) */
void sleep_until_us_relaxed(double t_us);
/* the connection settings every mode wants */
void slowdev_conn_init(struct fuse_conn_info *conn, struct fuse_config *cfg);

/* slowdev-fuse share SPEC SOURCE MOUNTPOINT [FUSE options]: serve until
 * unmounted (SPEC "rtt=US,mbps=N,client=MODEL,names=S,attrs=S,negative=S");
 * the exit status; 2 when the arguments are wrong */
int share_main(int argc, char **argv);
