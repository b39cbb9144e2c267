/* SPDX-License-Identifier: MIT */
#include "model/readset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

struct readset *readset_new(void)
{
        return calloc(1, sizeof(struct readset));
}

void rs_image_free(struct rs_image *im)
{
        if (im)
                free(im->spans);
        free(im);
}

void readset_free(struct readset *rs)
{
        if (!rs)
                return;
        for (size_t i = 0; i < rs->n_files; i++) {
                free(rs->files[i].path);
                free(rs->files[i].ranges);
        }
        for (size_t i = 0; i < rs->n_lookups; i++)
                free(rs->lookups[i].path);
        free(rs->files);
        free(rs->lookups);
        free(rs->command);
        rs_image_free(rs->image);
        for (size_t i = 0; i < rs->n_clients; i++)
                free(rs->clients[i].mount);
        free(rs->clients);
        free(rs);
}

struct rs_file *readset_add_file(struct readset *rs, const char *path, uint64_t dev, uint64_t ino)
{
        struct rs_file *f;
        char *p;

        if (grow_array(&rs->files, &rs->cap_files, rs->n_files + 1, sizeof(*rs->files)) < 0)
                return NULL;
        p = strdup(path ? path : "");
        if (!p)
                return NULL;
        f = &rs->files[rs->n_files++];
        *f = (struct rs_file){ .path = p, .dev = dev, .ino = ino };
        return f;
}

void readset_drop_last_file(struct readset *rs)
{
        struct rs_file *f;

        if (rs->n_files == 0)
                return;
        f = &rs->files[--rs->n_files];
        free(f->path);
        free(f->ranges);
}

int readset_file_add_range(struct rs_file *f, uint64_t offset, uint64_t length, uint64_t time_us, uint32_t flags)
{
        if (length == 0 || offset + length < offset)
                return -EINVAL;
        if (grow_array(&f->ranges, &f->cap_ranges, f->n_ranges + 1, sizeof(*f->ranges)) < 0)
                return -ENOMEM;
        f->ranges[f->n_ranges++] = (struct rs_range){ offset, length, time_us, flags };
        return 0;
}

int readset_add_lookup(struct readset *rs, uint64_t time_us, uint32_t op, int32_t result, uint32_t pid, const char *path)
{
        char *p;

        if (grow_array(&rs->lookups, &rs->cap_lookups, rs->n_lookups + 1, sizeof(*rs->lookups)) < 0)
                return -ENOMEM;
        p = strdup(path ? path : "");
        if (!p)
                return -ENOMEM;
        rs->lookups[rs->n_lookups++] = (struct rs_lookup){ time_us, op, result, pid, p };
        return 0;
}

int readset_add_client(struct readset *rs, const char *mount, uint32_t kind, uint64_t requests)
{
        struct rs_client *n;
        char *m = strdup(mount);

        if (!m)
                return -ENOMEM;
        /* a few mounts at most: grown one by one */
        n = reallocarray(rs->clients, rs->n_clients + 1, sizeof(*n));
        if (!n) {
                free(m);
                return -ENOMEM;
        }
        rs->clients = n;
        rs->clients[rs->n_clients++] = (struct rs_client){ m, kind, requests };
        return 0;
}

int readset_set_command(struct readset *rs, char *const *argv)
{
        char *s = malloc(READSET_COMMAND_MAX + 1);
        size_t len = 0;

        if (!s)
                return -ENOMEM;
        for (char *const *a = argv; *a; a++) {
                size_t n = strlen(*a);
                if (len + n + 1 > READSET_COMMAND_MAX - 4) {
                        memcpy(s + len, " ...", 4);
                        len += 4;
                        break;
                }
                if (len)
                        s[len++] = ' ';
                memcpy(s + len, *a, n);
                len += n;
        }
        s[len] = 0;
        free(rs->command);
        rs->command = s;
        return 0;
}

void readset_totals(const struct readset *rs, struct readset_totals *t)
{
        *t = (struct readset_totals){ 0 };
        t->files = rs->n_files;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                uint64_t bytes = 0;

                for (size_t j = 0; j < f->n_ranges; j++) {
                        bytes += f->ranges[j].length;
                        if (f->ranges[j].flags & RS_RANGE_ACCESSED)
                                t->accessed_bytes += f->ranges[j].length;
                }
                t->ranges += f->n_ranges;
                t->bytes += bytes;
                if (f->flags & RS_FILE_DELETED)
                        t->deleted_files++;
                switch (f->kind) {
                case RS_FILE_REGULAR: t->regular_files++; t->regular_bytes += bytes; break;
                case RS_FILE_BLOCKDEV: t->blockdev_files++; t->blockdev_bytes += bytes; break;
                default: t->unresolved_files++; t->unresolved_bytes += bytes; break;
                }
        }
        t->lookups = rs->n_lookups;
        for (size_t i = 0; i < rs->n_lookups; i++)
                if (rs->lookups[i].result < 0)
                        t->lookups_failed++;
}

bool readset_path_is_plain(const char *p)
{
        if (p[0] != '/' || !p[1])
                return false;
        for (const char *c = p; *c;) {
                size_t n;
                c++;    /* the slash */
                n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n;
        }
        return true;
}

int readset_validate(const struct readset *rs)
{
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];

                if (f->kind >= _RS_FILE_KIND_MAX || (f->flags & ~(uint32_t)_RS_FILE_FLAGS_ALL))
                        return -EBADMSG;
                if (!f->path)
                        return -EBADMSG;
                /* a portable read set holds regular files known by content,
                 * under its root: no "." or ".." to climb out of it */
                if (!!(rs->rec_flags & RS_REC_PORTABLE) != !!(f->flags & RS_FILE_BY_CONTENT))
                        return -EBADMSG;
                if ((f->flags & RS_FILE_BY_CONTENT) && (f->kind != RS_FILE_REGULAR || !readset_path_is_plain(f->path)))
                        return -EBADMSG;
                for (size_t j = 0; j < f->n_ranges; j++) {
                        const struct rs_range *r = &f->ranges[j];
                        if (r->length == 0 || r->offset + r->length < r->offset)
                                return -EBADMSG;
                        if (r->flags & ~(uint32_t)_RS_RANGE_FLAGS_ALL)
                                return -EBADMSG;
                }
        }
        if (rs->image) {
                if (!(rs->rec_flags & RS_REC_PORTABLE))
                        return -EBADMSG;
                for (size_t i = 0; i < rs->image->n_spans; i++) {
                        const struct rs_span *s = &rs->image->spans[i];
                        if (s->length == 0 || s->offset > rs->image->size || s->length > rs->image->size - s->offset)
                                return -EBADMSG;
                }
        }
        for (size_t i = 0; i < rs->n_clients; i++) {
                const struct rs_client *c = &rs->clients[i];
                if (c->kind == 0 || c->kind >= _RS_CLIENT_KIND_MAX || !c->mount || c->mount[0] != '/')
                        return -EBADMSG;
        }
        for (size_t i = 0; i < rs->n_lookups; i++) {
                const struct rs_lookup *l = &rs->lookups[i];
                if (l->op == 0 || l->op >= _RS_LOOKUP_OP_MAX || !l->path)
                        return -EBADMSG;
                if (l->result > 0 || l->result < -4095)
                        return -EBADMSG;
                if ((rs->rec_flags & RS_REC_PORTABLE) && !readset_path_is_plain(l->path))
                        return -EBADMSG;
        }
        return 0;
}

const char *rs_file_kind_name(uint32_t kind)
{
        switch (kind) {
        case RS_FILE_REGULAR: return "file";
        case RS_FILE_BLOCKDEV: return "blockdev";
        case RS_FILE_UNRESOLVED: return "unresolved";
        }
        return "unknown";
}

const char *rs_lookup_op_name(uint32_t op)
{
        switch (op) {
        case RS_LOOKUP_OPEN: return "open";
        case RS_LOOKUP_STAT: return "stat";
        case RS_LOOKUP_ACCESS: return "access";
        case RS_LOOKUP_READLINK: return "readlink";
        case RS_LOOKUP_READDIR: return "readdir";
        case RS_LOOKUP_EXEC: return "exec";
        }
        return "unknown";
}

const char *rs_client_kind_name(uint32_t kind)
{
        switch (kind) {
        case RS_CLIENT_NFS: return "nfs";
        case RS_CLIENT_CIFS: return "cifs";
        case RS_CLIENT_SLOWDEV: return "slowdev";
        }
        return "unknown";
}

uint64_t readset_read_limit(const struct readset *rs, const struct rs_file *f)
{
        uint64_t page = rs->page_size ? rs->page_size : 4096, limit = (uint64_t)INT64_MAX;

        if (f->kind == RS_FILE_REGULAR && f->size > 0 && f->size < limit - page)
                limit = (f->size + page - 1) / page * page;
        return limit;
}

struct devbytes {
        uint64_t dev, bytes;
};

static int cmp_devbytes(const void *a, const void *b)
{
        const struct devbytes *x = a, *y = b;
        return x->dev < y->dev ? -1 : x->dev > y->dev;
}

int readset_main_device(const struct readset *rs, uint64_t *ret)
{
        _cleanup_free_ struct devbytes *d = malloc((rs->n_files ? rs->n_files : 1) * sizeof(*d));
        uint64_t best_bytes = 0;
        size_t n = 0;

        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < rs->n_files; i++) {
                if (rs->files[i].kind == RS_FILE_UNRESOLVED)
                        continue;
                d[n] = (struct devbytes){ rs->files[i].dev, 0 };
                for (size_t k = 0; k < rs->files[i].n_ranges; k++)
                        d[n].bytes += rs->files[i].ranges[k].length;
                n++;
        }
        qsort_safe(d, n, sizeof(*d), cmp_devbytes);
        *ret = 0;
        for (size_t i = 0; i < n;) {
                uint64_t bytes = 0;
                size_t j = i;
                for (; j < n && d[j].dev == d[i].dev; j++)
                        bytes += d[j].bytes;
                if (bytes > best_bytes) {
                        best_bytes = bytes;
                        *ret = d[i].dev;
                }
                i = j;
        }
        return 0;
}

int readset_part(const struct readset *rs, uint64_t dev, const char *under, struct readset **ret)
{
        _cleanup_readset_ struct readset *p = readset_new();
        size_t n = under ? strlen(under) : 0;

        if (!p)
                return -ENOMEM;
        p->page_size = rs->page_size;
        p->rec_flags = rs->rec_flags;
        p->duration_us = rs->duration_us;
        for (size_t i = 0; i < rs->n_files; i++) {
                const struct rs_file *f = &rs->files[i];
                struct rs_file *c;
                if (f->dev != dev || f->kind == RS_FILE_UNRESOLVED)
                        continue;
                if (f->kind == RS_FILE_REGULAR && n && !(strncmp(f->path, under, n) == 0 && f->path[n] == '/'))
                        continue;
                c = readset_add_file(p, f->path, f->dev, f->ino);
                if (!c)
                        return -ENOMEM;
                c->size = f->size, c->mtime_ns = f->mtime_ns, c->kind = f->kind, c->flags = f->flags;
                for (size_t k = 0; k < f->n_ranges; k++)
                        if (readset_file_add_range(c, f->ranges[k].offset, f->ranges[k].length, f->ranges[k].time_us,
                                                   f->ranges[k].flags) < 0)
                                return -ENOMEM;
        }
        *ret = p;
        p = NULL;
        return 0;
}

int readset_main_file(const struct readset *rs, const char **ret)
{
        uint64_t dev;
        int r = readset_main_device(rs, &dev);

        *ret = NULL;
        if (r < 0)
                return r;
        for (size_t i = 0; i < rs->n_files; i++)
                if (rs->files[i].kind == RS_FILE_REGULAR && rs->files[i].dev == dev &&
                    rs->files[i].path[0] == '/' && access(rs->files[i].path, F_OK) == 0) {
                        *ret = rs->files[i].path;
                        break;
                }
        return 0;
}

int readset_put_first(struct readset *rs, struct readset *from)
{
        struct rs_file *files;
        size_t n = 0, cap;

        cap = rs->n_files + from->n_files;
        if (cap == 0)
                return 0;
        files = calloc(cap, sizeof(*files));
        if (!files)
                return -ENOMEM;
        for (size_t i = 0; i < from->n_files; i++) {
                bool have = false;

                for (size_t j = 0; j < rs->n_files && !have; j++)
                        have = rs->files[j].dev == from->files[i].dev && rs->files[j].ino == from->files[i].ino;
                if (have || from->files[i].n_ranges == 0)
                        continue;
                files[n] = from->files[i];
                for (size_t k = 0; k < files[n].n_ranges; k++) {
                        files[n].ranges[k].time_us = 0;
                        files[n].ranges[k].flags = RS_RANGE_ACCESSED;
                }
                from->files[i] = (struct rs_file){ .path = NULL };
                n++;
        }
        /* (what moved left from as empty entries, freed with it) */
        if (rs->n_files)
                memcpy(files + n, rs->files, rs->n_files * sizeof(*files));
        free(rs->files);
        rs->files = files;
        rs->n_files += n;
        rs->cap_files = cap;
        return (int)n;
}
