/* test_tokenizer.c - the tokenizer's rules on tiny hand-made vocabularies.
 *
 * Each test writes a vocab-only GGUF with the GGUF writer, loads it and checks ids that follow from
 * llama.cpp's algorithm by hand: SPM merge order (score, then leftmost), byte fallback, BPE rank order
 * and leftmost ties, pre-tokenizer boundaries per tokenizer.ggml.pre, special-token cutting (parse
 * flag, USER_DEFINED always, longest first), detokenizer space rules, EOG detection, and the load
 * errors for malformed vocabularies. Whole-corpus parity with llama.cpp is the integration test. */
#include "gguf.h"
#include "sn_test.h"
#include "tokenizer.h"

#include <string.h>
#include <unistd.h>

typedef struct {
    const char *model, *pre;
    const char **toks;
    size_t n;
    const float *scores;
    size_t n_scores;      /* 0: n */
    const int32_t *types;
    const char **merges;
    size_t nm;
    int no_merges;
    int add_bos;          /* -1: absent */
    const char *bad_key;  /* written as i32 to provoke a type error */
} vspec;

static char g_path[128];

static sn_status load(const vspec *v, sn_tokenizer **t, sn_err *e) {
    snprintf(g_path, sizeof g_path, "test_tokenizer_%d.gguf", (int)getpid());
    sn_gguf_writer *w = sn_gguf_writer_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    sn_gguf_writer_set_str(w, "general.architecture", "llama");
    if (v->model) sn_gguf_writer_set_str(w, "tokenizer.ggml.model", v->model);
    if (v->pre) sn_gguf_writer_set_str(w, "tokenizer.ggml.pre", v->pre);
    sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", v->toks, NULL, v->n);
    if (v->scores) sn_gguf_writer_set_arr(w, "tokenizer.ggml.scores", SN_GGUF_F32, v->scores, v->n_scores ? v->n_scores : v->n);
    if (v->types) sn_gguf_writer_set_arr(w, "tokenizer.ggml.token_type", SN_GGUF_I32, v->types, v->n);
    if (v->merges && !v->no_merges) sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.merges", v->merges, NULL, v->nm);
    if (v->add_bos >= 0) sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", v->add_bos);
    if (v->bad_key) sn_gguf_writer_set_i32(w, v->bad_key, 1);
    sn_err we = {0};
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, g_path, &we), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_finish(w, &we), SN_OK);
    sn_gguf_writer_free(w);
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(g_path, SN_GGUF_NO_DATA, &g, &we), SN_OK);
    sn_status st = sn_tok_load(g, t, e);
    sn_gguf_close(g); /* the tokenizer keeps its own copies */
    unlink(g_path);
    return st;
}

static int enc(sn_tokenizer *t, const char *s, int add, int parse, int32_t *ids) {
    sn_err e = {0};
    int64_t n = sn_tok_encode(t, s, strlen(s), add, parse, ids, 64, &e);
    if (n < 0) fprintf(stderr, "encode failed: %s\n", e.msg);
    CU_ASSERT_FATAL(n >= 0 && n <= 64);
    return (int)n;
}

#define EXPECT_IDS(t, s, add, parse, ...)                                                  \
    do {                                                                                   \
        int32_t got_[64], want_[] = {__VA_ARGS__};                                         \
        int n_ = enc(t, s, add, parse, got_);                                              \
        CU_ASSERT_EQUAL(n_, (int)(sizeof want_ / sizeof want_[0]));                        \
        if (n_ == (int)(sizeof want_ / sizeof want_[0]))                                   \
            CU_ASSERT_EQUAL(memcmp(got_, want_, sizeof want_), 0);                         \
    } while (0)

static char *dec(sn_tokenizer *t, const int32_t *ids, size_t n, int special) {
    static char buf[256];
    int64_t k = sn_tok_decode(t, ids, n, special, buf, sizeof buf - 1);
    CU_ASSERT_FATAL(k >= 0 && k < (int64_t)sizeof buf);
    buf[k] = 0;
    return buf;
}

/* ---- SPM ---------------------------------------------------------------------------------------- */
enum { S_UNK, S_BOS, S_EOS, S_SP, S_A, S_B, S_C, S_AB, S_BC, S_C3, S_A9, S_N };
static const char *spm_toks[S_N] = {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a", "b", "c", "ab", "bc", "<0xC3>", "<0xA9>"};
static const int32_t spm_types[S_N] = {SN_TOKEN_UNKNOWN, SN_TOKEN_CONTROL, SN_TOKEN_CONTROL, 1, 1, 1, 1, 1, 1,
                                       SN_TOKEN_BYTE, SN_TOKEN_BYTE};

static sn_tokenizer *spm(float ab, float bc) {
    float sc[S_N] = {0, 0, 0, -1, -2, -2, -2, ab, bc, 0, 0};
    vspec v = {.model = "llama", .toks = spm_toks, .n = S_N, .scores = sc, .types = spm_types, .add_bos = -1};
    sn_tokenizer *t = NULL;
    sn_err e = {0};
    CU_ASSERT_EQUAL_FATAL(load(&v, &t, &e), SN_OK);
    return t;
}

static void test_spm_merge_order(void) {
    sn_tokenizer *t = spm(-1.5f, -1.5f); /* equal scores: the leftmost pair merges first */
    EXPECT_IDS(t, "abc", 0, 1, S_SP, S_AB, S_C);
    sn_tok_free(t);
    t = spm(-1.5f, -1.0f);               /* higher score wins wherever it is */
    EXPECT_IDS(t, "abc", 0, 1, S_SP, S_A, S_BC);
    sn_tok_free(t);
}

static void test_spm_byte_fallback_and_specials(void) {
    sn_tokenizer *t = spm(-1.5f, -1.5f);
    EXPECT_IDS(t, "\xc3\xa9", 0, 1, S_SP, S_C3, S_A9);       /* é is not a token: its bytes are */
    EXPECT_IDS(t, "a", 1, 1, S_BOS, S_SP, S_A);              /* add_bos defaults to true for SPM */
    EXPECT_IDS(t, "a</s>b", 0, 1, S_SP, S_A, S_EOS, S_SP, S_B); /* text after a special gets a ▁ */
    EXPECT_IDS(t, "a b", 0, 1, S_SP, S_A, S_SP, S_B);
    CU_ASSERT_EQUAL(sn_tok_specials(t).bos, S_BOS);
    CU_ASSERT_EQUAL(sn_tok_specials(t).eos, S_EOS);
    CU_ASSERT(sn_tok_is_eog(t, S_EOS));
    CU_ASSERT(!sn_tok_is_eog(t, S_A));
    sn_tok_free(t);
}

static void test_spm_decode(void) {
    sn_tokenizer *t = spm(-1.5f, -1.5f);
    int32_t ids[] = {S_SP, S_AB, S_C, S_SP, S_C3, S_A9};
    CU_ASSERT_STRING_EQUAL(dec(t, ids, 6, 0), "abc \xc3\xa9"); /* first leading space removed */
    int32_t withbos[] = {S_BOS, S_SP, S_AB};
    CU_ASSERT_STRING_EQUAL(dec(t, withbos, 3, 0), " ab");     /* the BOS used up the removal */
    CU_ASSERT_STRING_EQUAL(dec(t, withbos, 3, 1), "<s> ab");
    char p[16];
    CU_ASSERT_EQUAL(sn_tok_piece(t, S_C3, 0, p, sizeof p), 1);
    CU_ASSERT_EQUAL((unsigned char)p[0], 0xC3);
    CU_ASSERT_EQUAL(sn_tok_piece(t, S_EOS, 0, p, sizeof p), 0);
    CU_ASSERT_EQUAL(sn_tok_piece(t, S_EOS, 1, p, sizeof p), 4);
    CU_ASSERT_EQUAL(sn_tok_piece(t, S_N, 1, p, sizeof p), SN_EINVAL);
    sn_tok_free(t);
}

/* ---- byte-level BPE ----------------------------------------------------------------------------- */
enum { B_AB = 256, B_BC, B_AA, B_34, B_X, B_XY, B_ZZ, B_EOT, B_N };
static char g_bytes[256][3];
static const char *bpe_toks[B_N];
static int32_t bpe_types[B_N];
static const char *bpe_merges[] = {"b c", "a b", "a a", "3 4"}; /* ranks 0..3 */

static void init_bpe_vocab(void) {
    int n = 0;
    for (int b = 0; b < 256; b++) { /* GPT-2 bytes_to_unicode */
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        unsigned cp = printable ? (unsigned)b : 256u + (unsigned)n++;
        if (cp < 0x80) { g_bytes[b][0] = (char)cp; g_bytes[b][1] = 0; }
        else { g_bytes[b][0] = (char)(0xC0 | (cp >> 6)); g_bytes[b][1] = (char)(0x80 | (cp & 0x3F)); g_bytes[b][2] = 0; }
        bpe_toks[b] = g_bytes[b];
        bpe_types[b] = SN_TOKEN_NORMAL;
    }
    const char *extra[] = {"ab", "bc", "aa", "34", "<|x|>", "<|x|>y", "zz", "<|endoftext|>"};
    const int32_t et[] = {1, 1, 1, 1, SN_TOKEN_CONTROL, SN_TOKEN_USER_DEFINED, SN_TOKEN_USER_DEFINED, SN_TOKEN_NORMAL};
    for (int i = 0; i < B_N - 256; i++) { bpe_toks[256 + i] = extra[i]; bpe_types[256 + i] = et[i]; }
}

static sn_tokenizer *bpe(const char *pre) {
    init_bpe_vocab();
    vspec v = {.model = "gpt2", .pre = pre, .toks = bpe_toks, .n = B_N, .types = bpe_types,
               .merges = bpe_merges, .nm = 4, .add_bos = -1};
    sn_tokenizer *t = NULL;
    sn_err e = {0};
    sn_status st = load(&v, &t, &e);
    if (st) fprintf(stderr, "load: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    return t;
}

static void test_bpe_merges(void) {
    sn_tokenizer *t = bpe("gpt-2");
    EXPECT_IDS(t, "abc", 0, 1, 'a', B_BC);   /* rank 0 ("b c") beats rank 1 ("a b") */
    EXPECT_IDS(t, "aaa", 0, 1, B_AA, 'a');   /* same rank twice: leftmost first */
    EXPECT_IDS(t, "ab", 0, 1, B_AB);
    EXPECT_IDS(t, " a", 0, 1, ' ', 'a'); /* byte tokens are indexed by byte value here */
    sn_tok_free(t);
}

static void test_bpe_pretokenizer_boundaries(void) {
    sn_tokenizer *t = bpe("gpt-2");          /* \p{N}+ keeps 12345 whole: "3 4" merges */
    EXPECT_IDS(t, "12345", 0, 1, '1', '2', B_34, '5');
    sn_tok_free(t);
    t = bpe("llama-bpe");                    /* \p{N}{1,3}: 123|45, no merge across */
    EXPECT_IDS(t, "12345", 0, 1, '1', '2', '3', '4', '5');
    CU_ASSERT(sn_tok_specials(t).add_bos);            /* the llama3 family adds BOS by default */
    sn_tok_free(t);
    t = bpe("qwen2");                        /* single digits */
    EXPECT_IDS(t, "3434", 0, 1, '3', '4', '3', '4');
    sn_tok_free(t);
    t = bpe("default");                      /* [0-9][0-9][0-9] after \p{N}+: 123|4 ... */
    EXPECT_IDS(t, "12345", 0, 1, '1', '2', '3', '4', '5');
    EXPECT_IDS(t, "1234", 0, 1, '1', '2', '3', '4');
    EXPECT_IDS(t, "34", 0, 1, B_34);
    sn_tok_free(t);
}

static void test_bpe_specials(void) {
    sn_tokenizer *t = bpe("gpt-2");
    EXPECT_IDS(t, "a<|x|>b", 0, 1, 'a', B_X, 'b');
    /* not parsed: text, pre-tokenized as " ?[^\s\p{L}\p{N}]+" runs */
    EXPECT_IDS(t, "a<|x|>b", 0, 0, 'a', '<', '|', 'x', '|', '>', 'b');
    EXPECT_IDS(t, "azzb", 0, 0, 'a', B_ZZ, 'b'); /* USER_DEFINED: always cut out */
    EXPECT_IDS(t, "<|x|>y", 0, 1, B_XY);         /* longest special text first */
    /* EOT found by its text, forced to CONTROL: parsed only when asked, and ends generation */
    EXPECT_IDS(t, "<|endoftext|>", 0, 1, B_EOT);
    CU_ASSERT_EQUAL(sn_tok_specials(t).eot, B_EOT);
    CU_ASSERT(sn_tok_is_eog(t, B_EOT));
    int32_t ids[64];
    CU_ASSERT(enc(t, "<|endoftext|>", 0, 0, ids) > 1);
    sn_tok_free(t);
}

static void test_bpe_decode(void) {
    sn_tokenizer *t = bpe("gpt-2");
    const char *s[] = {"Hello world", " x\n\ty", "caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd"};
    for (int i = 0; i < 3; i++) {
        int32_t ids[64];
        int n = enc(t, s[i], 0, 1, ids);
        CU_ASSERT_STRING_EQUAL(dec(t, ids, (size_t)n, 0), s[i]);
    }
    int32_t ids[64];
    int n = enc(t, "a ,b<|x|>", 0, 1, ids);
    CU_ASSERT_STRING_EQUAL(dec(t, ids, (size_t)n, 0), "a,b");        /* clean_spaces; control hidden */
    CU_ASSERT_STRING_EQUAL(dec(t, ids, (size_t)n, 1), "a,b<|x|>");
    sn_tok_free(t);
    t = bpe("qwen2");                                                 /* qwen2 keeps the spaces */
    n = enc(t, "a ,b", 0, 1, ids);
    CU_ASSERT_STRING_EQUAL(dec(t, ids, (size_t)n, 0), "a ,b");
    sn_tok_free(t);
}

/* SPM-style BPE (gemma4 / sarvam-moe): spaces become U+2581, symbols are raw UTF-8, the pieces are
 * runs of newlines and of everything else, and bytes fall back to <0xNN> tokens. */
static void test_spm_style_bpe(void) {
    const char *toks[] = {"<pad>", "\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "a", "<0x0A>", "\n\n", "<eos>"};
    const int32_t types[] = {SN_TOKEN_CONTROL, 1, 1, 1, 1, SN_TOKEN_BYTE, 1, SN_TOKEN_CONTROL};
    const char *merges[] = {"\xe2\x96\x81 a"};
    vspec v = {.model = "gpt2", .pre = "sarvam-moe", .toks = toks, .n = 8, .types = types, .merges = merges,
               .nm = 1, .add_bos = -1};
    sn_tokenizer *t = NULL;
    sn_err e = {0};
    CU_ASSERT_EQUAL_FATAL(load(&v, &t, &e), SN_OK);
    EXPECT_IDS(t, " ab\n", 0, 1, 4, 3, 5);
    EXPECT_IDS(t, "a\n\n", 0, 1, 2, 5, 5); /* only gemma4 keeps an all-newline token whole */
    int32_t ids[] = {4, 3, 5};
    CU_ASSERT_STRING_EQUAL(dec(t, ids, 3, 0), " ab\n");
    CU_ASSERT(sn_tok_is_eog(t, 7));
    sn_tok_free(t);
    v.pre = "gemma4";
    CU_ASSERT_EQUAL_FATAL(load(&v, &t, &e), SN_OK);
    EXPECT_IDS(t, "a\n\n", 0, 1, 2, 6);
    CU_ASSERT(sn_tok_specials(t).add_bos);           /* forced on for gemma4 */
    sn_tok_free(t);
}

/* ---- malformed vocabularies --------------------------------------------------------------------- */
static void expect_load_error(const vspec *v, sn_status code, const char *needle) {
    sn_tokenizer *t = NULL;
    sn_err e = {0};
    sn_status st = load(v, &t, &e);
    CU_ASSERT_EQUAL(st, code);
    CU_ASSERT_PTR_NULL(t);
    if (needle && !strstr(e.msg, needle)) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", e.msg, needle);
        CU_FAIL("error message");
    }
    sn_tok_free(t);
}

static void test_malformed(void) {
    const char *dup[] = {"a", "b", "a"};
    vspec v = {.model = "llama", .toks = dup, .n = 3, .add_bos = -1};
    expect_load_error(&v, SN_EFORMAT, "duplicates");
    const char *ok[] = {"a", "b", "c"};
    float sc[2] = {0, 0};
    v = (vspec){.model = "llama", .toks = ok, .n = 3, .scores = sc, .n_scores = 2, .add_bos = -1};
    expect_load_error(&v, SN_EFORMAT, "scores");
    v = (vspec){.model = NULL, .toks = ok, .n = 3, .add_bos = -1};
    expect_load_error(&v, SN_EFORMAT, "tokenizer.ggml.model");
    v = (vspec){.model = "bert", .toks = ok, .n = 3, .add_bos = -1};
    expect_load_error(&v, SN_EUNSUPPORTED, "bert");
    v = (vspec){.model = "llama", .toks = ok, .n = 3, .add_bos = -1, .bad_key = "tokenizer.ggml.bos_token_id"};
    expect_load_error(&v, SN_EFORMAT, "bos_token_id");
    init_bpe_vocab();
    v = (vspec){.model = "gpt2", .pre = "gpt-2", .toks = bpe_toks, .n = B_N, .merges = bpe_merges, .nm = 4,
                .no_merges = 1, .add_bos = -1};
    expect_load_error(&v, SN_EFORMAT, "merges");
    v.no_merges = 0;
    v.pre = "no-such-pre";
    expect_load_error(&v, SN_EFORMAT, "no-such-pre");
    v.pre = "kimi-k2";
    expect_load_error(&v, SN_EUNSUPPORTED, "kimi-k2");
    /* add_bos requested but the default BOS id (11) is a plain token: fine; absent ids are -1 */
    v.pre = "gpt-2";
    v.add_bos = 1;
    sn_tokenizer *t = NULL;
    sn_err e = {0};
    CU_ASSERT_EQUAL(load(&v, &t, &e), SN_OK);
    int32_t ids[4];
    CU_ASSERT_EQUAL(enc(t, "a", 1, 1, ids), 2);
    CU_ASSERT_EQUAL(ids[0], 11);
    sn_tok_free(t);
}

static const sn_test_case cases[] = {
    {"spm merge order (score, then leftmost)", test_spm_merge_order},
    {"spm byte fallback, BOS, space after specials", test_spm_byte_fallback_and_specials},
    {"spm detokenize and pieces", test_spm_decode},
    {"bpe merges by rank, leftmost ties", test_bpe_merges},
    {"bpe pre-tokenizer boundaries per pre type", test_bpe_pretokenizer_boundaries},
    {"bpe special-token cutting", test_bpe_specials},
    {"bpe detokenize round trips and space cleanup", test_bpe_decode},
    {"spm-style bpe (gemma4, sarvam-moe)", test_spm_style_bpe},
    {"malformed vocabularies are refused", test_malformed},
};
SN_TEST_MAIN("tokenizer", cases)
