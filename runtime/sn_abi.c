/* sn_abi.c - the stable C ABI (sn_abi.h) as a thin layer over model.h, tokenizer.h, sampler.h. */
#include "sn_abi.h"

#include "cpu.h"
#include "kernels/kernels.h"
#include "model.h"
#include "sampler.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SN_ABI_OK == SN_OK && SN_ABI_EINVAL == SN_EINVAL && SN_ABI_ENOMEM == SN_ENOMEM &&
                   SN_ABI_EIO == SN_EIO && SN_ABI_EFORMAT == SN_EFORMAT &&
                   SN_ABI_EUNSUPPORTED == SN_EUNSUPPORTED,
               "ABI status codes must equal sn_status values");

struct sn_abi_model {
    sn_model *m;
    sn_tokenizer *tok; /* NULL if the GGUF has no usable tokenizer */
    sn_err err;
};

struct sn_abi_sampler { sn_sampler *s; };

uint32_t sn_abi_version(void) { return SN_ABI_VERSION; }

int32_t sn_abi_check(uint32_t major) { return major == SN_ABI_VERSION_MAJOR ? SN_ABI_OK : SN_ABI_EUNSUPPORTED; }

uint32_t sn_abi_capabilities(void) {
    const sn_kernels *k = sn_kernels_for(NULL); /* the default tuning's: what a load without one runs */
    uint32_t c = SN_ABI_CAP_TOKENIZER | SN_ABI_CAP_KV_F32 | SN_ABI_CAP_KQUANTS | SN_ABI_CAP_SAMPLER | SN_ABI_CAP_STATE |
                 SN_ABI_CAP_RECURRENT | SN_ABI_CAP_MOE | SN_ABI_CAP_MXFP4;
    const uint32_t f = k ? k->tuning.isa : 0;
    if (k && strcmp(k->name, "scalar") != 0) {
        if (f & SN_CPU_AVX2) c |= SN_ABI_CAP_AVX2;
        if (strcmp(k->name, "avx512") == 0) {
            c |= SN_ABI_CAP_AVX512;
            if (f & SN_CPU_AVX512VNNI) c |= SN_ABI_CAP_AVX512_VNNI;
            if (f & SN_CPU_AVX512BF16) c |= SN_ABI_CAP_AVX512_BF16;
        }
    }
    return c;
}

const char *sn_abi_status_str(int32_t status) { return sn_status_str(status); }

/* Overrides the fields of *t the caller's sn_abi_tuning sets. */
static void tuning_from_abi(const sn_abi_tuning *a, sn_tuning *t) {
    sn_abi_tuning c = {0};
    memcpy(&c, a, a->struct_size < sizeof(c) ? a->struct_size : sizeof(c));
    if (c.isa == 1) t->isa &= SN_CPU_AMD;
    else if (c.isa == 2) t->isa &= SN_CPU_AVX2 | SN_CPU_AMD;
    if (c.lanes == 8 || c.lanes == 16) t->lanes = c.lanes;
    if (c.far_streams) t->far_streams = c.far_streams == 1;
    if (c.page_kick) t->page_kick = c.page_kick == 1;
    if (c.mm_f16) t->mm_f16_convert = c.mm_f16 == 1;
    if (c.no_repack == 1) t->repack_q4_0 = t->repack_q4_K = 0;
    if (c.no_huge_pages == 1) t->huge_pages = 0;
    if (c.no_prefault == 1) t->prefault = 0;
}

int32_t sn_abi_model_load(const char *path, const sn_abi_load_params *params, sn_abi_model **out,
                          char *errbuf, size_t errcap) {
    if (errbuf && errcap) errbuf[0] = 0;
    if (!out) return SN_ABI_EINVAL;
    *out = NULL;
    sn_err err = {0};
    if (!path) {
        if (errbuf && errcap) snprintf(errbuf, errcap, "no model path");
        return SN_ABI_EINVAL;
    }
    sn_model_params mp;
    sn_model_params_default(&mp);
    if (params) {
        /* read only the fields the caller's struct has */
        sn_abi_load_params p = {0};
        size_t n = params->struct_size < sizeof(p) ? params->struct_size : sizeof(p);
        if (n < sizeof(uint32_t)) {
            if (errbuf && errcap) snprintf(errbuf, errcap, "sn_abi_load_params.struct_size not set");
            return SN_ABI_EINVAL;
        }
        memcpy(&p, params, n);
        mp.n_threads = p.n_threads > 0 ? p.n_threads : 1;
        mp.n_ctx = p.n_ctx;
        mp.kv_type = p.kv_f32 ? SN_KV_F32 : SN_KV_F16;
        mp.mmap_weights = p.mmap_weights != 0;
        if (p.tuning) tuning_from_abi(p.tuning, &mp.tuning);
    }
    sn_abi_model *am = calloc(1, sizeof(*am));
    if (!am) return SN_ABI_ENOMEM;
    sn_status st = sn_model_load(path, &mp, &am->m, &err);
    if (st) {
        if (errbuf && errcap) snprintf(errbuf, errcap, "%s", err.msg);
        free(am);
        return st;
    }
    sn_err terr = {0};
    if (sn_tok_load(sn_model_gguf(am->m), &am->tok, &terr) != SN_OK) am->tok = NULL;
    *out = am;
    return SN_ABI_OK;
}

void sn_abi_model_free(sn_abi_model *m) {
    if (!m) return;
    sn_tok_free(m->tok);
    sn_model_free(m->m);
    free(m);
}

int32_t sn_abi_n_vocab(const sn_abi_model *m) { return m ? (int32_t)sn_model_n_vocab(m->m) : 0; }
int32_t sn_abi_n_ctx(const sn_abi_model *m) { return m ? (int32_t)sn_model_n_ctx(m->m) : 0; }
const char *sn_abi_last_error(const sn_abi_model *m) { return m ? m->err.msg : ""; }

static int32_t fail(sn_abi_model *m, int32_t code, const char *msg) {
    sn_err_set(&m->err, code, "%s", msg);
    return code;
}

int32_t sn_abi_tokenize(sn_abi_model *m, const char *text, size_t len, int32_t add_special,
                        int32_t parse_special, int32_t *ids, size_t cap, size_t *n_out) {
    if (!m || !n_out || (!text && len) || (!ids && cap)) return SN_ABI_EINVAL;
    *n_out = 0;
    if (!m->tok) return fail(m, SN_ABI_EUNSUPPORTED, "the model has no usable tokenizer");
    const int64_t n = sn_tok_encode(m->tok, text ? text : "", len, add_special != 0, parse_special != 0, ids, cap, &m->err);
    if (n < 0) return (int32_t)n;
    *n_out = (size_t)n;
    return (size_t)n > cap ? fail(m, SN_ABI_EINVAL, "id buffer too small") : SN_ABI_OK;
}

int32_t sn_abi_detokenize(sn_abi_model *m, const int32_t *ids, size_t n, char *buf, size_t cap, size_t *n_out) {
    if (!m || !n_out || (!ids && n) || (!buf && cap)) return SN_ABI_EINVAL;
    *n_out = 0;
    if (!m->tok) return fail(m, SN_ABI_EUNSUPPORTED, "the model has no usable tokenizer");
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= sn_tok_n_vocab(m->tok)) return fail(m, SN_ABI_EINVAL, "token id out of range");
    const int64_t r = sn_tok_decode(m->tok, ids, n, 0, buf, cap);
    if (r < 0) return fail(m, (int32_t)r, "detokenize failed");
    *n_out = (size_t)r;
    return (size_t)r > cap ? fail(m, SN_ABI_EINVAL, "text buffer too small") : SN_ABI_OK;
}

int32_t sn_abi_is_eog(const sn_abi_model *m, int32_t id) { return m && m->tok ? sn_tok_is_eog(m->tok, id) : 0; }

int32_t sn_abi_eval(sn_abi_model *m, const int32_t *ids, size_t n, float *logits) {
    if (!m || !ids || n == 0 || n > INT32_MAX) return m ? fail(m, SN_ABI_EINVAL, "no tokens") : SN_ABI_EINVAL;
    return sn_model_eval(m->m, ids, (int64_t)n, logits, &m->err);
}

int32_t sn_abi_reset(sn_abi_model *m) {
    if (!m) return SN_ABI_EINVAL;
    sn_model_reset(m->m);
    return SN_ABI_OK;
}

int32_t sn_abi_model_is_recurrent(const sn_abi_model *m) { return m && sn_model_state_size(m->m) > 0; }

int32_t sn_abi_state_size(const sn_abi_model *m, size_t *size) {
    if (!m || !size) return SN_ABI_EINVAL;
    const uint64_t n = sn_model_state_size(m->m);
    *size = (size_t)n;
    return n ? SN_ABI_OK : SN_ABI_EUNSUPPORTED;
}

int32_t sn_abi_state_get(sn_abi_model *m, void *buf, size_t cap, size_t *n_out) {
    if (!m || !n_out || (!buf && cap)) return SN_ABI_EINVAL;
    *n_out = (size_t)sn_model_state_size(m->m);
    return sn_model_state_get(m->m, buf, cap, &m->err);
}

int32_t sn_abi_state_set(sn_abi_model *m, const void *buf, size_t n) {
    if (!m || !buf) return SN_ABI_EINVAL;
    return sn_model_state_set(m->m, buf, n, &m->err);
}

int32_t sn_abi_sampler_new(float temp, int32_t top_k, float top_p, uint32_t seed, sn_abi_sampler **out) {
    if (!out) return SN_ABI_EINVAL;
    *out = NULL;
    sn_sampler_params p;
    sn_sampler_params_default(&p);
    p.temp = temp;
    p.top_k = top_k;
    p.top_p = top_p;
    p.seed = seed;
    sn_abi_sampler *as = calloc(1, sizeof(*as));
    if (!as) return SN_ABI_ENOMEM;
    sn_err err;
    sn_status st = sn_sampler_new(&p, &as->s, &err);
    if (st) { free(as); return st; }
    *out = as;
    return SN_ABI_OK;
}

int32_t sn_abi_sample(sn_abi_sampler *s, const float *logits, int32_t n_vocab, int32_t *id) {
    if (!s || !logits || n_vocab <= 0 || !id) return SN_ABI_EINVAL;
    *id = sn_sampler_sample(s->s, logits, n_vocab);
    return SN_ABI_OK;
}

void sn_abi_sampler_free(sn_abi_sampler *s) {
    if (!s) return;
    sn_sampler_free(s->s);
    free(s);
}
