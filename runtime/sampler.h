/* sampler.h - choosing the next token from logits, as llama.cpp's sampler chain does.
 *
 * temp <= 0 is greedy: the first index of the largest logit (llama_sampler_greedy). Otherwise the
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
} sn_sampler_params;

typedef struct sn_sampler sn_sampler;

void sn_sampler_params_default(sn_sampler_params *p); /* greedy */
sn_status sn_sampler_new(const sn_sampler_params *p, sn_sampler **out, sn_err *err);
void sn_sampler_free(sn_sampler *s);
/* Returns the chosen token id (0 <= id < n_vocab). */
int32_t sn_sampler_sample(sn_sampler *s, const float *logits, int64_t n_vocab);
/* First index of the maximum. */
int32_t sn_argmax(const float *logits, int64_t n);

#endif
