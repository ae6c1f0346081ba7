/* generate.h - the generation loop every caller in the tree shares (sunny-run, the smoke gate).
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
    int64_t n_decode;  /* how many of those */
} sn_gen_times;

/* Generates at most n_predict tokens after prompt[0..n_prompt). sampler NULL = greedy (sn_argmax);
 * else each chosen token is also accepted into the sampler (its penalty history; the prompt's
 * tokens are the caller's to accept first).
 * logits: the caller's buffer of sn_model_n_vocab(m) floats; at the end it holds the logits that
 * chose the last token. times may be NULL. Returns the model's error, or on_token's status. */
sn_status sn_generate(sn_model *m, sn_sampler *sampler, const int32_t *prompt, int64_t n_prompt,
                      int64_t n_predict, float *logits, sn_gen_token_fn on_token, void *ud,
                      sn_gen_times *times, sn_err *err);

/* The k largest of x[0..n) in ids, largest first, ties to the lower index (so ids[0] is
 * sn_argmax's choice); returns min(k, n). Cost k passes over x: for small k. */
int sn_top_k(const float *x, int64_t n, int k, int32_t *ids);
#endif
