/* vocab_bpe.c - the byte-level BPE path: tokenizer.json -> tokenizer.ggml.model "gpt2".
 *
 * get_vocab_base() + _set_vocab_gpt2(): the vocab with added tokens (an added content shadows a
 * base id), the pre-tokenizer named by fingerprinting (or --pre), and the merges from
 * tokenizer.json (strings or [a, b] pairs) or merges.txt, stored as llama.cpp stores them. */
#include "vocab_internal.h"

#include "budget.h"
#include "path.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* merges as llama.cpp stores them: "a b", spaces inside a part of a [a,b] pair encoded as 'Ġ'. */
static const char *merge_string(tok_table *t, const cJSON *m) {
    if (cJSON_IsString(m)) return m->valuestring; /* borrowed, like the vocab strings */
    const char *a, *b;
    size_t la, lb;
    if (!sn_vocab_merge_parts(m, &a, &la, &b, &lb)) return NULL;
    size_t spaces = 0;
    for (size_t i = 0; i < la; i++) spaces += a[i] == ' ';
    for (size_t i = 0; i < lb; i++) spaces += b[i] == ' ';
    char *r = sn_vocab_table_str_alloc(t, la + lb + spaces + 2), *o = r;
    if (!r) return NULL;
    for (int part = 0; part < 2; part++) {
        const char *s = part ? b : a;
        size_t l = part ? lb : la;
        if (part) *o++ = ' ';
        for (size_t i = 0; i < l; i++) {
            if (s[i] == ' ') {
                *o++ = (char)0xc4; /* U+0120 'Ġ' */
                *o++ = (char)0xa0;
            } else {
                *o++ = s[i];
            }
        }
    }
    *o = 0;
    return r;
}

static sn_status merges_from_txt(plan *p, inputs *in, sn_err *err) {
    char *path = sn_path_join(in->dir, "merges.txt");
    if (!path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!sn_vocab_file_exists(path)) {
        free(path);
        return SN_OK;
    }
    char *text = NULL;
    uint64_t len = 0;
    sn_status st = SN_READ_FILE(path, SN_BUDGET_VOCAB_FILE, &text, &len, err);
    if (st) {
        free(path);
        return st;
    }
    uint64_t lines = 1;
    for (uint64_t i = 0; i < len; i++) lines += text[i] == '\n';
    p->t.merges = calloc(lines, sizeof *p->t.merges);
    if (!p->t.merges) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    char *save = NULL;
    int first = 1;
    for (char *line = st ? NULL : strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ' || *line == '\t' || *line == '\r') line++;
        size_t l = strlen(line);
        while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r')) line[--l] = 0;
        if (first && line[0] == '#') {
            first = 0;
            continue;
        }
        first = 0;
        if (!l) continue;
        char *a = line, *sp = strpbrk(a, " \t");
        if (!sp) continue; /* malformed line: skipped, as the reference */
        char *b = sp;
        while (*b == ' ' || *b == '\t') b++;
        if (strpbrk(b, " \t")) continue;
        size_t la = (size_t)(sp - a), lb = strlen(b);
        char *m = sn_vocab_table_str_alloc(&p->t, la + lb + 2);
        if (!m) {
            st = sn_err_set(err, SN_ENOMEM, "out of memory");
            break;
        }
        memcpy(m, a, la);
        m[la] = ' ';
        memcpy(m + la + 1, b, lb + 1);
        p->t.merges[p->t.n_merges++] = m;
    }
    free(text);
    free(path);
    return st;
}

/* get_vocab_base() + _set_vocab_gpt2(): byte-level BPE -> model "gpt2". */
sn_status sn_vocab_gpt2(plan *p, inputs *in, const sn_vocab_opts *opts, sn_err *err) {
    const cJSON *model = jget(in->tok_json, "model");
    const cJSON *vocab = jget(model, "vocab");
    const cJSON *added = jget(in->tok_json, "added_tokens");
    sn_status st;
    const char *mtype = jstr(model, "type");
    if (!mtype || strcmp(mtype, "BPE") != 0)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "tokenizer.json: model.type is \"%s\"; only BPE tokenizers (or a tokenizer.model) "
                          "are supported", mtype ? mtype : "(missing)");
    if (!cJSON_IsObject(vocab))
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab is not an object");
    if (!vocab->child) /* only added tokens: every merge names tokens that do not exist */
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab is empty");
    /* pre-tokenizer name first: it is the most likely failure and the cheapest */
    if (opts && opts->pre_override) {
        if (!sn_pretok_known_name(opts->pre_override))
            return sn_err_set(err, SN_EINVAL, "--pre %s: llama.cpp does not know this pre-tokenizer",
                              opts->pre_override);
        snprintf(p->pre, sizeof p->pre, "%s", opts->pre_override);
    } else if ((st = sn_pretok_fingerprint(in->tok_json, in->tok_config, "tokenizer.json", p->pre,
                                           sizeof p->pre, err))) {
        if (cJSON_IsTrue(jget(model, "byte_fallback")) && err) {
            /* a SentencePiece-style BPE that is not in the legacy Llama-2 layout (e.g. a Metaspace
             * pre-tokenizer): neither sunny nor llama.cpp's converter reads it from tokenizer.json */
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof err->msg - l,
                     "; this is a SentencePiece-style tokenizer (byte_fallback): put the model's "
                     "tokenizer.model next to it");
        }
        return st;
    }
    /* vocab_size = config.vocab_size else len(vocab with added tokens). Which added contents are
     * in the vocab is found by one pass over the vocab against a small hash set of the added
     * contents (id field: 1 = seen in the vocab): cJSON's object lookup is a linear strcmp scan,
     * so one lookup per added token would be quadratic in practice. */
    int64_t max_id = -1, n_distinct = cJSON_GetArraySize(vocab);
    const cJSON *c;
    hmap av;
    if (!sn_vocab_hmap_init(&av, (size_t)cJSON_GetArraySize(added))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    cJSON_ArrayForEach(c, added) {
        const char *content = jstr(c, "content");
        if (!content) continue;
        hent *e = sn_vocab_hmap_slot(&av, content, strlen(content));
        if (!e->s) *e = (hent){content, strlen(content), 0};
    }
    cJSON_ArrayForEach(c, vocab) {
        int64_t id;
        if (!jint(c, &id) || id < 0 || id >= SN_VOCAB_MAX) {
            free(av.e);
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab[\"%s\"] is not a valid id",
                              c->string);
        }
        if (id > max_id) max_id = id;
        hent *e = sn_vocab_hmap_slot(&av, c->string, strlen(c->string));
        if (e->s) e->id = 1;
    }
    cJSON_ArrayForEach(c, added) {
        int64_t id;
        const char *content = jstr(c, "content");
        if (!jint(jget(c, "id"), &id) || id < 0 || id >= SN_VOCAB_MAX || !content) {
            free(av.e);
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: added_tokens entry without a valid id/content");
        }
        if (id > max_id) max_id = id;
        if (!sn_vocab_hmap_slot(&av, content, strlen(content))->id) n_distinct++;
    }
    free(av.e);
    int64_t n = in->vocab_size > 0 ? in->vocab_size : n_distinct;
    if (max_id >= n)
        return sn_err_set(err, SN_EFORMAT,
                          "tokenizer.json: token id %" PRId64 " is not below the vocabulary size %" PRId64
                          " (config.json vocab_size)", max_id, n);
    tok_table *t = &p->t;
    if ((st = sn_vocab_table_alloc(t, (size_t)n, 0, err))) return st;
    for (int64_t i = 0; i < n && !st; i++) st = sn_vocab_table_pad(t, (size_t)i, 0, err);
    if (st || (st = sn_vocab_table_base(t, vocab, added, err))) return st;
    cJSON_ArrayForEach(c, added) {
        if (st) break;
        int64_t id = 0;
        jint(jget(c, "id"), &id);
        st = sn_vocab_set_added(t, (size_t)id, jstr(c, "content"), py_truthy(jget(c, "special")), err);
    }
    if (st) return st;
    /* merges: tokenizer.json model.merges, else merges.txt */
    const cJSON *merges = jget(model, "merges");
    int nm = cJSON_IsArray(merges) ? cJSON_GetArraySize(merges) : 0;
    if (nm > 0) {
        const cJSON *m0 = cJSON_GetArrayItem(merges, 0);
        if (!cJSON_IsString(m0) && !(cJSON_IsArray(m0) && cJSON_GetArraySize(m0) == 2 &&
                                      cJSON_IsString(cJSON_GetArrayItem(m0, 0))))
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: unknown model.merges format");
        t->merges = calloc((size_t)nm, sizeof *t->merges);
        if (!t->merges) return sn_err_set(err, SN_ENOMEM, "out of memory");
        cJSON_ArrayForEach(c, merges) {
            const char *s = merge_string(t, c);
            if (!s)
                return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.merges[%" PRIu64 "] is malformed",
                                  t->n_merges);
            t->merges[t->n_merges++] = s;
        }
    } else if ((st = merges_from_txt(p, in, err))) {
        return st;
    }
    if (t->n_merges == 0)
        return sn_err_set(err, SN_EFORMAT,
                          "tokenizer.json: no merges (model.merges empty and no merges.txt); llama.cpp "
                          "cannot load a gpt2 vocabulary without tokenizer.ggml.merges");
    p->model = "gpt2";
    p->n_vocab = -1;
    return SN_OK;
}
