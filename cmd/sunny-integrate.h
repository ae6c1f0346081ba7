/* sunny-integrate.h - what the two source files of the sunny-integrate program share.
 *
 * sunny-integrate.c: output helpers, the ollama subcommand, main(); sunny-integrate-cmds.c: the
 * lmstudio, doctor, template and digest subcommands. Not a library header. */
#ifndef SN_SUNNY_INTEGRATE_H
#define SN_SUNNY_INTEGRATE_H
#include "install_plan.h"
#include "smoke.h"
#include "sn_env.h"
#include "sn_err.h"
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

extern int g_json;        /* --json: stdout carries only the final JSON; status goes to stderr */
extern sn_env g_env;      /* the user's environment, read once in main() (sn_cli_read_env) */
FILE *out_stream(void);   /* where status lines go: stdout, or stderr under --json */
/* A progress bar on stderr when it is a terminal; ud: its label (NULL: "uploading"). */
void progress_bar(void *ud, uint64_t done, uint64_t total);
/* A subcommand failure: message on stderr and under "error" in out; returns SN_EXIT_FAIL. */
int fail_json(const sn_err *err, cJSON *out);
/* --json: out on stdout (strings repaired to valid UTF-8). */
void print_json(cJSON *out);
/* A library's status line (to out_stream()) and warning (sn_cli_warnf), as callbacks. */
void say_line(void *ud, const char *text);
void say_warn(void *ud, const char *text);
/* --dry-run: an install's plan (install_plan.h), its steps indented. */
void print_plan(const sn_install_plan *p);
/* The smoke verdict line and its JSON form under "smoke" in out; returns 1 on divergence. */
int report_smoke(const sn_smoke_result *res, const char *server, cJSON *out);

/* sunny-integrate-source.c: the model to install. src a GGUF (and no outtype): itself; else an HF
 * folder, checkpoint or GGUF converted through the cache, gguf the cached file, *info its JSON
 * ("cache"). Returns 0, or the exit code after printing the error. */
typedef struct install_source { const char *src, *outtype, *keep, *config; } install_source;
int resolve_source(const install_source *s, char *gguf, size_t cap, cJSON **info);

/* sunny-integrate-cmds.c: each subcommand's help text and body (argv after the command name) */
void lms_usage(FILE *f);
int cmd_lmstudio(int argc, char **argv);
void doctor_usage(FILE *f);
int cmd_doctor(int argc, char **argv);
void template_usage(FILE *f);
int cmd_template(int argc, char **argv);
void digest_usage(FILE *f);
int cmd_digest(int argc, char **argv);

#endif
