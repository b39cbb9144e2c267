/* SPDX-License-Identifier: MIT */
/* warm.c: the metadata reads [0, plan->n_meta), all waited for (every open
 * and stat needs them); the warmers, beside the data: stat the plan's files
 * ahead of the fill threads, then the recorded lookup paths.  Called by the
 * orchestrator (engine.c); built on the steps (steps.h) alone. */
#pragma once

#include "replay/steps.h"

void warm_metadata(struct eng *e, struct engine_stats *st);
struct warmers;
/* n threads (at most 16); NULL when none could be had: the replay goes on. */
struct warmers *warmers_start(struct eng *e, unsigned n);
/* Wait for them; adds the lookups they made to st.  Frees w (NULL is fine). */
void warmers_join(struct warmers *w, struct engine_stats *st);
