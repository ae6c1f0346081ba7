/* cli.c - shared helpers of the three programs (see cli.h). */
#include "cli.h"
#include "gguf.h"
#include "env.h"
#include "model.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_prog = "sunny";
static const char *g_sub = NULL;
static int g_json_err = 0, g_json_done = 0;

void sn_cli_json_errors(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json")) g_json_err = 1;
}

void sn_cli_json_error_done(void) { g_json_done = 1; }

/* {"error": {...}} on stdout, once, when --json was given (messages are ASCII-escaped JSON) */
static void json_error(int exit_code, const char *fmt, va_list ap) {
    if (!g_json_err || g_json_done) return;
    g_json_done = 1;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fputs("{\"error\": {\"message\": \"", stdout);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    printf("\", \"exit_code\": %d, \"program\": \"%s%s%s\"}}\n", exit_code, g_prog, g_sub ? " " : "", g_sub ? g_sub : "");
    fflush(stdout);
}

void sn_cli_set_subcommand(const char *sub) { g_sub = sub; }

static volatile sig_atomic_t g_cancel = 0;
static void on_signal(int sig) { g_cancel = sig; }

volatile sig_atomic_t *sn_cli_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGXFSZ, SIG_IGN);
    return &g_cancel;
}

/* golang.org/x/net/http/httpproxy: FromEnvironment reads getEnvAny("HTTP_PROXY", "http_proxy"),
 * ("HTTPS_PROXY", "https_proxy"), ("NO_PROXY", "no_proxy"), and proxyForURL refuses HTTP_PROXY when
 * CGI (REQUEST_METHOD set); useProxy never proxies "localhost" or a loopback IP. libcurl reads the
 * lowercase names first (http_proxy only in lowercase), so the uppercase choice is copied down. */
void sn_cli_proxy_env_like_go(sn_cli_env *e) {
    const struct { const char *upper, *lower_name; const char **lower; } pairs[] = {
        {e->HTTP_PROXY, "http_proxy", &e->lib.http_proxy},
        {e->lib.HTTPS_PROXY, "https_proxy", &e->lib.https_proxy},
        {e->lib.NO_PROXY, "no_proxy", &e->lib.no_proxy},
    };
    const char *cgi = e->request_method;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const char *v = pairs[i].upper;
        if (!v || !*v) continue;
        if (i == 0 && cgi && *cgi) { /* httpoxy: a CGI request can set HTTP_PROXY through a header */
            unsetenv("http_proxy");
            *pairs[i].lower = NULL;
            continue;
        }
        setenv(pairs[i].lower_name, v, 1); /* for libcurl */
        *pairs[i].lower = v;                /* and for the copy integrate/ reads */
    }
}

int sn_cli_exit_code(int fallback) { return g_cancel ? 128 + (int)g_cancel : fallback; }

void sn_cli_init(const char *prog) { g_prog = prog; }
const char *sn_cli_prog(void) { return g_prog; }

const char *sn_cli_clean(const char *s, char *buf, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    if (!cap) return "";
    for (const unsigned char *p = (const unsigned char *)s; *p && k + 5 < cap; p++) {
        /* C0 controls but tab and newline, DEL, and C1 controls (C2 80..C2 9F in UTF-8) become \xNN */
        int c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
        if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f || c1) {
            if (c1) p++;
            buf[k++] = '\\';
            buf[k++] = 'x';
            buf[k++] = hex[*p >> 4];
            buf[k++] = hex[*p & 15];
        } else {
            buf[k++] = (char)*p;
        }
    }
    buf[k] = 0;
    return buf;
}

/* "prog: LEAD<message>TAIL" on stderr, TAIL ending the line; the message's control characters
 * (from file names, tensor names, server replies) are shown escaped, never sent to the terminal */
static void vreport(const char *lead, const char *tail, const char *fmt, va_list ap) {
    char msg[4096], clean[4 * sizeof msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "%s: %s%s%s", g_prog, lead, sn_cli_clean(msg, clean, sizeof clean), tail);
}

void sn_cli_errorf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport("", "\n", fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    json_error(SN_EXIT_FAIL, fmt, ap);
    va_end(ap);
}

void sn_cli_warnf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport("warning: ", "\n", fmt, ap);
    va_end(ap);
}

int sn_cli_fail(const sn_err *err) {
    sn_cli_errorf("%s", err && err->msg[0] ? err->msg : "failed");
    return SN_EXIT_FAIL;
}

int sn_cli_usage_error(const char *fmt, ...) {
    char tail[160];
    snprintf(tail, sizeof tail, "\nTry '%s%s%s --help'.\n", g_prog, g_sub ? " " : "", g_sub ? g_sub : "");
    va_list ap;
    va_start(ap, fmt);
    vreport("", tail, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    json_error(SN_EXIT_USAGE, fmt, ap);
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

/* One thread per physical core: CPUs in our affinity mask, counted once per distinct
 * thread_siblings_list (the set of hardware threads sharing that core). */
int sn_cli_physical_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (int)n : 1;
    }
    enum { MAXC = 1024 };
    static char seen[MAXC][64];
    int n_seen = 0, n_cpu = 0;
    for (int c = 0; c < CPU_SETSIZE && c < MAXC; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        n_cpu++;
        char path[96], sib[64] = {0};
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
        FILE *f = fopen(path, "r");
        if (!f) return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1; /* no topology: every CPU counts */
        if (!fgets(sib, sizeof sib, f)) sib[0] = 0;
        fclose(f);
        int dup = 0;
        for (int i = 0; i < n_seen && !dup; i++) dup = strcmp(seen[i], sib) == 0;
        if (!dup) snprintf(seen[n_seen++], sizeof seen[0], "%s", sib);
    }
    return n_seen > 0 ? n_seen : (n_cpu > 0 ? n_cpu : 1);
}

void sn_cli_moe_not_yet(const sn_gguf *g, const char *path, sn_err *err) {
    char *arch = sn_gguf_str_dup(g, "general.architecture");
    char key[96];
    snprintf(key, sizeof key, "%s.expert_count", arch ? arch : "");
    const int64_t i = arch && !sn_model_arch_supported(arch) ? sn_gguf_find_key(g, key) : -1;
    if (i >= 0 && sn_gguf_kv_type(g, i) == SN_GGUF_U32 && sn_gguf_get_u32(g, i) > 0)
        sn_err_set(err, SN_EUNSUPPORTED, "%s: mixture-of-experts architecture %s (%u experts) is not supported by "
                   "sunny-run (it runs %s); llama.cpp runs the GGUF sunny-convert wrote", path, arch,
                   sn_gguf_get_u32(g, i), sn_model_supported_archs());
    free(arch);
}
