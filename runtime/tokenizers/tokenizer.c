/* tokenizer.c - llama.cpp-compatible tokenizers over a GGUF's tokenizer.*: the model-independent part.
 *
 * The goal is not "a correct tokenizer" but "the ids llama.cpp produces for the same GGUF", because
 * that is what Ollama and LM Studio feed the model. So this file reproduces llama.cpp's rules,
 * including its quirks: its loader defaults and attribute fix-ups, the order in which special tokens
 * are cut out of the text, its merge-queue tie-breaks, its byte fallbacks and its detokenizer's
 * space cleanup. This file loads the vocabulary and applies the fix-ups, cuts special tokens out,
 * detokenizes, and hands each raw-text fragment to the model's sn_tok_ops row (tok_spm.c, tok_bpe.c,
 * tok_rwkv.c; tok_internal.h). How BPE text is split into pieces first (regex lists, hand-written
 * splitters, Unicode classes) lives in tok_pretok.c. docs/TOKENIZER.md ("Runtime tokenizer") lists the rules
 * and the places where llama.cpp itself differs from HF tokenizers. */
#include "tokenizer.h"
#include "tok_internal.h"

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

/* ---------------------------------------------------------------------------------------------
 * token text -> id (open addressing, linear probing; sn_tok_hash in tok_internal.h) */

int32_t sn_tok_find(const sn_tokenizer *t, const char *s, size_t n) {
    uint64_t h = sn_tok_hash(SN_TOK_HASH_SEED, s, n) & t->tmask;
    for (;;) {
        int32_t id = t->tslot[h];
        if (id < 0) return -1;
        const tok_info *ti = &t->tok[id];
        if (ti->len == n && memcmp(t->arena + ti->off, s, n) == 0) return id;
        h = (h + 1) & t->tmask;
    }
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
        st = t->ops->encode(t, p, n, prev_special, &s, &out, err);
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
    if (t->ops->full_piece) return t->ops->full_piece(t, id, b);
    const tok_info *ti = &t->tok[id];
    const char *s = t->arena + ti->off;
    if (ti->attr & (A_UNKNOWN | A_CONTROL | A_USER_DEFINED)) return bbuf_add(b, s, ti->len);
    if (ti->attr & A_NORMAL) return t->ops->normal_piece(t, id, b);
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
sn_tok_special_ids sn_tok_specials(const sn_tokenizer *t) {
    return (sn_tok_special_ids){.bos = t->bos, .eos = t->eos, .eot = t->eot, .add_bos = t->add_bos, .add_eos = t->add_eos};
}
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
    if (t->ops && t->ops->free) t->ops->free(t);
    sn_pretok_free(t->pretok);
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

static int cmp_special(const void *a, const void *b, void *ctx) {
    const sn_tokenizer *t = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (t->tok[x].len != t->tok[y].len) return t->tok[x].len > t->tok[y].len ? -1 : 1;
    return (x > y) - (x < y);
}

/* The tokenizer models (sn_tok_ops), one file each: loader defaults, model tables, encoder, piece. */
static const sn_tok_ops *const k_tok_ops[] = {&sn_tok_spm_ops, &sn_tok_bpe_ops, &sn_tok_rwkv_ops};
static const char k_tok_models[] = "llama, gpt2, gemma4, rwkv";

sn_status sn_tok_load(const sn_gguf *g, sn_tokenizer **out, sn_err *err) {
    if (!g || !out) return sn_err_set(err, SN_EINVAL, "tokenizer: NULL argument");
    *out = NULL;
    sn_status st = SN_OK;
    sn_tokenizer *t = calloc(1, sizeof *t);
    char *model = NULL, *pre = NULL, *gname = NULL, *garch = NULL;
    if (!t) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");

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
    for (size_t i = 0; i < sizeof(k_tok_ops) / sizeof(k_tok_ops[0]) && !t->ops; i++)
        for (const char *const *nm = k_tok_ops[i]->models; *nm; nm++)
            if (!strcmp(model, *nm)) t->ops = k_tok_ops[i];
    if (!t->ops) {
        st = sn_err_set(err, SN_EUNSUPPORTED, "tokenizer: tokenizer model '%s' is not supported (supported: %s)", model,
                        k_tok_models);
        goto fail;
    }
    if ((st = t->ops->init(t, model, &pre, err))) goto fail;
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
    uint64_t ns = sn_tok_slot_count(nv);
    t->tslot = malloc(ns * sizeof *t->tslot);
    if (!t->tslot) goto oom;
    memset(t->tslot, 0xFF, ns * sizeof *t->tslot);
    t->tmask = ns - 1;
    for (uint64_t i = 0; i < nv; i++) {
        const tok_info *tk = &t->tok[i];
        uint64_t h = sn_tok_hash(SN_TOK_HASH_SEED, t->arena + tk->off, tk->len) & t->tmask;
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

    if (t->ops->build && (st = t->ops->build(t, g, err))) goto fail;


    /* SPM byte fallback table (<0xNN>, else the raw byte) */
    for (int b = 0; b < 256; b++) {
        char hx[8];
        snprintf(hx, sizeof hx, "<0x%02X>", b);
        int32_t id = sn_tok_find(t, hx, 6);
        if (id < 0) { char c = (char)b; id = sn_tok_find(t, &c, 1); }
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
                int32_t id = sn_tok_find(t, *nm, strlen(*nm));
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
            int32_t id = sn_tok_find(t, "<mask>", 6);
            if (id >= 0) t->tok[id].attr |= A_LSTRIP;
        } else if (strstr(lname, "phi-3") || strstr(lname, "phi3")) {
            for (size_t i = 0; i < t->n_special; i++) t->tok[t->special[i]].attr |= A_RSTRIP;
            int32_t id = sn_tok_find(t, "</s>", 4);
            if (id >= 0) t->tok[id].attr |= A_RSTRIP;
            const char *norstrip[] = {"<unk>", "<s>", "<|endoftext|>"};
            for (int i = 0; i < 3; i++) {
                id = sn_tok_find(t, norstrip[i], strlen(norstrip[i]));
                if (id >= 0) t->tok[id].attr &= ~(uint32_t)A_RSTRIP;
            }
        } else if (strstr(lname, "modern-bert")) {
            int32_t id = sn_tok_find(t, "[MASK]", 6);
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
