/* fuzz_safetensors.c - libFuzzer harness: arbitrary bytes as a .safetensors file (u64 header length,
 * JSON header, offsets, dtypes, shapes), every tensor's first and last element read back as the
 * converter reads them. Built and run by tests/fuzz/run_fuzz.sh. */
#include "safetensors.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sn_err err;
    sn_st_file *f = NULL;
    if (sn_st_file_open_mem(data, size, "fuzz.safetensors", &f, &err) != SN_OK) return 0;
    volatile float sink = 0;
    for (size_t i = 0; i < sn_st_file_n_tensors(f); i++) {
        const sn_st_tensor *t = sn_st_file_tensor(f, i);
        if (t->n_elems) sink += sn_st_elem_f32(t, 0) + sn_st_elem_f32(t, t->n_elems - 1);
    }
    sn_st_file_close(f);
    (void)sink;
    return 0;
}
