/* test_vocab.c - sn_vocab_write_gguf on small hand-written tokenizer folders.
 *
 * Each case writes tokenizer.json / tokenizer_config.json / config.json (and for SentencePiece a
 * tokenizer.model protobuf built byte by byte here) into a temp dir, runs the converter into a GGUF
 * writer with zero tensors, reads the file back and checks the keys, their order and values that
 * llama.cpp's converter would produce for the same input (worked out by hand from
 * convert_hf_to_gguf.py / gguf-py vocab.py). */
#include "sn_test.h"

#include "gguf.h"
#include "spm_model.h"
#include "vocab.h"

#include <cJSON.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];

static void put(const char *name, const char *text, size_t len) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(text, 1, len, f);
    fclose(f);
}
#define PUT(name, text) put(name, text, strlen(text))

static void fresh_dir(void) {
    if (g_dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) { /* best effort */ }
    }
    snprintf(g_dir, sizeof g_dir, "/tmp/sn_test_vocab_XXXXXX");
    CU_ASSERT_FATAL(mkdtemp(g_dir) != NULL);
}

/* Runs the converter; on success returns the reopened GGUF (caller closes), else NULL and *st. */
static sn_gguf *convert(const char *pre, sn_status *st_out, sn_err *err, sn_vocab_report *rep) {
    sn_gguf_writer *w = sn_gguf_writer_new();
    CU_ASSERT_FATAL(w != NULL);
    sn_gguf_writer_set_str(w, "general.architecture", "llama");
    sn_vocab_opts opts = {pre, NULL};
    sn_vocab_report r;
    sn_status st = sn_vocab_write_gguf(g_dir, NULL, w, &opts, rep ? rep : &r, err);
    if (st_out) *st_out = st;
    if (st) {
        /* nothing may have been appended on error */
        CU_ASSERT(!sn_gguf_writer_has_key(w, "tokenizer.ggml.model"));
        CU_ASSERT(!sn_gguf_writer_has_key(w, "tokenizer.ggml.add_space_prefix"));
        sn_gguf_writer_free(w);
        return NULL;
    }
    char path[300];
    snprintf(path, sizeof path, "%s/out.gguf", g_dir);
    sn_err e2 = {0};
    CU_ASSERT_FATAL(sn_gguf_writer_begin(w, path, &e2) == SN_OK);
    CU_ASSERT_FATAL(sn_gguf_writer_finish(w, &e2) == SN_OK);
    sn_gguf_writer_free(w);
    sn_gguf *g = NULL;
    CU_ASSERT_FATAL(sn_gguf_open(path, 0, &g, &e2) == SN_OK);
    return g;
}

static int str_is(sn_gguf_str s, const char *want) {
    return s.len == strlen(want) && !memcmp(s.ptr, want, s.len);
}

static int kv_str_is(sn_gguf *g, const char *key, const char *want) {
    int64_t i = sn_gguf_find_key(g, key);
    return i >= 0 && sn_gguf_kv_type(g, i) == SN_GGUF_STR && str_is(sn_gguf_get_str(g, i), want);
}

static int64_t kv_u32(sn_gguf *g, const char *key) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0 || sn_gguf_kv_type(g, i) != SN_GGUF_U32) return -1;
    return sn_gguf_get_u32(g, i);
}

static int kv_bool(sn_gguf *g, const char *key) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0 || sn_gguf_kv_type(g, i) != SN_GGUF_BOOL) return -1;
    return sn_gguf_get_bool(g, i);
}

static int tok_is(sn_gguf *g, uint64_t j, const char *want) {
    int64_t i = sn_gguf_find_key(g, "tokenizer.ggml.tokens");
    return i >= 0 && j < sn_gguf_arr_n(g, i) && str_is(sn_gguf_arr_str(g, i, j), want);
}

static int32_t type_of(sn_gguf *g, uint64_t j) {
    int64_t i = sn_gguf_find_key(g, "tokenizer.ggml.token_type");
    if (i < 0 || sn_gguf_arr_type(g, i) != SN_GGUF_I32 || j >= sn_gguf_arr_n(g, i)) return -99;
    int32_t v;
    memcpy(&v, (const char *)sn_gguf_arr_data(g, i) + 4 * j, 4);
    return v;
}

static float score_of(sn_gguf *g, uint64_t j) {
    int64_t i = sn_gguf_find_key(g, "tokenizer.ggml.scores");
    if (i < 0 || sn_gguf_arr_type(g, i) != SN_GGUF_F32 || j >= sn_gguf_arr_n(g, i)) return 12345.0f;
    float v;
    memcpy(&v, (const char *)sn_gguf_arr_data(g, i) + 4 * j, 4);
    return v;
}

/* Keys from index 1 on (0 is general.architecture) must be exactly LIST, in order. */
static void check_order(sn_gguf *g, const char *const *list) {
    int64_t n = sn_gguf_n_kv(g), i = 1;
    for (; list[i - 1]; i++) {
        CU_ASSERT_FATAL(i < n);
        if (strcmp(sn_gguf_key(g, i), list[i - 1]) != 0)
            fprintf(stderr, "key %lld: got %s want %s\n", (long long)i, sn_gguf_key(g, i), list[i - 1]);
        CU_ASSERT_STRING_EQUAL(sn_gguf_key(g, i), list[i - 1]);
    }
    CU_ASSERT_EQUAL(i, n);
}

/* ---- byte-level BPE ---------------------------------------------------------------------------- */

#define LLAMA3_RE "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
#define QWEN2_RE "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"

static void put_bpe(const char *regex, const char *ignore_merges, const char *merges) {
    char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"version\":\"1.0\",\"added_tokens\":["
             "{\"id\":6,\"content\":\"<|begin|>\",\"special\":true,\"normalized\":false},"
             "{\"id\":7,\"content\":\"<|end|>\",\"special\":true,\"normalized\":false},"
             "{\"id\":8,\"content\":\"<think>\",\"special\":false,\"normalized\":false},"
             "{\"id\":9,\"content\":\"a\\u2581b\",\"special\":false,\"normalized\":false},"
             "{\"id\":10,\"content\":\"<|tool|>\",\"special\":false,\"normalized\":false}],"
             "\"normalizer\":null,"
             "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
             "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"%s\"},\"behavior\":\"Isolated\",\"invert\":false},"
             "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":false}]},"
             "\"post_processor\":{\"type\":\"TemplateProcessing\","
             "\"single\":[{\"SpecialToken\":{\"id\":\"<|begin|>\",\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],"
             "\"pair\":[{\"SpecialToken\":{\"id\":\"<|begin|>\",\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
             "{\"SpecialToken\":{\"id\":\"<|begin|>\",\"type_id\":1}},{\"Sequence\":{\"id\":\"B\",\"type_id\":1}}]},"
             "\"decoder\":{\"type\":\"ByteLevel\"},"
             "\"model\":{\"type\":\"BPE\",\"byte_fallback\":false,%s"
             "\"vocab\":{\"h\":0,\"e\":1,\"he\":2,\"\\u0120\":3,\"\\u0120h\":4,\"\\u0120he\":5},"
             "\"merges\":%s}}",
             regex, ignore_merges, merges);
    PUT("tokenizer.json", buf);
}

static void test_gpt2_llama3(void) {
    fresh_dir();
    put_bpe(LLAMA3_RE, "\"ignore_merges\":true,", "[\"h e\",\"\\u0120 h\",\"\\u0120h e\"]");
    PUT("tokenizer_config.json",
        "{\"bos_token\":\"<|begin|>\",\"eos_token\":{\"content\":\"<|end|>\"},\"chat_template\":\"{{x}}\"}");
    PUT("config.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":13,"
                       "\"bos_token_id\":6,\"eos_token_id\":[7,6],\"pad_token_id\":12}");
    sn_err err = {0};
    sn_vocab_report rep;
    sn_gguf *g = convert(NULL, NULL, &err, &rep);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_STRING_EQUAL(rep.model, "gpt2");
    CU_ASSERT_STRING_EQUAL(rep.pre, "llama-bpe");
    CU_ASSERT_EQUAL(rep.n_tokens, 13);
    CU_ASSERT(kv_str_is(g, "tokenizer.ggml.model", "gpt2"));
    CU_ASSERT(kv_str_is(g, "tokenizer.ggml.pre", "llama-bpe"));
    CU_ASSERT(tok_is(g, 3, "\xc4\xa0"));                  /* 'Ġ' copied as is */
    CU_ASSERT(tok_is(g, 9, "a b"));                       /* user-defined: ▁ -> space */
    CU_ASSERT(tok_is(g, 11, "[PAD11]"));
    CU_ASSERT(tok_is(g, 12, "[PAD12]"));
    CU_ASSERT_EQUAL(type_of(g, 0), 1);                    /* NORMAL */
    CU_ASSERT_EQUAL(type_of(g, 6), 3);                    /* special -> CONTROL */
    CU_ASSERT_EQUAL(type_of(g, 8), 4);                    /* non-special -> USER_DEFINED */
    CU_ASSERT_EQUAL(type_of(g, 10), 3);                   /* looks special (<|...|>) -> CONTROL */
    CU_ASSERT_EQUAL(type_of(g, 12), 5);                   /* padding -> UNUSED */
    CU_ASSERT(sn_gguf_find_key(g, "tokenizer.ggml.scores") < 0);
    int64_t mi = sn_gguf_find_key(g, "tokenizer.ggml.merges");
    CU_ASSERT_FATAL(mi >= 0);
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, mi), 3);
    CU_ASSERT(str_is(sn_gguf_arr_str(g, mi, 1), "\xc4\xa0 h"));
    /* ids: bos/eos from tokenizer_config (found in added_tokens), then pad from config.json; the
     * eos list in config.json is ignored. add_bos from TemplateProcessing; add_sep false from its
     * pair template (the middle special is bos, neither sep nor eos). */
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.bos_token_id"), 6);
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.eos_token_id"), 7);
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.padding_token_id"), 12);
    CU_ASSERT_EQUAL(kv_bool(g, "tokenizer.ggml.add_bos_token"), 1);
    CU_ASSERT_EQUAL(kv_bool(g, "tokenizer.ggml.add_sep_token"), 0);
    CU_ASSERT(kv_str_is(g, "tokenizer.chat_template", "{{x}}"));
    static const char *const order[] = {
        "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
        "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.padding_token_id", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_sep_token",
        "tokenizer.chat_template", NULL};
    check_order(g, order);
    sn_gguf_close(g);
}

static void test_gpt2_qwen_pairs_and_space_prefix(void) {
    fresh_dir();
    /* transformers >= 4.45 pair merges, with a space inside a part -> encoded as 'Ġ' */
    put_bpe(QWEN2_RE, "", "[[\"h\",\"e\"],[\" \",\"h\"],[\"\\u0120h\",\"e\"]]");
    PUT("tokenizer_config.json", "{\"add_prefix_space\":false,\"add_bos_token\":false,\"eos_token\":\"<|end|>\"}");
    PUT("config.json", "{\"architectures\":[\"Qwen2ForCausalLM\"]}");
    sn_err err = {0};
    sn_gguf *g = convert(NULL, NULL, &err, NULL);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(kv_str_is(g, "tokenizer.ggml.pre", "qwen2"));
    CU_ASSERT(sn_gguf_find_key(g, "tokenizer.ggml.add_space_prefix") < 0); /* not for Qwen */
    int64_t mi = sn_gguf_find_key(g, "tokenizer.ggml.merges");
    CU_ASSERT_FATAL(mi >= 0);
    CU_ASSERT(str_is(sn_gguf_arr_str(g, mi, 0), "h e"));
    CU_ASSERT(str_is(sn_gguf_arr_str(g, mi, 1), "\xc4\xa0 h"));
    /* no config vocab_size: 11 distinct strings (6 vocab + 5 added) */
    int64_t ti = sn_gguf_find_key(g, "tokenizer.ggml.tokens");
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, ti), 11);
    /* add_bos from the post-processor is overridden in place by tokenizer_config */
    CU_ASSERT_EQUAL(kv_bool(g, "tokenizer.ggml.add_bos_token"), 0);
    sn_gguf_close(g);

    /* same tokenizer under a Llama architecture: add_space_prefix comes first */
    PUT("config.json", "{\"architectures\":[\"LlamaForCausalLM\"]}");
    g = convert(NULL, NULL, &err, NULL);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_STRING_EQUAL(sn_gguf_key(g, 1), "tokenizer.ggml.add_space_prefix");
    CU_ASSERT_EQUAL(kv_bool(g, "tokenizer.ggml.add_space_prefix"), 0);
    sn_gguf_close(g);
}

static void test_gpt2_llama3_without_ignore_merges_is_smaug(void) {
    fresh_dir();
    put_bpe(LLAMA3_RE, "", "[\"h e\"]");
    PUT("config.json", "{}");
    sn_err err = {0};
    sn_vocab_report rep;
    sn_gguf *g = convert(NULL, NULL, &err, &rep);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_STRING_EQUAL(rep.pre, "smaug-bpe");
    sn_gguf_close(g);
}

static void test_gpt2_added_shadows_base(void) {
    fresh_dir();
    /* "he" is both base id 2 and added id 3: only the added one survives (no duplicate strings) */
    PUT("tokenizer.json",
        "{\"added_tokens\":[{\"id\":3,\"content\":\"he\",\"special\":false}],"
        "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{\"h\":0,\"e\":1,\"he\":2},\"merges\":[\"h e\"]}}");
    PUT("config.json", "{\"vocab_size\":4}");
    sn_err err = {0};
    sn_gguf *g = convert(NULL, NULL, &err, NULL);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(kv_str_is(g, "tokenizer.ggml.pre", "gpt-2"));
    CU_ASSERT(tok_is(g, 2, "[PAD2]"));
    CU_ASSERT_EQUAL(type_of(g, 2), 5);
    CU_ASSERT(tok_is(g, 3, "he"));
    CU_ASSERT_EQUAL(type_of(g, 3), 4);
    sn_gguf_close(g);
}

static void test_unknown_pre_and_override(void) {
    fresh_dir();
    put_bpe("\\\\p{L}+|\\\\s+", "", "[\"h e\"]");
    PUT("config.json", "{}");
    sn_err err = {0};
    sn_status st;
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EUNSUPPORTED);
    CU_ASSERT(strstr(err.msg, "\\p{L}+|\\s+") != NULL);
    CU_ASSERT(strstr(err.msg, "--pre NAME") != NULL);
    CU_ASSERT(strstr(err.msg, "tokenizer.json") != NULL);

    memset(&err, 0, sizeof err);
    CU_ASSERT(convert("not-a-llamacpp-pre", &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EINVAL);
    CU_ASSERT(strstr(err.msg, "not-a-llamacpp-pre") != NULL);

    sn_vocab_report rep;
    sn_gguf *g = convert("gpt-4o", &st, &err, &rep);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(kv_str_is(g, "tokenizer.ggml.pre", "gpt-4o"));
    sn_gguf_close(g);
}

static sn_status fp(const char *pre_json, const char *config_json, char *name) {
    char buf[2048];
    snprintf(buf, sizeof buf, "{\"model\":{\"type\":\"BPE\"},\"pre_tokenizer\":%s}", pre_json);
    cJSON *tj = cJSON_Parse(buf), *tc = config_json ? cJSON_Parse(config_json) : NULL;
    CU_ASSERT_FATAL(tj != NULL);
    sn_err err = {0};
    sn_status st = sn_pretok_fingerprint(tj, tc, "t.json", name, 32, &err);
    cJSON_Delete(tj);
    cJSON_Delete(tc);
    return st;
}

static void test_fingerprints(void) {
    char name[32];
    const char *bl_re = "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}";
    CU_ASSERT(fp(bl_re, NULL, name) == SN_OK && !strcmp(name, "gpt-2"));
    char digits[512];
    snprintf(digits, sizeof digits,
             "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\",\"individual_digits\":true},%s]}", bl_re);
    CU_ASSERT(fp(digits, "{\"clean_up_tokenization_spaces\":false}", name) == SN_OK && !strcmp(name, "smollm"));
    CU_ASSERT(fp(digits, "{\"clean_up_tokenization_spaces\":true}", name) == SN_OK && !strcmp(name, "starcoder"));
    const char *tekken =
        "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":"
        "\"[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]*[\\\\p{Ll}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]+|"
        "[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]+[\\\\p{Ll}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]*|"
        "\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n/]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},"
        "\"behavior\":\"Isolated\",\"invert\":false},"
        "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":false}]}";
    CU_ASSERT(fp(tekken, NULL, name) == SN_OK && !strcmp(name, "tekken"));
    /* Xenova's gpt-4o / gpt-3.5 form: the gaps between matches removed, inverted - the same pieces;
     * removed without invert would drop the matches themselves */
    char form[1200];
    const char *at = strstr(tekken, "\"behavior\":\"Isolated\",\"invert\":false");
    CU_ASSERT_FATAL(at != NULL);
    snprintf(form, sizeof form, "%.*s\"behavior\":\"Removed\",\"invert\":true%s", (int)(at - tekken), tekken,
             at + strlen("\"behavior\":\"Isolated\",\"invert\":false"));
    CU_ASSERT(fp(form, NULL, name) == SN_OK && !strcmp(name, "tekken"));
    snprintf(form, sizeof form, "%.*s\"behavior\":\"Removed\",\"invert\":false%s", (int)(at - tekken), tekken,
             at + strlen("\"behavior\":\"Isolated\",\"invert\":false"));
    CU_ASSERT(fp(form, NULL, name) == SN_EUNSUPPORTED);
    /* ByteLevel with add_prefix_space is not something llama.cpp's gpt2 pre-tokenizers do */
    CU_ASSERT(fp("{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":true}", NULL, name) ==
              SN_EUNSUPPORTED);
    CU_ASSERT(fp("null", NULL, name) == SN_EUNSUPPORTED);
    CU_ASSERT(sn_pretok_known_name("llama-bpe") && sn_pretok_known_name("qwen2") && !sn_pretok_known_name("x"));
}

/* ---- byte_fallback BPE in tokenizer.json (Mistral / Llama-2 HF format) ------------------------- */

static void test_llama_hf_rank_scores(void) {
    fresh_dir();
    PUT("tokenizer.json",
        "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},"
        "{\"id\":1,\"content\":\"<s>\",\"special\":true},{\"id\":2,\"content\":\"</s>\",\"special\":true},"
        "{\"id\":10,\"content\":\"[TOOL]\",\"special\":false},{\"id\":11,\"content\":\"[CTRL]\",\"special\":true}],"
        "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"\\u2581\"}]},"
        "\"pre_tokenizer\":null,\"decoder\":{\"type\":\"Sequence\",\"decoders\":[]},"
        "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\"}},"
        "{\"Sequence\":{\"id\":\"A\"}}],\"pair\":[]},"
        "\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2,"
        "\"<0x0A>\":3,\"\\u2581\":4,\"t\":5,\"h\":6,\"\\u2581t\":7,\"th\":8,\"\\u2581th\":9},"
        "\"merges\":[\"\\u2581 t\",\"t h\",\"\\u2581t h\",\"\\u2581 th\"]}}");
    PUT("tokenizer_config.json", "{\"bos_token\":\"<s>\",\"eos_token\":\"</s>\",\"unk_token\":\"<unk>\","
                                 "\"add_bos_token\":true,\"add_eos_token\":false}");
    PUT("config.json", "{\"architectures\":[\"MistralForCausalLM\"],\"vocab_size\":14}");
    sn_err err = {0};
    sn_vocab_report rep;
    sn_gguf *g = convert(NULL, NULL, &err, &rep);
    if (!g) fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_STRING_EQUAL(rep.model, "llama");
    CU_ASSERT(kv_str_is(g, "tokenizer.ggml.pre", "default"));
    CU_ASSERT_EQUAL(rep.n_tokens, 14);
    /* score = -(rank of the first merge producing the token), else -n_merges (4) */
    CU_ASSERT_EQUAL(score_of(g, 7), -0.0f);  /* ▁t  : merge 0 */
    CU_ASSERT_EQUAL(score_of(g, 8), -1.0f);  /* th  : merge 1 */
    CU_ASSERT_EQUAL(score_of(g, 9), -2.0f);  /* ▁th : merges 2 and 3, first wins */
    CU_ASSERT_EQUAL(score_of(g, 5), -4.0f);  /* t   : no merge */
    CU_ASSERT_EQUAL(score_of(g, 1), -4.0f);
    CU_ASSERT_EQUAL(type_of(g, 0), 3);       /* <unk> is a special attribute -> CONTROL */
    CU_ASSERT_EQUAL(type_of(g, 1), 3);
    CU_ASSERT_EQUAL(type_of(g, 3), 6);       /* <0x0A> -> BYTE */
    CU_ASSERT_EQUAL(type_of(g, 9), 1);
    CU_ASSERT_EQUAL(type_of(g, 10), 4);      /* added, not special -> USER_DEFINED */
    CU_ASSERT_EQUAL(type_of(g, 11), 3);      /* added, special -> CONTROL */
    CU_ASSERT(tok_is(g, 12, "[PAD12]"));
    CU_ASSERT_EQUAL(type_of(g, 13), 5);
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.unknown_token_id"), 0);
    static const char *const order[] = {
        "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.scores",
        "tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token", NULL};
    check_order(g, order);
    sn_gguf_close(g);
}

/* ---- SentencePiece tokenizer.model ---------------------------------------------------------------- */

typedef struct { unsigned char b[4096]; size_t n; } pbuf;

static void pb_varint(pbuf *p, uint64_t v) {
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        p->b[p->n++] = c | (v ? 0x80 : 0);
    } while (v);
}

static void pb_piece(pbuf *p, const char *s, float score, int type) {
    pbuf in = {.n = 0};
    pb_varint(&in, 1 << 3 | 2);
    pb_varint(&in, strlen(s));
    memcpy(in.b + in.n, s, strlen(s));
    in.n += strlen(s);
    pb_varint(&in, 2 << 3 | 5);
    memcpy(in.b + in.n, &score, 4);
    in.n += 4;
    if (type != 1) {
        pb_varint(&in, 3 << 3 | 0);
        pb_varint(&in, (uint64_t)type);
    }
    pb_varint(p, 1 << 3 | 2);
    pb_varint(p, in.n);
    memcpy(p->b + p->n, in.b, in.n);
    p->n += in.n;
}

static void put_spm(pbuf *p) {
    p->n = 0;
    pb_piece(p, "<unk>", 0, 2);
    pb_piece(p, "<s>", 0, 3);
    pb_piece(p, "</s>", 0, 3);
    pb_piece(p, "\xe2\x96\x81" "a", -1.5f, 1);
    pb_piece(p, "<0x41>", 0, 6);
    pb_piece(p, "user", 0, 4); /* USER_DEFINED pieces become NORMAL, as llama.cpp's converter does */
    pb_piece(p, "old", -3, 5);
    /* a trainer_spec (field 2) and an unknown field 99 (varint) to be skipped */
    pb_varint(p, 2 << 3 | 2);
    pb_varint(p, 2);
    pb_varint(p, 3 << 3 | 0);
    pb_varint(p, 1);
    pb_varint(p, 99 << 3 | 0);
    pb_varint(p, 300);
    put("tokenizer.model", (const char *)p->b, p->n);
}

static void test_spm(void) {
    fresh_dir();
    pbuf p;
    put_spm(&p);
    PUT("config.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":9,\"bos_token_id\":1,"
                       "\"eos_token_id\":2,\"pad_token_id\":50}");
    PUT("tokenizer_config.json",
        "{\"add_bos_token\":true,\"added_tokens_decoder\":{\"5\":{\"content\":\"<|x|>\",\"special\":false},"
        "\"7\":{\"content\":\"\\u2581hi\",\"special\":false},\"40\":{\"content\":\"far\",\"special\":true}}}");
    PUT("added_tokens.json", "{\"extra\":8}");
    PUT("chat_template.jinja", "{{ messages }}");
    sn_err err = {0};
    sn_vocab_report rep;
    sn_gguf *g = convert(NULL, NULL, &err, &rep);
    if (!g) fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_STRING_EQUAL(rep.model, "llama");
    CU_ASSERT_EQUAL(rep.n_tokens, 9);
    CU_ASSERT(tok_is(g, 3, "\xe2\x96\x81" "a"));
    CU_ASSERT_EQUAL(score_of(g, 3), -1.5f);
    CU_ASSERT_EQUAL(type_of(g, 0), 2);
    CU_ASSERT_EQUAL(type_of(g, 1), 3);
    CU_ASSERT_EQUAL(type_of(g, 3), 1);
    CU_ASSERT_EQUAL(type_of(g, 4), 6);
    CU_ASSERT_EQUAL(type_of(g, 6), 5);
    CU_ASSERT(tok_is(g, 5, "<|x|>"));        /* looks special -> CONTROL, score -1000 */
    CU_ASSERT_EQUAL(type_of(g, 5), 3);
    CU_ASSERT_EQUAL(score_of(g, 5), -1000.0f);
    CU_ASSERT(tok_is(g, 7, " hi"));          /* user-defined: ▁ -> space */
    CU_ASSERT_EQUAL(type_of(g, 7), 4);
    CU_ASSERT(tok_is(g, 8, "extra"));        /* added_tokens.json */
    CU_ASSERT_EQUAL(type_of(g, 8), 4);
    CU_ASSERT_EQUAL(score_of(g, 8), -1000.0f);
    /* bos/eos from config.json; pad 50 >= n_vocab is dropped on the SentencePiece path */
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.bos_token_id"), 1);
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.eos_token_id"), 2);
    CU_ASSERT(sn_gguf_find_key(g, "tokenizer.ggml.padding_token_id") < 0);
    CU_ASSERT(kv_str_is(g, "tokenizer.chat_template", "{{ messages }}"));
    sn_gguf_close(g);

    /* padding slots when config.json's vocab_size exceeds the pieces */
    PUT("config.json", "{\"vocab_size\":9}");
    PUT("tokenizer_config.json", "{}");
    char at[300];
    snprintf(at, sizeof at, "%s/added_tokens.json", g_dir);
    unlink(at);
    g = convert(NULL, NULL, &err, NULL);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(tok_is(g, 7, "[PAD7]"));
    CU_ASSERT_EQUAL(score_of(g, 8), -10000.0f);
    CU_ASSERT_EQUAL(type_of(g, 8), 5);
    CU_ASSERT(sn_gguf_find_key(g, "tokenizer.chat_template") < 0); /* empty tokenizer_config: none */
    sn_gguf_close(g);
}

/* The protobuf reader on 3000 deterministic corruptions of a valid model: it must either parse
 * (every piece inside the buffer) or fail with SN_EFORMAT - never read out of bounds (ASan job). */
static void test_spm_parser_mutations(void) {
    pbuf p;
    fresh_dir();
    put_spm(&p);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int ok = 0, bad = 0;
    for (int it = 0; it < 3000; it++) {
        unsigned char buf[4096];
        size_t n = p.n;
        memcpy(buf, p.b, n);
        for (int k = 0; k < 1 + it % 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = (size_t)(x % n);
            switch ((x >> 32) % 3) {
            case 0: buf[at] ^= (unsigned char)(1u << ((x >> 40) % 8)); break;
            case 1: buf[at] = (unsigned char)(x >> 48); break;
            default: n = at ? at : 1; break; /* truncate */
            }
        }
        sn_spm_model m;
        sn_err err = {0};
        sn_status st = sn_spm_parse(buf, n, "fuzz", &m, &err);
        if (st == SN_OK) {
            for (size_t i = 0; i < m.n; i++)
                CU_ASSERT((const unsigned char *)m.pieces[i].piece >= buf &&
                          (const unsigned char *)m.pieces[i].piece + m.pieces[i].len <= buf + n);
            sn_spm_free(&m);
            ok++;
        } else {
            CU_ASSERT_EQUAL(st, SN_EFORMAT);
            CU_ASSERT(strstr(err.msg, "fuzz") != NULL);
            bad++;
        }
    }
    CU_ASSERT(ok > 0 && bad > 0);
}

static void test_spm_malformed(void) {
    fresh_dir();
    pbuf p;
    put_spm(&p);
    PUT("config.json", "{}");
    put("tokenizer.model", (const char *)p.b, 20); /* cut inside the second piece */
    sn_err err = {0};
    sn_status st;
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "tokenizer.model") != NULL);
    CU_ASSERT(strstr(err.msg, "byte") != NULL);
    put("tokenizer.model", "\x0b\x00", 2); /* wire type 3 (group) */
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
}

/* ---- SpecialVocab corners --------------------------------------------------------------------------- */

static void test_eot_from_template_and_named_templates(void) {
    fresh_dir();
    put_bpe(LLAMA3_RE, "\"ignore_merges\":true,", "[\"h e\"]");
    /* a template whose trailing special (<|end|>) is not the configured eos (<|begin|>): gguf-py makes
     * the old eos the EOT token and the template's token the eos */
    char tj[8192];
    FILE *f;
    char path[300];
    snprintf(path, sizeof path, "%s/tokenizer.json", g_dir);
    f = fopen(path, "rb");
    CU_ASSERT_FATAL(f != NULL);
    size_t n = fread(tj, 1, sizeof tj - 1, f);
    fclose(f);
    tj[n] = 0;
    cJSON *j = cJSON_Parse(tj);
    CU_ASSERT_FATAL(j != NULL);
    cJSON_ReplaceItemInObject(j, "post_processor", cJSON_Parse(
        "{\"type\":\"TemplateProcessing\",\"single\":[{\"Sequence\":{\"id\":\"A\"}},"
        "{\"SpecialToken\":{\"id\":\"<|end|>\"}}],\"pair\":[]}"));
    char *s = cJSON_PrintUnformatted(j);
    PUT("tokenizer.json", s);
    free(s);
    cJSON_Delete(j);
    PUT("tokenizer_config.json",
        "{\"eos_token\":\"<|begin|>\",\"chat_template\":[{\"name\":\"default\",\"template\":\"D\"},"
        "{\"name\":\"tool use\",\"template\":\"T\"},{\"name\":\"rag\",\"template\":null}]}");
    PUT("config.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":32016}");
    sn_err err = {0};
    sn_gguf *g = convert(NULL, NULL, &err, NULL);
    if (!g) fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.eos_token_id"), 7);
    CU_ASSERT_EQUAL(kv_bool(g, "tokenizer.ggml.add_eos_token"), 1);
    /* eot would be 6 from the template, but vocab_size 32016 (CodeLlama) pins it to 32010 in place */
    CU_ASSERT_EQUAL(kv_u32(g, "tokenizer.ggml.eot_token_id"), 32010);
    CU_ASSERT(kv_str_is(g, "tokenizer.chat_template", "D"));
    CU_ASSERT(kv_str_is(g, "tokenizer.chat_template.tool_use", "T"));
    CU_ASSERT(sn_gguf_find_key(g, "tokenizer.chat_template.rag") < 0);
    int64_t ci = sn_gguf_find_key(g, "tokenizer.chat_templates");
    CU_ASSERT_FATAL(ci >= 0);
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, ci), 1);
    CU_ASSERT(str_is(sn_gguf_arr_str(g, ci, 0), "tool_use"));
    /* named template keys come before the default one */
    CU_ASSERT(sn_gguf_find_key(g, "tokenizer.chat_template.tool_use") < sn_gguf_find_key(g, "tokenizer.chat_template"));
    sn_gguf_close(g);
}

/* Odd but valid JSON in every field we read: an error or a result, never a crash (ASan job). */
static void test_odd_json_fields(void) {
    static const char *const tj[] = {
        "{\"model\":null}",
        "[]",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":[],\"merges\":[]}}",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[\"a b\"]}}",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":1.5},\"merges\":[\"a b\"]}}",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":\"x\"},\"merges\":[\"a b\"]}}",
        "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":1e20},\"merges\":[\"a b\"]}}",
        "{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0.0]]}}",
        "{\"added_tokens\":\"x\",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"added_tokens\":[{\"id\":\"x\"}],\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"added_tokens\":[{\"content\":\"b\"},1],\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[1,2]}}",
        "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[[\"a\"],[\"a\",\"b\",\"c\"]]}}",
        "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"nospace\",\"\"]}}",
        "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":\"x\"},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Sequence\",\"pretokenizers\":["
        "{\"type\":\"Digits\"},{\"type\":\"Digits\"},{\"type\":\"Digits\"},{\"type\":\"Digits\"},{\"type\":\"Digits\"},"
        "{\"type\":\"Digits\"},{\"type\":\"Digits\"},{\"type\":\"Digits\"},{\"type\":\"Digits\"},{}]}]},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},\"post_processor\":{\"type\":\"TemplateProcessing\","
        "\"single\":\"x\",\"pair\":{}},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},\"post_processor\":{\"type\":\"Sequence\","
        "\"processors\":[1,{\"type\":\"TemplateProcessing\",\"single\":[1,{\"SpecialToken\":{\"id\":5}}],\"pair\":[1,2,3]},"
        "{\"type\":\"RobertaProcessing\",\"cls\":5,\"sep\":[]}]},"
        "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":5},"
        "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
        "{\"decoder\":null,\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0},\"merges\":[[\"a\",5]]}}",
        "{\"decoder\":{\"type\":\"Sequence\"},\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":3},\"merges\":[\"a a\"]}}",
        "{\"decoder\":{\"type\":\"Sequence\"},\"added_tokens\":[{\"id\":2147483647,\"content\":\"x\"}],"
        "\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0},\"merges\":[\"a a\"]}}",
    };
    static const char *const tc[] = {
        "[]", "{\"bos_token\":5,\"eos_token\":{\"content\":7},\"chat_template\":5,\"add_bos_token\":\"yes\"}",
        "{\"chat_template\":[1,{\"name\":5},{\"name\":\"x\",\"template\":5}],\"additional_special_tokens\":\"x\"}",
        "{\"added_tokens_decoder\":{\"x\":{}}}", "{\"bos_token\":\"a\",\"cls_token\":{},\"sep_token\":null}",
    };
    static const char *const cf[] = {
        "{\"architectures\":\"x\",\"vocab_size\":-5}", "{\"vocab_size\":1e30}", "[1]",
        "{\"bos_token_id\":-3}", "{\"bos_token_id\":\"1\",\"eos_token_id\":[1],\"text_config\":5}",
    };
    int n_ok = 0, n_err = 0;
    for (size_t i = 0; i < sizeof tj / sizeof tj[0]; i++)
        for (size_t j = 0; j < sizeof tc / sizeof tc[0]; j++) {
            fresh_dir();
            PUT("tokenizer.json", tj[i]);
            PUT("tokenizer_config.json", tc[j]);
            PUT("config.json", cf[(i + j) % (sizeof cf / sizeof cf[0])]);
            sn_err err = {0};
            sn_status st;
            sn_gguf *g = convert(NULL, &st, &err, NULL);
            if (g) {
                n_ok++;
                sn_gguf_close(g);
            } else {
                CU_ASSERT(st < 0 && err.msg[0] != 0);
                n_err++;
            }
        }
    CU_ASSERT(n_err > 0);
    fprintf(stderr, "(odd json: %d converted, %d refused) ", n_ok, n_err);
}

static void test_missing_and_broken_files(void) {
    fresh_dir();
    PUT("config.json", "{}");
    sn_err err = {0};
    sn_status st;
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "tokenizer.model") && strstr(err.msg, "tokenizer.json"));
    PUT("tokenizer.json", "{\"model\": {\"type\": \"BPE\", ");
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "tokenizer.json") && strstr(err.msg, "byte"));
    /* a token id beyond config.json's vocab_size */
    put_bpe(LLAMA3_RE, "\"ignore_merges\":true,", "[\"h e\"]");
    PUT("config.json", "{\"vocab_size\":8}");
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "vocab_size") != NULL);
    /* no merges at all */
    put_bpe(LLAMA3_RE, "\"ignore_merges\":true,", "[]");
    PUT("config.json", "{}");
    CU_ASSERT(convert(NULL, &st, &err, NULL) == NULL);
    CU_ASSERT(strstr(err.msg, "merges") != NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) { /* best effort */ }
    g_dir[0] = 0;
}

/* The RWKV vocabulary file and tokenizer_config.json are read under the budgets of budget.h: a
 * 300 MB file (sparse, all zero bytes) was read whole and then accepted as an empty vocabulary. */
static void test_rwkv_vocab_budget(void) {
    fresh_dir();
    char path[300];
    snprintf(path, sizeof path, "%s/rwkv_vocab_v20230424.txt", g_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(ftruncate(fd, (off_t)300 << 20) == 0);
    close(fd);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_vocab_rwkv_write(g_dir, NULL, NULL, 0, w, NULL, &err), SN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "rwkv_vocab_v20230424.txt") && strstr(err.msg, "larger than the 256 MB budget (SN_BUDGET_VOCAB_FILE"));
    PUT("rwkv_vocab_v20230424.txt", "1 'a' 1\n2 b'\\xff' 1\n");
    snprintf(path, sizeof path, "%s/tokenizer_config.json", g_dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(ftruncate(fd, (off_t)100 << 20) == 0);
    close(fd);
    CU_ASSERT_EQUAL(sn_vocab_rwkv_write(g_dir, NULL, NULL, 0, w, NULL, &err), SN_EFORMAT);
    CU_ASSERT(strstr(err.msg, "tokenizer_config.json") && strstr(err.msg, "larger than the 64 MB budget (SN_BUDGET_TEXT_FILE"));
    sn_gguf_writer_free(w);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) { /* best effort */ }
    g_dir[0] = 0;
}

static const sn_test_case cases[] = {
    {"RWKV vocabulary and tokenizer_config.json budgets", test_rwkv_vocab_budget},
    {"gpt2: llama-bpe tokens, types, padding, merges, ids, order", test_gpt2_llama3},
    {"gpt2: qwen2 pair merges, add_space_prefix by architecture", test_gpt2_qwen_pairs_and_space_prefix},
    {"gpt2: llama3 regex without ignore_merges -> smaug-bpe", test_gpt2_llama3_without_ignore_merges_is_smaug},
    {"gpt2: added token shadowing a base token", test_gpt2_added_shadows_base},
    {"gpt2: unknown pre-tokenizer error, --pre override", test_unknown_pre_and_override},
    {"pre-tokenizer fingerprints", test_fingerprints},
    {"byte_fallback BPE: merge-rank scores and types", test_llama_hf_rank_scores},
    {"SentencePiece tokenizer.model", test_spm},
    {"SentencePiece malformed protobuf", test_spm_malformed},
    {"SentencePiece parser on 3000 corrupted inputs", test_spm_parser_mutations},
    {"TemplateProcessing eot/eos swap, named chat templates, CodeLlama eot", test_eot_from_template_and_named_templates},
    {"odd JSON in every field", test_odd_json_fields},
    {"missing and broken files", test_missing_and_broken_files},
};

SN_TEST_MAIN("vocab", cases)
