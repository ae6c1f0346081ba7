/* fuzz_gguf.c - libFuzzer harness: arbitrary bytes as a GGUF file (header, KVs, tensor infos, data
 * bounds), every KV and tensor read back, then the tokenizer built from it when it opens and a
 * short text encoded and decoded (the vocab build and the encoder on whatever the file holds).
 * Built and run by tests/fuzz/run_fuzz.sh. */
#include "gguf.h"
#include "tokenizer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sn_err err;
    sn_gguf *g = NULL;
    if (sn_gguf_open_mem(data, size, 0, &g, &err) != SN_OK) return 0;
    volatile uint64_t sink = 0;
    for (int64_t i = 0; i < sn_gguf_n_kv(g); i++) sink += strlen(sn_gguf_key(g, i)) + (uint64_t)sn_gguf_kv_type(g, i);
    for (int64_t i = 0; i < sn_gguf_n_tensors(g); i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        if (t && t->data && t->size) sink += ((const uint8_t *)t->data)[0] + ((const uint8_t *)t->data)[t->size - 1];
    }
    sn_tokenizer *tok = NULL;
    if (sn_tok_load(g, &tok, &err) == SN_OK) {
        static const char text[] = "Hello, world! 123 \xc3\xa9t\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd <s>\n\t  x";
        int32_t ids[256];
        int64_t n = sn_tok_encode(tok, text, sizeof text - 1, 1, 1, ids, 256, &err);
        char out[1024];
        if (n > 0) sink += (uint64_t)sn_tok_decode(tok, ids, (size_t)(n < 256 ? n : 256), 0, out, sizeof out);
        sn_tok_free(tok);
    }
    sn_gguf_close(g);
    (void)sink;
    return 0;
}
