/* SPDX-License-Identifier: MIT */
/* readset record: run a command and record the read set of its start. */
#include <getopt.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/record-cli.h"
#include "model/format.h"
#include "record/recorder.h"
#include "util/child.h"
#include "util/util.h"
#include "util/banned.h"

static void record_help(void)
{
        printf("usage: readset record [OPTIONS] -- CMD [ARGS...]\n"
               "\n"
               "Run CMD and record every file page it and its descendants access\n"
               "(read(2), mmap faults) or bring into the page cache, the filesystem\n"
               "metadata read for them, and the path lookups they make.  Needs root.\n"
               "Exits with CMD's exit status.\n"
               "\n"
               "options:\n"
               "  -o, --output FILE      where to write the read set (default: CMD.readset)\n"
               "  -a, --system-wide      record every process, not only CMD's, for as long\n"
               "                         as CMD runs (e.g. -- sleep 10)\n"
               "      --cold             drop the page cache first (sync; drop_caches)\n"
               "      --buffer-size KB   trace buffer per CPU (default %d)\n"
               "      --no-lookups       do not trace path lookups (open, stat, ...)\n"
               "      --max-walk N       directory entries the fallback path search may\n"
               "                         visit (default %d)\n"
               "  -q, --quiet            no summary on stderr\n"
               "  -j, --json             the summary as one JSON object on stderr\n"
               "      --fallback-run     if tracing cannot be set up, run CMD unrecorded\n"
               "  -h, --help             show this help\n",
               RECORDER_DEFAULT_BUFFER_KB, RECORDER_DEFAULT_MAX_WALK);
}

/* The options of readset record, as getopt reads them (main.c lists them for
 * completion and the tests). */
const char record_short_options[] = "+o:aqjh";
const struct option record_long_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "system-wide", no_argument, NULL, 'a' },
        { "cold", no_argument, NULL, 'C' },
        { "buffer-size", required_argument, NULL, 'B' },
        { "no-lookups", no_argument, NULL, 'L' },
        { "max-walk", required_argument, NULL, 'W' },
        { "quiet", no_argument, NULL, 'q' },
        { "json", no_argument, NULL, 'j' },
        { "fallback-run", no_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        {}
};

int cmd_record(int argc, char **argv)
{
        struct recorder_options ro = { .buffer_kb = RECORDER_DEFAULT_BUFFER_KB, .lookups = true,
                                       .max_walk = RECORDER_DEFAULT_MAX_WALK, .clients = true };
        _cleanup_free_ char *arg_output = NULL;
        _cleanup_readset_ struct readset *rs = NULL;
        bool arg_cold = false, arg_quiet = false, arg_json = false, arg_fallback = false, arg_all = false;
        struct recorder *rec = NULL;
        struct recorder_status rst;
        struct child child = { .pid = -1 };
        const char *what = NULL;
        int c, r, code, exec_errno;
        char **cmd;

        while ((c = getopt_long(argc, argv, record_short_options, record_long_options, NULL)) >= 0) {
                switch (c) {
                case 'o':
                        free(arg_output);
                        if (!(arg_output = strdup(optarg)))
                                return log_errno(-ENOMEM, "out of memory");
                        break;
                case 'a': arg_all = true; break;
                case 'C': arg_cold = true; break;
                case 'B':
                        if (parse_u64(optarg, &ro.buffer_kb) < 0 || ro.buffer_kb < 64 || ro.buffer_kb > (1u << 22))
                                return log_usage("record", "invalid --buffer-size '%s' (64..4194304 KiB)", optarg);
                        break;
                case 'L': ro.lookups = false; break;
                case 'W':
                        if (parse_u64(optarg, &ro.max_walk) < 0)
                                return log_usage("record", "invalid --max-walk '%s'", optarg);
                        break;
                case 'q':
                        arg_quiet = true;
                        log_set_quiet(true);
                        break;
                case 'j': arg_json = true; break;
                case 'F': arg_fallback = true; break;
                case 'h': record_help(); return 0;
                default: return CMD_OPTION_ERROR(record, argc, argv);
                }
        }
        if (optind >= argc)
                return log_usage("record", "missing command to record (readset record -- CMD ARGS...)");
        cmd = argv + optind;
        if (!arg_output && !(arg_output = record_default_output(cmd)))
                return log_errno(-ENOMEM, "out of memory");
        if (geteuid() != 0) {
                if (!arg_fallback)
                        return log_error("recording needs root (tracefs, fanotify and BPF); try 'sudo readset "
                                         "record ...'");
                log_warning("recording needs root (tracefs, fanotify and BPF); running '%s' unrecorded", cmd[0]);
                return record_exec_unrecorded(cmd);
        }
        /* where the recording goes, known writable before the command
         * runs: its recording and its exit status are not lost after */
        if ((r = write_file_atomic_check(arg_output)) < 0)
                return log_errno(r, "cannot write '%s'", arg_output);
        if (arg_cold && (r = drop_caches()) < 0)
                return log_errno(r, "cannot drop the page cache (/proc/sys/vm/drop_caches)");

        /* the command's process first, while readset is small and forks
         * fast; it waits at the gate until everything follows it */
        r = child_start(&child, cmd, true);
        if (r < 0) {
                log_errno(r, "cannot fork");
                return arg_fallback ? record_exec_unrecorded(cmd) : CMD_FAILED;
        }
        ro.pid = arg_all ? 0 : child.pid;
        r = recorder_open(&ro, &rec, &what);
        if (r >= 0) {
                recorder_get_status(rec, &rst);
                say_recorder_warnings(&rst, true);
                if ((r = recorder_start(rec)) < 0)
                        what = "tracing";
        }
        if (r < 0) {
                /* the command has not started: it runs unrecorded, or not at all */
                say_recorder_setup_failed(r, what, arg_fallback);
                recorder_free(rec);
                if (arg_fallback) {
                        log_warning("cannot record here; running '%s' unrecorded", cmd[0]);
                        r = child_release(&child);
                        r = r < 0 ? log_errno(r, "cannot start the command") : record_wait_unrecorded(&child, cmd);
                } else {
                        child_kill(&child);
                        r = CMD_FAILED;
                }
                child_close(&child);
                return r;
        }
        r = child_release(&child);
        if (r < 0) {
                child_kill(&child);
                child_close(&child);
                recorder_free(rec);
                return log_errno(r, "cannot start the command");
        }
        r = child_wait(&child);
        if (r < 0)
                child_kill(&child);
        code = child_exit_code(&child, &exec_errno);
        if (r < 0)
                r = log_errno(r, "cannot wait for the command");
        else if ((r = recorder_stop(rec)) < 0)
                r = log_errno(r, "cannot read trace events");
        else if (exec_errno) {
                log_errno(-exec_errno, "cannot run '%s'", cmd[0]);
                r = code;
        } else if ((r = recorder_finish(rec, &rs)) < 0)
                r = log_errno(r, "cannot build the read set");
        else if ((r = record_describe(rs, cmd, arg_cold)) < 0)
                r = log_errno(r, "out of memory");
        else if ((r = format_write(rs, arg_output)) < 0)
                r = log_errno(r, "cannot write '%s'", arg_output);
        else {
                recorder_get_status(rec, &rst);
                say_recorder_warnings(&rst, false);
                say_recorded(rs, &rst, arg_output, arg_quiet, arg_json);
                r = code;       /* the command's status, whatever signal readset saw and passed on */
        }
        recorder_free(rec);
        child_close(&child);
        return r;
}
