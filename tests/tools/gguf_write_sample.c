/* gguf_write_sample.c - writes a small GGUF that uses every KV type, arrays of every element type
 * (including empty ones), and tensors of several ggml types, then prints on stdout a JSON
 * description of exactly what it wrote. tests/integration/test_gguf_interop.sh feeds the file to
 * an independent parser (@huggingface/gguf via tests/tools/gguf_inspect.mjs) and compares.
 *
 * Usage: gguf_write_sample OUT.gguf [--align N]
 *        gguf_write_sample --dump FILE.gguf     prints what sunny's reader sees in FILE, same JSON
 *        gguf_write_sample --reencode IN OUT    rewrites IN's KVs (no tensors) through the typed
 *                                               setters, to compare our encoding with another's
 * JSON canon (shared with gguf_inspect.mjs): integers as decimal strings, f32/f64 as their bit
 * patterns in hex, bools as JSON booleans, strings as strings, KV types as GGUF type ids. */
#include "ggml_types.h"
#include "gguf.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int first_kv = 1, n_kv = 0;

static void json_str(const char *s, size_t n) {
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

/* p may be unaligned (array elements inside a GGUF), so every element is memcpy'd. */
static void json_elem(sn_gguf_type t, const void *p) {
    union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
            uint64_t u64; int64_t i64; } v;
    static const uint8_t sz[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if ((unsigned)t < 13 && sz[t]) memcpy(&v, p, sz[t]);
    switch (t) {
    case SN_GGUF_U8: printf("\"%u\"", v.u8); break;
    case SN_GGUF_I8: printf("\"%d\"", v.i8); break;
    case SN_GGUF_U16: printf("\"%u\"", v.u16); break;
    case SN_GGUF_I16: printf("\"%d\"", v.i16); break;
    case SN_GGUF_U32: printf("\"%" PRIu32 "\"", v.u32); break;
    case SN_GGUF_I32: printf("\"%" PRId32 "\"", v.i32); break;
    case SN_GGUF_U64: printf("\"%" PRIu64 "\"", v.u64); break;
    case SN_GGUF_I64: printf("\"%" PRId64 "\"", v.i64); break;
    case SN_GGUF_F32: printf("\"0x%08" PRIx32 "\"", v.u32); break;
    case SN_GGUF_F64: printf("\"0x%016" PRIx64 "\"", v.u64); break;
    case SN_GGUF_BOOL: printf("%s", v.u8 ? "true" : "false"); break;
    default: printf("null"); break;
    }
}

static void kv_head(const char *key, sn_gguf_type t) {
    printf("%s\n    {\"key\": ", first_kv ? "" : ",");
    first_kv = 0;
    n_kv++;
    json_str(key, strlen(key));
    printf(", \"type\": %d, ", (int)t);
}

static int fail_st(sn_status st, const char *what) {
    if (st == SN_OK) return 0;
    fprintf(stderr, "gguf_write_sample: %s failed (%d)\n", what, st);
    exit(1);
}

#define SCALAR(setter, T, ctype, key, val)                      \
    do {                                                        \
        ctype v_ = (val);                                       \
        fail_st(setter(w, key, v_), key);                       \
        kv_head(key, T);                                        \
        printf("\"value\": ");                                  \
        json_elem(T, &v_);                                      \
        printf("}");                                            \
    } while (0)

static void arr(sn_gguf_writer *w, const char *key, sn_gguf_type t, const void *data, uint64_t n) {
    fail_st(sn_gguf_writer_set_arr(w, key, t, data, n), key);
    static const uint8_t sz[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    kv_head(key, SN_GGUF_ARR);
    printf("\"subType\": %d, \"value\": [", (int)t);
    for (uint64_t i = 0; i < n; i++) {
        if (i) printf(", ");
        json_elem(t, (const uint8_t *)data + i * sz[t]);
    }
    printf("]}");
}

static void arr_str(sn_gguf_writer *w, const char *key, const char *const *s, const uint64_t *lens,
                    uint64_t n) {
    fail_st(sn_gguf_writer_set_arr_str(w, key, s, lens, n), key);
    kv_head(key, SN_GGUF_ARR);
    printf("\"subType\": %d, \"value\": [", SN_GGUF_STR);
    for (uint64_t i = 0; i < n; i++) {
        if (i) printf(", ");
        json_str(s[i], lens[i]);
    }
    printf("]}");
}

/* Our reader's view of a file, in the canon above (so it can be compared with what another
 * implementation wrote or read). */
static int dump(const char *path) {
    static const uint8_t sz[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    sn_err e = {0};
    sn_gguf *g = NULL;
    if (sn_gguf_open(path, 0, &g, &e)) {
        fprintf(stderr, "gguf_write_sample: %s\n", e.msg);
        return 1;
    }
    printf("{\n  \"version\": %" PRIu32 ",\n  \"kv\": [", sn_gguf_version(g));
    for (int64_t i = 0; i < sn_gguf_n_kv(g); i++) {
        sn_gguf_type t = sn_gguf_kv_type(g, i);
        kv_head(sn_gguf_key(g, i), t);
        if (t == SN_GGUF_STR) {
            sn_gguf_str v = sn_gguf_get_str(g, i);
            printf("\"value\": ");
            json_str(v.ptr, v.len);
        } else if (t == SN_GGUF_ARR) {
            sn_gguf_type at = sn_gguf_arr_type(g, i);
            printf("\"subType\": %d, \"value\": [", (int)at);
            for (uint64_t j = 0; j < sn_gguf_arr_n(g, i); j++) {
                if (j) printf(", ");
                if (at == SN_GGUF_STR) {
                    sn_gguf_str v = sn_gguf_arr_str(g, i, j);
                    json_str(v.ptr, v.len);
                } else {
                    json_elem(at, (const uint8_t *)sn_gguf_arr_data(g, i) + j * sz[at]);
                }
            }
            printf("]");
        } else {
            uint8_t v[8];
            uint64_t rl;
            const uint8_t *raw = sn_gguf_kv_raw(g, i, &rl);
            memcpy(v, raw + rl - sz[t], sz[t]); /* a scalar is the last bytes of its KV */
            printf("\"value\": ");
            json_elem(t, v);
        }
        printf("}");
    }
    printf("\n  ],\n  \"tensors\": [");
    for (int64_t i = 0; i < sn_gguf_n_tensors(g); i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        printf("%s\n    {\"name\": ", i ? "," : "");
        json_str(t->name, strlen(t->name));
        printf(", \"n_dims\": %" PRIu32 ", \"shape\": [", t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) printf("%s\"%" PRIu64 "\"", d ? ", " : "", t->ne[d]);
        printf("], \"dtype\": %d, \"offset\": \"%" PRIu64 "\"}", t->type, t->offset);
    }
    printf("\n  ],\n  \"tensor_count\": \"%" PRId64 "\",\n  \"kv_count\": \"%" PRId64 "\",\n",
           sn_gguf_n_tensors(g), sn_gguf_n_kv(g));
    printf("  \"tensorDataOffset\": \"%" PRIu64 "\"\n}\n", sn_gguf_data_offset(g));
    sn_gguf_close(g);
    return 0;
}

/* Every KV of IN read with our reader and written again with the typed setters (not copy_kv), so
 * that OUT's bytes show how our writer encodes each type. */
static int reencode(const char *in, const char *out) {
    static const uint8_t sz[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    sn_err e = {0};
    sn_gguf *g = NULL;
    if (sn_gguf_open(in, 0, &g, &e)) { fprintf(stderr, "gguf_write_sample: %s\n", e.msg); return 1; }
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_status st = SN_OK;
    for (int64_t i = 0; i < sn_gguf_n_kv(g) && !st; i++) {
        const char *k = sn_gguf_key(g, i);
        sn_gguf_type t = sn_gguf_kv_type(g, i);
        switch (t) {
        case SN_GGUF_U8: st = sn_gguf_writer_set_u8(w, k, sn_gguf_get_u8(g, i)); break;
        case SN_GGUF_I8: st = sn_gguf_writer_set_i8(w, k, sn_gguf_get_i8(g, i)); break;
        case SN_GGUF_U16: st = sn_gguf_writer_set_u16(w, k, sn_gguf_get_u16(g, i)); break;
        case SN_GGUF_I16: st = sn_gguf_writer_set_i16(w, k, sn_gguf_get_i16(g, i)); break;
        case SN_GGUF_U32: st = sn_gguf_writer_set_u32(w, k, sn_gguf_get_u32(g, i)); break;
        case SN_GGUF_I32: st = sn_gguf_writer_set_i32(w, k, sn_gguf_get_i32(g, i)); break;
        case SN_GGUF_F32: st = sn_gguf_writer_set_f32(w, k, sn_gguf_get_f32(g, i)); break;
        case SN_GGUF_BOOL: st = sn_gguf_writer_set_bool(w, k, sn_gguf_get_bool(g, i)); break;
        case SN_GGUF_U64: st = sn_gguf_writer_set_u64(w, k, sn_gguf_get_u64(g, i)); break;
        case SN_GGUF_I64: st = sn_gguf_writer_set_i64(w, k, sn_gguf_get_i64(g, i)); break;
        case SN_GGUF_F64: st = sn_gguf_writer_set_f64(w, k, sn_gguf_get_f64(g, i)); break;
        case SN_GGUF_STR: {
            sn_gguf_str v = sn_gguf_get_str(g, i);
            st = sn_gguf_writer_set_strn(w, k, v.ptr, v.len);
            break;
        }
        case SN_GGUF_ARR: {
            sn_gguf_type at = sn_gguf_arr_type(g, i);
            uint64_t n = sn_gguf_arr_n(g, i);
            if (at != SN_GGUF_STR) {
                void *copy = malloc(n * sz[at] + 1); /* aligned copy of the raw elements */
                memcpy(copy, sn_gguf_arr_data(g, i), n * sz[at]);
                st = sn_gguf_writer_set_arr(w, k, at, copy, n);
                free(copy);
                break;
            }
            const char **strs = malloc((n + 1) * sizeof *strs);
            uint64_t *lens = malloc((n + 1) * sizeof *lens);
            for (uint64_t j = 0; j < n; j++) {
                sn_gguf_str v = sn_gguf_arr_str(g, i, j);
                strs[j] = v.ptr;
                lens[j] = v.len;
            }
            st = sn_gguf_writer_set_arr_str(w, k, strs, lens, n);
            free(strs);
            free(lens);
            break;
        }
        default: st = SN_EINVAL; break;
        }
    }
    if (!st) st = sn_gguf_writer_begin(w, out, &e);
    if (!st) st = sn_gguf_writer_finish(w, &e);
    if (st) fprintf(stderr, "gguf_write_sample: re-encoding %s failed: %s\n", in, e.msg);
    sn_gguf_writer_free(w);
    sn_gguf_close(g);
    return st ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) return dump(argv[2]);
    if (argc == 4 && strcmp(argv[1], "--reencode") == 0) return reencode(argv[2], argv[3]);
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--align") == 0)) {
        fprintf(stderr, "usage: gguf_write_sample OUT.gguf [--align N] | --dump FILE.gguf | "
                        "--reencode IN.gguf OUT.gguf\n");
        return 2;
    }
    const char *out = argv[1];
    uint32_t align = argc == 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : 32;
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err e = {0};

    printf("{\n  \"version\": 3,\n  \"kv\": [");
    {
        const char *a = "sample";
        fail_st(sn_gguf_writer_set_str(w, "general.architecture", a), "arch");
        kv_head("general.architecture", SN_GGUF_STR);
        printf("\"value\": ");
        json_str(a, strlen(a));
        printf("}");
    }
    if (align != 32) SCALAR(sn_gguf_writer_set_u32, SN_GGUF_U32, uint32_t, "general.alignment", align);
    SCALAR(sn_gguf_writer_set_u8, SN_GGUF_U8, uint8_t, "s.u8", 255);
    SCALAR(sn_gguf_writer_set_i8, SN_GGUF_I8, int8_t, "s.i8", -128);
    SCALAR(sn_gguf_writer_set_u16, SN_GGUF_U16, uint16_t, "s.u16", 65535);
    SCALAR(sn_gguf_writer_set_i16, SN_GGUF_I16, int16_t, "s.i16", -32768);
    SCALAR(sn_gguf_writer_set_u32, SN_GGUF_U32, uint32_t, "s.u32", 4294967295u);
    SCALAR(sn_gguf_writer_set_i32, SN_GGUF_I32, int32_t, "s.i32", INT32_MIN);
    SCALAR(sn_gguf_writer_set_f32, SN_GGUF_F32, float, "s.f32", 3.14159274f);
    SCALAR(sn_gguf_writer_set_f32, SN_GGUF_F32, float, "s.f32_negzero", -0.0f);
    SCALAR(sn_gguf_writer_set_f32, SN_GGUF_F32, float, "s.f32_subnormal", 1e-40f);
    SCALAR(sn_gguf_writer_set_f32, SN_GGUF_F32, float, "s.f32_inf", INFINITY);
    SCALAR(sn_gguf_writer_set_u64, SN_GGUF_U64, uint64_t, "s.u64", UINT64_MAX);
    SCALAR(sn_gguf_writer_set_i64, SN_GGUF_I64, int64_t, "s.i64", INT64_MIN);
    SCALAR(sn_gguf_writer_set_f64, SN_GGUF_F64, double, "s.f64", -1.0000000000000002);
    {
        uint8_t t = 1, f = 0;
        fail_st(sn_gguf_writer_set_bool(w, "s.bool_true", 1), "bool");
        kv_head("s.bool_true", SN_GGUF_BOOL);
        printf("\"value\": ");
        json_elem(SN_GGUF_BOOL, &t);
        printf("}");
        fail_st(sn_gguf_writer_set_bool(w, "s.bool_false", 0), "bool");
        kv_head("s.bool_false", SN_GGUF_BOOL);
        printf("\"value\": ");
        json_elem(SN_GGUF_BOOL, &f);
        printf("}");
    }
    {
        static const char s1[] = "h\xc3\xa9llo \"q\" \\ \n\t\xe2\x96\x81\xf0\x9f\x98\x80 nul:\0end";
        const char *strs[2] = {s1, ""};
        const uint64_t lens[2] = {sizeof s1 - 1, 0};
        const char *keys[2] = {"s.str", "s.str_empty"};
        for (int i = 0; i < 2; i++) {
            fail_st(sn_gguf_writer_set_strn(w, keys[i], strs[i], lens[i]), "str");
            kv_head(keys[i], SN_GGUF_STR);
            printf("\"value\": ");
            json_str(strs[i], lens[i]);
            printf("}");
        }
    }
    uint8_t au8[3] = {0, 1, 255};
    int8_t ai8[3] = {-128, 0, 127};
    uint16_t au16[2] = {0, 65535};
    int16_t ai16[2] = {-32768, 32767};
    uint32_t au32[3] = {0, 7, 4294967295u};
    int32_t ai32[3] = {INT32_MIN, -1, INT32_MAX};
    float af32[4] = {1.5f, -0.0f, 1e-40f, -INFINITY};
    uint8_t abool[3] = {1, 0, 1};
    uint64_t au64[2] = {0, UINT64_MAX};
    int64_t ai64[3] = {INT64_MIN, 0, INT64_MAX};
    double af64[3] = {0.1, -2.5e300, 5e-324};
    arr(w, "a.u8", SN_GGUF_U8, au8, 3);
    arr(w, "a.i8", SN_GGUF_I8, ai8, 3);
    arr(w, "a.u16", SN_GGUF_U16, au16, 2);
    arr(w, "a.i16", SN_GGUF_I16, ai16, 2);
    arr(w, "a.u32", SN_GGUF_U32, au32, 3);
    arr(w, "a.i32", SN_GGUF_I32, ai32, 3);
    arr(w, "a.f32", SN_GGUF_F32, af32, 4);
    arr(w, "a.bool", SN_GGUF_BOOL, abool, 3);
    arr(w, "a.u64", SN_GGUF_U64, au64, 2);
    arr(w, "a.i64", SN_GGUF_I64, ai64, 3);
    arr(w, "a.f64", SN_GGUF_F64, af64, 3);
    arr(w, "a.u32_empty", SN_GGUF_U32, NULL, 0);
    {
        const char *s[4] = {"<s>", "", "\xe2\x96\x81the", "\"\\\n"};
        const uint64_t l[4] = {3, 0, 6, 3};
        arr_str(w, "tokenizer.ggml.tokens", s, l, 4);
        arr_str(w, "a.str_empty", NULL, NULL, 0);
    }
    printf("\n  ],\n");

    struct { const char *name; uint32_t nd; uint64_t ne[4]; int type; } ts[] = {
        {"token_embd.weight", 2, {64, 5}, SN_GGML_F16},
        {"output_norm.weight", 1, {64}, SN_GGML_F32},
        {"blk.0.attn_q.weight", 2, {64, 2}, SN_GGML_Q8_0},
        {"blk.0.attn_k.weight", 3, {32, 1, 2}, SN_GGML_Q4_0},
        {"blk.0.ffn_down.weight", 2, {256, 2}, SN_GGML_Q4_K},
        {"output.weight", 2, {256, 1}, SN_GGML_Q6_K},
        {"blk.0.bf16", 2, {8, 3}, SN_GGML_BF16},
        {"four_d", 4, {2, 2, 2, 2}, SN_GGML_I32},
        {"empty", 2, {0, 3}, SN_GGML_F32},
    };
    const int nt = (int)(sizeof ts / sizeof ts[0]);
    for (int i = 0; i < nt; i++)
        if (sn_gguf_writer_add_tensor(w, ts[i].name, ts[i].nd, ts[i].ne, ts[i].type, &e) != i) {
            fprintf(stderr, "gguf_write_sample: %s\n", e.msg);
            return 1;
        }
    uint64_t data_total = 0;
    printf("  \"tensors\": [");
    for (int i = 0; i < nt; i++) {
        printf("%s\n    {\"name\": \"%s\", \"n_dims\": %" PRIu32 ", \"shape\": [", i ? "," : "",
               ts[i].name, ts[i].nd);
        for (uint32_t d = 0; d < ts[i].nd; d++) printf("%s\"%" PRIu64 "\"", d ? ", " : "", ts[i].ne[d]);
        printf("], \"dtype\": %d, \"offset\": \"%" PRIu64 "\"}", ts[i].type, data_total);
        data_total += (sn_gguf_writer_tensor_size(w, i) + align - 1) / align * align;
    }
    uint64_t total = sn_gguf_writer_total_size(w);
    printf("\n  ],\n  \"tensor_count\": \"%d\",\n  \"kv_count\": \"%d\",\n", nt, n_kv);
    printf("  \"tensorDataOffset\": \"%" PRIu64 "\"\n}\n", total - data_total);

    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    if (sn_gguf_writer_begin(w, tmp, &e)) { fprintf(stderr, "gguf_write_sample: %s\n", e.msg); return 1; }
    for (int i = 0; i < nt; i++) {
        uint64_t nel = ts[i].ne[0];
        for (uint32_t d = 1; d < ts[i].nd; d++) nel *= ts[i].ne[d];
        float *x = malloc((nel ? nel : 1) * sizeof *x);
        for (uint64_t j = 0; j < nel; j++) x[j] = sinf((float)j * 0.37f + (float)i) * (1.0f + (float)(j % 7));
        uint64_t sz = sn_gguf_writer_tensor_size(w, i);
        uint8_t *q = malloc(sz ? sz : 1);
        if (sn_ggml_from_f32((int)ts[i].type, x, q, (int64_t)nel))
            for (uint64_t j = 0; j < sz; j++) q[j] = (uint8_t)j;
        if (sn_gguf_writer_write(w, q, sz, &e) || sn_gguf_writer_end_tensor(w, &e)) {
            fprintf(stderr, "gguf_write_sample: %s\n", e.msg);
            return 1;
        }
        free(x);
        free(q);
    }
    if (sn_gguf_writer_finish(w, &e)) { fprintf(stderr, "gguf_write_sample: %s\n", e.msg); return 1; }
    sn_gguf_writer_free(w);
    if (rename(tmp, out) != 0) { perror("gguf_write_sample: rename"); return 1; }
    return 0;
}
