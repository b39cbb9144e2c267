/* SPDX-License-Identifier: MIT */
/* What the unit tests of a share's costs share: a share profile of a
 * client model and an empty read set whose lookups were traced. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "model/readset.h"
#include "report/costmodel.h"
#include "tests.h"

#define MS 1000u
#define S 1000000u

/* A share at lat_us a round trip (an open and a stat: two) whose client
 * is the model named. */
static inline struct cost_profile test_share(const char *client, double lat_us)
{
        struct cost_profile p = { .lat_us = lat_us, .seq_bps = 100e6, .remote = true, .open_stat_us = 2 * lat_us };

        snprintf(p.name, sizeof(p.name), "test-%s", client);
        CHECK_EQ(cost_client_by_name(client, &p.client), 0);
        return p;
}

static inline struct readset *test_lookups_readset(void)
{
        struct readset *rs = readset_new();

        CHECK(rs != NULL);
        if (!rs)
                exit(1);
        rs->rec_flags = RS_REC_LOOKUPS;
        return rs;
}
