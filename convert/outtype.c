/* outtype.c - the one table of output types: what each --outtype name means.
 *
 * A row gives the name (--outtype takes it in any case), the llama_ftype number written to
 * general.file_type (llama.h's enum llama_ftype), the default per-tensor type, the recipe that
 * picks every tensor's type, and a description for the help text. The converter, --dry-run, the
 * help text, the unknown-name error and the file-type labels (sunny-convert's summary, integrate's
 * model facts) all read this table; rows past SN_OUTTYPE_COUNT only name file types sunny reads
 * but does not write. */
#include "convert.h"

#include "ggml_types.h"

#include <stdio.h>
#include <strings.h>

/* Rows in sn_outtype order. Converter rows follow llama.cpp's convert_hf_to_gguf.py --outtype;
 * quantize rows follow llama-quantize run on the f32 conversion (quant_rules.c). */
static const sn_outtype_info k_outtypes[] = {
    [SN_OUTTYPE_AUTO] = {"auto", 1, SN_GGML_F16, SN_RECIPE_CONVERTER, "the checkpoint's 16-bit type, else f16"},
    [SN_OUTTYPE_F32] = {"f32", 0, SN_GGML_F32, SN_RECIPE_CONVERTER, "32-bit floats"},
    [SN_OUTTYPE_F16] = {"f16", 1, SN_GGML_F16, SN_RECIPE_CONVERTER, "16-bit floats"},
    [SN_OUTTYPE_BF16] = {"bf16", 32, SN_GGML_BF16, SN_RECIPE_CONVERTER, "bfloat16"},
    [SN_OUTTYPE_Q8_0] = {"q8_0", 7, SN_GGML_Q8_0, SN_RECIPE_CONVERTER, "8-bit, llama.cpp's converter"},
    [SN_OUTTYPE_Q4_0] = {"q4_0", 2, SN_GGML_Q4_0, SN_RECIPE_QUANTIZE, "4.5 bpw, Q6_K head"},
    [SN_OUTTYPE_Q4_1] = {"q4_1", 3, SN_GGML_Q4_1, SN_RECIPE_QUANTIZE, "5.0 bpw, Q6_K head"},
    [SN_OUTTYPE_Q5_0] = {"q5_0", 8, SN_GGML_Q5_0, SN_RECIPE_QUANTIZE, "5.5 bpw, Q6_K head"},
    [SN_OUTTYPE_Q5_1] = {"q5_1", 9, SN_GGML_Q5_1, SN_RECIPE_QUANTIZE, "6.0 bpw, Q6_K head"},
    [SN_OUTTYPE_Q2_K] = {"q2_k", 10, SN_GGML_Q2_K, SN_RECIPE_QUANTIZE, "Q2_K, Q3_K/Q4_K attn_v, Q3_K ffn_down"},
    [SN_OUTTYPE_Q3_K_S] = {"q3_k_s", 11, SN_GGML_Q3_K, SN_RECIPE_QUANTIZE, "Q3_K"},
    [SN_OUTTYPE_Q3_K_M] = {"q3_k_m", 12, SN_GGML_Q3_K, SN_RECIPE_QUANTIZE, "Q3_K, Q4_K/Q5_K attn_v, ffn_down"},
    [SN_OUTTYPE_Q3_K_L] = {"q3_k_l", 13, SN_GGML_Q3_K, SN_RECIPE_QUANTIZE, "Q3_K, Q5_K attn_v, ffn_down"},
    [SN_OUTTYPE_Q4_K_S] = {"q4_k_s", 14, SN_GGML_Q4_K, SN_RECIPE_QUANTIZE, "Q4_K, Q5_K in the first layers"},
    [SN_OUTTYPE_Q4_K_M] = {"q4_k_m", 15, SN_GGML_Q4_K, SN_RECIPE_QUANTIZE, "Q4_K, Q6_K for half of attn_v, ffn_down"},
    [SN_OUTTYPE_Q5_K_S] = {"q5_k_s", 16, SN_GGML_Q5_K, SN_RECIPE_QUANTIZE, "Q5_K"},
    [SN_OUTTYPE_Q5_K_M] = {"q5_k_m", 17, SN_GGML_Q5_K, SN_RECIPE_QUANTIZE, "Q5_K, Q6_K for half of attn_v, ffn_down"},
    [SN_OUTTYPE_Q6_K] = {"q6_k", 18, SN_GGML_Q6_K, SN_RECIPE_QUANTIZE, "Q6_K"},
    [SN_OUTTYPE_IQ4_NL] = {"iq4_nl", 25, SN_GGML_IQ4_NL, SN_RECIPE_QUANTIZE, "4.5 bpw non-linear, no imatrix"},
    [SN_OUTTYPE_IQ4_XS] = {"iq4_xs", 30, SN_GGML_IQ4_XS, SN_RECIPE_QUANTIZE, "4.25 bpw non-linear, no imatrix"},
    /* llama_ftype names only (type -1): --outtype refuses them */
    {"iq2_xxs", 19, -1, 0, NULL}, {"iq2_xs", 20, -1, 0, NULL}, {"q2_k_s", 21, -1, 0, NULL},
    {"iq3_xs", 22, -1, 0, NULL}, {"iq3_xxs", 23, -1, 0, NULL}, {"iq1_s", 24, -1, 0, NULL},
    {"iq3_s", 26, -1, 0, NULL}, {"iq3_m", 27, -1, 0, NULL}, {"iq2_s", 28, -1, 0, NULL},
    {"iq2_m", 29, -1, 0, NULL}, {"iq1_m", 31, -1, 0, NULL}, {"tq1_0", 36, -1, 0, NULL},
    {"tq2_0", 37, -1, 0, NULL}, {"mxfp4_moe", 38, -1, 0, NULL}, {"nvfp4", 39, -1, 0, NULL},
    {"q1_0", 40, -1, 0, NULL}, {"q2_0", 41, -1, 0, NULL},
};
#define N_ROWS (sizeof k_outtypes / sizeof k_outtypes[0])

const sn_outtype_info *sn_outtype_info_of(sn_outtype t) {
    return (unsigned)t < SN_OUTTYPE_COUNT ? &k_outtypes[t] : NULL;
}

int sn_outtype_parse(const char *s) {
    for (int i = 0; s && i < SN_OUTTYPE_COUNT; i++)
        if (strcasecmp(s, k_outtypes[i].name) == 0) return i;
    return -1;
}

const char *sn_outtype_name(sn_outtype t) {
    const sn_outtype_info *i = sn_outtype_info_of(t);
    return i ? i->name : "?";
}

const char *sn_outtype_of_ftype(uint32_t ftype) {
    for (size_t i = 1; i < N_ROWS; i++) /* from 1: "auto" is not a file type's name */
        if (k_outtypes[i].ftype == ftype) return k_outtypes[i].name;
    return NULL;
}

size_t sn_ftype_label(uint32_t ftype, char *buf, size_t n) {
    const char *s = sn_outtype_of_ftype(ftype);
    size_t k = 0;
    for (; s && s[k] && k + 1 < n; k++)
        buf[k] = (char)(s[k] >= 'a' && s[k] <= 'z' ? s[k] - 'a' + 'A' : s[k]);
    if (n) buf[k] = 0;
    return s ? k : 0;
}

size_t sn_outtype_list(char *buf, size_t n) {
    size_t k = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < SN_OUTTYPE_COUNT && k < n; i++) {
        int w = snprintf(buf + k, n - k, "%s%s", i ? ", " : "", k_outtypes[i].name);
        if (w < 0) break;
        k += (size_t)w;
    }
    return k;
}
