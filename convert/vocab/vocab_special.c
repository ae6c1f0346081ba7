/* vocab_special.c - gguf-py's SpecialVocab (gguf-py/gguf/vocab.py) over the conversion plan.
 *
 * Special token ids from tokenizer_config.json / tokenizer.json added_tokens / config.json,
 * add_bos/add_eos/add_sep from the config and the post_processor (its crude parsing reproduced),
 * the chat templates (tokenizer_config.json, chat_template.jinja + additional_chat_templates/,
 * chat_template.json) and the normalizer's lowercase/strip_accents flags, in the reference's order. */
#include "vocab_internal.h"

#include "budget.h"
#include "path.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* `x.get('SpecialToken', {}).get('id')` on a template element, NULL when absent or not a str. */
static const char *tmpl_id(const cJSON *elem, const char *kind) { return jstr(jget(elem, kind), "id"); }

/* cfg[key] = copy of v (NULL = None); returns the stored item. */
static const cJSON *cfg_set(cJSON *cfg, const char *key, const cJSON *v) {
    cJSON *nv = v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();
    if (!nv) return NULL;
    if (cJSON_GetObjectItemCaseSensitive(cfg, key))
        cJSON_ReplaceItemInObjectCaseSensitive(cfg, key, nv);
    else
        cJSON_AddItemToObject(cfg, key, nv);
    return nv;
}

static void sv_add_type(plan *p, const char *typ) {
    if (p->n_types < MAX_SPECIAL) p->types[p->n_types++] = typ;
}

static int sv_has_type(const plan *p, const char *typ) {
    for (int i = 0; i < p->n_types; i++)
        if (!strcmp(p->types[i], typ)) return 1;
    return 0;
}

static sn_status sv_set_id(plan *p, const char *typ, const cJSON *v, const char *what, sn_err *err) {
    int64_t id;
    if (!cJSON_IsNumber(v)) return SN_OK;
    if (!jint(v, &id)) return SN_OK;
    if (id < 0)
        return sn_err_set(err, SN_EFORMAT, "%s: invalid value for special token type %s: %" PRId64,
                          what, typ, id);
    if (p->n_vocab >= 0 && id >= p->n_vocab) return SN_OK; /* out of range: skipped, as the reference */
    if (id > (int64_t)UINT32_MAX) return SN_OK;
    for (int i = 0; i < p->n_ids; i++)
        if (!strcmp(p->ids[i].typ, typ)) return SN_OK;
    if (p->n_ids < MAX_SPECIAL) p->ids[p->n_ids++] = (special_id){typ, id};
    return SN_OK;
}

static void sv_set_add(plan *p, const char *typ, int v) {
    for (int i = 0; i < p->n_adds; i++)
        if (!strcmp(p->adds[i].typ, typ)) {
            p->adds[i].v = v;
            return;
        }
    if (p->n_adds < MAX_SPECIAL) p->adds[p->n_adds++] = (special_add){typ, v};
}

static void sv_normalizer(plan *p, const cJSON *n) {
    const char *type = jstr(n, "type");
    if (!type) return;
    if (!strcmp(type, "Lowercase")) {
        p->norm_lowercase = 1;
    } else if (!strcmp(type, "StripAccents")) {
        p->norm_strip_accents = 1;
    } else if (!strcmp(type, "BertNormalizer")) {
        const cJSON *l = jget(n, "lowercase"), *s = jget(n, "strip_accents");
        if (cJSON_IsBool(l)) p->norm_lowercase = cJSON_IsTrue(l);
        if (cJSON_IsBool(s)) p->norm_strip_accents = cJSON_IsTrue(s);
    } else if (!strcmp(type, "Sequence")) {
        const cJSON *c;
        cJSON_ArrayForEach(c, jget(n, "normalizers")) sv_normalizer(p, c);
    }
}

/* The crude post_processor parsing of SpecialVocab._try_load_from_tokenizer_json. */
static sn_status sv_post_processor(plan *p, inputs *in, sn_err *err) {
    cJSON *cfg = in->tok_config;
    int cfg_ok = py_truthy(cfg);
    const cJSON *sp_bos = jget(cfg, "bos_token"), *sp_cls = jget(cfg, "cls_token");
    const cJSON *sp_eos = jget(cfg, "eos_token"), *sp_sep = jget(cfg, "sep_token");
    if (!py_truthy(sp_bos) && py_truthy(sp_cls) && cfg_ok) sp_bos = cfg_set(cfg, "bos_token", sp_cls);
    if (!py_truthy(sp_eos) && py_truthy(sp_sep) && cfg_ok) sp_eos = cfg_set(cfg, "eos_token", sp_sep);

    const cJSON *pp = jget(in->tok_json, "post_processor");
    if (!py_truthy(pp)) return SN_OK;
    const cJSON *procs = jget(pp, "processors");
    const cJSON *one[1] = {pp};
    int n_procs = procs ? cJSON_GetArraySize(procs) : 1;
    for (int k = 0; k < n_procs; k++) {
        const cJSON *proc = procs ? cJSON_GetArrayItem(procs, k) : one[0];
        const char *type = jstr(proc, "type");
        if (!type) continue;
        if (!strcmp(type, "RobertaProcessing")) {
            sv_set_add(p, "bos", 1);
            sv_set_add(p, "eos", 1);
            sv_set_add(p, "sep", 1);
            if (!py_truthy(sp_cls) && cfg_ok) {
                const cJSON *c = jget(proc, "cls");
                sp_cls = cfg_set(cfg, "cls_token", c ? cJSON_GetArrayItem(c, 0) : sp_bos);
            }
            if (!py_truthy(sp_sep) && cfg_ok) {
                const cJSON *c = jget(proc, "sep");
                sp_sep = cfg_set(cfg, "sep_token", c ? cJSON_GetArrayItem(c, 0) : sp_eos);
            }
            continue;
        }
        if (strcmp(type, "TemplateProcessing") != 0) continue;
        const cJSON *single = jget(proc, "single"), *pair = jget(proc, "pair");
        int n_single = cJSON_IsArray(single) ? cJSON_GetArraySize(single) : 0;
        /* special_first / special_last as JSON items inside tokenizer.json (live as long as it) */
        const cJSON *first_it = NULL, *last_it = NULL;
        const char *first = NULL, *last = NULL;
        if (n_single > 1) {
            first_it = jget(jget(cJSON_GetArrayItem(single, 0), "SpecialToken"), "id");
            first = py_truthy(first_it) && cJSON_IsString(first_it) ? first_it->valuestring : NULL;
            if (first) {
                if (!cfg_ok) {
                    sp_bos = first_it;
                } else if (!py_eq_str(first, sp_bos) && !py_eq_str(first, sp_cls)) {
                    if (!py_truthy(sp_bos)) sp_bos = cfg_set(cfg, "bos_token", first_it);
                    if (!py_truthy(sp_cls)) sp_cls = cfg_set(cfg, "cls_token", first_it);
                }
                sv_set_add(p, "bos", py_eq_str(first, sp_bos) || py_eq_str(first, sp_cls));
            }
            last_it = jget(jget(cJSON_GetArrayItem(single, n_single - 1), "SpecialToken"), "id");
            last = py_truthy(last_it) && cJSON_IsString(last_it) ? last_it->valuestring : NULL;
            if (last) {
                if (!cfg_ok) {
                    sp_eos = last_it;
                } else if (!py_eq_str(last, sp_eos)) {
                    if (!sv_has_type(p, "eot")) {
                        sv_add_type(p, "eot");
                        cfg_set(cfg, "eot_token", sp_eos);
                    } else if (!sv_has_type(p, "eom")) {
                        sv_add_type(p, "eom");
                        cfg_set(cfg, "eom_token", sp_eos);
                    }
                    sp_eos = cfg_set(cfg, "eos_token", last_it);
                }
                sv_set_add(p, "eos", py_eq_str(last, sp_eos));
            }
        }
        int n_pair = cJSON_IsArray(pair) ? cJSON_GetArraySize(pair) : 0;
        if (n_pair > 0) {
            int lo = first && py_eq_str(first, jget(jget(cJSON_GetArrayItem(pair, 0), "SpecialToken"), "id"));
            int hi = (last && py_eq_str(last, jget(jget(cJSON_GetArrayItem(pair, n_pair - 1), "SpecialToken"), "id")))
                         ? n_pair - 1 : n_pair;
            if (hi - lo > 0) {
                const char *a = tmpl_id(cJSON_GetArrayItem(pair, lo), "Sequence");
                const char *b = tmpl_id(cJSON_GetArrayItem(pair, hi - 1), "Sequence");
                int mid_lo = lo + 1, mid_hi = hi - 1; /* tmpl_pair[1:-1] */
                if (a && b && !strcmp(a, "A") && !strcmp(b, "B") && mid_hi - mid_lo > 0) {
                    int add_sep = 0;
                    const char *e = tmpl_id(cJSON_GetArrayItem(pair, mid_lo), "SpecialToken");
                    if (e && e[0] && (py_eq_str(e, sp_sep) || py_eq_str(e, sp_eos)) && !last) add_sep = 1;
                    if (mid_hi - mid_lo == 2) {
                        e = tmpl_id(cJSON_GetArrayItem(pair, mid_lo + 1), "SpecialToken");
                        if (e && e[0] && (py_eq_str(e, sp_sep) || py_eq_str(e, sp_eos))) add_sep = 1;
                    }
                    sv_set_add(p, "sep", add_sep);
                    if (add_sep && !py_truthy(sp_sep) && cfg_ok) sp_sep = cfg_set(cfg, "sep_token", sp_eos);
                }
            }
        }
    }
    return SN_OK;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* gguf_writer.add_chat_template: names keep [A-Za-z0-9], others become '_'. */
static sn_status tmpl_add_named(plan *p, const char *name, const char *text, uint64_t len, sn_err *err) {
    char *nm = strdup(name), *tx = malloc(len + 1);
    if (!nm || !tx) {
        free(nm);
        free(tx);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    for (char *c = nm; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) *c = '_';
    memcpy(tx, text, len);
    tx[len] = 0;
    if (!strcmp(nm, "default")) {
        free(nm);
        free(p->tmpl_default);
        p->tmpl_default = tx;
        p->tmpl_default_len = len;
        return SN_OK;
    }
    for (int i = 0; i < p->n_tmpl; i++)
        if (!strcmp(p->tmpl[i].name, nm)) { /* same key again: value replaced in place */
            free(nm);
            free(p->tmpl[i].text);
            p->tmpl[i].text = tx;
            p->tmpl[i].len = len;
            return SN_OK;
        }
    if (p->n_tmpl >= MAX_TEMPLATES) {
        free(nm);
        free(tx);
        return sn_err_set(err, SN_EUNSUPPORTED, "more than %d named chat templates", MAX_TEMPLATES);
    }
    p->tmpl[p->n_tmpl++] = (named_tmpl){nm, tx, len};
    return SN_OK;
}

static sn_status sv_chat_template_list(plan *p, const cJSON *list, const char *what, sn_err *err) {
    const cJSON *c;
    cJSON_ArrayForEach(c, list) {
        const char *name = jstr(c, "name");
        const cJSON *t = jget(c, "template");
        if (!name) name = "";
        if (!name[0] || !t || cJSON_IsNull(t)) continue;
        if (!cJSON_IsString(t))
            return sn_err_set(err, SN_EFORMAT, "%s: chat_template entry \"%s\": template is not a string",
                              what, name);
        sn_status st = tmpl_add_named(p, name, t->valuestring, strlen(t->valuestring), err);
        if (st) return st;
    }
    return SN_OK;
}

/* chat_template: tokenizer_config.json, else chat_template.jinja (+ additional_chat_templates/), else
 * chat_template.json. */
static sn_status sv_chat_template(plan *p, inputs *in, sn_err *err) {
    sn_status st = SN_OK;
    const cJSON *tc = jget(in->tok_config, "chat_template");
    if (tc) {
        if (cJSON_IsString(tc)) {
            p->tmpl_default = strdup(tc->valuestring);
            if (!p->tmpl_default) return sn_err_set(err, SN_ENOMEM, "out of memory");
            p->tmpl_default_len = strlen(tc->valuestring);
            return SN_OK;
        }
        if (cJSON_IsArray(tc)) return sv_chat_template_list(p, tc, "tokenizer_config.json", err);
        return SN_OK; /* null or a bad type: ignored, as the reference does */
    }
    char *jinja = sn_path_join(in->dir, "chat_template.jinja");
    char *jsonp = sn_path_join(in->dir, "chat_template.json");
    char *adir = sn_path_join(in->dir, "additional_chat_templates");
    char *text = NULL;
    uint64_t len = 0;
    if (!jinja || !jsonp || !adir) {
        st = sn_err_set(err, SN_ENOMEM, "out of memory");
        goto done;
    }
    if (sn_vocab_file_exists(jinja)) {
        if ((st = SN_READ_FILE(jinja, SN_BUDGET_TEXT_FILE, &text, &len, err))) goto done;
        DIR *d = opendir(adir);
        char *names[MAX_TEMPLATES];
        int n = 0;
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) && n < MAX_TEMPLATES) {
                size_t l = strlen(e->d_name);
                if (l > 6 && !strcmp(e->d_name + l - 6, ".jinja") && e->d_name[0] != '.') {
                    names[n] = strdup(e->d_name);
                    if (names[n]) n++;
                }
            }
            closedir(d);
        }
        if (n == 0) {
            p->tmpl_default = text;
            p->tmpl_default_len = len;
            text = NULL;
            goto done;
        }
        qsort(names, (size_t)n, sizeof names[0], cmp_str); /* glob order is unspecified; sort */
        st = tmpl_add_named(p, "default", text, len, err);
        for (int i = 0; i < n && !st; i++) {
            char *fp = sn_path_join(adir, names[i]);
            char *t2 = NULL;
            uint64_t l2 = 0;
            if (!fp) {
                st = sn_err_set(err, SN_ENOMEM, "out of memory");
                break;
            }
            st = SN_READ_FILE(fp, SN_BUDGET_TEXT_FILE, &t2, &l2, err);
            free(fp);
            if (!st) {
                names[i][strlen(names[i]) - 6] = 0; /* stem */
                st = tmpl_add_named(p, names[i], t2, l2, err);
            }
            free(t2);
        }
        for (int i = 0; i < n; i++) free(names[i]);
        goto done;
    }
    if (sn_vocab_file_exists(jsonp)) {
        cJSON *j = NULL;
        if ((st = sn_vocab_json_load(in->dir, "chat_template.json", &j, NULL, err))) goto done;
        const cJSON *ct = jget(j, "chat_template");
        if (cJSON_IsString(ct)) {
            p->tmpl_default = strdup(ct->valuestring);
            p->tmpl_default_len = strlen(ct->valuestring);
            if (!p->tmpl_default) st = sn_err_set(err, SN_ENOMEM, "out of memory");
        } else if (cJSON_IsArray(ct)) {
            st = sv_chat_template_list(p, ct, "chat_template.json", err);
        }
        cJSON_Delete(j);
    }
done:
    free(text);
    free(jinja);
    free(jsonp);
    free(adir);
    return st;
}

sn_status sn_vocab_special(plan *p, inputs *in, sn_err *err) {
    static const char *const base_types[] = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    sn_status st;
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++) sv_add_type(p, base_types[i]);
    const cJSON *added = NULL;
    if (in->tok_json) {
        const cJSON *norm = jget(in->tok_json, "normalizer");
        if (py_truthy(norm)) sv_normalizer(p, norm);
        added = jget(in->tok_json, "added_tokens");
        if ((st = sv_post_processor(p, in, err))) return st;
    }
    if (py_truthy(in->tok_config)) {
        if ((st = sv_chat_template(p, in, err))) return st;
        for (int i = 0; i < p->n_types; i++) {
            const char *typ = p->types[i];
            char key[32];
            snprintf(key, sizeof key, "add_%s_token", typ);
            const cJSON *a = jget(in->tok_config, key);
            if (cJSON_IsBool(a)) sv_set_add(p, typ, cJSON_IsTrue(a));
            snprintf(key, sizeof key, "%s_token", typ);
            const cJSON *e = jget(in->tok_config, key);
            const char *content = cJSON_IsString(e) ? e->valuestring : jstr(e, "content");
            if (!content) continue;
            const cJSON *at;
            cJSON_ArrayForEach(at, added) {
                if (py_eq_str(content, jget(at, "content"))) {
                    if ((st = sv_set_id(p, typ, jget(at, "id"), "tokenizer.json added_tokens", err)))
                        return st;
                    break;
                }
            }
        }
    }
    if (in->config) {
        for (int i = 0; i < p->n_types; i++) {
            char key[32];
            snprintf(key, sizeof key, "%s_token_id", p->types[i]);
            const cJSON *v = jget(in->config, key);
            if ((!v || cJSON_IsNull(v)) && jget(in->config, "text_config"))
                v = jget(jget(in->config, "text_config"), key);
            if ((st = sv_set_id(p, p->types[i], v, "config.json", err))) return st;
        }
    }
    return SN_OK;
}
