/* SPDX-License-Identifier: MIT */
/* run --auto's closed loop. */
#include "boot/run-loop.h"

#include <stdio.h>

#include "util/banned.h"

static bool replays(uint32_t m) { return m == START_REPLAY || m == START_REPLAY_RECORD; }

void run_loop_decide_again(struct run_loop *l, bool have_plan, bool *ret_turned_off)
{
        struct loop_options o;

        loop_options_for_run(&o);
        loop_decide(&o, &l->h, have_plan, NULL, &l->d);
        *ret_turned_off = l->d.mode == START_OFF && l->h.n && l->h.e[l->h.n - 1].mode != START_OFF;
}

int run_loop_decide(struct run_loop *l, const char *file, bool have_plan, bool *ret_turned_off)
{
        unsigned bad;
        int r;

        snprintf(l->path, sizeof(l->path), "%s.history", file);
        if ((r = history_load(l->path, &l->h, &bad)) < 0)
                l->h.n = 0;
        run_loop_decide_again(l, have_plan, ret_turned_off);
        return r < 0 ? r : 0;
}

void run_loop_what(const struct run_loop *l, bool stats, bool *ret_record, bool *ret_replay, bool *ret_replace)
{
        uint32_t m = l->d.mode;

        *ret_record = stats || m == START_RECORD || m == START_REPLAY_RECORD;
        *ret_replay = stats || replays(m);
        /* recorded anew because the loop found it stale: replaced */
        *ret_replace = !stats && m == START_REPLAY_RECORD;
}

void run_loop_record_instead(struct run_loop *l)
{
        l->d.mode = START_RECORD;
}

void start_replayed_of(const struct replay_result *res, struct start_replayed *ret)
{
        *ret = (struct start_replayed){ .bytes = res->st.bytes, .files = res->st.files,
                                        .changed = res->st.files_changed + res->st.files_missing,
                                        .stopped = res->st.stopped };
}

int run_loop_note(struct run_loop *l, uint64_t at_unix, uint64_t end_us, const struct start_replayed *r)
{
        struct start_entry e = { .at_unix = at_unix, .mode = l->d.mode, .total_us = end_us - l->t0, .hit = -1 };

        if (r && replays(l->d.mode))
                start_entry_replayed(&e, r);
        snprintf(e.note, sizeof(e.note), "%s", l->d.why);
        return history_append(l->path, &l->h, &e);
}
