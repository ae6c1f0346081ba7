/* tok_internal.h - what the tokenizer's source files share (internal to runtime/, not an API).
 *
 * tokenizer.c owns the vocabulary: loading, special tokens, detokenizing; each tokenizer.ggml.model
 * is an sn_tok_ops row in its own file: tok_spm.c (SentencePiece, "llama"), tok_bpe.c (byte-level
 * BPE, "gpt2"/"gemma4"), tok_rwkv.c (the RWKV world trie); tok_merge.c is the merge queue SPM and
 * BPE share.
 * tok_pretok.c owns the BPE pre-tokenizer: llama.cpp's regex list per tokenizer.ggml.pre, its
 * hand-written splitters and the two PCRE2 paths. Both read UTF-8 and classify code points exactly
 * as llama.cpp does, which is what makes the ids equal. */
#ifndef SN_TOK_INTERNAL_H
#define SN_TOK_INTERNAL_H
#include "sn_err.h"
#include "unicode_data.h"
#include "utf8.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable buffers ---- */
typedef struct { int32_t *v; size_t n, cap; } ivec;
typedef struct { char *v; size_t n, cap; } bbuf;
typedef struct { uint32_t *v; size_t n, cap; } uvec;

static inline bool grow(void **p, size_t *cap, size_t need, size_t elem) {
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
static inline bool ivec_push(ivec *a, int32_t x) {
    if (!grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v)) return false;
    a->v[a->n++] = x;
    return true;
}
static inline bool uvec_push(uvec *a, uint32_t x) {
    if (!grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v)) return false;
    a->v[a->n++] = x;
    return true;
}
static inline bool bbuf_add(bbuf *b, const void *p, size_t n) {
    if (n > SIZE_MAX - b->n - 1) return false;
    if (!grow((void **)&b->v, &b->cap, b->n + n + 1, 1)) return false;
    if (n) memcpy(b->v + b->n, p, n);
    b->n += n;
    b->v[b->n] = 0;
    return true;
}

/* ---- UTF-8 and code point classes, as llama.cpp reads them ---- */
/* UTF-8: utf8.h's lax reading (sn_utf8_next, sn_utf8_seq_len, sn_utf8_put). */

/* ---- the tokenizer and its per-model ops ---- */
#include "gguf.h"
typedef struct sn_tokenizer sn_tokenizer;
typedef struct sn_pretok sn_pretok;
typedef struct sn_tok_ops {
    const char *const *models; /* tokenizer.ggml.model values it serves, NULL-terminated */
    /* llama.cpp's loader defaults for the model (special ids, flags); may replace *pre */
    sn_status (*init)(sn_tokenizer *t, const char *model, char **pre, sn_err *err);
    /* model tables built after the tokens are loaded (merges, pair set, trie); may be NULL */
    sn_status (*build)(sn_tokenizer *t, const sn_gguf *g, sn_err *err);
    /* ids of one raw-text fragment; after_special: it starts the text or follows a special
     * token; scratch is a reusable buffer */
    sn_status (*encode)(const sn_tokenizer *t, const char *p, size_t n, bool after_special, bbuf *scratch,
                        ivec *out, sn_err *err);
    /* bytes of a NORMAL token */
    bool (*normal_piece)(const sn_tokenizer *t, int32_t id, bbuf *b);
    /* bytes of any token, when the model ignores the attribute (RWKV); NULL otherwise */
    bool (*full_piece)(const sn_tokenizer *t, int32_t id, bbuf *b);
    void (*free)(sn_tokenizer *t); /* releases model_data; may be NULL */
} sn_tok_ops;

typedef struct { uint32_t off, len; float score; uint32_t attr; } tok_info;
typedef struct { uint32_t loff, llen, roff, rlen; } merge_info; /* into the merge arena */

struct sn_tokenizer {
    const sn_tok_ops *ops; /* the tokenizer.ggml.model's algorithm */
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
    sn_pretok *pretok;     /* BPE: splits text into pieces before merging */
    char byte_enc[256][3]; /* GPT-2 bytes_to_unicode as UTF-8 (NUL-terminated, 1-2 bytes) */
    int16_t byte_dec[0x144]; /* its inverse: code point -> byte, -1 if none */
    void *model_data;      /* owned by ops (e.g. the RWKV trie) */
};

/* Token id whose text is s[0..n), or -1. */
int32_t sn_tok_find(const sn_tokenizer *t, const char *s, size_t n);
extern const sn_tok_ops sn_tok_spm_ops;  /* tok_spm.c */
extern const sn_tok_ops sn_tok_bpe_ops;  /* tok_bpe.c */
extern const sn_tok_ops sn_tok_rwkv_ops; /* tok_rwkv.c */
/* The piece of a NORMAL SPM token: U+2581 -> ' ' (tok_spm.c; SPM-style BPE uses it too). */
bool sn_tok_spm_normal_piece(const sn_tokenizer *t, int32_t id, bbuf *b);

/* ---- hashing: token text -> id, merge pair -> rank (open addressing, linear probing) ---- */
#define SN_TOK_HASH_SEED 0xcbf29ce484222325ull
static inline uint64_t sn_tok_hash(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
/* Slots for n entries: a power of two above 2n. */
static inline uint64_t sn_tok_slot_count(uint64_t n) {
    uint64_t c = 16;
    while (c < n * 2 + 1) c <<= 1;
    return c;
}
/* Hash of the pair (l, r), as BPE merges and the SPM pair set key it. */
static inline uint64_t sn_tok_merge_hash(const char *l, size_t ln, const char *r, size_t rn) {
    uint64_t h = sn_tok_hash(SN_TOK_HASH_SEED, l, ln);
    h ^= 0xFF; /* separator that cannot occur inside UTF-8 text */
    h *= 0x100000001b3ull;
    return sn_tok_hash(h, r, rn);
}

/* ---- the merge queue shared by SPM (score, higher first) and BPE (rank, lower first), tok_merge.c ---- */
typedef struct { int32_t prev, next; uint32_t off, n; } symbol;
typedef struct { double key; int32_t left, right; uint32_t size; } bigram; /* key: -score or rank */
typedef struct { bigram *v; size_t n, cap; } heap;
typedef struct { symbol *v; size_t n, cap; } symvec;
/* Pushes b; false when out of memory. Ties go to the leftmost pair, as in llama.cpp's comparators. */
bool sn_tok_heap_push(heap *h, bigram b);
bigram sn_tok_heap_pop(heap *h); /* h must not be empty */
/* s[0..n) as one symbol per UTF-8 sequence, linked left to right; false when out of memory. */
bool sn_tok_split_symbols(symvec *sy, const char *s, size_t n);


/* ---- pre-tokenizer ---- */
enum { /* what a tokenizer.ggml.pre value implies beyond its regexes (llama.cpp's loader) */
    SN_PRE_IGNORE_MERGES = 1, /* a piece that is itself a token is emitted whole */
    SN_PRE_ADD_BOS = 2,       /* add_bos defaults to true */
    SN_PRE_KEEP_SPACES = 4,   /* no clean_up_tokenization_spaces in the detokenizer */
    SN_PRE_NO_BOS_ID = 8,     /* the default BOS id is dropped (glm4) */
    SN_PRE_SPM_STYLE = 16,    /* spaces -> U+2581 before BPE, raw UTF-8 symbols, <0xNN> byte tokens */
    SN_PRE_GEMMA4 = 32        /* add_bos forced on; an all-newline piece that is a token stays whole */
};
/* Looks up pre (NULL or "" means "default", as llama.cpp) and compiles its regex list; *flags gets
 * SN_PRE_*. Unknown names are SN_EFORMAT, known but unimplemented ones SN_EUNSUPPORTED. */
sn_status sn_pretok_new(const char *pre, sn_pretok **out, unsigned *flags, sn_err *err);
void sn_pretok_free(sn_pretok *p);
/* Splits cp[0..n) into pre-tokens; *pieces (malloc'd, caller frees) gets their lengths in code points. */
sn_status sn_pretok_split(const sn_pretok *p, const uint32_t *cp, size_t n, uvec *pieces, sn_err *err);

#endif
