/* tok_merge.c - the merge queue SPM and BPE share (llama.cpp's llm_bigram_spm / llm_bigram_bpe queues).
 *
 * Text is a linked list of symbols (one per UTF-8 sequence); candidate pairs wait in a binary heap
 * keyed by -score (SPM) or rank (BPE), ties to the leftmost pair as in llama.cpp's comparators. A
 * popped pair whose symbols changed since it was queued is stale and skipped by the caller. */
#include "tok_internal.h"

static inline bool bg_before(const bigram *a, const bigram *b) {
    return a->key < b->key || (a->key == b->key && a->left < b->left);
}
bool sn_tok_heap_push(heap *h, bigram b) {
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
bigram sn_tok_heap_pop(heap *h) {
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

bool sn_tok_split_symbols(symvec *sy, const char *s, size_t n) {
    sy->n = 0;
    size_t off = 0;
    while (off < n) {
        size_t l = sn_utf8_seq_len((unsigned char)s[off]);
        if (l > n - off) l = n - off;
        if (!grow((void **)&sy->v, &sy->cap, sy->n + 1, sizeof *sy->v)) return false;
        int32_t idx = (int32_t)sy->n;
        sy->v[sy->n++] = (symbol){idx - 1, off + l == n ? -1 : idx + 1, (uint32_t)off, (uint32_t)l};
        off += l;
    }
    return true;
}
