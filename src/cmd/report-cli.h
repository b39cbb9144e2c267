/* SPDX-License-Identifier: MIT */
/* report's steps around the modules it drives, each saying itself what
 * went wrong. */
#pragma once

#include <stdbool.h>

#include "report/costmodel.h"

/* This machine's profile for the device of dir: the cached one, else (when
 * may_probe) a quick probe, cached where something tells the device apart;
 * -errno when there is none to use (a warning said where one was refused). */
int say_local_profile(const char *dir, bool may_probe, struct cost_profile *ret);
