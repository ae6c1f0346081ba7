/* tok_rwkv.c - the RWKV "world" tokenizer (tokenizer.ggml.model = "rwkv"), as llama.cpp runs it.
 *
 * The GGUF stores each token as Python's repr of its bytes without the b'' (\xNN, \t, \n, \r,
 * \\ and \' escapes). At load every token text is unescaped the way llama.cpp does it and put in a
 * byte trie, in id order, so a later id with the same bytes wins as in llama.cpp's naive_trie.
 * Encoding is greedy longest match from the left, one token at a time; special tokens were cut
 * out before (tokenizer.c). A piece is the unescaped bytes of any token, whatever its type. */
#include "tok_internal.h"
#include "tokenizer.h"

#include <stdio.h>

typedef struct {
    int32_t child, sibling, id; /* first child, next sibling (node indices, -1 none); id -1 = none */
    unsigned char byte;
} trie_node;

typedef struct {
    trie_node *n;
    size_t count, cap;
    int32_t root[256]; /* the first level, direct */
} trie;

/* llama.cpp's llama_unescape_rwkv_token: \t \n \r \xNN (hex digits read leniently), \c -> c. */
static size_t unescape(const char *s, size_t n, unsigned char *out) {
    size_t o = 0;
    int esc = 0, hex = 0;
    unsigned acc = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (hex) {
            acc = (acc << 4) + (c >= 'a' ? (unsigned)(c - 'a' + 10) : (unsigned)(c - '0'));
            if (--hex == 0) {
                out[o++] = (unsigned char)acc;
                acc = 0;
            }
            continue;
        }
        if (esc) {
            esc = 0;
            if (c == 't') out[o++] = '\t';
            else if (c == 'n') out[o++] = '\n';
            else if (c == 'r') out[o++] = '\r';
            else if (c == 'x') hex = 2;
            else out[o++] = c;
            continue;
        }
        if (c == '\\') esc = 1;
        else out[o++] = c;
    }
    return o;
}

static int32_t new_node(trie *tr, unsigned char b) {
    if (!grow((void **)&tr->n, &tr->cap, tr->count + 1, sizeof *tr->n) || tr->count >= INT32_MAX) return -1;
    tr->n[tr->count] = (trie_node){-1, -1, -1, b};
    return (int32_t)tr->count++;
}

static int32_t child_of(const trie *tr, int32_t node, unsigned char b) {
    for (int32_t c = tr->n[node].child; c >= 0; c = tr->n[c].sibling)
        if (tr->n[c].byte == b) return c;
    return -1;
}

static sn_status rwkv_build(sn_tokenizer *t, const sn_gguf *g, sn_err *err) {
    (void)g;
    trie *tr = calloc(1, sizeof *tr);
    unsigned char *buf = NULL;
    size_t bcap = 0;
    if (!tr) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    for (int i = 0; i < 256; i++) tr->root[i] = -1;
    t->model_data = tr;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        const tok_info *ti = &t->tok[id];
        if (!grow((void **)&buf, &bcap, ti->len + 1, 1)) goto oom;
        const size_t n = unescape(t->arena + ti->off, ti->len, buf);
        if (n == 0) continue;
        int32_t node = tr->root[buf[0]];
        if (node < 0) {
            if ((node = new_node(tr, buf[0])) < 0) goto oom;
            tr->root[buf[0]] = node;
        }
        for (size_t i = 1; i < n; i++) {
            int32_t c = child_of(tr, node, buf[i]);
            if (c < 0) {
                if ((c = new_node(tr, buf[i])) < 0) goto oom;
                tr->n[c].sibling = tr->n[node].child;
                tr->n[node].child = c;
            }
            node = c;
        }
        tr->n[node].id = id;
    }
    free(buf);
    return SN_OK;
oom:
    free(buf);
    return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
}

static sn_status rwkv_encode(const sn_tokenizer *t, const char *p, size_t n, bool after_special, bbuf *scratch,
                             ivec *out, sn_err *err) {
    (void)after_special;
    (void)scratch;
    const trie *tr = t->model_data;
    const unsigned char *s = (const unsigned char *)p;
    size_t pos = 0;
    while (pos < n) {
        int32_t node = tr->root[s[pos]], best = -1;
        size_t best_end = pos, i = pos;
        while (node >= 0) {
            if (tr->n[node].id >= 0) {
                best = tr->n[node].id;
                best_end = i + 1;
            }
            if (++i >= n) break;
            node = child_of(tr, node, s[i]);
        }
        if (best < 0) /* llama.cpp would emit its null token id here; the world vocab has every byte */
            return sn_err_set(err, SN_EINVAL, "tokenizer: no RWKV token starts with byte 0x%02x at offset %zu",
                              (unsigned)s[pos], pos);
        if (!ivec_push(out, best)) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
        pos = best_end;
    }
    return SN_OK;
}

static bool rwkv_piece(const sn_tokenizer *t, int32_t id, bbuf *b) {
    const tok_info *ti = &t->tok[id];
    const size_t before = b->n;
    if (!bbuf_add(b, t->arena + ti->off, ti->len)) return false; /* room; unescaping only shrinks */
    b->n = before + unescape(t->arena + ti->off, ti->len, (unsigned char *)b->v + before);
    b->v[b->n] = 0;
    return true;
}

static sn_status rwkv_init(sn_tokenizer *t, const char *model, char **pre, sn_err *err) {
    (void)model;
    (void)pre;
    (void)err;
    t->bos = t->eos = t->unk = t->sep = t->pad = -1;
    t->add_space_prefix = false;
    t->clean_spaces = false;
    t->add_bos = t->add_eos = false;
    return SN_OK;
}

static void rwkv_free(sn_tokenizer *t) {
    trie *tr = t->model_data;
    if (tr) free(tr->n);
    free(tr);
    t->model_data = NULL;
}

static const char *const k_models[] = {"rwkv", NULL};
const sn_tok_ops sn_tok_rwkv_ops = {k_models, rwkv_init, rwkv_build, rwkv_encode, NULL, rwkv_piece, rwkv_free};
