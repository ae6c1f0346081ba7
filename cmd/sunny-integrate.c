/* sunny-integrate.c - install a GGUF into Ollama or LM Studio and prove it token-exact; diagnose the
 * environment; show the chat template sunny derives. Parses flags, calls integrate/, prints.
 * This file: the output helpers, the ollama subcommand and main(); lmstudio, doctor, template and
 * digest are sunny-integrate-cmds.c (shared declarations in sunny-integrate.h). */
#include "cli.h"
#include "doctor.h"
#include "http.h"
#include "lmstudio.h"
#include "modelinfo.h"
#include "ollama.h"
#include "smoke.h"
#include "utf8.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "template_cmd.h"
#include "sunny-integrate.h"

int g_json = 0; /* --json: stdout carries only the final JSON; status goes to stderr */

FILE *out_stream(void) { return g_json ? stderr : stdout; }

static void status_line(void *ud, const char *line) {
    (void)ud;
    fprintf(out_stream(), "  %s\n", line);
    fflush(out_stream());
}

void progress_bar(void *ud, uint64_t done, uint64_t total) {
    (void)ud;
    static int last = -1;
    if (!sn_cli_isatty_stderr() || total == 0) return;
    int pct = (int)(100.0 * (double)done / (double)total);
    if (pct == last) return;
    last = pct;
    int w = 40, fill = pct * w / 100;
    fprintf(stderr, "\r  uploading [");
    for (int i = 0; i < w; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%% %llu/%llu MiB", pct, (unsigned long long)(done >> 20),
            (unsigned long long)(total >> 20));
    if (done >= total) { fputc('\n', stderr); last = -1; }
    fflush(stderr);
}

static char *read_text_file(const char *path, sn_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) { sn_err_set(err, SN_EIO, "%s: %s", path, strerror(errno)); return NULL; }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) break;
        if (n + 4096 > cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, 4096, f);
        n += r;
        if (r < 4096) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) { free(b); sn_err_set(err, SN_EIO, "%s: read error", path); return NULL; }
    b[n] = 0;
    return b;
}

static int write_file_atomic(const char *path, const char *text, sn_err *err) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return sn_err_set(err, SN_EIO, "%s: %s", tmp, strerror(errno));
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return sn_err_set(err, SN_EIO, "%s: write failed: %s", path, strerror(errno));
    }
    return SN_OK;
}

/* A failure of a subcommand: the message on stderr and under "error" in its JSON. */
int fail_json(const sn_err *err, cJSON *out) {
    sn_cli_fail(err);
    cJSON_AddStringToObject(out, "error", err->msg);
    return SN_EXIT_FAIL;
}

/* --json: the subcommand's JSON on stdout (strings valid UTF-8 even when cut mid-character). */
void print_json(cJSON *out) {
    if (!g_json) return;
    char *s = sn_utf8_fix_json(out) ? NULL : cJSON_Print(out);
    if (s) printf("%s\n", s);
    free(s);
}

/* The smoke verdict line (stdout, or stderr under --json) and its JSON form; returns 1 on divergence. */
int report_smoke(const sn_smoke_result *res, const char *server, cJSON *out) {
    char line[4096];
    sn_smoke_format(res, server, line, sizeof line);
    fprintf(g_json ? stderr : stdout, "%s\n", line);
    cJSON *sj = cJSON_AddObjectToObject(out, res->scope[0] ? "smoke_chat" : "smoke");
    cJSON_AddBoolToObject(sj, "ok", !res->diverged);
    cJSON_AddNumberToObject(sj, "identical", res->n_identical);
    cJSON_AddNumberToObject(sj, "compared", res->n_compared);
    cJSON_AddNumberToObject(sj, "expected", res->n_expected);
    cJSON_AddBoolToObject(sj, "by_ids", res->by_ids);
    cJSON_AddStringToObject(sj, "method", res->method);
    cJSON_AddBoolToObject(sj, "truncated", res->truncated);
    if (res->context_note[0]) cJSON_AddStringToObject(sj, "context", res->context_note);
    if (res->diverged || res->tie) {
        cJSON_AddNumberToObject(sj, "position", res->pos);
        cJSON_AddNumberToObject(sj, "gap", res->gap);
    }
    cJSON_AddStringToObject(sj, "server_text", res->theirs_text);
    cJSON_AddStringToObject(sj, "sunny_text", res->ours_text);
    return res->diverged != 0;
}

/* ================================================================================================
 * ollama */

static void ollama_usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate ollama MODEL.gguf --name NAME[:TAG] [options]\n"
            "Installs MODEL.gguf into an Ollama server through its HTTP API (no `ollama` CLI needed), then\n"
            "optionally proves it token-exact against sunny's runtime.\n"
            "\n"
            "Options:\n"
            "  --name NAME[:TAG]     model name in Ollama (default: none, required)\n"
            "  --host URL            server URL, OLLAMA_HOST forms accepted; loopback is never proxied\n"
            "                        (default: $OLLAMA_HOST, else http://127.0.0.1:11434)\n"
            "  --template T          auto, a .gotmpl FILE, a .jinja FILE to prove against, or 'jinja' (let\n"
            "                        Ollama >= 0.30 use the GGUF's own template) (default: auto: the family\n"
            "                        whose Go template renders byte-identical to the GGUF's Jinja on sunny's\n"
            "                        probe conversations; none proven: no TEMPLATE on Ollama >= 0.30, which\n"
            "                        renders the Jinja itself, refused on older servers)\n"
            "  --template-accept-diff  with auto and no family proven, install the nearest family anyway\n"
            "                        (its first difference is printed) (default: off)\n"
            "  --system TEXT         SYSTEM message stored with the model (default: none)\n"
            "  --param KEY=VALUE     a PARAMETER, typed like Ollama (numbers, stop as a list); repeatable\n"
            "                        (default: none beyond the template's stops)\n"
            "  --modelfile-out PATH  after a successful install (or dry run), write the equivalent Modelfile\n"
            "                        (default: none)\n"
            "  --smoke               run one prompt through Ollama and sunny's runtime, compare the tokens\n"
            "                        (default: off)\n"
            "  -n N                  smoke: tokens to compare (default: 32)\n"
            "  -p, --prompt TEXT     smoke: the prompt (default: \"The capital of France is\")\n"
            "  --seed S              smoke: seed (default: 42)\n"
            "  --ctx C               smoke: num_ctx (default: 512)\n"
            "  --run PROMPT          print Ollama's answer with the installed template (default: none)\n"
            "  --dry-run             print the Modelfile and every request; send none but the version probe\n"
            "                        (works with no server running, and says so) (default: off)\n"
            "  --json                machine-readable result on stdout (default: off)\n"
            "  -h, --help            print this help and exit\n"
            "\n"
            "Example:\n"
            "  sunny-integrate ollama qwen3-q8_0.gguf --name myqwen:q8 --smoke -n 32\n");
}

typedef struct ollama_args {
    const char *gguf, *name, *host, *tmpl, *system, *mf_out, *prompt, *run;
    int smoke, dry, n, accept_diff;
    int64_t seed, ctx;
    cJSON *params;
} ollama_args;

/* --template: "jinja" sends none; "auto" claims the family proven by rendering against the GGUF's
 * Jinja; a *.jinja FILE is proven the same way; any other FILE is a Go template sent as is. Proven
 * stops/params are merged under the user's --param values, a derived default system prompt goes to
 * *sys. When no family is proven, *unproven gets the reason and no template is chosen here: the
 * caller decides from the server version (TEMPLATE left out on >= 0.30, else refused), unless
 * --template-accept-diff installs the nearest family anyway. */
static int resolve_template(const ollama_args *a, const sn_modelinfo *mi, char **tmpl, cJSON *params,
                            char *src, size_t src_cap, char **sys, char **unproven, sn_err *err) {
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
        *tmpl = read_text_file(t, err);
        if (!*tmpl) return err->code ? err->code : SN_EIO;
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
        sn_cli_warnf("--template-accept-diff: installing %s although it renders differently from the "
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
    snprintf(src, src_cap, "%s (detected from %s, %s, %zu stop value(s)%s)", r.family, r.source,
             r.proved ? "proven byte-identical to its Jinja by rendering" : "NOT proven equal to its Jinja",
             r.n_stop, *sys ? ", default SYSTEM from the Jinja" : "");
    sn_template_result_free(&r);
    if (!*tmpl && st == SN_OK) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    return st;
}

/* After install: the prompt the server itself renders (/api/generate with _debug_render_only,
 * Ollama >= 0.11.5; GenerateHandler renders [model SYSTEM, prompt] through the selected template)
 * must equal the GGUF's Jinja rendered by sunny for the same conversation. A difference fails the
 * install when sunny claimed the template (must_match), else it is a warning. */
static int check_server_render(sn_http *h, const ollama_args *a, const char *derived_sys, int must_match,
                               FILE *o, cJSON *out, sn_err *err) {
    static const char PROMPT[] = "What is 2+2?";
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", a->name);
    cJSON_AddStringToObject(b, "prompt", PROMPT);
    cJSON_AddBoolToObject(b, "_debug_render_only", 1);
    cJSON_AddBoolToObject(b, "stream", 0);
    char *js = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    sn_http_req rq = {.method = "POST", .path = "/api/generate", .json = js, .stall_s = 600};
    sn_http_resp r;
    sn_status st = js ? sn_http_do(h, &rq, &r, err) : SN_ENOMEM;
    free(js);
    if (st) { sn_http_resp_free(&r); return st; }
    cJSON *j = r.cls == SN_HTTP_OK ? cJSON_Parse(r.body) : NULL;
    sn_http_resp_free(&r);
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(j, "_debug_info");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(info, "rendered_template");
    if (!cJSON_IsString(rt)) {
        fprintf(o, "render  : the server did not return _debug_info.rendered_template; prompt not checked\n");
        cJSON_Delete(j);
        return 0;
    }
    /* a derived default SYSTEM stands for the Jinja's own default: render the Jinja without one */
    const char *sys = a->system;
    (void)derived_sys;
    char *mine = NULL;
    if (sn_template_render_jinja(a->gguf, sys, PROMPT, 0, &mine, err)) {
        cJSON_Delete(j);
        if (!must_match) { sn_cli_warnf("server render not checked: %s", err->msg); memset(err, 0, sizeof *err); return 0; }
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
        fprintf(o, "render  : the server's prompt (_debug_render_only) is byte-identical to the GGUF's Jinja\n");
    } else {
        size_t i = 0;
        while (srv[i] && srv[i] == mine[i]) i++;
        char msg[600];
        snprintf(msg, sizeof msg, "the server renders the prompt differently from the GGUF's Jinja at byte %zu: "
                 "server \"%.60s\" vs Jinja \"%.60s\"", i, srv + (i > 20 ? i - 20 : 0), mine + (i > 20 ? i - 20 : 0));
        cJSON_AddStringToObject(out, "server_render_difference", msg);
        if (must_match) { sn_err_set(err, SN_EIO, "%s", msg); free(mine); cJSON_Delete(j); return SN_EIO; }
        sn_cli_warnf("%s", msg);
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
static int smoke_chat(sn_http *h, const sn_ollama_version *ver, const ollama_args *a, const sn_modelinfo *mi,
                      sn_ollama_tmpl_sel sel, cJSON *out, sn_err *err) {
    static const char USER[] = "What is 2+2?";
    FILE *o = g_json ? stderr : stdout;
    if (!mi->chat_template) return 0;
    if (sel == SN_OLLAMA_TMPL_JINJA) {
        fprintf(o, "[smoke] chat: not run (the server renders the GGUF's own Jinja; see the render check)\n");
        return 0;
    }
    char *rendered = NULL;
    if (sn_template_render_jinja(a->gguf, a->system, USER, 0, &rendered, err)) {
        fprintf(o, "[smoke] chat: not run (sunny cannot render the GGUF's template: %s)\n", err->msg);
        memset(err, 0, sizeof *err);
        return 0;
    }
    sn_smoke_opts so = {.gguf_path = a->gguf, .prompt = rendered, .n_predict = a->n, .n_ctx = (int)a->ctx, .n_threads = 2};
    sn_smoke_local ours;
    sn_status st = sn_smoke_run_local(&so, &ours, err);
    free(rendered);
    if (st) return 0;
    sn_smoke_result res;
    st = sn_ollama_smoke_chat(h, ver, a->name, USER, a->n, a->seed, (int)a->ctx, &ours, &res, err);
    sn_smoke_local_free(&ours);
    if (st) return 0;
    snprintf(res.scope, sizeof res.scope, "chat (\"%s\" through the installed template): ", USER);
    int bad = report_smoke(&res, "ollama", out);
    sn_smoke_result_free(&res);
    return bad;
}

/* --modelfile-out, once the install (or dry run) succeeded. */
static sn_status write_modelfile(const ollama_args *a, const char *mf, FILE *o, cJSON *out, sn_err *err) {
    if (!a->mf_out) return SN_OK;
    sn_status st = write_file_atomic(a->mf_out, mf, err);
    if (st) return st;
    fprintf(o, "wrote   : %s (for `ollama create %s -f %s`)\n", a->mf_out, a->name, a->mf_out);
    cJSON_AddStringToObject(out, "modelfile", a->mf_out);
    return SN_OK;
}

static int cmd_ollama(int argc, char **argv) {
    ollama_args a = {.n = 32, .seed = 42, .ctx = 512};
    a.params = cJSON_CreateObject();
    sn_err err = {0};
    int rc = SN_EXIT_FAIL;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : NULL)
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) { ollama_usage(stdout); cJSON_Delete(a.params); return 0; }
        else if (!strcmp(s, "--name")) { if (!(a.name = NEXT())) goto missing; }
        else if (!strcmp(s, "--host")) { if (!(a.host = NEXT())) goto missing; }
        else if (!strcmp(s, "--template")) { if (!(a.tmpl = NEXT())) goto missing; }
        else if (!strcmp(s, "--template-accept-diff")) a.accept_diff = 1;
        else if (!strcmp(s, "--system")) { if (!(a.system = NEXT())) goto missing; }
        else if (!strcmp(s, "--modelfile-out")) { if (!(a.mf_out = NEXT())) goto missing; }
        else if (!strcmp(s, "--run")) { if (!(a.run = NEXT())) goto missing; }
        else if (!strcmp(s, "-p") || !strcmp(s, "--prompt")) { if (!(a.prompt = NEXT())) goto missing; }
        else if (!strcmp(s, "--smoke")) a.smoke = 1;
        else if (!strcmp(s, "--dry-run")) a.dry = 1;
        else if (!strcmp(s, "--json")) g_json = 1;
        else if (!strcmp(s, "-n") || !strcmp(s, "--seed") || !strcmp(s, "--ctx")) {
            const char *v = NEXT();
            int64_t x;
            if (!v) goto missing;
            if (sn_cli_parse_i64(v, s[1] == 'n' ? 1 : 0, s[2] == 'c' ? 1 << 20 : (s[1] == 'n' ? 4096 : INT32_MAX), &x)) {
                cJSON_Delete(a.params);
                return sn_cli_usage_error("%s: bad value '%s'", s, v);
            }
            if (s[1] == 'n') a.n = (int)x;
            else if (s[2] == 's') a.seed = x;
            else a.ctx = x;
        } else if (!strcmp(s, "--param")) {
            const char *v = NEXT();
            if (!v) goto missing;
            const char *eq = strchr(v, '=');
            if (!eq || eq == v) { cJSON_Delete(a.params); return sn_cli_usage_error("--param wants KEY=VALUE, got '%s'", v); }
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(eq - v), v);
            if (sn_ollama_param_add(a.params, key, eq + 1, &err)) { cJSON_Delete(a.params); return sn_cli_usage_error("%s", err.msg); }
        } else if (s[0] == '-') {
            cJSON_Delete(a.params);
            return sn_cli_usage_error("ollama: unknown option '%s'", s);
        } else if (!a.gguf) a.gguf = s;
        else { cJSON_Delete(a.params); return sn_cli_usage_error("ollama: unexpected argument '%s'", s); }
#undef NEXT
    }
    if (!a.gguf) { cJSON_Delete(a.params); return sn_cli_usage_error("ollama: MODEL.gguf is required"); }
    if (!a.name) { cJSON_Delete(a.params); return sn_cli_usage_error("ollama: --name NAME[:TAG] is required"); }
    if (sn_ollama_check_name(a.name, &err)) { cJSON_Delete(a.params); return sn_cli_usage_error("%s", err.msg); }
    if (!a.prompt) a.prompt = "The capital of France is";

    int sp_part, sp_count;
    if (sn_ollama_split_name(a.gguf, &sp_part, &sp_count) && sp_part != 1) {
        cJSON_Delete(a.params);
        return sn_cli_usage_error("%s is part %d of a %d-part split GGUF; pass the first part (-00001-of-%05d.gguf)",
                                  a.gguf, sp_part, sp_count, sp_count);
    }
    sn_modelinfo mi;
    if (sn_modelinfo_read(a.gguf, &mi, &err)) { cJSON_Delete(a.params); return sn_cli_fail(&err); }
    if (a.smoke && mi.split_count > 1) {
        sn_modelinfo_free(&mi);
        cJSON_Delete(a.params);
        return sn_cli_usage_error("--smoke: %s is a split GGUF and sunny's runtime reads single files; install "
                                  "without --smoke, or merge it (llama-gguf-split --merge) to prove it", a.gguf);
    }
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "model", a.name);
    cJSON_AddStringToObject(out, "gguf", a.gguf);
    cJSON_AddStringToObject(out, "architecture", mi.arch);
    cJSON_AddStringToObject(out, "quantization", mi.quant);
    char *tmpl = NULL;
    char tsrc[512];
    sn_http *h = NULL;
    char *body = NULL, *mf = NULL;
    char **parts = NULL, **part_digests = NULL;
    size_t n_parts = 0;
    FILE *o = out_stream();
    char *dsys = NULL, *unproven = NULL;
    if (resolve_template(&a, &mi, &tmpl, a.params, tsrc, sizeof tsrc, &dsys, &unproven, &err)) goto fail;
    sn_ollama_model_spec spec = {.name = a.name, .gguf_path = a.gguf, .template_text = tmpl,
                                 .system = a.system ? a.system : dsys, .parameters = a.params,
                                 .license = mi.license, .gguf_chat_template = mi.chat_template};
    fprintf(o, "model   : %s (%s, %s, %.1f MiB)\n", a.gguf, mi.arch, mi.quant, (double)mi.file_size / 1048576.0);
    fprintf(o, "template: %s\n", tsrc);

    /* The equivalent Modelfile: printed by --dry-run, written by --modelfile-out only once the
     * install (or the dry run) has succeeded. FROM must resolve relative to the Modelfile: ./file
     * when they share a directory. */
    {
        char from[4096], gdir[4096], mdir[4096];
        char *gr = realpath(a.gguf, NULL);
        snprintf(gdir, sizeof gdir, "%s", gr ? gr : a.gguf);
        char *slash = strrchr(gdir, '/');
        if (slash) *slash = 0;
        snprintf(mdir, sizeof mdir, "%s", a.mf_out ? a.mf_out : ".");
        char *ms = strrchr(mdir, '/');
        if (ms) *ms = 0; else snprintf(mdir, sizeof mdir, ".");
        char *mr = realpath(mdir, NULL);
        if (gr && mr && strcmp(gdir, mr) == 0) snprintf(from, sizeof from, "./%s", slash ? slash + 1 : a.gguf);
        else snprintf(from, sizeof from, "%s", gr ? gr : a.gguf);
        free(gr);
        free(mr);
        mf = sn_ollama_modelfile(&spec, from, &err);
        if (!mf) goto fail;
    }

    sn_ollama_host oh;
    sn_ollama_parse_host(a.host ? a.host : getenv("OLLAMA_HOST"), &oh);
    if (sn_http_new(oh.connect_url, &h, &err)) goto fail;
    fprintf(o, "server  : %s%s\n", oh.connect_url,
            sn_http_is_loopback(h) ? " (loopback: proxies bypassed)" : "");
    cJSON_AddStringToObject(out, "host", oh.connect_url);
    sn_ollama_version ver;
    int contacted = 1;
    if (sn_ollama_probe(h, &ver, &err)) {
        if (!a.dry) goto fail;
        /* a dry run previews without a server: say so, and show the current (>= 0.5.5) API */
        fprintf(o, "version : no server answered (%s)\n"
                   "          did not contact a server; showing the requests for Ollama >= 0.5.5\n", err.msg);
        memset(&err, 0, sizeof err);
        memset(&ver, 0, sizeof ver);
        ver.dev = 1;
        snprintf(ver.raw, sizeof ver.raw, "unknown");
        contacted = 0;
    } else {
        fprintf(o, "version : %s\n", ver.raw);
        cJSON_AddStringToObject(out, "version", ver.raw);
    }
    cJSON_AddBoolToObject(out, "server_contacted", contacted);
    int legacy = sn_ollama_version_cmp(&ver, 0, 5, 5) < 0;
    if (unproven) { /* no Go template is proven equal to the Jinja: only the server's own Jinja is right */
        cJSON_AddStringToObject(out, "template_refusal", unproven);
        if (contacted && sn_ollama_version_cmp(&ver, 0, 30, 0) < 0) {
            sn_err_set(&err, SN_EUNSUPPORTED, "no Go template is proven equal to this GGUF's Jinja (%s), and "
                       "Ollama %s < 0.30 cannot render the Jinja itself; pass --template FILE with a Go "
                       "template you trust, or --template-accept-diff to install %s anyway",
                       unproven, ver.raw, "the nearest family");
            goto fail;
        }
        fprintf(o, "note    : TEMPLATE left out: %s renders the GGUF's own Jinja chat template itself "
                   "(no Go template of sunny's is proven equal to it)\n",
                contacted ? "this Ollama (>= 0.30)" : "Ollama >= 0.30 (older servers need --template FILE)");
    }
    if (contacted && !tmpl && sn_ollama_version_cmp(&ver, 0, 30, 0) < 0)
        sn_cli_warnf("Ollama %s < 0.30 ignores the GGUF's Jinja template: with --template jinja the model "
                     "runs with {{ .Prompt }} (raw text, no chat markers); use --template auto or FILE",
                     ver.raw);

    char hex[65], digest[80];
    uint64_t fsize = 0;
    double secs = 0;
    if (sn_ollama_sha256_file(a.gguf, hex, &fsize, &secs, &err)) goto fail;
    snprintf(digest, sizeof digest, "sha256:%s", hex);
    double gbps = secs > 0 ? (double)fsize / secs / 1e9 : 0;
    fprintf(o, "digest  : %s (%.2f GB/s over %.1f MiB)\n", digest, gbps, (double)fsize / 1048576.0);
    cJSON_AddStringToObject(out, "digest", digest);
    cJSON_AddNumberToObject(out, "sha256_gb_per_s", gbps);
    if (mi.split_count > 1) { /* every shard goes into the create "files" map under its own name */
        if (sn_ollama_version_cmp(&ver, 0, 30, 0) < 0) {
            sn_err_set(&err, SN_EUNSUPPORTED,
                       "%s is part 1 of a %d-part split GGUF: Ollama %s cannot import split GGUFs (0.30 and newer "
                       "can); merge the parts first with `llama-gguf-split --merge`", a.gguf, mi.split_count, ver.raw);
            goto fail;
        }
        if (sn_ollama_split_parts(a.gguf, mi.split_count, &parts, &n_parts, &err)) goto fail;
        part_digests = calloc(n_parts, sizeof *part_digests);
        if (!part_digests) { sn_err_set(&err, SN_ENOMEM, "out of memory"); goto fail; }
        for (size_t i = 0; i < n_parts; i++) {
            char ph[65];
            uint64_t psz = 0;
            if (i == 0) snprintf(ph, sizeof ph, "%s", hex);
            else if (sn_ollama_sha256_file(parts[i], ph, &psz, NULL, &err)) goto fail;
            part_digests[i] = malloc(80);
            if (!part_digests[i]) { sn_err_set(&err, SN_ENOMEM, "out of memory"); goto fail; }
            snprintf(part_digests[i], 80, "sha256:%s", ph);
            if (i) fprintf(o, "shard %zu : %s (%s)\n", i + 1, part_digests[i], parts[i]);
        }
        spec.n_parts = n_parts;
        spec.part_paths = (const char *const *)parts;
        spec.part_digests = (const char *const *)part_digests;
        cJSON_AddNumberToObject(out, "split_parts", (double)n_parts);
    }

    if (legacy) {
        body = sn_ollama_create_body_legacy(&spec, digest, &err);
        if (!body) goto fail;
        fprintf(o, "note    : server < 0.5.5: using the legacy {\"model\",\"modelfile\"} create body\n");
    } else {
        body = sn_ollama_create_body(&spec, digest);
        if (!body) { sn_err_set(&err, SN_ENOMEM, "out of memory"); goto fail; }
    }
    if (a.dry) {
        fprintf(o, "Modelfile (equivalent, for `ollama create %s -f FILE`):\n%s", a.name, mf);
        if (mf[0] && mf[strlen(mf) - 1] != '\n') fputc('\n', o);
        fprintf(o, contacted ? "dry run : these requests would be sent (only the version probe was):\n"
                             : "dry run : these requests would be sent (none was: no server was contacted):\n");
        fprintf(o, "  HEAD %s/api/blobs/%s\n", oh.connect_url, digest);
        fprintf(o, "  POST %s/api/blobs/%s  <- %llu bytes streamed from %s (only if HEAD says 404)\n",
                oh.connect_url, digest, (unsigned long long)fsize, a.gguf);
        fprintf(o, "  POST %s/api/create  %s\n", oh.connect_url, body);
        fprintf(o, "  POST %s/api/show  {\"model\":\"%s\"}\n", oh.connect_url, a.name);
        if (a.smoke) fprintf(o, "  POST %s/api/generate  (smoke: raw, temperature 0, top_k 1, seed %lld, num_predict %d, num_ctx %lld)\n",
                             oh.connect_url, (long long)a.seed, a.n, (long long)a.ctx);
        if (a.smoke && mi.chat_template)
            fprintf(o, "  POST %s/api/generate  (smoke, chat half: the user turn \"What is 2+2?\" through the template "
                       "the server selected, same options; skipped if it renders the GGUF's Jinja itself)\n",
                    oh.connect_url);
        cJSON_AddBoolToObject(out, "dry_run", 1);
        cJSON_AddRawToObject(out, "create_body", body);
        if (write_modelfile(&a, mf, o, out, &err)) goto fail;
        rc = 0;
        goto done;
    }

    int exists = 0;
    for (size_t i = 0; i < (n_parts > 1 ? n_parts : 1); i++) {
        const char *bp = n_parts > 1 ? parts[i] : a.gguf, *bd = n_parts > 1 ? part_digests[i] : digest;
        int ex = 0;
        if (sn_ollama_blob_exists(h, bd, &ex, &err)) goto fail;
        if (i == 0) exists = ex;
        if (ex) fprintf(o, "blob    : %s already on the server\n", bp);
        else {
            fprintf(o, "blob    : uploading %s\n", bp);
            if (sn_ollama_blob_upload(h, bp, bd, progress_bar, NULL, status_line, NULL, &err)) goto fail;
        }
    }
    cJSON_AddBoolToObject(out, "uploaded", !exists);
    fprintf(o, "create  : %s\n", a.name);
    if (sn_ollama_create(h, body, status_line, NULL, &err)) {
        /* A dev build reports 0.0.0 (taken as newest); if it turns out to be pre-0.5.5, use the legacy body. */
        if (legacy || err.detail != SN_OLLAMA_WANTS_LEGACY_BODY) goto fail;
        fprintf(o, "note    : the server wants the legacy create body; retrying with it\n");
        free(body);
        body = sn_ollama_create_body_legacy(&spec, digest, &err);
        if (!body || sn_ollama_create(h, body, status_line, NULL, &err)) goto fail;
    }
    cJSON *show = NULL;
    if (sn_ollama_show(h, a.name, &show, &err)) goto fail;
    char note[1024];
    sn_status vs = sn_ollama_verify_show(show, &spec, mi.arch, note, sizeof note, &err);
    if (vs) { cJSON_Delete(show); goto fail; }
    fprintf(o, "verified: %s\n", note);
    cJSON_AddStringToObject(out, "verified", note);
    sn_ollama_tmpl_sel tsel = sn_ollama_selected_template(show, &spec);
    cJSON_AddStringToObject(out, "template_selected", sn_ollama_tmpl_sel_name(tsel));
    cJSON_Delete(show);
    if (mi.chat_template && sn_ollama_version_cmp(&ver, 0, 11, 5) >= 0 &&
        check_server_render(h, &a, dsys, tmpl && !unproven && (!a.tmpl || !strcmp(a.tmpl, "auto")) && !a.accept_diff,
                            o, out, &err))
        goto fail;
    if (write_modelfile(&a, mf, o, out, &err)) goto fail;

    if (a.run) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "model", a.name);
        cJSON_AddStringToObject(b, "prompt", a.run);
        cJSON_AddBoolToObject(b, "stream", 0);
        sn_ollama_gen g;
        sn_status gs = sn_ollama_generate(h, b, &g, &err);
        cJSON_Delete(b);
        if (gs) goto fail;
        fprintf(o, "run     : %s\n", g.text);
        cJSON_AddStringToObject(out, "run", g.text);
        sn_ollama_gen_free(&g);
    }
    rc = 0;
    if (a.smoke) {
        sn_smoke_opts so = {.gguf_path = a.gguf, .prompt = a.prompt, .n_predict = a.n, .n_ctx = (int)a.ctx, .n_threads = 2};
        sn_smoke_local ours;
        if (sn_smoke_run_local(&so, &ours, &err)) goto fail;
        sn_smoke_result res;
        sn_status ss = sn_ollama_smoke(h, &ver, a.name, a.prompt, a.n, a.seed, (int)a.ctx, &ours, &res, &err);
        sn_smoke_local_free(&ours);
        if (ss) goto fail;
        if (report_smoke(&res, "ollama", out)) rc = SN_EXIT_FAIL;
        sn_smoke_result_free(&res);
        if (smoke_chat(h, &ver, &a, &mi, tsel, out, &err)) rc = SN_EXIT_FAIL;
        if (err.code) goto fail;
    }
    goto done;
missing:
    cJSON_Delete(a.params);
    return sn_cli_usage_error("ollama: %s needs a value", argv[argc - 1]);
fail:
    rc = fail_json(&err, out);
done:
    print_json(out);
    cJSON_Delete(out);
    free(body);
    free(mf);
    free(tmpl);
    free(dsys);
    free(unproven);
    sn_ollama_parts_free(parts, n_parts);
    sn_ollama_parts_free(part_digests, n_parts);
    sn_http_free(h);
    sn_modelinfo_free(&mi);
    cJSON_Delete(a.params);
    return rc;
}

/* ================================================================================================ */

static void usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate COMMAND [options]\n"
            "Installs GGUFs into Ollama and LM Studio and proves them token-exact.\n"
            "\n"
            "Commands:\n"
            "  ollama MODEL.gguf --name NAME[:TAG]   install into Ollama over HTTP (+ --smoke)\n"
            "  lmstudio MODEL.gguf                   place into LM Studio's models dir (+ --smoke)\n"
            "  doctor                                diagnose the Ollama connection\n"
            "  template (MODEL.gguf|DIR|--jinja F)   the Go template + stops sunny derives\n"
            "  digest FILE                           the sha256:<hex> Ollama names the blob\n"
            "  help [COMMAND]                        this text, or COMMAND's options\n"
            "\n"
            "Options:\n"
            "  -h, --help            print this help and exit\n"
            "  --version             print the version and exit\n"
            "\n"
            "Run 'sunny-integrate help COMMAND' (or 'sunny-integrate COMMAND --help') for its options.\n"
            "Exit status: 0 ok, 1 failure, 2 usage error.\n"
            "\n"
            "Example:\n"
            "  sunny-integrate template ./Qwen3-0.6B --json\n"
            "  sunny-integrate ollama model.gguf --name mymodel --smoke\n");
}

typedef struct { const char *name; int (*run)(int, char **); void (*help)(FILE *); } command;

int main(int argc, char **argv) {
    sn_cli_init("sunny-integrate");
    static const command cmds[] = {
        {"ollama", cmd_ollama, ollama_usage}, {"lmstudio", cmd_lmstudio, lms_usage},
        {"doctor", cmd_doctor, doctor_usage}, {"template", cmd_template, template_usage},
        {"digest", cmd_digest, digest_usage},
    };
    const size_t n = sizeof cmds / sizeof cmds[0];
    if (argc < 2) { usage(stderr); return SN_EXIT_USAGE; }
    const char *c = argv[1];
    if (!strcmp(c, "--version")) { sn_cli_print_version(); return 0; }
    if (!strcmp(c, "-h") || !strcmp(c, "--help")) { usage(stdout); return 0; }
    if (!strcmp(c, "help")) {
        if (argc < 3) { usage(stdout); return 0; }
        for (size_t i = 0; i < n; i++)
            if (!strcmp(argv[2], cmds[i].name)) { cmds[i].help(stdout); return 0; }
        return sn_cli_usage_error("help: unknown command '%s' (ollama, lmstudio, doctor, template, digest)", argv[2]);
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c, cmds[i].name)) {
            sn_cli_set_subcommand(cmds[i].name); /* usage errors point at this command's help */
            return cmds[i].run(argc - 2, argv + 2);
        }
    return sn_cli_usage_error("unknown command '%s' (ollama, lmstudio, doctor, template, digest, help)", c);
}
