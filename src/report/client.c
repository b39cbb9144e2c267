/* SPDX-License-Identifier: MIT */
#include "report/client.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/pace.h"
#include "util/util.h"
#include "util/banned.h"

#define NONE UINT32_MAX

/* A name on the share (a component below its root, or the root itself)
 * and what the client holds of it, in seconds on the start's clock
 * (-INFINITY: nothing).  Keyed by its parent and its own name: a path's
 * names cost what the path is long, not its square. */
struct entry {
        const char *name;         /* into a lookup's path (the root: the caller's root) */
        uint32_t len;
        uint32_t parent, first_child, next_sibling;
        uint32_t entries;         /* children that exist: what a listing of it brings */
        bool dir;
        bool exists;              /* a lookup found it, or walked through it */
        double name_until, attr_until, neg_until;
        double listed_at;         /* when it was last listed (-INFINITY: not yet) */
};

struct names {
        struct entry *e;
        size_t n, cap;
        uint32_t *slots;          /* open addressing: index into e, or NONE */
        size_t n_slots;
        /* each lookup's names, from the root down (the last is the name
         * looked up): comps[off[i] .. off[i + 1]); on the share or not */
        uint32_t *comps;
        size_t n_comps, cap_comps;
        size_t *off;
};

static uint64_t hash_name(uint32_t parent, const char *s, size_t len)
{
        uint64_t h = 1469598103934665603ULL ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ULL);   /* FNV-1a */
        for (size_t i = 0; i < len; i++)
                h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
        return h;
}

static int grow_slots(struct names *t)
{
        size_t cap = t->n_slots ? t->n_slots * 2 : 1024;
        uint32_t *s = malloc(cap * sizeof(*s));

        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < cap; i++)
                s[i] = NONE;
        for (size_t i = 0; i < t->n; i++) {
                size_t k = hash_name(t->e[i].parent, t->e[i].name, t->e[i].len) & (cap - 1);
                while (s[k] != NONE)
                        k = (k + 1) & (cap - 1);
                s[k] = (uint32_t)i;
        }
        free(t->slots);
        t->slots = s;
        t->n_slots = cap;
        return 0;
}

/* The entry of name[0 .. len) below parent (made when new). */
static int intern(struct names *t, uint32_t parent, const char *name, size_t len, uint32_t *ret)
{
        size_t k;

        if ((t->n + 1) * 2 > t->n_slots && grow_slots(t) < 0)
                return -ENOMEM;
        if (t->n >= NONE - 1 || len > UINT32_MAX)
                return -E2BIG;
        k = hash_name(parent, name, len) & (t->n_slots - 1);
        for (; t->slots[k] != NONE; k = (k + 1) & (t->n_slots - 1)) {
                const struct entry *x = &t->e[t->slots[k]];
                if (x->parent == parent && x->len == len && memcmp(x->name, name, len) == 0) {
                        *ret = t->slots[k];
                        return 0;
                }
        }
        if (grow_array(&t->e, &t->cap, t->n + 1, sizeof(*t->e)) < 0)
                return -ENOMEM;
        t->e[t->n] = (struct entry){ .name = name, .len = (uint32_t)len, .parent = parent, .first_child = NONE,
                                     .next_sibling = NONE, .name_until = -INFINITY, .attr_until = -INFINITY,
                                     .neg_until = -INFINITY, .listed_at = -INFINITY };
        if (parent != NONE) {
                struct entry *pe = &t->e[parent];
                pe->dir = true;
                t->e[t->n].next_sibling = pe->first_child;
                pe->first_child = (uint32_t)t->n;
        }
        t->slots[k] = (uint32_t)t->n;
        *ret = (uint32_t)t->n++;
        return 0;
}

static void names_free(struct names *t)
{
        free(t->e);
        free(t->slots);
        free(t->comps);
        free(t->off);
}

/* The path of entry i into buf: false when it does not fit. */
static bool entry_path(const struct names *t, uint32_t i, char *buf, size_t size)
{
        size_t len = 0;

        for (uint32_t x = i; x != NONE; x = t->e[x].parent)
                len += t->e[x].len + (t->e[x].parent != NONE);
        if (len + 1 > size)
                return false;
        buf[len] = 0;
        for (uint32_t x = i; x != NONE; x = t->e[x].parent) {
                len -= t->e[x].len;
                memcpy(buf + len, t->e[x].name, t->e[x].len);
                if (t->e[x].parent != NONE)
                        buf[--len] = '/';
        }
        return true;
}

static bool has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool client_on_share(const char *root, const char *path)
{
        static const char *const pseudo[] = { "/proc", "/sys", "/dev", "/run" };
        size_t n = strlen(root);

        if (path[0] != '/')
                return false;
        while (n > 0 && root[n - 1] == '/')
                n--;
        /* (a share is never one of those, but may be mounted below /run:
         * /run/media, /run/user) */
        for (size_t i = 0; i < ARRAY_SIZE(pseudo) && n == 0; i++)
                if (has_prefix(path, pseudo[i]) && (path[strlen(pseudo[i])] == '/' || !path[strlen(pseudo[i])]))
                        return false;
        return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* Every lookup's names below root, from root down ("." dropped; ".."
 * kept as a name: the recorder makes paths absolute, it does not resolve
 * them). */
static int names_build(struct names *t, const struct readset *rs, const char *root,
                       const struct client_exists *ex)
{
        size_t rlen = strlen(root);
        uint32_t top;
        int e;

        while (rlen > 0 && root[rlen - 1] == '/')
                rlen--;
        t->off = malloc((rs->n_lookups + 1) * sizeof(*t->off));
        if (!t->off)
                return -ENOMEM;
        /* the root is always there: a mount point's name is pinned */
        e = intern(t, NONE, root, rlen, &top);
        if (e < 0)
                return e;
        t->e[top].name_until = t->e[top].attr_until = INFINITY;
        t->e[top].dir = t->e[top].exists = true;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const char *p = rs->lookups[i].path;
                uint32_t at = top;

                t->off[i] = t->n_comps;
                if (!client_on_share(root, p))
                        continue;
                if (grow_array(&t->comps, &t->cap_comps, t->n_comps + 1, sizeof(*t->comps)) < 0)
                        return -ENOMEM;
                t->comps[t->n_comps++] = top;
                for (const char *c = p + rlen; *c;) {
                        size_t k;
                        uint32_t id;
                        while (*c == '/')
                                c++;
                        k = strcspn(c, "/");
                        if (k == 0 || (k == 1 && c[0] == '.')) {
                                c += k;
                                continue;
                        }
                        e = intern(t, at, c, k, &id);
                        if (e < 0)
                                return e;
                        if (grow_array(&t->comps, &t->cap_comps, t->n_comps + 1, sizeof(*t->comps)) < 0)
                                return -ENOMEM;
                        t->comps[t->n_comps++] = at = id;
                        c += k;
                }
                if (rs->lookups[i].op == RS_LOOKUP_READDIR && rs->lookups[i].result == 0)
                        t->e[at].dir = true;
                /* a lookup that succeeded found every name of its path */
                for (size_t j = t->off[i]; j < t->n_comps && rs->lookups[i].result >= 0; j++)
                        t->e[t->comps[j]].exists = true;
        }
        t->off[rs->n_lookups] = t->n_comps;
        /* a directory no lookup found may still be there (every module
         * looked for in it missing): asked where the caller can, of one
         * whose parent is known to be there (parents come first) */
        for (size_t i = 1, asked = 0; ex && ex->fn && i < t->n && asked < CLIENT_MAX_EXISTS; i++) {
                char path[PATH_MAX];
                if (t->e[i].exists || t->e[i].first_child == NONE || !t->e[t->e[i].parent].exists ||
                    !entry_path(t, (uint32_t)i, path, sizeof(path)))
                        continue;
                t->e[i].exists = ex->fn(ex->userdata, path);
                asked++;
        }
        for (size_t i = 1; i < t->n; i++)
                t->e[t->e[i].parent].entries += t->e[i].exists;
        return 0;
}

/* Nothing known but the root (the mount's, asked when it was mounted): each
 * pass starts from here. */
static void names_reset(struct names *t)
{
        for (size_t i = 1; i < t->n; i++) {
                t->e[i].name_until = t->e[i].attr_until = t->e[i].neg_until = -INFINITY;
                t->e[i].listed_at = -INFINITY;
        }
        t->e[0].listed_at = -INFINITY;
}

/* A listing's round trips: its entries (those the start found there: a
 * lower bound) in chunks. */
static uint64_t listing_trips(const struct names *t, uint32_t dir, const struct cost_client *c)
{
        uint64_t bytes = (uint64_t)t->e[dir].entries * (c->listing_attrs ? CLIENT_ENTRY_ATTR_BYTES : CLIENT_ENTRY_BYTES);
        return MAX(1u, (bytes + CLIENT_LISTING_CHUNK - 1) / CLIENT_LISTING_CHUNK);
}

struct clock {
        double t, rtt;
        struct client_cost *c;
        uint32_t trips;
        bool concurrent;          /* lookups made at once: a listing answers none of them */
};

static void ask(struct clock *k, enum client_ask what, uint64_t n)
{
        k->c->trips[what] += n;
        k->c->round_trips += n;
        k->trips += (uint32_t)MIN(n, (uint64_t)UINT32_MAX - k->trips);
        k->t += k->rtt * (double)n;
}

static double attrs_for(const struct entry *e, const struct cost_client *c)
{
        return e->dir ? c->dir_attrs_s : c->file_attrs_s;
}

/* Until when the client holds e's name and attributes: from its own
 * lookup, or from its directory's last listing where listings bring them
 * (an entry that is there). */
static double name_held(const struct names *t, const struct entry *e, const struct cost_client *c)
{
        double until = e->name_until;
        if (c->listing_attrs && e->exists && e->parent != NONE)
                until = MAX(until, t->e[e->parent].listed_at + c->names_s);
        return until;
}

static double attrs_held(const struct names *t, const struct entry *e, const struct cost_client *c)
{
        double until = e->attr_until;
        if (c->listing_attrs && e->exists && e->parent != NONE)
                until = MAX(until, t->e[e->parent].listed_at + attrs_for(e, c));
        return until;
}

/* The name e is walked through, or looked up: asked when the client no
 * longer holds it (a lookup brings its attributes). */
static void walk(const struct names *t, struct clock *k, struct entry *e, const struct cost_client *c)
{
        if (name_held(t, e, c) >= k->t)
                return;
        ask(k, CLIENT_NAME, 1);
        e->name_until = k->t + c->names_s;
        e->attr_until = k->t + attrs_for(e, c);
        e->neg_until = -INFINITY;
}

/* What the client asks of a found name whatever it holds: an open of a
 * file (close-to-open; a directory's open asks nothing, its listing
 * does), a listing, a readlink, access(2) where it asks the server.  True
 * when the lookup is one of those. */
static bool ask_always(const struct names *t, const struct rs_lookup *l, uint32_t last,
                       const struct cost_client *c, struct clock *k)
{
        switch (l->op) {
        case RS_LOOKUP_ACCESS:
                if (c->access_cached)
                        return false;   /* a stat */
                ask(k, CLIENT_ACCESS, 1);
                return true;
        case RS_LOOKUP_READLINK:
                ask(k, CLIENT_READLINK, 1);
                return true;
        case RS_LOOKUP_OPEN:
        case RS_LOOKUP_EXEC:
                if (!t->e[last].dir)
                        ask(k, CLIENT_OPEN, 1);
                return true;
        case RS_LOOKUP_READDIR:
                ask(k, CLIENT_LISTING, listing_trips(t, last, c));
                return true;
        }
        return false;
}

/* One recorded lookup through the client's caches at clock k->t. */
static void one_lookup(struct names *t, const struct rs_lookup *l, const uint32_t *comps, size_t n,
                       const struct cost_client *c, struct clock *k)
{
        struct entry *f = &t->e[comps[n - 1]];

        if (l->result == -ENOENT)
                /* it fails at the first name never found (a directory
                 * missing from a search path fails every module there) */
                for (size_t j = 0; j < n; j++)
                        if (!t->e[comps[j]].exists) {
                                f = &t->e[comps[j]];
                                n = j + 1;
                                break;
                        }
        for (size_t j = 0; j + 1 < n; j++)
                walk(t, k, &t->e[comps[j]], c);
        if (l->result < 0) {
                if (l->result != -ENOENT) {
                        ask(k, CLIENT_FAILED, 1);      /* refused: asked, nothing kept */
                        return;
                }
                if (c->negative_s > 0 && f->neg_until >= k->t)
                        return;
                ask(k, CLIENT_FAILED, 1);
                f->neg_until = c->negative_s > 0 ? k->t + c->negative_s : -INFINITY;
                f->name_until = f->attr_until = -INFINITY;
                return;
        }
        walk(t, k, f, c);
        if (ask_always(t, l, comps[n - 1], c, k)) {
                /* its entries' names and attributes held from now (listed_at) */
                if (l->op == RS_LOOKUP_READDIR && c->listing_attrs && !k->concurrent)
                        f->listed_at = k->t;
                return;
        }
        if ((l->op == RS_LOOKUP_STAT || l->op == RS_LOOKUP_ACCESS) && attrs_held(t, f, c) < k->t) {
                ask(k, CLIENT_ATTR, 1);
                f->attr_until = k->t + attrs_for(f, c);
        }
}

/* What the start asks anyway after the pacer (the warmed start). */
static void warmed_lookup(const struct names *t, const struct rs_lookup *l, uint32_t last,
                          const struct cost_client *c, struct clock *k)
{
        if (l->result < 0) {
                if (c->negative_s <= 0 || l->result != -ENOENT)
                        ask(k, CLIENT_FAILED, 1);
                return;
        }
        ask_always(t, l, last, c, k);
}

struct planned {
        const char *path;
        bool opened;
};

static int cmp_planned(const void *a, const void *b)
{
        return strcmp(((const struct planned *)a)->path, ((const struct planned *)b)->path);
}

/* The replay: each file of the plan opened once, each of its lookups made
 * once, at the start (one lifetime covers it), through a cold client. */
static int replay_cost(struct names *t, const struct readset *rs, const struct plan *plan,
                       const struct cost_profile *p, const char *root, struct client_cost *ret)
{
        const struct cost_client *c = &p->client;
        struct clock k = { 0, 0, ret, 0, true };   /* all at once: the clock stands */
        _cleanup_free_ struct planned *files = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*files));
        _cleanup_free_ uint8_t *seen = calloc(rs->n_files ? rs->n_files : 1, 1);
        size_t n_files = 0;

        if (!files || !seen)
                return -ENOMEM;
        names_reset(t);
        for (size_t i = 0; plan && i < plan->n_reads; i++) {
                uint32_t f = plan->reads[i].file;
                if (!seen[f] && rs->files[f].kind == RS_FILE_REGULAR && client_on_share(root, rs->files[f].path)) {
                        seen[f] = 1;
                        files[n_files++] = (struct planned){ rs->files[f].path, false };
                }
        }
        qsort_safe(files, n_files, sizeof(*files), cmp_planned);
        /* a file's path is walked as a recorded lookup of it is (its
         * names), then opened; one without a recorded lookup is one name
         * and one open */
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                const struct planned key = { l->path, false };
                struct planned *hit;
                size_t n = t->off[i + 1] - t->off[i];
                if (n == 0 || l->result < 0 || !(l->op == RS_LOOKUP_OPEN || l->op == RS_LOOKUP_EXEC))
                        continue;
                hit = n_files ? bsearch(&key, files, n_files, sizeof(*files), cmp_planned) : NULL;
                if (!hit || hit->opened)
                        continue;
                hit->opened = true;
                for (size_t j = 0; j < n; j++)
                        walk(t, &k, &t->e[t->comps[t->off[i] + j]], c);
                ask(&k, CLIENT_OPEN, 1);
        }
        for (size_t i = 0; i < n_files; i++)
                if (!files[i].opened) {
                        ask(&k, CLIENT_NAME, 1);
                        ask(&k, CLIENT_OPEN, 1);
                }
        ret->file_round_trips = ret->round_trips;
        for (size_t i = 0; plan && i < plan->n_lookups; i++) {
                uint32_t li = plan->lookups[i];
                const struct rs_lookup *l = &rs->lookups[li];
                size_t n = t->off[li + 1] - t->off[li];
                struct rs_lookup as_made = *l;
                if (n == 0)
                        continue;
                ret->lookups++;
                /* replay stats what the start looked up, lists what it listed */
                if (as_made.op != RS_LOOKUP_READDIR)
                        as_made.op = RS_LOOKUP_STAT;
                one_lookup(t, &as_made, t->comps + t->off[li], n, c, &k);
        }
        ret->seconds = (double)ret->round_trips * p->lat_us / 1e6 / cost_parallel(p, COST_REPLAY_THREADS);
        return 0;
}

/* The regular files on the share that no recorded open or exec names. */
static int unopened_files(const struct readset *rs, const char *root, uint64_t *ret)
{
        _cleanup_free_ const char **opened = malloc((rs->n_lookups ? rs->n_lookups : 1) * sizeof(*opened));
        size_t n = 0;

        *ret = 0;
        if (!opened)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                if (l->result >= 0 && (l->op == RS_LOOKUP_OPEN || l->op == RS_LOOKUP_EXEC))
                        opened[n++] = l->path;
        }
        qsort_safe(opened, n, sizeof(*opened), cmp_str_ptrs);
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                if (f->kind == RS_FILE_REGULAR && client_on_share(root, f->path) &&
                    !(n && bsearch(&f->path, opened, n, sizeof(*opened), cmp_str_ptrs)))
                        (*ret)++;
        }
        return 0;
}

int client_cost(const struct readset *rs, const struct plan *plan, const struct cost_profile *p, const char *root,
                const struct client_exists *ex, uint32_t *per_lookup, struct client_cost *ret_plain,
                struct client_cost *ret_replay, struct client_cost *ret_warmed)
{
        struct names t = {};
        const struct cost_client *c = &p->client;
        double rtt = p->lat_us / 1e6, now = -INFINITY;
        uint64_t unopened;
        int e;

        _cleanup_free_ bool *on_share = calloc(rs->n_lookups ? rs->n_lookups : 1, sizeof(bool));
        size_t paced;

        *ret_plain = *ret_replay = *ret_warmed = (struct client_cost){};
        if (!on_share)
                return -ENOMEM;
        e = names_build(&t, rs, root, ex);
        if (e < 0)
                goto out;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                size_t n = t.off[i + 1] - t.off[i];
                double at = (double)l->time_us / 1e6;
                struct clock w = { 0, rtt, ret_warmed, 0 };
                struct clock k;

                if (per_lookup)
                        per_lookup[i] = 0;
                if (n == 0)
                        continue;
                /* the start's clock: where the recording has it, or, where
                 * the round trips waited for so far take it further, there:
                 * a start recorded where none were waited for stretches by
                 * them, one recorded on the share has them in its times
                 * already (the gap between two lookups is the larger of
                 * the recorded one and the waits) */
                now = MAX(at, now);
                k = (struct clock){ now, rtt, ret_plain, 0 };
                ret_plain->lookups++;
                ret_warmed->lookups++;
                on_share[i] = true;
                one_lookup(&t, l, t.comps + t.off[i], n, c, &k);
                now = k.t;
                if (per_lookup)
                        per_lookup[i] = k.trips;
                warmed_lookup(&t, l, t.comps[t.off[i] + n - 1], c, &w);
        }
        /* a file read with no open of it recorded was opened all the same,
         * where the recording lost lookups: a name and an open (where it
         * lost none, the file was opened by another of its names: /lib for
         * /usr/lib) */
        e = unopened_files(rs, root, &unopened);
        if (e < 0)
                goto out;
        unopened = MIN(unopened, rs->lookups_lost + rs->lookups_unresolved);
        ret_plain->trips[CLIENT_NAME] += unopened;
        ret_plain->trips[CLIENT_OPEN] += unopened;
        ret_plain->round_trips += 2 * unopened;
        ret_warmed->trips[CLIENT_OPEN] += unopened;
        ret_warmed->round_trips += unopened;
        ret_plain->seconds = (double)ret_plain->round_trips * rtt;
        ret_warmed->seconds = (double)ret_warmed->round_trips * rtt;
        /* what run's pacer would warm of them */
        e = pace_count(rs, on_share, &paced);
        if (e < 0)
                goto out;
        ret_warmed->paced = paced;
        e = replay_cost(&t, rs, plan, p, root, ret_replay);
out:
        names_free(&t);
        return e;
}
