/* cli.c - shared helpers of the three programs (see cli.h). */
#include "cli.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *g_prog = "sunny";

void sn_cli_init(const char *prog) { g_prog = prog; }
const char *sn_cli_prog(void) { return g_prog; }

void sn_cli_errorf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void sn_cli_warnf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: warning: ", g_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int sn_cli_fail(const sn_err *err) {
    sn_cli_errorf("%s", err && err->msg[0] ? err->msg : "failed");
    return SN_EXIT_FAIL;
}

int sn_cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", g_prog);
    va_end(ap);
    return SN_EXIT_USAGE;
}

int sn_cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int sn_cli_parse_f64(const char *s, double *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

void sn_cli_print_version(void) { printf("%s %s\n", g_prog, SN_VERSION); }

int sn_cli_isatty_stderr(void) { return isatty(2); }
