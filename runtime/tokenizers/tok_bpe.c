/* tok_bpe.c - the byte-level BPE tokenizer model (tokenizer.ggml.model "gpt2", "gemma4"), as llama.cpp runs it.
 *
 * llm_tokenizer_bpe_session: the pre-tokenizer (tok_pretok.c) splits the text into pieces, each
 * piece is mapped to GPT-2's byte alphabet and merged by the rank of tokenizer.ggml.merges
 * (first occurrence of a pair wins), then looked up; unknown symbols fall back to one-byte tokens.
 * SPM-style BPE pre-tokenizers keep raw UTF-8 with U+2581 for spaces and <0xNN> byte tokens. */
#include "tok_internal.h"
#include "tokenizer.h"

#include <stdio.h>

static int32_t merge_find(const sn_tokenizer *t, const char *l, size_t ln, const char *r, size_t rn) {
    if (!t->mslot) return -1;
    uint64_t h = sn_tok_merge_hash(l, ln, r, rn) & t->mmask;
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

/* BPE merges over one byte-level-encoded pre-token (llama.cpp llm_tokenizer_bpe_session). */
static bool bpe_try_bigram(const sn_tokenizer *t, const char *s, symvec *sy, heap *h, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return true;
    const symbol *L = &sy->v[l], *R = &sy->v[r];
    int32_t rank = merge_find(t, s + L->off, L->n, s + R->off, R->n);
    if (rank < 0) return true;
    return sn_tok_heap_push(h, (bigram){(double)rank, l, r, L->n + R->n});
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
    if (!sn_tok_split_symbols(sy, w, n)) return false;
    h->n = 0;
    for (size_t i = 1; i < sy->n; i++)
        if (!bpe_try_bigram(t, w, sy, h, (int32_t)i - 1, (int32_t)i)) return false;
    while (h->n) {
        bigram b = sn_tok_heap_pop(h);
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
        if (!uvec_push(&cp, sn_utf8_next((const unsigned char *)s, n, &off))) goto oom;
    st = sn_pretok_split(t->pretok, cp.v, cp.n, &pieces, err);
    if (st) goto done;
    size_t start = 0;
    for (size_t p = 0; p < pieces.n; p++) {
        word.n = 0;
        for (size_t i = start; i < start + pieces.v[p]; i++) {
            char u[4];
            int l = sn_utf8_put(cp.v[i], u);
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

static bool bpe_normal_piece(const sn_tokenizer *t, int32_t id, bbuf *b) {
    if (t->spm_style_bpe) return sn_tok_spm_normal_piece(t, id, b);
    const tok_info *ti = &t->tok[id];
    const char *s = t->arena + ti->off;
    size_t off = 0;
    while (off < ti->len) {
        uint32_t c = sn_utf8_next((const unsigned char *)s, ti->len, &off);
        int byte = c < 0x144 ? t->byte_dec[c] : -1;
        if (byte >= 0) {
            char ch = (char)byte;
            if (!bbuf_add(b, &ch, 1)) return false;
        } else {
            char u[4], hex[16];
            int l = sn_utf8_put(c, u);
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

static void gpt2_byte_encoder(sn_tokenizer *t) {
    int n = 0;
    for (int c = 0; c < 0x144; c++) t->byte_dec[c] = -1;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint32_t cp = printable ? (uint32_t)b : (uint32_t)(256 + n++);
        int l = sn_utf8_put(cp, t->byte_enc[b]);
        t->byte_enc[b][l] = 0;
        t->byte_dec[cp] = (int16_t)b;
    }
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
    uint64_t nms = sn_tok_slot_count(nm);
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
        uint64_t h = sn_tok_merge_hash(l, m->llen, r, m->rlen) & t->mmask;
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

static sn_status bpe_init(sn_tokenizer *t, const char *model, char **pre, sn_err *err) {
    gpt2_byte_encoder(t);
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

static const char *const k_bpe_models[] = {"gpt2", "gemma4", NULL};
const sn_tok_ops sn_tok_bpe_ops = {k_bpe_models, bpe_init, load_merges, bpe_encode, bpe_normal_piece, NULL, NULL};
