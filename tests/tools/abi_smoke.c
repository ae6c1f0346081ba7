/* abi_smoke.c - a client of the stable ABI that includes nothing of sunny but sn_abi.h.
 *
 * Proves the header is self-contained and the ABI works end to end: version check, capability
 * bits, error reporting for a missing file, load, tokenize, eval, greedy sampling, detokenize.
 *   abi_smoke MODEL.gguf PROMPT_IDS N   -> prints {"ids":[...],"caps":...,"text":"..."} */
#include "sn_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int32_t st, const char *msg) {
    fprintf(stderr, "abi_smoke: %s: %s (%d)%s%s\n", what, sn_abi_status_str(st), st, msg && *msg ? ": " : "", msg ? msg : "");
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: abi_smoke MODEL.gguf 1,2,3 N\n"); return 2; }
    if (sn_abi_check(SN_ABI_VERSION_MAJOR) != SN_ABI_OK) return fail("sn_abi_check", SN_ABI_EUNSUPPORTED, "major mismatch");
    if (sn_abi_check(SN_ABI_VERSION_MAJOR + 1) != SN_ABI_EUNSUPPORTED) return fail("sn_abi_check(major+1)", SN_ABI_OK, "accepted");
    if ((sn_abi_version() >> 16) != SN_ABI_VERSION_MAJOR) return fail("sn_abi_version", SN_ABI_EINVAL, "");

    char errbuf[512];
    sn_abi_model *m = NULL;
    int32_t st = sn_abi_model_load("/nonexistent/model.gguf", NULL, &m, errbuf, sizeof errbuf);
    if (st != SN_ABI_EIO || m || !errbuf[0]) return fail("load of a missing file", st, errbuf);

    sn_abi_load_params p = {sizeof(p), 2, 0, 0, 0, NULL};
    st = sn_abi_model_load(argv[1], &p, &m, errbuf, sizeof errbuf);
    if (st) return fail("sn_abi_model_load", st, errbuf);
    const int32_t nv = sn_abi_n_vocab(m);
    int32_t ids[512];
    size_t n = 0;
    for (char *s = argv[2]; *s && n < 256;) {
        ids[n++] = (int32_t)strtol(s, &s, 10);
        if (*s == ',') s++;
    }
    const int steps = atoi(argv[3]);
    float *logits = malloc((size_t)nv * sizeof(float));
    sn_abi_sampler *smp = NULL;
    if ((st = sn_abi_sampler_new(0.0f, 0, 1.0f, 0, &smp))) return fail("sn_abi_sampler_new", st, "");
    if ((st = sn_abi_eval(m, ids, n, logits))) return fail("sn_abi_eval", st, sn_abi_last_error(m));
    int32_t out[256];
    int nout = 0;
    for (int i = 0; i < steps && i < 256; i++) {
        int32_t id;
        if ((st = sn_abi_sample(smp, logits, nv, &id))) return fail("sn_abi_sample", st, "");
        out[nout++] = id;
        if (i + 1 < steps && (st = sn_abi_eval(m, &id, 1, logits))) return fail("sn_abi_eval", st, sn_abi_last_error(m));
    }
    /* errors are reported, not fatal */
    int32_t bad = nv;
    if (sn_abi_eval(m, &bad, 1, logits) != SN_ABI_EINVAL || !sn_abi_last_error(m)[0])
        return fail("eval of an out-of-range id", SN_ABI_OK, "accepted");
    printf("{\"ids\":[");
    for (int i = 0; i < nout; i++) printf(i ? ",%d" : "%d", out[i]);
    printf("],\"caps\":%u", sn_abi_capabilities());
    if (sn_abi_capabilities() & SN_ABI_CAP_TOKENIZER) {
        char text[4096];
        size_t tl = 0;
        st = sn_abi_detokenize(m, out, (size_t)nout, text, sizeof text - 1, &tl);
        if (st == SN_ABI_OK) {
            printf(",\"text_bytes\":%zu", tl);
            int32_t back[512];
            size_t nb = 0;
            st = sn_abi_tokenize(m, "Hello world", 11, 0, 0, back, 512, &nb);
            printf(",\"tokenize_status\":%d,\"hello_ids\":%zu", st, nb);
        } else {
            printf(",\"detokenize_status\":%d", st);
        }
    }
    printf("}\n");
    sn_abi_sampler_free(smp);
    sn_abi_model_free(m);
    free(logits);
    return 0;
}
