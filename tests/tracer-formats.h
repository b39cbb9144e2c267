/* SPDX-License-Identifier: MIT */
/* The text of events/header_page and of the four filemap events' format
 * files as this kernel writes them, for the tests and the fuzz target of
 * the binary ring-buffer decoder. */
#pragma once

static const char header_page[] =
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
        "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
        "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
        "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
               "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
               "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
               "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char fmt_get_pages[] = "name: mm_filemap_get_pages\nID: 599\nformat:\n" COMMON
        "\tfield:unsigned long i_ino;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:dev_t s_dev;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned long last_index;\toffset:32;\tsize:8;\tsigned:0;\n";
static const char fmt_map_pages[] = "name: mm_filemap_map_pages\nID: 598\nformat:\n" COMMON
        "\tfield:unsigned long i_ino;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:dev_t s_dev;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned long last_index;\toffset:32;\tsize:8;\tsigned:0;\n";
static const char fmt_fault[] = "name: mm_filemap_fault\nID: 597\nformat:\n" COMMON
        "\tfield:unsigned long i_ino;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:dev_t s_dev;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n";
static const char fmt_add[] = "name: mm_filemap_add_to_page_cache\nID: 600\nformat:\n" COMMON
        "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned long i_ino;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:dev_t s_dev;\toffset:32;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned char order;\toffset:36;\tsize:1;\tsigned:0;\n";
