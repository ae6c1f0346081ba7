/* vocab_spm.c - the vocabulary paths that write tokenizer.ggml.model "llama" (SentencePiece).
 *
 * tokenizer.model (+ added_tokens.json, added_tokens_decoder) as _create_vocab_sentencepiece()
 * reads it, and LlamaHfVocab: a tokenizer.json BPE with byte_fallback, whose scores sunny derives
 * from merge ranks so llama.cpp's SPM merging applies HF's merge order (docs/TOKENIZER.md). */
#include "vocab_internal.h"

#include "mapfile.h"
#include "spm_model.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* An added token typed literally (sn_arch.vocab_added_literal): the text as written, CONTROL when
 * "special", else USER_DEFINED (no name heuristics, no unescaping of spaces). */
static sn_status set_literal(tok_table *t, size_t id, const char *content, int special, sn_err *err) {
    t->types[id] = special ? TT_CONTROL : TT_USER_DEFINED;
    return sn_vocab_table_set(t, id, content, strlen(content), err);
}

/* _create_vocab_sentencepiece(): tokenizer.model + added_tokens.json + added_tokens_decoder (with
 * in->added_literal, the literal typing of a family that applies them itself) */
sn_status sn_vocab_spm(plan *p, inputs *in, const char *spm_path, sn_err *err) {
    sn_mapped_file b;
    sn_spm_model m;
    sn_status st = sn_map_file(spm_path, &b, err);
    if (st) return st;
    st = sn_spm_parse(b.data, (size_t)b.size, spm_path, &m, err);
    if (st) {
        sn_unmap_file(&b);
        return st;
    }
    size_t n = in->vocab_size > 0 ? (size_t)in->vocab_size : m.n;
    tok_table *t = &p->t;
    if ((st = sn_vocab_table_alloc(t, n, 1, err))) goto out;
    for (size_t i = 0; i < n && !st; i++) st = sn_vocab_table_pad(t, i, -10000.0f, err);
    for (size_t i = 0; i < m.n && i < n && !st; i++) {
        const sn_spm_piece *pc = &m.pieces[i];
        int tt = TT_NORMAL;
        if (pc->type == SN_SPM_UNKNOWN) tt = TT_UNKNOWN;
        else if (pc->type == SN_SPM_CONTROL) tt = TT_CONTROL;
        else if (pc->type == SN_SPM_UNUSED) tt = TT_UNUSED;
        else if (pc->type == SN_SPM_BYTE) tt = TT_BYTE;
        st = sn_vocab_table_set(t, i, pc->piece, pc->len, err);
        t->scores[i] = pc->score;
        t->types[i] = tt;
    }
    if (st) goto out;

    cJSON *atj = NULL;
    if ((st = sn_vocab_json_load(in->dir, "added_tokens.json", &atj, NULL, err))) goto out;
    const cJSON *c;
    cJSON_ArrayForEach(c, atj) {
        int64_t id;
        if (!c->string || !jint(c, &id)) {
            st = sn_err_set(err, SN_EFORMAT, "added_tokens.json: entry \"%s\" is not an integer id",
                            c->string ? c->string : "?");
            break;
        }
        if (id < 0 || (uint64_t)id >= n) continue; /* out of range: ignored with a warning upstream */
        if ((st = sn_vocab_table_set(t, (size_t)id, c->string, strlen(c->string), err))) break;
        t->scores[id] = -1000.0f;
        t->types[id] = TT_USER_DEFINED;
    }
    cJSON_Delete(atj);
    if (st) goto out;

    cJSON_ArrayForEach(c, jget(in->tok_config, "added_tokens_decoder")) {
        char *endp;
        errno = 0;
        long long id = c->string ? strtoll(c->string, &endp, 10) : -1;
        if (!c->string || errno || endp == c->string || *endp) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer_config.json: added_tokens_decoder key \"%s\" is not an integer",
                            c->string ? c->string : "?");
            break;
        }
        const char *content = jstr(c, "content");
        if (!content) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer_config.json: added_tokens_decoder[\"%s\"].content missing",
                            c->string);
            break;
        }
        if (id < 0 || (uint64_t)id >= n) continue;
        if (in->added_literal) st = set_literal(t, (size_t)id, content, py_truthy(jget(c, "special")), err);
        else st = sn_vocab_set_added(t, (size_t)id, content, py_truthy(jget(c, "special")), err);
        if (st) break;
        t->scores[id] = -1000.0f;
    }
    if (st) goto out;
    /* ... and tokenizer.json's added_tokens the same way */
    const cJSON *lit = in->added_literal ? jget(in->tok_json, "added_tokens") : NULL;
    cJSON_ArrayForEach(c, lit) {
        int64_t id;
        const char *content = jstr(c, "content");
        if (!jint(jget(c, "id"), &id) || !content) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer.json: added_tokens entry without a valid id/content");
            break;
        }
        if (id < 0 || (uint64_t)id >= n) continue;
        if ((st = set_literal(t, (size_t)id, content, py_truthy(jget(c, "special")), err))) break;
        t->scores[id] = -1000.0f;
    }
    if (st) goto out;
    p->model = "llama";
    snprintf(p->pre, sizeof p->pre, "default");
    p->n_vocab = (int64_t)n;
out:
    sn_spm_free(&m);
    sn_unmap_file(&b);
    return st;
}

/* Scores for a byte_fallback BPE read by llama.cpp's SPM tokenizer: token t made by merge rank r
 * (first such merge) gets -r, so the merge HF applies first is the pair llama.cpp merges first;
 * tokens no merge produces get -n_merges (below every merge). See docs/TOKENIZER.md. */
static sn_status rank_scores(tok_table *t, const cJSON *merges, sn_err *err) {
    uint64_t n_merges = (uint64_t)cJSON_GetArraySize(merges);
    if (n_merges >= (1u << 24))
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "tokenizer.json: %" PRIu64 " merges; ranks above 2^24 are not exact as f32 scores",
                          n_merges);
    hmap m;
    if (!sn_vocab_hmap_init(&m, t->n)) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n; i++) {
        hent *e = sn_vocab_hmap_slot(&m, t->tok[i], t->len[i]);
        if (!e->s) *e = (hent){t->tok[i], t->len[i], (int64_t)i};
        t->scores[i] = -(float)n_merges;
    }
    char *tmp = NULL;
    size_t cap = 0;
    uint64_t r = 0;
    const cJSON *mg;
    sn_status st = SN_OK;
    cJSON_ArrayForEach(mg, merges) {
        const char *a, *b;
        size_t la, lb;
        if (!sn_vocab_merge_parts(mg, &a, &la, &b, &lb)) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.merges[%" PRIu64 "] is malformed", r);
            break;
        }
        if (la + lb + 1 > cap) {
            cap = (la + lb + 1) * 2;
            char *nt = realloc(tmp, cap);
            if (!nt) {
                st = sn_err_set(err, SN_ENOMEM, "out of memory");
                break;
            }
            tmp = nt;
        }
        memcpy(tmp, a, la);
        memcpy(tmp + la, b, lb);
        hent *e = sn_vocab_hmap_slot(&m, tmp, la + lb);
        if (e->s && t->scores[e->id] < -(float)r) t->scores[e->id] = -(float)r;
        r++;
    }
    free(tmp);
    free(m.e);
    return st;
}

/* Content -> id among model.vocab and added_tokens (added win), for special-token lookups. */
static int64_t lookup_id(const cJSON *vocab, const cJSON *added, const char *content) {
    const cJSON *a;
    cJSON_ArrayForEach(a, added) if (py_eq_str(content, jget(a, "content"))) {
        int64_t id;
        if (jint(jget(a, "id"), &id)) return id;
    }
    int64_t id;
    if (jint(jget(vocab, content), &id)) return id;
    return -1;
}

/* LlamaHfVocab: tokenizer.json BPE with byte_fallback -> model "llama" (scores from merge ranks). */
sn_status sn_vocab_llama_hf(plan *p, inputs *in, sn_err *err) {
    const cJSON *model = jget(in->tok_json, "model");
    const cJSON *vocab = jget(model, "vocab");
    const cJSON *added = jget(in->tok_json, "added_tokens");
    const cJSON *merges = jget(model, "merges");
    sn_status st;
    if (!cJSON_IsObject(vocab))
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab is not an object");
    if (!vocab->child) return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab is empty");
    if (!cJSON_IsArray(merges))
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.merges is not an array");
    size_t n_base = (size_t)cJSON_GetArraySize(vocab), n = n_base;
    const cJSON *c;
    cJSON_ArrayForEach(c, vocab) {
        int64_t id;
        if (!jint(c, &id) || id < 0 || (uint64_t)id >= n_base)
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab[\"%s\"] = id outside 0..%zu",
                              c->string, n_base - 1);
    }
    cJSON_ArrayForEach(c, added) {
        int64_t id;
        if (!jint(jget(c, "id"), &id) || id < 0 || !jstr(c, "content"))
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: added_tokens entry without a valid id/content");
        if (id >= SN_VOCAB_MAX || (id >= (int64_t)n_base + cJSON_GetArraySize(added) && id >= in->vocab_size))
            return sn_err_set(err, SN_EFORMAT,
                              "tokenizer.json: added token \"%s\" has id %" PRId64 ", beyond the %zu base tokens + "
                              "added tokens and config.json vocab_size", jstr(c, "content"), id, n_base);
        if ((size_t)id + 1 > n) n = (size_t)id + 1;
    }
    if (in->vocab_size > 0 && (size_t)in->vocab_size > n) n = (size_t)in->vocab_size;
    tok_table *t = &p->t;
    if ((st = sn_vocab_table_alloc(t, n, 1, err))) return st;
    for (size_t i = 0; i < n && !st; i++) st = sn_vocab_table_pad(t, i, 0.0f, err);
    if (st || (st = sn_vocab_table_base(t, vocab, added, err))) return st;
    /* all_special_ids: the tokenizer_config special-token attributes + additional_special_tokens;
     * sunny also counts added tokens marked special (HF matches them atomically; see TOKENIZER.md). */
    static const char *const attrs[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                        "pad_token", "cls_token", "mask_token"};
    unsigned char *special = calloc(n, 1);
    if (!special) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        const cJSON *e = jget(in->tok_config, attrs[i]);
        const char *s = cJSON_IsString(e) ? e->valuestring : jstr(e, "content");
        int64_t id = s ? lookup_id(vocab, added, s) : -1;
        if (id >= 0 && (size_t)id < n) special[id] = 1;
    }
    cJSON_ArrayForEach(c, jget(in->tok_config, "additional_special_tokens")) {
        const char *s = cJSON_IsString(c) ? c->valuestring : jstr(c, "content");
        int64_t id = s ? lookup_id(vocab, added, s) : -1;
        if (id >= 0 && (size_t)id < n) special[id] = 1;
    }
    cJSON_ArrayForEach(c, added) {
        int64_t id = 0;
        jint(jget(c, "id"), &id);
        const char *content = jstr(c, "content");
        if (py_truthy(jget(c, "special"))) special[id] = 1;
        if ((size_t)id >= n_base) { /* an added token beyond the base vocab */
            st = sn_vocab_table_set(t, (size_t)id, content, strlen(content), err);
            t->types[id] = special[id] ? TT_CONTROL : TT_USER_DEFINED;
        } else {
            st = sn_vocab_table_set(t, (size_t)id, content, strlen(content), err);
        }
        if (st) break;
    }
    for (size_t i = 0; i < n_base && !st; i++) {
        const char *s = t->tok[i];
        if (t->len[i] == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' && isxdigit((unsigned char)s[3]) &&
            isxdigit((unsigned char)s[4]))
            t->types[i] = TT_BYTE;
        else if (special[i])
            t->types[i] = TT_CONTROL;
        else if (t->types[i] != TT_UNUSED)
            t->types[i] = TT_NORMAL;
    }
    free(special);
    if (st) return st;
    if ((st = rank_scores(t, merges, err))) return st;
    p->model = "llama";
    snprintf(p->pre, sizeof p->pre, "default");
    p->n_vocab = (int64_t)n;
    return SN_OK;
}
