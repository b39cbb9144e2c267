/* SPDX-License-Identifier: MIT */
#include "record/clientstats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#define NFS_STATS "/proc/self/mountstats"
#define CIFS_STATS "/proc/fs/cifs/Stats"
#define SLOWDEV_STATS ".slowdev-stats"
#define SLOWDEV_FSTYPE "fuse.slowdev-share"
#define NFS_STATS_MAX (8u << 20)      /* a few KiB a mount */
#define CIFS_STATS_MAX (1u << 20)
#define SLOWDEV_STATS_MAX 4096        /* ~200 bytes */

/* ---- lines ------------------------------------------------------------- */

/* The line at *p (without its newline), *p moved past it; NULL at the end. */
static const char *next_line(const char **p, size_t *ret_len)
{
        const char *s = *p, *nl;

        if (!*s)
                return NULL;
        nl = strchr(s, '\n');
        *ret_len = nl ? (size_t)(nl - s) : strlen(s);
        *p = nl ? nl + 1 : s + *ret_len;
        return s;
}

static const char *skip_blanks(const char *s, const char *end)
{
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        return s;
}

/* Does [s, end) start with the word w (then a blank or its end)? */
static bool starts_word(const char *s, const char *end, const char *w)
{
        size_t n = strlen(w);
        return (size_t)(end - s) >= n && memcmp(s, w, n) == 0 && (s + n == end || s[n] == ' ' || s[n] == '\t');
}

/* A number at s, within end, ending at a blank or at end: 0 and *ret,
 * *ret_end past it; -EBADMSG. */
static int number_at(const char *s, const char *end, uint64_t *ret, const char **ret_end)
{
        char buf[24];
        size_t n = 0;
        uint64_t v;

        while (s + n < end && s[n] >= '0' && s[n] <= '9')
                n++;
        if (n == 0 || n >= sizeof(buf) || (s + n < end && s[n] != ' ' && s[n] != '\t'))
                return -EBADMSG;
        memcpy(buf, s, n);
        buf[n] = 0;
        if (parse_u64(buf, &v) < 0)
                return -EBADMSG;
        *ret = v;
        if (ret_end)
                *ret_end = s + n;
        return 0;
}

static int add_checked(uint64_t *sum, uint64_t v)
{
        if (v > UINT64_MAX - *sum)
                return -EBADMSG;
        *sum += v;
        return 0;
}

/* ---- NFS: /proc/self/mountstats ------------------------------------------ */

/* "device SRC mounted on MNT with fstype TYPE ...": is it an NFS mount at
 * mnt?  (MNT is escaped as mountinfo's are.) */
static bool nfs_device_line(const char *s, size_t len, const char *mnt)
{
        const char *end = s + len, *on, *with, *type;
        _cleanup_free_ char *point = NULL;

        on = memmem(s, len, " mounted on ", 12);
        if (!on)
                return false;
        on += 12;
        with = memmem(on, (size_t)(end - on), " with fstype ", 13);
        if (!with)
                return false;
        type = with + 13;
        if (!starts_word(type, end, "nfs") && !starts_word(type, end, "nfs4"))
                return false;
        point = strndup(on, (size_t)(with - on));
        if (!point)
                return false;
        mounts_unescape(point);
        return strcmp(point, mnt) == 0;
}

/* Requests sent are the "ops" column (the first): the RPCs the client
 * issued.  "trans" (the second) also counts retransmissions, which are the
 * network's, not something the start asked for. */
static int nfs_block(const char **p, uint64_t *ret)
{
        const char *s;
        size_t len;
        bool in_ops = false;
        uint64_t sum = 0, n_ops = 0;

        while ((s = next_line(p, &len))) {
                const char *end = s + len, *t = skip_blanks(s, end), *colon;
                uint64_t v;

                if (starts_word(s, end, "device")) {
                        *p = s;         /* the next mount's: left for the caller */
                        break;
                }
                if (!in_ops) {
                        in_ops = (size_t)(end - t) == 17 && memcmp(t, "per-op statistics", 17) == 0;
                        continue;
                }
                if (t == end)
                        break;  /* the block's end */
                colon = memchr(t, ':', (size_t)(end - t));
                if (!colon || colon == t || memchr(t, ' ', (size_t)(colon - t)))
                        return -EBADMSG;
                if (number_at(skip_blanks(colon + 1, end), end, &v, NULL) < 0 || add_checked(&sum, v) < 0)
                        return -EBADMSG;
                n_ops++;
        }
        if (!n_ops)
                return -EBADMSG;        /* no statistics, or cut before them */
        *ret = sum;
        return 0;
}

int clientstats_parse_nfs(const char *text, const char *mnt, uint64_t *ret)
{
        const char *p = text, *s;
        size_t len;
        int r = -ENOENT;
        uint64_t v = 0;

        while ((s = next_line(&p, &len))) {
                if (!starts_word(s, s + len, "device") || !nfs_device_line(s, len, mnt))
                        continue;
                /* the last of several at one point is the one seen there */
                r = nfs_block(&p, &v);
        }
        if (r >= 0)
                *ret = v;
        return r;
}

/* ---- CIFS: /proc/fs/cifs/Stats ------------------------------------------- */

/* "N) \\server\share": the share's name as mountinfo writes it
 * ("//server/share"), into buf; false for any other line. */
static bool cifs_share_line(const char *s, size_t len, char *buf, size_t size)
{
        const char *end = s + len, *t = skip_blanks(s, end), *u;
        size_t n = 0;

        while (t < end && *t >= '0' && *t <= '9')
                t++, n++;
        if (!n || end - t < 4 || t[0] != ')' || t[1] != ' ' || t[2] != '\\' || t[3] != '\\')
                return false;
        t += 2;
        for (u = t; u < end && *u != ' ' && *u != '\t'; u++)
                ;
        if ((size_t)(u - t) >= size)
                return false;
        for (n = 0; t < u; t++)
                buf[n++] = *t == '\\' ? '/' : *t;
        buf[n] = 0;
        return true;
}

/* source is the share, or a directory of it */
static bool cifs_same_share(const char *share, const char *source)
{
        size_t n = strlen(share);
        return strncasecmp(share, source, n) == 0 && (source[n] == 0 || source[n] == '/');
}

/* "Creates: 14 total 0 failed" (or "sent" in older kernels): its count. */
static bool cifs_command_line(const char *t, const char *end, uint64_t *ret)
{
        const char *colon = memchr(t, ':', (size_t)(end - t)), *q;
        uint64_t v, failed;

        if (!colon || colon == t || memchr(t, ' ', (size_t)(colon - t)))
                return false;
        if (number_at(skip_blanks(colon + 1, end), end, &v, &q) < 0)
                return false;
        q = skip_blanks(q, end);
        if (starts_word(q, end, "total"))
                q += 5;
        else if (starts_word(q, end, "sent"))
                q += 4;
        else
                return false;
        if (number_at(skip_blanks(q, end), end, &failed, &q) < 0 || !starts_word(skip_blanks(q, end), end, "failed"))
                return false;
        *ret = v;
        return true;
}

static int cifs_block(const char **p, uint64_t *ret)
{
        char share[512];
        const char *s, *before;
        size_t len;
        bool have_smbs = false, have_commands = false;
        uint64_t smbs = 0, sum = 0, v;

        for (before = *p; (s = next_line(p, &len)); before = *p) {
                const char *end = s + len, *t = skip_blanks(s, end);

                if (cifs_share_line(s, len, share, sizeof(share))) {
                        *p = before;    /* the next share's: read again by the caller */
                        break;
                }
                if (starts_word(t, end, "SMBs:")) {
                        if (number_at(skip_blanks(t + 5, end), end, &smbs, NULL) < 0)
                                return -EBADMSG;
                        have_smbs = true;
                } else if (cifs_command_line(t, end, &v)) {
                        if (add_checked(&sum, v) < 0)
                                return -EBADMSG;
                        have_commands = true;
                }
        }
        if (!have_smbs && !have_commands)
                return -EBADMSG;
        *ret = have_smbs ? smbs : sum;
        return 0;
}

int clientstats_parse_cifs(const char *text, const char *source, uint64_t *ret)
{
        const char *p = text, *s;
        char share[512];
        size_t len;

        while ((s = next_line(&p, &len)))
                if (cifs_share_line(s, len, share, sizeof(share)) && cifs_same_share(share, source))
                        return cifs_block(&p, ret);
        return -ENOENT;
}

/* ---- the emulator: MNT/.slowdev-stats ------------------------------------ */

int clientstats_parse_slowdev(const char *text, uint64_t *ret)
{
        const char *p = text, *s;
        size_t len;

        while ((s = next_line(&p, &len)))
                if (starts_word(s, s + len, "round_trips")) {
                        const char *t = skip_blanks(s + 11, s + len);
                        const char *end;
                        uint64_t v;

                        if (t == s + 11 || number_at(t, s + len, &v, &end) < 0 || end != s + len)
                                return -EBADMSG;
                        *ret = v;
                        return 0;
                }
        return -EBADMSG;
}

uint32_t clientstats_kind(const struct mount_ent *m)
{
        if (strcmp(m->fstype, "nfs") == 0 || strcmp(m->fstype, "nfs4") == 0)
                return RS_CLIENT_NFS;
        if (strcmp(m->fstype, "cifs") == 0 || strcmp(m->fstype, "smb3") == 0)
                return RS_CLIENT_CIFS;
        /* a FUSE daemon may never answer: only root's emulator is asked */
        if (strcmp(m->fstype, SLOWDEV_FSTYPE) == 0 && mounts_has_option(m->super, "user_id=0"))
                return RS_CLIENT_SLOWDEV;
        return 0;
}

/* ---- before and after ---------------------------------------------------- */

/* The emulator's file at the root of its mount: the mount point asked for
 * its device without a request to the daemon (AT_STATX_DONT_SYNC), and
 * the file opened below it without following a link. */
static int read_slowdev(const struct clientstats_mount *m, uint64_t *ret)
{
        _cleanup_close_ int dir = -1, fd = -1;
        _cleanup_free_ char *text = NULL;
        struct statx stx;
        int r;

        dir = open(m->mnt, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        if (statx(dir, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0)
                return -errno;
        if (makedev(stx.stx_dev_major, stx.stx_dev_minor) != m->dev)
                return -ESTALE;         /* another mount there now */
        fd = openat(dir, SLOWDEV_STATS, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_fd_text(fd, &text, SLOWDEV_STATS_MAX);
        return r < 0 ? r : clientstats_parse_slowdev(text, ret);
}

/* Every mount's counter now, into before or after. */
static void read_counters(struct clientstats *s, bool after)
{
        _cleanup_free_ char *nfs = NULL, *cifs = NULL;
        bool nfs_read = false, cifs_read = false;

        for (size_t i = 0; i < s->n; i++) {
                struct clientstats_mount *m = &s->m[i];
                uint64_t v = 0;
                int r = -ENOENT;

                switch (m->kind) {
                case RS_CLIENT_NFS:
                        if (!nfs_read && read_small_file(NFS_STATS, &nfs, NFS_STATS_MAX) < 0)
                                nfs = NULL;
                        nfs_read = true;
                        if (nfs)
                                r = clientstats_parse_nfs(nfs, m->mnt, &v);
                        break;
                case RS_CLIENT_CIFS:
                        if (!cifs_read && read_small_file(CIFS_STATS, &cifs, CIFS_STATS_MAX) < 0)
                                cifs = NULL;
                        cifs_read = true;
                        if (cifs)
                                r = clientstats_parse_cifs(cifs, m->source, &v);
                        break;
                case RS_CLIENT_SLOWDEV:
                        r = read_slowdev(m, &v);
                        break;
                }
                if (after) {
                        m->have_after = r >= 0;
                        m->after = v;
                } else {
                        m->have_before = r >= 0;
                        m->before = v;
                }
        }
}

int clientstats_begin(struct clientstats *s)
{
        struct mounts mt = { 0 };
        int r;

        *s = (struct clientstats){ 0 };
        r = mounts_read(&mt);
        if (r < 0) {
                mounts_free(&mt);
                return r;
        }
        for (size_t i = 0; i < mt.n; i++) {
                uint32_t kind = clientstats_kind(&mt.m[i]);
                struct clientstats_mount *n;

                if (!kind)
                        continue;
                n = reallocarray(s->m, s->n + 1, sizeof(*n));
                if (!n) {
                        r = -ENOMEM;
                        break;
                }
                s->m = n;
                n = &s->m[s->n];
                *n = (struct clientstats_mount){ .mnt = strdup(mt.m[i].mnt), .source = strdup(mt.m[i].source),
                                                 .dev = mt.m[i].dev, .kind = kind };
                s->n++;
                if (!n->mnt || !n->source) {
                        r = -ENOMEM;
                        break;
                }
        }
        mounts_free(&mt);
        if (r < 0) {
                clientstats_free(s);
                return r;
        }
        read_counters(s, false);
        return 0;
}

void clientstats_end(struct clientstats *s, uint64_t (*opens)(uint64_t dev, void *userdata), void *userdata)
{
        read_counters(s, true);
        for (size_t i = 0; i < s->n; i++)
                s->m[i].opens = opens ? opens(s->m[i].dev, userdata) : 0;
}

/* What one open made by readset costs on a client: the emulator counts
 * its OPEN (a release is not a request there); an SMB client sends a
 * CREATE and a CLOSE; NFSv4 an OPEN and a CLOSE (NFSv3 a GETATTR, for
 * close-to-open, and an ACCESS).  Not measured on NFS or CIFS here (this
 * kernel has neither): an estimate. */
static uint64_t requests_per_open(const struct clientstats_mount *m)
{
        return m->kind == RS_CLIENT_SLOWDEV ? 1 : 2;
}

int clientstats_store(const struct clientstats *s, struct readset *rs)
{
        for (size_t i = 0; i < s->n; i++) {
                const struct clientstats_mount *m = &s->m[i];
                uint64_t sent, own;
                int r;

                /* a counter that went back was reset (or the server changed) */
                if (!m->have_before || !m->have_after || m->after < m->before)
                        continue;
                sent = m->after - m->before;
                own = m->opens > sent / requests_per_open(m) ? sent : m->opens * requests_per_open(m);
                r = readset_add_client(rs, m->mnt, m->kind, sent - own);
                if (r < 0)
                        return r;
        }
        return 0;
}

void clientstats_free(struct clientstats *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->m[i].mnt);
                free(s->m[i].source);
        }
        free(s->m);
        *s = (struct clientstats){ 0 };
}
