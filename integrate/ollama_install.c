/* ollama_install.c - the `sunny-integrate ollama` job as a plan and a run (see ollama_install.h).
 * Each step is a call into ollama.h / template_cmd.h / smoke.h; this file only orders them in named
 * phases and says what happened through the callbacks. */
#include "budget.h"
#include "ollama_install.h"
#include "http.h"
#include "mapfile.h"
#include "modelinfo.h"
#include "ollama.h"
#include "outfile.h"
#include "sizefmt.h"
#include "smoke.h"
#include "template_cmd.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One status line through cb->line, a warning through cb->warn. */
#define say(cb, ...) sn_install_say((cb) ? (cb)->line : NULL, (cb) ? (cb)->ud : NULL, __VA_ARGS__)
#define warn(cb, ...) sn_install_say((cb) ? (cb)->warn : NULL, (cb) ? (cb)->ud : NULL, __VA_ARGS__)

/* The smoke verdict: its line through cb->line, its JSON into out; 1 on divergence. */
static int report(const sn_ollama_install_cb *cb, const sn_smoke_result *res, cJSON *out) {
    char line[4096];
    sn_smoke_format(res, "ollama", line, sizeof line);
    say(cb, "%s", line);
    return sn_smoke_result_json(res, out);
}

/* text to a temp file of our own beside path (sn_tmp_create), renamed onto path */
static int write_file_atomic(const char *path, const char *text, sn_err *err) {
    char *tmp = NULL;
    int fd = sn_tmp_create(path, "", &tmp, err);
    if (fd < 0) return SN_EIO;
    size_t n = strlen(text), done = 0;
    while (done < n) {
        ssize_t k = write(fd, text + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        done += (size_t)k;
    }
    int ok = (close(fd) == 0) && done == n;
    if (!ok || rename(tmp, path) != 0) {
        sn_err_set(err, SN_EIO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return SN_EIO;
    }
    free(tmp);
    return SN_OK;
}

/* --template: "jinja" sends none; "auto" claims the family proven by rendering against the GGUF's
 * Jinja; a *.jinja FILE is proven the same way; any other FILE is a Go template sent as is. Proven
 * stops/params are merged under the user's --param values, a derived default system prompt goes to
 * *sys. When no family is proven, *unproven gets the reason and no template is chosen here: the
 * caller decides from the server version (TEMPLATE left out on >= 0.30, else refused), unless
 * --template-accept-diff installs the nearest family anyway. */
static int resolve_template(const sn_ollama_install_opts *a, const sn_ollama_install_cb *cb, const sn_modelinfo *mi, char **tmpl, cJSON *params,
                            char *src, size_t src_cap, char **sys, char **unproven, cJSON *jout, sn_err *err) {
    *tmpl = NULL;
    *sys = NULL;
    *unproven = NULL;
    const char *t = a->tmpl ? a->tmpl : "auto";
    if (strcmp(t, "jinja") == 0) {
        snprintf(src, src_cap, "none sent: the server uses the GGUF's own Jinja template (Ollama >= 0.30)%s",
                 mi->chat_template ? "" : " — but this GGUF has no tokenizer.chat_template!");
        return SN_OK;
    }
    size_t tl = strlen(t);
    int jinja_file = tl > 6 && strcmp(t + tl - 6, ".jinja") == 0;
    if (strcmp(t, "auto") != 0 && !jinja_file) {
        if (SN_READ_FILE(t, SN_BUDGET_TEXT_FILE, tmpl, NULL, err)) return err->code;
        snprintf(src, src_cap, "Go template from %s", t);
        return SN_OK;
    }
    if (!jinja_file && !mi->chat_template) /* a base model: raw completion, said so */
        return sn_ollama_base_model_template(tmpl, src, src_cap, err);
    sn_template_result r;
    sn_status st = sn_template_resolve(a->gguf, jinja_file ? t : NULL, &r, err);
    if (st == SN_EUNSUPPORTED && r.jinja && r.refusal) {
        if (!a->accept_diff) {
            *unproven = strdup(r.refusal);
            snprintf(src, src_cap, "no family proven (%s)", r.refusal);
            sn_template_result_free(&r);
            memset(err, 0, sizeof *err);
            return *unproven ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
        }
        warn(cb, "--template-accept-diff: installing %s although it renders differently from the "
                     "GGUF's Jinja: %s", r.nearest ? r.nearest : "?", r.refusal);
        memset(err, 0, sizeof *err);
        st = sn_template_use_nearest(&r, err);
    }
    if (st != SN_OK) {
        sn_template_result_free(&r);
        if (st == SN_EUNSUPPORTED) return st;
        return sn_err_prefix(err, "--template %s", t);
    }
    *tmpl = strdup(r.template);
    if (r.system && !a->system) *sys = strdup(r.system);
    for (size_t i = 0; i < r.n_stop && st == SN_OK; i++) st = sn_ollama_param_add(params, "stop", r.stop[i], err);
    cJSON *extra = r.params_json ? cJSON_Parse(r.params_json) : NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, extra) {
        if (!it->string || cJSON_GetObjectItemCaseSensitive(params, it->string)) continue;
        cJSON_AddItemToObject(params, it->string, cJSON_Duplicate(it, 1));
    }
    cJSON_Delete(extra);
    char proof[300];
    if (!r.proved) snprintf(proof, sizeof proof, "NOT proven equal to its Jinja");
    else if (r.caveat) snprintf(proof, sizeof proof, "proven byte-identical to its Jinja by rendering for %s (the "
                                "Jinja strips it; Ollama's Go templates cannot)", r.caveat);
    else snprintf(proof, sizeof proof, "proven byte-identical to its Jinja by rendering");
    if (r.caveat) cJSON_AddStringToObject(jout, "template_caveat", r.caveat);
    snprintf(src, src_cap, "%s (detected from %s, %s, %zu stop value(s)%s)", r.family, r.source, proof,
             r.n_stop, *sys ? ", default SYSTEM from the Jinja" : "");
    sn_template_result_free(&r);
    if (!*tmpl && st == SN_OK) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    return st;
}

/* After install: the prompt the server itself renders (/api/generate with _debug_render_only,
 * Ollama >= 0.11.5; GenerateHandler renders [model SYSTEM, prompt] through the selected template)
 * must equal the GGUF's Jinja rendered by sunny for the same conversation. A difference fails the
 * install when sunny claimed the template (must_match), else it is a warning. */
static int check_server_render(sn_http *h, const sn_ollama_install_opts *a, const sn_ollama_install_cb *cb,
                               int must_match, cJSON *out, sn_err *err) {
    static const char PROMPT[] = "What is 2+2?";
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", a->name);
    cJSON_AddStringToObject(b, "prompt", PROMPT);
    cJSON_AddBoolToObject(b, "_debug_render_only", 1);
    cJSON_AddBoolToObject(b, "stream", 0);
    char *js = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    /* one answer at the end, after the server loaded the model: the load limit, not the stall one */
    sn_http_req rq = {.method = "POST", .path = "/api/generate", .json = js, .loads_model = 1};
    sn_http_resp r;
    sn_status st = js ? sn_http_do(h, &rq, &r, err) : SN_ENOMEM;
    free(js);
    if (st) { sn_http_resp_free(&r); return st; }
    cJSON *j = r.cls == SN_HTTP_OK ? cJSON_Parse(r.body) : NULL;
    sn_http_resp_free(&r);
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(j, "_debug_info");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(info, "rendered_template");
    if (!cJSON_IsString(rt)) {
        say(cb, "render  : the server did not return _debug_info.rendered_template; prompt not checked");
        cJSON_Delete(j);
        return 0;
    }
    /* a derived default SYSTEM stands for the Jinja's own default: render the Jinja without one */
    const char *sys = a->system;
    char *mine = NULL;
    if (sn_template_render_jinja(a->gguf, sys, PROMPT, 0, &mine, err)) {
        cJSON_Delete(j);
        if (!must_match) { warn(cb, "server render not checked: %s", err->msg); memset(err, 0, sizeof *err); return 0; }
        return err->code;
    }
    const char *srv = rt->valuestring;
    int same = strcmp(srv, mine) == 0;
    if (!same) { /* a server rendering the Jinja itself (>= 0.30) keeps the BOS text the Jinja writes */
        char *with_bos = NULL;
        if (sn_template_render_jinja(a->gguf, sys, PROMPT, 1, &with_bos, err) == SN_OK && strcmp(srv, with_bos) == 0) {
            same = 1;
        }
        memset(err, 0, sizeof *err);
        free(with_bos);
    }
    cJSON_AddBoolToObject(out, "server_render_matches_jinja", same);
    if (same) {
        say(cb, "render  : the server's prompt (_debug_render_only) is byte-identical to the GGUF's Jinja");
    } else {
        size_t i = 0;
        while (srv[i] && srv[i] == mine[i]) i++;
        char msg[600];
        snprintf(msg, sizeof msg, "the server renders the prompt differently from the GGUF's Jinja at byte %zu: "
                 "server \"%.60s\" vs Jinja \"%.60s\"", i, srv + (i > 20 ? i - 20 : 0), mine + (i > 20 ? i - 20 : 0));
        cJSON_AddStringToObject(out, "server_render_difference", msg);
        if (must_match) { sn_err_set(err, SN_EIO, "%s", msg); free(mine); cJSON_Delete(j); return SN_EIO; }
        warn(cb, "%s", msg);
    }
    free(mine);
    cJSON_Delete(j);
    return 0;
}

/* The chat half of --smoke: a fixed user turn through the template the server selected (no raw, no
 * request template), against sunny's run on the prompt the model's own template renders for that turn
 * (the GGUF's Jinja, rendered by sunny). This is what catches a model installed with the wrong
 * template, e.g. none stored on a server whose default is {{ .Prompt }}. Not run for a base model (no
 * chat template) or when the server renders the GGUF's Jinja itself (the render check above compares
 * that rendering). Returns 1 on a divergence; err set on a failure to run it. */
static int smoke_chat(sn_http *h, const sn_ollama_version *ver, const sn_ollama_install_opts *a,
                      const sn_ollama_install_cb *cb, const sn_modelinfo *mi, sn_ollama_tmpl_sel sel, cJSON *out,
                      sn_err *err) {
    static const char USER[] = "What is 2+2?";
    if (!mi->chat_template) return 0;
    if (sel == SN_OLLAMA_TMPL_JINJA) {
        say(cb, "[smoke] note: chat not run (the server renders the GGUF's own Jinja; see the render check)");
        return 0;
    }
    char *rendered = NULL;
    if (sn_template_render_jinja(a->gguf, a->system, USER, 0, &rendered, err)) {
        say(cb, "[smoke] note: chat not run (sunny cannot render the GGUF's template: %s)", err->msg);
        memset(err, 0, sizeof *err);
        return 0;
    }
    sn_smoke_opts so = {.gguf_path = a->gguf, .prompt = rendered, .n_predict = a->n_predict, .n_ctx = (int)a->ctx,
                        .n_threads = a->n_threads, .tuning = a->env ? a->env->tuning : NULL};
    sn_smoke_local ours;
    sn_status st = sn_smoke_run_local(&so, &ours, err);
    free(rendered);
    if (st) return 0;
    sn_smoke_result res;
    st = sn_ollama_smoke_chat(h, ver, a->name, USER, a->n_predict, a->seed, (int)a->ctx, &ours, &res, err);
    sn_smoke_local_free(&ours);
    if (st) return 0;
    snprintf(res.scope, sizeof res.scope, "chat (\"%s\" through the installed template): ", USER);
    int bad = report(cb, &res, out);
    sn_smoke_result_free(&res);
    return bad;
}

/* --modelfile-out, once the install (or dry run) succeeded. */
static sn_status write_modelfile(const sn_ollama_install_opts *a, const sn_ollama_install_cb *cb, const char *mf,
                                 cJSON *out, sn_err *err) {
    if (!a->modelfile_out) return SN_OK;
    sn_status st = write_file_atomic(a->modelfile_out, mf, err);
    if (st) return st;
    say(cb, "wrote   : %s (for `ollama create %s -f %s`)", a->modelfile_out, a->name, a->modelfile_out);
    cJSON_AddStringToObject(out, "modelfile", a->modelfile_out);
    return SN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * the job: what the plan decided, what the run carries out */

struct sn_ollama_job {
    const sn_ollama_install_opts *a;
    sn_modelinfo mi;
    int have_mi;
    cJSON *out;                     /* the summary (owned by the result) */
    char *tmpl, *dsys, *unproven;   /* the template decision (resolve_template) */
    char tsrc[512];
    sn_ollama_model_spec spec;
    char *mf;                       /* the equivalent Modelfile */
    sn_ollama_host oh;
    sn_http *h;
    sn_ollama_version ver;
    int contacted, legacy;
    char hex[65], digest[80];
    uint64_t fsize;
    char **parts, **part_digests;   /* a split GGUF's shards and their digests */
    size_t n_parts;
    char *body;                     /* the create body */
    sn_install_plan plan;
};

/* Refusals that are usage errors (a later shard, --smoke on a split GGUF), then the model's info. */
static sn_status check_model(sn_ollama_job *j, sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    int sp_part, sp_count;
    if (sn_ollama_split_name(a->gguf, &sp_part, &sp_count) && sp_part != 1)
        return sn_err_set_detail(err, SN_EINVAL, SN_OLLAMA_BAD_OPTIONS, "%s is part %d of a %d-part split GGUF; "
                                 "pass the first part (-00001-of-%05d.gguf)", a->gguf, sp_part, sp_count, sp_count);
    if (sn_modelinfo_read(a->gguf, &j->mi, err)) return err->code;
    j->have_mi = 1;
    return SN_OK;
}

/* The equivalent Modelfile: printed by --dry-run, written by --modelfile-out only once the install
 * (or the dry run) has succeeded. FROM must resolve relative to the Modelfile: ./file when they
 * share a directory. */
static sn_status build_modelfile(sn_ollama_job *j, sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    char from[4096], gdir[4096], mdir[4096];
    char *gr = realpath(a->gguf, NULL);
    snprintf(gdir, sizeof gdir, "%s", gr ? gr : a->gguf);
    char *slash = strrchr(gdir, '/');
    if (slash) *slash = 0;
    snprintf(mdir, sizeof mdir, "%s", a->modelfile_out ? a->modelfile_out : ".");
    char *ms = strrchr(mdir, '/');
    if (ms) *ms = 0; else snprintf(mdir, sizeof mdir, ".");
    char *mr = realpath(mdir, NULL);
    if (gr && mr && strcmp(gdir, mr) == 0) snprintf(from, sizeof from, "./%s", slash ? slash + 1 : a->gguf);
    else snprintf(from, sizeof from, "%s", gr ? gr : a->gguf);
    free(gr);
    free(mr);
    j->mf = sn_ollama_modelfile(&j->spec, from, err);
    return j->mf ? SN_OK : (err->code ? err->code : SN_ENOMEM);
}

/* The server and its version, and what the version allows: a dry run goes on without a server. */
static sn_status connect_server(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    sn_ollama_parse_host(a->host ? a->host : a->env ? a->env->ollama_host : NULL, &j->oh);
    if (sn_http_new(j->oh.connect_url, a->env, &j->h, err)) return err->code;
    say(cb, "server  : %s%s", j->oh.connect_url, sn_http_is_loopback(j->h) ? " (loopback: proxies bypassed)" : "");
    cJSON_AddStringToObject(j->out, "host", j->oh.connect_url);
    j->contacted = 1;
    if (sn_ollama_probe(j->h, &j->ver, err)) {
        if (!a->dry_run) return err->code;
        /* a dry run previews without a server: say so, and show the current (>= 0.5.5) API */
        say(cb, "version : no server answered (%s)\n"
                "          did not contact a server; showing the requests for Ollama >= 0.5.5", err->msg);
        memset(err, 0, sizeof *err);
        memset(&j->ver, 0, sizeof j->ver);
        j->ver.dev = 1;
        snprintf(j->ver.raw, sizeof j->ver.raw, "unknown");
        j->contacted = 0;
    } else {
        say(cb, "version : %s", j->ver.raw);
        cJSON_AddStringToObject(j->out, "version", j->ver.raw);
    }
    cJSON_AddBoolToObject(j->out, "server_contacted", j->contacted);
    j->legacy = sn_ollama_version_cmp(&j->ver, 0, 5, 5) < 0;
    int before_030 = j->contacted && sn_ollama_version_cmp(&j->ver, 0, 30, 0) < 0;
    if (j->unproven) { /* no Go template is proven equal to the Jinja: only the server's own Jinja is right */
        cJSON_AddStringToObject(j->out, "template_refusal", j->unproven);
        if (before_030)
            return sn_err_set(err, SN_EUNSUPPORTED, "no Go template is proven equal to this GGUF's Jinja (%s), and "
                              "Ollama %s < 0.30 cannot render the Jinja itself; pass --template FILE with a Go "
                              "template you trust, or --template-accept-diff to install %s anyway",
                              j->unproven, j->ver.raw, "the nearest family");
        say(cb, "note    : TEMPLATE left out: %s renders the GGUF's own Jinja chat template itself "
                "(no Go template of sunny's is proven equal to it)",
            j->contacted ? "this Ollama (>= 0.30)" : "Ollama >= 0.30 (older servers need --template FILE)");
    }
    if (before_030 && !j->tmpl)
        warn(cb, "Ollama %s < 0.30 ignores the GGUF's Jinja template: with --template jinja the model "
                 "runs with {{ .Prompt }} (raw text, no chat markers); use --template auto or FILE", j->ver.raw);
    return SN_OK;
}

/* Ollama's harmony rule (server/routes.go shouldUseHarmony), its families as data: a model of these
 * families whose TEMPLATE holds both tags runs as harmony. */
static const char *const k_harmony_families[] = {"gptoss", "gpt-oss", NULL};

/* Says what Ollama will do with a harmony-family model: with a TEMPLATE holding <|start|> and <|end|>,
 * that TEMPLATE renders each prompt (renderPrompt, server/prompt.go), llama-server runs without Jinja
 * (usesOllamaRenderedChat) and Ollama's harmony parser splits non-raw replies; without one, the server
 * renders the GGUF's harmony Jinja through llama-server, which parses the channels itself. */
static void harmony_note(sn_ollama_job *j, const sn_ollama_install_cb *cb) {
    int fam = 0;
    for (const char *const *f = k_harmony_families; *f; f++) fam |= strcmp(j->mi.arch, *f) == 0;
    if (!fam) return;
    int tags = j->tmpl && strstr(j->tmpl, "<|start|>") && strstr(j->tmpl, "<|end|>");
    cJSON_AddBoolToObject(j->out, "harmony", tags);
    if (tags)
        say(cb, "harmony : this TEMPLATE holds <|start|> and <|end|>, so Ollama runs this %s model as harmony "
                "(server/routes.go shouldUseHarmony): the TEMPLATE renders each prompt, llama-server's Jinja is off, "
                "and Ollama's harmony parser splits replies into thinking, content and tool calls (the smoke gate "
                "compares raw tokens and the rendered prompt, not that parsing)", j->mi.arch);
    else
        say(cb, "harmony : not used: Ollama runs a %s model as harmony only with a TEMPLATE holding <|start|> and "
                "<|end|> (server/routes.go shouldUseHarmony); %s", j->mi.arch,
            j->tmpl ? "this TEMPLATE renders the prompts and replies come back unparsed (channels as text)"
                    : "here the server renders the GGUF's own harmony Jinja (llama-server, which also parses the "
                      "reply's channels)");
}

/* The blob names: the file's digest, and every shard's for a split GGUF (their own create entries). */
static sn_status hash_blobs(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    double secs = 0;
    if (sn_ollama_sha256_file(a->gguf, j->hex, &j->fsize, &secs, err)) return err->code;
    snprintf(j->digest, sizeof j->digest, "sha256:%s", j->hex);
    double gbps = secs > 0 ? (double)j->fsize / secs / 1e9 : 0;
    char dsz[SN_SIZE_STR_MAX];
    say(cb, "digest  : %s (%.2f GB/s over %s)", j->digest, gbps, sn_size_short(j->fsize, dsz, sizeof dsz));
    cJSON_AddStringToObject(j->out, "digest", j->digest);
    cJSON_AddNumberToObject(j->out, "sha256_gb_per_s", gbps);
    if (j->mi.split_count <= 1) return SN_OK;
    if (sn_ollama_version_cmp(&j->ver, 0, 30, 0) < 0)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s is part 1 of a %d-part split GGUF: Ollama %s cannot import split GGUFs (0.30 and newer "
                          "can); merge the parts first with `llama-gguf-split --merge`", a->gguf, j->mi.split_count,
                          j->ver.raw);
    if (sn_ollama_split_parts(a->gguf, j->mi.split_count, &j->parts, &j->n_parts, err)) return err->code;
    j->part_digests = calloc(j->n_parts, sizeof *j->part_digests);
    if (!j->part_digests) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t i = 0; i < j->n_parts; i++) {
        char ph[65];
        uint64_t psz = 0;
        if (i == 0) snprintf(ph, sizeof ph, "%s", j->hex);
        else if (sn_ollama_sha256_file(j->parts[i], ph, &psz, NULL, err)) return err->code;
        j->part_digests[i] = malloc(80);
        if (!j->part_digests[i]) return sn_err_set(err, SN_ENOMEM, "out of memory");
        snprintf(j->part_digests[i], 80, "sha256:%s", ph);
        if (i) say(cb, "shard %zu : %s (%s)", i + 1, j->part_digests[i], j->parts[i]);
    }
    j->spec.n_parts = j->n_parts;
    j->spec.part_paths = (const char *const *)j->parts;
    j->spec.part_digests = (const char *const *)j->part_digests;
    cJSON_AddNumberToObject(j->out, "split_parts", (double)j->n_parts);
    return SN_OK;
}

/* The create body the server's version takes. */
static sn_status make_create_body(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_err *err) {
    if (j->legacy) {
        j->body = sn_ollama_create_body_legacy(&j->spec, j->digest, err);
        if (!j->body) return err->code ? err->code : SN_ENOMEM;
        say(cb, "note    : server < 0.5.5: using the legacy {\"model\",\"modelfile\"} create body");
        return SN_OK;
    }
    j->body = sn_ollama_create_body(&j->spec, j->digest);
    return j->body ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
}

/* What the run would send, in order: the plan --dry-run prints. */
static sn_status fill_plan(sn_ollama_job *j, sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    sn_install_plan *p = &j->plan;
    const char *u = j->oh.connect_url;
    size_t ml = strlen(j->mf);
    int bad = sn_install_plan_set(&p->preamble, "Modelfile (equivalent, for `ollama create %s -f FILE`):\n%.*s",
                                  a->name, (int)(ml && j->mf[ml - 1] == '\n' ? ml - 1 : ml), j->mf);
    bad |= sn_install_plan_set(&p->heading, "%s", j->contacted
                                   ? "dry run : these requests would be sent (only the version probe was):"
                                   : "dry run : these requests would be sent (none was: no server was contacted):");
    bad |= sn_install_plan_add(p, "HEAD %s/api/blobs/%s", u, j->digest);
    char bsz[SN_SIZE_STR_MAX];
    bad |= sn_install_plan_add(p, "POST %s/api/blobs/%s  <- %s streamed from %s (only if HEAD says 404)", u,
                               j->digest, sn_size_str(j->fsize, bsz, sizeof bsz), a->gguf);
    bad |= sn_install_plan_add(p, "POST %s/api/create  %s", u, j->body);
    bad |= sn_install_plan_add(p, "POST %s/api/show  {\"model\":\"%s\"}", u, a->name);
    if (a->smoke)
        bad |= sn_install_plan_add(p, "POST %s/api/generate  (smoke: raw, temperature 0, top_k 1, seed %lld, "
                                   "num_predict %d, num_ctx %lld)", u, (long long)a->seed, a->n_predict, (long long)a->ctx);
    if (a->smoke && j->mi.chat_template)
        bad |= sn_install_plan_add(p, "POST %s/api/generate  (smoke, chat half: the user turn \"What is 2+2?\" through "
                                   "the template the server selected, same options; skipped if it renders the GGUF's "
                                   "Jinja itself)", u);
    return bad ? sn_err_set(err, SN_ENOMEM, "out of memory") : SN_OK;
}

sn_status sn_ollama_install_plan(const sn_ollama_install_opts *a, const sn_ollama_install_cb *cb,
                                 sn_ollama_job **job, sn_ollama_install_result *res, sn_err *err) {
    memset(res, 0, sizeof *res);
    *job = NULL;
    sn_ollama_job *j = calloc(1, sizeof *j);
    if (!j) return sn_err_set(err, SN_ENOMEM, "out of memory");
    j->a = a;
    sn_status st = check_model(j, err);
    if (st) { sn_ollama_job_free(j); return st; }
    res->json = j->out = cJSON_CreateObject();
    if (!j->out) { sn_ollama_job_free(j); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
    cJSON_AddStringToObject(j->out, "model", a->name);
    cJSON_AddStringToObject(j->out, "gguf", a->gguf);
    cJSON_AddStringToObject(j->out, "architecture", j->mi.arch);
    cJSON_AddStringToObject(j->out, "quantization", j->mi.quant);
    st = resolve_template(a, cb, &j->mi, &j->tmpl, a->params, j->tsrc, sizeof j->tsrc, &j->dsys, &j->unproven, j->out, err);
    if (st == SN_OK) {
        j->spec = (sn_ollama_model_spec){.name = a->name, .gguf_path = a->gguf, .template_text = j->tmpl,
                                         .system = a->system ? a->system : j->dsys, .parameters = a->params,
                                         .license = j->mi.license, .gguf_chat_template = j->mi.chat_template};
        char fsz[SN_SIZE_STR_MAX];
        say(cb, "model   : %s (%s, %s, %s)", a->gguf, j->mi.arch, j->mi.quant, sn_size_str(j->mi.file_size, fsz, sizeof fsz));
        say(cb, "template: %s", j->tsrc);
        st = build_modelfile(j, err);
    }
    if (st == SN_OK) st = connect_server(j, cb, err);
    if (st == SN_OK) harmony_note(j, cb);
    if (st == SN_OK) st = hash_blobs(j, cb, err);
    if (st == SN_OK) st = make_create_body(j, cb, err);
    if (st == SN_OK) st = fill_plan(j, err);
    if (st) {
        if (!err->code) sn_err_set(err, SN_ENOMEM, "out of memory");
        sn_ollama_job_free(j);
        return err->code;
    }
    *job = j;
    return SN_OK;
}

const sn_install_plan *sn_ollama_job_plan(const sn_ollama_job *j) { return &j->plan; }

void sn_ollama_job_free(sn_ollama_job *j) {
    if (!j) return;
    free(j->body);
    free(j->mf);
    free(j->tmpl);
    free(j->dsys);
    free(j->unproven);
    sn_ollama_parts_free(j->parts, j->n_parts);
    sn_ollama_parts_free(j->part_digests, j->n_parts);
    sn_http_free(j->h);
    if (j->have_mi) sn_modelinfo_free(&j->mi);
    sn_install_plan_free(&j->plan);
    free(j);
}

/* Every blob the server lacks (HEAD, then a streamed POST). */
static sn_status upload_blobs(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_err *err) {
    int exists = 0;
    for (size_t i = 0; i < (j->n_parts > 1 ? j->n_parts : 1); i++) {
        const char *bp = j->n_parts > 1 ? j->parts[i] : j->a->gguf, *bd = j->n_parts > 1 ? j->part_digests[i] : j->digest;
        int ex = 0;
        if (sn_ollama_blob_exists(j->h, bd, &ex, err)) return err->code;
        if (i == 0) exists = ex;
        if (ex) say(cb, "blob    : %s already on the server", bp);
        else {
            say(cb, "blob    : uploading %s", bp);
            if (sn_ollama_blob_upload(j->h, bp, bd, cb->progress, cb->ud, cb->server_line, cb->ud, err)) return err->code;
        }
    }
    cJSON_AddBoolToObject(j->out, "uploaded", !exists);
    return SN_OK;
}

/* POST /api/create; a dev build reports 0.0.0 (taken as newest): if it turns out to be older than
 * 0.5.5, the legacy body once more. */
static sn_status create_model(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_err *err) {
    say(cb, "create  : %s", j->a->name);
    if (!sn_ollama_create(j->h, j->body, cb->server_line, cb->ud, err)) return SN_OK;
    if (j->legacy || err->detail != SN_OLLAMA_WANTS_LEGACY_BODY) return err->code;
    say(cb, "note    : the server wants the legacy create body; retrying with it");
    free(j->body);
    j->body = sn_ollama_create_body_legacy(&j->spec, j->digest, err);
    if (!j->body || sn_ollama_create(j->h, j->body, cb->server_line, cb->ud, err)) return err->code ? err->code : SN_ENOMEM;
    return SN_OK;
}

/* /api/show against what was sent, then the server's own rendering against the GGUF's Jinja. */
static sn_status verify_install(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_ollama_tmpl_sel *tsel,
                                sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    cJSON *show = NULL;
    if (sn_ollama_show(j->h, a->name, &show, err)) return err->code;
    char note[1024];
    sn_status vs = sn_ollama_verify_show(show, &j->spec, j->mi.arch, note, sizeof note, err);
    if (vs) { cJSON_Delete(show); return vs; }
    say(cb, "verified: %s", note);
    cJSON_AddStringToObject(j->out, "verified", note);
    *tsel = sn_ollama_selected_template(show, &j->spec);
    cJSON_AddStringToObject(j->out, "template_selected", sn_ollama_tmpl_sel_name(*tsel));
    cJSON_Delete(show);
    int claimed = j->tmpl && !j->unproven && (!a->tmpl || !strcmp(a->tmpl, "auto")) && !a->accept_diff;
    if (j->mi.chat_template && sn_ollama_version_cmp(&j->ver, 0, 11, 5) >= 0 &&
        check_server_render(j->h, a, cb, claimed, j->out, err))
        return err->code ? err->code : SN_EIO;
    return SN_OK;
}

/* --run: one generation with the installed template, its answer reported. */
static sn_status run_prompt(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_err *err) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", j->a->name);
    cJSON_AddStringToObject(b, "prompt", j->a->run_prompt);
    sn_ollama_gen g;
    sn_status gs = sn_ollama_generate(j->h, b, &g, err);
    cJSON_Delete(b);
    if (gs) return gs;
    say(cb, "run     : %s", g.text);
    cJSON_AddStringToObject(j->out, "run", g.text);
    sn_ollama_gen_free(&g);
    return SN_OK;
}

/* --smoke: the server's tokens against sunny's runtime, raw and through the installed template. */
static sn_status smoke_gate(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_ollama_tmpl_sel tsel,
                            sn_ollama_install_result *res, sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    sn_smoke_opts so = {.gguf_path = a->gguf, .prompt = a->prompt, .n_predict = a->n_predict, .n_ctx = (int)a->ctx,
                        .n_threads = a->n_threads, .tuning = a->env ? a->env->tuning : NULL};
    sn_smoke_local ours;
    if (sn_smoke_run_local(&so, &ours, err)) return err->code;
    sn_smoke_result sr;
    sn_status ss = sn_ollama_smoke(j->h, &j->ver, a->name, a->prompt, a->n_predict, a->seed, (int)a->ctx, &ours, &sr, err);
    sn_smoke_local_free(&ours);
    if (ss) return ss;
    if (report(cb, &sr, j->out)) res->diverged = 1;
    sn_smoke_result_free(&sr);
    if (smoke_chat(j->h, &j->ver, a, cb, &j->mi, tsel, j->out, err)) res->diverged = 1;
    return err->code;
}

sn_status sn_ollama_install_run(sn_ollama_job *j, const sn_ollama_install_cb *cb, sn_ollama_install_result *res,
                                sn_err *err) {
    const sn_ollama_install_opts *a = j->a;
    sn_status st;
    if (a->dry_run) {
        cJSON_AddBoolToObject(j->out, "dry_run", 1);
        cJSON_AddRawToObject(j->out, "create_body", j->body);
        st = write_modelfile(a, cb, j->mf, j->out, err);
    } else {
        sn_ollama_tmpl_sel tsel = SN_OLLAMA_TMPL_OTHER;
        st = upload_blobs(j, cb, err);
        if (st == SN_OK) st = create_model(j, cb, err);
        if (st == SN_OK) st = verify_install(j, cb, &tsel, err);
        if (st == SN_OK) st = write_modelfile(a, cb, j->mf, j->out, err);
        if (st == SN_OK && a->run_prompt) st = run_prompt(j, cb, err);
        /* installed: an error a step recovered from (an upload retried, the legacy create body) is over */
        if (st == SN_OK) memset(err, 0, sizeof *err);
        if (st == SN_OK && a->smoke) st = smoke_gate(j, cb, tsel, res, err);
    }
    if (st == SN_OK) {
        memset(err, 0, sizeof *err);
        return SN_OK;
    }
    if (!err->code) sn_err_set(err, SN_ENOMEM, "out of memory");
    return err->code;
}

sn_status sn_ollama_install(const sn_ollama_install_opts *a, const sn_ollama_install_cb *cb,
                            sn_ollama_install_result *res, sn_err *err) {
    sn_ollama_job *j;
    sn_status st = sn_ollama_install_plan(a, cb, &j, res, err);
    if (st == SN_OK) st = sn_ollama_install_run(j, cb, res, err);
    sn_ollama_job_free(j);
    return st;
}
