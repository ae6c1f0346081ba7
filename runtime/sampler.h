/* sampler.h - choosing the next token from logits, as llama.cpp's sampler chain does.
 *
 * The repetition penalties come first, as in llama.cpp's default chain (llama_sampler_penalties):
 * each token seen among the last penalty_last_n accepted tokens (sn_sampler_accept: llama-cli
 * accepts the prompt's tokens too) gets its logit divided by penalty_repeat when positive,
 * multiplied when <= 0, then lowered by count * penalty_freq + penalty_present.
 * temp <= 0 is then greedy: the first index of the largest logit (llama_sampler_greedy). Otherwise the
 * chain is top-k -> top-p -> min-p -> temperature -> dist, each step written to the semantics of
 * llama.cpp's llama-sampler.cpp, and dist draws with a Mersenne Twister (mt19937, seeded with
 * `seed`) turned into a double in [0,1) the way libstdc++'s uniform_real_distribution does, so the
 * same seed picks the same token as llama.cpp when the logits agree. As in llama.cpp, the seed
 * SN_SAMPLER_SEED_RANDOM (LLAMA_DEFAULT_SEED, what `--seed -1` becomes there) means "any": the
 * generator is then seeded from the clock and runs are not repeatable. */
#ifndef SN_SAMPLER_H
#define SN_SAMPLER_H
#include "sn_err.h"
#include <stdint.h>

#define SN_SAMPLER_SEED_RANDOM 0xFFFFFFFFu

typedef struct sn_sampler_params {
    float temp;     /* <= 0: greedy */
    int32_t top_k;  /* <= 0: whole vocabulary, still sorted (node-llama-cpp's top-k = n_vocab) */
    float top_p;    /* >= 1: off */
    float min_p;    /* <= 0: off */
    uint32_t seed;  /* SN_SAMPLER_SEED_RANDOM: from the clock */
    int32_t penalty_last_n; /* tokens of history the penalties look at (0: penalties off) */
    float penalty_repeat;   /* 1: off; must be > 0 */
    float penalty_freq;     /* 0: off */
    float penalty_present;  /* 0: off */
} sn_sampler_params;

typedef struct sn_sampler sn_sampler;

void sn_sampler_params_default(sn_sampler_params *p); /* greedy, no penalties */
sn_status sn_sampler_new(const sn_sampler_params *p, sn_sampler **out, sn_err *err);
void sn_sampler_free(sn_sampler *s);
/* Adds a token to the penalties' history (the prompt's tokens, then each chosen one). */
void sn_sampler_accept(sn_sampler *s, int32_t id);
/* The penalties alone, in place (what sn_sampler_sample applies to a copy first). */
void sn_sampler_apply_penalties(const sn_sampler *s, float *logits, int64_t n);
/* Returns the chosen token id (0 <= id < n_vocab). Does not accept it. */
int32_t sn_sampler_sample(sn_sampler *s, const float *logits, int64_t n_vocab);
/* First index of the maximum. */
int32_t sn_argmax(const float *logits, int64_t n);

#endif
