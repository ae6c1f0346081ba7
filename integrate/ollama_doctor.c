/* ollama_doctor.c - diagnosis and repair of models already in Ollama (see ollama_doctor.h). */
#include "ollama_doctor.h"
#include "http.h"
#include "modelinfo.h"
#include "ollama.h"
#include "prove.h"
#include "template_cmd.h"
#include "templates.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct diag {
    cJSON *m, *problems, *notes;
    int n;
} diag;

static void vadd(cJSON *arr, char *buf, size_t cap, const char *fmt, va_list ap) {
    vsnprintf(buf, cap, fmt, ap);
    cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
}

/* A problem: {"check","problem","fix"}, counted. */
static void problem(diag *d, const char *check, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void problem(diag *d, const char *check, const char *fix, const char *fmt, ...) {
    cJSON *p = cJSON_CreateObject(), *text = cJSON_CreateArray();
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vadd(text, buf, sizeof buf, fmt, ap);
    va_end(ap);
    cJSON_Delete(text);
    cJSON_AddStringToObject(p, "check", check);
    cJSON_AddStringToObject(p, "problem", buf);
    cJSON_AddStringToObject(p, "fix", fix);
    cJSON_AddItemToArray(d->problems, p);
    d->n++;
}

static void note(diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(diag *d, const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vadd(d->notes, buf, sizeof buf, fmt, ap);
    va_end(ap);
}

/* api.Options fields and their Go kinds (api/types.go Options / Runner, typed by FromMap). */
static char option_kind(const char *k) {
    static const char *const ints[] = {"num_ctx", "num_batch", "num_gpu", "main_gpu", "num_thread", "num_keep",
                                       "seed", "num_predict", "top_k", "repeat_last_n", NULL};
    static const char *const floats[] = {"temperature", "top_p", "min_p", "typical_p", "repeat_penalty",
                                         "presence_penalty", "frequency_penalty", NULL};
    for (int i = 0; ints[i]; i++) if (!strcmp(k, ints[i])) return 'i';
    for (int i = 0; floats[i]; i++) if (!strcmp(k, floats[i])) return 'f';
    if (!strcmp(k, "use_mmap")) return 'b';
    if (!strcmp(k, "stop")) return 's';
    return 0;
}

/* One line of /api/show "parameters": `fmt.Sprintf("%-*s %#v", 30, k, v)` (ShowHandler). */
typedef struct param_line { char key[64]; char raw[1024]; char val[1024]; int quoted; } param_line;

static size_t parse_params(const char *text, param_line *out, size_t cap) {
    size_t n = 0;
    for (const char *p = text ? text : ""; *p && n < cap;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *sp = memchr(p, ' ', len);
        if (sp && sp > p) {
            param_line *l = &out[n];
            snprintf(l->key, sizeof l->key, "%.*s", (int)(sp - p), p);
            const char *v = sp;
            while (v < p + len && *v == ' ') v++;
            snprintf(l->raw, sizeof l->raw, "%.*s", (int)(p + len - v), v);
            l->quoted = sn_ollama_go_unquote(l->raw, strlen(l->raw), l->val, sizeof l->val);
            if (!l->quoted) snprintf(l->val, sizeof l->val, "%s", l->raw);
            n++;
        }
        p = e ? e + 1 : p + len;
    }
    return n;
}

static const char *jstr(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The blob the Modelfile's FROM names, when readable here. */
static int blob_path(const char *modelfile, char *out, size_t cap) {
    for (const char *p = modelfile ? modelfile : ""; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 5 && !strncmp(p, "FROM ", 5)) {
            snprintf(out, cap, "%.*s", (int)(len - 5), p + 5);
            return access(out, R_OK) == 0;
        }
        p = e ? e + 1 : p + len;
    }
    out[0] = 0;
    return 0;
}

static int is_prompt_only(const char *t) {
    if (!t) return 1;
    while (*t == ' ' || *t == '\n') t++;
    if (!*t) return 1;
    return !strncmp(t, "{{ .Prompt }}", 13) && !t[13 + strspn(t + 13, " \n")];
}

typedef struct model_ctx {
    sn_template_result tr;
    int tr_ok;           /* tr filled (family proven or not) */
    const sn_tmpl_family *fam;
    param_line params[64];
    size_t n_params;
    char blob[4096];
    int blob_ok;
} model_ctx;

static void check_template(diag *d, const sn_ollama_version *v, const cJSON *show, const char *modelfile,
                           model_ctx *c) {
    const char *sel = jstr(show, "template");
    const char *jinja = c->tr_ok ? c->tr.jinja : NULL;
    const int new_engine = sn_ollama_version_cmp(v, 0, 30, 0) >= 0;
    char fix[512];
    if (c->tr_ok && c->tr.family)
        snprintf(fix, sizeof fix, "sunny-integrate doctor --model NAME --fix: TEMPLATE of family %s (proven "
                 "byte-identical to the GGUF's Jinja)", c->tr.family);
    else
        snprintf(fix, sizeof fix, "%s", new_engine ? "no Go template is proven equal to the Jinja: re-create "
                 "without TEMPLATE so Ollama >= 0.30 renders the GGUF's Jinja itself (--fix does)"
                 : "write a TEMPLATE by hand, or upgrade to Ollama >= 0.30, which renders the GGUF's Jinja");
    if (is_prompt_only(sel)) {
        if (jinja)
            problem(d, "template", fix,
                    "no TEMPLATE: Ollama %s falls back to \"{{ .Prompt }}\" (%s): the raw text with no chat turns "
                    "and no end-of-turn marker - gibberish or answers that never stop - although the GGUF has a "
                    "chat template", v->raw,
                    new_engine ? "a GGUF Jinja it cannot render, or OLLAMA_GO_TEMPLATE" : "template.DefaultTemplate");
        else if (c->blob_ok)
            note(d, "no TEMPLATE and no chat template in the GGUF: a base model; \"{{ .Prompt }}\" (plain "
                    "completion) is what it wants");
        else
            problem(d, "template", "run doctor where the blob is readable, or install again with sunny-integrate",
                    "no TEMPLATE: Ollama falls back to \"{{ .Prompt }}\" (raw text, no chat turns); the blob %s is "
                    "not readable here to tell whether the model has a chat template", c->blob[0] ? c->blob : "(none)");
        return;
    }
    if (jinja && !strcmp(sel, jinja)) {
        note(d, "template: the server renders the GGUF's own Jinja (Ollama >= 0.30 native mode%s)",
             strstr(modelfile ? modelfile : "", "\nTEMPLATE ") ? ", preferred over the TEMPLATE" : ", no TEMPLATE");
        return;
    }
    if (!jinja) {
        note(d, "TEMPLATE set; %s, so it was not compared", c->blob_ok ? "the GGUF has no chat template"
                                                                       : "the blob is not readable here");
        return;
    }
    /* the Go TEMPLATE in use against the GGUF's Jinja on the probe conversations */
    sn_tmpl_family f = {.name = "installed", .gotmpl = sel, .params_json = "{}", .add_bos = c->tr.add_bos == 1};
    sn_tmpl_model tm = {jinja, c->tr.bos_token, c->tr.eos_token, c->tr.add_bos};
    sn_tmpl_proof pf;
    sn_err e = {0};
    memset(&pf, 0, sizeof pf);
    if (sn_tmpl_prove(&tm, &f, 0, &pf, &e) != SN_OK) {
        note(d, "TEMPLATE not compared: %s", e.msg);
    } else if (!pf.identical) {
        if (pf.probe[0])
            problem(d, "render", fix,
                    "TEMPLATE renders differently from the GGUF's Jinja: probe '%s', first difference at byte %zu: "
                    "Jinja \"%s\" vs TEMPLATE \"%s\"", pf.probe, pf.offset, pf.jinja_snip, pf.go_snip);
        else
            problem(d, "render", fix, "TEMPLATE does not render like the GGUF's Jinja: %s", pf.reason);
    } else {
        note(d, "TEMPLATE renders byte-identical to the GGUF's Jinja on %zu probe conversations%s", pf.n_same,
             pf.n_trimmed ? " (content without surrounding white space)" : "");
    }
    sn_tmpl_proof_free(&pf);
}

static void check_stop(diag *d, model_ctx *c) {
    size_t n_stop = 0;
    char have[1024] = "";
    for (size_t i = 0; i < c->n_params; i++)
        if (!strcmp(c->params[i].key, "stop")) {
            size_t k = strlen(have);
            snprintf(have + k, sizeof have - k, "%s%s", n_stop ? ", " : "", c->params[i].raw);
            n_stop++;
        }
    /* the end of turn: the proven family's own stops, else the model's end-of-turn token */
    const char *want[16];
    size_t n_want = 0;
    if (c->fam)
        for (size_t i = 0; i < c->fam->n_stop && n_want < 16; i++) want[n_want++] = c->fam->stop[i];
    else if (c->tr_ok && c->tr.jinja && (c->tr.eot_token || c->tr.eos_token))
        want[n_want++] = c->tr.eot_token ? c->tr.eot_token : c->tr.eos_token;
    char wl[512] = "";
    for (size_t i = 0; i < n_want; i++) {
        size_t k = strlen(wl);
        snprintf(wl + k, sizeof wl - k, "%s%s", i ? " " : "", want[i]);
    }
    char fix[700];
    snprintf(fix, sizeof fix, "sunny-integrate doctor --model NAME --fix (stop: %s), or PARAMETER stop for each",
             n_want ? wl : "the template's end of turn");
    if (n_stop == 0) {
        if (n_want)
            problem(d, "stop", fix, "no stop: generation ends only at a token the server treats as end of "
                    "generation; the template's stops (%s, with its end of turn) are not set, so answers can run on "
                    "into a next turn", wl);
        else if (c->tr_ok && c->tr.jinja)
            problem(d, "stop", fix, "no stop parameter at all");
        return;
    }
    for (size_t i = 0; i < n_want; i++) {
        int found = 0;
        for (size_t j = 0; j < c->n_params && !found; j++)
            found = !strcmp(c->params[j].key, "stop") && !strcmp(c->params[j].val, want[i]);
        if (!found)
            problem(d, "stop", fix, "the stop list (%s) lacks the template's end of turn \"%s\"", have, want[i]);
    }
}

static void check_params(diag *d, model_ctx *c) {
    for (size_t i = 0; i < c->n_params; i++) {
        const param_line *l = &c->params[i];
        char k = option_kind(l->key), fix[512];
        snprintf(fix, sizeof fix, "--fix retypes it (PARAMETER %s %s)", l->key, l->val);
        if ((k == 'i' || k == 'f' || k == 'b') && l->quoted)
            problem(d, "param", fix,
                    "PARAMETER %s is the string %s; Ollama's api.Options.FromMap wants %s (\"option \\\"%s\\\" must "
                    "be of type %s\") and refuses every request to this model",
                    l->key, l->raw, k == 'b' ? "a boolean" : "a number", l->key,
                    k == 'i' ? "integer" : k == 'f' ? "float32" : "boolean");
        else if (k == 's' && !l->quoted)
            problem(d, "param", "--fix stores it as a string", "PARAMETER stop %s is not a string (option \"stop\" "
                    "must be of an array of strings)", l->raw);
    }
}

/* An empty-prompt generate only loads the model (GenerateHandler): what the server's llama.cpp
 * thinks of the architecture, and of the stored options. */
static void check_load(diag *d, sn_http *h, const char *name, const char *arch) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", name);
    cJSON_AddStringToObject(b, "prompt", "");
    cJSON_AddBoolToObject(b, "stream", 0);
    sn_ollama_gen g;
    sn_err e = {0};
    sn_status st = sn_ollama_generate(h, b, &g, &e);
    cJSON_Delete(b);
    if (st == SN_OK) { sn_ollama_gen_free(&g); return; }
    if (st == SN_EINVAL && strstr(e.msg, "done_reason \"load\"")) {
        note(d, "load: the server loads the model (architecture %s)", arch ? arch : "?");
        return;
    }
    if (strstr(e.msg, "must be of type") || strstr(e.msg, "must be of an array"))
        return; /* a parameter type error: named by check_params */
    if (strstr(e.msg, "architecture")) {
        char fix[512];
        snprintf(fix, sizeof fix, "upgrade Ollama to a release whose llama.cpp knows '%s'%s", arch ? arch : "?",
                 arch && sn_modelinfo_arch_known(arch) ? " (llama.cpp de3ff815, the one sunny is tested "
                 "against, does)" : "; no llama.cpp sunny knows loads it either");
        problem(d, "arch", fix, "the server's llama.cpp cannot load architecture '%s': %s", arch ? arch : "?", e.msg);
    } else {
        problem(d, "load", "see the server log (ollama serve) for the runner's error", "the server cannot load the "
                "model: %s", e.msg);
    }
}

/* Re-creates the model from its blob through the install (no upload: the blob is there). */
static sn_status fix_model(const sn_ollama_doctor_opts *o, const sn_ollama_install_cb *cb, const char *name,
                           const cJSON *show, model_ctx *c, cJSON *mj, sn_err *err) {
    cJSON *params = cJSON_CreateObject();
    for (size_t i = 0; i < c->n_params; i++) {
        const param_line *l = &c->params[i];
        if (!strcmp(l->key, "stop")) continue; /* the template's stops replace the old list */
        sn_err e = {0};
        if (sn_ollama_param_add(params, l->key, l->val, &e) != SN_OK && cb && cb->warn)
            cb->warn(cb->ud, e.msg);
    }
    const char *sys = jstr(show, "system");
    sn_ollama_install_opts a = {.gguf = c->blob, .name = name, .host = o->host, .env = o->env,
                                .system = sys && *sys ? sys : NULL, .params = params, .smoke = !o->dry_run,
                                .dry_run = o->dry_run, .n_predict = o->n_predict ? o->n_predict : 16,
                                .seed = o->seed, .ctx = o->ctx ? o->ctx : 512,
                                .prompt = o->prompt ? o->prompt : "The capital of France is",
                                .n_threads = o->n_threads ? o->n_threads : 2};
    sn_ollama_install_result res = {0};
    sn_ollama_job *job = NULL;
    sn_status st = sn_ollama_install_plan(&a, cb, &job, &res, err);
    if (st == SN_OK && o->dry_run && cb && cb->line) { /* the new Modelfile and the requests */
        const sn_install_plan *p = sn_ollama_job_plan(job);
        if (p->preamble) cb->line(cb->ud, p->preamble);
        if (p->heading) cb->line(cb->ud, p->heading);
        for (size_t i = 0; i < p->n_steps; i++) cb->line(cb->ud, p->steps[i]);
    }
    if (st == SN_OK) st = sn_ollama_install_run(job, cb, &res, err);
    sn_ollama_job_free(job);
    cJSON_Delete(params);
    if (res.json) cJSON_AddItemToObject(mj, "fix", res.json);
    if (st == SN_OK && res.diverged) st = sn_err_set(err, SN_EIO, "%s: re-created, but the smoke gate diverged", name);
    return st;
}

static void line(const sn_ollama_install_cb *cb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(const sn_ollama_install_cb *cb, const char *fmt, ...) {
    if (!cb || !cb->line) return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cb->line(cb->ud, buf);
}

/* One model: show, the checks, the verdict; deep adds the load probe. Returns problems found. */
static int diagnose(sn_http *h, const sn_ollama_version *v, const char *name, int deep, const sn_tmpl_set *set,
                    cJSON *mj, model_ctx *c) {
    diag d = {mj, cJSON_AddArrayToObject(mj, "problems"), cJSON_AddArrayToObject(mj, "notes"), 0};
    cJSON_AddStringToObject(mj, "model", name);
    cJSON *show = NULL;
    sn_err e = {0};
    if (sn_ollama_show(h, name, &show, &e) != SN_OK) {
        problem(&d, "show", "check the name with `ollama list`", "POST /api/show: %s", e.msg);
        return d.n;
    }
    const char *mf = jstr(show, "modelfile");
    const cJSON *mi = cJSON_GetObjectItemCaseSensitive(show, "model_info");
    const char *arch = jstr(mi, "general.architecture");
    if (!arch) arch = jstr(cJSON_GetObjectItemCaseSensitive(show, "details"), "family");
    if (arch) cJSON_AddStringToObject(mj, "arch", arch);
    c->blob_ok = blob_path(mf, c->blob, sizeof c->blob);
    if (c->blob[0]) cJSON_AddStringToObject(mj, "blob", c->blob);
    if (c->blob_ok) {
        sn_status st = sn_template_resolve(c->blob, NULL, &c->tr, &e);
        c->tr_ok = st == SN_OK || (st == SN_EUNSUPPORTED && c->tr.jinja);
        if (c->tr_ok && c->tr.family) c->fam = sn_tmpl_find(set, c->tr.family);
        if (!c->tr_ok && c->tr.jinja == NULL && st != SN_OK) c->tr_ok = 1; /* no chat template: a base model */
    } else {
        note(&d, "the blob %s is not readable here: template, render and stop checks need the GGUF",
             c->blob[0] ? c->blob : "(no FROM in the Modelfile)");
    }
    c->n_params = parse_params(jstr(show, "parameters"), c->params, sizeof c->params / sizeof c->params[0]);
    check_template(&d, v, show, mf, c);
    if (c->blob_ok) check_stop(&d, c);
    check_params(&d, c);
    if (deep) check_load(&d, h, name, arch);
    cJSON_AddItemToObject(mj, "show", show);
    return d.n;
}

sn_status sn_ollama_doctor_models(const sn_ollama_doctor_opts *o, const sn_ollama_install_cb *cb, cJSON **report,
                                  int *n_problems, int *n_unfixed, sn_err *err) {
    *report = cJSON_CreateObject();
    *n_problems = *n_unfixed = 0;
    if (!*report) return sn_err_set(err, SN_ENOMEM, "out of memory");
    sn_ollama_host oh;
    sn_ollama_parse_host(o->host ? o->host : o->env ? o->env->ollama_host : NULL, &oh);
    cJSON_AddStringToObject(*report, "host", oh.connect_url);
    sn_http *h = NULL;
    sn_tmpl_set *set = NULL;
    cJSON *tags = NULL;
    sn_status st = sn_http_new(oh.connect_url, o->env, &h, err);
    sn_ollama_version v;
    if (st == SN_OK) st = sn_ollama_probe(h, &v, err);
    if (st == SN_OK) st = sn_tmpl_load(&set, err);
    if (st) goto done;
    cJSON_AddStringToObject(*report, "version", v.raw);
    line(cb, "server  : %s (Ollama %s)", oh.connect_url, v.raw);
    const char *names[1024];
    int n = 0;
    if (o->all) {
        if ((st = sn_ollama_tags(h, &tags, err)) != SN_OK) goto done;
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(tags, "models"))
            if (jstr(m, "name") && n < 1024) names[n++] = jstr(m, "name");
        if (n == 0) line(cb, "no models on the server (GET /api/tags lists none)");
    } else names[n++] = o->model;
    cJSON *arr = cJSON_AddArrayToObject(*report, "models");
    for (int i = 0; i < n; i++) {
        cJSON *mj = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, mj);
        model_ctx *c = calloc(1, sizeof *c);
        if (!c) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
        int np = diagnose(h, &v, names[i], !o->all, set, mj, c);
        *n_problems += np;
        const cJSON *p;
        if (o->all) {
            char first[1200] = "";
            const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(mj, "problems"), 0);
            if (p0) snprintf(first, sizeof first, "%s: %s", jstr(p0, "check"), jstr(p0, "problem"));
            line(cb, "%-32s %s%s", names[i], np ? "PROBLEMS " : "ok", np ? first : "");
            if (np > 1) line(cb, "%-32s   (+%d more; doctor --model %s)", "", np - 1, names[i]);
        } else {
            line(cb, "model   : %s%s%s", names[i], c->blob[0] ? "  blob " : "", c->blob);
            cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(mj, "problems")) {
                line(cb, "[%s] %s", jstr(p, "check"), jstr(p, "problem"));
                line(cb, "        fix: %s", jstr(p, "fix"));
            }
            cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(mj, "notes")) line(cb, "  note: %s", p->valuestring);
        }
        if (np == 0) {
            cJSON_AddStringToObject(mj, "clean_reason", c->blob_ok ? "TEMPLATE, stops, parameter types and load all check out"
                                                                   : "parameters and load check out (GGUF not readable here)");
            if (!o->all) line(cb, "clean   : %s", jstr(mj, "clean_reason"));
        } else if (o->fix && !c->blob_ok) {
            line(cb, "cannot fix %s: its blob is not readable here", names[i]);
            *n_unfixed += np;
        } else if (o->fix) {
            line(cb, "fix     : re-creating %s from its blob (no upload)%s", names[i], o->dry_run ? " - dry run" : "");
            sn_err fe = {0};
            if (fix_model(o, cb, names[i], cJSON_GetObjectItemCaseSensitive(mj, "show"), c, mj, &fe) != SN_OK) {
                line(cb, "fix failed: %s", fe.msg);
                *n_unfixed += np;
            } else if (!o->dry_run) {
                model_ctx *c2 = calloc(1, sizeof *c2);
                cJSON *after = cJSON_CreateObject();
                int left = c2 ? diagnose(h, &v, names[i], 1, set, after, c2) : np;
                if (c2) { sn_template_result_free(&c2->tr); free(c2); }
                cJSON_DeleteItemFromObject(after, "show");
                cJSON_AddItemToObject(mj, "after_fix", after);
                line(cb, "after fix: %d problem(s)%s", left, left ? "" : " - doctor and the smoke gate pass");
                *n_unfixed += left;
            } else *n_unfixed += np;
        } else *n_unfixed += np;
        cJSON_DeleteItemFromObject(mj, "show");
        sn_template_result_free(&c->tr);
        free(c);
    }
done:
    cJSON_Delete(tags);
    sn_tmpl_set_free(set);
    sn_http_free(h);
    return st;
}
