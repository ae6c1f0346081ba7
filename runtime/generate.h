/* generate.h - the generation loop every caller in the tree shares (sunny-run, its chat, the smoke
 * gate).
 *
 * Evaluate the prompt, then repeat: choose a token from the last logits (the sampler, or greedy),
 * hand it to the caller, stop when the caller says so or n_predict tokens are out, else evaluate
 * the token. The caller decides what ends a generation (the tokenizer's end-of-generation tokens),
 * so this loop needs only the model. sn_top_k is the ranking both callers report from the logits. */
#ifndef SN_GENERATE_H
#define SN_GENERATE_H
#include "model.h"
#include "sampler.h"
#include "sn_err.h"
#include <stdint.h>

/* Called with each chosen token and the logits that chose it. Returns 0 to go on, > 0 to stop
 * after this token, < 0 (an sn_status, with the caller's own error record filled) to fail. */
typedef int (*sn_gen_token_fn)(void *ud, int32_t id, const float *logits, int64_t n_vocab);

typedef struct sn_gen_times {
    double prefill_s;  /* the prompt's evaluation */
    double decode_s;   /* all single-token evaluations */
    int64_t n_decode;  /* how many of those (the chosen tokens now in the cache) */
    int ctx_full;      /* 1: stopped because sn_gen_opts.ctx_left ran out */
} sn_gen_times;

/* How a generation continues a conversation (NULL: sn_generate's defaults, all 0). */
typedef struct sn_gen_opts {
    /* 1: the token that ends the generation (on_token's stop, or the n_predict-th) is evaluated
     * too, so the cache holds every chosen token and the next turn continues after it (a chat's
     * end-of-generation token, as llama.cpp's chat keeps it); 0: it is only reported. */
    int feed_stop;
    /* > 0: positions the cache has left before the prompt; the loop stops before choosing a token
     * when none is left (times->ctx_full). 0: no such bound (the caller sized n_predict). */
    int64_t ctx_left;
} sn_gen_opts;

/* Generates at most n_predict tokens (< 0: no limit) after prompt[0..n_prompt); n_prompt 0: after
 * what the cache holds, choosing the first token from the logits already in the buffer. sampler
 * NULL = greedy (sn_argmax); else each chosen token is also accepted into the sampler (its penalty
 * history; the prompt's tokens are the caller's to accept first).
 * logits: the caller's buffer of sn_model_n_vocab(m) floats; at the end it holds the logits that
 * chose the last token (with feed_stop: those after it). opts and times may be NULL. Returns the
 * model's error, or on_token's status. */
sn_status sn_generate(sn_model *m, sn_sampler *sampler, const int32_t *prompt, int64_t n_prompt,
                      int64_t n_predict, float *logits, sn_gen_token_fn on_token, void *ud,
                      const sn_gen_opts *opts, sn_gen_times *times, sn_err *err);

/* The k largest of x[0..n) in ids, largest first, ties to the lower index (so ids[0] is
 * sn_argmax's choice); returns min(k, n). Cost k passes over x: for small k. */
int sn_top_k(const float *x, int64_t n, int k, int32_t *ids);
#endif
