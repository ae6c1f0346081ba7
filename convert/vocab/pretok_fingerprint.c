/* pretok_fingerprint.c - names llama.cpp's pre-tokenizer for a tokenizer.json.
 *
 * llama.cpp's converter identifies the pre-tokenizer by running the HF tokenizer on a probe text and
 * hashing the ids; a C converter cannot run transformers. Instead we read the pre_tokenizer spec
 * itself (Split regex, ByteLevel flags, Digits) plus the two bits of context that separate
 * otherwise identical specs (model.ignore_merges; clean_up_tokenization_spaces), and map it to the
 * name whose regex and flags llama.cpp applies (src/llama-vocab.cpp). Anything else is an error that
 * shows what was found: a wrong pre-tokenizer silently degrades every prompt. */
#include "vocab.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

/* Split regexes exactly as they appear in tokenizer.json (after JSON unescaping). */
#define RE_CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
#define RE_CONTRACTIONS_X "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RE_L3_TAIL(digits) \
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" digits "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
static const char RE_LLAMA3[] = RE_CONTRACTIONS RE_L3_TAIL("\\p{N}{1,3}");
static const char RE_LLAMA3_X[] = RE_CONTRACTIONS_X RE_L3_TAIL("\\p{N}{1,3}");
static const char RE_QWEN2[] = RE_CONTRACTIONS RE_L3_TAIL("\\p{N}");
static const char RE_QWEN2_X[] = RE_CONTRACTIONS_X RE_L3_TAIL("\\p{N}");
static const char RE_QWEN35[] =
    RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
                    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
#define RE_UPPER "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
#define RE_LOWER "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"
static const char RE_TEKKEN[] =
    "[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER "*" RE_LOWER "+|[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER "+" RE_LOWER
    "*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char RE_GPT4O[] =
    "[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER "*" RE_LOWER "+" RE_CONTRACTIONS "?|[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER
    "+" RE_LOWER "*" RE_CONTRACTIONS "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+"
    "|\\s+(?!\\S)|\\s+";

/* Every tokenizer.ggml.pre value this llama.cpp accepts (src/llama-vocab.cpp); --pre must be one. */
static const char *const LLAMACPP_PRE_NAMES[] = {
    "default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
    "lfm2", "jina-v5-nano", "minicpm5", "deepseek-llm", "deepseek-coder", "deepseek-v3", "spark2_5",
    "youtu", "falcon", "mpt", "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat",
    "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jais-2", "gemma4",
    "granite-embed-multi-311m", "sarvam-moe", "jina-v1-en", "jina-v2-code", "roberta-bpe",
    "whitespace", "refact", "command-r", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "qwen35",
    "stablelm2", "olmo", "dbrx", "smaug-bpe", "poro-chat", "glm4", "chatglm-bpe", "viking", "jais",
    "tekken", "smollm", "codeshell", "bloom", "gpt3-finnish", "exaone", "exaone4", "exaone-moe",
    "chameleon", "minerva-7b", "megrez", "gpt-4o", "llama4", "kanana2", "talkie",
    "granite-embed-multi-97m", "tiny_aya", "cohere2moe", "superbpe", "trillion", "granite-docling",
    "bailingmoe", "bailingmoe2", "llada-moe", "seed-coder", "hunyuan", "hunyuan-dense", "hy_v4",
    "joyai-llm", "kimi-k2", "ufakzeka", "grok-2", "afmoe", "laguna", "minimax-m2", "solar-open",
    "mellum2", NULL};

/* The names the fingerprint below can produce. */
static const char *const RECOGNISED[] = {"llama-bpe", "smaug-bpe", "qwen2", "qwen35", "tekken",
                                         "gpt-4o", "gpt-2", "smollm", "starcoder", NULL};

const char *const *sn_vocab_pre_names(void) { return RECOGNISED; }

int sn_pretok_known_name(const char *name) {
    for (const char *const *p = LLAMACPP_PRE_NAMES; *p; p++)
        if (!strcmp(*p, name)) return 1;
    return 0;
}

enum step_kind { ST_SPLIT, ST_BYTELEVEL, ST_DIGITS, ST_OTHER };
typedef struct {
    enum step_kind kind;
    const char *regex;     /* Split with a Regex pattern splitting into its matches; else NULL */
    const char *type;      /* the "type" field, for messages */
    int add_prefix_space;  /* ByteLevel */
    int use_regex;         /* ByteLevel */
    int individual_digits; /* Digits */
} step;

#define MAX_STEPS 8

static int json_bool(const cJSON *o, const char *k, int dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    return dflt;
}

static int flatten(const cJSON *node, step *steps, int n) {
    if (!cJSON_IsObject(node)) return -1;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(node, "type");
    const char *type = cJSON_IsString(t) ? t->valuestring : "?";
    if (!strcmp(type, "Sequence")) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(node, "pretokenizers");
        const cJSON *c;
        cJSON_ArrayForEach(c, list) {
            n = flatten(c, steps, n);
            if (n < 0) return n;
        }
        return n;
    }
    if (n >= MAX_STEPS) return -1;
    step *s = &steps[n];
    memset(s, 0, sizeof *s);
    s->type = type;
    s->kind = ST_OTHER;
    if (!strcmp(type, "Split")) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(node, "pattern");
        const cJSON *re = cJSON_GetObjectItemCaseSensitive(pat, "Regex");
        const cJSON *beh = cJSON_GetObjectItemCaseSensitive(node, "behavior");
        /* Isolated matches, or (Xenova's gpt-4o / gpt-3.5 files) the gaps between matches removed
         * with invert: the same pieces when the regex matches every character, as each regex
         * recognised below does. */
        const int invert = json_bool(node, "invert", 0);
        if (cJSON_IsString(re) && cJSON_IsString(beh) &&
            ((!strcmp(beh->valuestring, "Isolated") && !invert) || (!strcmp(beh->valuestring, "Removed") && invert))) {
            s->kind = ST_SPLIT;
            s->regex = re->valuestring;
        }
    } else if (!strcmp(type, "ByteLevel")) {
        s->kind = ST_BYTELEVEL; /* HF defaults: add_prefix_space=true, use_regex=true */
        s->add_prefix_space = json_bool(node, "add_prefix_space", 1);
        s->use_regex = json_bool(node, "use_regex", 1);
    } else if (!strcmp(type, "Digits")) {
        s->kind = ST_DIGITS;
        s->individual_digits = json_bool(node, "individual_digits", 0);
    }
    return n + 1;
}

static void describe(const step *steps, int n, char *buf, size_t size) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < n && off < size; i++) {
        const step *s = &steps[i];
        int k;
        if (s->kind == ST_SPLIT)
            k = snprintf(buf + off, size - off, "%sSplit(regex \"%s\")", i ? ", " : "", s->regex);
        else if (s->kind == ST_BYTELEVEL)
            k = snprintf(buf + off, size - off, "%sByteLevel(add_prefix_space=%s, use_regex=%s)",
                         i ? ", " : "", s->add_prefix_space ? "true" : "false",
                         s->use_regex ? "true" : "false");
        else if (s->kind == ST_DIGITS)
            k = snprintf(buf + off, size - off, "%sDigits(individual_digits=%s)", i ? ", " : "",
                         s->individual_digits ? "true" : "false");
        else
            k = snprintf(buf + off, size - off, "%s%s (unsupported form)", i ? ", " : "", s->type);
        if (k < 0) break;
        off += (size_t)k;
    }
}

static const char *match(const step *s, int n, const cJSON *tok_json, const cJSON *tok_config) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(tok_json, "model");
    int ignore_merges = json_bool(model, "ignore_merges", 0);
    /* Split(regex) then ByteLevel without its own regex: the modern tiktoken-style layouts. */
    if (n == 2 && s[0].kind == ST_SPLIT && s[1].kind == ST_BYTELEVEL && !s[1].add_prefix_space &&
        !s[1].use_regex) {
        const char *re = s[0].regex;
        if (!strcmp(re, RE_LLAMA3) || !strcmp(re, RE_LLAMA3_X))
            /* Same regex; llama-bpe also turns on ignore_merges (Llama 3 proper). Llama-3 derived
             * tokenizer.json files saved without ignore_merges hash to smaug-bpe in llama.cpp. */
            return ignore_merges ? "llama-bpe" : "smaug-bpe";
        if (!strcmp(re, RE_QWEN2) || !strcmp(re, RE_QWEN2_X)) return "qwen2";
        if (!strcmp(re, RE_QWEN35)) return "qwen35";
        if (!strcmp(re, RE_TEKKEN)) return "tekken";
        if (!strcmp(re, RE_GPT4O)) return "gpt-4o";
        return NULL;
    }
    /* GPT-2: ByteLevel applies its built-in regex. */
    if (n == 1 && s[0].kind == ST_BYTELEVEL && !s[0].add_prefix_space && s[0].use_regex) return "gpt-2";
    /* StarCoder / SmolLM: single digits, then the GPT-2 regex. llama.cpp tells them apart only by
     * clean_spaces (false for smollm), which is HF's clean_up_tokenization_spaces. */
    if (n == 2 && s[0].kind == ST_DIGITS && s[0].individual_digits && s[1].kind == ST_BYTELEVEL &&
        !s[1].add_prefix_space && s[1].use_regex) {
        const cJSON *cu = cJSON_GetObjectItemCaseSensitive(tok_config, "clean_up_tokenization_spaces");
        return cJSON_IsFalse(cu) ? "smollm" : "starcoder";
    }
    return NULL;
}

sn_status sn_pretok_fingerprint(const struct cJSON *tok_json, const struct cJSON *tok_config,
                                const char *what, char *name, size_t name_size, sn_err *err) {
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(tok_json, "pre_tokenizer");
    step steps[MAX_STEPS];
    char desc[1024];
    if (!cJSON_IsObject(pre))
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s: field \"pre_tokenizer\" is missing or null in a byte-level BPE "
                          "tokenizer; cannot name the llama.cpp pre-tokenizer (override with --pre NAME)",
                          what);
    int n = flatten(pre, steps, 0);
    if (n < 0)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s: field \"pre_tokenizer\" has an unsupported shape (override with --pre NAME)",
                          what);
    const char *res = match(steps, n, tok_json, tok_config);
    if (!res) {
        describe(steps, n, desc, sizeof desc);
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s: unrecognised pre_tokenizer: %s. If you know which llama.cpp "
                          "pre-tokenizer applies, pass --pre NAME (recognised automatically: llama-bpe, "
                          "qwen2, qwen35, tekken, gpt-4o, gpt-2, smollm, starcoder, smaug-bpe)",
                          what, desc);
    }
    snprintf(name, name_size, "%s", res);
    return SN_OK;
}
