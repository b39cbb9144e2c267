/* SPDX-License-Identifier: MIT */
/* The null fill method, for tests: the steps every method takes (files
 * opened and checked, the cache asked first, the stop polled, all counted
 * as readahead(2)'s requests would be), in plan order from one thread, and
 * nothing read: nothing to wait for either.  No name a user can give. */
#include "replay/steps.h"

#include "util/util.h"
#include "util/banned.h"

static int fill(struct eng *e, struct engine_stats *st)
{
        uint64_t cap = MAX(e->opt->readahead_cap, 4096);

        for (size_t i = e->from; i < e->to; i++) {
                const struct plan_read *pr = &e->plan->reads[i];
                if (engine_stopping(e, st, (i & 31) == 0))
                        break;
                if (engine_prepare_read(e, i, st, NULL) < 0)
                        continue;
                atomic_store(&e->issued[i], READ_ISSUED);
                st->reads += (pr->length + cap - 1) / cap;
        }
        return 0;
}

const struct fill_method fill_null = { "null", fill };
