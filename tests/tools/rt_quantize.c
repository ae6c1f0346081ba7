/* rt_quantize.c - rewrite an F32 GGUF with its matrices in another type, for the runtime's tests.
 *
 * The parity tests need the same model as F16, BF16, Q8_0, Q4_0 and a Q4_K_M-style mix, made by our
 * own reference quantizers (runtime/quants/ggml_types.h, bit-exact with ggml's *_ref) so that llama.cpp and
 * sunny-run read identical bytes. 1-D tensors stay F32 as llama.cpp's tools leave them.
 *   q4_k_m: attn_v, ffn_down and output (or tied token_embd) -> Q6_K, other matrices -> Q4_K.
 *
 *   rt_quantize IN.gguf OUT.gguf f16|bf16|q8_0|q4_0|q4_k_m|f32 [KEY=TYPE:VALUE ...]
 * Extra KEY=TYPE:VALUE arguments (TYPE u32, f32 or str) set or replace metadata, e.g. to make a
 * YaRN-scaled variant: llama.rope.scaling.type=str:yarn llama.rope.scaling.factor=f32:4 */
#include "ggml_types.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int target_type(const char *mode, const sn_gguf *g, const sn_gguf_tensor *t) {
    if (t->n_dims < 2 || t->type != SN_GGML_F32) return t->type;
    if (!strcmp(mode, "f16")) return SN_GGML_F16;
    if (!strcmp(mode, "bf16")) return SN_GGML_BF16;
    if (!strcmp(mode, "q8_0")) return SN_GGML_Q8_0;
    if (!strcmp(mode, "q4_0")) return SN_GGML_Q4_0;
    if (!strcmp(mode, "f32")) return t->type;
    if (!strcmp(mode, "q4_k_m")) {
        const int tied = sn_gguf_find_tensor(g, "output.weight") < 0;
        if (strstr(t->name, "attn_v.weight") || strstr(t->name, "ffn_down.weight") ||
            !strcmp(t->name, "output.weight") || (tied && !strcmp(t->name, "token_embd.weight")))
            return SN_GGML_Q6_K;
        return SN_GGML_Q4_K;
    }
    return -1;
}

static int file_type(const char *mode) {
    if (!strcmp(mode, "f16")) return SN_FTYPE_MOSTLY_F16;
    if (!strcmp(mode, "bf16")) return SN_FTYPE_MOSTLY_BF16;
    if (!strcmp(mode, "q8_0")) return SN_FTYPE_MOSTLY_Q8_0;
    if (!strcmp(mode, "q4_0")) return SN_FTYPE_MOSTLY_Q4_0;
    return SN_FTYPE_MOSTLY_Q4_K_M;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: rt_quantize IN.gguf OUT.gguf f16|bf16|q8_0|q4_0|q4_k_m|f32 [KEY=TYPE:VALUE ...]\n");
        return 2;
    }
    sn_err err = {0};
    sn_gguf *g;
    if (sn_gguf_open(argv[1], 0, &g, &err)) { fprintf(stderr, "rt_quantize: %s\n", err.msg); return 1; }
    const char *mode = argv[3];
    sn_gguf_writer *w = sn_gguf_writer_new();
    for (int64_t i = 0; i < sn_gguf_n_kv(g); i++) {
        if (!strcmp(sn_gguf_key(g, i), "general.file_type")) continue;
        sn_gguf_writer_copy_kv(w, g, i);
    }
    if (strcmp(mode, "f32")) sn_gguf_writer_set_u32(w, "general.file_type", (uint32_t)file_type(mode));
    else sn_gguf_writer_set_u32(w, "general.file_type", SN_FTYPE_ALL_F32);
    for (int a = 4; a < argc; a++) {
        char key[256];
        const char *eq = strchr(argv[a], '='), *colon = eq ? strchr(eq, ':') : NULL;
        if (!eq || !colon || (size_t)(eq - argv[a]) >= sizeof(key)) { fprintf(stderr, "rt_quantize: bad %s\n", argv[a]); return 2; }
        memcpy(key, argv[a], (size_t)(eq - argv[a]));
        key[eq - argv[a]] = 0;
        const char *v = colon + 1;
        if (!strncmp(eq + 1, "u32:", 4)) sn_gguf_writer_set_u32(w, key, (uint32_t)strtoul(v, NULL, 10));
        else if (!strncmp(eq + 1, "f32:", 4)) sn_gguf_writer_set_f32(w, key, strtof(v, NULL));
        else if (!strncmp(eq + 1, "str:", 4)) sn_gguf_writer_set_str(w, key, v);
        else { fprintf(stderr, "rt_quantize: bad type in %s\n", argv[a]); return 2; }
    }
    const int64_t nt = sn_gguf_n_tensors(g);
    for (int64_t i = 0; i < nt; i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        const int ty = target_type(mode, g, t);
        if (ty < 0) { fprintf(stderr, "rt_quantize: unknown mode %s\n", mode); return 2; }
        if (sn_gguf_writer_add_tensor(w, t->name, t->n_dims, t->ne, ty, &err) < 0) {
            fprintf(stderr, "rt_quantize: %s\n", err.msg);
            return 1;
        }
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
    if (sn_gguf_writer_begin(w, tmp, &err)) { fprintf(stderr, "rt_quantize: %s\n", err.msg); return 1; }
    for (int64_t i = 0; i < nt; i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        const int ty = target_type(mode, g, t);
        const int64_t ne0 = (int64_t)t->ne[0];
        const uint64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
        const uint64_t rb = ty == t->type ? t->size / rows : sn_ggml_row_size(ty, (uint64_t)ne0);
        void *buf = malloc(rb ? rb : 1);
        for (uint64_t r = 0; r < rows; r++) {
            const char *src = (const char *)t->data + r * (t->size / rows);
            if (ty == t->type) memcpy(buf, src, rb);
            else sn_ggml_from_f32(ty, (const float *)src, buf, ne0);
            if (sn_gguf_writer_write(w, buf, rb, &err)) { fprintf(stderr, "rt_quantize: %s\n", err.msg); return 1; }
        }
        free(buf);
        if (sn_gguf_writer_end_tensor(w, &err)) { fprintf(stderr, "rt_quantize: %s\n", err.msg); return 1; }
    }
    if (sn_gguf_writer_finish(w, &err)) { fprintf(stderr, "rt_quantize: %s\n", err.msg); return 1; }
    sn_gguf_writer_free(w);
    sn_gguf_close(g);
    if (rename(tmp, argv[2]) != 0) { perror("rt_quantize: rename"); return 1; }
    return 0;
}
