/* smoke.h - the parity gate shared by the Ollama and LM Studio installs.
 *
 * An installed model is only proven right when the server, given the same prompt and greedy
 * sampling, produces the same tokens sunny's runtime produces on the same GGUF file (the server runs
 * llama.cpp; sunny's runtime is token-exact with llama.cpp by its own tests). This module runs our
 * side (prompt tokenized with add_special + parse_special as llama-server does, greedy argmax, stop
 * at end-of-generation tokens, recording the top-2 logit gap at each step) and compares the server's
 * answer: token ids when the server reports them, otherwise its text, position by position. A stop
 * string or EOG that ends the server's answer early is not a divergence. */
#ifndef SN_SMOKE_H
#define SN_SMOKE_H
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sn_smoke_local {
    int32_t *prompt_ids;
    size_t n_prompt;
    int32_t *ids;          /* generated ids (stops early at an EOG token, which is included) */
    size_t n;
    float *gap;            /* per step: top1 - top2 logit */
    int32_t *second;       /* per step: the runner-up id */
    float *max_abs;        /* per step: max |logit| */
    char **pieces;         /* per step: the bytes the token stands for (NUL-terminated) */
    char *text;            /* concatenated pieces */
    void *tok;             /* the tokenizer (sn_tokenizer*) for EOG checks; NULL = no EOG tokens */
} sn_smoke_local;

typedef struct sn_smoke_opts {
    const char *gguf_path;
    const char *prompt;
    int n_predict;
    int n_ctx;
    int n_threads;
} sn_smoke_opts;

/* Runs sunny's runtime. SN_EUNSUPPORTED when the runtime cannot run this GGUF (arch, type). */
sn_status sn_smoke_run_local(const sn_smoke_opts *o, sn_smoke_local *out, sn_err *err);
void sn_smoke_local_free(sn_smoke_local *l);

typedef struct sn_smoke_result {
    int n_expected;        /* tokens we generated */
    int n_compared;        /* positions compared */
    int n_identical;       /* leading positions identical */
    int diverged;          /* 1 = a real divergence */
    int tie;               /* diverged where our top-2 gap is < 1e-3 * max|logit| (reported, not fatal) */
    int pos;               /* first divergent position (0-based) when diverged/tie */
    float gap;             /* our top-2 gap there */
    int by_ids;            /* compared token ids (1) or text (0) */
    char server_stop[64];  /* why the server stopped early, "" if it did not */
    char prompt_diff[256]; /* the server tokenized the prompt differently (set by the caller via
                            * sn_smoke_prompt_check), "" when identical or unknown */
    char *ours_text;       /* malloc'd: our text */
    char *theirs_text;     /* malloc'd: the server's text */
} sn_smoke_result;

/* Compares. server_ids (the generated ids only) may be NULL; then server_text is used.
 * server_stopped: the server ended with a stop (done_reason "stop"/finish_reason "stop"). */
sn_status sn_smoke_compare(const sn_smoke_local *ours, const char *server_text,
                           const int32_t *server_ids, size_t n_server_ids, int server_stopped,
                           sn_smoke_result *res, sn_err *err);
void sn_smoke_result_free(sn_smoke_result *r);

/* Compares the server's prompt token ids with ours; on a difference records it in r->prompt_diff and
 * marks r as diverged (the server computes on different input: BOS handling, pre-tokenizer). */
void sn_smoke_prompt_check(const sn_smoke_local *ours, const int32_t *server_prompt, size_t n,
                           sn_smoke_result *r);

/* One line like "[smoke] OK: 32/32 tokens identical" or the divergence report (several lines),
 * written into buf. server_name e.g. "ollama". */
void sn_smoke_format(const sn_smoke_result *r, const char *server_name, char *buf, size_t cap);

#endif
