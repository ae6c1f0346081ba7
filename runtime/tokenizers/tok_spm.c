/* tok_spm.c - the SentencePiece tokenizer model (tokenizer.ggml.model "llama"), as llama.cpp runs it.
 *
 * llm_tokenizer_spm_session: spaces become U+2581 (plus one in front at the start of the text or
 * after a special token when add_space_prefix), adjacent symbols merge by highest token score,
 * and a symbol that is no token falls back to its <0xNN> byte tokens. The text is first cut where
 * two characters stand that no token holds side by side, so each queue stays small. */
#include "tok_internal.h"
#include "tokenizer.h"

#include <stdio.h>

/* SPM (llama.cpp llm_tokenizer_spm_session): text already has ' ' -> U+2581. */
static bool spm_try_bigram(const sn_tokenizer *t, const char *s, symvec *sy, heap *h, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return true;
    uint32_t size = sy->v[l].n + sy->v[r].n;
    int32_t id = sn_tok_find(t, s + sy->v[l].off, size);
    if (id < 0) return true;
    return sn_tok_heap_push(h, (bigram){-(double)t->tok[id].score, l, r, size});
}

static sn_status spm_tokenize_chunk(const sn_tokenizer *t, const char *s, size_t n, ivec *out, sn_err *err) {
    symvec sy = {0};
    heap h = {0};
    sn_status st = SN_OK;
    if (!sn_tok_split_symbols(&sy, s, n)) goto oom;
    for (size_t i = 1; i < sy.n; i++)
        if (!spm_try_bigram(t, s, &sy, &h, (int32_t)i - 1, (int32_t)i)) goto oom;
    while (h.n) {
        bigram b = sn_tok_heap_pop(&h);
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
    uint64_t h = sn_tok_merge_hash(a, an, b, bn);
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
        size_t l = sn_utf8_seq_len((unsigned char)s[off]);
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
    uint64_t ns = sn_tok_slot_count(total + 1);
    t->pairs = calloc(ns, sizeof *t->pairs);
    if (!t->pairs) return false;
    t->pmask = ns - 1;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        const char *s = t->arena + t->tok[id].off;
        size_t n = t->tok[id].len, prev = 0, off = 0;
        while (off < n) {
            size_t l = sn_utf8_seq_len((unsigned char)s[off]);
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

/* One raw-text fragment (sn_tok_ops.encode). */
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

/* The piece of a NORMAL token (sn_tok_ops.normal_piece): SPM and SPM-style BPE turn U+2581 into
 * spaces; byte-level BPE maps the GPT-2 byte alphabet back to bytes. */
bool sn_tok_spm_normal_piece(const sn_tokenizer *t, int32_t id, bbuf *b) {
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

static sn_status spm_init(sn_tokenizer *t, const char *model, char **pre, sn_err *err) {
    (void)model; (void)pre; (void)err;
    t->bos = 1; t->eos = 2; t->unk = 0;
    t->add_space_prefix = true; t->add_bos = true; t->add_eos = false; t->clean_spaces = false;
    return SN_OK;
}

static sn_status spm_build(sn_tokenizer *t, const sn_gguf *g, sn_err *err) {
    (void)g;
    return build_pairs(t) ? SN_OK : sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
}

static const char *const k_spm_models[] = {"llama", NULL};
const sn_tok_ops sn_tok_spm_ops = {k_spm_models, spm_init, spm_build, spm_encode, sn_tok_spm_normal_piece, NULL, NULL};
