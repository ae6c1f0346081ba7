/* state_split.c - a recurrent model's state is a function of the tokens, not of how they were fed.
 *
 *   state_split MODEL.gguf
 *
 * Checks, bitwise: (1) evaluating A then B leaves the same recurrent state and gives the same last
 * logits as evaluating A+B in one batch; (2) saving the state
 * after A, running B, restoring it and running B again reproduces the continuation. Prints one
 * summary line; exit 1 on any difference. (Feeding B one token at a time is not compared: a
 * one-row matmul sums in another order than a batched one, in llama.cpp as here.) */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const sn_err *e) {
    fprintf(stderr, "%s%s%s\n", what, e ? ": " : "", e ? e->msg : "");
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: state_split MODEL.gguf\n");
        return 2;
    }
    sn_err err = {0};
    sn_model_params p;
    sn_model_params_default(&p);
    p.n_threads = 2;
    sn_model *m = NULL;
    if (sn_model_load(argv[1], &p, &m, &err)) return fail("load", &err);
    uint64_t ns = sn_model_state_size(m);
    if (!ns) return fail("the model has no recurrent state", NULL);
    const int64_t nv = sn_model_n_vocab(m);
    const int32_t toks[] = {9707, 11, 1879, 0, 576, 3974, 13876, 38835, 35308, 916, 279, 15678, 5562, 13, 16, 17};
    const int64_t nA = 9, nB = 7;
    float *l1 = malloc((size_t)nv * 4), *l2 = malloc((size_t)nv * 4), *l3 = malloc((size_t)nv * 4);
    unsigned char *s1 = malloc(ns), *s2 = malloc(ns), *s3 = malloc(ns), *sa = malloc(ns);
    if (!l1 || !l2 || !l3 || !s1 || !s2 || !s3 || !sa) return fail("out of memory", NULL);
    /* A then B */
    if (sn_model_eval(m, toks, nA, l1, &err) || sn_model_state_get(m, sa, ns, &err) ||
        sn_model_eval(m, toks + nA, nB, l1, &err) || sn_model_state_get(m, s1, ns, &err))
        return fail("A then B", &err);
    /* A+B in one batch */
    sn_model_reset(m);
    if (sn_model_eval(m, toks, nA + nB, l2, &err) || sn_model_state_get(m, s2, ns, &err)) return fail("A+B", &err);
    int bad = 0;
    if (memcmp(s1, s2, ns) || memcmp(l1, l2, (size_t)nv * 4)) bad |= fprintf(stderr, "A then B != A+B\n") > 0;
    /* restore after A, run B again */
    if (sn_model_state_set(m, sa, ns, &err) || sn_model_eval(m, toks + nA, nB, l3, &err) ||
        sn_model_state_get(m, s3, ns, &err))
        return fail("restore", &err);
    if (memcmp(s1, s3, ns) || memcmp(l1, l3, (size_t)nv * 4)) bad |= fprintf(stderr, "restore + B != A then B\n") > 0;
    /* the state actually moved (a test that compares zeros proves nothing) */
    if (!memcmp(sa, s1, ns)) bad |= fprintf(stderr, "state did not change over B\n") > 0;
    sn_model_free(m);
    if (bad) return 1;
    printf("state %llu bytes: A(%lld) then B(%lld) == A+B == restore(A) then B, bitwise\n",
           (unsigned long long)ns, (long long)nA, (long long)nB);
    free(l1), free(l2), free(l3), free(s1), free(s2), free(s3), free(sa);
    return 0;
}
