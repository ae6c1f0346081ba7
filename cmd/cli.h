/* cli.h - what the three programs share: error printing with the program name, exit codes,
 * strict number parsing for flags. Exit codes: 0 ok, 1 failure, 2 usage. */
#ifndef SN_CLI_H
#define SN_CLI_H
#include "env.h"
#include "sn_err.h"
#include <signal.h>
#include <stdint.h>

enum { SN_EXIT_OK = 0, SN_EXIT_FAIL = 1, SN_EXIT_USAGE = 2 };

/* Names the program (error messages start with it). */
void sn_cli_init(const char *prog);
const char *sn_cli_prog(void);
/* "prog: message" on stderr. */
void sn_cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sn_cli_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --json anywhere in argv: from then on the first error (sn_cli_errorf, sn_cli_fail,
 * sn_cli_usage_error) is also printed on stdout as {"error": {"message": ..., "exit_code": N,
 * "program": ...}}, so a script reading stdout always gets JSON; the exit code is unchanged. */
void sn_cli_json_errors(int argc, char **argv);
/* The program put the error into its own JSON record: print no second one. */
void sn_cli_json_error_done(void);
/* Prints err's message and returns SN_EXIT_FAIL. */
int sn_cli_fail(const sn_err *err);
/* Prints "prog: MSG\nTry 'prog --help'." and returns SN_EXIT_USAGE. */
int sn_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Strict parsers: whole string must be a number in range; return 0 on success, -1 otherwise. */
int sn_cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
int sn_cli_parse_f64(const char *s, double *out);
void sn_cli_print_version(void);
/* Subcommand whose help usage errors point at: "Try 'sunny-integrate ollama --help'." */
void sn_cli_set_subcommand(const char *sub);
/* Physical cores this process may run on (SMT siblings counted once), like llama.cpp's default
 * thread count; at least 1. */
int sn_cli_physical_cores(void);
int sn_cli_isatty_stderr(void);
/* SIGINT/SIGTERM set the returned flag (the libraries poll it as their `cancel` option, stop, and
 * remove their temp files); SIGXFSZ is ignored so a write over `ulimit -f` fails with EFBIG and is
 * reported like any write error instead of killing the process. */
volatile sig_atomic_t *sn_cli_catch_signals(void);
/* s with control characters (C0 but tab and newline, DEL, C1) written as \xNN, into buf: what untrusted text (tensor
 * names, file names, replies) becomes before it reaches a terminal. Returns buf. */
const char *sn_cli_clean(const char *s, char *buf, size_t cap);
/* Makes libcurl choose proxies from the environment as Ollama's Go client does (net/http's
 * ProxyFromEnvironment): HTTP_PROXY, HTTPS_PROXY and NO_PROXY win over their lowercase forms, and
 * HTTP_PROXY counts at all (libcurl reads only http_proxy); not in a CGI process (REQUEST_METHOD
 * set), where Go refuses HTTP_PROXY too. Loopback hosts are never proxied either way (http.c). */
void sn_cli_proxy_env_like_go(sn_cli_env *env); /* env (env.h): read by sn_cli_read_env, updated to match */
/* 128 + the signal that stopped the work, else fallback. */
int sn_cli_exit_code(int fallback);

/* A GGUF the runtime failed to load that is a mixture-of-experts model ({arch}.expert_count > 0) of
 * an architecture sunny-run does not run: err says so plainly, naming the ones it runs (instead of
 * the loader's "unsupported architecture"); otherwise err is left as it is. */
struct sn_gguf;
void sn_cli_moe_not_yet(const struct sn_gguf *g, const char *path, sn_err *err);

#endif
