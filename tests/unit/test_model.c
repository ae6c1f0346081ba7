/* test_model.c - loading, validation and the forward pass's invariants on tiny random GGUFs.
 *
 * Parity with llama.cpp is tests/integration/test_run_parity.sh; here we check what a user would
 * notice without an oracle: a malformed or unsupported file is refused with a message naming the
 * tensor/key (never a crash or a silent wrong answer), results do not depend on the thread count
 * or on whether the prompt is fed at once or token by token (up to rounding), reset forgets the
 * context, the sampler behaves (greedy = argmax, seeded sampling is reproducible), and the shared
 * generation loop is the hand-written eval/argmax loop, stopping where its caller says (and, for a
 * chat, evaluating the stopping token too). */
#include "sn_test.h"

#include "ggml_types.h"
#include "gguf.h"
#include "generate.h"
#include "model.h"
#include "sampler.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { E = 64, L = 2, H = 4, KV = 2, HD = 16, FF = 128, V = 96, CTX = 256 };

typedef struct {
    const char *arch;
    int wtype;             /* matrix type */
    const char *skip;      /* tensor to leave out */
    const char *bad_shape; /* tensor written with a wrong shape */
} spec;

static uint64_t rs = 88172645463325252ull;
static float rnd(void) {
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((float)(rs >> 40) / (float)(1 << 24) - 0.5f) * 2.0f;
}

typedef struct { char name[64]; int nd; uint64_t ne[2]; int type; } tinfo;

static int write_model(const char *path, const spec *sp) {
    sn_err err = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    char key[128];
    sn_gguf_writer_set_str(w, "general.architecture", sp->arch);
#define K(s) (snprintf(key, sizeof(key), "%s." s, sp->arch), key)
    sn_gguf_writer_set_u32(w, K("context_length"), CTX);
    sn_gguf_writer_set_u32(w, K("embedding_length"), E);
    sn_gguf_writer_set_u32(w, K("block_count"), L);
    sn_gguf_writer_set_u32(w, K("feed_forward_length"), FF);
    sn_gguf_writer_set_u32(w, K("attention.head_count"), H);
    sn_gguf_writer_set_u32(w, K("attention.head_count_kv"), KV);
    sn_gguf_writer_set_f32(w, K("attention.layer_norm_rms_epsilon"), 1e-5f);
    sn_gguf_writer_set_f32(w, K("rope.freq_base"), 10000.0f);
    if (!strcmp(sp->arch, "qwen3")) sn_gguf_writer_set_u32(w, K("attention.key_length"), HD);
#undef K
    tinfo t[64];
    int n = 0;
#define ADD(nm, d0, d1, ty) do { snprintf(t[n].name, 64, "%s", nm); t[n].nd = (d1) > 1 ? 2 : 1; \
        t[n].ne[0] = d0; t[n].ne[1] = d1; t[n].type = ty; n++; } while (0)
    ADD("token_embd.weight", E, V, sp->wtype);
    ADD("output_norm.weight", E, 1, SN_GGML_F32);
    for (int l = 0; l < L; l++) {
        char b[64];
#define B(s) (snprintf(b, sizeof(b), "blk.%d." s, l), b)
        ADD(B("attn_norm.weight"), E, 1, SN_GGML_F32);
        ADD(B("attn_q.weight"), E, H * HD, sp->wtype);
        ADD(B("attn_k.weight"), E, KV * HD, sp->wtype);
        ADD(B("attn_v.weight"), E, KV * HD, sp->wtype);
        ADD(B("attn_output.weight"), H * HD, E, sp->wtype);
        ADD(B("ffn_norm.weight"), E, 1, SN_GGML_F32);
        ADD(B("ffn_gate.weight"), E, FF, sp->wtype);
        ADD(B("ffn_up.weight"), E, FF, sp->wtype);
        ADD(B("ffn_down.weight"), FF, E, sp->wtype);
        if (!strcmp(sp->arch, "qwen2")) {
            ADD(B("attn_q.bias"), H * HD, 1, SN_GGML_F32);
            ADD(B("attn_k.bias"), KV * HD, 1, SN_GGML_F32);
            ADD(B("attn_v.bias"), KV * HD, 1, SN_GGML_F32);
        }
        if (!strcmp(sp->arch, "qwen3")) {
            ADD(B("attn_q_norm.weight"), HD, 1, SN_GGML_F32);
            ADD(B("attn_k_norm.weight"), HD, 1, SN_GGML_F32);
        }
#undef B
    }
#undef ADD
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (sp->skip && !strcmp(t[i].name, sp->skip)) continue;
        if (sp->bad_shape && !strcmp(t[i].name, sp->bad_shape)) t[i].ne[0] += 32;
        t[kept++] = t[i];
        if (sn_gguf_writer_add_tensor(w, t[kept - 1].name, (uint32_t)t[kept - 1].nd, t[kept - 1].ne, t[kept - 1].type, &err) < 0)
            return -1;
    }
    if (sn_gguf_writer_begin(w, path, &err)) return -1;
    for (int i = 0; i < kept; i++) {
        const uint64_t rows = t[i].ne[1], ne0 = t[i].ne[0];
        const int is_norm = strstr(t[i].name, "norm") != NULL;
        float *row = malloc(ne0 * sizeof(float));
        void *q = malloc(ne0 * 4 + 64);
        for (uint64_t r = 0; r < rows; r++) {
            for (uint64_t j = 0; j < ne0; j++) row[j] = is_norm ? 1.0f + 0.2f * rnd() : rnd() * 0.3f;
            const uint64_t rb = sn_ggml_row_size(t[i].type, ne0);
            switch (t[i].type) {
            case SN_GGML_F32: memcpy(q, row, rb); break;
            case SN_GGML_F16: sn_fp32_to_fp16_row(row, q, ne0); break;
            case SN_GGML_Q8_0: sn_quantize_row_q8_0(row, q, (int64_t)ne0); break;
            default: memset(q, 0, rb); break;
            }
            if (sn_gguf_writer_write(w, q, rb, &err)) return -1;
        }
        free(row);
        free(q);
        if (sn_gguf_writer_end_tensor(w, &err)) return -1;
    }
    if (sn_gguf_writer_finish(w, &err)) return -1;
    sn_gguf_writer_free(w);
    return 0;
}

static char tmpdir[256];
/* The scratch folder goes at exit with whatever the cases left in it (forked children _exit). */
static void tmpdir_remove(void) {
    DIR *d = opendir(tmpdir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char f[600];
        snprintf(f, sizeof(f), "%s/%s", tmpdir, e->d_name);
        unlink(f);
    }
    closedir(d);
    rmdir(tmpdir);
}
static const char *tmp_path(const char *name) {
    static char p[512];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/sn_test_model_XXXXXX");
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
        atexit(tmpdir_remove);
    }
    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    return p;
}

static sn_model *load_tuned(const char *path, int threads, int mmap_weights, const sn_tuning *t, sn_status *st,
                            sn_err *err) {
    sn_model_params p;
    sn_model_params_default(&p);
    p.tuning = *t;
    p.n_threads = threads;
    p.mmap_weights = mmap_weights;
    p.n_ctx = CTX;
    sn_model *m = NULL;
    *st = sn_model_load(path, &p, &m, err);
    return m;
}

static sn_model *load_opt(const char *path, int threads, int mmap_weights, sn_status *st, sn_err *err) {
    return load_tuned(path, threads, mmap_weights, sn_test_tuning(), st, err);
}

static sn_model *load(const char *path, int threads, sn_status *st, sn_err *err) {
    return load_opt(path, threads, 0, st, err);
}

static void eval_all(sn_model *m, const int32_t *ids, int n, int one_by_one, float *logits) {
    sn_err err = {0};
    if (one_by_one) {
        for (int i = 0; i < n; i++) CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, ids + i, 1, logits, &err), SN_OK);
    } else {
        CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, ids, n, logits, &err), SN_OK);
    }
}

static void check_arch(const char *arch, int wtype) {
    const spec sp = {arch, wtype, NULL, NULL};
    const char *path = tmp_path("m.gguf");
    CU_ASSERT_EQUAL_FATAL(write_model(path, &sp), 0);
    sn_err err = {0};
    sn_status st;
    sn_model *m1 = load(path, 1, &st, &err);
    if (st) printf("\n  load failed: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    sn_model *m3 = load(path, 3, &st, &err);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    sn_model *m0 = load_opt(path, 1, 1, &st, &err); /* the matrices read in place, not copied into huge pages */
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    CU_ASSERT_EQUAL(sn_model_n_vocab(m1), V);
    int32_t ids[80];
    for (int i = 0; i < 80; i++) ids[i] = (i * 37 + 5) % V;
    float a[V], b[V], c[V];
    for (int n = 5; n <= 80; n += 75) { /* 5: per-query kernel; 80: tiled kernel for >= 64 */
        eval_all(m1, ids, n, 0, a);
        eval_all(m3, ids, n, 0, b);
        CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0); /* thread count never changes a result */
        eval_all(m0, ids, n, 0, b);
        CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0); /* nor where the weights live (copied at load or mapped) */
        sn_model_reset(m0);
        sn_model_reset(m1);
        eval_all(m1, ids, n, 1, c);                   /* token by token: same up to rounding */
        float mx = 0, diff = 0;
        for (int i = 0; i < V; i++) {
            CU_ASSERT(isfinite(a[i]));
            mx = fmaxf(mx, fabsf(a[i]));
            diff = fmaxf(diff, fabsf(a[i] - c[i]));
        }
        CU_ASSERT(mx > 0);
        CU_ASSERT(diff <= 0.05f * mx + 1e-3f);
        sn_model_reset(m1);
        sn_model_reset(m3);
    }
    /* reset forgets: the same prompt again gives the same logits */
    eval_all(m1, ids, 7, 0, a);
    sn_model_reset(m1);
    eval_all(m1, ids, 7, 0, b);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
    /* context and token checks */
    int32_t bad = V;
    CU_ASSERT_EQUAL(sn_model_eval(m1, &bad, 1, a, &err), SN_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "outside the vocabulary"));
    int32_t many[CTX];
    memset(many, 0, sizeof(many));
    CU_ASSERT_EQUAL(sn_model_eval(m1, many, CTX, a, &err), SN_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "context"));
    sn_model_free(m1);
    sn_model_free(m3);
    sn_model_free(m0);
    unlink(path);
}

/* Logits of a fixed run (an 80-token prompt: the batched kernels; then 3 decode steps: the
 * single-token ones) into out[4][V]; with `other`, that model's same steps interleave with these.
 * No CUnit assertion (a forked child runs it): returns the first failing status. */
static sn_status tuned_run(sn_model *m, sn_model *other, float out[4][V]) {
    int32_t ids[80];
    for (int i = 0; i < 80; i++) ids[i] = (i * 37 + 5) % V;
    float scratch[V];
    sn_err err = {0};
    sn_status st = sn_model_eval(m, ids, 80, out[0], &err);
    if (!st && other) st = sn_model_eval(other, ids, 80, scratch, &err);
    for (int s = 1; s < 4 && !st; s++) {
        st = sn_model_eval(m, ids + 10 + s, 1, out[s], &err);
        if (!st && other) st = sn_model_eval(other, ids + 20 + s, 1, scratch, &err);
    }
    return st;
}

/* Tuning is per handle: two models loaded with different tunings (instruction sets, lanes, far
 * streams, page kick, F16 batches) run side by side in one process, each giving bit for bit the
 * logits it gives loaded alone (in a child process of its own). */
static void test_two_tunings(void) {
    const spec sp = {"qwen2", SN_GGML_F16, NULL, NULL};
    const char *path = tmp_path("tuned.gguf");
    CU_ASSERT_EQUAL_FATAL(write_model(path, &sp), 0);
    sn_tuning t[2];
    t[0] = *sn_test_tuning();
    t[0].lanes = 16, t[0].far_streams = 1, t[0].page_kick = 1, t[0].mm_f16_convert = 1;
    sn_tuning_default(&t[1]);
    t[1].isa &= SN_CPU_AMD; /* scalar kernels */
    t[1].lanes = 8, t[1].far_streams = 0, t[1].page_kick = 0, t[1].mm_f16_convert = 0, t[1].repack_q4_0 = 0;
    static float alone[2][4][V], mixed[2][4][V];
    for (int i = 0; i < 2; i++) { /* each alone, in a fresh process */
        int fd[2];
        CU_ASSERT_EQUAL_FATAL(pipe(fd), 0);
        const pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            sn_err err = {0};
            sn_status st;
            sn_model *m = load_tuned(path, 2, 0, &t[i], &st, &err);
            if (!m) _exit(1);
            float out[4][V];
            if (tuned_run(m, NULL, out)) _exit(1);
            _exit(write(fd[1], out, sizeof out) == (ssize_t)sizeof out ? 0 : 1);
        }
        close(fd[1]);
        size_t got = 0;
        for (ssize_t r; got < sizeof alone[i] && (r = read(fd[0], (char *)alone[i] + got, sizeof alone[i] - got)) > 0;)
            got += (size_t)r;
        close(fd[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        CU_ASSERT_FATAL(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == sizeof alone[i]);
    }
    sn_err err = {0};
    sn_status st;
    sn_model *a = load_tuned(path, 2, 0, &t[0], &st, &err);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    sn_model *b = load_tuned(path, 2, 0, &t[1], &st, &err); /* a conflicting tuning loads too */
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    CU_ASSERT_EQUAL_FATAL(tuned_run(a, b, mixed[0]), SN_OK);
    sn_model_reset(a);
    sn_model_reset(b);
    CU_ASSERT_EQUAL_FATAL(tuned_run(b, a, mixed[1]), SN_OK);
    CU_ASSERT_EQUAL(memcmp(alone[0], mixed[0], sizeof alone[0]), 0);
    CU_ASSERT_EQUAL(memcmp(alone[1], mixed[1], sizeof alone[1]), 0);
    /* and the tunings took effect: 16-lane and 8-lane float sums round differently */
    CU_ASSERT_NOT_EQUAL(memcmp(mixed[0], mixed[1], sizeof mixed[0]), 0);
    sn_model_free(a);
    sn_model_free(b);
}

static void test_llama_f32(void) { check_arch("llama", SN_GGML_F32); }
static void test_llama_q8_0(void) { check_arch("llama", SN_GGML_Q8_0); }
static void test_qwen2_f16(void) { check_arch("qwen2", SN_GGML_F16); }
static void test_qwen3_f32(void) { check_arch("qwen3", SN_GGML_F32); }

static void expect_refusal(const spec *sp, sn_status code, const char *needle) {
    const char *path = tmp_path("bad.gguf");
    CU_ASSERT_EQUAL_FATAL(write_model(path, sp), 0);
    sn_err err = {0};
    sn_status st;
    sn_model *m = load(path, 1, &st, &err);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(st, code);
    if (!strstr(err.msg, needle)) printf("\n  message '%s' lacks '%s'\n", err.msg, needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path)); /* names the file */
    sn_model_free(m);
    unlink(path);
}

static void test_refusals(void) {
    const spec missing = {"llama", SN_GGML_F32, "blk.1.ffn_up.weight", NULL};
    expect_refusal(&missing, SN_EFORMAT, "blk.1.ffn_up.weight");
    const spec shape = {"llama", SN_GGML_F32, NULL, "blk.0.attn_k.weight"};
    expect_refusal(&shape, SN_EFORMAT, "blk.0.attn_k.weight");
    const spec arch = {"mamba", SN_GGML_F32, NULL, NULL};
    expect_refusal(&arch, SN_EUNSUPPORTED, "mamba");
    const spec qwen3_no_norm = {"qwen3", SN_GGML_F32, "blk.0.attn_q_norm.weight", NULL};
    expect_refusal(&qwen3_no_norm, SN_EFORMAT, "attn_q_norm");
    const spec nvfp4 = {"llama", 40 /* NVFP4: a ggml type sunny-run does not run */, NULL, NULL};
    expect_refusal(&nvfp4, SN_EUNSUPPORTED, "NVFP4");
    sn_err err = {0};
    sn_model *m = NULL;
    CU_ASSERT_NOT_EQUAL(sn_model_load(tmp_path("does-not-exist.gguf"), NULL, &m, &err), SN_OK);
    CU_ASSERT_PTR_NULL(m);
}

/* The one-pass scan sn_argmax must agree with (llama.cpp's greedy pick keeps the first maximum). */
static int32_t argmax_scan(const float *x, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return (int32_t)best;
}

static void test_argmax(void) {
    enum { N = 65536 + 37 };
    float *x = malloc(N * sizeof(float));
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    uint32_t st = 12345;
    int wrong = 0;
    for (int trial = 0; trial < 400; trial++) {
        const int64_t n = trial < 40 ? trial : trial % 3 ? 1 + (int64_t)(st % N) : N;
        for (int64_t i = 0; i < n; i++) {
            st = st * 1664525u + 1013904223u;
            x[i] = (float)(int)(st >> 24) / 8.0f - 16.0f; /* few distinct values: ties everywhere */
        }
        if (n > 2 && trial % 5 == 0) x[(st >> 8) % n] = NAN;
        if (n > 2 && trial % 7 == 0) x[0] = NAN;
        if (n > 3 && trial % 11 == 0) { /* a -0 / +0 tie for the maximum */
            for (int64_t i = 0; i < n; i++) x[i] = -1.0f;
            x[n / 3] = -0.0f;
            x[n / 2] = 0.0f;
        }
        if (n > 0 && trial % 13 == 0) x[n - 1] = 1e30f; /* the maximum in the tail past whole lanes */
        if (n > 64 && trial % 4 == 1) { /* distinct values; a NaN later in the maximum's own lane */
            for (int64_t i = 0; i < n; i++) {
                st = st * 1664525u + 1013904223u;
                x[i] = (float)(st >> 8) / 16777216.0f;
            }
            const int64_t p = (int64_t)((st >> 4) % (uint32_t)(n - 32));
            x[p] = 2.0f;
            x[p + 16] = NAN;
        }
        if (sn_argmax(x, n) != argmax_scan(x, n)) wrong++;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    free(x);
}

static void test_sampler(void) {
    float logits[10] = {0.1f, 3.0f, -1.0f, 3.0f, 2.9f, 0, 0, 0, 0, 0};
    CU_ASSERT_EQUAL(sn_argmax(logits, 10), 1); /* first of equal maxima, as llama.cpp */
    sn_sampler_params p;
    sn_sampler_params_default(&p);
    sn_sampler *s;
    sn_err err;
    CU_ASSERT_EQUAL_FATAL(sn_sampler_new(&p, &s, &err), SN_OK);
    CU_ASSERT_EQUAL(sn_sampler_sample(s, logits, 10), 1);
    sn_sampler_free(s);
    p.temp = 1.0f; p.top_k = 3; p.seed = 42;
    int32_t seq1[50], seq2[50];
    CU_ASSERT_EQUAL_FATAL(sn_sampler_new(&p, &s, &err), SN_OK);
    for (int i = 0; i < 50; i++) seq1[i] = sn_sampler_sample(s, logits, 10);
    sn_sampler_free(s);
    CU_ASSERT_EQUAL_FATAL(sn_sampler_new(&p, &s, &err), SN_OK);
    int seen[10] = {0};
    for (int i = 0; i < 50; i++) { seq2[i] = sn_sampler_sample(s, logits, 10); seen[seq2[i]]++; }
    sn_sampler_free(s);
    CU_ASSERT_EQUAL(memcmp(seq1, seq2, sizeof(seq1)), 0);
    CU_ASSERT(seen[1] > 0 && seen[3] > 0 && seen[4] > 0);                  /* top-3 all drawn */
    CU_ASSERT_EQUAL(seen[0] + seen[2] + seen[5] + seen[6] + seen[7] + seen[8] + seen[9], 0);
    p.top_k = 0; p.top_p = 0.01f; /* nucleus of one */
    CU_ASSERT_EQUAL_FATAL(sn_sampler_new(&p, &s, &err), SN_OK);
    for (int i = 0; i < 10; i++) CU_ASSERT_EQUAL(sn_sampler_sample(s, logits, 10), 1);
    sn_sampler_free(s);
}

typedef struct { int32_t ids[16]; int n, stop_at, fail_at; } gen_rec;
static int rec_token(void *ud, int32_t id, const float *logits, int64_t n_vocab) {
    gen_rec *r = ud;
    CU_ASSERT_EQUAL(id, sn_argmax(logits, n_vocab));
    r->ids[r->n++] = id;
    if (r->n == r->fail_at) return SN_ENOMEM;
    return r->n == r->stop_at;
}

static void test_generate(void) {
    int32_t top[8];
    const float x[5] = {0.1f, 3.0f, -1.0f, 3.0f, 2.9f};
    CU_ASSERT_EQUAL(sn_top_k(x, 5, 3, top), 3);
    CU_ASSERT(top[0] == 1 && top[1] == 3 && top[2] == 4); /* ties to the lower index */
    CU_ASSERT_EQUAL(sn_top_k(x, 2, 8, top), 2);
    CU_ASSERT(top[0] == 1 && top[1] == 0);

    const spec sp = {"llama", SN_GGML_F32, NULL, NULL};
    const char *path = tmp_path("g.gguf");
    CU_ASSERT_EQUAL_FATAL(write_model(path, &sp), 0);
    sn_err err = {0};
    sn_status st;
    sn_model *m = load(path, 1, &st, &err);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    const int32_t prompt[3] = {5, 17, 42};
    float logits[V];
    int32_t want[6];
    CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, prompt, 3, logits, &err), SN_OK);
    for (int i = 0; i < 6; i++) {
        want[i] = sn_argmax(logits, V);
        if (i < 5) CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, &want[i], 1, logits, &err), SN_OK);
    }
    sn_model_reset(m);
    gen_rec r = {.stop_at = -1, .fail_at = -1};
    sn_gen_times t;
    CU_ASSERT_EQUAL(sn_generate(m, NULL, prompt, 3, 6, logits, rec_token, &r, NULL, &t, &err), SN_OK);
    CU_ASSERT_EQUAL(r.n, 6);
    CU_ASSERT_EQUAL(memcmp(r.ids, want, sizeof want), 0);
    CU_ASSERT_EQUAL(t.n_decode, 5); /* the last token is not evaluated */
    sn_model_reset(m);
    r = (gen_rec){.stop_at = 2, .fail_at = -1};
    CU_ASSERT_EQUAL(sn_generate(m, NULL, prompt, 3, 6, logits, rec_token, &r, NULL, &t, &err), SN_OK);
    CU_ASSERT(r.n == 2 && t.n_decode == 1 && r.ids[1] == want[1]);
    /* feed_stop (a chat): the stopping token is evaluated too, so the cache holds it; n_prompt 0
     * continues from the caller's logits; ctx_left stops before choosing past the context */
    sn_model_reset(m);
    float after2[V], direct[V];
    CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, prompt, 3, direct, &err), SN_OK);
    for (int i = 0; i < 2; i++) /* the logits after want[1] */
        CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, want + i, 1, direct, &err), SN_OK);
    sn_model_reset(m);
    CU_ASSERT_EQUAL_FATAL(sn_model_eval(m, prompt, 3, after2, &err), SN_OK);
    r = (gen_rec){.stop_at = 2, .fail_at = -1};
    const sn_gen_opts feed = {.feed_stop = 1};
    CU_ASSERT_EQUAL(sn_generate(m, NULL, NULL, 0, -1, after2, rec_token, &r, &feed, &t, &err), SN_OK);
    CU_ASSERT(r.n == 2 && t.n_decode == 2 && !t.ctx_full && memcmp(after2, direct, sizeof direct) == 0);
    sn_model_reset(m);
    r = (gen_rec){.stop_at = -1, .fail_at = -1};
    const sn_gen_opts bounded = {.feed_stop = 1, .ctx_left = 6};
    CU_ASSERT_EQUAL(sn_generate(m, NULL, prompt, 3, -1, logits, rec_token, &r, &bounded, &t, &err), SN_OK);
    CU_ASSERT(r.n == 3 && t.n_decode == 3 && t.ctx_full && memcmp(r.ids, want, 3 * sizeof *want) == 0);
    sn_model_reset(m);
    r = (gen_rec){.stop_at = -1, .fail_at = 3};
    CU_ASSERT_EQUAL(sn_generate(m, NULL, prompt, 3, 6, logits, rec_token, &r, NULL, NULL, &err), SN_ENOMEM);
    CU_ASSERT_EQUAL(r.n, 3);
    sn_model_free(m);
    unlink(path);
}

/* Penalties as llama.cpp's llama_sampler_penalties: the expected probabilities are llama.cpp's own
 * (tests/test-sampling.cpp, test_penalties: logits log(p), penalties, softmax); the window has as
 * many tokens as the history given. */
static void penalties_case(const int32_t *hist, int nh, const float *want, float rep, float freq, float pres) {
    sn_sampler_params p;
    sn_sampler_params_default(&p);
    p.penalty_last_n = nh;
    p.penalty_repeat = rep;
    p.penalty_freq = freq;
    p.penalty_present = pres;
    sn_sampler *s;
    sn_err err;
    CU_ASSERT_EQUAL_FATAL(sn_sampler_new(&p, &s, &err), SN_OK);
    for (int i = 0; i < nh; i++) sn_sampler_accept(s, hist[i]);
    float l[5];
    for (int i = 0; i < 5; i++) l[i] = logf(0.2f);
    sn_sampler_apply_penalties(s, l, 5);
    double mx = l[0], sum = 0;
    for (int i = 1; i < 5; i++) mx = l[i] > mx ? l[i] : mx;
    for (int i = 0; i < 5; i++) sum += exp(l[i] - mx);
    for (int i = 0; i < 5; i++) {
        const double pr = exp(l[i] - mx) / sum;
        CU_ASSERT(fabs(pr - want[i]) < 1e-5);
        if (fabs(pr - want[i]) >= 1e-5) printf("\n    token %d: p %.6f, llama.cpp %.6f\n", i, pr, (double)want[i]);
    }
    sn_sampler_free(s);
}

static void test_penalties(void) {
    const int32_t h1[] = {0}, h3[] = {0, 1, 2}, h5[] = {0, 1, 2, 0, 0};
    penalties_case(h1, 1, (const float[]){0, 0.25f, 0.25f, 0.25f, 0.25f}, 50.0f, 0, 0);
    penalties_case(h3, 3, (const float[]){0, 0, 0, 0.5f, 0.5f}, 50.0f, 0, 0);
    penalties_case(h5, 5, (const float[]){0, 0, 0, 0.5f, 0.5f}, 50.0f, 0, 0);
    penalties_case(h1, 1, (const float[]){0.000011f, 0.249997f, 0.249997f, 0.249997f, 0.249997f}, 1.0f, 5.0f, 5.0f);
    penalties_case(h3, 3, (const float[]){0.000023f, 0.000023f, 0.000023f, 0.499966f, 0.499966f}, 1.0f, 5.0f, 5.0f);
    penalties_case(h5, 5, (const float[]){0.000000f, 0.000023f, 0.000023f, 0.499977f, 0.499977f}, 1.0f, 5.0f, 5.0f);

    /* the window: with penalty_last_n 2, accepting 0, 1, 2 leaves 1 and 2 penalized and 0 not (the
     * ring drops its oldest, llama_sampler_penalties_accept); a negative logit is multiplied */
    sn_sampler_params p;
    sn_sampler_params_default(&p);
    p.penalty_last_n = 2;
    p.penalty_repeat = 2.0f;
    sn_sampler *s;
    sn_err err;
    CU_ASSERT_EQUAL_FATAL(sn_sampler_new(&p, &s, &err), SN_OK);
    sn_sampler_accept(s, 0); sn_sampler_accept(s, 1); sn_sampler_accept(s, 2);
    float l[4] = {4.0f, 4.0f, -1.0f, 3.0f};
    sn_sampler_apply_penalties(s, l, 4);
    CU_ASSERT_EQUAL(l[0], 4.0f); CU_ASSERT_EQUAL(l[1], 2.0f); CU_ASSERT_EQUAL(l[2], -2.0f); CU_ASSERT_EQUAL(l[3], 3.0f);
    /* greedy picks from the penalized logits: token 1 (4.0 -> 2.0) loses to token 3 */
    const float g[4] = {0.0f, 4.0f, -1.0f, 3.0f};
    CU_ASSERT_EQUAL(sn_sampler_sample(s, g, 4), 3);
    sn_sampler_free(s);
    /* llama.cpp refuses a repeat penalty <= 0 or a non-finite one */
    p.penalty_repeat = 0.0f;
    CU_ASSERT_NOT_EQUAL(sn_sampler_new(&p, &s, &err), SN_OK);
    p.penalty_repeat = 1.0f; p.penalty_freq = INFINITY;
    CU_ASSERT_NOT_EQUAL(sn_sampler_new(&p, &s, &err), SN_OK);
}

static const sn_test_case cases[] = {
    {"llama f32: thread-independent, batch == token-by-token, reset, bounds", test_llama_f32},
    {"llama q8_0: same invariants", test_llama_q8_0},
    {"qwen2 f16 (q/k/v biases): same invariants", test_qwen2_f16},
    {"qwen3 f32 (q/k norms): same invariants", test_qwen3_f32},
    {"two handles of different tunings side by side: each its own logits, as loaded alone", test_two_tunings},
    {"bad or unsupported GGUFs are refused naming file and tensor", test_refusals},
    {"sampler: greedy, seeded top-k, top-p", test_sampler},
    {"generate: the greedy loop, stopping and failing where told; top-k ranking", test_generate},
    {"sampler: repeat/frequency/presence penalties as llama.cpp's (its own test cases)", test_penalties},
    {"argmax: the first maximum, as a one-pass scan (ties, NaN, -0/+0, tails)", test_argmax},
};
SN_TEST_MAIN("model", cases)
