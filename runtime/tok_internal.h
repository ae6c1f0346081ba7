/* tok_internal.h - what the tokenizer's two source files share (internal to runtime/, not an API).
 *
 * tokenizer.c owns the vocabulary: loading, merges, special tokens, SPM/BPE merging, detokenizing.
 * tok_pretok.c owns the BPE pre-tokenizer: llama.cpp's regex list per tokenizer.ggml.pre, its
 * hand-written splitters and the two PCRE2 paths. Both read UTF-8 and classify code points exactly
 * as llama.cpp does, which is what makes the ids equal. */
#ifndef SN_TOK_INTERNAL_H
#define SN_TOK_INTERNAL_H
#include "sn_err.h"
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
/* Length of the sequence a lead byte announces (1 for continuation bytes), without validation. */
static inline size_t sn_tok_utf8_len(unsigned char c) {
    static const uint8_t lut[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lut[c >> 4];
}
/* Decodes the code point at *off (advancing it); a bad sequence gives U+FFFD and one byte. */
uint32_t sn_tok_utf8_next(const unsigned char *s, size_t n, size_t *off);
/* Encodes cp (no surrogate check); returns 1..4, or 0 past U+10FFFF. */
int sn_tok_utf8_put(uint32_t cp, char *out);
/* SN_UCD_* class bits of cp (unicode_data.h). */
uint16_t sn_tok_cp_flags(uint32_t cp);

/* ---- pre-tokenizer ---- */
enum { /* what a tokenizer.ggml.pre value implies beyond its regexes (llama.cpp's loader) */
    SN_PRE_IGNORE_MERGES = 1, /* a piece that is itself a token is emitted whole */
    SN_PRE_ADD_BOS = 2,       /* add_bos defaults to true */
    SN_PRE_KEEP_SPACES = 4,   /* no clean_up_tokenization_spaces in the detokenizer */
    SN_PRE_NO_BOS_ID = 8,     /* the default BOS id is dropped (glm4) */
    SN_PRE_SPM_STYLE = 16,    /* spaces -> U+2581 before BPE, raw UTF-8 symbols, <0xNN> byte tokens */
    SN_PRE_GEMMA4 = 32        /* add_bos forced on; an all-newline piece that is a token stays whole */
};
typedef struct sn_pretok sn_pretok;
/* Looks up pre (NULL or "" means "default", as llama.cpp) and compiles its regex list; *flags gets
 * SN_PRE_*. Unknown names are SN_EFORMAT, known but unimplemented ones SN_EUNSUPPORTED. */
sn_status sn_pretok_new(const char *pre, sn_pretok **out, unsigned *flags, sn_err *err);
void sn_pretok_free(sn_pretok *p);
/* Splits cp[0..n) into pre-tokens; *pieces (malloc'd, caller frees) gets their lengths in code points. */
sn_status sn_pretok_split(const sn_pretok *p, const uint32_t *cp, size_t n, uvec *pieces, sn_err *err);

#endif
