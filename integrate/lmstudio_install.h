/* lmstudio_install.h - the `sunny-integrate lmstudio` job as a plan and a run (install_plan.h), in
 * the style of ollama_install.h.
 *
 * sn_lms_install_plan() resolves LM Studio's models folder, validates the GGUF(s) and decides where
 * each file goes (its plan: "would <mode> SRC -> DST" per file, what --dry-run prints).
 * sn_lms_install_run() places the files, checks `lms ls` lists them, and with smoke loads the model
 * in the server and compares its greedy tokens with sunny's runtime (smoke.h). The library never
 * prints: lines and notes go through the callbacks, the summary (what --json prints) into res->json,
 * also on failure. */
#ifndef SN_LMSTUDIO_INSTALL_H
#define SN_LMSTUDIO_INSTALL_H
#include "install_plan.h"
#include "lmstudio.h"
#include "sn_env.h"
#include "sn_err.h"
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdint.h>

typedef struct sn_lms_install_opts {
    const char *gguf;        /* MODEL.gguf (the first part of a split GGUF) */
    const char *mmproj;      /* or NULL */
    const char *models_dir;  /* --models-dir, or NULL: resolved like lms */
    const char *publisher;   /* NULL -> "sunny-local" */
    const char *repo;        /* NULL -> "<general.name>-GGUF" */
    sn_lms_mode mode;
    int force, dry_run, smoke;
    const char *host;        /* smoke: the server, or NULL: the one lms would use */
    const char *prompt;      /* smoke prompt */
    int n_predict;
    int64_t seed, ctx;
    const sn_env *env;       /* HOME (the LM Studio home), PATH (lms), LM_API_TOKEN, proxies */
    volatile sig_atomic_t *cancel; /* non-zero (set by a signal handler) -> stop, remove what was placed */
} sn_lms_install_opts;

typedef struct sn_lms_install_cb {
    void *ud;
    void (*line)(void *ud, const char *text); /* one status line */
    sn_lms_note_fn note;                      /* notes and "warning: ..." lines */
    sn_http_progress_fn progress;             /* copy progress */
} sn_lms_install_cb;

typedef struct sn_lms_install_result {
    cJSON *json;  /* the summary object (caller frees), NULL only on OOM */
    int diverged; /* the smoke gate found a difference */
} sn_lms_install_result;

/* The smoke gate on a placed model: the server at host (NULL: the one lms would use, from dirs), its
 * greeting, the model loaded, sunny's greedy tokens for prompt against the server's (smoke.h); with
 * chat (a user turn), also sn_lms_chat_check. Results go into out; *diverged = 1 when either
 * comparison differs. */
typedef struct sn_lms_gate_opts {
    const char *host;
    const sn_lms_dirs *dirs;
    const sn_env *env;
    const char *prompt;
    int n_predict;
    int64_t seed, ctx;
    const char *chat; /* NULL: no chat turn */
} sn_lms_gate_opts;
sn_status sn_lms_smoke_gate(const sn_lms_gate_opts *g, const sn_lms_placed *pl, const sn_lms_install_cb *cb,
                            cJSON *out, int *diverged, sn_err *err);

typedef struct sn_lms_job sn_lms_job;

sn_status sn_lms_install_plan(const sn_lms_install_opts *o, const sn_lms_install_cb *cb, sn_lms_job **job,
                              sn_lms_install_result *res, sn_err *err);
const sn_install_plan *sn_lms_job_plan(const sn_lms_job *job);
sn_status sn_lms_install_run(sn_lms_job *job, const sn_lms_install_cb *cb, sn_lms_install_result *res, sn_err *err);
void sn_lms_job_free(sn_lms_job *job);
#endif
