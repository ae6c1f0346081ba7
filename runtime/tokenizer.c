/* tokenizer.c - llama.cpp-compatible SPM and byte-level BPE tokenizers over a GGUF's tokenizer.*.
 *
 * The goal is not "a correct tokenizer" but "the ids llama.cpp produces for the same GGUF", because
 * that is what Ollama and LM Studio feed the model. So this file reproduces llama.cpp's rules,
 * including its quirks: its loader defaults and attribute fix-ups, the order in which special tokens
 * are cut out of the text, its merge-queue tie-breaks, its byte fallbacks and its detokenizer's
 * space cleanup. How BPE text is split into pieces first (regex lists, hand-written splitters,
 * Unicode classes) lives in tok_pretok.c. docs/TOKENIZER.md ("Runtime tokenizer") lists the rules
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
 * hashing: token text -> id, merge pair -> rank (open addressing, linear probing) */

static uint64_t hash_bytes(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define HASH_SEED 0xcbf29ce484222325ull

static uint64_t slot_count(uint64_t n) {
    uint64_t c = 16;
    while (c < n * 2 + 1) c <<= 1;
    return c;
}

int32_t sn_tok_find(const sn_tokenizer *t, const char *s, size_t n) {
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
        size_t l = sn_tok_utf8_len((unsigned char)s[off]);
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
    int32_t id = sn_tok_find(t, s + sy->v[l].off, size);
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
        int32_t id = sn_tok_find(t, s + x->off, x->n);
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
        size_t l = sn_tok_utf8_len((unsigned char)s[off]);
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
            size_t l = sn_tok_utf8_len((unsigned char)s[off]);
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
        int32_t id = sn_tok_find(t, w, n);
        if (id >= 0) return ivec_push(out, id);
    } else if (t->gemma4) {
        size_t k = 0;
        while (k < n && w[k] == '\n') k++;
        int32_t id = k == n ? sn_tok_find(t, w, n) : -1;
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
        int32_t id = sn_tok_find(t, w + x->off, x->n);
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
                bid = sn_tok_find(t, hx, 6);
            } else {
                bid = sn_tok_find(t, w + x->off + j, 1);
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
        if (!uvec_push(&cp, sn_tok_utf8_next((const unsigned char *)s, n, &off))) goto oom;
    st = sn_pretok_split(t->pretok, cp.v, cp.n, &pieces, err);
    if (st) goto done;
    size_t start = 0;
    for (size_t p = 0; p < pieces.n; p++) {
        word.n = 0;
        for (size_t i = start; i < start + pieces.v[p]; i++) {
            char u[4];
            int l = sn_tok_utf8_put(cp.v[i], u);
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

/* The three encoders of one raw-text fragment (sn_tok_ops.encode). */
static sn_status spm_encode(const sn_tokenizer *t, const char *p, size_t n, bool after_special, bbuf *s, ivec *out,
                            sn_err *err) {
    s->n = 0;
    if (t->add_space_prefix && after_special && !bbuf_add(s, "\xe2\x96\x81", 3))
        return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    for (size_t j = 0; j < n; j++) {
        bool ok = p[j] == ' ' ? bbuf_add(s, "\xe2\x96\x81", 3) : bbuf_add(s, p + j, 1);
        if (!ok) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    }
    return spm_tokenize(t, s->v ? s->v : "", s->n, out, err);
}

static sn_status bpe_encode(const sn_tokenizer *t, const char *p, size_t n, bool after_special, bbuf *s, ivec *out,
                            sn_err *err) {
    (void)after_special;
    if (!t->spm_style_bpe) return bpe_tokenize(t, p, n, out, err);
    s->n = 0;
    for (size_t j = 0; j < n; j++) {
        bool ok = p[j] == ' ' ? bbuf_add(s, "\xe2\x96\x81", 3) : bbuf_add(s, p + j, 1);
        if (!ok) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    }
    return bpe_tokenize(t, s->v, s->n, out, err);
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

/* The piece of a NORMAL token (sn_tok_ops.normal_piece): SPM and SPM-style BPE turn U+2581 into
 * spaces; byte-level BPE maps the GPT-2 byte alphabet back to bytes. */
static bool spm_normal_piece(const sn_tokenizer *t, int32_t id, bbuf *b) {
    const tok_info *ti = &t->tok[id];
    const char *s = t->arena + ti->off;
    for (size_t i = 0; i < ti->len; i++) {
        if (i + 2 < ti->len && !memcmp(s + i, "\xe2\x96\x81", 3)) {
            if (!bbuf_add(b, " ", 1)) return false;
            i += 2;
        } else if (!bbuf_add(b, s + i, 1)) return false;
    }
    return true;
}

static bool bpe_normal_piece(const sn_tokenizer *t, int32_t id, bbuf *b) {
    if (t->spm_style_bpe) return spm_normal_piece(t, id, b);
    const tok_info *ti = &t->tok[id];
    const char *s = t->arena + ti->off;
    size_t off = 0;
    while (off < ti->len) {
        uint32_t c = sn_tok_utf8_next((const unsigned char *)s, ti->len, &off);
        int byte = c < 0x144 ? t->byte_dec[c] : -1;
        if (byte >= 0) {
            char ch = (char)byte;
            if (!bbuf_add(b, &ch, 1)) return false;
        } else {
            char u[4], hex[16];
            int l = sn_tok_utf8_put(c, u);
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

static void gpt2_byte_encoder(sn_tokenizer *t) {
    int n = 0;
    for (int c = 0; c < 0x144; c++) t->byte_dec[c] = -1;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint32_t cp = printable ? (uint32_t)b : (uint32_t)(256 + n++);
        int l = sn_tok_utf8_put(cp, t->byte_enc[b]);
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

/* BPE: tokenizer.ggml.merges, ranked by position; the first occurrence of a pair keeps its rank. */
static sn_status load_merges(sn_tokenizer *t, const sn_gguf *g, sn_err *err) {
    sn_status st = SN_OK;
    int64_t mi = sn_gguf_find_key(g, "tokenizer.ggml.merges");
    if (mi < 0) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: gpt2 vocab without tokenizer.ggml.merges"); return st; }
    if (sn_gguf_kv_type(g, mi) != SN_GGUF_ARR || sn_gguf_arr_type(g, mi) != SN_GGUF_STR) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.merges is not an array of strings"); return st;
    }
    uint64_t nm = sn_gguf_arr_n(g, mi);
    if (nm > INT32_MAX / 4) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: %llu merges is too many", (unsigned long long)nm); return st; }
    size_t mtotal = 1;
    for (uint64_t i = 0; i < nm; i++) {
        sn_gguf_str s = sn_gguf_arr_str(g, mi, i);
        if (s.len > UINT32_MAX / 2 || mtotal > SIZE_MAX - s.len) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: merge %llu is too long", (unsigned long long)i); return st; }
        mtotal += s.len;
    }
    if (mtotal > UINT32_MAX) { st = sn_err_set(err, SN_EFORMAT, "tokenizer: merges exceed 4 GiB"); return st; }
    t->marena = malloc(mtotal);
    t->merge = calloc(nm ? nm : 1, sizeof *t->merge);
    uint64_t nms = slot_count(nm);
    t->mslot = malloc(nms * sizeof *t->mslot);
    if (!t->marena || !t->merge || !t->mslot) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
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
    return SN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The tokenizer models (sn_tok_ops): loader defaults, model tables, encoder, piece. */

static sn_status spm_init(sn_tokenizer *t, const char *model, char **pre, sn_err *err) {
    (void)model; (void)pre; (void)err;
    t->bos = 1; t->eos = 2; t->unk = 0;
    t->add_space_prefix = true; t->add_bos = true; t->add_eos = false; t->clean_spaces = false;
    return SN_OK;
}

static sn_status bpe_init(sn_tokenizer *t, const char *model, char **pre, sn_err *err) {
    t->bos = 11; t->eos = 11; t->unk = -1;
    if (!strcmp(model, "gemma4")) { /* llama.cpp: no default ids, pre forced to gemma4 */
        t->bos = t->eos = -1;
        free(*pre);
        *pre = strdup("gemma4");
        if (!*pre) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    }
    t->add_space_prefix = false; t->clean_spaces = true;
    unsigned pf = 0;
    sn_status st = sn_pretok_new(*pre, &t->pretok, &pf, err);
    if (st) return st;
    t->ignore_merges = pf & SN_PRE_IGNORE_MERGES;
    t->add_bos = pf & SN_PRE_ADD_BOS;
    if (pf & SN_PRE_KEEP_SPACES) t->clean_spaces = false;
    if (pf & SN_PRE_NO_BOS_ID) t->bos = -1;
    t->spm_style_bpe = pf & SN_PRE_SPM_STYLE;
    t->gemma4 = pf & SN_PRE_GEMMA4;
    return SN_OK;
}

static sn_status spm_build(sn_tokenizer *t, const sn_gguf *g, sn_err *err) {
    (void)g;
    return build_pairs(t) ? SN_OK : sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
}

static const char *const k_spm_models[] = {"llama", NULL}, *const k_bpe_models[] = {"gpt2", "gemma4", NULL};
static const sn_tok_ops k_spm_ops = {k_spm_models, spm_init, spm_build, spm_encode, spm_normal_piece, NULL, NULL};
static const sn_tok_ops k_bpe_ops = {k_bpe_models, bpe_init, load_merges, bpe_encode, bpe_normal_piece, NULL, NULL};
static const sn_tok_ops *const k_tok_ops[] = {&k_spm_ops, &k_bpe_ops, &sn_tok_rwkv_ops};
static const char k_tok_models[] = "llama, gpt2, gemma4, rwkv";

sn_status sn_tok_load(const sn_gguf *g, sn_tokenizer **out, sn_err *err) {
    if (!g || !out) return sn_err_set(err, SN_EINVAL, "tokenizer: NULL argument");
    *out = NULL;
    sn_status st = SN_OK;
    sn_tokenizer *t = calloc(1, sizeof *t);
    char *model = NULL, *pre = NULL, *gname = NULL, *garch = NULL;
    if (!t) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
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
