/* vocab_only.c - writes a vocab-only GGUF (general.architecture=llama, minimal hparams, 0 tensors)
 * from an HF model folder through sn_vocab_write_gguf, so tests can load just the tokenizer into
 * llama.cpp (node-llama-cpp vocabOnly) and compare its tokenization with HF's.
 *   vocab_only MODEL_DIR OUT.gguf [--pre NAME]     prints "model=.. pre=.. n_tokens=.." */
#include "gguf.h"
#include "vocab.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--pre"))) {
        fprintf(stderr, "usage: vocab_only MODEL_DIR OUT.gguf [--pre NAME]\n");
        return 2;
    }
    sn_err err = {0};
    sn_vocab_opts opts = {argc == 5 ? argv[4] : NULL, NULL};
    sn_vocab_report rep;
    sn_gguf_writer *w = sn_gguf_writer_new();
    if (!w) return 1;
    sn_status st = sn_gguf_writer_set_str(w, "general.architecture", "llama");
    if (!st) st = sn_gguf_writer_set_str(w, "general.name", "vocab-only");
    static const struct { const char *k; uint32_t v; } hp[] = {
        {"llama.block_count", 1}, {"llama.context_length", 4096}, {"llama.embedding_length", 64},
        {"llama.feed_forward_length", 128}, {"llama.attention.head_count", 1},
        {"llama.attention.head_count_kv", 1}, {"llama.rope.dimension_count", 64}};
    for (size_t i = 0; i < sizeof hp / sizeof hp[0] && !st; i++) st = sn_gguf_writer_set_u32(w, hp[i].k, hp[i].v);
    if (!st) st = sn_gguf_writer_set_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    if (st) {
        fprintf(stderr, "vocab_only: writer: %s\n", sn_status_str(st));
        sn_gguf_writer_free(w);
        return 1;
    }
    st = sn_vocab_write_gguf(argv[1], NULL, w, &opts, &rep, &err);
    if (!st) st = sn_gguf_writer_begin(w, argv[2], &err);
    if (!st) st = sn_gguf_writer_finish(w, &err);
    sn_gguf_writer_free(w);
    if (st) {
        fprintf(stderr, "vocab_only: %s\n", err.msg);
        remove(argv[2]);
        return 1;
    }
    printf("model=%s pre=%s n_tokens=%d\n", rep.model, rep.pre, rep.n_tokens);
    return 0;
}
