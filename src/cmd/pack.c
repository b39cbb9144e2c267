/* SPDX-License-Identifier: MIT */
/* readset pack: a tree's image with the files a start reads first, in the
 * order it reads them (pack/image.h), and beside it the portable read set
 * that replays on every copy of that image (pack/portable.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/progress.h"
#include "model/format.h"
#include "pack/image.h"
#include "pack/make.h"
#include "pack/portable.h"
#include "util/json.h"
#include "util/log.h"
#include "util/trust.h"
#include "util/util.h"
#include "util/banned.h"

/* bench/results/pack.md: the fastest cold start from an access-ordered
 * squashfs image on the emulated USB stick, SD card and disk */
#define DEFAULT_COMPRESS PACK_ZSTD
#define DEFAULT_BLOCK 0   /* mksquashfs's own: 128 KiB */

static void pack_help(void)
{
        printf("usage: readset pack --image squashfs|erofs [OPTIONS] -o IMG ROOTDIR FILE\n"
               "       readset pack --order ROOTDIR FILE\n"
               "       readset pack --portable -o OUT ROOTDIR FILE\n"
               "\n"
               "Build a compressed image of the tree ROOTDIR with the files the read set\n"
               "FILE (recorded from that tree) reads first, in the order it first needs\n"
               "them, then the rest of the tree: squashfs through mksquashfs -sort.  Beside\n"
               "IMG goes IMG.readset, a portable read set naming the files as they appear\n"
               "below the image's mount point and knowing them by content (size, mtime,\n"
               "the digest of the ranges read): replay it against any copy of the image\n"
               "with 'readset replay --root MOUNTPOINT IMG.readset' (or run --root); a\n"
               "file whose content differs there is skipped and counted.\n"
               "\n"
               "--order prints only the order, one 'NAME PRIORITY' line a file, NAME\n"
               "relative to ROOTDIR: a sort file for mksquashfs -sort.  --portable writes\n"
               "only the portable read set.\n"
               "\n"
               "EROFS (mkfs.erofs) is built in its own order: erofs-utils 1.5 has no\n"
               "ordering option, and lz4 alone.  Building twice gives the same bytes\n"
               "(the image's time is SOURCE_DATE_EPOCH, else the recording's).\n"
               "\n"
               "options:\n"
               "  -i, --image TYPE      squashfs or erofs\n"
               "  -c, --compress C      zstd (default: the fastest cold start measured on\n"
               "                        the emulated USB stick, SD card and 7200 rpm disk,\n"
               "                        bench/results/pack.md), xz, lz4 or gzip; erofs: lz4\n"
               "  -b, --block-size N    squashfs data blocks of N bytes (default 128K,\n"
               "                        mksquashfs's: the fastest start with readset run\n"
               "                        measured; 256K and 1M make smaller images)\n"
               "  -o, --output IMG      the image (written aside, then renamed into place)\n"
               "      --order           print the sort file and stop\n"
               "      --portable        write only the portable read set, to -o OUT\n"
               "  -j, --json            what was made as JSON on stdout (output, bytes,\n"
               "                        files, image_read_set)\n"
               "  -q, --quiet           no progress and no notes on stderr (errors and\n"
               "                        warnings still)\n"
               "      --allow-untrusted as root, read a read set others can change\n"
               "  -h, --help            show this help\n");
}

enum { OPT_ORDER = 0x300, OPT_PORTABLE };

static void say_counts(const struct portable_counts *c)
{
        if (c->outside || c->unusable || c->not_files || c->not_read)
                cmd_info_wrapped("left out: %" PRIu64 " file(s) outside the tree, %" PRIu64 " changed or unreadable, %" PRIu64
                         " only read ahead, %" PRIu64 " metadata or unresolved", c->outside, c->unusable, c->not_read,
                         c->not_files);
}

/* The options of readset pack, as getopt reads them (main.c lists them for
 * completion and the tests). */
const char pack_short_options[] = "+i:c:b:o:jqh";
const struct option pack_long_options[] = {
        { "image", required_argument, NULL, 'i' },
        { "compress", required_argument, NULL, 'c' },
        { "block-size", required_argument, NULL, 'b' },
        { "output", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, 'j' },
        { "quiet", no_argument, NULL, 'q' },
        { "order", no_argument, NULL, OPT_ORDER },
        { "portable", no_argument, NULL, OPT_PORTABLE },
        TRUST_LONG_OPTION,
        { "help", no_argument, NULL, 'h' },
        {}
};

struct pack_args {
        const char *out, *tree_arg, *rs_arg;
        int image, compress;      /* -1: not given */
        uint32_t block;
        bool order, portable, json;
};

static int parse_args(int argc, char **argv, struct pack_args *a)
{
        uint64_t v;
        int c;

        *a = (struct pack_args){ .image = -1, .compress = -1, .block = DEFAULT_BLOCK };
        while ((c = getopt_long(argc, argv, pack_short_options, pack_long_options, NULL)) >= 0) {
                switch (c) {
                case 'i':
                        if ((a->image = pack_image_from_name(optarg)) < 0)
                                return log_usage("pack", "unknown --image '%s' (squashfs, erofs)", optarg);
                        break;
                case 'c':
                        if ((a->compress = pack_compress_from_name(optarg)) < 0)
                                return log_usage("pack", "unknown --compress '%s' (zstd, xz, lz4, gzip)", optarg);
                        break;
                case 'b':
                        if (parse_size(optarg, &v) < 0 || v < 4096 || v > (1 << 20) || (v & (v - 1)))
                                return log_usage("pack", "invalid --block-size '%s' (4K to 1M, a power of two)", optarg);
                        a->block = (uint32_t)v;
                        break;
                case 'o': a->out = optarg; break;
                case 'j': a->json = true; break;
                case 'q': log_set_quiet(true); break;
                case OPT_ORDER: a->order = true; break;
                case OPT_PORTABLE: a->portable = true; break;
                case CMD_OPT_ALLOW_UNTRUSTED: trust_allow_untrusted(); break;
                case 'h': pack_help(); return 1;
                default: return CMD_OPTION_ERROR(pack, argc, argv);
                }
        }
        if (optind + 2 != argc)
                return log_usage("pack", optind + 2 > argc ? "missing ROOTDIR and read-set FILE" : "too many arguments");
        a->tree_arg = argv[optind];
        a->rs_arg = argv[optind + 1];
        if (a->order + a->portable + (a->image >= 0) != 1)
                return log_usage("pack", "one of --image, --order and --portable");
        if (!a->order && !a->out)
                return log_usage("pack", "missing -o");
        if (a->order && a->out)
                return log_usage("pack", "--order prints to standard output (no -o)");
        if (a->order && a->json)
                return log_usage("pack", "--order prints the sort file (no --json)");
        if (a->image < 0 && a->compress >= 0)
                return log_usage("pack", "--compress goes with --image");
        if (a->compress < 0)
                a->compress = a->image == PACK_EROFS ? PACK_LZ4 : DEFAULT_COMPRESS;
        if (a->image == PACK_EROFS && a->compress != PACK_LZ4)
                return log_usage("pack", "erofs-utils 1.5 compresses with lz4 alone");
        return 0;
}

static void say_tool_starts(const struct pack_make_options *o, void *userdata)
{
        (void)userdata;
        if (o->image == PACK_EROFS) {
                log_info("erofs-utils 1.5 cannot order an image's data:");
                log_info("  it is built in mkfs.erofs's own order");
        }
}

/* A portable read set written */
static void say_portable(const char *out, size_t n_files, const char *root)
{
        char p1[4 * PATH_MAX + 8], p2[4 * PATH_MAX + 8];

        cmd_info_wrapped("%s: %zu file(s), relative to %s", printable_elided(out, 50, p1, sizeof(p1)), n_files,
                         printable_elided(root, 50, p2, sizeof(p2)));
}

/* What pack_make() did, or why not.  CMD_FAILED, or 0. */
static int say_made(const struct pack_make_options *o, const struct pack_make_result *m)
{
        char out[4 * PATH_MAX + 8], side[4 * PATH_MAX + 8];

        printable_elided(o->out, 50, out, sizeof(out));
        printable_elided(m->side ? m->side : "", 60, side, sizeof(side));
        if (m->files_only)
                cmd_info_wrapped("%s keeps its metadata %s-compressed, which readset does not read: its read set "
                                 "replays the files, not the image", out, pack_compress_name(o->compress));
        switch (m->failed) {
        case PACK_MAKE_DONE:
                if (m->have_size)
                        cmd_info_wrapped("%s: %.1f MB, %s; its first %zu file(s) in the order the start reads them; %s",
                                         out,
                                 (double)m->size / 1e6, pack_compress_name(o->compress), m->ordered, side);
                return 0;
        case PACK_MAKE_INSIDE: return log_error("'%s' lies in the tree it would be made of", o->out);
        case PACK_MAKE_PRIVATE_DIR: return log_errno(m->error, "cannot make a directory beside '%s'", o->out);
        case PACK_MAKE_PATHS: return log_errno(m->error, "cannot make the paths");
        case PACK_MAKE_SORT: return log_errno(m->error, "cannot write the sort file");
        case PACK_MAKE_TREE: return log_errno(m->error, "cannot look through '%s'", o->root);
        case PACK_MAKE_EPOCH: return log_errno(m->error, "cannot set SOURCE_DATE_EPOCH");
        case PACK_MAKE_ENCODE: return log_errno(m->error, "cannot encode the portable read set");
        case PACK_MAKE_TOOL_MISSING: return log_error("%s is not installed (apt-get install %s)", m->tool, m->package);
        case PACK_MAKE_TOOL_FAILED: return log_error("the image tool failed; nothing written");
        case PACK_MAKE_TOOL_RUN: return log_errno(m->error, "cannot run the image tool; nothing written");
        case PACK_MAKE_READ_BACK: return log_errno(m->error, "cannot read back the image just built");
        case PACK_MAKE_WRITE_READSET: return log_errno(m->error, "cannot write '%s'", m->side);
        case PACK_MAKE_RENAME: return log_errno(m->error, "cannot rename the image to '%s'", o->out);
        }
        return log_errno(m->error, "cannot make '%s'", o->out);
}

/* --json: what was made, one object on stdout (image NULL: --portable;
 * m NULL then too) */
static void print_json(const struct pack_args *a, const char *root, const struct readset *p,
                       const struct pack_make_result *m, const struct portable_counts *c)
{
        struct json j;

        json_begin(&j, stdout, true);
        json_object_open(&j, NULL);
        json_string(&j, "root", root);
        json_string(&j, "read_set", a->rs_arg);
        json_string(&j, "output", a->out);
        if (m) {
                json_string(&j, "image_read_set", m->side);
                json_string(&j, "image_type", a->image == PACK_EROFS ? "erofs" : "squashfs");
                json_string(&j, "compress", pack_compress_name((enum pack_compress)a->compress));
                json_u64(&j, "bytes", m->have_size ? m->size : 0);
                json_u64(&j, "files_ordered", m->ordered);
                json_bool(&j, "replays_image", a->image == PACK_SQUASHFS && !m->files_only);
        }
        json_u64(&j, "files", p->n_files);
        json_u64(&j, "files_outside", c->outside);
        json_u64(&j, "files_unusable", c->unusable);
        json_u64(&j, "files_only_read_ahead", c->not_read);
        json_u64(&j, "files_metadata_or_unresolved", c->not_files);
        json_object_close(&j);
        json_end(&j);
}

/* The image of root with p's files first, and p beside it (with the
 * image's ranges), said (--json: printed, with c).  CMD_FAILED, said. */
static int make_image(const struct pack_args *a, const char *root, const struct readset *rs, struct readset *p,
                      int64_t epoch, const struct portable_counts *c)
{
        struct pack_make_options o = {
                .image = (enum pack_image)a->image, .compress = (enum pack_compress)a->compress,
                .block_size = a->block, .root = root, .out = a->out, .source_date_epoch = epoch,
                .created_unix = rs->created_unix, .tool_starts = say_tool_starts,
        };
        struct pack_make_result m;
        struct progress pg;
        int r;

        /* how far the image tool is, on a terminal */
        progress_start(&pg, "pack", false);
        o.progress = progress_report_to;
        o.progress_userdata = &pg;
        (void)pack_make(&o, p, &m);
        progress_done(&pg);
        if (a->json && m.failed == PACK_MAKE_DONE) {
                log_set_quiet(true);    /* (what say_made says is in the JSON) */
                print_json(a, root, p, &m, c);
        }
        r = say_made(&o, &m);
        pack_make_result_done(&m);
        return r < 0 ? CMD_FAILED : 0;
}

int cmd_pack(int argc, char **argv)
{
        _cleanup_readset_ struct readset *rs = NULL, *p = NULL;
        _cleanup_free_ char *root = NULL;
        struct portable_counts pc;
        struct pack_order_counts oc;
        struct pack_args a;
        const char *env;
        struct stat st;
        uint64_t epoch = 0;
        int r;

        r = parse_args(argc, argv, &a);
        if (r != 0)
                return r > 0 ? 0 : r;
        root = realpath(a.tree_arg, NULL);
        if (!root)
                return log_errno(-errno, "cannot resolve '%s'", a.tree_arg);
        if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
                return log_error("'%s' is not a directory", a.tree_arg);
        if (cmd_load_readset(a.rs_arg, &rs) < 0)
                return CMD_FAILED;
        if (readset_is_portable(rs))
                return log_error("'%s' is a portable read set already: pack takes the one recorded from the tree",
                                 a.rs_arg);
        /* the image tools clamp later mtimes to SOURCE_DATE_EPOCH: so
         * does the portable read set */
        env = getenv("SOURCE_DATE_EPOCH");
        if (env && (parse_u64(env, &epoch) < 0 || epoch > UINT32_MAX))
                return log_error("invalid SOURCE_DATE_EPOCH '%s'", env);
        r = portable_make(rs, root, env ? (int64_t)epoch : -1, &p, &pc);
        if (r == -ELIBACC)
                return log_error("cannot make digests: OpenSSL's libcrypto is not installed");
        if (r < 0)
                return log_errno(r, "cannot make the portable read set");
        if (p->n_files == 0) {
                say_counts(&pc);
                return log_error("no file of '%s' lies below '%s' as recorded (was it recorded from that tree?)",
                                 a.rs_arg, root);
        }
        if (a.order) {
                r = pack_order_write(stdout, p, "", &oc);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
                if (r < 0)
                        return log_errno(r, "cannot write the order");
                if (oc.unnamable)
                        log_warning("%" PRIu64 " file(s) with a newline in the name left out", oc.unnamable);
        } else if (a.portable) {
                r = format_write(p, a.out);
                if (r < 0)
                        return log_errno(r, "cannot write '%s'", a.out);
                if (a.json)
                        print_json(&a, root, p, NULL, &pc);
                else
                        say_portable(a.out, p->n_files, root);
        } else if ((r = make_image(&a, root, rs, p, env ? (int64_t)epoch : -1, &pc)) < 0)
                return r;
        if (!a.json)
                say_counts(&pc);
        return 0;
}
