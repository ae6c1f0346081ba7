/* logit_dump.c - every logit of a fixed run, as raw floats, through the stable C ABI (sn_abi.h), so
 * one source links against two builds of libsunny and their outputs compare with cmp
 * (tests/tools/logit_compare.sh: the runtime before and after a change must give the same bits).
 *
 * Usage: logit_dump MODEL THREADS OUT.bin  (the SN_* tuning knobs of the environment apply: a library
 * before ABI 1.3 reads them itself, a newer one gets them as sn_abi_tuning)
 * The run: a 37-token prompt in one batch (batched kernels, T not a multiple of 4 or 8), then 5
 * greedy single-token steps (decode kernels); the logits of each of the 6 evals are written. */
#include "sn_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: logit_dump MODEL THREADS OUT.bin\n");
        return 2;
    }
    if (sn_abi_check(SN_ABI_VERSION_MAJOR)) return 1;
    sn_abi_load_params p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.n_threads = atoi(argv[2]);
    p.n_ctx = 64;
#if SN_ABI_VERSION_MINOR >= 3 /* the library reads no environment: the SN_* knobs go in as a tuning */
    sn_abi_tuning tu;
    memset(&tu, 0, sizeof tu);
    tu.struct_size = sizeof tu;
    const char *e;
    if ((e = getenv("SN_CPU"))) tu.isa = !strcmp(e, "scalar") ? 1 : !strcmp(e, "avx2") ? 2 : 0;
    if ((e = getenv("SN_GGML_LANES"))) tu.lanes = atoi(e);
    if ((e = getenv("SN_MV_QUARTERS")) && *e) tu.far_streams = !strcmp(e, "1") ? 1 : 2;
    if ((e = getenv("SN_MV_PAGES")) && *e) tu.page_kick = !strcmp(e, "1") ? 1 : 2;
    if ((e = getenv("SN_MM_F16")) && *e) tu.mm_f16 = !strcmp(e, "convert") ? 1 : 2;
    if ((e = getenv("SN_Q4_0_REPACK")) && !strcmp(e, "0")) tu.no_repack = 1;
    p.tuning = &tu;
#endif
    char err[512] = "";
    sn_abi_model *m = NULL;
    if (sn_abi_model_load(argv[1], &p, &m, err, sizeof err)) {
        fprintf(stderr, "logit_dump: %s\n", err);
        return 1;
    }
    const int32_t V = sn_abi_n_vocab(m);
    float *logits = malloc((size_t)V * sizeof(float));
    FILE *out = fopen(argv[3], "wb");
    if (!logits || !out) return 1;
    enum { PROMPT = 37, STEPS = 5 };
    int32_t ids[PROMPT];
    for (int i = 0; i < PROMPT; i++) ids[i] = (int32_t)((7u + 7919u * (unsigned)i) % (unsigned)V);
    int rc = sn_abi_eval(m, ids, PROMPT, logits);
    for (int s = 0; !rc; s++) {
        if (fwrite(logits, sizeof(float), (size_t)V, out) != (size_t)V) rc = 1;
        if (s == STEPS) break;
        int32_t best = 0;
        for (int32_t i = 1; i < V; i++) best = logits[i] > logits[best] ? i : best;
        rc = sn_abi_eval(m, &best, 1, logits);
    }
    if (rc) fprintf(stderr, "logit_dump: %s\n", sn_abi_last_error(m));
    if (fclose(out)) rc = 1;
    free(logits);
    sn_abi_model_free(m);
    return rc ? 1 : 0;
}
