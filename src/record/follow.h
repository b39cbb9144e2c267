/* SPDX-License-Identifier: MIT */
/* The pacer's follower (replay/follow.h) through the recorder's BPF
 * program (record/lookups.h): what `replay --pace` and `run` hand their
 * replay session. */
#pragma once

#include "replay/follow.h"

extern const struct replay_follower_ops record_follower;
