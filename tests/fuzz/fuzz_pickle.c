/* fuzz_pickle.c - libFuzzer harness: arbitrary bytes as data.pkl for the data-only pickle VM.
 *
 * Runs the VM with small limits (so deep or wide inputs hit them quickly) and walks the resulting
 * value graph to a bounded depth and a bounded number of visits (memo references make cycles, and
 * shared children make a walk double per level: that harness-only blowup was a fuzz timeout). Built and run by
 * tests/fuzz/run_fuzz.sh; crashes it finds go to tests/fuzz/regress/. */
#include "pickle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t walk(const sn_pk_value *v, int depth, long *visits) {
    if (!v || depth > 32 || *visits <= 0) return 0;
    (*visits)--;
    size_t n = 1;
    switch (v->kind) {
    case SN_PK_TUPLE: case SN_PK_LIST: case SN_PK_DICT: case SN_PK_SET:
        for (uint64_t i = 0; i < v->u.seq.n; i++) n += walk(v->u.seq.items[i], depth + 1, visits);
        break;
    case SN_PK_STR: case SN_PK_BYTES: n += strlen(v->u.str.s) <= v->u.str.len; break;
    case SN_PK_TENSOR: n += walk(v->u.tensor.storage, depth + 1, visits) + v->u.tensor.n_dims; break;
    case SN_PK_STORAGE: n += strlen(v->u.storage.key); break;
    default: break;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sn_err err;
    sn_pk *p = NULL;
    sn_pk_limits lim = {.max_memo = 4096, .max_stack = 4096, .max_marks = 64, .max_depth = 64,
                        .max_values = 1 << 16, .max_bytes = 1 << 20};
    if (sn_pk_load(data, size, "fuzz.pkl", 0, &lim, &p, &err) == SN_OK) {
        long visits = 1 << 20;
        volatile size_t n = walk(sn_pk_root(p), 0, &visits);
        (void)n;
        (void)sn_pk_dict_get(sn_pk_root(p), "model");
        sn_pk_free(p);
    }
    return 0;
}
