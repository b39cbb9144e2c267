/* SPDX-License-Identifier: MIT */
/* readset pack: a tree's image with the files a start reads first, in the
 * order it reads them (pack/image.h), and beside it the portable read set
 * that replays on every copy of that image (pack/portable.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "fs/checksum.h"
#include "model/format.h"
#include "pack/image.h"
#include "pack/portable.h"
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
               "  -o, --output IMG      the image (written aside, then renamed into place)\n"
               "      --order           print the sort file and stop\n"
               "      --portable        write only the portable read set, to -o OUT\n"
               "      --allow-untrusted as root, read a read set others can change\n"
               "  -h, --help            show this help\n");
}

enum { OPT_ORDER = 0x300, OPT_PORTABLE };

static void say_counts(const struct portable_counts *c)
{
        if (c->outside || c->unusable || c->not_files || c->not_read)
                log_info("left out: %" PRIu64 " file(s) outside the tree, %" PRIu64 " changed or unreadable, %" PRIu64
                         " only read ahead, %" PRIu64 " metadata or unresolved", c->outside, c->unusable, c->not_read,
                         c->not_files);
}

/* a new directory of readset's own beside path, for what is made before it
 * is renamed into place */
static char *private_dir_beside(const char *path)
{
        _cleanup_free_ char *copy = strdup(path);
        char *slash, *t = NULL;

        if (!copy)
                return NULL;
        slash = strrchr(copy, '/');
        if (asprintf(&t, "%s/.%s.pack.XXXXXX", slash ? (slash == copy ? "/" : (*slash = 0, copy)) : ".",
                     slash ? slash + 1 : copy) < 0)
                return NULL;
        if (!mkdtemp(t)) {
                free(t);
                return NULL;
        }
        return t;
}

static uint64_t newest;

static int see_mtime(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)path, (void)type, (void)ftw;
        if (st->st_mtim.tv_sec > 0 && (uint64_t)st->st_mtim.tv_sec > newest)
                newest = (uint64_t)st->st_mtim.tv_sec;
        return 0;
}

/* The newest mtime in the tree, in seconds (not across mounts). */
static int newest_mtime(const char *root, uint64_t *ret)
{
        newest = 0;
        if (nftw(root, see_mtime, 64, FTW_PHYS | FTW_MOUNT) < 0)
                return -errno;
        *ret = newest;
        return 0;
}

static int write_sort(FILE *f, void *userdata)
{
        void **a = userdata;
        struct pack_order_counts c;
        return pack_order_write(f, a[0], a[1], &c);
}

int cmd_pack(int argc, char **argv)
{
        static const struct option opts[] = {
                { "image", required_argument, NULL, 'i' },
                { "compress", required_argument, NULL, 'c' },
                { "block-size", required_argument, NULL, 'b' },
                { "output", required_argument, NULL, 'o' },
                { "order", no_argument, NULL, OPT_ORDER },
                { "portable", no_argument, NULL, OPT_PORTABLE },
                TRUST_LONG_OPTION,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_readset_ struct readset *rs = NULL, *p = NULL;
        _cleanup_free_ char *root = NULL, *dir = NULL, *img_tmp = NULL, *sort = NULL, *side = NULL;
        _cleanup_free_ uint8_t *enc = NULL;
        const char *arg_out = NULL, *env;
        int arg_image = -1, arg_comp = -1, c, r;
        uint32_t arg_block = DEFAULT_BLOCK;
        bool arg_order = false, arg_portable = false;
        struct portable_counts pc;
        struct pack_order_counts oc;
        struct pack_build b = { 0 };
        struct content_sum sum;
        struct stat st;
        size_t enc_len = 0;
        uint64_t epoch = 0;

        while ((c = getopt_long(argc, argv, "+i:c:b:o:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'i':
                        if ((arg_image = pack_image_from_name(optarg)) < 0)
                                return log_usage("pack", "unknown --image '%s' (squashfs, erofs)", optarg);
                        break;
                case 'c':
                        if ((arg_comp = pack_compress_from_name(optarg)) < 0)
                                return log_usage("pack", "unknown --compress '%s' (zstd, xz, lz4, gzip)", optarg);
                        break;
                case 'b': {
                        uint64_t v;
                        if (parse_size(optarg, &v) < 0 || v < 4096 || v > (1 << 20) || (v & (v - 1)))
                                return log_usage("pack", "invalid --block-size '%s' (4K to 1M, a power of two)", optarg);
                        arg_block = (uint32_t)v;
                        break;
                }
                case 'o': arg_out = optarg; break;
                case OPT_ORDER: arg_order = true; break;
                case OPT_PORTABLE: arg_portable = true; break;
                case CMD_OPT_ALLOW_UNTRUSTED: trust_allow_untrusted(); break;
                case 'h': pack_help(); return 0;
                default: return log_usage("pack", "invalid option");
                }
        }
        if (optind + 2 != argc)
                return log_usage("pack", optind + 2 > argc ? "missing ROOTDIR and read-set FILE" : "too many arguments");
        if (arg_order + arg_portable + (arg_image >= 0) != 1)
                return log_usage("pack", "one of --image, --order and --portable");
        if (!arg_order && !arg_out)
                return log_usage("pack", "missing -o");
        if (arg_order && arg_out)
                return log_usage("pack", "--order prints to standard output (no -o)");
        if (arg_image < 0 && arg_comp >= 0)
                return log_usage("pack", "--compress goes with --image");
        if (arg_comp < 0)
                arg_comp = arg_image == PACK_EROFS ? PACK_LZ4 : DEFAULT_COMPRESS;
        if (arg_image == PACK_EROFS && arg_comp != PACK_LZ4)
                return log_usage("pack", "erofs-utils 1.5 compresses with lz4 alone");

        root = realpath(argv[optind], NULL);
        if (!root)
                return log_errno(-errno, "cannot resolve '%s'", argv[optind]);
        if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
                return log_error("'%s' is not a directory", argv[optind]);
        if (cmd_load_readset(argv[optind + 1], &rs) < 0)
                return CMD_FAILED;
        if (readset_is_portable(rs))
                return log_error("'%s' is a portable read set already: pack takes the one recorded from the tree",
                                 argv[optind + 1]);
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
                                 argv[optind + 1], root);
        }

        if (arg_order) {
                r = pack_order_write(stdout, p, "", &oc);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
                if (r < 0)
                        return log_errno(r, "cannot write the order");
                if (oc.unnamable)
                        log_warning("%" PRIu64 " file(s) with a newline in the name left out", oc.unnamable);
                say_counts(&pc);
                return 0;
        }
        if (arg_portable) {
                r = format_write(p, arg_out);
                if (r < 0)
                        return log_errno(r, "cannot write '%s'", arg_out);
                log_info("%s: %zu file(s), relative to %s", arg_out, p->n_files, root);
                say_counts(&pc);
                return 0;
        }

        /* made in a directory of readset's own beside IMG, renamed over it
         * once whole: never written through a symlink, never half there */
        dir = private_dir_beside(arg_out);
        if (!dir)
                return log_errno(-errno, "cannot make a directory beside '%s'", arg_out);
        if (asprintf(&img_tmp, "%s/image", dir) < 0 || asprintf(&sort, "%s/sort", dir) < 0 ||
            asprintf(&side, "%s.readset", arg_out) < 0) {
                r = log_errno(-ENOMEM, "cannot make the paths");
                goto out;
        }
        {
                void *a[2] = { p, root };
                r = write_file_atomic(sort, 0600, write_sort, a);
                if (r < 0) {
                        log_errno(r, "cannot write the sort file");
                        goto out;
                }
        }
        /* reproducible: the image's own time is SOURCE_DATE_EPOCH, else the
         * recording's; mkfs.erofs 1.5 takes the time of every file from -T,
         * and keeps a file's own only below SOURCE_DATE_EPOCH: given the
         * newest of the tree, it clamps none */
        b.mkfs_time = (uint32_t)MIN(env ? epoch : rs->created_unix, (uint64_t)UINT32_MAX);
        if (arg_image == PACK_EROFS && !env) {
                char s[32];
                r = newest_mtime(root, &epoch);
                if (r < 0) {
                        log_errno(r, "cannot look through '%s'", root);
                        goto out;
                }
                snprintf(s, sizeof(s), "%" PRIu64, MAX(epoch, (uint64_t)1));
                if (setenv("SOURCE_DATE_EPOCH", s, 1) < 0) {
                        r = log_errno(-errno, "cannot set SOURCE_DATE_EPOCH");
                        goto out;
                }
        }
        r = format_encode(p, &enc, &enc_len);
        if (r >= 0)
                r = checksum_buf(enc, enc_len, &sum);
        if (r < 0) {
                log_errno(r, "cannot encode the portable read set");
                goto out;
        }
        memcpy(b.uuid, sum.d, sizeof(b.uuid));
        b.uuid[6] = (uint8_t)((b.uuid[6] & 0x0f) | 0x50);  /* a name-based UUID */
        b.uuid[8] = (uint8_t)((b.uuid[8] & 0x3f) | 0x80);
        b.image = (enum pack_image)arg_image;
        b.compress = (enum pack_compress)arg_comp;
        b.block_size = arg_block;
        b.tree = root;
        b.sort_file = arg_image == PACK_SQUASHFS ? sort : NULL;
        b.out = img_tmp;
        if (arg_image == PACK_EROFS)
                log_info("erofs-utils 1.5 cannot order an image's data: built in mkfs.erofs's own order");
        r = pack_build_image(&b);
        if (r == -ENOENT) {
                log_error("%s is not installed (apt-get install %s)", arg_image == PACK_EROFS ? "mkfs.erofs" : "mksquashfs",
                          arg_image == PACK_EROFS ? "erofs-utils" : "squashfs-tools");
                goto out;
        }
        if (r < 0) {
                log_error("the image tool failed; nothing written");
                goto out;
        }
        /* where in the image the start's bytes lie, for a replay of the
         * image itself (squashfs; metadata that readset can read) */
        if (arg_image == PACK_SQUASHFS) {
                r = pack_image_spans(img_tmp, p, &p->image);
                if (r == -EOPNOTSUPP)
                        log_info("%s keeps its metadata %s-compressed, which readset does not read: its read set "
                                 "replays the files, not the image", arg_out, pack_compress_name(b.compress));
                else if (r < 0) {
                        log_errno(r, "cannot read back the image just built");
                        goto out;
                }
        }
        /* the read set first: an image is never there without its read set */
        r = format_write(p, side);
        if (r < 0) {
                log_errno(r, "cannot write '%s'", side);
                goto out;
        }
        if (rename(img_tmp, arg_out) < 0) {
                r = log_errno(-errno, "cannot rename the image to '%s'", arg_out);
                goto out;
        }
        if (stat(arg_out, &st) == 0)
                log_info("%s: %.1f MB, %s; its first %zu file(s) in the order the start reads them; %s", arg_out,
                         (double)st.st_size / 1e6, pack_compress_name(b.compress),
                         arg_image == PACK_SQUASHFS ? MIN(p->n_files, (size_t)PACK_DISTINCT_PRIORITIES) : 0, side);
        say_counts(&pc);
        r = 0;
out:
        if (img_tmp)
                (void)unlink(img_tmp);
        if (sort)
                (void)unlink(sort);
        if (dir)
                (void)rmdir(dir);
        return r < 0 ? CMD_FAILED : 0;
}
