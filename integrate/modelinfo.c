/* modelinfo.c - GGUF facts for integrate/ (see modelinfo.h). The architecture table is the list of
 * LLM_ARCH names in the llama.cpp version the tests run (src/llama-arch.cpp), kept as data. */
#include "modelinfo.h"
#include "gguf.h"
#include "model.h"
#include "convert.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_archs[] = {
    "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", 
    "mpt", "baichuan", "starcoder", "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", 
    "neo-bert", "jina-bert-v2", "jina-bert-v3", "eurobert", "bloom", "stablelm", "qwen", "qwen2", 
    "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "qwen35", 
    "qwen35moe", "qwen4exp", "phi2", "phi3", "phimoe", "plamo", "plamo2", "plamo3", 
    "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", 
    "gemma3n", "gemma4", "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba", "mamba2", "maple", 
    "jamba", "falcon-h1", "xverse", "command-r", "cohere2", "cohere2moe", "dbrx", "olmo", 
    "olmo2", "olmoe", "muse-glimmer", "openelm", "arctic", "deepseek", "deepseek2", "deepseek2-ocr", 
    "deepseek32", "deepseek4", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5", 
    "t5encoder", "jais", "jais2", "nemotron", "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", 
    "exaone-moe", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "granite", "granitemoe", "granitehybrid", 
    "graniteswitch", "granite_swa", "chameleon", "wavtokenizer-dec", "plm", "bailingmoe", "bailingmoe2", "bailingmoe3", 
    "dots1", "dots3note", "arcee", "afmoe", "laguna", "ernie4_5", "ernie4_5-moe", "hunyuan-moe", 
    "hunyuan-dense", "hunyuan_vl", "hy_v3", "hy_v4", "smollm3", "gpt-oss", "lfm2", "lfm2moe", 
    "dream", "smallthinker", "llada", "llada-moe", "seed_oss", "grovemoe", "apertus", "minimax-01", 
    "hrm_text", "minimax-m2", "minimax-m3", "cogvlm", "rnd1", "pangu-embedded", "mistral3", "eagle3", 
    "dflash", "mistral4", "paddleocr", "mimo2", "step35", "spark2_5", "llama-embed", "maincoder", 
    "kimi-linear", "kimi-k3", "talkie", "mellum", "nanbeige", "qwen3tts", "pockettts", 
};

int sn_modelinfo_arch_known(const char *arch) {
    for (size_t i = 0; i < sizeof k_archs / sizeof k_archs[0]; i++)
        if (strcmp(k_archs[i], arch) == 0) return 1;
    return 0;
}

static void copy_str(const sn_gguf *g, const char *key, char *buf, size_t cap) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0 || sn_gguf_kv_type(g, i) != SN_GGUF_STR) return;
    sn_gguf_str s = sn_gguf_get_str(g, i);
    size_t n = s.len < cap - 1 ? (size_t)s.len : cap - 1;
    memcpy(buf, s.ptr, n);
    buf[n] = 0;
}

static int64_t int_kv(const sn_gguf *g, const char *key, int64_t dflt) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return dflt;
    switch (sn_gguf_kv_type(g, i)) {
    case SN_GGUF_U8: return sn_gguf_get_u8(g, i);
    case SN_GGUF_I8: return sn_gguf_get_i8(g, i);
    case SN_GGUF_U16: return sn_gguf_get_u16(g, i);
    case SN_GGUF_I16: return sn_gguf_get_i16(g, i);
    case SN_GGUF_U32: return sn_gguf_get_u32(g, i);
    case SN_GGUF_I32: return sn_gguf_get_i32(g, i);
    case SN_GGUF_U64: return (int64_t)sn_gguf_get_u64(g, i);
    case SN_GGUF_I64: return sn_gguf_get_i64(g, i);
    default: return dflt;
    }
}

sn_status sn_modelinfo_read(const char *path, sn_modelinfo *mi, sn_err *err) {
    memset(mi, 0, sizeof *mi);
    mi->file_type = -1;
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(path, SN_GGUF_NO_DATA, &g, err);
    if (st != SN_OK) return st;
    copy_str(g, "general.architecture", mi->arch, sizeof mi->arch);
    if (!mi->arch[0]) {
        sn_gguf_close(g);
        return sn_err_set(err, SN_EFORMAT, "%s: no general.architecture key; not a model GGUF", path);
    }
    copy_str(g, "general.name", mi->name, sizeof mi->name);
    if (!mi->name[0]) {
        const char *b = strrchr(path, '/');
        b = b ? b + 1 : path;
        snprintf(mi->name, sizeof mi->name, "%s", b);
        char *dot = strstr(mi->name, ".gguf");
        if (dot) *dot = 0;
    }
    { /* naming_convention: basename or name ('/' and ' ' as '-'), -size_label, -finetune, -version */
        static const char *const keys[] = {"general.basename", "general.size_label", "general.finetune",
                                           "general.version"};
        size_t k = 0;
        for (int i = 0; i < 4; i++) {
            char v[128];
            v[0] = 0;
            copy_str(g, keys[i], v, sizeof v);
            if (i == 0 && !v[0]) snprintf(v, sizeof v, "%s", mi->name);
            if (!v[0]) continue;
            if (i && k + 1 < sizeof mi->stem) mi->stem[k++] = '-';
            for (const char *c = v; *c && k + 1 < sizeof mi->stem; c++)
                mi->stem[k++] = (*c == ' ' || (i == 0 && *c == '/')) ? '-' : *c;
            mi->stem[k] = 0;
        }
    }
    copy_str(g, "general.type", mi->general_type, sizeof mi->general_type);
    mi->file_type = (int)int_kv(g, "general.file_type", -1);
    if (mi->file_type < 0 || !sn_ftype_label((uint32_t)mi->file_type, mi->quant, sizeof mi->quant))
        snprintf(mi->quant, sizeof mi->quant, "unknown");
    mi->chat_template = sn_gguf_str_dup(g, "tokenizer.chat_template");
    mi->license = sn_gguf_str_dup(g, "general.license");
    char key[128];
    snprintf(key, sizeof key, "%s.context_length", mi->arch);
    int64_t cl = int_kv(g, key, 0);
    mi->context_length = cl > 0 && cl <= UINT32_MAX ? (uint32_t)cl : 0;
    mi->split_no = (int)int_kv(g, "split.no", 0);
    mi->split_count = (int)int_kv(g, "split.count", 0);
    mi->file_size = sn_gguf_file_size(g);
    sn_gguf_close(g);
    /* what sunny-run would refuse is not installed: the runtime's checks (a split model's first part
     * opens all of its parts; a later part: its structure) */
    if ((st = sn_model_validate(path, mi->split_no > 0 ? SN_VALIDATE_STRUCTURE : 0, err)) != SN_OK) {
        sn_modelinfo_free(mi);
        return sn_err_prefix(err, "%s: refused (sunny-run would not load it)", path);
    }
    return SN_OK;
}

void sn_modelinfo_free(sn_modelinfo *mi) {
    free(mi->chat_template);
    free(mi->license);
    mi->chat_template = mi->license = NULL;
}
