/* generate.c - the shared generation loop and top-k ranking (see generate.h). */
#include "generate.h"

#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

sn_status sn_generate(sn_model *m, sn_sampler *sampler, const int32_t *prompt, int64_t n_prompt,
                      int64_t n_predict, float *logits, sn_gen_token_fn on_token, void *ud,
                      sn_gen_times *times, sn_err *err) {
    sn_gen_times t = {0};
    const int64_t V = sn_model_n_vocab(m);
    double t0 = now_s();
    sn_status st = sn_model_eval(m, prompt, n_prompt, logits, err);
    t.prefill_s = now_s() - t0;
    for (int64_t n_out = 0; st == SN_OK && n_out < n_predict;) {
        int32_t id = sampler ? sn_sampler_sample(sampler, logits, V) : sn_argmax(logits, V);
        if (sampler) sn_sampler_accept(sampler, id); /* the penalties' history, as llama.cpp's */
        n_out++;
        int r = on_token(ud, id, logits, V);
        if (r < 0) st = (sn_status)r;
        if (r != 0 || n_out == n_predict) break;
        t0 = now_s();
        st = sn_model_eval(m, &id, 1, logits, err);
        t.decode_s += now_s() - t0;
        t.n_decode++;
    }
    if (times) *times = t;
    return st;
}

int sn_top_k(const float *x, int64_t n, int k, int32_t *ids) {
    int nt = 0;
    for (; nt < k && nt < n; nt++) {
        int32_t best = -1;
        for (int64_t i = 0; i < n; i++) {
            int used = 0;
            for (int j = 0; j < nt; j++) used |= ids[j] == i;
            if (!used && (best < 0 || x[i] > x[best])) best = (int32_t)i;
        }
        ids[nt] = best;
    }
    return nt;
}
