/* demo_model.c - writes `make demo`'s model: a random-weight RWKV-7 in fla-hub's Hugging Face
 * layout, so the demo needs nothing but the build dependencies (no Python, no network).
 *
 *   demo_model --out DIR [--vocab FILE] [--hidden N] [--layers N] [--seed N] [--dtype bf16|f32] [--force]
 *
 * DIR gets config.json (RWKV7ForCausalLM, fla's field names), model.safetensors (fla's tensor
 * names) and rwkv_vocab_v20230424.txt, the real RWKV world vocabulary the repo carries (65,529
 * tokens; vocab_size 65536). The weights follow the distributions of tests/fixtures/gen_rwkv7.py,
 * scaled so that greedy decoding is diverse rather than one repeated token, and come from
 * xoshiro256** seeded per tensor from (seed, name): the same arguments give the same bytes. The
 * head is not random: each row is a scaled embedding row of a successor token (write_head), so the
 * model's predictions are peaked (top-1 probability ~0.8 on the demo prompt) as a trained model's
 * are, and a quantized copy's KL divergence and top-1 agreement against f32 mean something.
 *
 * model.safetensors is laid out as Hugging Face's safetensors library writes it: a u64 LE header
 * length N, N bytes of compact JSON ("__metadata__" first, then the tensors sorted by descending
 * dtype alignment, then by name, with data_offsets running contiguously from 0), the header padded
 * with spaces to a multiple of 8 so every tensor's data is aligned to its element size, then the
 * data. Every file is written to NAME.tmp and renamed when complete; config.json comes last, so a
 * folder with a config.json is whole. This is a build-tree tool for the demo and the tests, not an
 * installed program (scripts/CMakeLists.txt). */
#include "budget.h"
#include "cli.h"
#include "ggml_types.h"
#include "mapfile.h"
#include "sn_err.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SN_DEMO_VOCAB
#define SN_DEMO_VOCAB "tests/fixtures/rwkv_vocab_v20230424.txt"
#endif

enum { VOCAB = 65536, HEAD_SIZE = 64, MAX_TENSORS = 64 * 40 + 8, CHUNK = 1 << 16 };

typedef struct {
    const char *out, *vocab;
    int64_t hidden, layers, seed;
    int bf16, force;
} opts;

/* ---- deterministic numbers: xoshiro256**, seeded through splitmix64 ---- */

typedef struct { uint64_t s[4]; } rng;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *r) {
    uint64_t *s = r->s;
    const uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3];
    s[2] ^= t, s[3] = rotl(s[3], 45);
    return out;
}

/* uniform in [0, 1) from the top 53 bits */
static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* one stream per tensor, so a tensor's values do not depend on which tensors came before it */
static void rng_seed(rng *r, uint64_t seed, const char *name) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the name */
    for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    uint64_t x = seed ^ h;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

/* ---- the tensors of an fla-hub RWKV-7 folder ---- */

typedef enum { NORMAL, UNIFORM } dist;

typedef struct {
    char name[80];
    int n_dims;
    uint64_t shape[3]; /* torch order: the last dimension is contiguous */
    dist kind;
    double a, b; /* NORMAL: mean, standard deviation; UNIFORM: [a, b) */
} tensor_spec;

typedef struct {
    tensor_spec t[MAX_TENSORS];
    int n;
} tensor_list;

static void add(tensor_list *l, const char *prefix, const char *name, int n_dims, uint64_t d0, uint64_t d1,
                uint64_t d2, dist kind, double a, double b) {
    tensor_spec *t = &l->t[l->n++];
    snprintf(t->name, sizeof t->name, "%s%s", prefix, name);
    t->n_dims = n_dims;
    t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2;
    t->kind = kind, t->a = a, t->b = b;
}

static uint64_t n_elems(const tensor_spec *t) {
    uint64_t n = 1;
    for (int i = 0; i < t->n_dims; i++) n *= t->shape[i];
    return n;
}

/* RWKV-LM's rank rule (the one arch_rwkv7.c applies to a null rank): max(1, round(D^e * m / 32)) * 32 */
static int64_t lora_rank(int64_t hidden, double e, double m) {
    const double r = nearbyint(pow((double)hidden, e) * m / 32.0);
    return (r < 1 ? 1 : (int64_t)r) * 32;
}

typedef struct { int64_t D, L, F, H, rw, ra, rv, rg; } dims;

static dims dims_of(const opts *o) {
    dims d = {.D = o->hidden, .L = o->layers, .F = 4 * o->hidden, .H = o->hidden / HEAD_SIZE};
    d.rw = lora_rank(d.D, 0.5, 1.8), d.ra = lora_rank(d.D, 0.5, 1.8);
    d.rv = lora_rank(d.D, 0.5, 1.3), d.rg = lora_rank(d.D, 0.8, 0.6);
    return d;
}

/* The layers' outputs into the residual stream (attention output, FFN value) at half the fan-in
 * scale, so the final state still carries the current token's embedding, which the head reads. */
#define MIX 0.5
#define HEAD_GAIN 2.0
/* the head's successor map: a bijection of the vocabulary (an odd multiplier mod 2^16) */
#define SUCC(j) (((j) * 40503u + 12345u) % VOCAB)
static int by_name(const void *x, const void *y) {
    return strcmp(((const tensor_spec *)x)->name, ((const tensor_spec *)y)->name);
}

/* fla's names and shapes; the distributions are gen_rwkv7.py's (norms near 1, lerps in [0, 1),
 * projections at 1/sqrt(fan-in); the head: write_head). */
static void list_tensors(const dims *d, tensor_list *l) {
    const uint64_t D = (uint64_t)d->D, F = (uint64_t)d->F;
    const double sd = 1.0 / sqrt((double)D), sf = 1.0 / sqrt((double)F);
    l->n = 0;
    add(l, "", "model.embeddings.weight", 2, VOCAB, D, 0, NORMAL, 0, 1);
    for (int64_t i = 0; i < d->L; i++) {
        char p[48];
        snprintf(p, sizeof p, "model.layers.%lld.", (long long)i);
        static const char *const norms[] = {"pre_norm", "attn_norm", "ffn_norm", "attn.g_norm"};
        for (int k = i == 0 ? 0 : 1; k < 4; k++) {
            char n[32];
            snprintf(n, sizeof n, "%s.weight", norms[k]);
            add(l, p, n, 1, D, 0, 0, NORMAL, 1, 0.1);
            snprintf(n, sizeof n, "%s.bias", norms[k]);
            add(l, p, n, 1, D, 0, 0, NORMAL, 0, 0.1);
        }
        static const char *const lerps[] = {"attn.x_r", "attn.x_w", "attn.x_k", "attn.x_v", "attn.x_a", "attn.x_g"};
        for (int k = 0; k < 6; k++) add(l, p, lerps[k], 3, 1, 1, D, UNIFORM, 0, 1);
        /* the four LoRAs: lora.0 = down [rank, D], lora.2 = up [D, rank], lora.2.bias = the offset;
         * layer 0 has no value-residual LoRA in fla */
        const struct { const char *name; int64_t rank; int bias; dist kind; double a, b; } loras[] = {
            {"w", d->rw, 1, UNIFORM, -3.0, 1.0}, {"a", d->ra, 1, NORMAL, 0, 0.5},
            {"v", d->rv, 1, NORMAL, 0, 0.5}, {"g", d->rg, 0, NORMAL, 0, 0}};
        for (int k = 0; k < 4; k++) {
            if (k == 2 && i == 0) continue;
            char n[48];
            snprintf(n, sizeof n, "attn.%s_lora.lora.0.weight", loras[k].name);
            add(l, p, n, 2, (uint64_t)loras[k].rank, D, 0, NORMAL, 0, 0.2);
            snprintf(n, sizeof n, "attn.%s_lora.lora.2.weight", loras[k].name);
            add(l, p, n, 2, D, (uint64_t)loras[k].rank, 0, NORMAL, 0, 0.2);
            snprintf(n, sizeof n, "attn.%s_lora.lora.2.bias", loras[k].name);
            if (loras[k].bias) add(l, p, n, 1, D, 0, 0, loras[k].kind, loras[k].a, loras[k].b);
        }
        add(l, p, "attn.k_k", 1, D, 0, 0, UNIFORM, 0.5, 1.5);
        add(l, p, "attn.k_a", 1, D, 0, 0, UNIFORM, 0.5, 1.5);
        add(l, p, "attn.r_k", 2, (uint64_t)d->H, HEAD_SIZE, 0, NORMAL, 0, 0.3);
        static const char *const proj[] = {"attn.r_proj.weight", "attn.k_proj.weight", "attn.v_proj.weight",
                                           "attn.o_proj.weight"};
        for (int k = 0; k < 4; k++) add(l, p, proj[k], 2, D, D, 0, NORMAL, 0, k == 3 ? sd * MIX : sd);
        add(l, p, "ffn.x_k", 1, D, 0, 0, UNIFORM, 0, 1);
        add(l, p, "ffn.key.weight", 2, F, D, 0, NORMAL, 0, sd);
        add(l, p, "ffn.value.weight", 2, D, F, 0, NORMAL, 0, sf * MIX);
    }
    add(l, "", "model.norm.weight", 1, D, 0, 0, NORMAL, 1, 0.1);
    add(l, "", "model.norm.bias", 1, D, 0, 0, NORMAL, 0, 0.1);
    add(l, "", "lm_head.weight", 2, VOCAB, D, 0, NORMAL, 0, 0); /* write_head: from the embedding */
    /* one dtype throughout, so HF's order (descending alignment, then name) is the name order */
    qsort(l->t, (size_t)l->n, sizeof l->t[0], by_name);
}

/* ---- files: NAME.tmp, renamed when complete; Ctrl-C removes the one being written ---- */

static char g_tmp[4096];
static volatile sig_atomic_t g_tmp_live;

static void on_signal(int sig) {
    if (g_tmp_live) unlink(g_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static sn_status open_tmp(const char *path, FILE **f, sn_err *err) {
    if (snprintf(g_tmp, sizeof g_tmp, "%s.tmp", path) >= (int)sizeof g_tmp)
        return sn_err_set(err, SN_EINVAL, "%s: path too long", path);
    *f = fopen(g_tmp, "wb");
    if (!*f) return sn_err_set(err, SN_EIO, "%s: %s", g_tmp, strerror(errno));
    g_tmp_live = 1;
    return SN_OK;
}

/* closes f and renames NAME.tmp to NAME if st is SN_OK and every write reached the disk; else removes it */
static sn_status close_tmp(FILE *f, const char *path, sn_status st, sn_err *err) {
    const int bad_write = ferror(f);
    const int bad_close = fclose(f) != 0;
    if (st == SN_OK && (bad_write || bad_close)) st = sn_err_set(err, SN_EIO, "%s: write failed: %s", g_tmp, strerror(errno));
    if (st == SN_OK && rename(g_tmp, path) != 0) st = sn_err_set(err, SN_EIO, "rename %s -> %s: %s", g_tmp, path, strerror(errno));
    if (st != SN_OK) unlink(g_tmp);
    g_tmp_live = 0;
    return st;
}

static sn_status write_text(const char *path, const char *text, size_t len, sn_err *err) {
    FILE *f;
    sn_status st = open_tmp(path, &f, err);
    if (st) return st;
    if (fwrite(text, 1, len, f) != len) st = sn_err_set(err, SN_EIO, "%s: write failed: %s", g_tmp, strerror(errno));
    return close_tmp(f, path, st, err);
}

/* ---- model.safetensors ---- */

static char *safetensors_header(const tensor_list *l, int bf16, uint64_t *len, sn_err *err) {
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(root, "__metadata__");
    int ok = meta && cJSON_AddStringToObject(meta, "format", "pt") != NULL;
    const uint64_t esize = bf16 ? 2 : 4;
    uint64_t off = 0;
    for (int i = 0; ok && i < l->n; i++) {
        const tensor_spec *t = &l->t[i];
        cJSON *e = cJSON_AddObjectToObject(root, t->name), *shape = cJSON_CreateArray(), *offs = cJSON_CreateArray();
        ok = e && shape && offs && cJSON_AddStringToObject(e, "dtype", bf16 ? "BF16" : "F32");
        for (int k = 0; ok && k < t->n_dims; k++) ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[k]));
        const uint64_t end = off + n_elems(t) * esize;
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off)) &&
             cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)end));
        if (ok) ok = cJSON_AddItemToObject(e, "shape", shape), shape = NULL;
        if (ok) ok = cJSON_AddItemToObject(e, "data_offsets", offs), offs = NULL;
        cJSON_Delete(shape);
        cJSON_Delete(offs);
        off = end;
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json) {
        sn_err_set(err, SN_ENOMEM, "out of memory for the safetensors header");
        return NULL;
    }
    const size_t n = strlen(json), padded = (n + 7) / 8 * 8; /* spaces up to a multiple of 8, as HF pads */
    char *h = realloc(json, padded + 1);
    if (!h) {
        free(json);
        sn_err_set(err, SN_ENOMEM, "out of memory for the safetensors header");
        return NULL;
    }
    memset(h + n, ' ', padded - n);
    h[padded] = 0;
    *len = padded;
    return h;
}

/* N values of tensor T's stream, from element 0 or continuing r (Box-Muller takes uniforms in pairs;
 * CHUNK is even, so chunked and whole draws give the same values). */
static void draw(const tensor_spec *t, rng *r, float *buf, size_t n) {
    if (t->kind == UNIFORM) {
        for (size_t i = 0; i < n; i++) buf[i] = (float)(t->a + (t->b - t->a) * rng_unit(r));
        return;
    }
    for (size_t i = 0; i < n; i += 2) { /* Box-Muller: two normals per pair of uniforms */
        const double rad = sqrt(-2.0 * log(1.0 - rng_unit(r))), ang = 6.283185307179586 * rng_unit(r);
        buf[i] = (float)(t->a + t->b * rad * cos(ang));
        if (i + 1 < n) buf[i + 1] = (float)(t->a + t->b * rad * sin(ang));
    }
}

static sn_status write_rows(FILE *f, const tensor_spec *t, const float *v, size_t n, int bf16, uint16_t *half,
                            sn_err *err) {
    size_t wrote;
    if (bf16) {
        sn_fp32_to_bf16_row(v, half, n);
        wrote = fwrite(half, 2, n, f);
    } else {
        wrote = fwrite(v, 4, n, f);
    }
    if (wrote != n) return sn_err_set(err, SN_EIO, "%s: write failed in tensor '%s': %s", g_tmp, t->name, strerror(errno));
    return SN_OK;
}

/* The head: row j is HEAD_GAIN/sqrt(D) times the embedding row SUCC(j), so the token whose
 * embedding the final state carries has one successor with a clear margin (a top-1 probability
 * near 0.7 rather than a near-uniform spread), while the layers' mixing still moves it: quality
 * measures (KL, top-1 agreement of a quantized copy) then mean something on this model. */
static sn_status write_head(FILE *f, const tensor_spec *t, const tensor_spec *emb, uint64_t seed, int bf16,
                            float *buf, uint16_t *half, sn_err *err) {
    const uint64_t D = t->shape[1];
    float *e = malloc((size_t)(VOCAB * D) * sizeof *e);
    if (!e) return sn_err_set(err, SN_ENOMEM, "out of memory for the head");
    rng r;
    rng_seed(&r, seed, emb->name);
    draw(emb, &r, e, (size_t)(VOCAB * D));
    const float g = (float)(HEAD_GAIN / sqrt((double)D));
    sn_status st = SN_OK;
    for (uint64_t j = 0; st == SN_OK && j < VOCAB; j++) {
        const float *src = e + SUCC(j) * D;
        for (uint64_t i = 0; i < D; i++) buf[i] = g * src[i];
        st = write_rows(f, t, buf, (size_t)D, bf16, half, err);
    }
    free(e);
    return st;
}

static sn_status write_tensor_data(FILE *f, const tensor_spec *t, uint64_t seed, int bf16, float *buf, uint16_t *half,
                                   sn_err *err) {
    rng r;
    rng_seed(&r, seed, t->name);
    for (uint64_t left = n_elems(t); left > 0;) {
        const size_t n = left < CHUNK ? (size_t)left : CHUNK;
        draw(t, &r, buf, n);
        sn_status st = write_rows(f, t, buf, n, bf16, half, err);
        if (st) return st;
        left -= n;
    }
    return SN_OK;
}

static sn_status write_safetensors(const char *path, const tensor_list *l, const opts *o, sn_err *err) {
    uint64_t hlen = 0;
    char *h = safetensors_header(l, o->bf16, &hlen, err);
    if (!h) return err->code;
    float *buf = malloc(CHUNK * sizeof *buf);
    uint16_t *half = malloc(CHUNK * sizeof *half);
    FILE *f = NULL;
    sn_status st = !buf || !half ? sn_err_set(err, SN_ENOMEM, "out of memory") : open_tmp(path, &f, err);
    if (st == SN_OK) {
        uint8_t le[8];
        for (int i = 0; i < 8; i++) le[i] = (uint8_t)(hlen >> (8 * i));
        if (fwrite(le, 1, 8, f) != 8 || fwrite(h, 1, (size_t)hlen, f) != hlen)
            st = sn_err_set(err, SN_EIO, "%s: write failed: %s", g_tmp, strerror(errno));
        const tensor_spec *emb = NULL;
        for (int i = 0; i < l->n; i++)
            if (!strcmp(l->t[i].name, "model.embeddings.weight")) emb = &l->t[i];
        for (int i = 0; st == SN_OK && i < l->n; i++)
            st = !strcmp(l->t[i].name, "lm_head.weight")
                     ? write_head(f, &l->t[i], emb, (uint64_t)o->seed, o->bf16, buf, half, err)
                     : write_tensor_data(f, &l->t[i], (uint64_t)o->seed, o->bf16, buf, half, err);
        st = close_tmp(f, path, st, err);
    }
    free(h);
    free(buf);
    free(half);
    return st;
}

/* ---- config.json: fla's RWKV7Config fields ---- */

static sn_status write_config(const char *path, const dims *d, int bf16, sn_err *err) {
    cJSON *c = cJSON_CreateObject(), *arch = cJSON_AddArrayToObject(c, "architectures"), *vd = NULL;
    int ok = arch && cJSON_AddItemToArray(arch, cJSON_CreateString("RWKV7ForCausalLM"));
    const struct { const char *key; double v; } nums[] = {
        {"hidden_size", (double)d->D}, {"num_hidden_layers", (double)d->L}, {"head_dim", HEAD_SIZE},
        {"num_heads", (double)d->H}, {"norm_eps", 1e-5}, {"decay_low_rank_dim", (double)d->rw},
        {"a_low_rank_dim", (double)d->ra}, {"v_low_rank_dim", (double)d->rv}, {"gate_low_rank_dim", (double)d->rg},
        {"hidden_ratio", (double)d->F / (double)d->D}, {"intermediate_size", (double)d->F},
        {"max_position_embeddings", 2048}, {"vocab_size", VOCAB}, {"bos_token_id", 0}, {"eos_token_id", 0}};
    ok = ok && cJSON_AddStringToObject(c, "model_type", "rwkv7");
    for (size_t i = 0; ok && i < sizeof nums / sizeof nums[0]; i++) ok = cJSON_AddNumberToObject(c, nums[i].key, nums[i].v) != NULL;
    ok = ok && (vd = cJSON_AddArrayToObject(c, "value_dim"));
    for (int64_t i = 0; ok && i < d->L; i++) ok = cJSON_AddItemToArray(vd, cJSON_CreateNumber((double)d->D));
    ok = ok && cJSON_AddStringToObject(c, "hidden_act", "sqrelu") && cJSON_AddTrueToObject(c, "norm_bias") &&
         cJSON_AddTrueToObject(c, "norm_first") && cJSON_AddFalseToObject(c, "tie_word_embeddings") &&
         cJSON_AddStringToObject(c, "torch_dtype", bf16 ? "bfloat16" : "float32") && cJSON_AddNullToObject(c, "attn") &&
         cJSON_AddStringToObject(c, "attn_mode", "chunk");
    char *txt = ok ? cJSON_Print(c) : NULL;
    cJSON_Delete(c);
    if (!txt) return sn_err_set(err, SN_ENOMEM, "out of memory for config.json");
    const size_t n = strlen(txt);
    char *line = realloc(txt, n + 2);
    if (!line) {
        free(txt);
        return sn_err_set(err, SN_ENOMEM, "out of memory for config.json");
    }
    line[n] = '\n', line[n + 1] = 0;
    const sn_status st = write_text(path, line, n + 1, err);
    free(line);
    return st;
}

/* ---- main ---- */

static void usage(FILE *f) {
    fprintf(f,
            "Usage: demo_model --out DIR [options]\n"
            "Writes a random-weight RWKV-7 model in fla-hub's Hugging Face layout (config.json,\n"
            "model.safetensors, rwkv_vocab_v20230424.txt): the model `make demo` converts and runs.\n"
            "The weights are random, so its text is gibberish by design.\n"
            "  --out DIR      the folder to write (created; its parent must exist)\n"
            "  --vocab FILE   the RWKV world vocabulary to copy in (default: %s)\n"
            "  --hidden N     hidden size, a multiple of %d (default: 256)\n"
            "  --layers N     number of layers (default: 6)\n"
            "  --seed N       seed of the random weights (default: 7)\n"
            "  --dtype T      bf16 or f32 (default: bf16)\n"
            "  --force        overwrite a model already in DIR (default: off: refuse)\n"
            "  -h, --help     this text\n",
            SN_DEMO_VOCAB, HEAD_SIZE);
}

static int parse(int argc, char **argv, opts *o) {
    *o = (opts){.vocab = SN_DEMO_VOCAB, .hidden = 256, .layers = 6, .seed = 7, .bf16 = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(SN_EXIT_OK);
        } else if (!strcmp(a, "--force")) {
            o->force = 1;
        } else if (!strcmp(a, "--out") || !strcmp(a, "--vocab") || !strcmp(a, "--hidden") || !strcmp(a, "--layers") ||
                   !strcmp(a, "--seed") || !strcmp(a, "--dtype")) {
            if (!v) return sn_cli_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--out")) o->out = v;
            else if (!strcmp(a, "--vocab")) o->vocab = v;
            else if (!strcmp(a, "--dtype")) {
                if (strcmp(v, "bf16") && strcmp(v, "f32")) return sn_cli_usage_error("--dtype: '%s' is not bf16 or f32", v);
                o->bf16 = !strcmp(v, "bf16");
            } else if (!strcmp(a, "--hidden")) {
                if (sn_cli_parse_i64(v, HEAD_SIZE, 4096, &o->hidden) || o->hidden % HEAD_SIZE)
                    return sn_cli_usage_error("--hidden: '%s' is not a multiple of %d in [%d, 4096]", v, HEAD_SIZE, HEAD_SIZE);
            } else if (!strcmp(a, "--layers")) {
                if (sn_cli_parse_i64(v, 1, 64, &o->layers)) return sn_cli_usage_error("--layers: '%s' is not in [1, 64]", v);
            } else if (sn_cli_parse_i64(v, 0, INT64_MAX, &o->seed)) {
                return sn_cli_usage_error("--seed: '%s' is not a non-negative integer", v);
            }
        } else {
            return sn_cli_usage_error("unknown option '%s'", a);
        }
    }
    if (!o->out) return sn_cli_usage_error("--out DIR is required");
    return -1;
}

static sn_status path_in(char *buf, size_t cap, const char *dir, const char *name, sn_err *err) {
    if (snprintf(buf, cap, "%s/%s", dir, name) >= (int)cap) return sn_err_set(err, SN_EINVAL, "%s: path too long", dir);
    return SN_OK;
}

static sn_status run(const opts *o, sn_err *err) {
    char cfg[4096], st_path[4096], voc[4096];
    sn_status st;
    if ((st = path_in(cfg, sizeof cfg, o->out, "config.json", err)) ||
        (st = path_in(st_path, sizeof st_path, o->out, "model.safetensors", err)) ||
        (st = path_in(voc, sizeof voc, o->out, "rwkv_vocab_v20230424.txt", err)))
        return st;
    struct stat sb;
    if (!o->force && stat(cfg, &sb) == 0)
        return sn_err_set(err, SN_EINVAL, "%s: a model is already there (--force overwrites it)", o->out);
    char *vocab = NULL;
    uint64_t vlen = 0;
    if ((st = SN_READ_FILE(o->vocab, SN_BUDGET_VOCAB_FILE, &vocab, &vlen, err))) return sn_err_prefix(err, "--vocab");
    if (strncmp(vocab, "1 ", 2) != 0) {
        free(vocab);
        return sn_err_set(err, SN_EFORMAT, "%s: not an RWKV world vocabulary (line 1 should start with token id 1)", o->vocab);
    }
    if (mkdir(o->out, 0755) != 0 && errno != EEXIST) {
        free(vocab);
        return sn_err_set(err, SN_EIO, "%s: %s", o->out, strerror(errno));
    }
    /* an old config.json beside new weights would claim a whole folder: it goes first, comes last */
    if (unlink(cfg) != 0 && errno != ENOENT) {
        free(vocab);
        return sn_err_set(err, SN_EIO, "%s: %s", cfg, strerror(errno));
    }
    const dims d = dims_of(o);
    tensor_list *l = malloc(sizeof *l);
    if (!l) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!st) list_tensors(&d, l);
    if (!st) st = write_text(voc, vocab, (size_t)vlen, err);
    if (!st) st = write_safetensors(st_path, l, o, err);
    if (!st) st = write_config(cfg, &d, o->bf16, err); /* last: a folder with config.json is whole */
    if (!st) {
        uint64_t params = 0;
        for (int i = 0; i < l->n; i++) params += n_elems(&l->t[i]);
        printf("%s: RWKV-7 (fla-hub layout), hidden %lld, %lld layers, vocab %d, %.1fM parameters in %d tensors, %s, "
               "seed %lld: random weights\n",
               o->out, (long long)d.D, (long long)d.L, VOCAB, (double)params / 1e6, l->n, o->bf16 ? "bf16" : "f32",
               (long long)o->seed);
    }
    free(l);
    free(vocab);
    return st;
}

/* Ctrl-C or a kill while a file is written removes its NAME.tmp (on_signal). */
static void unlink_tmp_on_signals(void) {
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
}

int main(int argc, char **argv) {
    sn_cli_init("demo_model");
    opts o;
    const int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    unlink_tmp_on_signals();
    sn_err err = {0};
    if (run(&o, &err)) return sn_cli_fail(&err);
    return SN_EXIT_OK;
}
