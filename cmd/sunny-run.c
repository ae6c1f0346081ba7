/* sunny-run.c - placeholder main until the run issue fills it in. */
#include "cli.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    sn_cli_init("sunny-run");
    if (argc > 1 && strcmp(argv[1], "--version") == 0) { sn_cli_print_version(); return 0; }
    return sn_cli_usage_error("not implemented yet");
}
