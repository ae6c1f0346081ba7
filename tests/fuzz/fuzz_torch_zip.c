/* fuzz_torch_zip.c - libFuzzer harness: arbitrary bytes as a torch.save archive.
 *
 * Drives the zip reader (end record, zip64, central directory, local headers, inflate of data.pkl)
 * and everything behind it (pickle VM, state-dict pick, tensor checks), then reads the last element
 * of every tensor it hands out, which must lie inside the buffer (ASan checks). Built and run by
 * tests/fuzz/run_fuzz.sh; crashes it finds go to tests/fuzz/regress/. */
#include "torch_ckpt.h"
#include "torch_zip.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sn_err err;
    sn_zip *z = NULL;
    if (sn_zip_open_mem(data, size, "fuzz.zip", &z, &err) == SN_OK) {
        for (size_t i = 0; i < sn_zip_n_entries(z); i++) {
            const uint8_t *d;
            uint8_t *own = NULL;
            if (sn_zip_read(z, i, 1 << 20, &d, &own, &err) == SN_OK && sn_zip_entry_at(z, i)->size) {
                volatile uint8_t last = d[sn_zip_entry_at(z, i)->size - 1];
                (void)last;
            }
            free(own);
        }
        sn_zip_close(z);
    }
    sn_tc_file *f = NULL;
    if (sn_tc_open_mem(data, size, "fuzz.bin", NULL, &f, &err) == SN_OK) {
        for (size_t i = 0; i < sn_tc_n_tensors(f); i++) {
            const sn_st_tensor *t = sn_tc_tensor(f, i);
            if (!t->unsupported && t->n_elems) { /* first and furthest byte of the tensor */
                uint64_t last = 0;
                for (uint32_t d = 0; d < t->n_dims; d++) last += (t->shape[d] - 1) * (uint64_t)t->stride[d];
                uint32_t es = t->dtype == SN_ST_F32 ? 4 : 2;
                volatile uint8_t v = t->data[0] ^ t->data[last * es + es - 1];
                (void)v;
            }
        }
        sn_tc_close(f);
    }
    return 0;
}
