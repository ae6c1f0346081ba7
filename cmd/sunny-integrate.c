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
#include "ollama_install.h"
#include "sizefmt.h"
#include "smoke.h"
#include "utf8_fix.h"
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
sn_env g_env;

FILE *out_stream(void) { return g_json ? stderr : stdout; }

static void status_line(void *ud, const char *line) {
    (void)ud;
    fprintf(out_stream(), "  %s\n", line);
    fflush(out_stream());
}

void progress_bar(void *ud, uint64_t done, uint64_t total) {
    const char *label = ud ? (const char *)ud : "uploading";
    static int last = -1;
    if (!sn_cli_isatty_stderr() || total == 0) return;
    int pct = (int)(100.0 * (double)done / (double)total);
    if (pct == last) return;
    last = pct;
    int w = 40, fill = pct * w / 100;
    fprintf(stderr, "\r  %s [", label);
    for (int i = 0; i < w; i++) fputc(i < fill ? '#' : '.', stderr);
    char d[24], t[24];
    fprintf(stderr, "] %3d%% %s / %s\033[K", pct, sn_size_short(done, d, sizeof d), sn_size_short(total, t, sizeof t));
    if (done >= total) { fputc('\n', stderr); last = -1; }
    fflush(stderr);
}

/* A failure of a subcommand: the message on stderr and under "error" in its JSON. */
int fail_json(const sn_err *err, cJSON *out) {
    sn_cli_json_error_done(); /* the error goes into this record, not a second one */
    sn_cli_fail(err);
    cJSON *e = cJSON_AddObjectToObject(out, "error");
    if (e) {
        cJSON_AddStringToObject(e, "message", err->msg);
        cJSON_AddNumberToObject(e, "exit_code", SN_EXIT_FAIL);
    }
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
    return sn_smoke_result_json(res, out);
}
/* ================================================================================================
 * ollama */

static void ollama_usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate ollama (MODEL.gguf | MODEL_DIR | WEIGHTS) [--name NAME[:TAG]] [options]\n"
            "Installs a model into an Ollama server through its HTTP API (no `ollama` CLI needed), then\n"
            "optionally proves it token-exact against sunny's runtime. An HF folder or checkpoint is\n"
            "converted first, once: the GGUF is cached under $XDG_CACHE_HOME/sunny (else ~/.cache/sunny),\n"
            "keyed by the source files and the options, and a second install converts nothing.\n"
            "\n"
            "Options:\n"
            "  --name NAME[:TAG]     model name in Ollama (default: the model's name and type in lower case,\n"
            "                        e.g. qwen3-0.6b-instruct:q8_0)\n"
            "  --outtype TYPE        convert (or requantize a GGUF) to TYPE, as sunny-convert --outtype\n"
            "                        (default: a GGUF as it is; an HF model auto, like convert_hf_to_gguf.py)\n"
            "  --config FILE         a single checkpoint's config.json (default: beside it)\n"
            "  --keep-gguf PATH      also leave the converted GGUF at PATH (default: only in the cache)\n"
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

void print_plan(const sn_install_plan *p) {
    FILE *o = out_stream();
    if (p->preamble) fprintf(o, "%s\n", p->preamble);
    if (p->heading) fprintf(o, "%s\n", p->heading);
    for (size_t i = 0; i < p->n_steps; i++) fprintf(o, "  %s\n", p->steps[i]);
}

/* The install's status lines and warnings, printed as the library reports them. */
void say_line(void *ud, const char *text) {
    (void)ud;
    fprintf(out_stream(), "%s\n", text);
}
void say_warn(void *ud, const char *text) {
    (void)ud;
    sn_cli_warnf("%s", text);
}

static int cmd_ollama(int argc, char **argv) {
    sn_ollama_install_opts a = {.n_predict = 32, .seed = 42, .ctx = 512, .n_threads = 2, .env = &g_env};
    a.params = cJSON_CreateObject();
    sn_err err = {0};
    install_source src = {0};
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : NULL)
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) { ollama_usage(stdout); cJSON_Delete(a.params); return 0; }
        else if (!strcmp(s, "--name")) { if (!(a.name = NEXT())) goto missing; }
        else if (!strcmp(s, "--outtype")) { if (!(src.outtype = NEXT())) goto missing; }
        else if (!strcmp(s, "--keep-gguf")) { if (!(src.keep = NEXT())) goto missing; }
        else if (!strcmp(s, "--config")) { if (!(src.config = NEXT())) goto missing; }
        else if (!strcmp(s, "--host")) { if (!(a.host = NEXT())) goto missing; }
        else if (!strcmp(s, "--template")) { if (!(a.tmpl = NEXT())) goto missing; }
        else if (!strcmp(s, "--template-accept-diff")) a.accept_diff = 1;
        else if (!strcmp(s, "--system")) { if (!(a.system = NEXT())) goto missing; }
        else if (!strcmp(s, "--modelfile-out")) { if (!(a.modelfile_out = NEXT())) goto missing; }
        else if (!strcmp(s, "--run")) { if (!(a.run_prompt = NEXT())) goto missing; }
        else if (!strcmp(s, "-p") || !strcmp(s, "--prompt")) { if (!(a.prompt = NEXT())) goto missing; }
        else if (!strcmp(s, "--smoke")) a.smoke = 1;
        else if (!strcmp(s, "--dry-run")) a.dry_run = 1;
        else if (!strcmp(s, "--json")) g_json = 1;
        else if (!strcmp(s, "-n") || !strcmp(s, "--seed") || !strcmp(s, "--ctx")) {
            const char *v = NEXT();
            int64_t x;
            if (!v) goto missing;
            if (sn_cli_parse_i64(v, s[1] == 'n' ? 1 : 0, s[2] == 'c' ? 1 << 20 : (s[1] == 'n' ? 4096 : INT32_MAX), &x)) {
                cJSON_Delete(a.params);
                return sn_cli_usage_error("%s: bad value '%s'", s, v);
            }
            if (s[1] == 'n') a.n_predict = (int)x;
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
    if (!a.gguf) { cJSON_Delete(a.params); return sn_cli_usage_error("ollama: MODEL.gguf or MODEL_DIR is required"); }
    if (a.name && sn_ollama_check_name(a.name, &err)) { cJSON_Delete(a.params); return sn_cli_usage_error("%s", err.msg); }
    char gguf[4096], dname[256];
    cJSON *cache = NULL;
    src.src = a.gguf;
    int src_rc = resolve_source(&src, gguf, sizeof gguf, &cache);
    if (src_rc) { cJSON_Delete(a.params); return src_rc; }
    a.gguf = gguf;
    if (!a.name) { /* the model's own name and type, as the converter names the file */
        sn_modelinfo mi;
        if (sn_modelinfo_read(gguf, &mi, &err) != SN_OK) { cJSON_Delete(a.params); cJSON_Delete(cache); return sn_cli_fail(&err); }
        sn_ollama_default_name(mi.stem, mi.quant, dname, sizeof dname);
        sn_modelinfo_free(&mi);
        a.name = dname;
        fprintf(out_stream(), "name: %s (from the model; --name to choose another)\n", a.name);
    }
    if (!a.prompt) a.prompt = "The capital of France is";

    sn_ollama_install_cb cb = {.line = say_line, .warn = say_warn, .server_line = status_line, .progress = progress_bar};
    sn_ollama_install_result res;
    sn_ollama_job *job = NULL;
    sn_status st = sn_ollama_install_plan(&a, &cb, &job, &res, &err);
    if (st == SN_OK && a.dry_run) print_plan(sn_ollama_job_plan(job));
    if (st == SN_OK) st = sn_ollama_install_run(job, &cb, &res, &err);
    sn_ollama_job_free(job);
    cJSON_Delete(a.params);
    if (st && err.detail == SN_OLLAMA_BAD_OPTIONS) {
        cJSON_Delete(res.json);
        return sn_cli_usage_error("%s", err.msg);
    }
    int rc = 0;
    if (res.json && cache) cJSON_AddItemToObject(res.json, "cache", cache);
    else cJSON_Delete(cache);
    if (st) rc = res.json ? fail_json(&err, res.json) : sn_cli_fail(&err);
    else if (res.diverged) rc = SN_EXIT_FAIL;
    if (res.json) print_json(res.json);
    cJSON_Delete(res.json);
    return rc;
missing:
    cJSON_Delete(a.params);
    return sn_cli_usage_error("ollama: %s needs a value", argv[argc - 1]);
}

/* ================================================================================================ */

static void usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate COMMAND [options]\n"
            "Installs GGUFs into Ollama and LM Studio and proves them token-exact.\n"
            "\n"
            "Commands:\n"
            "  ollama MODEL [--name NAME[:TAG]]      install into Ollama over HTTP (+ --smoke); MODEL is a\n"
            "                                        GGUF, an HF folder or a checkpoint (converted, cached)\n"
            "  lmstudio MODEL                        place into LM Studio's models dir (+ --smoke)\n"
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
            "  sunny-integrate ollama model.gguf --name mymodel --smoke\n"
            "  sunny-integrate ollama ./Qwen3-0.6B --outtype q8_0 --smoke\n");
}

typedef struct { const char *name; int (*run)(int, char **); void (*help)(FILE *); } command;

int main(int argc, char **argv) {
    sn_cli_init("sunny-integrate");
    static sn_cli_env env; /* lives as long as g_env points into it */
    sn_cli_read_env(&env);
    sn_cli_proxy_env_like_go(&env); /* the lowercase proxies as Go's client would choose them */
    g_env = env.lib;
    sn_cli_json_errors(argc, argv);
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
