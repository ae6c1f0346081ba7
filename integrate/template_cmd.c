/* template_cmd.c - finds a model's Jinja chat_template (GGUF, HF directory or a file), runs the
 * structural family matcher and assembles what an Ollama Modelfile needs: the Go template, the
 * stop list completed with the model's own EOS/EOT token text, and the evidence. See
 * template_cmd.h for the contract with cmd/sunny-integrate.c. */
#include "path.h"
#include "template_cmd.h"

#include "detect.h"
#include "gguf.h"
#include "budget.h"
#include "model.h"
#include "jinja.h"
#include "mapfile.h"
#include "prove.h"
#include "strv.h"
#include "templates.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TEXT_FILE SN_BUDGET_TEXT_FILE /* tokenizer_config.json / .jinja: refuse anything larger */

/* The model's vocabulary, for checking stop strings: a GGUF token array or tokenizer.json. */
typedef struct {
    sn_gguf *g;
    int64_t tokens;   /* KV index of tokenizer.ggml.tokens, -1 if none */
    const char *json; /* mmapped tokenizer.json (in json_map), NULL if none */
    size_t json_len;
    sn_mapped_file json_map;
} vocab;

static sn_status read_text(const char *path, char **out, sn_err *err) {
    *out = NULL;
    int fd = sn_open_regular(path, err);
    if (fd < 0) return SN_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sn_err_set(err, SN_EIO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > MAX_TEXT_FILE) {
        close(fd);
        return sn_err_set(err, SN_EFORMAT, "%s: %llu bytes, larger than the %llu MB budget for a text file "
                          "(SN_BUDGET_TEXT_FILE, budget.h)", path, (unsigned long long)st.st_size,
                          (unsigned long long)(MAX_TEXT_FILE >> 20));
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return sn_err_set(err, SN_ENOMEM, "%s: out of memory", path);
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(buf);
            close(fd);
            return sn_err_set(err, SN_EIO, "%s: read failed at offset %zu", path, got);
        }
        got += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    const char *nul = memchr(buf, 0, n);
    if (nul) {
        size_t off = (size_t)(nul - buf);
        free(buf);
        return sn_err_set(err, SN_EFORMAT, "%s: contains a NUL byte at offset %zu", path, off);
    }
    *out = buf;
    return SN_OK;
}


static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int vocab_has(const vocab *v, const char *tok) {
    if (v->g && v->tokens >= 0) {
        size_t tl = strlen(tok);
        uint64_t n = sn_gguf_arr_n(v->g, v->tokens);
        for (uint64_t i = 0; i < n; i++) {
            sn_gguf_str s = sn_gguf_arr_str(v->g, v->tokens, i);
            if (s.len == tl && memcmp(s.ptr, tok, tl) == 0) return 1;
        }
        return 0;
    }
    if (v->json) {
        cJSON *s = cJSON_CreateString(tok);
        char *q = s ? cJSON_PrintUnformatted(s) : NULL; /* "tok" with JSON escapes */
        int r = q && memmem(v->json, v->json_len, q, strlen(q)) != NULL;
        free(q);
        cJSON_Delete(s);
        return r;
    }
    return -1; /* unknown */
}

static int vocab_known(const vocab *v) { return (v->g && v->tokens >= 0) || v->json; }

/* "<...>" or "[...]" without spaces: a control token rather than plain text. */
static int looks_special(const char *t) {
    size_t n = strlen(t);
    return n >= 3 && ((t[0] == '<' && t[n - 1] == '>') || (t[0] == '[' && t[n - 1] == ']')) &&
           !strchr(t, ' ');
}

static void add_evidence(sn_template_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_evidence(sn_template_result *r, const char *fmt, ...) {
    char **nv = realloc(r->evidence, (r->n_evidence + 1) * sizeof *nv);
    if (!nv) return;
    r->evidence = nv;
    va_list ap;
    va_start(ap, fmt);
    int k = vasprintf(&r->evidence[r->n_evidence], fmt, ap);
    va_end(ap);
    if (k >= 0) r->n_evidence++;
}

static int add_stop(sn_template_result *r, const char *s) {
    for (size_t i = 0; i < r->n_stop; i++)
        if (strcmp(r->stop[i], s) == 0) return 0;
    char **nv = realloc(r->stop, (r->n_stop + 1) * sizeof *nv);
    if (!nv) return -1;
    r->stop = nv;
    if (!(r->stop[r->n_stop] = strdup(s))) return -1;
    r->n_stop++;
    return 1;
}

static char *gguf_token_text(const sn_gguf *g, int64_t tokens, const char *key) {
    if (tokens < 0 || sn_gguf_find_key(g, key) < 0) return NULL;
    uint32_t id = sn_gguf_u32_or(g, key, UINT32_MAX);
    if (id >= sn_gguf_arr_n(g, tokens)) return NULL;
    sn_gguf_str s = sn_gguf_arr_str(g, tokens, id);
    return strndup(s.ptr, (size_t)s.len);
}

static sn_status load_gguf(const char *path, int want_template, sn_template_result *r, vocab *v,
                           sn_err *err) {
    sn_status st = sn_model_validate(path, SN_VALIDATE_STRUCTURE, err); /* a truncated file is refused */
    if (st) return st;
    if ((st = sn_gguf_open(path, SN_GGUF_NO_DATA, &v->g, err))) return st;
    int64_t t = sn_gguf_find_key(v->g, "tokenizer.ggml.tokens");
    v->tokens = t >= 0 && sn_gguf_kv_type(v->g, t) == SN_GGUF_ARR &&
                        sn_gguf_arr_type(v->g, t) == SN_GGUF_STR ? t : -1;
    r->bos_token = gguf_token_text(v->g, v->tokens, "tokenizer.ggml.bos_token_id");
    r->eos_token = gguf_token_text(v->g, v->tokens, "tokenizer.ggml.eos_token_id");
    r->eot_token = gguf_token_text(v->g, v->tokens, "tokenizer.ggml.eot_token_id");
    if (sn_gguf_find_key(v->g, "tokenizer.ggml.add_bos_token") >= 0)
        r->add_bos = sn_gguf_bool_or(v->g, "tokenizer.ggml.add_bos_token", 0) ? 1 : 0;
    if (!want_template) return SN_OK;
    int64_t k = sn_gguf_find_key(v->g, "tokenizer.chat_template");
    if (k < 0)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s: no tokenizer.chat_template (a base model?); give the model's chat template: "
                          "sunny-integrate template --jinja FILE, or when installing, sunny-integrate ollama "
                          "--template FILE (.jinja or .gotmpl)", path);
    if (sn_gguf_kv_type(v->g, k) != SN_GGUF_STR)
        return sn_err_set(err, SN_EFORMAT, "%s: tokenizer.chat_template is %s, not a string", path,
                          sn_gguf_type_name(sn_gguf_kv_type(v->g, k)));
    sn_gguf_str s = sn_gguf_get_str(v->g, k);
    if (memchr(s.ptr, 0, (size_t)s.len))
        return sn_err_set(err, SN_EFORMAT, "%s: tokenizer.chat_template contains a NUL byte", path);
    r->jinja = strndup(s.ptr, (size_t)s.len);
    r->source = "gguf";
    r->source_path = strdup(path);
    if (!r->jinja || !r->source_path) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", path);
    return SN_OK;
}

static char *json_token(const cJSON *cfg, const char *key) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (cJSON_IsObject(t)) t = cJSON_GetObjectItemCaseSensitive(t, "content");
    return cJSON_IsString(t) ? strdup(t->valuestring) : NULL;
}

static int file_exists_in(const char *dir, const char *name) {
    char *p = sn_path_join(dir, name);
    const int e = p && file_exists(p);
    free(p);
    return e;
}

static sn_status load_dir(const char *dir, int want_template, sn_template_result *r, vocab *v,
                          sn_err *err) {
    sn_status st = SN_OK;
    char *cfg_path = sn_path_join(dir, "tokenizer_config.json");
    char *jinja_path = sn_path_join(dir, "chat_template.jinja");
    char *tok_path = sn_path_join(dir, "tokenizer.json");
    char *text = NULL;
    cJSON *cfg = NULL;
    if (!cfg_path || !jinja_path || !tok_path) {
        st = sn_err_set(err, SN_ENOMEM, "%s: out of memory", dir);
        goto out;
    }
    if (file_exists(cfg_path)) {
        if ((st = read_text(cfg_path, &text, err))) goto out;
        if (!(cfg = cJSON_Parse(text)) || !cJSON_IsObject(cfg)) {
            st = sn_err_set(err, SN_EFORMAT, "%s: not a JSON object (error near byte %zu)", cfg_path,
                            (size_t)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
            goto out;
        }
        r->bos_token = json_token(cfg, "bos_token");
        r->eos_token = json_token(cfg, "eos_token");
        const cJSON *ab = cJSON_GetObjectItemCaseSensitive(cfg, "add_bos_token");
        if (cJSON_IsBool(ab)) r->add_bos = cJSON_IsTrue(ab);
    }
    if (file_exists(tok_path)) { /* optional: an unreadable one only means stop strings go unchecked */
        sn_err ignored;
        if (sn_map_file(tok_path, &v->json_map, &ignored) == SN_OK && v->json_map.size > 0) {
            v->json = (const char *)v->json_map.data;
            v->json_len = (size_t)v->json_map.size;
        }
    }
    if (!want_template) goto out;
    if (file_exists(jinja_path)) {
        if ((st = read_text(jinja_path, &r->jinja, err))) goto out;
        r->source = "chat_template.jinja";
        r->source_path = jinja_path;
        jinja_path = NULL;
        goto out;
    }
    const cJSON *t = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, "chat_template") : NULL;
    if (!t && file_exists_in(dir, "rwkv_vocab_v20230424.txt")) {
        /* an RWKV world folder without a template of its own: the world template sunny-convert (and
         * llama.cpp's converter) writes into its GGUF, so the folder and the GGUF install alike */
        const char *world = sn_tmpl_embedded("rwkv-world-default.jinja", NULL);
        if (!world || !(r->jinja = strdup(world)) || !(r->source_path = strdup(dir))) {
            st = sn_err_set(err, world ? SN_ENOMEM : SN_EFORMAT, "%s: the RWKV world template is not available", dir);
            goto out;
        }
        r->source = "rwkv world template (what sunny-convert writes for this folder)";
        /* and its BOS/EOS: token 0, "<s>", as the converter forces them */
        if ((!r->bos_token && !(r->bos_token = strdup("<s>"))) || (!r->eos_token && !(r->eos_token = strdup("<s>"))))
            st = sn_err_set(err, SN_ENOMEM, "%s: out of memory", dir);
        goto out;
    }
    if (!cfg) {
        st = sn_err_set(err, SN_EIO, "%s: neither chat_template.jinja nor tokenizer_config.json found; give the "
                        "model's chat template: sunny-integrate template --jinja FILE, or when installing, "
                        "sunny-integrate ollama --template FILE (.jinja or .gotmpl)", dir);
        goto out;
    }
    if (cJSON_IsArray(t)) { /* [{"name": "default", "template": ...}, {"name": "tool_use", ...}] */
        const cJSON *e, *pick = NULL;
        cJSON_ArrayForEach(e, t) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
            if (cJSON_IsString(n) && strcmp(n->valuestring, "default") == 0) pick = e;
        }
        t = pick ? cJSON_GetObjectItemCaseSensitive(pick, "template") : NULL;
    }
    if (!t) {
        st = sn_err_set(err, SN_EUNSUPPORTED,
                        "%s: no chat_template (a base model?); give the model's chat template: sunny-integrate "
                        "template --jinja FILE, or when installing, sunny-integrate ollama --template FILE "
                        "(.jinja or .gotmpl)", cfg_path);
        goto out;
    }
    if (!cJSON_IsString(t)) {
        st = sn_err_set(err, SN_EFORMAT, "%s: field \"chat_template\" is not a string", cfg_path);
        goto out;
    }
    r->jinja = strdup(t->valuestring);
    r->source = "tokenizer_config";
    r->source_path = cfg_path;
    cfg_path = NULL;
    if (!r->jinja) st = sn_err_set(err, SN_ENOMEM, "%s: out of memory", dir);
out:
    cJSON_Delete(cfg);
    free(text);
    free(cfg_path);
    free(jinja_path);
    free(tok_path);
    return st;
}

static void vocab_close(vocab *v) {
    if (v->g) sn_gguf_close(v->g);
    sn_unmap_file(&v->json_map);
}

static sn_status fill_from_family(sn_template_result *r, const sn_tmpl_family *f,
                                  const sn_tmpl_detection *d, const vocab *v, sn_err *err) {
    if (!(r->template = strdup(f->gotmpl)) || !(r->params_json = strdup(f->params_json)))
        return sn_err_set(err, SN_ENOMEM, "template: out of memory");
    for (size_t i = 0; i < f->n_stop; i++) {
        if (add_stop(r, f->stop[i]) < 0) return sn_err_set(err, SN_ENOMEM, "template: out of memory");
        if (looks_special(f->stop[i]) && vocab_has(v, f->stop[i]) == 0)
            add_evidence(r, "warning: stop string %s is not a token of this model's vocab", f->stop[i]);
    }
    const char *extra[2] = {r->eot_token, r->eos_token};
    const char *what[2] = {"end-of-turn (EOT)", "EOS"};
    for (int i = 0; i < 2; i++) {
        if (!extra[i] || !looks_special(extra[i])) continue;
        int added = add_stop(r, extra[i]);
        if (added < 0) return sn_err_set(err, SN_ENOMEM, "template: out of memory");
        if (added) add_evidence(r, "stop: added the model's %s token %s", what[i], extra[i]);
    }
    if (f->add_bos && d && strcmp(d->bos, "none") != 0 && r->add_bos == 0)
        add_evidence(r, "warning: the Jinja writes bos_token but this tokenizer does not add BOS "
                        "(add_bos_token=false); the Go template omits it, so the prompt has no BOS");
    if (vocab_known(v) && r->eos_token && vocab_has(v, r->eos_token) == 0)
        add_evidence(r, "warning: eos_token %s is not in the vocab", r->eos_token);
    return SN_OK;
}

sn_status sn_template_resolve(const char *path_or_dir, const char *jinja_file,
                              sn_template_result *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    out->add_bos = -1;
    if (!path_or_dir && !jinja_file)
        return sn_err_set(err, SN_EINVAL, "template: give MODEL.gguf, MODEL_DIR or --jinja FILE");
    vocab v = {.tokens = -1};
    sn_tmpl_set *set = NULL;
    sn_tmpl_detection d = {0};
    sn_status st = SN_OK;
    if (path_or_dir) {
        st = is_dir(path_or_dir) ? load_dir(path_or_dir, !jinja_file, out, &v, err)
                                 : load_gguf(path_or_dir, !jinja_file, out, &v, err);
        if (st) goto out;
    }
    if (jinja_file) {
        if ((st = read_text(jinja_file, &out->jinja, err))) goto out;
        out->source = "file";
        if (!(out->source_path = strdup(jinja_file))) {
            st = sn_err_set(err, SN_ENOMEM, "template: out of memory");
            goto out;
        }
    }
    if ((st = sn_tmpl_load(&set, err))) goto out;
    sn_err derr = {0};
    sn_tmpl_detect(set, out->jinja, &d, &derr); /* the structural match only orders the candidates */
    for (size_t i = 0; i < d.n_evidence; i++) add_evidence(out, "%s", d.evidence[i]);
    const sn_tmpl_family *hint = d.family ? d.family : d.nearest;
    sn_tmpl_model m = {.jinja = out->jinja, .bos_token = out->bos_token, .eos_token = out->eos_token,
                       .add_bos = out->add_bos};
    sn_tmpl_claim c;
    if ((st = sn_tmpl_choose(set, &m, hint, &c, err))) goto out;
    const sn_tmpl_family *f = c.family;
    if (!f) {
        out->confidence = 0;
        if (hint && !(out->nearest = strdup(hint->name))) st = SN_ENOMEM;
        out->refusal = strdup(c.proof.reason);
        add_evidence(out, "no claim: %s", c.proof.reason);
        if (c.proof.skipped[0]) add_evidence(out, "the Jinja itself refuses: %s", c.proof.skipped);
        sn_tmpl_proof_free(&c.proof);
        st = st ? sn_err_set(err, SN_ENOMEM, "template: out of memory")
                : sn_err_set(err, SN_EUNSUPPORTED, "%s: no template family is proven for this chat template: %s; "
                             "pass --template FILE with an Ollama Go template (or let Ollama >= 0.30 render the "
                             "GGUF's Jinja itself)", out->source_path, out->refusal ? out->refusal : "");
        goto out;
    }
    out->proved = 1;
    out->confidence = 1.0;
    add_evidence(out, "proved by rendering: %s renders byte-identical to the model's Jinja on %zu of %zu "
                 "probe conversations%s%s", f->name, c.proof.n_same, c.proof.n_probes,
                 c.proof.n_skipped ? "; the Jinja itself refuses " : " (system / no system, multi-turn, "
                 "unicode, template syntax in content)", c.proof.n_skipped ? c.proof.skipped : "");
    if (c.proof.n_trimmed) {
        char cav[160];
        snprintf(cav, sizeof cav, "%s content without surrounding white space", sn_tmpl_trim_roles_name(c.proof.trim_roles));
        if (!(out->caveat = strdup(cav))) {
            sn_tmpl_proof_free(&c.proof);
            st = sn_err_set(err, SN_ENOMEM, "template: out of memory");
            goto out;
        }
        add_evidence(out, "on probe '%s' the Jinja strips %s content; Ollama's Go templates have no trim, so %s "
                     "renders the same only when that content comes without surrounding white space",
                     c.proof.trim_probe, sn_tmpl_trim_roles_name(c.proof.trim_roles), f->name);
    }
    if (hint && hint != f) add_evidence(out, "structural guess was %s; rendering proves %s", hint->name, f->name);
    if (c.proof.system) {
        add_evidence(out, "the Jinja injects a default system prompt; it is installed as the Modelfile SYSTEM");
        out->system = c.proof.system;
        c.proof.system = NULL;
    }
    sn_tmpl_proof_free(&c.proof);
    if (!(out->family = strdup(f->name)) || !(out->nearest = strdup(f->name))) {
        st = sn_err_set(err, SN_ENOMEM, "template: out of memory");
        goto out;
    }
    st = fill_from_family(out, f, &d, &v, err);
out:
    sn_tmpl_detection_free(&d);
    sn_tmpl_set_free(set);
    vocab_close(&v);
    return st;
}

sn_status sn_template_use_nearest(sn_template_result *r, sn_err *err) {
    if (!r->nearest) return sn_err_set(err, SN_EUNSUPPORTED, "no nearest family to fall back to");
    sn_tmpl_set *set = NULL;
    sn_status st = sn_tmpl_load(&set, err);
    if (st) return st;
    const sn_tmpl_family *f = sn_tmpl_find(set, r->nearest);
    vocab v = {.tokens = -1};
    if (!f) st = sn_err_set(err, SN_EUNSUPPORTED, "no family %s", r->nearest);
    else if (!(r->family = strdup(f->name))) st = sn_err_set(err, SN_ENOMEM, "template: out of memory");
    else st = fill_from_family(r, f, NULL, &v, err);
    if (!st) add_evidence(r, "installed %s although it is NOT proven equal to the Jinja (--template-accept-diff)", f->name);
    sn_tmpl_set_free(set);
    return st;
}

sn_status sn_template_render_jinja(const char *gguf, const char *system, const char *user, int keep_bos, char **out,
                                   sn_err *err) {
    *out = NULL;
    sn_template_result r = {0};
    r.add_bos = -1;
    vocab v = {.tokens = -1};
    sn_status st = load_gguf(gguf, 1, &r, &v, err);
    sn_jinja *t = NULL;
    cJSON *vars = NULL;
    if (st) goto done;
    if ((st = sn_jinja_parse(r.jinja, strlen(r.jinja), &t, err))) goto done;
    vars = cJSON_CreateObject();
    cJSON *msgs = cJSON_AddArrayToObject(vars, "messages");
    if (system) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "system");
        cJSON_AddStringToObject(m, "content", system);
        cJSON_AddItemToArray(msgs, m);
    }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", user);
    cJSON_AddItemToArray(msgs, m);
    cJSON_AddNullToObject(vars, "tools");
    cJSON_AddNullToObject(vars, "documents");
    cJSON_AddTrueToObject(vars, "add_generation_prompt");
    if (r.bos_token) cJSON_AddStringToObject(vars, "bos_token", r.bos_token);
    if (r.eos_token) cJSON_AddStringToObject(vars, "eos_token", r.eos_token);
    if ((st = sn_jinja_render(t, vars, NULL, out, NULL, err))) goto done;
    size_t bl = r.bos_token ? strlen(r.bos_token) : 0;
    if (!keep_bos && bl && r.add_bos != 0 && strncmp(*out, r.bos_token, bl) == 0) memmove(*out, *out + bl, strlen(*out) - bl + 1);
done:
    if (st) sn_err_prefix(err, "%s", gguf);
    cJSON_Delete(vars);
    sn_jinja_free(t);
    vocab_close(&v);
    sn_template_result_free(&r);
    return st;
}

static cJSON *str_or_null(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

char *sn_template_result_json(const sn_template_result *r) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddItemToObject(o, "family", str_or_null(r->family));
    cJSON_AddItemToObject(o, "nearest", str_or_null(r->nearest));
    cJSON_AddNumberToObject(o, "confidence", r->confidence);
    cJSON *ev = cJSON_AddArrayToObject(o, "evidence");
    for (size_t i = 0; ev && i < r->n_evidence; i++) cJSON_AddItemToArray(ev, cJSON_CreateString(r->evidence[i]));
    cJSON_AddItemToObject(o, "template", str_or_null(r->template));
    cJSON_AddBoolToObject(o, "proved", r->proved);
    cJSON_AddItemToObject(o, "system", str_or_null(r->system));
    cJSON_AddItemToObject(o, "refusal", str_or_null(r->refusal));
    cJSON_AddItemToObject(o, "caveat", str_or_null(r->caveat));
    cJSON *stop = cJSON_AddArrayToObject(o, "stop");
    for (size_t i = 0; stop && i < r->n_stop; i++) cJSON_AddItemToArray(stop, cJSON_CreateString(r->stop[i]));
    cJSON *params = r->params_json ? cJSON_Parse(r->params_json) : NULL;
    cJSON_AddItemToObject(o, "params", params ? params : cJSON_CreateObject());
    cJSON_AddItemToObject(o, "source", str_or_null(r->source));
    cJSON_AddItemToObject(o, "source_path", str_or_null(r->source_path));
    cJSON_AddItemToObject(o, "bos_token", str_or_null(r->bos_token));
    cJSON_AddItemToObject(o, "eos_token", str_or_null(r->eos_token));
    cJSON_AddItemToObject(o, "eot_token", str_or_null(r->eot_token));
    if (r->add_bos < 0) cJSON_AddNullToObject(o, "add_bos");
    else cJSON_AddBoolToObject(o, "add_bos", r->add_bos);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

void sn_template_result_free(sn_template_result *r) {
    if (!r) return;
    free(r->family);
    free(r->nearest);
    sn_strv_free(r->evidence, r->n_evidence);
    free(r->template);
    sn_strv_free(r->stop, r->n_stop);
    free(r->params_json);
    free(r->source_path);
    free(r->jinja);
    free(r->bos_token);
    free(r->eos_token);
    free(r->eot_token);
    free(r->system);
    free(r->refusal);
    free(r->caveat);
    memset(r, 0, sizeof *r);
    r->add_bos = -1;
}
