/* convert_verify.c - sunny-convert --verify: the written GGUF read back and checked.
 *
 * Every tensor is dequantized row by row and compared with its source rows run through the same
 * transforms: float types must match bit for bit (after the same rounding), quantized types stay
 * within the block's quantization bound; repacked MXFP4 blocks must be the repack of their source. The tokenizer keys are written once more, alone, and
 * must be byte-identical in the output. */
#include "convert_internal.h"

#include "ggml_types.h"
#include "outfile.h"
#include "vocab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Largest error quantization may introduce on a block whose largest |x| is amax. */
static double quant_bound(int type, double amax) {
    switch (type) {
    case SN_GGML_Q8_0: return amax / 127.0 * 0.5 * 1.01 + amax * 1e-3;
    case SN_GGML_Q4_0: return amax / 8.0 * 1.01 + amax * 1e-3;
    case SN_GGML_Q6_K: return amax / 31.0 * 1.5 + amax * 4e-3;
    case SN_GGML_Q4_1: return amax / 15.0 * 1.01 + amax * 1e-3;
    case SN_GGML_Q5_0: return amax / 16.0 * 1.01 + amax * 1e-3;
    case SN_GGML_Q5_1: return amax / 31.0 * 1.01 + amax * 1e-3;
    /* fitted scales (and mins) may trade the extremes for the bulk: a few half-steps */
    case SN_GGML_Q5_K: return amax / 8.0 + amax * 4e-3;
    case SN_GGML_Q4_K: case SN_GGML_IQ4_NL: case SN_GGML_IQ4_XS: return amax / 4.0 + amax * 4e-3;
    case SN_GGML_Q3_K: return amax / 2.0 + amax * 4e-3;
    case SN_GGML_Q2_K: return amax + amax * 4e-3;
    default: return 0;
    }
}

sn_status sn_conv_verify_file(const sn_convert_opts *o, const plan_list *pl, sn_convert_result *res, sn_err *err) {
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(o->out_path, 0, &g, err);
    if (st != SN_OK) return sn_err_prefix(err, "verify");
    float *a = NULL, *b = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < pl->n && st == SN_OK; i++) {
        const plan_t *p = &pl->t[i];
        int64_t k = sn_gguf_find_tensor(g, p->gguf_name);
        const sn_gguf_tensor *t = k >= 0 ? sn_gguf_tensor_at(g, k) : NULL;
        int ok = t && t->type == p->type && t->n_dims == p->n_dims;
        for (uint32_t d = 0; ok && d < p->n_dims; d++) ok = t->ne[d] == p->ne[d];
        double max_err = 0, bound_seen = 0;
        uint64_t row_len = p->ts.row_len, n_rows = p->ts.n_rows;
        if (ok && row_len > cap) {
            free(a);
            free(b);
            cap = row_len;
            a = malloc(cap * sizeof(float));
            b = malloc(cap * sizeof(float));
            if (!a || !b) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); break; }
        }
        uint64_t out_row = ok ? sn_ggml_row_size(p->type, row_len) : 0;
        int mx = p->type == SN_CONV_MXFP4;
        for (uint64_t r = 0; ok && mx && r < n_rows; r++) { /* b: row_len floats >= the row's bytes */
            sn_tsrc_mxfp4_row(&p->ts, r, (uint8_t *)b);
            ok = memcmp(b, (const uint8_t *)t->data + r * out_row, out_row) == 0;
        }
        for (uint64_t r = 0; ok && !mx && r < n_rows; r++) {
            const float *x = sn_tsrc_row(&p->ts, r, a);
            if (sn_dequantize_row(p->type, (const uint8_t *)t->data + r * out_row, b, (int64_t)row_len) != 0) {
                ok = 0;
                break;
            }
            if (p->type == SN_GGML_F32 || p->type == SN_GGML_F16 || p->type == SN_GGML_BF16) {
                for (uint64_t e = 0; e < row_len; e++) {
                    float want = x[e];
                    if (p->type == SN_GGML_F16) want = sn_fp16_to_fp32(sn_fp32_to_fp16(want));
                    if (p->type == SN_GGML_BF16) want = sn_bf16_to_fp32(sn_fp32_to_bf16(want));
                    if (memcmp(&want, &b[e], 4) != 0 && !(isnan(want) && isnan(b[e]))) {
                        double d = fabs((double)want - (double)b[e]);
                        if (d > max_err || isnan(d)) max_err = isnan(d) ? INFINITY : d;
                        ok = 0;
                    }
                }
            } else {
                uint32_t blk = sn_ggml_blck_size(p->type);
                for (uint64_t s = 0; s < row_len; s += blk) {
                    double amax = 0, me = 0;
                    for (uint64_t e = s; e < s + blk; e++) {
                        if (fabs(x[e]) > amax) amax = fabs(x[e]);
                        double d = fabs((double)x[e] - (double)b[e]);
                        if (d > me || isnan(d)) me = isnan(d) ? INFINITY : d;
                    }
                    double bound = quant_bound(p->type, amax);
                    if (me > max_err) max_err = me;
                    if (bound > bound_seen) bound_seen = bound;
                    if (!(me <= bound)) ok = 0;
                }
            }
        }
        for (uint32_t k = 0; k < p->ts.n_parts; k++) sn_st_release(p->ts.part[k], 0, p->ts.part[k]->nbytes);
        res->verify_checked++;
        if (!ok) {
            if (!res->verify_failed)
                snprintf(res->verify_first_bad, sizeof res->verify_first_bad, "%s", p->gguf_name);
            res->verify_failed++;
        }
        if (o->on_verify) o->on_verify(o->ud, p->gguf_name, ok, max_err, bound_seen);
    }
    free(a);
    free(b);
    sn_gguf_close(g);
    return st;
}

/* Tokenizer keys: the vocabulary is written again, alone, into a header-only GGUF next to OUT, and
 * every KV it holds must be present in OUT with identical bytes (type and value). */
sn_status sn_conv_verify_tokenizer(const sn_convert_opts *o, const char *meta_dir, const sn_hf_config *cfg,
                                  sn_convert_result *res, sn_err *err) {
    char *ref = NULL;
    int fd = sn_tmp_create(o->out_path, ".vocab", &ref, err);
    if (fd < 0) return SN_EIO;
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_gguf *a = NULL, *b = NULL;
    sn_vocab_opts vo = {o->pre_override, o->vocab_path};
    sn_vocab_report vr;
    sn_status st = w ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
    if (st == SN_OK) st = sn_vocab_write_gguf(meta_dir, cfg, w, &vo, &vr, err);
    if (st == SN_OK) st = sn_gguf_writer_begin_fd(w, fd, ref, err);
    else close(fd);
    if (st == SN_OK) st = sn_gguf_writer_finish(w, err);
    if (st == SN_OK) st = sn_gguf_open(ref, SN_GGUF_NO_DATA, &a, err);
    if (st == SN_OK) st = sn_gguf_open(o->out_path, SN_GGUF_NO_DATA, &b, err);
    for (int64_t i = 0; st == SN_OK && i < sn_gguf_n_kv(a); i++) {
        const char *key = sn_gguf_key(a, i);
        int64_t j = sn_gguf_find_key(b, key);
        uint64_t la = 0, lb = 0;
        const void *ra = sn_gguf_kv_raw(a, i, &la);
        const void *rb = j >= 0 ? sn_gguf_kv_raw(b, j, &lb) : NULL;
        int ok = rb && la == lb && memcmp(ra, rb, la) == 0;
        res->verify_keys_checked++;
        if (!ok) {
            if (!res->verify_failed && !res->verify_keys_failed)
                snprintf(res->verify_first_bad, sizeof res->verify_first_bad, "%s", key);
            res->verify_keys_failed++;
        }
        if (o->on_verify) o->on_verify(o->ud, key, ok, 0, 0);
    }
    sn_gguf_close(a);
    sn_gguf_close(b);
    if (w) sn_gguf_writer_free(w);
    unlink(ref);
    free(ref);
    return st;
}
