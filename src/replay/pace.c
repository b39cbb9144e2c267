/* SPDX-License-Identifier: MIT */
#include "replay/pace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#define NONE UINT32_MAX
/* state[]: 0 never warmed, CLAIMED being warmed, else when its answer came
 * (microseconds since the start, + 1) */
#define CLAIMED UINT64_MAX
#define SKIPPED (UINT64_MAX - 1)   /* left to the start: a listing, or answered at once when recorded */
/* how far ahead of where the start is a lookup of it may move it: a path it
 * makes everywhere (a library directory) does not jump it to the end */
#define MAX_JUMP(window) (4 * (size_t)(window))
#define IDLE_WAIT_US 20000

struct pacer {
        const struct readset *rs;
        struct pace_options o;
        uint32_t *seq;            /* lookup indices, in recorded order */
        uint32_t *next_same;      /* per position: the next one of the same path, or NONE */
        uint32_t *parent;         /* per position: the last one before it of its directory, or NONE */
        uint8_t *is_parent;       /* per position: some position's parent (others wait for it) */
        uint32_t *dir_of;         /* per position: its directory's index into dir_state (NONE:
                                   * no directory, or not a failed lookup) */
        struct pace_dir {
                const char *s;    /* its path: s[0 .. len), into rs */
                uint32_t len;
                uint32_t up;      /* the directory above, where this one may not be there */
                atomic_bool missing; /* it was not (its failed lookups warm up instead) */
        } *dirs;
        _Atomic uint64_t *dir_state; /* per directory: as state[] */
        size_t n_dirs, dirs_cap;
        uint8_t *left;            /* per position: a failed lookup counted as left to the start (its
                                   * claimer's alone) */
        size_t n;
        uint32_t *slots;          /* hash of (path, listing or not): its first position, or NONE */
        size_t cap;
        _Atomic uint64_t *state;
        atomic_size_t progress;   /* positions before it are behind the start */
        _Atomic uint32_t window;  /* positions ahead kept warm now (pace_rate()) */
        _Atomic uint64_t rate_at; /* when the start's pace was last measured (since the start) */
        atomic_size_t rate_from;  /* where it was then */
        atomic_bool following;    /* progress from pace_observed(), else the clock */
        uint64_t t0;
        atomic_bool stop;
        atomic_int idle;          /* threads waiting for something to warm */
        pthread_mutex_t lock;
        pthread_cond_t cond;      /* progress moved, a directory's lookup came back, or stop */
        pthread_t *threads;
        unsigned n_threads;
        atomic_uint_fast64_t warmed, rewarmed, observed, skipped_later, dirs_warmed;
        uint64_t skipped;
        /* does the client keep a failed lookup?  Samples for and against
         * (learn_negative()) */
        atomic_int negative_kept, negative_lost;
};

/* Learnt from this many failed lookups that went to the server (took
 * LEARN_MIN_US or more): looked up again at once, one the client keeps
 * comes back as a cache hit (~10 us, under LEARN_HIT_US), one it does not,
 * in a round trip again (200 us and more on the shares measured) */
#define LEARN_SAMPLES 3
#define LEARN_MIN_US 100
#define LEARN_HIT_US 50

/* A lookup the recorded start made and went on from within this long was
 * answered from the client's cache then (primed by a listing, or repeated):
 * warming it ahead of the start would only add a round trip, and one in
 * the way of the listing that answers it.  A round trip is 200 us and more
 * on the fastest share measured (bench/share, 0.2 ms). */
#define ANSWERED_US 100

/* Was lookup l, the start's next this long after it, answered from the
 * client's cache when recorded, by what the start will have again?  Not a
 * failed lookup: a client has a failed name only from an earlier ask of
 * it, or below a directory that is not there (Encode/Encoding.pmc after
 * Encode/Alias.pmc, in a directory of a search path with no Encode/),
 * which a sped-up start may no longer have made within its lifetime;
 * warming it costs a round trip beside the start, or nothing */
static bool answered_then(const struct rs_lookup *l, uint64_t gap)
{
        return gap < ANSWERED_US && l->result >= 0;
}

static uint64_t hash_str(const char *s)
{
        uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
        for (; *s; s++)
                h = (h ^ (uint8_t)*s) * 1099511628211ULL;
        return h;
}

static bool is_listing(const struct rs_lookup *l) { return l->op == RS_LOOKUP_READDIR && l->result == 0; }

/* the slot of path as a listing or as another lookup: holding its first
 * position, or NONE (free) */
static size_t slot_of(const struct pacer *p, const char *path, bool listing)
{
        size_t i = (hash_str(path) + listing) & (p->cap - 1);
        for (; p->slots[i] != NONE; i = (i + 1) & (p->cap - 1)) {
                const struct rs_lookup *l = &p->rs->lookups[p->seq[p->slots[i]]];
                if (is_listing(l) == listing && strcmp(l->path, path) == 0)
                        break;
        }
        return i;
}

static uint64_t since_start(const struct pacer *p) { return now_us() - p->t0; }

/* For each lookup, the time until its process's next one (UINT64_MAX for
 * the last): how long the recorded start waited for it, at most. */
static int time_to_next(const struct readset *rs, uint64_t *gap)
{
        struct { uint32_t pid; size_t last; } *t;
        size_t cap = 64;

        while (cap < rs->n_lookups * 2)
                cap *= 2;
        t = calloc(cap, sizeof(*t));
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                size_t h = ((size_t)l->pid * 0x9e3779b97f4a7c15ULL) & (cap - 1);
                gap[i] = UINT64_MAX;
                while (t[h].pid && t[h].pid != l->pid + 1)
                        h = (h + 1) & (cap - 1);
                if (t[h].pid) {
                        const struct rs_lookup *prev = &rs->lookups[t[h].last];
                        gap[t[h].last] = l->time_us - prev->time_us;
                }
                t[h].pid = l->pid + 1;
                t[h].last = i;
        }
        free(t);
        return 0;
}

int pace_worth(const struct readset *rs, bool *worth)
{
        _cleanup_free_ uint64_t *gap = malloc((rs->n_lookups ? rs->n_lookups : 1) * sizeof(*gap));

        if (!gap || time_to_next(rs, gap) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_lookups; i++)
                worth[i] = !is_listing(&rs->lookups[i]) && !answered_then(&rs->lookups[i], gap[i]);
        return 0;
}

/* The last position so far of path's directory looked up (not listed), or
 * NONE: warming path waits for that lookup while it is in flight. */
static uint32_t parent_position(const struct pacer *p, const char *path, const uint32_t *last)
{
        const char *slash = strrchr(path, '/');
        char *dir;
        size_t s;

        if (!slash || slash == path)
                return NONE;
        dir = strndup(path, (size_t)(slash - path));
        if (!dir)
                return NONE;    /* only a hint */
        s = slot_of(p, dir, false);
        free(dir);
        return p->slots[s] == NONE ? NONE : last[s];
}

/* Directories as prefixes of recorded paths, for index_directories(). */
struct prefix {
        const char *s;
        uint32_t len;
        bool exists;              /* the recording found a path through it */
        uint32_t dir;             /* its index into dirs, or NONE */
};

struct prefixes {
        struct prefix *e;
        size_t cap, n;
};

/* The slot of s[0 .. len): holding it, or free (s NULL) */
static struct prefix *prefix_slot(const struct prefixes *t, const char *s, size_t len)
{
        uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
        size_t k;

        for (size_t j = 0; j < len; j++)
                h = (h ^ (uint8_t)s[j]) * 1099511628211ULL;
        for (k = h & (t->cap - 1); t->e[k].s; k = (k + 1) & (t->cap - 1))
                if (t->e[k].len == len && memcmp(t->e[k].s, s, len) == 0)
                        break;
        return &t->e[k];
}

/* s[0 .. len) in t (added when new), or NULL: -ENOMEM */
static struct prefix *prefix_add(struct prefixes *t, const char *s, size_t len)
{
        struct prefix *x;

        if ((t->n + 1) * 2 > t->cap) {
                struct prefixes g = { calloc(t->cap ? t->cap * 2 : 256, sizeof(*g.e)), t->cap ? t->cap * 2 : 256, 0 };
                if (!g.e)
                        return NULL;
                for (size_t i = 0; i < t->cap; i++)
                        if (t->e[i].s)
                                *prefix_slot(&g, t->e[i].s, t->e[i].len) = t->e[i];
                g.n = t->n;
                free(t->e);
                *t = g;
        }
        x = prefix_slot(t, s, len);
        if (!x->s) {
                *x = (struct prefix){ s, (uint32_t)len, false, NONE };
                t->n++;
        }
        return x;
}

/* The directory s[0 .. len) warmed for failed lookups below it, with those
 * above it that may not be there either (where the recording did not see
 * it exist), made when new: its index, or NONE (-ENOMEM in *r). */
static uint32_t directory(struct pacer *p, struct prefixes *t, const char *s, size_t len, int *r)
{
        uint32_t first = NONE, below = NONE;

        while (len > 0) {
                struct prefix *x = prefix_add(t, s, len);
                const char *up;
                uint32_t d;
                if (!x || grow_array(&p->dirs, &p->dirs_cap, p->n_dirs + 1, sizeof(*p->dirs)) < 0) {
                        *r = -ENOMEM;
                        return NONE;
                }
                d = x->dir;
                if (d == NONE) {
                        d = x->dir = (uint32_t)p->n_dirs++;
                        p->dirs[d] = (struct pace_dir){ x->s, x->len, NONE, false };
                }
                if (below != NONE)
                        p->dirs[below].up = d;
                else
                        first = d;
                /* known to be there, or linked up already */
                if (x->exists || p->dirs[d].up != NONE)
                        break;
                up = memrchr(s, '/', len);
                if (!up || up == s)
                        break;
                below = d;
                len = (size_t)(up - s);
        }
        return first;
}

/* For each failed lookup of the sequence, the directory warmed for it
 * where the client keeps no failed lookup (warm_directory()): its own, the
 * same index for the same directory.  -ENOMEM. */
static int index_directories(struct pacer *p)
{
        const struct readset *rs = p->rs;
        struct prefixes t = {};
        int r = 0;

        p->dir_of = malloc((p->n ? p->n : 1) * sizeof(*p->dir_of));
        p->left = calloc(p->n ? p->n : 1, 1);
        if (!p->dir_of || !p->left)
                return -ENOMEM;
        /* the directories the recording saw exist */
        for (size_t i = 0; i < rs->n_lookups && r >= 0; i++) {
                const char *path = rs->lookups[i].path;
                if (rs->lookups[i].result < 0 || path[0] != '/')
                        continue;
                for (const char *c = strchr(path + 1, '/'); c; c = strchr(c + 1, '/')) {
                        struct prefix *x = prefix_add(&t, path, (size_t)(c - path));
                        if (!x) {
                                r = -ENOMEM;
                                break;
                        }
                        x->exists = true;
                }
        }
        for (size_t i = 0; i < p->n && r >= 0; i++) {
                const char *path = rs->lookups[p->seq[i]].path, *c = strrchr(path, '/');
                p->dir_of[i] = NONE;
                if (rs->lookups[p->seq[i]].result < 0 && c && c > path)
                        p->dir_of[i] = directory(p, &t, path, (size_t)(c - path), &r);
        }
        free(t.e);
        if (r < 0)
                return r;
        p->dir_state = calloc(p->n_dirs ? p->n_dirs : 1, sizeof(*p->dir_state));
        return p->dir_state ? 0 : -ENOMEM;
}

static int build(struct pacer *p)
{
        const struct readset *rs = p->rs;
        _cleanup_free_ uint32_t *last = NULL;  /* per slot: the path's last position */
        _cleanup_free_ uint64_t *gap = NULL;   /* per lookup: until its process's next one */
        size_t want = 0;

        for (size_t i = 0; i < rs->n_lookups; i++)
                want += rs->lookups[i].path[0] == '/' && (!p->o.wanted || p->o.wanted(p->o.wanted_userdata, i));
        if (want == 0)
                return 0;
        gap = malloc(rs->n_lookups * sizeof(*gap));
        if (!gap || time_to_next(rs, gap) < 0)
                return -ENOMEM;
        for (p->cap = 16; p->cap < want * 2; p->cap *= 2)
                ;
        p->seq = malloc(want * sizeof(*p->seq));
        p->next_same = malloc(want * sizeof(*p->next_same));
        p->parent = malloc(want * sizeof(*p->parent));
        p->is_parent = calloc(want, sizeof(*p->is_parent));
        p->slots = malloc(p->cap * sizeof(*p->slots));
        last = malloc(p->cap * sizeof(*last));
        if (!p->seq || !p->next_same || !p->parent || !p->is_parent || !p->slots || !last)
                return -ENOMEM;
        memset(p->slots, 0xff, p->cap * sizeof(*p->slots));
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                size_t s;

                if (l->path[0] != '/' || (p->o.wanted && !p->o.wanted(p->o.wanted_userdata, i)))
                        continue;
                p->seq[p->n] = (uint32_t)i;     /* so that slot_of() can compare with it */
                s = slot_of(p, l->path, is_listing(l));
                if (p->slots[s] != NONE) {
                        uint32_t prev = last[s];
                        /* one warming serves every use within a lifetime */
                        if (l->time_us - rs->lookups[p->seq[prev]].time_us < p->o.lifetime_us)
                                continue;
                        p->next_same[prev] = (uint32_t)p->n;
                } else
                        p->slots[s] = (uint32_t)p->n;
                last[s] = (uint32_t)p->n;
                p->parent[p->n] = parent_position(p, l->path, last);
                if (p->parent[p->n] != NONE)
                        p->is_parent[p->parent[p->n]] = 1;
                p->next_same[p->n++] = NONE;
        }
        p->state = calloc(p->n, sizeof(*p->state));
        if (!p->state || index_directories(p) < 0)
                return -ENOMEM;
        /* listings are not warmed: no client here keeps one (NFS's
         * directory cache aside), so the start's own costs its round trip
         * anyway, and one made beside it slows it */
        for (size_t i = 0; i < p->n; i++)
                if (is_listing(&rs->lookups[p->seq[i]]) || answered_then(&rs->lookups[p->seq[i]], gap[p->seq[i]])) {
                        p->state[i] = SKIPPED;
                        p->skipped++;
                }
        return 0;
}

/* 1 kept, 0 not, -1 not known yet */
static int negatives_kept(struct pacer *p)
{
        int yes = atomic_load(&p->negative_kept), no = atomic_load(&p->negative_lost);
        return yes + no < LEARN_SAMPLES ? -1 : yes > no;
}

/* Where the start is: observed, or by the recorded timeline. */
static size_t where(struct pacer *p)
{
        size_t lo = 0, hi = p->n;
        uint64_t t;

        if (atomic_load(&p->following))
                return atomic_load(&p->progress);
        t = since_start(p);
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (p->rs->lookups[p->seq[mid]].time_us <= t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

void pace_follow(struct pacer *p)
{
        /* from the start: the clock's guess could only be wrong ahead of it
         * (where it would stay), and the start's lookups soon say where it is */
        atomic_store(&p->following, true);
}

/* Until when an answer that came at s (state[]'s clock) is fresh enough to
 * leave: half its lifetime */
static uint64_t fresh_until(const struct pacer *p, uint64_t s) { return s + p->o.lifetime_us / 2; }

/* When the answer of a stat that began at t0_us (now_us()) came, on
 * state[]'s clock: now, where it went to the server; where the client
 * answered it at once (under LEARN_HIT_US), it had the answer from
 * someone else's ask, of an age not known (the replay's, the start's, a
 * failed lookup's missing directory asked for another name below it):
 * taken as old enough to be asked again in an eighth of a lifetime, so
 * that the pacer, not the start, is the one that finds it expired */
static uint64_t answered(const struct pacer *p, uint64_t t0_us)
{
        uint64_t now = since_start(p) + 1, age = p->o.lifetime_us / 2 - p->o.lifetime_us / 8;

        if (now_us() - t0_us >= LEARN_HIT_US)
                return now;
        return now > age ? now - age : 1;
}

/* Was position prev, behind the start at at, made recently: within a
 * window behind it, or warmed less than a lifetime ago? */
static bool recently(struct pacer *p, uint32_t prev, size_t at)
{
        uint64_t s = atomic_load(&p->state[prev]);

        if (at - prev <= p->o.window)
                return true;
        return s != 0 && s != CLAIMED && s != SKIPPED && since_start(p) + 1 < s + p->o.lifetime_us;
}

/* The window from the start's pace: as many positions as it goes through
 * in half a lifetime, so that what is warmed for it is still kept when it
 * gets there (a start that makes a lookup every 2 ms, 512 warmed ahead,
 * reaches the last of them a second later, when a client that keeps an
 * answer a second has let the first go), between WINDOW_MIN and the
 * window asked for, its pace measured over RATE_PERIOD_US at least. */
#define RATE_PERIOD_US 200000
#define WINDOW_MIN 16

static void pace_rate(struct pacer *p)
{
        uint64_t now = since_start(p), then = atomic_load(&p->rate_at);
        size_t at, from;
        double per_s, w;

        if (now < then + RATE_PERIOD_US || !atomic_compare_exchange_strong(&p->rate_at, &then, now))
                return;         /* (one caller measures) */
        at = atomic_load(&p->progress);
        from = atomic_exchange(&p->rate_from, at);
        per_s = (double)(at - MIN(from, at)) * 1e6 / (double)(now - then);
        w = per_s * (double)p->o.lifetime_us / 2e6;
        atomic_store(&p->window, (uint32_t)MIN(MAX(w, (double)WINDOW_MIN), (double)p->o.window));
}

bool pace_observed(struct pacer *p, const char *path, bool listing)
{
        size_t at, s;
        uint32_t pos, prev = NONE;

        if (!p || !p->n || path[0] != '/')
                return false;
        at = atomic_load(&p->progress);
        s = slot_of(p, path, listing);
        for (pos = p->slots[s]; pos != NONE && pos < at; pos = p->next_same[pos])
                prev = pos;
        if (pos == NONE || pos >= at + MAX_JUMP(p->o.window))
                return false;
        /* a path the start already made not long ago: it makes it again
         * where the recorded start had it answered from the client's cache
         * (a directory stat'ed before every file), not at the position
         * the recording has for it once that answer expired: no sign of
         * where the start is */
        if (prev != NONE && recently(p, prev, at))
                return true;
        atomic_fetch_add(&p->observed, 1);
        /* only ever forward (several processes of the start report at once) */
        while (at < (size_t)pos + 1 && !atomic_compare_exchange_weak(&p->progress, &at, (size_t)pos + 1))
                ;
        pace_rate(p);
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        return true;
}

bool pace_finished(struct pacer *p)
{
        if (!p || !p->n)
                return true;
        if (atomic_load(&p->following))
                return atomic_load(&p->progress) >= p->n;
        return since_start(p) > p->rs->lookups[p->seq[p->n - 1]].time_us + p->o.lifetime_us;
}

/* Claim the first position ahead of the start that was never warmed or
 * whose answer has expired; else say when the next one expires. */
static bool pick(struct pacer *p, size_t *ret, bool *again, uint64_t *next_expiry)
{
        size_t from = where(p), to = MIN(p->n, from + atomic_load(&p->window));
        uint64_t now = since_start(p) + 1;

        *next_expiry = UINT64_MAX;
        for (size_t i = from; i < to; i++) {
                uint64_t s = atomic_load(&p->state[i]), expires;
                if (s == CLAIMED || s == SKIPPED)
                        continue;
                /* its directory's lookup in flight: it would only wait
                 * for that one, where a lookup further on (in the next
                 * directory, that directory itself) goes to the server
                 * beside it */
                if (p->parent[i] != NONE && atomic_load(&p->state[p->parent[i]]) == CLAIMED)
                        continue;
                /* warmed again once half its lifetime is gone: the start
                 * may be half a lifetime from it (the window, pace_rate()),
                 * and an answer warmed again only once it had expired
                 * expired for a start just getting there (perl looking
                 * for a module in a directory warmed 0.95 s before, on a
                 * client keeping it a second).  A lookup repeated by the
                 * start after its lifetime has a position of its own: no
                 * need to hold this one past it */
                expires = fresh_until(p, s);
                if (s != 0 && now < expires) {
                        *next_expiry = MIN(*next_expiry, expires);
                        continue;
                }
                if (atomic_compare_exchange_strong(&p->state[i], &s, CLAIMED)) {
                        *ret = i;
                        *again = s != 0;
                        return true;
                }
        }
        return false;
}

/* The failed lookup of path just took first_us (>= LEARN_MIN_US: it went to
 * the server, its directories' names perhaps too): twice again, to see
 * whether the client kept it.  Kept, both come back as cache hits; not,
 * both wait a round trip again; anything between is no sample. */
static void learn_negative(struct pacer *p, const char *path, uint64_t first_us)
{
        uint64_t t[2];

        if (first_us < LEARN_MIN_US || negatives_kept(p) >= 0)
                return;
        for (int k = 0; k < 2; k++) {
                struct stat st;
                uint64_t t0 = now_us();
                if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return;         /* it exists now: no sample */
                t[k] = now_us() - t0;
        }
        if (MAX(t[0], t[1]) < LEARN_HIT_US)
                atomic_fetch_add(&p->negative_kept, 1);
        else if (MIN(t[0], t[1]) >= LEARN_HIT_US)
                atomic_fetch_add(&p->negative_lost, 1);
}

/* A failed lookup the client does not keep: the start pays its round trip
 * whatever was done before, but not those of the directories it walks
 * through, once their names have expired (a search path's directories,
 * where a module is looked for before it is found): those are warmed, one
 * stat of its directory a lifetime for every failed lookup there.  When
 * its answer came (state[]'s clock). */
static uint64_t warm_directory(struct pacer *p, size_t i)
{
        uint32_t d = p->dir_of[i];
        _Atomic uint64_t *state;
        uint64_t s, t, now = since_start(p) + 1;
        struct stat st;
        char *dir;
        int e = 0;

        /* a directory found missing: the one above, where the walk stops */
        while (atomic_load(&p->dirs[d].missing) && p->dirs[d].up != NONE)
                d = p->dirs[d].up;
        state = &p->dir_state[d];
        s = atomic_load(state);
        /* warmed not long ago (this one's answer expires with it), or
         * being warmed: served by that */
        if (s != 0 && s != CLAIMED && now < fresh_until(p, s))
                return s;
        if (s == CLAIMED || !atomic_compare_exchange_strong(state, &s, CLAIMED))
                return now;
        dir = strndup(p->dirs[d].s, p->dirs[d].len);
        t = now_us();
        if (dir) {
                if (fstatat(AT_FDCWD, dir, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        e = errno;
                free(dir);
                atomic_fetch_add(&p->dirs_warmed, 1);
        }
        /* not there: once asked, the walk of the directory above is what
         * is kept warm for it (a missing name asked beside the start's
         * own ask of it makes the start wait for both) */
        if (e == ENOENT || e == ENOTDIR)
                atomic_store(&p->dirs[d].missing, true);
        now = answered(p, t);
        atomic_store(state, dir ? now : 0);
        return now;
}

/* Warm position i (claimed). */
static void warm(struct pacer *p, size_t i, bool again)
{
        const struct rs_lookup *l = &p->rs->lookups[p->seq[i]];
        struct stat st;
        uint64_t t = now_us();

        if (p->dir_of[i] != NONE && negatives_kept(p) == 0) {
                atomic_store(&p->state[i], warm_directory(p, i));
                /* left to the start from now on (warmed before that was
                 * known, or not) */
                if (!p->left[i]) {
                        p->left[i] = 1;
                        atomic_fetch_add(&p->skipped_later, 1);
                }
                return;
        }
        if (fstatat(AT_FDCWD, l->path, &st, AT_SYMLINK_NOFOLLOW) < 0 && l->result < 0)
                learn_negative(p, l->path, now_us() - t);
        atomic_store(&p->state[i], answered(p, t));
        atomic_fetch_add(&p->warmed, 1);
        if (again)
                atomic_fetch_add(&p->rewarmed, 1);
        /* what waited for this directory can go now (a thread going to
         * wait counts itself idle before it looks: either it sees this
         * answer, or it is woken) */
        if (p->is_parent[i] && atomic_load(&p->idle) > 0) {
                pthread_mutex_lock(&p->lock);
                pthread_cond_broadcast(&p->cond);
                pthread_mutex_unlock(&p->lock);
        }
}

static void *pace_main(void *arg)
{
        struct pacer *p = arg;

        while (!atomic_load(&p->stop)) {
                uint64_t next_expiry, wait = IDLE_WAIT_US, now;
                struct timespec ts;
                size_t i;
                bool again, picked;

                if (pick(p, &i, &again, &next_expiry)) {
                        warm(p, i, again);
                        continue;
                }
                /* nothing to do until the start moves, a directory's lookup
                 * comes back or an answer expires */
                pthread_mutex_lock(&p->lock);
                atomic_fetch_add(&p->idle, 1);
                picked = pick(p, &i, &again, &next_expiry);
                if (!picked && !atomic_load(&p->stop)) {
                        now = since_start(p) + 1;
                        if (next_expiry != UINT64_MAX && next_expiry > now)
                                wait = MIN(wait, next_expiry - now);
                        clock_gettime(CLOCK_REALTIME, &ts);
                        ts.tv_nsec += (long)(wait % 1000000) * 1000;
                        ts.tv_sec += (time_t)(wait / 1000000) + ts.tv_nsec / 1000000000;
                        ts.tv_nsec %= 1000000000;
                        (void)pthread_cond_timedwait(&p->cond, &p->lock, &ts);
                }
                atomic_fetch_sub(&p->idle, 1);
                pthread_mutex_unlock(&p->lock);
                if (picked)
                        warm(p, i, again);
        }
        return NULL;
}

static void pacer_free(struct pacer *p)
{
        if (!p)
                return;
        free(p->seq);
        free(p->next_same);
        free(p->parent);
        free(p->is_parent);
        free(p->dir_of);
        free(p->left);
        free(p->dirs);
        free((void *)p->dir_state);
        free(p->slots);
        free(p->state);
        free(p->threads);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->cond);
        free(p);
}

int pace_start(const struct readset *rs, const struct pace_options *o, struct pacer **ret)
{
        struct pacer *p = calloc(1, sizeof(*p));
        pthread_attr_t attr;
        int r;

        *ret = NULL;
        if (!p)
                return -ENOMEM;
        p->rs = rs;
        p->o = *o;
        if (!p->o.threads)
                p->o.threads = PACE_DEFAULT_THREADS;
        if (!p->o.window)
                p->o.window = PACE_DEFAULT_WINDOW;
        if (!p->o.lifetime_us)
                p->o.lifetime_us = PACE_DEFAULT_LIFETIME_US;
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
        r = build(p);
        if (r < 0 || p->n - p->skipped < PACE_MIN) {
                pacer_free(p);
                return r;
        }
        p->threads = calloc(p->o.threads, sizeof(*p->threads));
        if (!p->threads) {
                pacer_free(p);
                return -ENOMEM;
        }
        if (o->negatives != PACE_NEGATIVES_LEARN)
                atomic_store(o->negatives == PACE_NEGATIVES_KEPT ? &p->negative_kept : &p->negative_lost,
                             LEARN_SAMPLES);
        p->t0 = now_us();
        atomic_store(&p->window, p->o.window);
        atomic_store(&p->following, o->follow);
        pthread_attr_init(&attr);
        (void)pthread_attr_setstacksize(&attr, 256 << 10);   /* they only stat */
        for (unsigned i = 0; i < p->o.threads; i++) {
                if (pthread_create(&p->threads[p->n_threads], &attr, pace_main, p) != 0)
                        break;
                p->n_threads++;
        }
        pthread_attr_destroy(&attr);
        if (p->n_threads == 0) {
                pacer_free(p);
                return -EAGAIN;
        }
        *ret = p;
        return 0;
}

static bool wanted_mask(void *userdata, size_t i) { return ((const bool *)userdata)[i]; }

int pace_count(const struct readset *rs, const bool *wanted, size_t *ret)
{
        struct pacer *p = calloc(1, sizeof(*p));
        int r;

        *ret = 0;
        if (!p)
                return -ENOMEM;
        p->rs = rs;
        p->o = (struct pace_options){ .lifetime_us = PACE_DEFAULT_LIFETIME_US, .wanted = wanted ? wanted_mask : NULL,
                                      .wanted_userdata = (void *)wanted };
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
        r = build(p);
        if (r >= 0)
                *ret = p->n - p->skipped;
        pacer_free(p);
        return r < 0 ? r : 0;
}

void pace_snapshot(struct pacer *p, struct pace_stats *ret)
{
        *ret = (struct pace_stats){ .sequence = p->n, .warmed = atomic_load(&p->warmed),
                                    .rewarmed = atomic_load(&p->rewarmed), .observed = atomic_load(&p->observed),
                                    .reached = where(p), .skipped = p->skipped + atomic_load(&p->skipped_later),
                                    .dirs_warmed = atomic_load(&p->dirs_warmed),
                                    .negatives_kept = negatives_kept(p) };
}

void pace_stop(struct pacer *p, struct pace_stats *ret)
{
        if (ret)
                *ret = (struct pace_stats){ 0 };
        if (!p)
                return;
        atomic_store(&p->stop, true);
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        for (unsigned i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        if (ret)
                pace_snapshot(p, ret);
        pacer_free(p);
}
