/* fuzz_spm.c - libFuzzer harness: arbitrary bytes as a SentencePiece tokenizer.model (the protobuf
 * wire format: varints, lengths, nested messages, the pieces and the normalizer spec), every piece
 * read back. Built and run by tests/fuzz/run_fuzz.sh. */
#include "spm_model.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sn_err err;
    sn_spm_model m;
    if (sn_spm_parse(data, size, "fuzz.model", &m, &err) != SN_OK) return 0;
    volatile size_t n = 0;
    for (size_t i = 0; i < m.n; i++) n += m.pieces[i].len + (size_t)m.pieces[i].type;
    (void)n;
    sn_spm_free(&m);
    return 0;
}
