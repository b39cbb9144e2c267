/* SPDX-License-Identifier: MIT */
#include "util/signals.h"

#include "util/util.h"
#include "util/banned.h"

void signals_install(const int *sigs, size_t n, struct sigaction *sa, bool unless_ignored)
{
        struct sigaction old;

        sigemptyset(&sa->sa_mask);
        for (size_t i = 0; i < n; i++)
                if (!unless_ignored || (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN))
                        (void)sigaction(sigs[i], sa, NULL);
}

void signals_ignore(int sig)
{
        struct sigaction ign = { .sa_handler = SIG_IGN };

        signals_install(&sig, 1, &ign, false);
}

static volatile sig_atomic_t *stop_flag;

static void on_stop(int sig)
{
        (void)sig;
        if (stop_flag)
                *stop_flag = 1;
}

void signals_stop_on(volatile sig_atomic_t *flag)
{
        static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
        struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART | SA_RESETHAND };

        stop_flag = flag;
        signals_install(stops, ARRAY_SIZE(stops), &sa, false);
}
