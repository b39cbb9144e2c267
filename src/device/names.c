/* SPDX-License-Identifier: MIT */
#include "device/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "util/banned.h"

#ifndef READSET_PROFILEDIR
#define READSET_PROFILEDIR "/usr/local/share/readset/profiles"
#endif

/* The one table: every name any verb takes, in the order --help lists
 * them.  file: the profile in profiles/ (a kind's: the one it is costed
 * as); alias: the short name. */
static const struct {
        const char *name, *alias, *file;
        enum device_name_type type;
        bool rotational;
} names[] = {
        { "rotational", NULL, "hdd-7200", DEVICE_NAME_KIND, true },
        { "solid", NULL, "nvme", DEVICE_NAME_KIND, false },
        { "hdd-7200", "hdd", "hdd-7200", DEVICE_NAME_REFERENCE, true },
        { "usb2-bridge", "usb", "usb2-bridge", DEVICE_NAME_REFERENCE, false },
        { "sd-card", "sd", "sd-card", DEVICE_NAME_REFERENCE, false },
        { "nvme", NULL, "nvme", DEVICE_NAME_REFERENCE, false },
        { "share-2ms", "share", "share-2ms", DEVICE_NAME_REFERENCE, false },
        { "share-2ms-smb", NULL, "share-2ms-smb", DEVICE_NAME_REFERENCE, false },
        { "share-2ms-nfs", NULL, "share-2ms-nfs", DEVICE_NAME_REFERENCE, false },
};

void device_names_list(char *buf, size_t size)
{
        size_t n = 0;

        buf[0] = 0;
        for (size_t i = 0; i < ARRAY_SIZE(names) && n < size; i++) {
                int k = names[i].alias ?
                        snprintf(buf + n, size - n, "%s%s (%s)", i ? ", " : "", names[i].alias, names[i].name) :
                        snprintf(buf + n, size - n, "%s%s", i ? ", " : "", names[i].name);
                if (k < 0)
                        return;
                n += (size_t)k;
        }
}

/* The reference profiles beside the build being run: BUILD/../profiles. */
static bool beside_build(char *buf, size_t size)
{
        char *slash;
        ssize_t k = readlink("/proc/self/exe", buf, size > 16 ? size - 16 : 0);

        if (k <= 0)
                return false;
        buf[k] = 0;
        slash = strrchr(buf, '/');
        if (!slash)
                return false;
        snprintf(slash, size - (size_t)(slash - buf), "/../profiles");
        return true;
}

static bool in_dir(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(path, dir, n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/');
}

bool device_profile_is_reference(const char *path)
{
        char exe[PATH_MAX];

        return in_dir(path, READSET_PROFILEDIR) || (beside_build(exe, sizeof(exe)) && in_dir(path, exe));
}

/* STEM.json where the reference profiles are: 0, -ENOENT. */
static int find_profile(const char *stem, char *buf, size_t size)
{
        char exe[PATH_MAX];
        const char *dirs[3] = { getenv("READSET_PROFILE_DIR"), READSET_PROFILEDIR, NULL };
        int n;

        if (beside_build(exe, sizeof(exe)))
                dirs[2] = exe;
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                if (!dirs[i])
                        continue;
                n = snprintf(buf, size, "%s/%s.json", dirs[i], stem);
                if (n > 0 && (size_t)n < size && access(buf, R_OK) == 0)
                        return 0;
        }
        return -ENOENT;
}

static int as_given(const char *arg, struct device_name *ret)
{
        int n = snprintf(ret->path, sizeof(ret->path), "%s", arg);

        ret->type = DEVICE_NAME_FILE;
        return n < 0 || (size_t)n >= sizeof(ret->path) ? -ENAMETOOLONG : 0;
}

int device_name_parse(const char *arg, struct device_name *ret)
{
        size_t len = strlen(arg);

        *ret = (struct device_name){ .type = DEVICE_NAME_FILE };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                if (strcmp(arg, names[i].name) != 0 && !(names[i].alias && strcmp(arg, names[i].alias) == 0))
                        continue;
                ret->type = names[i].type;
                ret->rotational = names[i].rotational;
                /* (not installed: path "", the name still known; the
                 * planner needs only the kind, the cost model the file) */
                if (find_profile(names[i].file, ret->path, sizeof(ret->path)) < 0)
                        ret->path[0] = 0;
                return 0;
        }
        if (strchr(arg, '/') || (len >= 5 && strcmp(arg + len - 5, ".json") == 0))
                return as_given(arg, ret);
        if (len && find_profile(arg, ret->path, sizeof(ret->path)) == 0) {
                ret->type = DEVICE_NAME_REFERENCE;
                return 0;
        }
        if (len && access(arg, F_OK) == 0)
                return as_given(arg, ret);
        return -ENOENT;
}
