/* vocab_table.c - the token table every vocabulary path fills, and the rules they share.
 *
 * Token strings are borrowed from the parsed tokenizer.json or copied into the table's own block
 * storage; ids without a token become "[PAD{id}]" (UNUSED), as llama.cpp's converter writes them.
 * Added tokens follow convert_hf_to_gguf.py: CONTROL when special or when they look special,
 * otherwise USER_DEFINED with U+2581 turned back into spaces. A small open-addressing string -> id
 * map stands in for Python dict lookups over 100K+ entries. */
#include "vocab_internal.h"

#include <stdlib.h>

void sn_vocab_table_free(tok_table *t) {
    free(t->tok);
    free(t->len);
    free(t->scores);
    free(t->types);
    free(t->merges);
    for (sblock *b = t->blocks, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    memset(t, 0, sizeof *t);
}

/* n bytes of string storage owned by the table, NULL when out of memory. */
char *sn_vocab_table_str_alloc(tok_table *t, size_t n) {
    sblock *b = t->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        sblock *nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        t->blocks = b = nb;
    }
    char *r = b->data + b->used;
    b->used += n;
    return r;
}

sn_status sn_vocab_table_alloc(tok_table *t, size_t n, int with_scores, sn_err *err) {
    t->n = n;
    t->tok = calloc(n ? n : 1, sizeof *t->tok);
    t->len = calloc(n ? n : 1, sizeof *t->len);
    t->types = calloc(n ? n : 1, sizeof *t->types);
    t->scores = with_scores ? calloc(n ? n : 1, sizeof *t->scores) : NULL;
    if (!t->tok || !t->len || !t->types || (with_scores && !t->scores))
        return sn_err_set(err, SN_ENOMEM, "out of memory for %zu tokens", n);
    return SN_OK;
}

/* Token i = a copy of s[0..len). */
sn_status sn_vocab_table_set(tok_table *t, size_t i, const char *s, size_t len, sn_err *err) {
    char *c = sn_vocab_table_str_alloc(t, len + 1);
    if (!c) return sn_err_set(err, SN_ENOMEM, "out of memory");
    memcpy(c, s, len);
    c[len] = 0;
    t->tok[i] = c;
    t->len[i] = len;
    return SN_OK;
}

/* Token i = s itself, a string of the parsed tokenizer.json (no copy). */
void sn_vocab_table_ref(tok_table *t, size_t i, const char *s) {
    t->tok[i] = s;
    t->len[i] = strlen(s);
}

/* Token i = "[PAD{i}]", UNUSED. Formatted by hand: it runs for every id of the vocabulary. */
sn_status sn_vocab_table_pad(tok_table *t, size_t i, float score, sn_err *err) {
    char d[24];
    int nd = 0;
    size_t v = i;
    do {
        d[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char *c = sn_vocab_table_str_alloc(t, (size_t)nd + 6);
    if (!c) return sn_err_set(err, SN_ENOMEM, "out of memory");
    memcpy(c, "[PAD", 4);
    for (int k = 0; k < nd; k++) c[4 + k] = d[nd - 1 - k];
    c[4 + nd] = ']';
    c[5 + nd] = 0;
    t->tok[i] = c;
    t->len[i] = (uint64_t)nd + 5;
    t->types[i] = TT_UNUSED;
    if (t->scores) t->scores[i] = score;
    return SN_OK;
}

/* convert_hf_to_gguf.py does_token_look_special() */
static int looks_special(const char *s) {
    size_t n = strlen(s);
    if (!strcmp(s, "<pad>") || !strcmp(s, "<mask>") || !strcmp(s, "<2mass>") || !strcmp(s, "[@BOS@]"))
        return 1;
#define PFX(p) (n >= sizeof(p) - 1 && !memcmp(s, p, sizeof(p) - 1))
#define SFX(p) (n >= sizeof(p) - 1 && !memcmp(s + n - (sizeof(p) - 1), p, sizeof(p) - 1))
    if (PFX("<|") && SFX("|>")) return 1;
    if (PFX("<\xef\xbd\x9c") && SFX("\xef\xbd\x9c>")) return 1; /* <｜ ... ｜> */
    if (PFX("<unused") && SFX(">")) return 1;
#undef PFX
#undef SFX
    return 0;
}

/* Copy of S (in T's storage) with every U+2581 (▁) replaced by a space (user-defined tokens are
 * pre-normalized). */
static char *unspace(tok_table *t, const char *s, size_t *out_len) {
    size_t n = strlen(s), o = 0;
    char *r = sn_vocab_table_str_alloc(t, n + 1);
    if (!r) return NULL;
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && (unsigned char)s[i] == 0xe2 && (unsigned char)s[i + 1] == 0x96 &&
            (unsigned char)s[i + 2] == 0x81) {
            r[o++] = ' ';
            i += 3;
        } else {
            r[o++] = s[i++];
        }
    }
    r[o] = 0;
    *out_len = o;
    return r;
}

/* An added token: CONTROL if special or looks special, else USER_DEFINED with ▁ -> ' '. */
sn_status sn_vocab_set_added(tok_table *t, size_t id, const char *content, int special, sn_err *err) {
    if (special || looks_special(content)) {
        t->types[id] = TT_CONTROL;
        return sn_vocab_table_set(t, id, content, strlen(content), err);
    }
    size_t len;
    char *u = unspace(t, content, &len);
    if (!u) return sn_err_set(err, SN_ENOMEM, "out of memory");
    t->tok[id] = u;
    t->len[id] = len;
    t->types[id] = TT_USER_DEFINED;
    return SN_OK;
}

/* Splits a merge into its two parts: "a b" at the first ' ' at or after byte 1 (as llama.cpp), or a
 * ["a","b"] pair. */
int sn_vocab_merge_parts(const cJSON *m, const char **a, size_t *la, const char **b, size_t *lb) {
    if (cJSON_IsString(m)) {
        const char *s = m->valuestring;
        if (!s[0]) return 0;
        const char *sp = strchr(s + 1, ' ');
        if (!sp) return 0;
        *a = s;
        *la = (size_t)(sp - s);
        *b = sp + 1;
        *lb = strlen(sp + 1);
        return 1;
    }
    if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2) {
        const cJSON *x = cJSON_GetArrayItem(m, 0), *y = cJSON_GetArrayItem(m, 1);
        if (!cJSON_IsString(x) || !cJSON_IsString(y)) return 0;
        *a = x->valuestring;
        *la = strlen(*a);
        *b = y->valuestring;
        *lb = strlen(*b);
        return 1;
    }
    return 0;
}

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

int sn_vocab_hmap_init(hmap *m, size_t n) {
    m->cap = 16;
    while (m->cap < n * 2 + 16) m->cap *= 2;
    m->e = calloc(m->cap, sizeof *m->e);
    return m->e != NULL;
}

hent *sn_vocab_hmap_slot(hmap *m, const char *s, size_t n) {
    size_t i = (size_t)fnv(s, n) & (m->cap - 1);
    while (m->e[i].s && !(m->e[i].len == n && !memcmp(m->e[i].s, s, n))) i = (i + 1) & (m->cap - 1);
    return &m->e[i];
}

/* Content -> id of tokenizer.json's added tokens (the last entry wins, as in a dict). */
static sn_status added_map(const cJSON *added, hmap *m, sn_err *err) {
    if (!sn_vocab_hmap_init(m, (size_t)cJSON_GetArraySize(added))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    const cJSON *c;
    cJSON_ArrayForEach(c, added) {
        const char *s = jstr(c, "content");
        int64_t id;
        if (!s || !jint(jget(c, "id"), &id)) continue;
        hent *e = sn_vocab_hmap_slot(m, s, strlen(s));
        *e = (hent){s, strlen(s), id};
    }
    return SN_OK;
}

/* A vocab string that is also an added token under another id: transformers' get_vocab() keeps
 * only the added one, so the base id has no token (llama.cpp's converter writes [PAD{id}] there).
 * Writing the string twice would make llama.cpp abort on duplicate tokens. */
static int shadowed(hmap *m, const char *s, int64_t id) {
    hent *e = sn_vocab_hmap_slot(m, s, strlen(s));
    return e->s && e->id != id;
}

/* model.vocab without the shadowed strings (vocab_internal.h) */
sn_status sn_vocab_table_base(tok_table *t, const cJSON *vocab, const cJSON *added, sn_err *err) {
    hmap am;
    sn_status st = added_map(added, &am, err);
    if (st) return st;
    const cJSON *c;
    cJSON_ArrayForEach(c, vocab) {
        size_t id = (size_t)c->valuedouble;
        if (shadowed(&am, c->string, (int64_t)id)) continue;
        sn_vocab_table_ref(t, id, c->string);
        t->types[id] = TT_NORMAL;
    }
    free(am.e);
    return SN_OK;
}
