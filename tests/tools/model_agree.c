/* model_agree.c - how closely a candidate model file follows a reference over a greedy run:
 *   model_agree REF (GGUF|blob) CAND (GGUF|blob) --prompt-ids 1,2,3 [-n 256] [-t 2]
 * The reference generates greedily; the candidate is fed the reference's tokens (teacher forcing)
 * so every step compares the same context. Prints JSON: top-1 agreement (steps where the candidate's
 * argmax equals the reference's), the mean and max relative logit error ||l_c − l_r|| / ||l_r||, the
 * mean KL divergence KL(P_ref || P_cand) of the softmax distributions in nats (llama-perplexity's
 * --kl-divergence measure), the reference's mean entropy and top-1 probability (how peaked its
 * predictions are: a KL means little on a near-uniform model), and the number of steps. Used for the INT4 quality table in docs/PERFORMANCE.md and the blob tests. */
#include "model.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int argmax(const float *v, int64_t n) {
    int64_t b = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[b]) b = i;
    return (int)b;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s REF CAND --prompt-ids 1,2,3 [-n N] [-t T]\n", argv[0]);
        return 2;
    }
    const char *ids_s = NULL;
    int n = 256, threads = 2;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--prompt-ids") && i + 1 < argc) ids_s = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    if (!ids_s || n < 1) { fprintf(stderr, "need --prompt-ids and n >= 1\n"); return 2; }
    int32_t prompt[512];
    int np = 0;
    for (char *s = (char *)ids_s; *s && np < 512;) {
        prompt[np++] = (int32_t)strtol(s, &s, 10);
        if (*s == ',') s++;
    }
    sn_model_params p;
    sn_model_params_default(&p);
    p.n_threads = threads;
    p.n_ctx = np + n + 8;
    sn_err err = {0};
    sn_model *ref = NULL, *cand = NULL;
    if (sn_model_load(argv[1], &p, &ref, &err) || sn_model_load(argv[2], &p, &cand, &err)) {
        fprintf(stderr, "model_agree: %s\n", err.msg);
        return 1;
    }
    int64_t V = sn_model_n_vocab(ref);
    if (sn_model_n_vocab(cand) != V) { fprintf(stderr, "model_agree: vocab sizes differ\n"); return 1; }
    float *lr = malloc((size_t)V * sizeof(float)), *lc = malloc((size_t)V * sizeof(float));
    if (sn_model_eval(ref, prompt, np, lr, &err) || sn_model_eval(cand, prompt, np, lc, &err)) {
        fprintf(stderr, "model_agree: %s\n", err.msg);
        return 1;
    }
    int agree = 0;
    double sum_rel = 0, max_rel = 0, sum_kl = 0, sum_h = 0, sum_p1 = 0;
    for (int step = 0; step < n; step++) {
        int tr = argmax(lr, V), tc = argmax(lc, V);
        agree += tr == tc;
        double num = 0, den = 0;
        for (int64_t i = 0; i < V; i++) {
            double d = (double)lc[i] - lr[i];
            num += d * d;
            den += (double)lr[i] * lr[i];
        }
        double rel = den > 0 ? sqrt(num / den) : 0;
        /* log-softmax of both; KL = sum p_r (log p_r - log p_c) */
        double zr = 0, zc = 0;
        const double mr = lr[tr], mc = lc[tc];
        for (int64_t i = 0; i < V; i++) { zr += exp(lr[i] - mr); zc += exp(lc[i] - mc); }
        const double lzr = mr + log(zr), lzc = mc + log(zc);
        double kl = 0, h = 0;
        for (int64_t i = 0; i < V; i++) {
            const double lpr = lr[i] - lzr, lpc = lc[i] - lzc, pr = exp(lpr);
            kl += pr * (lpr - lpc);
            h -= pr * lpr;
        }
        sum_kl += kl;
        sum_h += h;
        sum_p1 += exp(lr[tr] - lzr);
        sum_rel += rel;
        if (rel > max_rel) max_rel = rel;
        if (step + 1 == n) break;
        int32_t t = tr;
        if (sn_model_eval(ref, &t, 1, lr, &err) || sn_model_eval(cand, &t, 1, lc, &err)) {
            fprintf(stderr, "model_agree: step %d: %s\n", step, err.msg);
            return 1;
        }
    }
    printf("{\"steps\":%d,\"top1_agree\":%d,\"top1_rate\":%.4f,\"rel_logit_err_mean\":%.5f,\"rel_logit_err_max\":%.5f,"
           "\"kl_mean\":%.6f,\"ref_entropy_mean\":%.4f,\"ref_top1_p_mean\":%.4f}\n",
           n, agree, (double)agree / n, sum_rel / n, max_rel, sum_kl / n, sum_h / n, sum_p1 / n);
    free(lr);
    free(lc);
    sn_model_free(ref);
    sn_model_free(cand);
    return 0;
}
