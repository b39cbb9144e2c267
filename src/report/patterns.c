/* SPDX-License-Identifier: MIT */
#include "report/patterns.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/client.h"
#include "util/util.h"
#include "util/banned.h"

/* The lookups on the share, by path (then time order): the groups the
 * patterns count in. */
struct by_path {
        const struct readset *rs;
        uint32_t *idx;
        size_t n;
};

static int cmp_path(const void *a, const void *b, void *userdata)
{
        const struct readset *rs = userdata;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        int c = strcmp(rs->lookups[x].path, rs->lookups[y].path);
        return c ? c : (x > y) - (x < y);
}

static size_t dir_len(const char *p)
{
        const char *s = strrchr(p, '/');
        return s ? (size_t)(s - p) : 0;
}

/* Is a (alen bytes) a directory above path b? */
static bool is_ancestor(const char *a, size_t alen, const char *b)
{
        return alen < strlen(b) && strncmp(a, b, alen) == 0 && (b[alen] == '/' || alen == 1);
}

static bool is_attr_call(uint32_t op)
{
        return op == RS_LOOKUP_STAT || op == RS_LOOKUP_ACCESS || op == RS_LOOKUP_READLINK;
}

static void name(struct pattern *p, enum pattern_kind kind, uint64_t count, uint64_t trips, double rtt_s)
{
        p->kind = kind;
        p->count = count;
        p->round_trips = trips;
        p->seconds = (double)trips * rtt_s;
}

/* "NFS: actimeo=N (lookupcache=all); SMB: actimeo=N" for a lifetime of at
 * least s seconds. */
static const char *cache_remedy(double s, char *buf, size_t size)
{
        unsigned n = s < 1 ? 1 : s > 600 ? 600 : (unsigned)(s + 0.999);
        snprintf(buf, size, "mount with longer attribute and lookup cache lifetimes (NFS: actimeo=%u, "
                 "lookupcache=all; SMB: actimeo=%u)", n < 30 ? 30 : n, n < 30 ? 30 : n);
        return buf;
}

static const char *share_of(double s, double plain_s, char *buf, size_t size)
{
        snprintf(buf, size, "%.0f%% of the predicted time", plain_s > 0 ? 100 * s / plain_s : 0);
        return buf;
}

/* Failed lookups along a search path: a name ("Carp.pm", "Tie/Hash.pm",
 * "env") looked for below one directory after another.  A path is split
 * where what follows (up to SPLIT_DEPTH names) is looked for below the
 * most directories (the longer name where as many): that directory is its
 * search directory.  The directories where nothing looked for was found
 * are what a reordered (or shorter) search path saves. */
#define SPLIT_DEPTH 4

struct probe {
        const char *path;
        size_t sdir;              /* its search directory's length */
        bool failed, searched;    /* searched: looked for below several directories */
        uint32_t trips;
        uint8_t n_cand;
        size_t cand[SPLIT_DEPTH]; /* the directories (lengths) it could be looked for below */
};

struct split {
        const char *path;
        size_t dlen;              /* the directory's length: the name is path + dlen + 1 */
        uint32_t probe;
        uint32_t dirs;            /* directories the name is looked for below */
};

static int cmp_split(const void *a, const void *b)
{
        const struct split *x = a, *y = b;
        int c = strcmp(x->path + x->dlen, y->path + y->dlen);
        if (c)
                return c;
        c = strncmp(x->path, y->path, MIN(x->dlen, y->dlen));
        return c ? c : (x->dlen > y->dlen) - (x->dlen < y->dlen);
}

static int cmp_probe_sdir(const void *a, const void *b)
{
        const struct probe *x = a, *y = b;
        int c = strncmp(x->path, y->path, MIN(x->sdir, y->sdir));
        return c ? c : (x->sdir > y->sdir) - (x->sdir < y->sdir);
}

struct dirkey {
        const char *path;
        size_t len;
        size_t chosen;            /* probes whose search directory it is */
};

static int cmp_dirkey(const void *a, const void *b)
{
        const struct dirkey *x = a, *y = b;
        int c = strncmp(x->path, y->path, MIN(x->len, y->len));
        return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Each probe's search directory (t[i].sdir): the split where its name is
 * looked for below the most directories, then, among its splits, the
 * directory most probes chose ("Exporter/Heavy.pm" below the search path's
 * "/etc/perl", not "Heavy.pm" below "/etc/perl/Exporter"). */
static int split_names(struct probe *t, size_t n)
{
        _cleanup_free_ struct split *s = malloc((n ? n : 1) * SPLIT_DEPTH * sizeof(*s));
        size_t k = 0;

        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *p = t[i].path;
                size_t len = strlen(p);
                t[i].sdir = dir_len(p);
                for (int d = 0; d < SPLIT_DEPTH && len > 0; d++) {
                        while (len > 0 && p[len - 1] != '/')
                                len--;
                        if (len <= 1)
                                break;
                        len--;          /* the slash */
                        s[k++] = (struct split){ p, len, (uint32_t)i, 0 };
                }
        }
        qsort_safe(s, k, sizeof(*s), cmp_split);
        for (size_t i = 0; i < k;) {
                size_t j = i, dirs = 0;
                while (j < k && strcmp(s[j].path + s[j].dlen, s[i].path + s[i].dlen) == 0) {
                        if (j == i || s[j].dlen != s[j - 1].dlen || strncmp(s[j].path, s[j - 1].path, s[j].dlen) != 0)
                                dirs++;
                        j++;
                }
                for (size_t x = i; x < j; x++)
                        s[x].dirs = (uint32_t)MIN(dirs, (size_t)UINT32_MAX);
                i = j;
        }
        /* the best split of each probe */
        _cleanup_free_ uint32_t *best = malloc((n ? n : 1) * sizeof(*best));
        if (!best)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                best[i] = 1;
        for (size_t x = 0; x < k; x++) {
                struct probe *q = &t[s[x].probe];
                if (s[x].dirs < 2)
                        continue;
                q->searched = true;
                q->cand[q->n_cand++] = s[x].dlen;
                if (s[x].dirs < best[s[x].probe] || (s[x].dirs == best[s[x].probe] && s[x].dlen > q->sdir))
                        continue;
                best[s[x].probe] = s[x].dirs;
                q->sdir = s[x].dlen;
        }
        /* how many chose each directory */
        _cleanup_free_ struct dirkey *dk = malloc((n ? n : 1) * sizeof(*dk));
        size_t nd = 0;
        if (!dk)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (t[i].searched)
                        dk[nd++] = (struct dirkey){ t[i].path, t[i].sdir, 1 };
        qsort_safe(dk, nd, sizeof(*dk), cmp_dirkey);
        {
                size_t u = 0;
                for (size_t i = 0; i < nd; i++) {
                        if (u > 0 && cmp_dirkey(&dk[u - 1], &dk[i]) == 0)
                                dk[u - 1].chosen++;
                        else
                                dk[u++] = dk[i];
                }
                nd = u;
        }
        for (size_t i = 0; i < n; i++) {
                size_t most = 0;
                for (uint8_t c = 0; c < t[i].n_cand; c++) {
                        struct dirkey key = { t[i].path, t[i].cand[c], 0 };
                        const struct dirkey *hit = nd ? bsearch(&key, dk, nd, sizeof(*dk), cmp_dirkey) : NULL;
                        if (hit && hit->chosen > most) {
                                most = hit->chosen;
                                t[i].sdir = t[i].cand[c];
                        }
                }
        }
        return 0;
}

struct sdir {
        const char *dir;
        size_t len;
        uint64_t failed, found, trips;
};

static int cmp_sdir_failed(const void *a, const void *b)
{
        const struct sdir *x = a, *y = b;
        return (x->failed < y->failed) - (x->failed > y->failed);
}

static int search_path(const struct readset *rs, const uint32_t *trips, const char *root, double rtt_s,
                       double plain_s, struct pattern *ret, bool *found)
{
        _cleanup_free_ struct probe *t = malloc((rs->n_lookups ? rs->n_lookups : 1) * sizeof(*t));
        _cleanup_free_ struct sdir *d = NULL;
        _cleanup_free_ const char **names = NULL;
        size_t n = 0, m = 0, stems = 0;
        uint64_t failed = 0, ftrips = 0, saved = 0, saved_trips = 0, never = 0;
        char b1[32], b2[48], list[200];
        int e;

        *found = false;
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                if (l->op == RS_LOOKUP_READDIR || !(l->result == -ENOENT || l->result >= 0) ||
                    !client_on_share(root, l->path) || strlen(l->path) < 2)
                        continue;
                t[n++] = (struct probe){ .path = l->path, .failed = l->result < 0, .trips = trips[i] };
                if (l->result < 0) {
                        failed++;
                        ftrips += trips[i];
                }
        }
        if (failed < 16)
                return 0;
        e = split_names(t, n);
        if (e < 0)
                return e;
        /* a failed lookup of a name looked for nowhere else is no search */
        failed = ftrips = 0;
        for (size_t i = 0; i < n; i++)
                if (t[i].failed && t[i].searched) {
                        failed++;
                        ftrips += t[i].trips;
                }
        if (failed < 16)
                return 0;
        /* the names looked for, in as many ways as failed (each counted once) */
        names = malloc(failed * sizeof(*names));
        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (t[i].failed && t[i].searched)
                        names[stems++] = t[i].path + t[i].sdir;
        qsort_safe(names, stems, sizeof(*names), cmp_str_ptrs);
        {
                size_t u = 0;
                for (size_t i = 0; i < stems; i++)
                        u += i == 0 || strcmp(names[i], names[i - 1]) != 0;
                stems = u;
        }
        /* per search directory: names failed and found */
        qsort_safe(t, n, sizeof(*t), cmp_probe_sdir);
        d = malloc(n * sizeof(*d));
        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                struct sdir x = { t[i].path, t[i].sdir, 0, 0, 0 };
                while (j < n && cmp_probe_sdir(&t[j], &t[i]) == 0) {
                        if (t[j].searched) {
                                x.failed += t[j].failed;
                                x.found += !t[j].failed;
                                x.trips += t[j].failed ? t[j].trips : 0;
                        }
                        j++;
                }
                if (x.failed)
                        d[m++] = x;
                i = j;
        }
        if (m < 3)
                return 0;       /* not a search path */
        qsort_safe(d, m, sizeof(*d), cmp_sdir_failed);
        for (size_t i = 0; i < m; i++)
                if (!d[i].found) {
                        never++;
                        saved += d[i].failed;
                        saved_trips += d[i].trips;
                }
        list[0] = 0;
        for (size_t i = 0, used = 0; i < m && i < 3; i++) {
                char tail[64], dir[PATH_MAX];
                int w;
                snprintf(dir, sizeof(dir), "%.*s", (int)MIN(d[i].len ? d[i].len : 1, sizeof(dir) - 1),
                         d[i].len ? d[i].dir : "/");
                w = snprintf(list + used, sizeof(list) - used, "%s%s (%" PRIu64 ")", i ? ", " : "",
                             printable_tail(dir, 36, tail, sizeof(tail)), d[i].failed);
                if (w < 0 || (size_t)w >= sizeof(list) - used)
                        break;
                used += (size_t)w;
        }
        name(ret, PATTERN_SEARCH_PATH, failed, ftrips, rtt_s);
        snprintf(ret->text, sizeof(ret->text), "%" PRIu64 " failed lookups along a search path of %zu directories "
                 "(%.1f per name looked for; most in %s) cost %s, %s",
                 failed, m, stems ? (double)failed / (double)stems : 0.0, list, format_seconds(ret->seconds, b1),
                 share_of(ret->seconds, plain_s, b2, sizeof(b2)));
        if (never && saved_trips)
                snprintf(ret->text + strlen(ret->text), sizeof(ret->text) - strlen(ret->text),
                         ": in %" PRIu64 " of them no name was ever found; moving %s to the end of the search path "
                         "saves %" PRIu64 " failed lookups (%s)", never, never == 1 ? "it" : "them", saved,
                         format_seconds((double)saved_trips * rtt_s, b1));
        else
                snprintf(ret->text + strlen(ret->text), sizeof(ret->text) - strlen(ret->text),
                         ": put the directories most names are found in first");
        *found = true;
        return 0;
}

/* What the patterns are counted over: the lookups on the share (idx, n),
 * the round trips of each, and which ones a parent walk took. */
struct pctx {
        const struct readset *rs;
        const uint32_t *trips, *idx;
        size_t n;
        uint8_t *in_walk;
        const struct cost_profile *p;
        double rtt_s, plain_s;
};

/* Every parent directory looked up, top down, right before a lookup of a
 * path below them (by the same process), and that path asked then,
 * perhaps again and again: the walk's lookups, all of them (what it
 * costs), and of them the parents' and the repeats' (what the walk adds).
 * Marks them in c->in_walk; the pattern at ret[*kp] where there is one. */
static void parent_walks(const struct pctx *c, struct pattern *ret, size_t *kp)
{
        const struct readset *rs = c->rs;
        const uint32_t *trips = c->trips, *idx = c->idx;
        const struct cost_profile *p = c->p;
        double rtt_s = c->rtt_s, plain_s = c->plain_s;
        size_t n = c->n, k = *kp;
        char b1[32], b2[48], b3[160];
        uint8_t *in_walk = c->in_walk;

        uint64_t walks = 0, parents = 0, asked = 0, wtrips = 0, added = 0;
        for (size_t a = 0; a < n;) {
                const struct rs_lookup *f = &rs->lookups[idx[a]];
                size_t b = a, up = 0, end = a + 1;
                /* (a directory on the way down is part of the walk of
                 * what follows it, not a walk of its own) */
                if (a + 1 < n && rs->lookups[idx[a + 1]].pid == f->pid &&
                    is_ancestor(f->path, strlen(f->path), rs->lookups[idx[a + 1]].path)) {
                        a++;
                        continue;
                }
                /* the lookups before a that are its parents, each one
                 * directory above the next: top down */
                while (b > 0) {
                        const struct rs_lookup *d = &rs->lookups[idx[b - 1]];
                        const char *below = rs->lookups[idx[b]].path;
                        size_t dl = strlen(d->path);
                        /* the directory right above: the walk misses none */
                        if (d->pid != f->pid || d->result < 0 || !is_attr_call(d->op) ||
                            !is_ancestor(d->path, dl, below) || dir_len(below) != (dl == 1 ? 0 : dl))
                                break;
                        b--;
                        up++;
                }
                /* the path asked again right after */
                while (end < n && strcmp(rs->lookups[idx[end]].path, f->path) == 0)
                        end++;
                if (up >= 2) {
                        walks++;
                        parents += up;
                        asked += end - a;
                        for (size_t x = b; x < end; x++) {
                                wtrips += trips[idx[x]];
                                if (x != a)
                                        added += trips[idx[x]];
                                in_walk[idx[x]] = 1;
                        }
                }
                a = end;
        }
        if (walks && wtrips) {
                name(&ret[k], PATTERN_PARENT_WALK, parents + asked, wtrips, rtt_s);
                snprintf(ret[k].text, sizeof(ret[k].text), "%" PRIu64 " lookups reach %" PRIu64 " paths by "
                         "walking every parent directory first (%.1f per path), each path then asked %.1f "
                         "times: %" PRIu64 " round trips on %s, %s (%s), %" PRIu64 " of them for the parents "
                         "and the repeats; %s, or keep the walk (a security or indexing hook) off the share",
                         parents + asked, walks, (double)parents / (double)walks, (double)asked / (double)walks,
                         wtrips, p->name, format_seconds(ret[k].seconds, b1),
                         share_of(ret[k].seconds, plain_s, b2, sizeof(b2)), added,
                         cache_remedy(1, b3, sizeof(b3)));
                k++;
        }
        *kp = k;
}

/* The same path again (not a walk's); its attribute calls; its listings
 * again. */
static int by_path(const struct pctx *c, struct pattern *ret, size_t *kp)
{
        const struct readset *rs = c->rs;
        const uint32_t *trips = c->trips, *idx = c->idx;
        const struct cost_profile *p = c->p;
        double rtt_s = c->rtt_s, plain_s = c->plain_s;
        size_t n = c->n, k = *kp;
        char b1[32], b2[48], b3[160];
        const uint8_t *in_walk = c->in_walk;

        _cleanup_free_ uint32_t *s = malloc((n ? n : 1) * sizeof(*s));
        uint64_t rep = 0, rep_trips = 0, most = 0, paths = 0;
        uint64_t attr_files = 0, attr_calls = 0, attr_again = 0, attr_trips = 0, access_calls = 0;
        uint64_t lst = 0, lst_trips = 0, lst_dirs = 0;
        if (!s)
                return -ENOMEM;
        memcpy(s, idx, n * sizeof(*s));
        qsort_r(s, n, sizeof(*s), cmp_path, (void *)rs);
        for (size_t i = 0; i < n;) {
                size_t j = i;
                uint64_t calls = 0, again = 0, ctrips = 0, lists = 0, ltrips = 0, frep = 0, ftrips = 0, accesses = 0;
                while (j < n && strcmp(rs->lookups[s[j]].path, rs->lookups[s[i]].path) == 0) {
                        const struct rs_lookup *l = &rs->lookups[s[j]];
                        /* a failed lookup asked again; the attribute calls
                         * after a path's first (the first asks what the
                         * start needs).  (An open asks whatever the client
                         * keeps: close-to-open; a listing is the listings';
                         * a walk's lookups are the walk's.) */
                        if (j > i && !in_walk[s[j]] && l->result < 0) {
                                frep++;
                                ftrips += trips[s[j]];
                        }
                        if (l->result >= 0 && is_attr_call(l->op) && !in_walk[s[j]]) {
                                accesses += l->op == RS_LOOKUP_ACCESS;
                                if (calls++) {
                                        again++;
                                        ctrips += trips[s[j]];
                                }
                        }
                        if (l->op == RS_LOOKUP_READDIR && l->result >= 0) {
                                if (lists++)
                                        ltrips += trips[s[j]];
                        }
                        j++;
                }
                paths++;
                most = MAX(most, (uint64_t)(j - i));
                /* a path asked for its attributes three times or more is
                 * the attribute calls' finding; its repeats are not also
                 * the repeated paths' */
                if (calls >= 3) {
                        access_calls += accesses;
                        attr_files++;
                        attr_calls += calls;
                        attr_again += again;
                        attr_trips += ctrips;
                } else {
                        frep += again;
                        ftrips += ctrips;
                }
                rep += frep;
                rep_trips += ftrips;
                if (lists >= 2) {
                        lst_dirs++;
                        lst += lists - 1;
                        lst_trips += ltrips;
                }
                i = j;
        }
        if (rep && rep_trips) {
                name(&ret[k], PATTERN_REPEATED, rep, rep_trips, rtt_s);
                snprintf(ret[k].text, sizeof(ret[k].text), "%" PRIu64 " lookups repeat a path the start looked up "
                         "before (%" PRIu64 " paths, up to %" PRIu64 " times each): %" PRIu64 " round trips on %s, "
                         "%s (%s); a client that keeps names, attributes and failed lookups for the start's length "
                         "sends none; %s", rep, paths, most, rep_trips, p->name,
                         format_seconds(ret[k].seconds, b1), share_of(ret[k].seconds, plain_s, b2, sizeof(b2)),
                         cache_remedy(1, b3, sizeof(b3)));
                k++;
        }
        if (attr_files && attr_trips) {
                name(&ret[k], PATTERN_ATTRIBUTES, attr_again, attr_trips, rtt_s);
                snprintf(ret[k].text, sizeof(ret[k].text), "%" PRIu64 " paths were asked for their attributes %.1f "
                         "times each (stat, access, readlink: %" PRIu64 " calls, %" PRIu64 " round trips after "
                         "the first), %s, %s: %s",
                         attr_files, (double)attr_calls / (double)attr_files, attr_calls, attr_trips,
                         format_seconds(ret[k].seconds, b1), share_of(ret[k].seconds, plain_s, b2, sizeof(b2)),
                         p->client.access_cached || !access_calls ? "a longer attribute cache lifetime answers them" :
                         "this client asks the server for every access(2); a longer attribute cache "
                         "lifetime answers the stats");
                k++;
        }
        if (lst_dirs && lst_trips) {
                name(&ret[k], PATTERN_LISTINGS, lst, lst_trips, rtt_s);
                snprintf(ret[k].text, sizeof(ret[k].text), "%" PRIu64 " director%s listed again (%" PRIu64
                         " listings more than once each), %s, %s: no client keeps a listing; list each "
                         "directory once", lst_dirs, lst_dirs == 1 ? "y was" : "ies were", lst,
                         format_seconds(ret[k].seconds, b1), share_of(ret[k].seconds, plain_s, b2, sizeof(b2)));
                k++;
        }
        *kp = k;
        return 0;
}

int patterns_find(const struct readset *rs, const uint32_t *trips, const struct cost_profile *p, const char *root,
                  double plain_s, struct pattern ret[static _PATTERN_MAX])
{
        _cleanup_free_ uint32_t *idx = NULL;
        _cleanup_free_ uint8_t *in_walk = NULL;   /* lookups counted in a parent walk */
        double rtt_s = p->lat_us / 1e6;
        size_t n = 0, k = 0;
        bool found;
        int e;

        if (!trips || rs->n_lookups == 0)
                return 0;
        idx = malloc(rs->n_lookups * sizeof(*idx));
        in_walk = calloc(rs->n_lookups, 1);
        if (!idx || !in_walk)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_lookups; i++)
                if (client_on_share(root, rs->lookups[i].path))
                        idx[n++] = (uint32_t)i;

        {
                const struct pctx c = { rs, trips, idx, n, in_walk, p, rtt_s, plain_s };
                parent_walks(&c, ret, &k);
                e = by_path(&c, ret, &k);
                if (e < 0)
                        return e;
        }

        e = search_path(rs, trips, root, rtt_s, plain_s, &ret[k], &found);
        if (e < 0)
                return e;
        k += found;

        /* what costs little is not named; the most costly first */
        size_t kept = 0;
        for (size_t i = 0; i < k; i++)
                if (plain_s > 0 && ret[i].seconds >= PATTERN_MIN_SHARE * plain_s)
                        ret[kept++] = ret[i];
        for (size_t i = 1; i < kept; i++)
                for (size_t j = i; j > 0 && ret[j].seconds > ret[j - 1].seconds; j--) {
                        struct pattern x = ret[j];
                        ret[j] = ret[j - 1];
                        ret[j - 1] = x;
                }
        return (int)kept;
}
