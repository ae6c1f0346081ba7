/* ollama_install.h - the `sunny-integrate ollama` job as a plan and a run (install_plan.h).
 *
 * sn_ollama_install_plan() decides the TEMPLATE (a family proven by rendering against the GGUF's Jinja,
 * a Go template file, or none for a server that renders the Jinja itself), writes the equivalent
 * Modelfile, probes the server (the create body follows its version: legacy before 0.5.5, split
 * shards from 0.30) and hashes the blobs: its plan lists the requests (what --dry-run prints).
 * sn_ollama_install_run() uploads every blob the server lacks, creates the model (retrying with
 * the legacy body when a dev build turns out to be older), verifies /api/show against what was sent,
 * compares the server's own rendering of a chat turn with the GGUF's Jinja, writes --modelfile-out,
 * and optionally generates once (--run) and runs the smoke gate (the server's tokens against sunny's
 * runtime, raw and through the installed template).
 *
 * The library never prints: status lines, warnings, the server's progress lines and upload bytes go
 * through the callbacks; the summary (what `--json` prints) is built in res->json, also on failure.
 * A failure because the options themselves are wrong (a usage error) has err->detail ==
 * SN_OLLAMA_BAD_OPTIONS (ollama.h). */
#ifndef SN_OLLAMA_INSTALL_H
#define SN_OLLAMA_INSTALL_H
#include "install_plan.h"
#include "sn_env.h"
#include "sn_err.h"
#include <cjson/cJSON.h>
#include <stdint.h>

typedef struct sn_ollama_install_opts {
    const char *gguf;          /* MODEL.gguf (the first part of a split GGUF) */
    const char *name;          /* NAME[:TAG], already checked with sn_ollama_check_name */
    const char *host;          /* OLLAMA_HOST forms; NULL: env's OLLAMA_HOST, else http://127.0.0.1:11434 */
    const sn_env *env;         /* the user's environment (OLLAMA_HOST, proxies), or NULL */
    const char *tmpl;          /* NULL/"auto", "jinja", FILE.jinja (proven), any other FILE (Go template) */
    int accept_diff;           /* auto with no family proven: install the nearest anyway */
    const char *system;        /* SYSTEM, or NULL */
    cJSON *params;             /* typed PARAMETERs (sn_ollama_param_add); the template's stops and
                                * parameters are added under the user's */
    const char *modelfile_out; /* written after a successful install or dry run, or NULL */
    const char *run_prompt;    /* generate once and report the answer, or NULL */
    int smoke, dry_run;
    int n_predict;             /* smoke: tokens to compare */
    int64_t seed, ctx;         /* smoke: seed, num_ctx */
    const char *prompt;        /* smoke prompt */
    int n_threads;             /* sunny's runtime in the smoke gate */
} sn_ollama_install_opts;

typedef struct sn_ollama_install_cb {
    void *ud;
    void (*line)(void *ud, const char *text);        /* one status line (may hold newlines) */
    void (*warn)(void *ud, const char *text);        /* a warning */
    void (*server_line)(void *ud, const char *text); /* the server's own status lines */
    void (*progress)(void *ud, uint64_t done, uint64_t total); /* upload bytes */
} sn_ollama_install_cb;

typedef struct sn_ollama_install_result {
    cJSON *json;  /* the summary object (caller frees), NULL only on OOM */
    int diverged; /* the smoke gate (raw or chat) found a difference */
} sn_ollama_install_result;

typedef struct sn_ollama_job sn_ollama_job; /* what the plan decided, for the run */

/* The plan: every decision and read, no change on the server. res->json gets the summary so far
 * (also on failure, except for usage errors). *job, on success, is freed with sn_ollama_job_free. */
sn_status sn_ollama_install_plan(const sn_ollama_install_opts *o, const sn_ollama_install_cb *cb,
                                 sn_ollama_job **job, sn_ollama_install_result *res, sn_err *err);
/* The requests the run would send, for --dry-run (cmd/ prints them). */
const sn_install_plan *sn_ollama_job_plan(const sn_ollama_job *job);
/* The run: the install (a dry run only adds the summary and writes --modelfile-out). */
sn_status sn_ollama_install_run(sn_ollama_job *job, const sn_ollama_install_cb *cb, sn_ollama_install_result *res,
                                sn_err *err);
void sn_ollama_job_free(sn_ollama_job *job);
/* Plan, then run, in one call (nothing rendered in between). */
sn_status sn_ollama_install(const sn_ollama_install_opts *o, const sn_ollama_install_cb *cb,
                            sn_ollama_install_result *res, sn_err *err);

#endif
