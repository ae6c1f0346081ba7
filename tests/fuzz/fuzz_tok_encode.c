/* fuzz_tok_encode.c - libFuzzer harness: arbitrary bytes (invalid UTF-8, control and special token
 * texts included) encoded and decoded by every kind of tokenizer the runtime has: SentencePiece,
 * RWKV, and byte-level BPE under each pre-tokenizer regex set llama.cpp's tokenizer.ggml.pre names
 * (the vocabularies of tests/fuzz/corpus/gguf, whose BPE one is rewritten once per pre-tokenizer).
 * The first byte picks the tokenizer, the second the add_special / parse_special flags.
 * Built and run by tests/fuzz/run_fuzz.sh. */
#include "gguf.h"
#include "tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* one name per regex set / flag combination of runtime/tokenizers/tok_pretok.c */
static const char *const PRE[] = {
    "default", "gpt-2", "trillion", "llama-bpe", "dbrx", "glm4", "qwen2", "stablelm2", "qwen35", "starcoder",
    "command-r", "falcon", "tekken", "deepseek-coder", "deepseek-v3", "poro-chat", "bloom", "viking", "gpt-4o",
    "seed-coder", "bailingmoe", "ufakzeka", "minicpm5", "exaone-moe", "jais-2", "laguna", "chameleon",
    "deepseek-llm", "spark2_5", "youtu", "granite-embed-multi-97m", "superbpe", "tiny_aya", "afmoe", "gemma4",
    "sarvam-moe"};
enum { N_PRE = sizeof PRE / sizeof *PRE, N_TOK = N_PRE + 2 };

static sn_gguf *ggufs[N_TOK];
static sn_tokenizer *toks[N_TOK];

static sn_gguf *seed(const char *name) {
    char p[1024];
    snprintf(p, sizeof p, "%s", __FILE__);
    char *slash = strrchr(p, '/');
    snprintf(slash + 1, sizeof p - (size_t)(slash + 1 - p), "corpus/gguf/%s", name);
    sn_gguf *g = NULL;
    sn_err err;
    if (sn_gguf_open(p, 0, &g, &err) != SN_OK) {
        fprintf(stderr, "fuzz_tok_encode: %s\n", err.msg);
        abort();
    }
    return g;
}

static void setup(void) {
    ggufs[0] = seed("spm.gguf");
    ggufs[1] = seed("rwkv.gguf");
    sn_gguf *bpe = seed("bpe.gguf");
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_tok_encode_%d.gguf", (int)getpid());
    sn_err err;
    for (int i = 0; i < N_PRE; i++) { /* the BPE vocab with tokenizer.ggml.pre = PRE[i], no tensors */
        sn_gguf_writer *w = sn_gguf_writer_new();
        for (int64_t k = 0; k < sn_gguf_n_kv(bpe); k++)
            if (sn_gguf_writer_copy_kv(w, bpe, k) != SN_OK) abort();
        if (sn_gguf_writer_set_str(w, "tokenizer.ggml.pre", PRE[i]) != SN_OK ||
            sn_gguf_writer_begin(w, path, &err) != SN_OK || sn_gguf_writer_finish(w, &err) != SN_OK ||
            sn_gguf_open(path, 0, &ggufs[2 + i], &err) != SN_OK) {
            fprintf(stderr, "fuzz_tok_encode: %s: %s\n", PRE[i], err.msg);
            abort();
        }
        sn_gguf_writer_free(w);
        unlink(path);
    }
    sn_gguf_close(bpe);
    for (int i = 0; i < N_TOK; i++)
        if (sn_tok_load(ggufs[i], &toks[i], &err) != SN_OK) {
            fprintf(stderr, "fuzz_tok_encode: tokenizer %d: %s\n", i, err.msg);
            abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) setup(), ready = 1;
    if (size < 2) return 0;
    const sn_tokenizer *t = toks[data[0] % N_TOK];
    const int add_special = data[1] & 1, parse_special = (data[1] >> 1) & 1;
    const char *text = (const char *)data + 2;
    const size_t len = size - 2;
    sn_err err;
    int32_t ids[512];
    int64_t n = sn_tok_encode(t, text, len, add_special, parse_special, ids, 512, &err);
    if (n < 0) return 0;
    if (n > 512) { /* the documented retry with a buffer of the returned size */
        int32_t *big = malloc((size_t)n * sizeof *big);
        if (!big) return 0;
        int64_t m = sn_tok_encode(t, text, len, add_special, parse_special, big, (size_t)n, &err);
        if (m != n) abort(); /* the second call must agree with the count the first returned */
        free(big);
        n = 512;
    }
    static char out[1 << 16];
    (void)sn_tok_decode(t, ids, (size_t)n, data[1] & 4, out, sizeof out);
    for (int64_t i = 0; i < n; i++) (void)sn_tok_piece(t, ids[i], 1, out, 64);
    return 0;
}
