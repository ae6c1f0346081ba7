/* test_experts.c - a 3-D weight tensor (GGML shape {n_in, n_out, n_expert}, a stack of experts as
 * MoE families store ffn_*_exps) loads as one sn_matrix through the loader's verb, is placed once
 * (Q4_0 repacked into 8-row groups per expert where the kernels read that layout, other types
 * moved or left mapped), and sn_matrix_expert views expert e without copying: its product equals
 * the row kernels' on that expert's rows as written to the file, bit for bit. */
#include "sn_test.h"

#include "family.h"
#include "ggml_types.h"
#include "gguf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N_IN = 64, N_EXPERT = 3, T_MAX = 3 };

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static float rnd(void) { return ((float)(sn_test_xorshift(&rs) >> 40) / (float)(1 << 24) - 0.5f) * 2.0f; }

/* Writes one 3-D tensor "exps" of type `type` with n_out rows per expert; its bytes go to *bytes. */
static void write_gguf(const char *path, int type, int64_t n_out, void **bytes, uint64_t *row_bytes) {
    sn_err err = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_gguf_writer_set_str(w, "general.architecture", "test");
    const uint64_t ne[3] = {N_IN, (uint64_t)n_out, N_EXPERT};
    CU_ASSERT_FATAL(sn_gguf_writer_add_tensor(w, "exps", 3, ne, type, &err) >= 0);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &err), SN_OK);
    const uint64_t rb = sn_ggml_row_size(type, N_IN), rows = (uint64_t)n_out * N_EXPERT;
    char *all = malloc(rb * rows);
    float row[N_IN];
    for (uint64_t r = 0; r < rows; r++) {
        for (int j = 0; j < N_IN; j++) row[j] = rnd();
        if (type == SN_GGML_Q4_0) sn_quantize_row_q4_0(row, all + r * rb, N_IN);
        else memcpy(all + r * rb, row, rb);
    }
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_write(w, all, rb * rows, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_end_tensor(w, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_finish(w, &err), SN_OK);
    sn_gguf_writer_free(w);
    *bytes = all;
    *row_bytes = rb;
}

/* A model record holding only the file's tensors: enough for the verbs and the placement pass. */
static sn_model *open_bare(const char *path, int mmap_weights) {
    sn_err err = {0};
    sn_model *m = calloc(1, sizeof(*m));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    m->path = strdup(path);
    m->k = sn_test_kernels(-1);
    m->huge_budget = -1;
    sn_model_params_default(&m->params);
    m->params.tuning = *sn_test_tuning();
    m->params.mmap_weights = mmap_weights;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(path, 0, &m->g, &err), SN_OK);
    return m;
}

static void check(int type, int64_t n_out, int mmap_weights, const sn_layout *want_layout) {
    char path[] = "/tmp/sn_test_experts_XXXXXX";
    const int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    void *bytes;
    uint64_t rb;
    write_gguf(path, type, n_out, &bytes, &rb);
    sn_model *m = open_bare(path, mmap_weights);
    sn_err err = {0};
    sn_matrix w, wrong;
    CU_ASSERT_EQUAL(sn_model_matrix(m, SN_MODEL_GLOBAL, "exps", SN_NE(N_IN, n_out, N_EXPERT + 1), 1, &wrong, &err),
                    SN_EFORMAT); /* the expert count is part of the shape */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exps"));
    CU_ASSERT_EQUAL_FATAL(sn_model_matrix(m, SN_MODEL_GLOBAL, "exps", SN_NE(N_IN, n_out, N_EXPERT), 1, &w, &err), SN_OK);
    CU_ASSERT_EQUAL(w.n_expert, N_EXPERT);
    CU_ASSERT_EQUAL(w.expert_bytes, rb * (uint64_t)n_out);
    const void *mapped = w.data;
    CU_ASSERT_EQUAL_FATAL(sn_model_place(m, &err), SN_OK);
    CU_ASSERT_PTR_EQUAL(w.layout, want_layout);
    if (mmap_weights && want_layout == &sn_layout_rows) CU_ASSERT_PTR_EQUAL(w.data, mapped);

    const int at = sn_kernel_act_type(type);
    const uint64_t xr = sn_kernel_act_row_size(type, N_IN);
    char *x = malloc(xr * T_MAX);
    float xf[N_IN];
    for (int t = 0; t < T_MAX; t++) {
        for (int j = 0; j < N_IN; j++) xf[j] = rnd();
        m->k->quant[at](xf, x + (uint64_t)t * xr, N_IN);
    }
    float *y = malloc(sizeof(float) * (size_t)(n_out * T_MAX)), *ref = malloc(sizeof(float) * (size_t)(n_out * T_MAX));
    for (int64_t e = 0; e < N_EXPERT; e++) {
        const sn_matrix v = sn_matrix_expert(&w, e);
        CU_ASSERT_EQUAL(v.n_expert, 1);
        CU_ASSERT_PTR_EQUAL(v.data, (const char *)w.data + (uint64_t)e * w.expert_bytes); /* a view, not a copy */
        if (w.x8) CU_ASSERT_PTR_EQUAL(v.x8, (const char *)w.x8 + (uint64_t)e * w.expert_x8_bytes);
        for (int T = 1; T <= T_MAX; T += T_MAX - 1) { /* one token (decode kernels) and a batch */
            const char *rows = (const char *)bytes + (uint64_t)e * w.expert_bytes;
            sn_matmul(m->k, type, rows, rb, N_IN, x, xr, T, ref, n_out, 0, n_out);
            for (int nth = 1; nth <= 2; nth++)
                for (int ith = 0; ith < nth; ith++) {
                    int64_t r0, r1;
                    sn_matrix_split(&v, ith, nth, &r0, &r1);
                    sn_matrix_mul(m->k, &v, x, xr, T, y, n_out, r0, r1);
                }
            CU_ASSERT_EQUAL(memcmp(y, ref, sizeof(float) * (size_t)(n_out * T)), 0);
        }
    }
    free(x);
    free(y);
    free(ref);
    free(bytes);
    sn_model_free(m);
    unlink(path);
}

static void test_q4_0_grouped(void) {
    check(SN_GGML_Q4_0, 16, 0, sn_test_kernels(-1)->mm_q4_0x8 ? &sn_layout_q4_0x8 : &sn_layout_rows);
}
/* 12 rows per expert: an 8-row group would straddle two experts, so the rows stay as they are */
static void test_q4_0_rows(void) { check(SN_GGML_Q4_0, 12, 0, &sn_layout_rows); }
static void test_f32_moved(void) { check(SN_GGML_F32, 8, 0, &sn_layout_rows); }
static void test_f32_mapped(void) { check(SN_GGML_F32, 8, 1, &sn_layout_rows); }

static const sn_test_case cases[] = {
    {"Q4_0 experts of 16 rows: repacked per expert, views multiply as the rows", test_q4_0_grouped},
    {"Q4_0 experts of 12 rows: rows layout, views multiply as the rows", test_q4_0_rows},
    {"F32 experts: moved to huge pages, views multiply as the rows", test_f32_moved},
    {"F32 experts kept mapped: views point into the mapping", test_f32_mapped},
};
SN_TEST_MAIN("experts", cases)
