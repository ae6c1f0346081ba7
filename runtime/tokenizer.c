/* tokenizer.c - llama.cpp-compatible SPM and byte-level BPE tokenizers over a GGUF's tokenizer.*.
 *
 * The goal is not "a correct tokenizer" but "the ids llama.cpp produces for the same GGUF", because
 * that is what Ollama and LM Studio feed the model. So this file reproduces llama.cpp's rules,
 * including its quirks: its loader defaults and attribute fix-ups, the order in which special tokens
 * are cut out of the text, its own code point classes (Unicode 15.1, unicode_data.c) instead of the
 * regex engine's, its hand-written splitters for the gpt2/llama3/qwen2 patterns, the "collapsed
 * text" trick it uses to run \p{..} patterns through a byte regex, its merge-queue tie-breaks and its
 * detokenizer's space cleanup. docs/TOKENIZER.md ("Runtime tokenizer") lists the rules and the known
 * places where llama.cpp itself differs from HF tokenizers. */
#include "tokenizer.h"
#include "unicode_data.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama_token_attr bits (tokenizer.h) */
#define A_UNKNOWN SN_TOKEN_ATTR_UNKNOWN
#define A_UNUSED SN_TOKEN_ATTR_UNUSED
#define A_NORMAL SN_TOKEN_ATTR_NORMAL
#define A_CONTROL SN_TOKEN_ATTR_CONTROL
#define A_USER_DEFINED SN_TOKEN_ATTR_USER_DEFINED
#define A_BYTE SN_TOKEN_ATTR_BYTE
#define A_LSTRIP SN_TOKEN_ATTR_LSTRIP
#define A_RSTRIP SN_TOKEN_ATTR_RSTRIP

enum { T_SPM = 1, T_BPE = 2 };
#define OOR 0xFFFFFFFFu /* "no code point here" in the splitters */
#define MAX_RX 6

/* ---------------------------------------------------------------------------------------------
 * small growable buffers */

typedef struct { int32_t *v; size_t n, cap; } ivec;
typedef struct { char *v; size_t n, cap; } bbuf;
typedef struct { uint32_t *v; size_t n, cap; } uvec;

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem) return false;
        nc *= 2;
    }
    void *q = realloc(*p, nc * elem);
    if (!q) return false;
    *p = q;
    *cap = nc;
    return true;
}
static bool ivec_push(ivec *a, int32_t x) {
    if (!grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v)) return false;
    a->v[a->n++] = x;
    return true;
}
static bool uvec_push(uvec *a, uint32_t x) {
    if (!grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v)) return false;
    a->v[a->n++] = x;
    return true;
}
static bool bbuf_add(bbuf *b, const void *p, size_t n) {
    if (n > SIZE_MAX - b->n - 1) return false;
    if (!grow((void **)&b->v, &b->cap, b->n + n + 1, 1)) return false;
    if (n) memcpy(b->v + b->n, p, n);
    b->n += n;
    b->v[b->n] = 0;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * hashing: token text -> id, merge pair -> rank (open addressing, linear probing) */

static uint64_t hash_bytes(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define HASH_SEED 0xcbf29ce484222325ull

typedef struct { uint32_t off, len; float score; uint32_t attr; } tok_info;
typedef struct { uint32_t loff, llen, roff, rlen; } merge_info; /* into the merge arena */

typedef struct {
    const char *name;  /* tokenizer.ggml.pre value */
    int rx;            /* index into RX_SETS */
    unsigned flags;
} pre_row;
enum { P_IGNORE_MERGES = 1, P_ADD_BOS = 2, P_KEEP_SPACES = 4, P_NO_BOS_ID = 8,
       P_SPM_STYLE = 16,   /* spaces -> U+2581 before BPE, raw UTF-8 symbols, <0xNN> byte tokens */
       P_GEMMA4 = 32 };    /* add_bos forced on; an all-newline piece that is a token stays whole */

typedef enum { RX_CUSTOM_GPT2, RX_CUSTOM_LLAMA3, RX_CUSTOM_QWEN2, RX_CUSTOM_QWEN35,
               RX_CUSTOM_NEWLINES, RX_CUSTOM_DIGITS3, RX_COLLAPSED, RX_UTF } rx_kind;

struct sn_tokenizer {
    int type;
    int32_t n_vocab;
    char *arena;           /* all token texts, NUL-separated */
    tok_info *tok;
    int32_t *tslot;        /* hash slots -> token id, -1 empty */
    uint64_t tmask;
    /* BPE merges */
    char *marena;
    merge_info *merge;
    int32_t n_merge;
    int32_t *mslot;        /* hash slots -> merge index (= rank), -1 empty */
    uint64_t mmask;
    /* special ids (-1 = none) */
    int32_t bos, eos, eot, eom, unk, sep, pad, mask;
    int32_t fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep;
    bool add_bos, add_eos, add_space_prefix, ignore_merges, clean_spaces;
    bool spm_style_bpe, gemma4;
    uint8_t *eog;          /* per token: ends generation */
    int32_t *special;      /* CONTROL/USER_DEFINED/UNKNOWN ids, longest text first */
    size_t n_special;
    int32_t spm_byte[256]; /* SPM byte fallback token per byte, -1 if the vocab has none */
    uint64_t *pairs;       /* SPM: hashes of adjacent character pairs inside any token (0 = empty) */
    uint64_t pmask;
    /* BPE pre-tokenizer */
    int n_rx;
    rx_kind rx_kind[MAX_RX];
    pcre2_code *rx_code[MAX_RX];
    bool rx_collapse_needed;
    uint32_t rx_surrogate[MAX_RX]; /* UTF patterns: stand-in for surrogate code points (see rx_compile) */
    uint16_t ascii_flags[128];
    char byte_enc[256][3]; /* GPT-2 bytes_to_unicode as UTF-8 (NUL-terminated, 1-2 bytes) */
    int16_t byte_dec[0x144]; /* its inverse: code point -> byte, -1 if none */
};

static uint64_t slot_count(uint64_t n) {
    uint64_t c = 16;
    while (c < n * 2 + 1) c <<= 1;
    return c;
}

static int32_t tok_find(const sn_tokenizer *t, const char *s, size_t n) {
    uint64_t h = hash_bytes(HASH_SEED, s, n) & t->tmask;
    for (;;) {
        int32_t id = t->tslot[h];
        if (id < 0) return -1;
        const tok_info *ti = &t->tok[id];
        if (ti->len == n && memcmp(t->arena + ti->off, s, n) == 0) return id;
        h = (h + 1) & t->tmask;
    }
}

static uint64_t merge_hash(const char *l, size_t ln, const char *r, size_t rn) {
    uint64_t h = hash_bytes(HASH_SEED, l, ln);
    h ^= 0xFF; /* separator that cannot occur inside UTF-8 text */
    h *= 0x100000001b3ull;
    return hash_bytes(h, r, rn);
}

static int32_t merge_find(const sn_tokenizer *t, const char *l, size_t ln, const char *r, size_t rn) {
    if (!t->mslot) return -1;
    uint64_t h = merge_hash(l, ln, r, rn) & t->mmask;
    for (;;) {
        int32_t m = t->mslot[h];
        if (m < 0) return -1;
        const merge_info *mi = &t->merge[m];
        if (mi->llen == ln && mi->rlen == rn && memcmp(t->marena + mi->loff, l, ln) == 0 &&
            memcmp(t->marena + mi->roff, r, rn) == 0)
            return m;
        h = (h + 1) & t->mmask;
    }
}

/* ---------------------------------------------------------------------------------------------
 * UTF-8 exactly as llama.cpp reads it: no overlong/surrogate checks; a bad lead byte or a missing
 * continuation byte becomes U+FFFD and consumes one byte. */

static size_t utf8_len_lead(unsigned char c) {
    static const uint8_t lut[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lut[c >> 4];
}

static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *off) {
    size_t o = *off;
    unsigned char c = s[o];
#define CONT(k) ((s[o + (k)] & 0xC0) == 0x80)
    if (!(c & 0x80)) { *off = o + 1; return c; }
    if (!(c & 0x40)) goto bad;
    if (!(c & 0x20)) {
        if (o + 1 >= n || !CONT(1)) goto bad;
        *off = o + 2;
        return ((uint32_t)(c & 0x1F) << 6) | (s[o + 1] & 0x3F);
    }
    if (!(c & 0x10)) {
        if (o + 2 >= n || !CONT(1) || !CONT(2)) goto bad;
        *off = o + 3;
        return ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[o + 1] & 0x3F) << 6) | (s[o + 2] & 0x3F);
    }
    if (!(c & 0x08)) {
        if (o + 3 >= n || !CONT(1) || !CONT(2) || !CONT(3)) goto bad;
        *off = o + 4;
        return ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[o + 1] & 0x3F) << 12) |
               ((uint32_t)(s[o + 2] & 0x3F) << 6) | (s[o + 3] & 0x3F);
    }
#undef CONT
bad:
    *off = o + 1;
    return 0xFFFD;
}

/* Returns the byte count (1..4), or 0 for a code point past U+10FFFF. */
static int utf8_put(uint32_t cp, char *o) {
    if (cp <= 0x7F) { o[0] = (char)cp; return 1; }
    if (cp <= 0x7FF) {
        o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp <= 0xFFFF) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}

static uint16_t ucd_lookup(uint32_t cp) {
    if (cp >= 0x110000) return SN_UCD_UNDEF;
    size_t lo = 0, hi = sn_ucd_n_ranges; /* last range with first <= cp */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (sn_ucd_ranges[mid].first <= cp) lo = mid; else hi = mid;
    }
    return sn_ucd_ranges[lo].flags;
}

static inline uint16_t cp_flags(const sn_tokenizer *t, uint32_t cp) {
    return cp < 128 ? t->ascii_flags[cp] : ucd_lookup(cp);
}

/* ---------------------------------------------------------------------------------------------
 * Pre-tokenizer regex lists, as llama.cpp applies them per tokenizer.ggml.pre. Each list is applied
 * in order; every pattern splits the pieces left by the previous one (matches and the gaps between
 * them both become pieces). */

#define RXS_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RXS_LLAMA3_ORIG "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_CONTRACT "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RXS_LLAMA3 RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_QWEN2 RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_QWEN35 RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_NEWLINES "[^\\n]+|[\\n]+"
#define RXS_GPT4O_CORE "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" RXS_CONTRACT "?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" RXS_CONTRACT "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* deepseek-llm's letter class, spelled out by code point ranges (UTF-8 escaped) */
static const char RXS_DEEPSEEK_LLM_LETTERS[] =
    "\\s?[A-Za-z\xc2\xb5\xc3\x80-\xc3\x96\xc3\x98-\xc3\xb6\xc3\xb8-\xc6\xba\xc6\xbc-\xc6\xbf\xc7"
    "\x84-\xca\x93\xca\x95-\xca\xaf\xcd\xb0-\xcd\xb3\xcd\xb6\xcd\xb7\xcd\xbb-\xcd\xbd\xcd\xbf\xce"
    "\x86\xce\x88-\xce\x8a\xce\x8c\xce\x8e-\xce\xa1\xce\xa3-\xcf\xb5\xcf\xb7-\xd2\x81\xd2\x8a-"
    "\xd4\xaf\xd4\xb1-\xd5\x96\xe1\x82\xa0-\xe1\x83\x85\xe1\x8e\xa0-\xe1\x8f\xb5\xe1\x8f\xb8-\xe1"
    "\x8f\xbd\xe1\xb2\x90-\xe1\xb2\xba\xe1\xb2\xbd-\xe1\xb2\xbf\xe1\xb4\x80-\xe1\xb4\xab\xe1\xb5"
    "\xab-\xe1\xb5\xb7\xe1\xb5\xb9-\xe1\xb6\x9a\xe1\xb8\x80-\xe1\xbc\x95\xe1\xbc\x98-\xe1\xbc\x9d"
    "\xe1\xbc\xa0-\xe1\xbd\x85\xe1\xbd\x88-\xe1\xbd\x8d\xe1\xbd\x90-\xe1\xbd\x97\xe1\xbd\x99\xe1"
    "\xbd\x9b\xe1\xbd\x9d\xe1\xbd\x9f-\xe1\xbd\xbd\xe1\xbe\x80-\xe1\xbe\xb4\xe1\xbe\xb6-\xe1\xbe"
    "\xbc\xe1\xbe\xbe\xe1\xbf\x82-\xe1\xbf\x84\xe1\xbf\x86-\xe1\xbf\x8c\xe1\xbf\x90-\xe1\xbf\x93"
    "\xe1\xbf\x96-\xe1\xbf\x9b\xe1\xbf\xa0-\xe1\xbf\xac\xe1\xbf\xb2-\xe1\xbf\xb4\xe1\xbf\xb6-\xe1"
    "\xbf\xbc\xe2\x84\x82\xe2\x84\x87\xe2\x84\x8a-\xe2\x84\x93\xe2\x84\x95\xe2\x84\x99-\xe2\x84"
    "\x9d\xe2\x84\xa4\xe2\x84\xa6\xe2\x84\xa8\xe2\x84\xaa-\xe2\x84\xad\xe2\x84\xaf-\xe2\x84\xb4"
    "\xe2\x84\xb9\xe2\x84\xbc-\xe2\x84\xbf\xe2\x85\x85-\xe2\x85\x89\xe2\x85\x8e\xe2\x86\x83\xe2"
    "\x86\x84\xe2\xb0\x80-\xe2\xb1\xbb\xe2\xb1\xbe-\xe2\xb3\xa4\xe2\xb3\xab-\xe2\xb3\xae\xe2\xb3"
    "\xb2\xe2\xb3\xb3\xea\x99\x80-\xea\x99\xad\xea\x9a\x80-\xea\x9a\x9b\xea\x9c\xa2-\xea\x9d\xaf"
    "\xea\x9d\xb1-\xea\x9e\x87\xea\x9e\x8b-\xea\x9e\x8e\xea\xad\xb0-\xea\xae\xbf\xef\xac\x80-\xef"
    "\xac\x86\xef\xac\x93-\xef\xac\x97\xef\xbc\xa1-\xef\xbc\xba\xef\xbd\x81-\xef\xbd\x9a\xf0\x90"
    "\x90\x80-\xf0\x90\x91\x8f\xf0\x90\x92\xb0-\xf0\x90\x93\x93\xf0\x90\x93\x98-\xf0\x90\x93\xbb"
    "\xf0\x90\xb2\x80-\xf0\x90\xb2\xb2\xf0\x90\xb3\x80-\xf0\x90\xb3\xb2\xf0\x91\xa2\xa0-\xf0\x91"
    "\xa3\x9f\xf0\x9e\xa4\x80-\xf0\x9e\xa5\x83]+";

enum {
    RXSET_DEFAULT, RXSET_GPT2, RXSET_LLAMA3, RXSET_QWEN2, RXSET_QWEN35, RXSET_STARCODER,
    RXSET_FALCON, RXSET_TEKKEN, RXSET_DEEPSEEK_CODER, RXSET_DEEPSEEK3, RXSET_PORO, RXSET_VIKING,
    RXSET_GPT4O, RXSET_SEED_CODER, RXSET_BAILINGMOE, RXSET_UFAKZEKA, RXSET_MINICPM5,
    RXSET_EXAONE_MOE, RXSET_JAIS2, RXSET_LAGUNA, RXSET_CHAMELEON, RXSET_DEEPSEEK_LLM, RXSET_SPARK2_5, RXSET_YOUTU,
    RXSET_GRANITE_EMB, RXSET_SUPERBPE, RXSET_TINY_AYA, RXSET_AFMOE, RXSET_NEWLINES, RXSET_COUNT
};

static const char *const RX_SETS[RXSET_COUNT][MAX_RX + 1] = {
    [RXSET_DEFAULT] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", RXS_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL},
    [RXSET_GPT2] = {RXS_GPT2, NULL},
    [RXSET_LLAMA3] = {RXS_LLAMA3, NULL},
    [RXSET_QWEN2] = {RXS_QWEN2, NULL},
    [RXSET_QWEN35] = {RXS_QWEN35, NULL},
    [RXSET_STARCODER] = {"\\p{N}", RXS_GPT2, NULL},
    [RXSET_FALCON] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RXS_GPT2, "[0-9][0-9][0-9]", NULL},
    [RXSET_TEKKEN] = {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|"
                      "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}|"
                      " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_DEEPSEEK_CODER] = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
                              "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+",
                              "\\p{N}", NULL},
    [RXSET_DEEPSEEK_LLM] = {"[\r\n]", RXS_DEEPSEEK_LLM_LETTERS,
                            "\\s?[!-/:-~\xef\xbc\x81-\xef\xbc\x8f\xef\xbc\x9a-\xef\xbd\x9e\xe2\x80\x98-\xe2\x80\x9f\xe3\x80\x80-\xe3\x80\x82]+",
                            "\\s+$",
                            "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+",
                            "\\p{N}+", NULL},
    [RXSET_SPARK2_5] = {
        "\\p{N}{1,3}",
        "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
        "\\p{N}",
        NULL},
    [RXSET_YOUTU] = {
        "[\xea\xb0\x80-\xed\x9e\xa3\xe3\x84\xb1-\xe3\x86\x8e]+|[\xef\xbc\x81\xe2\x80\xa6\xe2\x80\x9c\xe2\x80\x9d\xe2\x80\x98\xe2\x80\x99\xe2\x80\x94\xef\xbc\x9a\xef\xbc\x9b\xef\xbc\x8c\xe3\x80\x81-\xe3\x80\xbf\xef\xb8\xb0-\xef\xb9\x8f]+|[\xe3\x84\x85-\xe3\x84\xaf]+|[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_GRANITE_EMB] = {
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_SUPERBPE] = {
        "\\p{N}+",
        "(?=(\\d{3})+(?!\\d))",
        NULL},
    [RXSET_TINY_AYA] = {
        "\\d{1,3}(?=(?:\\d{3})*\\b)",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_AFMOE] = {
        "\\p{AFMoE_digits}",
        "[\xe4\xb8\x80-\xe9\xbf\xbf\xe3\x90\x80-\xe4\xb6\xbf\xe8\xb1\x88-\xef\xab\xbf\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf\xef\xbd\xa5-\xef\xbe\x9f\xe2\xbc\x80-\xe2\xbf\x9f\xe0\xb9\x80-\xe0\xb9\xbf\xe0\xba\x80-\xe0\xbb\xbf\xe1\x9e\x80-\xe1\x9f\xbf\xe1\x80\x80-\xe1\x82\x9f\xea\xa9\xa0-\xea\xa9\xbf\xea\xa7\xa0-\xea\xa7\xbf\xea\xb0\x80-\xed\x9e\xaf\xe1\x84\x80-\xe1\x87\xbf]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_DEEPSEEK3] = {"\\p{N}{1,3}",
                         "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
                         "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
                         " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_PORO] = {" ?[^(\\s|.,!?\xe2\x80\xa6\xe3\x80\x82\xef\xbc\x8c\xe3\x80\x81\xe0\xa5\xa4\xdb\x94\xd8\x8c)]+", NULL},
    [RXSET_VIKING] = {" ?[^(\\s|.,!?\xe2\x80\xa6\xe3\x80\x82\xef\xbc\x8c\xe3\x80\x81\xe0\xa5\xa4\xdb\x94\xd8\x8c)]+", "\\p{N}", NULL},
    [RXSET_GPT4O] = {RXS_GPT4O_CORE, NULL},
    [RXSET_SEED_CODER] = {RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|"
                          "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_BAILINGMOE] = {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
                          " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_UFAKZEKA] = {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
                        "\\s+(?!\\S)|\\s+", NULL},
    [RXSET_MINICPM5] = {"\\p{N}{1,3}", RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_EXAONE_MOE] = {RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}|"
                          " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_JAIS2] = {RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                     "\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|"
                     "\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}", NULL},
    [RXSET_LAGUNA] = {RXS_NEWLINES, RXS_QWEN2, NULL},
    [RXSET_NEWLINES] = {RXS_NEWLINES, NULL},
    [RXSET_CHAMELEON] = {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
                         "\\p{N}", "[\\p{P}!-/:-@\\[-`{-~]", RXS_GPT2, NULL},
};

/* tokenizer.ggml.pre -> regex list and flags (llama.cpp's llama_vocab::impl::load). */
static const pre_row PRE_TABLE[] = {
    {"default", RXSET_DEFAULT, 0},
    {"minicpm5", RXSET_MINICPM5, P_IGNORE_MERGES},
    {"llama3", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"llama-v3", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"llama-bpe", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"falcon3", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"falcon-h1", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"pixtral", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"midm-2.0", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"lfm2", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"jina-v5-nano", RXSET_LLAMA3, P_IGNORE_MERGES | P_ADD_BOS},
    {"deepseek-llm", RXSET_DEEPSEEK_LLM, P_KEEP_SPACES},
    {"deepseek-coder", RXSET_DEEPSEEK_CODER, P_KEEP_SPACES},
    {"deepseek-v3", RXSET_DEEPSEEK3, P_KEEP_SPACES},
    {"spark2_5", RXSET_SPARK2_5, P_KEEP_SPACES},
    {"youtu", RXSET_YOUTU, P_KEEP_SPACES | P_IGNORE_MERGES},
    {"granite-embed-multi-97m", RXSET_GRANITE_EMB, P_KEEP_SPACES | P_IGNORE_MERGES},
    {"superbpe", RXSET_SUPERBPE, P_KEEP_SPACES},
    {"tiny_aya", RXSET_TINY_AYA, P_KEEP_SPACES},
    {"cohere2moe", RXSET_TINY_AYA, P_KEEP_SPACES},
    {"afmoe", RXSET_AFMOE, P_KEEP_SPACES},
    {"falcon", RXSET_FALCON, 0},
    {"mpt", RXSET_GPT2, 0},
    {"starcoder", RXSET_STARCODER, 0},
    {"gpt-2", RXSET_GPT2, 0},
    {"phi-2", RXSET_GPT2, 0},
    {"jina-es", RXSET_GPT2, 0},
    {"jina-de", RXSET_GPT2, 0},
    {"gigachat", RXSET_GPT2, 0},
    {"jina-v2-es", RXSET_GPT2, 0},
    {"jina-v2-de", RXSET_GPT2, 0},
    {"a.x-4.0", RXSET_GPT2, 0},
    {"mellum", RXSET_GPT2, 0},
    {"modern-bert", RXSET_GPT2, 0},
    {"jais-2", RXSET_JAIS2, 0},
    {"jina-v1-en", RXSET_GPT2, 0},
    {"jina-v2-code", RXSET_GPT2, 0},
    {"roberta-bpe", RXSET_GPT2, 0},
    {"refact", RXSET_STARCODER, 0},
    {"command-r", RXSET_STARCODER, P_KEEP_SPACES},
    {"qwen2", RXSET_QWEN2, P_KEEP_SPACES},
    {"deepseek-r1-qwen", RXSET_QWEN2, P_KEEP_SPACES},
    {"kormo", RXSET_QWEN2, P_KEEP_SPACES},
    {"f2llmv2", RXSET_QWEN2, P_KEEP_SPACES},
    {"qwen35", RXSET_QWEN35, P_KEEP_SPACES},
    {"stablelm2", RXSET_QWEN2, 0},
    {"olmo", RXSET_GPT2, 0},
    {"dbrx", RXSET_LLAMA3, 0},
    {"smaug-bpe", RXSET_LLAMA3, 0},
    {"poro-chat", RXSET_PORO, P_KEEP_SPACES},
    {"glm4", RXSET_LLAMA3, P_NO_BOS_ID},
    {"chatglm-bpe", RXSET_LLAMA3, P_NO_BOS_ID},
    {"viking", RXSET_VIKING, P_KEEP_SPACES},
    {"jais", RXSET_GPT2, 0},
    {"tekken", RXSET_TEKKEN, P_KEEP_SPACES | P_IGNORE_MERGES | P_ADD_BOS},
    {"smollm", RXSET_STARCODER, P_KEEP_SPACES},
    {"codeshell", RXSET_STARCODER, 0},
    {"bloom", RXSET_PORO, 0},
    {"gpt3-finnish", RXSET_PORO, 0},
    {"exaone", RXSET_STARCODER, 0},
    {"exaone4", RXSET_GPT2, 0},
    {"exaone-moe", RXSET_EXAONE_MOE, 0},
    {"chameleon", RXSET_CHAMELEON, P_ADD_BOS | P_KEEP_SPACES},
    {"minerva-7b", RXSET_STARCODER, 0},
    {"megrez", RXSET_QWEN2, 0},
    {"gpt-4o", RXSET_GPT4O, P_KEEP_SPACES},
    {"llama4", RXSET_GPT4O, P_KEEP_SPACES},
    {"kanana2", RXSET_GPT4O, P_KEEP_SPACES},
    {"talkie", RXSET_GPT4O, P_KEEP_SPACES},
    {"trillion", RXSET_GPT2, P_KEEP_SPACES},
    {"granite-docling", RXSET_GPT2, P_KEEP_SPACES},
    {"bailingmoe", RXSET_BAILINGMOE, P_KEEP_SPACES},
    {"bailingmoe2", RXSET_BAILINGMOE, P_KEEP_SPACES},
    {"llada-moe", RXSET_BAILINGMOE, P_KEEP_SPACES},
    {"seed-coder", RXSET_SEED_CODER, P_KEEP_SPACES},
    {"hunyuan", RXSET_QWEN2, P_KEEP_SPACES},
    {"hunyuan-dense", RXSET_DEEPSEEK3, P_KEEP_SPACES},
    {"hy_v4", RXSET_DEEPSEEK3, P_KEEP_SPACES},
    {"joyai-llm", RXSET_DEEPSEEK3, P_KEEP_SPACES},
    {"ufakzeka", RXSET_UFAKZEKA, P_KEEP_SPACES},
    {"grok-2", RXSET_QWEN2, P_KEEP_SPACES},
    {"laguna", RXSET_LAGUNA, P_KEEP_SPACES},
    {"minimax-m2", RXSET_GPT4O, P_KEEP_SPACES},
    {"solar-open", RXSET_QWEN2, P_KEEP_SPACES},
    {"mellum2", RXSET_STARCODER, 0},
    {"gemma4", RXSET_NEWLINES, P_SPM_STYLE | P_GEMMA4},
    {"granite-embed-multi-311m", RXSET_NEWLINES, P_SPM_STYLE | P_GEMMA4},
    {"sarvam-moe", RXSET_NEWLINES, P_SPM_STYLE | P_KEEP_SPACES},
};

/* Pre-tokenizers llama.cpp knows but sunny does not implement (custom splitters or whitespace
 * escaping we have not reproduced): refused at load instead of tokenizing differently. */
static const char *const PRE_UNSUPPORTED[] = {
    "whitespace", "kimi-k2",
};

/* The \p{..} classes llama.cpp rewrites for its byte-collapsed regex run: each class becomes one
 * stand-in byte for all non-ASCII members plus the ASCII members spelled out. */
typedef struct { const char *name; char byte; const char *ascii; } ucat_row;
static const ucat_row UCAT[] = {
    {"\\p{N}", (char)0xD1, "0-9"},
    {"\\p{L}", (char)0xD2, "A-Za-z"},
    {"\\p{P}", (char)0xD3, "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", (char)0xD4, ""},
    {"\\p{S}", (char)0xD5, "\\$\\+<->^`\\|\\~"},
    {"\\p{Lu}", (char)0xD2, "A-Za-z"},
    {"\\p{Ll}", (char)0xD2, "A-Za-z"},
    {"\\p{Lt}", (char)0xD2, "A-Za-z"},
    {"\\p{Lm}", (char)0xD2, "A-Za-z"},
    {"\\p{Lo}", (char)0xD2, "A-Za-z"},
};

static bool rx_has_ucat(const char *rx) {
    for (size_t i = 0; i < sizeof UCAT / sizeof UCAT[0]; i++)
        if (strstr(rx, UCAT[i].name)) return true;
    return false;
}

/* Rewrites each \p{X} to its collapsed class ([..] when outside a bracket expression). */
static bool rx_collapse(const char *rx, bbuf *out) {
    size_t n = strlen(rx);
    bool inside = false;
    for (size_t i = 0; i < n; i++) {
        if (rx[i] == '[' && (i == 0 || rx[i - 1] != '\\')) {
            if (!bbuf_add(out, "[", 1)) return false;
            inside = true;
            continue;
        }
        if (inside && rx[i] == ']' && rx[i - 1] != '\\') {
            if (!bbuf_add(out, "]", 1)) return false;
            inside = false;
            continue;
        }
        if (rx[i] == '\\' && i + 3 < n && rx[i + 1] == 'p' && rx[i + 2] == '{') {
            const char *close = strchr(rx + i + 3, '}');
            if (close && (size_t)(close - rx) <= i + 10) {
                size_t plen = (size_t)(close - rx) - i + 1;
                for (size_t k = 0; k < sizeof UCAT / sizeof UCAT[0]; k++) {
                    if (strlen(UCAT[k].name) != plen || memcmp(UCAT[k].name, rx + i, plen) != 0) continue;
                    if ((!inside && !bbuf_add(out, "[", 1)) || !bbuf_add(out, &UCAT[k].byte, 1) ||
                        !bbuf_add(out, UCAT[k].ascii, strlen(UCAT[k].ascii)) ||
                        (!inside && !bbuf_add(out, "]", 1)))
                        return false;
                    i = (size_t)(close - rx);
                    goto next;
                }
            }
        }
        if (!bbuf_add(out, rx + i, 1)) return false;
    next:;
    }
    return true;
}

/* llama.cpp matches these patterns with std::wregex over raw code points, where a surrogate (from
 * CESU-8-style input) is just a number, e.g. inside afmoe's range U+8C48-U+FAFF. PCRE2's UTF mode
 * cannot hold surrogates, so they are replaced by a code point that lies in exactly the same
 * literal ranges of this pattern as U+D800..U+DFFF do (the patterns never name a surrogate alone). */
static uint32_t surrogate_stand_in(const char *rx) {
    static const uint32_t cand[] = {0xFFFD, 0xE000, 0xF8FF, 0xFFFE, 0x10FFFD};
    size_t n = strlen(rx);
    for (size_t c = 0; c < sizeof cand / sizeof cand[0]; c++) {
        bool fits = true;
        size_t off = 0;
        uint32_t prev = OOR;
        while (off < n && fits) {
            if (rx[off] == '\\') { off += 2; prev = OOR; continue; }
            uint32_t cp = utf8_next((const unsigned char *)rx, n, &off);
            if (cp == '-' && prev != OOR && off < n && rx[off] != ']' && rx[off] != '\\') {
                uint32_t hi = utf8_next((const unsigned char *)rx, n, &off);
                bool has_sur = prev <= 0xDFFF && hi >= 0xD800, has_c = prev <= cand[c] && cand[c] <= hi;
                if (has_sur != has_c) fits = false;
                prev = OOR;
                continue;
            }
            if (cp == cand[c]) fits = false;
            prev = cp;
        }
        if (fits) return cand[c];
    }
    return 0xFFFD;
}

static sn_status rx_compile(sn_tokenizer *t, int k, const char *rx, sn_err *err) {
    if (!strcmp(rx, RXS_GPT2)) { t->rx_kind[k] = RX_CUSTOM_GPT2; return SN_OK; }
    if (!strcmp(rx, RXS_LLAMA3) || !strcmp(rx, RXS_LLAMA3_ORIG)) { t->rx_kind[k] = RX_CUSTOM_LLAMA3; return SN_OK; }
    if (!strcmp(rx, RXS_QWEN2)) { t->rx_kind[k] = RX_CUSTOM_QWEN2; return SN_OK; }
    if (!strcmp(rx, RXS_QWEN35)) { t->rx_kind[k] = RX_CUSTOM_QWEN35; return SN_OK; }
    if (!strcmp(rx, RXS_NEWLINES)) { t->rx_kind[k] = RX_CUSTOM_NEWLINES; return SN_OK; }
    if (!strcmp(rx, "\\p{AFMoE_digits}") || !strcmp(rx, "\\d{1,3}(?=(?:\\d{3})*\\b)")) {
        t->rx_kind[k] = RX_CUSTOM_DIGITS3;
        return SN_OK;
    }
    bbuf pat = {0};
    uint32_t opts = PCRE2_DOLLAR_ENDONLY; /* ECMAScript '$' is end of input only */
    if (rx_has_ucat(rx)) {
        /* llama.cpp runs these on a one-byte-per-code-point "collapsed" copy of the text, so the
         * pattern works on bytes: no UTF, no UCP (only ASCII is \s/\d/\w, as in std::regex). */
        t->rx_kind[k] = RX_COLLAPSED;
        t->rx_collapse_needed = true;
        if (!rx_collapse(rx, &pat)) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    } else {
        /* std::wregex over code points in llama.cpp: UTF-8 here, still without UCP. */
        t->rx_kind[k] = RX_UTF;
        opts |= PCRE2_UTF;
        if (!bbuf_add(&pat, rx, strlen(rx))) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
        t->rx_surrogate[k] = surrogate_stand_in(rx);
    }
    int ec = 0;
    PCRE2_SIZE eo = 0;
    t->rx_code[k] = pcre2_compile((PCRE2_SPTR)pat.v, pat.n, opts, &ec, &eo, NULL);
    free(pat.v);
    if (!t->rx_code[k]) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return sn_err_set(err, SN_EFORMAT, "tokenizer: pre-tokenizer regex %d does not compile at %zu: %s",
                          k, (size_t)eo, (const char *)msg);
    }
    pcre2_jit_compile(t->rx_code[k], PCRE2_JIT_COMPLETE); /* optional: falls back to the interpreter */
    return SN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * llama.cpp's hand-written splitters. Input: code points cp[0..n) already cut into chunks (lens in
 * `in`); output: the finer pieces (lengths in code points) in `out`. */

typedef struct {
    const sn_tokenizer *t;
    const uint32_t *cp;
    size_t ini, end, prev;
    uvec *out;
    bool oom;
} splitter;

static inline uint32_t sp_cp(const splitter *s, size_t pos) {
    return (pos >= s->ini && pos < s->end) ? s->cp[pos] : OOR;
}
static inline uint16_t sp_fl(const splitter *s, size_t pos) {
    return (pos >= s->ini && pos < s->end) ? cp_flags(s->t, s->cp[pos]) : 0;
}
static inline size_t sp_add(splitter *s, size_t end) {
    size_t len = end - s->prev;
    if (len > 0 && !uvec_push(s->out, (uint32_t)len)) s->oom = true;
    s->prev = end;
    return len;
}
static inline uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

#define F_WS SN_UCD_SPACE
#define F_L SN_UCD_LETTER
#define F_N SN_UCD_NUMBER
#define F_M SN_UCD_MARK

/* 's|'t|'re|'ve|'m|'ll|'d (case-folded when fold): returns the match length or 0. */
static size_t sp_contraction(const splitter *s, size_t pos, bool fold) {
    if (s->cp[pos] != '\'' || pos + 1 >= s->end) return 0;
    uint32_t a = sp_cp(s, pos + 1);
    if (fold) a = ascii_lower(a);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 2 < s->end) {
        uint32_t b = sp_cp(s, pos + 2);
        if (fold) b = ascii_lower(b);
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    return 0;
}

static void split_gpt2(splitter *s) {
    size_t pos = s->ini;
    while (pos < s->end) {
        uint32_t c = sp_cp(s, pos);
        uint16_t f = sp_fl(s, pos);
        size_t cl = sp_contraction(s, pos, false);
        if (cl) { pos += sp_add(s, pos + cl); continue; }
        uint16_t f2 = (c == ' ') ? sp_fl(s, pos + 1) : f;
        if (f2 & F_L) {
            pos += (c == ' ');
            while (f2 & F_L) f2 = sp_fl(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        if (f2 & F_N) {
            pos += (c == ' ');
            while (f2 & F_N) f2 = sp_fl(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        if (!(f2 & (F_WS | F_L | F_N)) && f2) {
            pos += (c == ' ');
            while (!(f2 & (F_WS | F_L | F_N)) && f2) f2 = sp_fl(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        size_t nws = 0;
        while (sp_fl(s, pos + nws) & F_WS) nws++;
        if (nws > 1 && sp_cp(s, pos + nws) != OOR) { pos += nws - 1; sp_add(s, pos); continue; }
        if (nws > 0) { pos += nws; sp_add(s, pos); continue; }
        sp_add(s, ++pos);
    }
}

/* llama3 (digits {1,3}), qwen2 (single digits) and qwen35 (letters absorb marks). */
static void split_llama3_like(splitter *s, int digits, bool marks) {
    const uint16_t LM = marks ? (F_L | F_M) : F_L;
    size_t pos = s->ini;
    while (pos < s->end) {
        uint32_t c = sp_cp(s, pos);
        uint16_t f = sp_fl(s, pos);
        size_t cl = sp_contraction(s, pos, true);
        if (cl) { pos += sp_add(s, pos + cl); continue; }
        /* [^\r\n\p{L}\p{N}]?\p{L}+ */
        if (!(c == '\r' || c == '\n' || (f & F_N))) {
            if ((f & LM) || (sp_fl(s, pos + 1) & LM)) {
                pos++;
                while (sp_fl(s, pos) & LM) pos++;
                sp_add(s, pos);
                continue;
            }
        }
        /* \p{N}{1,3} or \p{N} */
        if (f & F_N) {
            if (digits == 1) {
                pos++;
                sp_add(s, pos);
                continue;
            }
            size_t ini = pos;
            while (sp_fl(s, pos) & F_N) {
                if (++pos - ini >= 3) { sp_add(s, pos); ini = pos; }
            }
            sp_add(s, pos);
            continue;
        }
        /* <space>?[^\s\p{L}\p{N}]+[\r\n]* (the first test looks at this code point's flags) */
        uint16_t f2 = (c == ' ') ? sp_fl(s, pos + 1) : f;
        if (!(f2 & (F_WS | LM | F_N)) && f) {
            pos += (c == ' ');
            while (!(f2 & (F_WS | LM | F_N)) && f2) f2 = sp_fl(s, ++pos);
            uint32_t c2 = sp_cp(s, pos);
            while (c2 == '\r' || c2 == '\n') c2 = sp_cp(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        size_t nws = 0, last_rn = 0;
        while (sp_fl(s, pos + nws) & F_WS) {
            uint32_t c2 = sp_cp(s, pos + nws);
            if (c2 == '\r' || c2 == '\n') last_rn = pos + nws + 1;
            nws++;
        }
        if (last_rn > 0) { pos = last_rn; sp_add(s, pos); continue; }         /* \s*[\r\n]+ */
        if (nws > 1 && sp_cp(s, pos + nws) != OOR) { pos += nws - 1; sp_add(s, pos); continue; }
        if (nws > 0) { pos += nws; sp_add(s, pos); continue; }                /* \s+ */
        sp_add(s, ++pos);
    }
}

/* llama.cpp's AFMoE / tiny_aya digit grouping: a run of \p{N} is cut into len%3 leading digits and
 * then threes, counted from the right; the text before a run is glued to the run's first group
 * (llama.cpp emits from the previous cut), and the text after the last run is one piece. */
static void split_digits3(splitter *s) {
    size_t pos = s->ini;
    while (pos < s->end) {
        if (!(sp_fl(s, pos) & F_N)) { pos++; continue; }
        size_t first = pos, cnt = 0;
        while (pos < s->end && (sp_fl(s, pos) & F_N)) { cnt++; pos++; }
        size_t cur = first, rem = cnt % 3;
        if (rem) { sp_add(s, cur + rem); cur += rem; }
        while (cur < first + cnt) { sp_add(s, cur + 3); cur += 3; }
    }
    if (s->prev < s->end) sp_add(s, s->end);
}

static void split_newlines(splitter *s) {
    size_t pos = s->ini;
    while (pos < s->end) {
        bool nl = s->cp[pos] == '\n';
        while (pos < s->end && (s->cp[pos] == '\n') == nl) pos++;
        sp_add(s, pos);
    }
}

/* One regex pass through PCRE2 over a subject with one or more bytes per code point; map[b] is the
 * code point index of subject byte b (map[len] = n). */
static int split_pcre(const pcre2_code *code, const char *subj, const size_t *bstart,
                      const size_t *map, const uvec *in, uvec *out) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_jit_stack *js = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, NULL); /* grows on demand */
    if (!md || !mc || !js) {
        pcre2_match_data_free(md); pcre2_match_context_free(mc); pcre2_jit_stack_free(js);
        return PCRE2_ERROR_NOMEMORY;
    }
    pcre2_jit_stack_assign(mc, NULL, js);
    int err = 0;
    bool ok = true;
    size_t start = 0; /* in code points */
    for (size_t c = 0; c < in->n && ok; c++) {
        size_t clen = in->v[c];
        size_t b0 = bstart[start], b1 = bstart[start + clen];
        const char *sub = subj + b0;
        size_t sublen = b1 - b0;
        size_t at = 0, last = 0; /* byte offsets within sub */
        uint32_t flags = 0;
        while (at <= sublen) {
            int rc = pcre2_match(code, (PCRE2_SPTR)sub, sublen, at, flags, md, mc);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) { err = rc; ok = false; break; } /* limits */
            if (rc < 0) {
                if (flags == 0) break; /* no more matches */
                /* empty match was last: step one code point and search normally */
                flags = 0;
                if (at >= sublen) break;
                size_t cpi = map[b0 + at];
                at = bstart[cpi + 1] - b0;
                continue;
            }
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            size_t ms = ov[0], me = ov[1];
            size_t cms = map[b0 + ms] - start, cme = map[b0 + me] - start, clast = map[b0 + last] - start;
            if (cms > clast) ok = ok && uvec_push(out, (uint32_t)(cms - clast));
            if (cme > cms) ok = ok && uvec_push(out, (uint32_t)(cme - cms));
            last = me;
            at = me;
            flags = (me == ms) ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
            if (!ok) break;
        }
        size_t clast = map[b0 + last] - start;
        if (clast < clen) ok = ok && uvec_push(out, (uint32_t)(clen - clast));
        start += clen;
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    pcre2_jit_stack_free(js);
    return ok ? 0 : (err ? err : PCRE2_ERROR_NOMEMORY);
}

/* Splits cp[0..n) into pre-tokens (lengths in code points) with the tokenizer's regex list. */
static sn_status pretokenize(const sn_tokenizer *t, const uint32_t *cp, size_t n, uvec *pieces, sn_err *err) {
    uvec cur = {0}, nxt = {0};
    char *subj = NULL;
    size_t *bstart = NULL;
    size_t *map = NULL;
    sn_status st = SN_OK;
    if (!uvec_push(&cur, (uint32_t)n)) goto oom;
    for (int k = 0; k < t->n_rx; k++) {
        nxt.n = 0;
        rx_kind kind = t->rx_kind[k];
        if (kind == RX_COLLAPSED || kind == RX_UTF) {
            /* build the subject for this kind (cheap compared to matching) */
            size_t cap = kind == RX_COLLAPSED ? n + 1 : n * 4 + 1;
            free(subj); free(bstart); free(map);
            subj = malloc(cap);
            bstart = malloc((n + 1) * sizeof *bstart);
            map = malloc((cap + 1) * sizeof *map);
            if (!subj || !bstart || !map) goto oom;
            size_t b = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t c = cp[i];
                bstart[i] = b;
                if (kind == RX_COLLAPSED) {
                    char ch;
                    if (c < 128) ch = (char)c;
                    else {
                        uint16_t f = cp_flags(t, c);
                        if (f & SN_UCD_SPACE) ch = 0x0B;
                        else switch (f & SN_UCD_CATEGORY_MASK) {
                            case SN_UCD_NUMBER: ch = (char)0xD1; break;
                            case SN_UCD_LETTER: ch = (char)0xD2; break;
                            case SN_UCD_PUNCT: ch = (char)0xD3; break;
                            case SN_UCD_MARK: ch = (char)0xD4; break;
                            case SN_UCD_SYMBOL: ch = (char)0xD5; break;
                            default: ch = (char)0xD0; break;
                        }
                    }
                    map[b] = i;
                    subj[b++] = ch;
                } else {
                    if (c > 0x7F && (cp_flags(t, c) & SN_UCD_SPACE)) c = 0x0B;
                    if (c >= 0xD800 && c <= 0xDFFF) c = t->rx_surrogate[k]; /* keep PCRE2 UTF valid */
                    else if (c > 0x10FFFF) c = 0xFFFD; /* unreachable: rejected before */
                    char tmp[4];
                    int l = utf8_put(c, tmp);
                    for (int j = 0; j < l; j++) { map[b] = i; subj[b++] = tmp[j]; }
                }
            }
            bstart[n] = b;
            map[b] = n;
            int rc = split_pcre(t->rx_code[k], subj, bstart, map, &cur, &nxt);
            if (rc == PCRE2_ERROR_NOMEMORY) goto oom;
            if (rc) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(rc, msg, sizeof msg);
                st = sn_err_set(err, SN_EINVAL, "tokenizer: pre-tokenizer regex %d failed on this text: %s", k,
                                (const char *)msg);
                goto done;
            }
        } else {
            splitter s = {.t = t, .cp = cp, .out = &nxt};
            size_t start = 0;
            for (size_t c = 0; c < cur.n; c++) {
                s.ini = s.prev = start;
                s.end = start + cur.v[c];
                switch (kind) {
                    case RX_CUSTOM_GPT2: split_gpt2(&s); break;
                    case RX_CUSTOM_LLAMA3: split_llama3_like(&s, 3, false); break;
                    case RX_CUSTOM_QWEN2: split_llama3_like(&s, 1, false); break;
                    case RX_CUSTOM_QWEN35: split_llama3_like(&s, 1, true); break;
                    case RX_CUSTOM_DIGITS3: split_digits3(&s); break;
                    default: split_newlines(&s); break;
                }
                start = s.end;
            }
            if (s.oom) goto oom;
        }
        uvec tmp = cur; cur = nxt; nxt = tmp;
    }
    *pieces = cur;
    cur.v = NULL;
    goto done;
oom:
    st = sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
done:
    free(cur.v); free(nxt.v); free(subj); free(bstart); free(map);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Merge queue shared by SPM (score, higher first) and BPE (rank, lower first); ties go to the
 * leftmost pair, as in llama.cpp's comparators. */

typedef struct { int32_t prev, next; uint32_t off, n; } symbol;
typedef struct { double key; int32_t left, right; uint32_t size; } bigram; /* key: -score or rank */
typedef struct { bigram *v; size_t n, cap; } heap;

static inline bool bg_before(const bigram *a, const bigram *b) {
    return a->key < b->key || (a->key == b->key && a->left < b->left);
}
static bool heap_push(heap *h, bigram b) {
    if (!grow((void **)&h->v, &h->cap, h->n + 1, sizeof *h->v)) return false;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bg_before(&b, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = b;
    return true;
}
static bigram heap_pop(heap *h) {
    bigram top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const bigram *best = &last;
        if (l < h->n && bg_before(&h->v[l], best)) { m = l; best = &h->v[l]; }
        if (r < h->n && bg_before(&h->v[r], best)) { m = r; }
        if (m == i) break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (h->n) h->v[i] = last;
    return top;
}

typedef struct { symbol *v; size_t n, cap; } symvec;

static bool split_symbols(symvec *sy, const char *s, size_t n) {
    sy->n = 0;
    size_t off = 0;
    while (off < n) {
        size_t l = utf8_len_lead((unsigned char)s[off]);
        if (l > n - off) l = n - off;
        if (!grow((void **)&sy->v, &sy->cap, sy->n + 1, sizeof *sy->v)) return false;
        int32_t idx = (int32_t)sy->n;
        sy->v[sy->n++] = (symbol){idx - 1, off + l == n ? -1 : idx + 1, (uint32_t)off, (uint32_t)l};
        off += l;
    }
    return true;
}

/* SPM (llama.cpp llm_tokenizer_spm_session): text already has ' ' -> U+2581. */
static bool spm_try_bigram(const sn_tokenizer *t, const char *s, symvec *sy, heap *h, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return true;
    uint32_t size = sy->v[l].n + sy->v[r].n;
    int32_t id = tok_find(t, s + sy->v[l].off, size);
    if (id < 0) return true;
    return heap_push(h, (bigram){-(double)t->tok[id].score, l, r, size});
}

static sn_status spm_tokenize_chunk(const sn_tokenizer *t, const char *s, size_t n, ivec *out, sn_err *err) {
    symvec sy = {0};
    heap h = {0};
    sn_status st = SN_OK;
    if (!split_symbols(&sy, s, n)) goto oom;
    for (size_t i = 1; i < sy.n; i++)
        if (!spm_try_bigram(t, s, &sy, &h, (int32_t)i - 1, (int32_t)i)) goto oom;
    while (h.n) {
        bigram b = heap_pop(&h);
        symbol *L = &sy.v[b.left], *R = &sy.v[b.right];
        if (L->n == 0 || R->n == 0 || L->n + R->n != b.size) continue;
        L->n += R->n;
        R->n = 0;
        L->next = R->next;
        if (R->next >= 0) sy.v[R->next].prev = b.left;
        if (!spm_try_bigram(t, s, &sy, &h, L->prev, b.left) ||
            !spm_try_bigram(t, s, &sy, &h, b.left, sy.v[b.left].next))
            goto oom;
    }
    for (int32_t i = sy.n ? 0 : -1; i != -1; i = sy.v[i].next) {
        const symbol *x = &sy.v[i];
        int32_t id = tok_find(t, s + x->off, x->n);
        if (id >= 0) {
            if (!ivec_push(out, id)) goto oom;
            continue;
        }
        for (uint32_t j = 0; j < x->n; j++) {
            int32_t bt = t->spm_byte[(unsigned char)s[x->off + j]];
            if (bt < 0) {
                st = sn_err_set(err, SN_EFORMAT, "tokenizer: SPM vocab has no byte token <0x%02X> for byte fallback",
                                (unsigned)(unsigned char)s[x->off + j]);
                goto done;
            }
            if (!ivec_push(out, bt)) goto oom;
        }
    }
    goto done;
oom:
    st = sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
done:
    free(sy.v);
    free(h.v);
    return st;
}

/* SPM merges never join two characters that no token contains side by side (every merged symbol
 * is a token), so the text is cut at such places and each piece is merged on its own: the result is
 * the same as llama.cpp's one queue over the whole text, with small queues instead of a huge one.
 * The pair set holds hashes; a collision only means a missed cut, never a wrong one. */
static uint64_t pair_hash(const char *a, size_t an, const char *b, size_t bn) {
    uint64_t h = merge_hash(a, an, b, bn);
    return h ? h : 1;
}

static bool pair_known(const sn_tokenizer *t, uint64_t h) {
    for (uint64_t i = h & t->pmask;; i = (i + 1) & t->pmask) {
        if (t->pairs[i] == h) return true;
        if (t->pairs[i] == 0) return false;
    }
}

static sn_status spm_tokenize(const sn_tokenizer *t, const char *s, size_t n, ivec *out, sn_err *err) {
    size_t start = 0, prev = 0, off = 0;
    while (off < n) {
        size_t l = utf8_len_lead((unsigned char)s[off]);
        if (l > n - off) l = n - off;
        if (off > start && !pair_known(t, pair_hash(s + prev, off - prev, s + off, l))) {
            sn_status st = spm_tokenize_chunk(t, s + start, off - start, out, err);
            if (st) return st;
            start = off;
        }
        prev = off;
        off += l;
    }
    return n > start ? spm_tokenize_chunk(t, s + start, n - start, out, err) : SN_OK;
}

static bool build_pairs(sn_tokenizer *t) {
    uint64_t total = 0;
    for (int32_t id = 0; id < t->n_vocab; id++) total += t->tok[id].len;
    uint64_t ns = slot_count(total + 1);
    t->pairs = calloc(ns, sizeof *t->pairs);
    if (!t->pairs) return false;
    t->pmask = ns - 1;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        const char *s = t->arena + t->tok[id].off;
        size_t n = t->tok[id].len, prev = 0, off = 0;
        while (off < n) {
            size_t l = utf8_len_lead((unsigned char)s[off]);
            if (l > n - off) l = n - off;
            if (off > 0) {
                uint64_t h = pair_hash(s + prev, off - prev, s + off, l), i = h & t->pmask;
                while (t->pairs[i] && t->pairs[i] != h) i = (i + 1) & t->pmask;
                t->pairs[i] = h;
            }
            prev = off;
            off += l;
        }
    }
    return true;
}

/* BPE merges over one byte-level-encoded pre-token (llama.cpp llm_tokenizer_bpe_session). */
static bool bpe_try_bigram(const sn_tokenizer *t, const char *s, symvec *sy, heap *h, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return true;
    const symbol *L = &sy->v[l], *R = &sy->v[r];
    int32_t rank = merge_find(t, s + L->off, L->n, s + R->off, R->n);
    if (rank < 0) return true;
    return heap_push(h, (bigram){(double)rank, l, r, L->n + R->n});
}

static bool bpe_word(const sn_tokenizer *t, const char *w, size_t n, symvec *sy, heap *h, ivec *out) {
    if (n == 0) return true;
    if (t->ignore_merges) {
        int32_t id = tok_find(t, w, n);
        if (id >= 0) return ivec_push(out, id);
    } else if (t->gemma4) {
        size_t k = 0;
        while (k < n && w[k] == '\n') k++;
        int32_t id = k == n ? tok_find(t, w, n) : -1;
        if (id >= 0) return ivec_push(out, id);
    }
    if (!split_symbols(sy, w, n)) return false;
    h->n = 0;
    for (size_t i = 1; i < sy->n; i++)
        if (!bpe_try_bigram(t, w, sy, h, (int32_t)i - 1, (int32_t)i)) return false;
    while (h->n) {
        bigram b = heap_pop(h);
        symbol *L = &sy->v[b.left], *R = &sy->v[b.right];
        if (L->n == 0 || R->n == 0 || L->n + R->n != b.size) continue;
        L->n += R->n;
        R->n = 0;
        L->next = R->next;
        if (R->next >= 0) sy->v[R->next].prev = b.left;
        if (!bpe_try_bigram(t, w, sy, h, L->prev, b.left) ||
            !bpe_try_bigram(t, w, sy, h, b.left, sy->v[b.left].next))
            return false;
    }
    for (size_t i = 0; i < sy->n; i++) {
        const symbol *x = &sy->v[i];
        if (x->n == 0) continue;
        int32_t id = tok_find(t, w + x->off, x->n);
        if (id >= 0) {
            if (!ivec_push(out, id)) return false;
            continue;
        }
        /* llama.cpp then looks up each (already byte-encoded) byte as a one-byte token, or as
         * <0xNN> for SPM-style BPE */
        for (uint32_t j = 0; j < x->n; j++) {
            int32_t bid;
            if (t->spm_style_bpe) {
                char hx[8];
                snprintf(hx, sizeof hx, "<0x%02X>", (unsigned)(unsigned char)w[x->off + j]);
                bid = tok_find(t, hx, 6);
            } else {
                bid = tok_find(t, w + x->off + j, 1);
            }
            if (bid >= 0 && !ivec_push(out, bid)) return false;
        }
    }
    return true;
}

static sn_status bpe_tokenize(const sn_tokenizer *t, const char *s, size_t n, ivec *out, sn_err *err) {
    uvec cp = {0}, pieces = {0};
    bbuf word = {0};
    symvec sy = {0};
    heap h = {0};
    sn_status st = SN_OK;
    size_t off = 0;
    while (off < n)
        if (!uvec_push(&cp, utf8_next((const unsigned char *)s, n, &off))) goto oom;
    st = pretokenize(t, cp.v, cp.n, &pieces, err);
    if (st) goto done;
    size_t start = 0;
    for (size_t p = 0; p < pieces.n; p++) {
        word.n = 0;
        for (size_t i = start; i < start + pieces.v[p]; i++) {
            char u[4];
            int l = utf8_put(cp.v[i], u);
            if (l == 0) {
                st = sn_err_set(err, SN_EINVAL, "tokenizer: input decodes to code point U+%X beyond U+10FFFF",
                                (unsigned)cp.v[i]);
                goto done;
            }
            if (t->spm_style_bpe) {
                if (!bbuf_add(&word, u, (size_t)l)) goto oom;
                continue;
            }
            for (int j = 0; j < l; j++) {
                const char *e = t->byte_enc[(unsigned char)u[j]];
                if (!bbuf_add(&word, e, strlen(e))) goto oom;
            }
        }
        start += pieces.v[p];
        if (!bpe_word(t, word.v, word.n, &sy, &h, out)) goto oom;
    }
    goto done;
oom:
    st = sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
done:
    free(cp.v); free(pieces.v); free(word.v); free(sy.v); free(h.v);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Special tokens: cut out of the text before tokenizing, one token text at a time, longest first
 * (llama.cpp tokenizer_st_partition). A fragment is raw text [off, off+len) or a token id. */

typedef struct { int32_t id; size_t off, len; } frag; /* id >= 0: token, else raw text */
typedef struct { frag *v; size_t n, cap; } fragvec;

static bool frag_push(fragvec *f, frag x) {
    if (!grow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v)) return false;
    f->v[f->n++] = x;
    return true;
}
static inline bool c_isspace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static sn_status partition(const sn_tokenizer *t, const char *text, size_t len, bool parse_special,
                           fragvec *out, sn_err *err) {
    fragvec cur = {0}, nxt = {0};
    if (len > 0 && !frag_push(&cur, (frag){-1, 0, len})) goto oom;
    for (size_t k = 0; k < t->n_special && cur.n; k++) {
        int32_t id = t->special[k];
        const tok_info *ti = &t->tok[id];
        if (!parse_special && (ti->attr & (A_CONTROL | A_UNKNOWN))) continue;
        const char *pat = t->arena + ti->off;
        if (!memmem(text, len, pat, ti->len)) continue; /* cheap reject: nowhere in the text */
        nxt.n = 0;
        for (size_t f = 0; f < cur.n; f++) {
            frag fr = cur.v[f];
            if (fr.id >= 0) {
                if (!frag_push(&nxt, fr)) goto oom;
                continue;
            }
            size_t base = fr.off, blen = fr.len;
            for (;;) {
                const char *m = memmem(text + base, blen, pat, ti->len);
                if (!m) {
                    if (blen > 0 && !frag_push(&nxt, (frag){-1, base, blen})) goto oom;
                    break;
                }
                size_t mpos = (size_t)(m - text);
                if (mpos > base) {
                    size_t llen = mpos - base;
                    if (ti->attr & A_LSTRIP)
                        while (llen > 0 && c_isspace(text[base + llen - 1])) llen--;
                    if (llen > 0 && !frag_push(&nxt, (frag){-1, base, llen})) goto oom;
                }
                if (!frag_push(&nxt, (frag){id, 0, 0})) goto oom;
                size_t rpos = mpos + ti->len, rend = base + blen;
                if (rpos >= rend) break;
                if (ti->attr & A_RSTRIP)
                    while (rpos < rend && c_isspace(text[rpos])) rpos++;
                base = rpos;
                blen = rend - rpos;
                if (blen == 0) break;
            }
        }
        fragvec tmp = cur; cur = nxt; nxt = tmp;
    }
    free(nxt.v);
    *out = cur;
    return SN_OK;
oom:
    free(cur.v);
    free(nxt.v);
    return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
}

int64_t sn_tok_encode(const sn_tokenizer *t, const char *text, size_t len, int add_special,
                      int parse_special, int32_t *ids, size_t cap, sn_err *err) {
    if (!t || (!text && len)) return sn_err_set(err, SN_EINVAL, "tokenizer: NULL argument");
    if (len >= UINT32_MAX) return sn_err_set(err, SN_EINVAL, "tokenizer: text of %zu bytes is too long (max 4 GiB)", len);
    ivec out = {0};
    fragvec fr = {0};
    bbuf s = {0};
    sn_status st = partition(t, text, len, parse_special != 0, &fr, err);
    if (st) return st;
    if (add_special && t->add_bos) {
        if (t->bos < 0) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: add_bos is set but the vocab has no BOS token"); goto done; }
        if (!ivec_push(&out, t->bos)) goto oom;
    }
    bool prev_special = true; /* SPM: a space is prefixed to text at the start or after a special */
    for (size_t i = 0; i < fr.n; i++) {
        if (fr.v[i].id >= 0) {
            if (!ivec_push(&out, fr.v[i].id)) goto oom;
            prev_special = true;
            continue;
        }
        const char *p = text + fr.v[i].off;
        size_t n = fr.v[i].len;
        if (t->type == T_SPM) {
            s.n = 0;
            if (t->add_space_prefix && prev_special && !bbuf_add(&s, "\xe2\x96\x81", 3)) goto oom;
            for (size_t j = 0; j < n; j++) {
                bool ok = p[j] == ' ' ? bbuf_add(&s, "\xe2\x96\x81", 3) : bbuf_add(&s, p + j, 1);
                if (!ok) goto oom;
            }
            st = spm_tokenize(t, s.v ? s.v : "", s.n, &out, err);
        } else if (t->spm_style_bpe) {
            s.n = 0;
            for (size_t j = 0; j < n; j++) {
                bool ok = p[j] == ' ' ? bbuf_add(&s, "\xe2\x96\x81", 3) : bbuf_add(&s, p + j, 1);
                if (!ok) goto oom;
            }
            st = bpe_tokenize(t, s.v, s.n, &out, err);
        } else {
            st = bpe_tokenize(t, p, n, &out, err);
        }
        if (st) goto done;
        prev_special = false;
    }
    if (add_special && t->add_eos) {
        if (t->eos < 0) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: add_eos is set but the vocab has no EOS token"); goto done; }
        if (!ivec_push(&out, t->eos)) goto oom;
    }
    if (out.n > (size_t)INT64_MAX) goto oom;
    if (ids && cap && out.n) memcpy(ids, out.v, (out.n < cap ? out.n : cap) * sizeof *ids);
    int64_t n_out = (int64_t)out.n;
    free(out.v); free(fr.v); free(s.v);
    return n_out;
oom:
    st = sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
done:
    free(out.v); free(fr.v); free(s.v);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Detokenizer (llama.cpp token_to_piece / detokenize). */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The byte of a <0xNN> token, parsed like strtol(text.substr(3, 2), 16). */
static char byte_of(const char *s, size_t n) {
    int v = 0;
    for (size_t i = 3; i < 5 && i < n; i++) {
        int h = hexval(s[i]);
        if (h < 0) break;
        v = v * 16 + h;
    }
    return (char)v;
}

/* Appends the full piece (as llama.cpp caches it, special = true) of id. */
static bool piece_full(const sn_tokenizer *t, int32_t id, bbuf *b) {
    const tok_info *ti = &t->tok[id];
    const char *s = t->arena + ti->off;
    if (ti->attr & (A_UNKNOWN | A_CONTROL | A_USER_DEFINED)) return bbuf_add(b, s, ti->len);
    if (ti->attr & A_NORMAL) {
        if (t->type == T_SPM || t->spm_style_bpe) {
            for (size_t i = 0; i < ti->len; i++) {
                if (i + 2 < ti->len && !memcmp(s + i, "\xe2\x96\x81", 3)) {
                    if (!bbuf_add(b, " ", 1)) return false;
                    i += 2;
                } else if (!bbuf_add(b, s + i, 1)) return false;
            }
            return true;
        }
        size_t off = 0;
        while (off < ti->len) {
            uint32_t c = utf8_next((const unsigned char *)s, ti->len, &off);
            int byte = c < 0x144 ? t->byte_dec[c] : -1;
            if (byte >= 0) {
                char ch = (char)byte;
                if (!bbuf_add(b, &ch, 1)) return false;
            } else {
                char u[4], hex[16];
                int l = utf8_put(c, u);
                if (!bbuf_add(b, "[UNK_BYTE_0x", 12)) return false;
                for (int j = 0; j < l; j++) {
                    snprintf(hex, sizeof hex, "%02x", (unsigned)(unsigned char)u[j]);
                    if (!bbuf_add(b, hex, 2)) return false;
                }
                if (!bbuf_add(b, s, ti->len) || !bbuf_add(b, "]", 1)) return false;
            }
        }
        return true;
    }
    if (ti->attr & A_BYTE) {
        char ch = byte_of(s, ti->len);
        return bbuf_add(b, &ch, 1);
    }
    return true;
}

/* Appends the piece of id as llama_token_to_piece(lstrip, special) would produce it. */
static bool piece_append(const sn_tokenizer *t, int32_t id, int lstrip, bool special, bbuf *b) {
    const tok_info *ti = &t->tok[id];
    if (!special && (ti->attr & (A_UNKNOWN | A_CONTROL))) return true;
    size_t before = b->n;
    if (!piece_full(t, id, b)) return false;
    size_t skip = 0;
    while ((int)skip < lstrip && before + skip < b->n && b->v[before + skip] == ' ') skip++;
    if (skip) {
        memmove(b->v + before, b->v + before + skip, b->n - before - skip);
        b->n -= skip;
        b->v[b->n] = 0;
    }
    return true;
}

static int64_t copy_out(const bbuf *b, char *buf, size_t cap) {
    if (buf && cap && b->n) memcpy(buf, b->v, b->n < cap ? b->n : cap);
    return (int64_t)b->n;
}

int64_t sn_tok_piece(const sn_tokenizer *t, int32_t id, int special, char *buf, size_t cap) {
    if (!t || id < 0 || id >= t->n_vocab) return SN_EINVAL;
    bbuf b = {0};
    if (!piece_append(t, id, 0, special != 0, &b)) { free(b.v); return SN_ENOMEM; }
    int64_t n = copy_out(&b, buf, cap);
    free(b.v);
    return n;
}

/* llama.cpp's clean_up_tokenization_spaces passes (BPE vocabs unless the pre-tokenizer opts out). */
static void clean_spaces(bbuf *b) {
    char *x = b->v;
    size_t n = b->n, w;
    if (n == 0) return;
    /* " ?", " !", " .", " ," lose the space */
    w = 1;
    for (size_t i = 1; i < n; i++) {
        char c = x[i];
        if (x[i - 1] == ' ' && (c == '?' || c == '!' || c == '.' || c == ',')) w--;
        x[w++] = c;
    }
    n = w;
    /* " ' " becomes "'" */
    w = 1;
    for (size_t i = 1; i < n; i++) {
        char c = x[i];
        if (c == '\'' && i + 1 < n && x[i - 1] == ' ' && x[i + 1] == ' ') {
            w--;
            x[++i] = '\0';
        }
        x[w++] = c;
    }
    n = w;
    /* " 's", " 'm", " 're", " 've" lose the space */
    w = 1;
    for (size_t i = 1; i < n; i++) {
        char c = x[i];
        if (x[i - 1] == ' ' && c == '\'' && i + 1 < n) {
            char c1 = x[i + 1];
            if (c1 == 's' || c1 == 'm') w--;
            else if (c1 != 't' && c1 != 'd' && i + 2 < n) {
                char c2 = x[i + 2];
                if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e')) w--;
            }
        }
        x[w++] = c;
    }
    b->n = w;
    b->v[w] = 0;
}

int64_t sn_tok_decode(const sn_tokenizer *t, const int32_t *ids, size_t n, int special, char *buf,
                      size_t cap) {
    if (!t || (!ids && n)) return SN_EINVAL;
    bbuf b = {0};
    if (!bbuf_add(&b, "", 0)) return SN_ENOMEM;
    int remove_space = t->add_space_prefix;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_vocab) { free(b.v); return SN_EINVAL; }
        if (!piece_append(t, ids[i], remove_space, special != 0, &b)) { free(b.v); return SN_ENOMEM; }
        remove_space = 0;
    }
    if (t->clean_spaces) clean_spaces(&b);
    int64_t r = copy_out(&b, buf, cap);
    free(b.v);
    return r;
}

/* ---------------------------------------------------------------------------------------------
 * Loading */

int32_t sn_tok_n_vocab(const sn_tokenizer *t) { return t->n_vocab; }
int32_t sn_tok_bos(const sn_tokenizer *t) { return t->bos; }
int32_t sn_tok_eos(const sn_tokenizer *t) { return t->eos; }
int32_t sn_tok_eot(const sn_tokenizer *t) { return t->eot; }
int sn_tok_add_bos(const sn_tokenizer *t) { return t->add_bos; }
int sn_tok_add_eos(const sn_tokenizer *t) { return t->add_eos; }
int sn_tok_is_eog(const sn_tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->n_vocab && t->eog[id];
}
uint32_t sn_tok_attr(const sn_tokenizer *t, int32_t id) {
    return (t && id >= 0 && id < t->n_vocab) ? t->tok[id].attr : 0;
}
const char *sn_tok_text(const sn_tokenizer *t, int32_t id, size_t *len) {
    if (!t || id < 0 || id >= t->n_vocab) return NULL;
    if (len) *len = t->tok[id].len;
    return t->arena + t->tok[id].off;
}

void sn_tok_free(sn_tokenizer *t) {
    if (!t) return;
    for (int k = 0; k < MAX_RX; k++) pcre2_code_free(t->rx_code[k]);
    free(t->arena); free(t->tok); free(t->tslot);
    free(t->marena); free(t->merge); free(t->mslot);
    free(t->eog); free(t->special); free(t->pairs);
    free(t);
}

static bool str_eq(const sn_tokenizer *t, int32_t id, const char *s) {
    size_t n = strlen(s);
    return t->tok[id].len == n && !memcmp(t->arena + t->tok[id].off, s, n);
}

/* Reads an optional bool key; a present key of another type is an error (llama.cpp refuses too). */
static sn_status get_bool(const sn_gguf *g, const char *key, bool *v, sn_err *err) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return SN_OK;
    if (sn_gguf_kv_type(g, i) != SN_GGUF_BOOL)
        return sn_err_set(err, SN_EFORMAT, "tokenizer: key %s has type %s, expected bool", key,
                          sn_gguf_type_name(sn_gguf_kv_type(g, i)));
    *v = sn_gguf_get_bool(g, i) != 0;
    return SN_OK;
}

static void gpt2_byte_encoder(sn_tokenizer *t) {
    int n = 0;
    for (int c = 0; c < 0x144; c++) t->byte_dec[c] = -1;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint32_t cp = printable ? (uint32_t)b : (uint32_t)(256 + n++);
        int l = utf8_put(cp, t->byte_enc[b]);
        t->byte_enc[b][l] = 0;
        t->byte_dec[cp] = (int16_t)b;
    }
}

static int cmp_special(const void *a, const void *b, void *ctx) {
    const sn_tokenizer *t = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (t->tok[x].len != t->tok[y].len) return t->tok[x].len > t->tok[y].len ? -1 : 1;
    return (x > y) - (x < y);
}

sn_status sn_tok_load(const sn_gguf *g, sn_tokenizer **out, sn_err *err) {
    if (!g || !out) return sn_err_set(err, SN_EINVAL, "tokenizer: NULL argument");
    *out = NULL;
    sn_status st = SN_OK;
    sn_tokenizer *t = calloc(1, sizeof *t);
    char *model = NULL, *pre = NULL, *gname = NULL, *garch = NULL;
    if (!t) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    for (int c = 0; c < 128; c++) t->ascii_flags[c] = ucd_lookup((uint32_t)c);
    gpt2_byte_encoder(t);

    /* model and pre-tokenizer */
    int64_t ki = sn_gguf_find_key(g, "tokenizer.ggml.model");
    if (ki < 0) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.model is missing"); goto fail; }
    if (sn_gguf_kv_type(g, ki) != SN_GGUF_STR) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.model is not a string"); goto fail; }
    model = sn_gguf_str_dup(g, "tokenizer.ggml.model");
    pre = sn_gguf_str_dup(g, "tokenizer.ggml.pre");
    gname = sn_gguf_str_dup(g, "general.name");
    garch = sn_gguf_str_dup(g, "general.architecture");
    if (!model) goto oom;
    ki = sn_gguf_find_key(g, "tokenizer.ggml.pre");
    if (ki >= 0 && sn_gguf_kv_type(g, ki) != SN_GGUF_STR) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.pre is not a string"); goto fail; }

    t->eot = t->eom = t->sep = t->pad = t->mask = -1;
    t->fim_pre = t->fim_suf = t->fim_mid = t->fim_pad = t->fim_rep = t->fim_sep = -1;
    int rxset = -1;
    if (!strcmp(model, "llama")) {
        t->type = T_SPM;
        t->bos = 1; t->eos = 2; t->unk = 0;
        t->add_space_prefix = true; t->add_bos = true; t->add_eos = false; t->clean_spaces = false;
    } else if (!strcmp(model, "gpt2") || !strcmp(model, "gemma4")) {
        t->type = T_BPE;
        t->bos = 11; t->eos = 11; t->unk = -1;
        if (!strcmp(model, "gemma4")) { /* llama.cpp: no default ids, pre forced to gemma4 */
            t->bos = t->eos = -1;
            free(pre);
            pre = strdup("gemma4");
            if (!pre) goto oom;
        }
        t->add_space_prefix = false; t->clean_spaces = true;
        const pre_row *row = NULL;
        if (!pre || !*pre) row = &PRE_TABLE[0]; /* llama.cpp warns and uses "default" */
        else {
            for (size_t i = 0; i < sizeof PRE_TABLE / sizeof PRE_TABLE[0]; i++)
                if (!strcmp(PRE_TABLE[i].name, pre)) { row = &PRE_TABLE[i]; break; }
            if (!row) {
                for (size_t i = 0; i < sizeof PRE_UNSUPPORTED / sizeof PRE_UNSUPPORTED[0]; i++)
                    if (!strcmp(PRE_UNSUPPORTED[i], pre)) {
                        st = sn_err_set(err, SN_EUNSUPPORTED, "tokenizer: pre-tokenizer '%s' is not implemented", pre);
                        goto fail;
                    }
                st = sn_err_set(err, SN_EFORMAT, "tokenizer: unknown pre-tokenizer type '%s' (tokenizer.ggml.pre)", pre);
                goto fail;
            }
        }
        rxset = row->rx;
        t->ignore_merges = row->flags & P_IGNORE_MERGES;
        t->add_bos = row->flags & P_ADD_BOS;
        if (row->flags & P_KEEP_SPACES) t->clean_spaces = false;
        if (row->flags & P_NO_BOS_ID) t->bos = -1;
        t->spm_style_bpe = row->flags & P_SPM_STYLE;
        t->gemma4 = row->flags & P_GEMMA4;
    } else {
        st = sn_err_set(err, SN_EUNSUPPORTED, "tokenizer: tokenizer model '%s' is not supported (only llama, gpt2)", model);
        goto fail;
    }
    if ((st = get_bool(g, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix, err))) goto fail;

    /* tokens, scores, types */
    ki = sn_gguf_find_key(g, "tokenizer.ggml.tokens");
    if (ki < 0) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.tokens is missing"); goto fail; }
    if (sn_gguf_kv_type(g, ki) != SN_GGUF_ARR || sn_gguf_arr_type(g, ki) != SN_GGUF_STR) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.tokens is not an array of strings"); goto fail;
    }
    uint64_t nv = sn_gguf_arr_n(g, ki);
    if (nv == 0 || nv > INT32_MAX / 4) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer: tokenizer.ggml.tokens has %llu entries", (unsigned long long)nv); goto fail;
    }
    t->n_vocab = (int32_t)nv;
    const unsigned char *scores = NULL, *types = NULL;
    sn_gguf_type score_type = SN_GGUF_F32;
    int64_t si = sn_gguf_find_key(g, "tokenizer.ggml.scores");
    if (si >= 0) {
        score_type = sn_gguf_kv_type(g, si) == SN_GGUF_ARR ? sn_gguf_arr_type(g, si) : SN_GGUF_TYPE_COUNT;
        if (score_type != SN_GGUF_F32 && score_type != SN_GGUF_I32) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.scores is not an array of f32 or i32"); goto fail;
        }
        if (sn_gguf_arr_n(g, si) < nv) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer: tokenizer.ggml.scores has %llu entries, fewer than the %llu tokens",
                            (unsigned long long)sn_gguf_arr_n(g, si), (unsigned long long)nv); goto fail;
        }
        scores = sn_gguf_arr_data(g, si);
    }
    int64_t ti_ = sn_gguf_find_key(g, "tokenizer.ggml.token_type");
    if (ti_ >= 0) {
        if (sn_gguf_kv_type(g, ti_) != SN_GGUF_ARR || sn_gguf_arr_type(g, ti_) != SN_GGUF_I32) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.token_type is not an array of i32"); goto fail;
        }
        if (sn_gguf_arr_n(g, ti_) < nv) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer: tokenizer.ggml.token_type has %llu entries, fewer than the %llu tokens",
                            (unsigned long long)sn_gguf_arr_n(g, ti_), (unsigned long long)nv); goto fail;
        }
        types = sn_gguf_arr_data(g, ti_);
    }
    size_t total = 0;
    for (uint64_t i = 0; i < nv; i++) {
        sn_gguf_str s = sn_gguf_arr_str(g, ki, i);
        size_t l = s.len ? (size_t)s.len : 24; /* "[EMPTY_i]" */
        if (s.len > UINT32_MAX / 2 || total > SIZE_MAX - l - 1) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer: token %llu is too long", (unsigned long long)i); goto fail;
        }
        total += l + 1;
    }
    if (total > UINT32_MAX) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: token texts exceed 4 GiB"); goto fail; }
    t->arena = malloc(total ? total : 1);
    t->tok = calloc(nv, sizeof *t->tok);
    t->eog = calloc(nv, 1);
    if (!t->arena || !t->tok || !t->eog) goto oom;
    size_t pos = 0;
    for (uint64_t i = 0; i < nv; i++) {
        sn_gguf_str s = sn_gguf_arr_str(g, ki, i);
        tok_info *tk = &t->tok[i];
        tk->off = (uint32_t)pos;
        if (s.len == 0) tk->len = (uint32_t)snprintf(t->arena + pos, 25, "[EMPTY_%llu]", (unsigned long long)i);
        else { memcpy(t->arena + pos, s.ptr, s.len); tk->len = (uint32_t)s.len; }
        t->arena[pos + tk->len] = 0;
        pos += tk->len + 1;
        if (scores) {
            if (score_type == SN_GGUF_F32) memcpy(&tk->score, scores + 4 * i, 4);
            else { int32_t v; memcpy(&v, scores + 4 * i, 4); tk->score = (float)v; }
        }
        tk->attr = A_NORMAL;
        if (types) {
            int32_t ty;
            memcpy(&ty, types + 4 * i, 4);
            switch (ty) {
                case SN_TOKEN_UNKNOWN: tk->attr = A_UNKNOWN; break;
                case SN_TOKEN_UNUSED: tk->attr = A_UNUSED; break;
                case SN_TOKEN_NORMAL: tk->attr = A_NORMAL; break;
                case SN_TOKEN_CONTROL: tk->attr = A_CONTROL; break;
                case SN_TOKEN_USER_DEFINED: tk->attr = A_USER_DEFINED; break;
                case SN_TOKEN_BYTE: tk->attr = A_BYTE; break;
                default: tk->attr = 0; break;
            }
        }
    }
    /* text -> id; duplicates are an error (llama.cpp asserts) */
    uint64_t ns = slot_count(nv);
    t->tslot = malloc(ns * sizeof *t->tslot);
    if (!t->tslot) goto oom;
    memset(t->tslot, 0xFF, ns * sizeof *t->tslot);
    t->tmask = ns - 1;
    for (uint64_t i = 0; i < nv; i++) {
        const tok_info *tk = &t->tok[i];
        uint64_t h = hash_bytes(HASH_SEED, t->arena + tk->off, tk->len) & t->tmask;
        while (t->tslot[h] >= 0) {
            const tok_info *o = &t->tok[t->tslot[h]];
            if (o->len == tk->len && !memcmp(t->arena + o->off, t->arena + tk->off, tk->len)) {
                st = sn_err_set(err, SN_EFORMAT, "tokenizer: tokenizer.ggml.tokens[%llu] \"%.*s\" duplicates token %d",
                                (unsigned long long)i, (int)(tk->len > 64 ? 64 : tk->len), t->arena + tk->off, t->tslot[h]);
                goto fail;
            }
            h = (h + 1) & t->tmask;
        }
        t->tslot[h] = (int32_t)i;
    }

    /* merges */
    if (t->type == T_BPE) {
        int64_t mi = sn_gguf_find_key(g, "tokenizer.ggml.merges");
        if (mi < 0) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: gpt2 vocab without tokenizer.ggml.merges"); goto fail; }
        if (sn_gguf_kv_type(g, mi) != SN_GGUF_ARR || sn_gguf_arr_type(g, mi) != SN_GGUF_STR) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.merges is not an array of strings"); goto fail;
        }
        uint64_t nm = sn_gguf_arr_n(g, mi);
        if (nm > INT32_MAX / 4) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: %llu merges is too many", (unsigned long long)nm); goto fail; }
        size_t mtotal = 1;
        for (uint64_t i = 0; i < nm; i++) {
            sn_gguf_str s = sn_gguf_arr_str(g, mi, i);
            if (s.len > UINT32_MAX / 2 || mtotal > SIZE_MAX - s.len) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: merge %llu is too long", (unsigned long long)i); goto fail; }
            mtotal += s.len;
        }
        if (mtotal > UINT32_MAX) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: merges exceed 4 GiB"); goto fail; }
        t->marena = malloc(mtotal);
        t->merge = calloc(nm ? nm : 1, sizeof *t->merge);
        uint64_t nms = slot_count(nm);
        t->mslot = malloc(nms * sizeof *t->mslot);
        if (!t->marena || !t->merge || !t->mslot) goto oom;
        memset(t->mslot, 0xFF, nms * sizeof *t->mslot);
        t->mmask = nms - 1;
        size_t mp = 0;
        for (uint64_t i = 0; i < nm; i++) {
            sn_gguf_str s = sn_gguf_arr_str(g, mi, i);
            memcpy(t->marena + mp, s.ptr, s.len);
            const char *sp = s.len > 1 ? memchr(s.ptr + 1, ' ', s.len - 1) : NULL;
            merge_info *m = &t->merge[i];
            if (sp) {
                size_t cut = (size_t)(sp - s.ptr);
                *m = (merge_info){(uint32_t)mp, (uint32_t)cut, (uint32_t)(mp + cut + 1), (uint32_t)(s.len - cut - 1)};
            } else {
                *m = (merge_info){(uint32_t)mp, 0, (uint32_t)mp, 0}; /* never matches: llama.cpp keys it ("","") */
            }
            mp += s.len;
            t->n_merge = (int32_t)(i + 1);
            if (!sp) continue;
            /* the first occurrence of a pair keeps its rank */
            const char *l = t->marena + m->loff, *r = t->marena + m->roff;
            uint64_t h = merge_hash(l, m->llen, r, m->rlen) & t->mmask;
            bool dup = false;
            while (t->mslot[h] >= 0) {
                const merge_info *o = &t->merge[t->mslot[h]];
                if (o->llen == m->llen && o->rlen == m->rlen && !memcmp(t->marena + o->loff, l, m->llen) &&
                    !memcmp(t->marena + o->roff, r, m->rlen)) { dup = true; break; }
                h = (h + 1) & t->mmask;
            }
            if (!dup) t->mslot[h] = (int32_t)i;
        }
        /* pre-tokenizer regexes */
        for (int k = 0; RX_SETS[rxset][k]; k++) {
            if ((st = rx_compile(t, k, RX_SETS[rxset][k], err))) goto fail;
            t->n_rx = k + 1;
        }
    }

    if (t->type == T_SPM && !build_pairs(t)) goto oom;

    /* SPM byte fallback table (<0xNN>, else the raw byte) */
    for (int b = 0; b < 256; b++) {
        char hx[8];
        snprintf(hx, sizeof hx, "<0x%02X>", b);
        int32_t id = tok_find(t, hx, 6);
        if (id < 0) { char c = (char)b; id = tok_find(t, &c, 1); }
        t->spm_byte[b] = id;
    }

    /* special ids: defaults out of range are dropped; GGUF values out of range are ignored */
    {
        struct { const char *key; int32_t *id; } sp[] = {
            {"tokenizer.ggml.bos_token_id", &t->bos}, {"tokenizer.ggml.eos_token_id", &t->eos},
            {"tokenizer.ggml.eot_token_id", &t->eot}, {"tokenizer.ggml.eom_token_id", &t->eom},
            {"tokenizer.ggml.unknown_token_id", &t->unk}, {"tokenizer.ggml.seperator_token_id", &t->sep},
            {"tokenizer.ggml.padding_token_id", &t->pad}, {"tokenizer.ggml.mask_token_id", &t->mask},
            {"tokenizer.ggml.fim_pre_token_id", &t->fim_pre}, {"tokenizer.ggml.fim_suf_token_id", &t->fim_suf},
            {"tokenizer.ggml.fim_mid_token_id", &t->fim_mid}, {"tokenizer.ggml.fim_pad_token_id", &t->fim_pad},
            {"tokenizer.ggml.fim_rep_token_id", &t->fim_rep}, {"tokenizer.ggml.fim_sep_token_id", &t->fim_sep},
            {"tokenizer.ggml.prefix_token_id", &t->fim_pre}, {"tokenizer.ggml.suffix_token_id", &t->fim_suf},
            {"tokenizer.ggml.middle_token_id", &t->fim_mid},
        };
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
            if (*sp[i].id >= t->n_vocab) *sp[i].id = -1;
            int64_t k = sn_gguf_find_key(g, sp[i].key);
            if (k < 0) continue;
            if (sn_gguf_kv_type(g, k) != SN_GGUF_U32) {
                st = sn_err_set(err, SN_EFORMAT, "tokenizer: key %s has type %s, expected u32", sp[i].key,
                                sn_gguf_type_name(sn_gguf_kv_type(g, k)));
                goto fail;
            }
            uint32_t v = sn_gguf_get_u32(g, k);
            if (v < (uint32_t)t->n_vocab) *sp[i].id = (int32_t)v;
        }
    }
    if ((st = get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err))) goto fail;
    if ((st = get_bool(g, "tokenizer.ggml.add_eos_token", &t->add_eos, err))) goto fail;
    if (t->gemma4) t->add_bos = true; /* llama.cpp's Gemma 4 workaround */

    /* llama.cpp's fix-ups by token text: EOT/EOM/FIM detection forces CONTROL on the token found
     * (llama.cpp takes the first match in its hash-map order; we take the first name of the list that
     * exists, which agrees for Llama 3, Qwen 2/3, Phi-3 and StarCoder vocabs), then "unused" control
     * tokens, the EOG list, and the gpt-oss tokens that must render as USER_DEFINED. */
    {
        static const char *const eot_names[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
            "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
            "<end_of_utterance>", NULL};
        static const char *const eom_names[] = {"<|eom_id|>", NULL};
        static const char *const pre_names[] = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
            "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", NULL};
        static const char *const suf_names[] = {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
            "<\xef\xbd\x9c" "fim\xe2\x96\x81hole\xef\xbd\x9c>", "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>", NULL};
        static const char *const mid_names[] = {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
            "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>", NULL};
        static const char *const pad_names[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL};
        static const char *const rep_names[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", NULL};
        static const char *const sep_names[] = {"<|file_sep|>", NULL};
        struct { int32_t *id; const char *const *names; } det[] = {
            {&t->eot, eot_names}, {&t->eom, eom_names}, {&t->fim_pre, pre_names}, {&t->fim_suf, suf_names},
            {&t->fim_mid, mid_names}, {&t->fim_pad, pad_names}, {&t->fim_rep, rep_names}, {&t->fim_sep, sep_names},
        };
        for (size_t d = 0; d < sizeof det / sizeof det[0]; d++) {
            if (*det[d].id >= 0) continue;
            for (const char *const *nm = det[d].names; *nm && *det[d].id < 0; nm++) {
                int32_t id = tok_find(t, *nm, strlen(*nm));
                if (id >= 0) { *det[d].id = id; t->tok[id].attr |= A_CONTROL; }
            }
        }
        for (int32_t id = 0; id < t->n_vocab; id++)
            if ((t->tok[id].attr & A_CONTROL) && strstr(t->arena + t->tok[id].off, "unused"))
                t->tok[id].attr |= A_UNUSED;
        static const char *const eog_names[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
            "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>",
            "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
            "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>", "[e~[", NULL};
        if (t->fim_pad >= 0) t->eog[t->fim_pad] = 1;
        if (t->fim_rep >= 0) t->eog[t->fim_rep] = 1;
        if (t->fim_sep >= 0) t->eog[t->fim_sep] = 1;
        for (int32_t id = 0; id < t->n_vocab; id++) {
            for (const char *const *nm = eog_names; *nm; nm++)
                if (str_eq(t, id, *nm)) { t->eog[id] = 1; t->tok[id].attr |= A_CONTROL; break; }
            if (str_eq(t, id, "<|channel|>") || str_eq(t, id, "<|message|>") || str_eq(t, id, "<|start|>") ||
                str_eq(t, id, "<|constrain|>"))
                t->tok[id].attr = A_USER_DEFINED;
        }
        if (t->eos >= 0) t->eog[t->eos] = 1;
        if (t->eot >= 0) t->eog[t->eot] = 1;
        if (t->eom >= 0) t->eog[t->eom] = 1;
        /* o200k_harmony / solar-open: <|end|> is not EOG when <|return|>+<|call|> (or <|calls|>+<|flush|>) are */
        int32_t end_id = -1;
        bool has_return = false, has_call = false, has_flush = false, has_tool_response = false;
        int32_t s_id = -1;
        for (int32_t id = 0; id < t->n_vocab; id++) {
            if (!t->eog[id]) continue;
            if (str_eq(t, id, "<|return|>")) has_return = true;
            else if (str_eq(t, id, "<|call|>") || str_eq(t, id, "<|calls|>")) has_call = true;
            else if (str_eq(t, id, "<|flush|>")) has_flush = true;
            else if (str_eq(t, id, "<|end|>")) end_id = id;
            if (str_eq(t, id, "<|tool_response>")) has_tool_response = true;
            if (str_eq(t, id, "</s>")) s_id = id;
        }
        if (end_id >= 0 && ((has_return && has_call) || (has_call && has_flush))) {
            t->eog[end_id] = 0;
            t->tok[end_id].attr = A_USER_DEFINED;
        }
        if (has_tool_response && s_id >= 0) {
            t->eog[s_id] = 0;
            t->tok[s_id].attr = A_NORMAL;
        }
    }

    /* special tokens cut out of the text, longest first */
    t->special = malloc(nv * sizeof *t->special);
    if (!t->special) goto oom;
    for (int32_t id = 0; id < t->n_vocab; id++)
        if (t->tok[id].attr & (A_CONTROL | A_USER_DEFINED | A_UNKNOWN)) t->special[t->n_special++] = id;
    qsort_r(t->special, t->n_special, sizeof *t->special, cmp_special, t);

    /* per-model strip attributes (llama.cpp sets them by model/pre/arch name) */
    {
        char lname[256] = "";
        if (gname) {
            size_t i = 0;
            for (; gname[i] && i + 1 < sizeof lname; i++)
                lname[i] = (gname[i] >= 'A' && gname[i] <= 'Z') ? (char)(gname[i] + 32) : gname[i];
            lname[i] = 0;
        }
        const char *p = pre ? pre : "", *a = garch ? garch : "";
        if (strstr(p, "jina-v2-de") || strstr(p, "jina-v2-es") || strstr(p, "jina-v2-code") ||
            strstr(a, "nomic-bert-moe") || strstr(a, "jina-bert-v3")) {
            int32_t id = tok_find(t, "<mask>", 6);
            if (id >= 0) t->tok[id].attr |= A_LSTRIP;
        } else if (strstr(lname, "phi-3") || strstr(lname, "phi3")) {
            for (size_t i = 0; i < t->n_special; i++) t->tok[t->special[i]].attr |= A_RSTRIP;
            int32_t id = tok_find(t, "</s>", 4);
            if (id >= 0) t->tok[id].attr |= A_RSTRIP;
            const char *norstrip[] = {"<unk>", "<s>", "<|endoftext|>"};
            for (int i = 0; i < 3; i++) {
                id = tok_find(t, norstrip[i], strlen(norstrip[i]));
                if (id >= 0) t->tok[id].attr &= ~(uint32_t)A_RSTRIP;
            }
        } else if (strstr(lname, "modern-bert")) {
            int32_t id = tok_find(t, "[MASK]", 6);
            if (id >= 0) t->tok[id].attr |= A_LSTRIP;
        }
    }

    free(model); free(pre); free(gname); free(garch);
    *out = t;
    return SN_OK;
oom:
    st = sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
fail:
    free(model); free(pre); free(gname); free(garch);
    sn_tok_free(t);
    return st;
}
