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
#include "cpu.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sn_smoke_local {
    int32_t *prompt_ids;
    size_t n_prompt;
    int32_t *ids;          /* generated ids (stops early at an EOG token, which is included) */
    size_t n;
    float *gap;            /* per step: top1 - top2 logit */
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
    const sn_tuning *tuning; /* the model's (sn_env.tuning), NULL: CPUID's defaults */
} sn_smoke_opts;

/* Runs sunny's runtime. SN_EUNSUPPORTED when the runtime cannot run this GGUF (arch, type). */
sn_status sn_smoke_run_local(const sn_smoke_opts *o, sn_smoke_local *out, sn_err *err);
void sn_smoke_local_free(sn_smoke_local *l);

/* The smoke gate's tie rule, in one place: a step where the top-2 gap (logits, or log-probabilities:
 * the difference is the same) is below SN_SMOKE_TIE_REL x max|logit| of that step is a numerical tie,
 * where a different argmax is not evidence of a different computation. A mismatch is a tie only if
 * every gap that is known at that step (ours, and the server's own when it reports logprobs) is tied. */
#define SN_SMOKE_TIE_REL 1e-3f
int sn_smoke_tied(float gap, float max_abs);

/* One generated token as the server reports it (Ollama >= 0.12.11 logprobs, OpenAI-style logprobs). */
typedef struct sn_smoke_token {
    char *text;            /* the token's text (malloc'd); the server may have replaced bytes that are
                            * not valid UTF-8 with U+FFFD or dropped an incomplete trailing character */
    double logprob;
    double gap;            /* the server's top-1 minus top-2 log-probability there; NAN if unknown */
} sn_smoke_token;
void sn_smoke_tokens_free(sn_smoke_token *t, size_t n);

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
    char method[96];       /* how the server's answer was compared, e.g. "logprobs (token by token)" */
    int truncated;         /* the server's reply ended without done/done_reason (Ollama's repetition
                            * abort): the tokens it sent were compared, the rest is unproven */
    float server_gap;      /* the server's own top-2 logprob gap at pos; NAN when unknown */
    char ours_tok[96];     /* the first differing token, both sides, quoted ("" when none) */
    char theirs_tok[96];
    char context_note[320]; /* the re-tokenized context check: what was compared, or why not */
    char scope[96];        /* which comparison, printed after "[smoke] " (e.g. "chat through the
                            * installed template: "); "" for the raw one. Set by the caller. */
    long text_byte;        /* text comparison that diverged: the byte of sunny's text where the two
                            * texts first differ (its token is pos); -1 otherwise */
} sn_smoke_result;

/* Compares. server_ids (the generated ids only) may be NULL; then server_text is used.
 * server_stopped: the server ended with a stop (done_reason "stop"/finish_reason "stop"). */
sn_status sn_smoke_compare(const sn_smoke_local *ours, const char *server_text,
                           const int32_t *server_ids, size_t n_server_ids, int server_stopped,
                           sn_smoke_result *res, sn_err *err);
void sn_smoke_result_free(sn_smoke_result *r);

/* Token by token against the server's own generated tokens (toks, n of them): token i must have our
 * token i's text (bytes that are not valid UTF-8 on our side may come back as U+FFFD or be dropped).
 * server_stopped: it ended with a stop; truncated: it ended without saying why (see .truncated). */
sn_status sn_smoke_compare_tokens(const sn_smoke_local *ours, const sn_smoke_token *toks, size_t n,
                                  int server_stopped, int truncated, sn_smoke_result *res, sn_err *err);

/* Ollama's "context" is Tokenize(prompt + response): the whole text re-tokenized without BOS, not the
 * ids it computed on, so the prompt/answer boundary may merge differently. This checks it against
 * sunny's tokenizer on exactly that text (add_special off, special tokens parsed): equal ids mean both
 * tokenizers agree on prompt and answer; a difference is recorded in r->prompt_diff (diverged). */
sn_status sn_smoke_context_check(const sn_smoke_local *ours, const char *rendered_prompt,
                                 const char *server_text, const int32_t *ctx, size_t n,
                                 sn_smoke_result *r, sn_err *err);

/* The server says it evaluated n prompt tokens (prompt_eval_count); a different count than ours means it
 * computed on different input (BOS handling, pre-tokenizer): recorded in r->prompt_diff (diverged). */
void sn_smoke_prompt_count_check(const sn_smoke_local *ours, int64_t n, sn_smoke_result *r);

/* Compares the server's prompt token ids with ours; on a difference records it in r->prompt_diff and
 * marks r as diverged (the server computes on different input: BOS handling, pre-tokenizer). */
void sn_smoke_prompt_check(const sn_smoke_local *ours, const int32_t *server_prompt, size_t n,
                           sn_smoke_result *r);

/* One line like "[smoke] OK: 32/32 tokens identical" or the divergence report (several lines),
 * written into buf. server_name e.g. "ollama". */
void sn_smoke_format(const sn_smoke_result *r, const char *server_name, char *buf, size_t cap);

/* The verdict as JSON under "smoke" (or "smoke_chat" when r->scope is set) in OUT; returns 1 when
 * r diverged. */
struct cJSON;
int sn_smoke_result_json(const sn_smoke_result *r, struct cJSON *out);

#endif
