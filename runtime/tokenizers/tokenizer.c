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
#include <stddef.h>
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

/* ---------------------------------------------------------------------------------------------
 * llama.cpp's fix-ups by token text (llama-vocab.cpp, load), as data */

#define TOK_FULLWIDTH_BAR "\xef\xbd\x9c" /* U+FF5C, DeepSeek's special tokens */
#define TOK_LOWER_BLOCK "\xe2\x96\x81"   /* U+2581, SentencePiece's space */

/* Special ids llama.cpp detects by text when the GGUF has none, forcing CONTROL on the token
 * found. llama.cpp takes the first match in its hash-map order; we take the first name of the list
 * that exists, which agrees for Llama 3, Qwen 2/3, Phi-3 and StarCoder vocabs. */
static const char *const k_eot_names[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<" TOK_FULLWIDTH_BAR "end" TOK_LOWER_BLOCK "of" TOK_LOWER_BLOCK
    "sentence" TOK_FULLWIDTH_BAR ">", "<end_of_utterance>", NULL};
static const char *const k_eom_names[] = {"<|eom_id|>", NULL};
static const char *const k_pre_names[] = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
    "<" TOK_FULLWIDTH_BAR "fim" TOK_LOWER_BLOCK "begin" TOK_FULLWIDTH_BAR ">", "<PRE>", TOK_LOWER_BLOCK "<PRE>",
    "<|code_prefix|>", "<|prefix|>", NULL};
static const char *const k_suf_names[] = {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
    "<" TOK_FULLWIDTH_BAR "fim" TOK_LOWER_BLOCK "hole" TOK_FULLWIDTH_BAR ">", "<SUF>", TOK_LOWER_BLOCK "<SUF>",
    "<|code_suffix|>", "<|suffix|>", NULL};
static const char *const k_mid_names[] = {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
    "<" TOK_FULLWIDTH_BAR "fim" TOK_LOWER_BLOCK "end" TOK_FULLWIDTH_BAR ">", "<MID>", TOK_LOWER_BLOCK "<MID>",
    "<|code_middle|>", "<|middle|>", NULL};
static const char *const k_pad_names[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL};
static const char *const k_rep_names[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", NULL};
static const char *const k_sep_names[] = {"<|file_sep|>", NULL};
static const struct { size_t id_offset; const char *const *names; } k_detect[] = {
    {offsetof(sn_tokenizer, eot), k_eot_names},         {offsetof(sn_tokenizer, eom), k_eom_names},
    {offsetof(sn_tokenizer, fim_pre), k_pre_names}, {offsetof(sn_tokenizer, fim_suf), k_suf_names},
    {offsetof(sn_tokenizer, fim_mid), k_mid_names}, {offsetof(sn_tokenizer, fim_pad), k_pad_names},
    {offsetof(sn_tokenizer, fim_rep), k_rep_names}, {offsetof(sn_tokenizer, fim_sep), k_sep_names},
};
/* Tokens that end a generation wherever they are in the vocab (and become CONTROL). */
static const char *const k_eog_names[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
    "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>",
    "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<" TOK_FULLWIDTH_BAR "end" TOK_LOWER_BLOCK "of" TOK_LOWER_BLOCK "sentence" TOK_FULLWIDTH_BAR ">", "[e~[", NULL};
/* gpt-oss's tokens that render as text (USER_DEFINED). */
static const char *const k_user_defined_names[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", NULL};

/* Strip attributes llama.cpp sets by model: the first row whose needle is in the named GGUF string
 * (tokenizer.ggml.pre, general.architecture, or general.name lowercased) applies its rule. */
enum strip_in { IN_PRE, IN_ARCH, IN_NAME };
enum strip_rule { LSTRIP_MASK, LSTRIP_BRACKET_MASK, RSTRIP_PHI3 };
static const struct { enum strip_in in; const char *needle; enum strip_rule rule; } k_strip[] = {
    {IN_PRE, "jina-v2-de", LSTRIP_MASK},      {IN_PRE, "jina-v2-es", LSTRIP_MASK},
    {IN_PRE, "jina-v2-code", LSTRIP_MASK},    {IN_ARCH, "nomic-bert-moe", LSTRIP_MASK},
    {IN_ARCH, "jina-bert-v3", LSTRIP_MASK},   {IN_NAME, "phi-3", RSTRIP_PHI3},
    {IN_NAME, "phi3", RSTRIP_PHI3},           {IN_NAME, "modern-bert", LSTRIP_BRACKET_MASK},
};

static void set_attr(sn_tokenizer *t, const char *text, uint32_t attr, bool on) {
    int32_t id = sn_tok_find(t, text, strlen(text));
    if (id < 0) return;
    if (on) t->tok[id].attr |= attr;
    else t->tok[id].attr &= ~attr;
}

/* ---------------------------------------------------------------------------------------------
 * loading, phase by phase */

/* The tokenizer models (sn_tok_ops), one file each: loader defaults, model tables, encoder, piece. */
static const sn_tok_ops *const k_tok_ops[] = {&sn_tok_spm_ops, &sn_tok_bpe_ops, &sn_tok_rwkv_ops};
static const char k_tok_models[] = "llama, gpt2, gemma4, rwkv";

/* tokenizer.ggml.model picks the sn_tok_ops row, which sets the model's loader defaults. */
static sn_status pick_model(const sn_gguf *g, sn_tokenizer *t, char **pre, sn_err *err) {
    int64_t ki = sn_gguf_find_key(g, "tokenizer.ggml.model");
    if (ki < 0) return sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.model is missing");
    if (sn_gguf_kv_type(g, ki) != SN_GGUF_STR)
        return sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.model is not a string");
    char *model = sn_gguf_str_dup(g, "tokenizer.ggml.model");
    *pre = sn_gguf_str_dup(g, "tokenizer.ggml.pre");
    if (!model) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    sn_status st = SN_OK;
    ki = sn_gguf_find_key(g, "tokenizer.ggml.pre");
    if (ki >= 0 && sn_gguf_kv_type(g, ki) != SN_GGUF_STR)
        st = sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.pre is not a string");
    for (size_t i = 0; st == SN_OK && i < sizeof(k_tok_ops) / sizeof(k_tok_ops[0]) && !t->ops; i++)
        for (const char *const *nm = k_tok_ops[i]->models; *nm; nm++)
            if (!strcmp(model, *nm)) t->ops = k_tok_ops[i];
    if (st == SN_OK && !t->ops)
        st = sn_err_set(err, SN_EUNSUPPORTED, "tokenizer: tokenizer model '%s' is not supported (supported: %s)",
                        model, k_tok_models);
    if (st == SN_OK) st = t->ops->init(t, model, pre, err);
    if (st == SN_OK) st = get_bool(g, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix, err);
    free(model);
    return st;
}

/* An optional per-token array (scores, token_type): its data, or NULL when absent. */
static sn_status token_array(const sn_gguf *g, const char *key, const char *what, bool f32_ok, uint64_t nv,
                             const unsigned char **data, sn_gguf_type *type, sn_err *err) {
    int64_t k = sn_gguf_find_key(g, key);
    *data = NULL;
    if (k < 0) return SN_OK;
    *type = sn_gguf_kv_type(g, k) == SN_GGUF_ARR ? sn_gguf_arr_type(g, k) : SN_GGUF_TYPE_COUNT;
    if (*type != SN_GGUF_I32 && !(f32_ok && *type == SN_GGUF_F32))
        return sn_err_set(err, SN_EFORMAT, "tokenizer: key %s is not an array of %s", key, what);
    if (sn_gguf_arr_n(g, k) < nv)
        return sn_err_set(err, SN_EFORMAT, "tokenizer: %s has %llu entries, fewer than the %llu tokens", key,
                          (unsigned long long)sn_gguf_arr_n(g, k), (unsigned long long)nv);
    *data = sn_gguf_arr_data(g, k);
    return SN_OK;
}

static uint32_t attr_of_type(int32_t ty) {
    switch (ty) {
    case SN_TOKEN_UNKNOWN: return A_UNKNOWN;
    case SN_TOKEN_UNUSED: return A_UNUSED;
    case SN_TOKEN_NORMAL: return A_NORMAL;
    case SN_TOKEN_CONTROL: return A_CONTROL;
    case SN_TOKEN_USER_DEFINED: return A_USER_DEFINED;
    case SN_TOKEN_BYTE: return A_BYTE;
    default: return 0;
    }
}

/* tokenizer.ggml.tokens / scores / token_type into the token table and its text arena. */
static sn_status read_tokens(const sn_gguf *g, sn_tokenizer *t, sn_err *err) {
    int64_t ki = sn_gguf_find_key(g, "tokenizer.ggml.tokens");
    if (ki < 0) return sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.tokens is missing");
    if (sn_gguf_kv_type(g, ki) != SN_GGUF_ARR || sn_gguf_arr_type(g, ki) != SN_GGUF_STR)
        return sn_err_set(err, SN_EFORMAT, "tokenizer: key tokenizer.ggml.tokens is not an array of strings");
    uint64_t nv = sn_gguf_arr_n(g, ki);
    if (nv == 0 || nv > INT32_MAX / 4)
        return sn_err_set(err, SN_EFORMAT, "tokenizer: tokenizer.ggml.tokens has %llu entries", (unsigned long long)nv);
    t->n_vocab = (int32_t)nv;
    const unsigned char *scores, *types;
    sn_gguf_type score_type = SN_GGUF_F32, type_type;
    sn_status st = token_array(g, "tokenizer.ggml.scores", "f32 or i32", true, nv, &scores, &score_type, err);
    if (st == SN_OK) st = token_array(g, "tokenizer.ggml.token_type", "i32", false, nv, &types, &type_type, err);
    if (st) return st;
    size_t total = 0;
    for (uint64_t i = 0; i < nv; i++) {
        sn_gguf_str s = sn_gguf_arr_str(g, ki, i);
        size_t l = s.len ? (size_t)s.len : 24; /* "[EMPTY_i]" */
        if (s.len > UINT32_MAX / 2 || total > SIZE_MAX - l - 1)
            return sn_err_set(err, SN_EFORMAT, "tokenizer: token %llu is too long", (unsigned long long)i);
        total += l + 1;
    }
    if (total > UINT32_MAX) return sn_err_set(err, SN_EFORMAT, "tokenizer: token texts exceed 4 GiB");
    t->arena = malloc(total ? total : 1);
    t->tok = calloc(nv, sizeof *t->tok);
    t->eog = calloc(nv, 1);
    if (!t->arena || !t->tok || !t->eog) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
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
            tk->attr = attr_of_type(ty);
        }
    }
    return SN_OK;
}

/* text -> id; duplicates are an error (llama.cpp asserts) */
static sn_status index_tokens(sn_tokenizer *t, sn_err *err) {
    uint64_t ns = sn_tok_slot_count((uint64_t)t->n_vocab);
    t->tslot = malloc(ns * sizeof *t->tslot);
    if (!t->tslot) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    memset(t->tslot, 0xFF, ns * sizeof *t->tslot);
    t->tmask = ns - 1;
    for (int32_t i = 0; i < t->n_vocab; i++) {
        const tok_info *tk = &t->tok[i];
        uint64_t h = sn_tok_hash(SN_TOK_HASH_SEED, t->arena + tk->off, tk->len) & t->tmask;
        while (t->tslot[h] >= 0) {
            const tok_info *o = &t->tok[t->tslot[h]];
            if (o->len == tk->len && !memcmp(t->arena + o->off, t->arena + tk->off, tk->len))
                return sn_err_set(err, SN_EFORMAT, "tokenizer: tokenizer.ggml.tokens[%llu] \"%.*s\" duplicates token %d",
                                  (unsigned long long)i, (int)(tk->len > 64 ? 64 : tk->len), t->arena + tk->off,
                                  t->tslot[h]);
            h = (h + 1) & t->tmask;
        }
        t->tslot[h] = i;
    }
    return SN_OK;
}

/* SPM byte fallback table (<0xNN>, else the raw byte) */
static void byte_table(sn_tokenizer *t) {
    for (int b = 0; b < 256; b++) {
        char hx[8];
        snprintf(hx, sizeof hx, "<0x%02X>", b);
        int32_t id = sn_tok_find(t, hx, 6);
        if (id < 0) { char c = (char)b; id = sn_tok_find(t, &c, 1); }
        t->spm_byte[b] = id;
    }
}

/* special ids: defaults out of range are dropped; GGUF values out of range are ignored */
static sn_status read_special_ids(const sn_gguf *g, sn_tokenizer *t, sn_err *err) {
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
        if (sn_gguf_kv_type(g, k) != SN_GGUF_U32)
            return sn_err_set(err, SN_EFORMAT, "tokenizer: key %s has type %s, expected u32", sp[i].key,
                              sn_gguf_type_name(sn_gguf_kv_type(g, k)));
        uint32_t v = sn_gguf_get_u32(g, k);
        if (v < (uint32_t)t->n_vocab) *sp[i].id = (int32_t)v;
    }
    sn_status st = get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err);
    if (st == SN_OK) st = get_bool(g, "tokenizer.ggml.add_eos_token", &t->add_eos, err);
    if (t->gemma4) t->add_bos = true; /* llama.cpp's Gemma 4 workaround */
    return st;
}

static bool in_list(const sn_tokenizer *t, int32_t id, const char *const *names) {
    for (const char *const *nm = names; *nm; nm++)
        if (str_eq(t, id, *nm)) return true;
    return false;
}

/* The fix-ups by text: detected special ids (k_detect), "unused" control tokens, the EOG set
 * (k_eog_names and the special ids), USER_DEFINED tokens, then the two EOG exceptions. */
static void fix_up_by_text(sn_tokenizer *t) {
    for (size_t d = 0; d < sizeof k_detect / sizeof k_detect[0]; d++) {
        int32_t *slot = (int32_t *)((char *)t + k_detect[d].id_offset);
        for (const char *const *nm = k_detect[d].names; *nm && *slot < 0; nm++) {
            int32_t id = sn_tok_find(t, *nm, strlen(*nm));
            if (id >= 0) { *slot = id; t->tok[id].attr |= A_CONTROL; }
        }
    }
    for (int32_t id = 0; id < t->n_vocab; id++)
        if ((t->tok[id].attr & A_CONTROL) && strstr(t->arena + t->tok[id].off, "unused")) t->tok[id].attr |= A_UNUSED;
    const int32_t eog_fim[] = {t->fim_pad, t->fim_rep, t->fim_sep};
    for (size_t i = 0; i < 3; i++)
        if (eog_fim[i] >= 0) t->eog[eog_fim[i]] = 1;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (in_list(t, id, k_eog_names)) { t->eog[id] = 1; t->tok[id].attr |= A_CONTROL; }
        if (in_list(t, id, k_user_defined_names)) t->tok[id].attr = A_USER_DEFINED;
    }
    const int32_t eog_ids[] = {t->eos, t->eot, t->eom};
    for (size_t i = 0; i < 3; i++)
        if (eog_ids[i] >= 0) t->eog[eog_ids[i]] = 1;
    /* o200k_harmony / solar-open: <|end|> is not EOG when <|return|>+<|call|> (or <|calls|>+<|flush|>)
     * are; with <|tool_response>, </s> is not EOG either */
    int32_t end_id = -1, s_id = -1;
    bool has_return = false, has_call = false, has_flush = false, has_tool_response = false;
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
static sn_status collect_specials(sn_tokenizer *t, sn_err *err) {
    t->special = malloc((size_t)t->n_vocab * sizeof *t->special);
    if (!t->special) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    for (int32_t id = 0; id < t->n_vocab; id++)
        if (t->tok[id].attr & (A_CONTROL | A_USER_DEFINED | A_UNKNOWN)) t->special[t->n_special++] = id;
    qsort_r(t->special, t->n_special, sizeof *t->special, cmp_special, t);
    return SN_OK;
}

/* per-model strip attributes (k_strip) */
static void strip_attributes(const sn_gguf *g, sn_tokenizer *t, const char *pre) {
    char lname[256] = "";
    char *gname = sn_gguf_str_dup(g, "general.name"), *garch = sn_gguf_str_dup(g, "general.architecture");
    if (gname) {
        size_t i = 0;
        for (; gname[i] && i + 1 < sizeof lname; i++)
            lname[i] = (gname[i] >= 'A' && gname[i] <= 'Z') ? (char)(gname[i] + 32) : gname[i];
        lname[i] = 0;
    }
    const char *in[] = {[IN_PRE] = pre ? pre : "", [IN_ARCH] = garch ? garch : "", [IN_NAME] = lname};
    for (size_t r = 0; r < sizeof k_strip / sizeof k_strip[0]; r++) {
        if (!strstr(in[k_strip[r].in], k_strip[r].needle)) continue;
        switch (k_strip[r].rule) {
        case LSTRIP_MASK: set_attr(t, "<mask>", A_LSTRIP, true); break;
        case LSTRIP_BRACKET_MASK: set_attr(t, "[MASK]", A_LSTRIP, true); break;
        case RSTRIP_PHI3:
            for (size_t i = 0; i < t->n_special; i++) t->tok[t->special[i]].attr |= A_RSTRIP;
            set_attr(t, "</s>", A_RSTRIP, true);
            set_attr(t, "<unk>", A_RSTRIP, false);
            set_attr(t, "<s>", A_RSTRIP, false);
            set_attr(t, "<|endoftext|>", A_RSTRIP, false);
            break;
        }
        break;
    }
    free(gname);
    free(garch);
}

sn_status sn_tok_load(const sn_gguf *g, sn_tokenizer **out, sn_err *err) {
    if (!g || !out) return sn_err_set(err, SN_EINVAL, "tokenizer: NULL argument");
    *out = NULL;
    sn_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    t->eot = t->eom = t->sep = t->pad = t->mask = -1;
    t->fim_pre = t->fim_suf = t->fim_mid = t->fim_pad = t->fim_rep = t->fim_sep = -1;
    char *pre = NULL;
    sn_status st = pick_model(g, t, &pre, err);
    if (st == SN_OK) st = read_tokens(g, t, err);
    if (st == SN_OK) st = index_tokens(t, err);
    if (st == SN_OK && t->ops->build) st = t->ops->build(t, g, err);
    if (st == SN_OK) {
        byte_table(t);
        st = read_special_ids(g, t, err);
    }
    if (st == SN_OK) {
        fix_up_by_text(t);
        st = collect_specials(t, err);
    }
    if (st == SN_OK) strip_attributes(g, t, pre);
    free(pre);
    if (st) {
        sn_tok_free(t);
        return st;
    }
    *out = t;
    return SN_OK;
}
