/* abi_state.c - a recurrent model's state through the public ABI (sn_abi.h only):
 *   abi_state MODEL.gguf A_IDS B_IDS   (comma-separated token ids)
 * 1. split run: evaluating A then B leaves the same state bytes and the same last logits as
 *    evaluating A+B at once (bitwise);
 * 2. save/restore: the state saved after A, restored after an unrelated detour, continues with B
 *    to bitwise the same logits and the same 16 greedy tokens as the uninterrupted run.
 * Prints one line per check; exit 0 only if all hold. */
#include "sn_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t parse_ids(const char *s, int32_t *out, size_t cap) {
    size_t n = 0;
    while (*s && n < cap) {
        out[n++] = (int32_t)strtol(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

static int argmax(const float *x, int32_t n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

/* 16 greedy tokens after the current state, the first from logits. */
static int greedy16(sn_abi_model *m, float *logits, int32_t V, int32_t *out) {
    for (int i = 0; i < 16; i++) {
        out[i] = argmax(logits, V);
        if (sn_abi_eval(m, &out[i], 1, logits)) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: abi_state MODEL.gguf A_IDS B_IDS\n"); return 2; }
    int32_t a[4096], b[4096], ab[8192];
    const size_t na = parse_ids(argv[2], a, 4096), nb = parse_ids(argv[3], b, 4096);
    memcpy(ab, a, na * 4);
    memcpy(ab + na, b, nb * 4);
    char eb[512];
    sn_abi_load_params p = {.struct_size = sizeof p, .n_threads = 2};
    sn_abi_model *m;
    if (sn_abi_check(SN_ABI_VERSION_MAJOR) || !(sn_abi_capabilities() & SN_ABI_CAP_STATE)) {
        printf("FAIL abi: no state capability\n");
        return 1;
    }
    if (sn_abi_model_load(argv[1], &p, &m, eb, sizeof eb)) { printf("FAIL load: %s\n", eb); return 1; }
    size_t ss = 0;
    if (!sn_abi_model_is_recurrent(m) || sn_abi_state_size(m, &ss) || ss == 0) {
        printf("FAIL: model is not recurrent / no state size\n");
        return 1;
    }
    const int32_t V = sn_abi_n_vocab(m);
    float *l1 = malloc((size_t)V * 4), *l2 = malloc((size_t)V * 4), *lx = malloc((size_t)V * 4);
    unsigned char *s1 = malloc(ss), *s2 = malloc(ss), *sa = malloc(ss);
    size_t n;
    int bad = 0;
    /* split run */
    if (sn_abi_eval(m, a, na, l1) || sn_abi_state_get(m, sa, ss, &n) || sn_abi_eval(m, b, nb, l1) ||
        sn_abi_state_get(m, s1, ss, &n)) { printf("FAIL eval: %s\n", sn_abi_last_error(m)); return 1; }
    sn_abi_reset(m);
    if (sn_abi_eval(m, ab, na + nb, l2) || sn_abi_state_get(m, s2, ss, &n)) { printf("FAIL eval\n"); return 1; }
    const int st_eq = memcmp(s1, s2, ss) == 0, lg_eq = memcmp(l1, l2, (size_t)V * 4) == 0;
    const int moved = memcmp(sa, s1, ss) != 0; /* equal states prove nothing if B left it unchanged */
    printf("%s split run: state after A then B %s state after A+B (%zu bytes; %s over B); last logits %s\n",
           st_eq && lg_eq && moved ? "PASS" : "FAIL", st_eq ? "==" : "!=", ss, moved ? "changed" : "UNCHANGED",
           lg_eq ? "bitwise equal" : "differ");
    bad += !(st_eq && lg_eq && moved);
    /* save / restore */
    int32_t g1[16], g2[16];
    if (greedy16(m, l2, V, g1)) return 1;
    sn_abi_reset(m);
    const int32_t detour[3] = {11, 22, 33};
    if (sn_abi_eval(m, detour, 3, lx)) return 1;
    if (sn_abi_state_set(m, sa, ss)) { printf("FAIL state_set: %s\n", sn_abi_last_error(m)); return 1; }
    if (sn_abi_eval(m, b, nb, lx)) return 1;
    const int re_eq = memcmp(lx, l1, (size_t)V * 4) == 0;
    if (greedy16(m, lx, V, g2)) return 1;
    const int g_eq = memcmp(g1, g2, sizeof g1) == 0;
    printf("%s save/restore: logits after restore(A) + B %s, 16 greedy tokens %s\n", re_eq && g_eq ? "PASS" : "FAIL",
           re_eq ? "bitwise equal" : "differ", g_eq ? "equal" : "differ");
    bad += !(re_eq && g_eq);
    /* a foreign state is refused */
    sa[0] ^= 1;
    const int refused = sn_abi_state_set(m, sa, ss) != SN_ABI_OK && sn_abi_state_set(m, sa, ss - 1) != SN_ABI_OK;
    printf("%s corrupt or short state is refused\n", refused ? "PASS" : "FAIL");
    bad += !refused;
    sn_abi_model_free(m);
    free(l1), free(l2), free(lx), free(s1), free(s2), free(sa);
    return bad ? 1 : 0;
}
