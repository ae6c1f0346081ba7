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
                      const sn_gen_opts *opts, sn_gen_times *times, sn_err *err) {
    const sn_gen_opts o = opts ? *opts : (sn_gen_opts){0};
    sn_gen_times t = {0};
    const int64_t V = sn_model_n_vocab(m);
    double t0 = now_s();
    sn_status st = n_prompt > 0 ? sn_model_eval(m, prompt, n_prompt, logits, err) : SN_OK;
    t.prefill_s = now_s() - t0;
    int64_t left = o.ctx_left - n_prompt;
    for (int64_t n_out = 0; st == SN_OK && (n_predict < 0 || n_out < n_predict);) {
        if (o.ctx_left > 0 && left <= 0) {
            t.ctx_full = 1;
            break;
        }
        int32_t id = sampler ? sn_sampler_sample(sampler, logits, V) : sn_argmax(logits, V);
        if (sampler) sn_sampler_accept(sampler, id); /* the penalties' history, as llama.cpp's */
        n_out++;
        int r = on_token(ud, id, logits, V);
        if (r < 0) st = (sn_status)r;
        if (r < 0 || ((r != 0 || n_out == n_predict) && !o.feed_stop)) break;
        t0 = now_s();
        st = sn_model_eval(m, &id, 1, logits, err);
        t.decode_s += now_s() - t0;
        t.n_decode++;
        left--;
        if (r != 0 || n_out == n_predict) break; /* feed_stop: the last token is in the cache now */
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
