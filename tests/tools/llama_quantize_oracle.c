/* llama_quantize_oracle.c - llama.cpp's own quantizer (llama_model_quantize in the prebuilt libllama
 * that node-llama-cpp ships) as an oracle: `llama_quantize_oracle IN.gguf OUT.gguf FTYPE [IN OUT FTYPE ...]`
 * (several files in one process: the library loads once).
 *
 * The library is loaded with dlopen at run time; nothing of llama.cpp is compiled into sunny. The
 * struct below mirrors the public ABI of llama_model_quantize_params in that exact version
 * (node-llama-cpp 3.22.1, llama.cpp de3ff81); the size check guards against a different version.
 * FTYPE is a llama_ftype number (llama.h: 2 = MOSTLY_Q4_0, 7 = Q8_0, 10 = Q2_K, 15 = Q4_K_M, 18 = Q6_K,
 * 25 = IQ4_NL, 30 = IQ4_XS, ...). SN_ALLOW_REQUANTIZE set: llama-quantize's --allow-requantize.
 * SN_QUANT_DRY_RUN set: llama-quantize's --dry-run, nothing quantized; OUT becomes a text file with
 * the plan, one "TENSOR TYPE" line per tensor in file order (TYPE as ggml names it: the target type,
 * or the source type for a tensor kept as it is), read from the library's log. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The dry run's log: "[   3/  39] blk.0.attn_k.weight  - [  128,    64,     1,     1], type =    f32, "
 * then "size =    0.031 MiB ->    0.005 MiB (q5_0)\n" (or "size =    0.000 MiB\n" when the tensor
 * stays as it is), in pieces: they are joined into lines and each tensor line becomes one plan line. */
static char g_line[4096];
static size_t g_len;
static FILE *g_plan;

static void plan_line(const char *l) {
    char name[512], src[32];
    if (l[0] != '[' || sscanf(l, "[%*d/%*d] %511s - [%*[^]]], type = %31[^,]", name, src) != 2) return;
    const char *to = strstr(l, "MiB (");
    char dst[32];
    if (to && sscanf(to, "MiB (%31[^)])", dst) == 1) fprintf(g_plan, "%s %s\n", name, dst);
    else {
        char *e = src + strlen(src);
        while (e > src && e[-1] == ' ') *--e = 0;
        const char *b = src;
        while (*b == ' ') b++;
        fprintf(g_plan, "%s %s\n", name, b);
    }
}

static void log_cb(int level, const char *text, void *ud) {
    (void)level, (void)ud;
    if (!g_plan) return;
    for (const char *c = text; *c; c++) {
        if (*c == '\n') {
            g_line[g_len] = 0;
            plan_line(g_line);
            g_len = 0;
        } else if (g_len + 1 < sizeof g_line) {
            g_line[g_len++] = *c;
        }
    }
}

struct quantize_params { /* llama_model_quantize_params, field for field */
    int32_t nthread;
    int ftype;
    int output_tensor_type;
    int token_embedding_type;
    bool allow_requantize, quantize_output_tensor, only_copy, pure, keep_split, dry_run;
    const void *imatrix, *kv_overrides, *tt_overrides;
    const int32_t *prune_layers;
    size_t max_buf_size;
};

int main(int argc, char **argv) {
    if (argc < 4 || (argc - 1) % 3 != 0) {
        fprintf(stderr, "usage: %s IN.gguf OUT.gguf FTYPE [IN OUT FTYPE ...]\n", argv[0]);
        return 2;
    }
    const char *lib = getenv("SN_LIBLLAMA");
    if (!lib) {
        fprintf(stderr, "set SN_LIBLLAMA to node-llama-cpp's libllama .so\n");
        return 2;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
        return 1;
    }
    struct quantize_params (*defaults)(void) =
        (struct quantize_params(*)(void))dlsym(h, "llama_model_quantize_default_params");
    uint32_t (*quantize)(const char *, const char *, const struct quantize_params *) =
        (uint32_t(*)(const char *, const char *, const struct quantize_params *))dlsym(h, "llama_model_quantize");
    void (*backend_init)(void) = (void (*)(void))dlsym(h, "llama_backend_init");
    void (*log_set)(void (*)(int, const char *, void *), void *) =
        (void (*)(void (*)(int, const char *, void *), void *))dlsym(h, "llama_log_set");
    const int dry = getenv("SN_QUANT_DRY_RUN") != NULL;
    if (dry && !log_set) {
        fprintf(stderr, "libllama lacks llama_log_set\n");
        return 1;
    }
    if (dry) log_set(log_cb, NULL);
    if (!defaults || !quantize) {
        fprintf(stderr, "libllama lacks llama_model_quantize\n");
        return 1;
    }
    if (backend_init) backend_init();
    for (int a = 1; a + 2 < argc; a += 3) {
        struct quantize_params p = defaults();
        p.ftype = atoi(argv[a + 2]);
        p.nthread = 2;
        p.allow_requantize = getenv("SN_ALLOW_REQUANTIZE") != NULL; /* llama-quantize --allow-requantize */
        p.dry_run = dry;
        if (dry && !(g_plan = fopen(argv[a + 1], "w"))) {
            perror(argv[a + 1]);
            return 1;
        }
        g_len = 0;
        uint32_t rc = quantize(argv[a], argv[a + 1], &p);
        if (g_plan && fclose(g_plan) != 0) rc = 1;
        g_plan = NULL;
        if (rc != 0) {
            fprintf(stderr, "llama_model_quantize %s -> %s (ftype %d) failed (%u)\n", argv[a], argv[a + 1], p.ftype, rc);
            return 1;
        }
    }
    return 0;
}
