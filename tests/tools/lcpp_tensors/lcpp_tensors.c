/* lcpp_tensors.c - llama.cpp's intermediate tensors of one prompt, through an eval callback of the
 * oracle's libllama (the node-llama-cpp build the parity tests run), to find the first op where
 * sunny's forward pass leaves llama.cpp's (a debugging aid, run by hand; no test runs it, and it sits
 * in its own folder so the build, which compiles tests/tools/*.c, leaves it alone).
 *
 * Usage: lcpp_tensors MODEL.gguf OUTDIR ID,ID,... [THREADS]
 * Decodes the prompt ids as one batch (flash attention on, a 512 context, as the oracle's default
 * context) and writes each contiguous F32 tensor the graph computes as OUTDIR/<name>.txt (llama.cpp's
 * names: attn_norm-0, Qcur-1, kqv_out-1, mamba_out-0, ffn_inp-2, l_out-3, ...; unnamed ones as
 * node_N; '/', ' ', '(' and ')' become '_'): a "# name ne0 ne1 ne2 ne3 op" line, then one %.9g value
 * per line in memory order. The last token's logits go to OUTDIR/logits.bin (raw floats).
 * Build against the llama.cpp source tree the oracle was built from (tests/integration/lib.sh
 * llama_tree) and the libraries of tests/node_modules/@node-llama-cpp/<platform>/bins/<platform>:
 *   gcc -O1 lcpp_tensors.c -I$TREE/include -I$TREE/ggml/include $BINS/libllama.v*.so \
 *       $BINS/libggml.v*.so $BINS/libggml-base.so -Wl,-rpath,$BINS -o lcpp_tensors
 * and run it with BINS as the directory the CPU backends load from (LCPP_BACKENDS=$BINS). */
#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *outdir;

static bool dump(struct ggml_tensor *t, bool ask, void *user) {
    (void)user;
    if (ask) return true; /* every tensor is computed where the callback sees it */
    if (t->type != GGML_TYPE_F32 || !ggml_is_contiguous(t)) return true;
    char name[GGML_MAX_NAME + 1], path[4096];
    snprintf(name, sizeof name, "%s", t->name);
    for (char *p = name; *p; p++)
        if (*p == '/' || *p == ' ' || *p == '(' || *p == ')') *p = '_';
    snprintf(path, sizeof path, "%s/%s.txt", outdir, name);
    const int64_t n = ggml_nelements(t);
    float *v = malloc((size_t)n * sizeof *v);
    FILE *f = fopen(path, "a");
    if (v && f) {
        ggml_backend_tensor_get(t, v, 0, (size_t)n * sizeof *v);
        fprintf(f, "# %s %lld %lld %lld %lld %s\n", t->name, (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], ggml_op_desc(t));
        for (int64_t i = 0; i < n; i++) fprintf(f, "%.9g\n", v[i]);
    }
    if (f) fclose(f);
    free(v);
    return true;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: lcpp_tensors MODEL.gguf OUTDIR ID,ID,... [THREADS]\n");
        return 2;
    }
    outdir = argv[2];
    const char *bk = getenv("LCPP_BACKENDS");
    if (bk) ggml_backend_load_all_from_path(bk);
    else ggml_backend_load_all();
    struct llama_model *model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) {
        fprintf(stderr, "lcpp_tensors: cannot load %s\n", argv[1]);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = cp.n_threads_batch = argc == 5 ? atoi(argv[4]) : 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    cp.cb_eval = dump;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    int32_t ids[4096];
    int n = 0;
    for (char *p = strtok(argv[3], ","); p && n < 4096; p = strtok(NULL, ",")) ids[n++] = atoi(p);
    if (!ctx || !n || llama_decode(ctx, llama_batch_get_one(ids, n))) {
        fprintf(stderr, "lcpp_tensors: decode failed\n");
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/logits.bin", outdir);
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    fwrite(llama_get_logits_ith(ctx, -1), sizeof(float), (size_t)llama_vocab_n_tokens(llama_model_get_vocab(model)), f);
    fclose(f);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
