/* lmstudio.c - the LM Studio server side of the install flow (see lmstudio.h and docs/LMSTUDIO.md):
 * its error words explained, the version probe, the lms CLI's listing of what was placed, loading
 * the model with a context length, and the smoke test against sunny's runtime. Finding the models
 * folder and placing the file is lmstudio_place.c. */
#include "lmstudio_internal.h"
#include "lmstudio_reply.h"

#include "smoke.h"
#include "template_cmd.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------
 * Server */

const char *sn_lms_explain(const char *e) {
    if (!e) return "";
    if (strcasestr(e, "unknown model architecture"))
        return "LM Studio's llama.cpp runtime does not know this architecture: update it (`lms runtime ls`, "
               "`lms runtime update`, or Settings > Runtime)";
    if (strcasestr(e, "No LM Runtime found"))
        return "no inference runtime is installed: run `lms runtime get` (LM Studio 0.4.x ships runtimes separately)";
    if (strcasestr(e, "jinja"))
        return "LM Studio could not render the chat template: override it in My Models > Prompt Template, "
               "or re-convert with a template its JS Jinja engine accepts";
    if (strcasestr(e, "Invalid model identifier") || strcasestr(e, "model_not_found"))
        return "LM Studio has not indexed the file (yet): press refresh in My Models or restart LM Studio, "
               "then check `lms ls --json`; the file must sit exactly at <models>/<publisher>/<repo>/<file>.gguf";
    if (strcasestr(e, "api token") || strcasestr(e, "unauthorized") || strcasestr(e, "authentication"))
        return "the server requires authentication: export LM_API_TOKEN=<token from Developer > Server settings>";
    if (strcasestr(e, "No models loaded"))
        return "no model is loaded and JIT loading is off: `lms load --exact <path>` or enable JIT loading";
    return "";
}

/* The endpoint does not exist on this server: LM Studio answers an unknown route with HTTP 200 and
 * {"error":"Unexpected endpoint or method. (POST /x)"}; a 404/405 without a known explanation is
 * taken the same way. */
static int unexpected_endpoint(const sn_http_resp *r) {
    char e[512];
    sn_http_json_error(r->body, e, sizeof e);
    if (strncmp(e, "Unexpected endpoint or method", 29) == 0) return 1;
    return (r->status == 404 || r->status == 405) && !*sn_lms_explain(e);
}

static sn_status lms_err(sn_http *h, const sn_http_resp *r, const char *what, sn_err *err) {
    if (r->cls == SN_HTTP_OK) return SN_OK;
    sn_status st = sn_http_check(h, r, "LM Studio", what, err);
    char e[512];
    sn_http_json_error(r->body, e, sizeof e);
    const char *x = sn_lms_explain(e);
    if (!*x && (r->status == 401 || r->status == 403)) x = sn_lms_explain("authentication");
    if (*x) {
        size_t l = strlen(err->msg);
        snprintf(err->msg + l, sizeof err->msg - l, " — %s", x);
    }
    return st;
}

static sn_status transport(sn_http *h, const sn_http_resp *r, sn_err *err) {
    if (r->cls == SN_HTTP_REFUSED)
        return sn_err_set(err, SN_EIO, "no LM Studio server at %s — start it with `lms server start` (or the "
                          "app's Developer tab), or pass --host", sn_http_base(h));
    return sn_err_set(err, SN_EIO, "cannot talk to LM Studio at %s: %s", sn_http_base(h), r->transport_error);
}

sn_status sn_lms_probe(sn_http *h, char *version, size_t cap, sn_err *err) {
    if (cap) version[0] = 0;
    sn_http_req rq = {.method = "GET", .path = "/lmstudio-greeting", .timeout_s = 15, .bearer = sn_http_env(h)->lm_api_token};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    if (st) {
        if (st != SN_ENOMEM) st = transport(h, &r, err);
        sn_http_resp_free(&r);
        return st;
    }
    if (r.cls != SN_HTTP_OK) {
        st = lms_err(h, &r, "GET /lmstudio-greeting", err);
        if (r.status == 404)
            st = sn_err_set(err, SN_EIO, "%s answered 404 to /lmstudio-greeting: not an LM Studio server "
                            "(Ollama listens on 11434, LM Studio on 1234)", sn_http_base(h));
        sn_http_resp_free(&r);
        return st;
    }
    st = sn_lms_greeting_answer(r.body, r.len, sn_http_base(h), version, cap, err);
    sn_http_resp_free(&r);
    return st;
}

/* prog's executable in the directories of path ($PATH), or NULL */
static char *find_on_path(const char *path, const char *prog) {
    if (!path) return NULL;
    char *copy = strdup(path);
    char *save = NULL, *res = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", *d ? d : ".", prog);
        if (access(p, X_OK) == 0) { res = strdup(p); break; }
    }
    free(copy);
    return res;
}

/* Runs argv, capturing stdout+stderr (first 4 KiB) into out. Returns the exit status or -1. */
static int run_capture(char *const argv[], char *out, size_t cap) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) { close(fd[0]); close(fd[1]); return -1; }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    char tmp[1024];
    ssize_t k;
    while ((k = read(fd[0], tmp, sizeof tmp)) > 0 || (k < 0 && errno == EINTR)) {
        if (k <= 0) continue;
        size_t take = n + (size_t)k < cap - 1 ? (size_t)k : (cap - 1 - n);
        memcpy(out + n, tmp, take);
        n += take;
    }
    out[n] = 0;
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

sn_status sn_lms_verify_listed(const sn_lms_placed *p, const sn_env *env, int *found, sn_lms_note_fn note,
                               void *ud, sn_err *err) {
    *found = -1;
    char *lms = find_on_path(env ? env->path : NULL, "lms");
    if (!lms) return SN_OK;
    char *argv[] = {lms, "ls", "--json", NULL};
    char *outb = malloc(1 << 20);
    if (!outb) { free(lms); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
    int rc = run_capture(argv, outb, 1 << 20);
    free(lms);
    sn_status st = rc == 0 ? sn_lms_ls_answer(outb, strlen(outb), p, found, note, ud, err) : SN_OK;
    free(outb);
    if (rc != 0) *found = -1;
    if (*found < 0) sn_lms_notef(note, ud, "`lms ls --json` gave no model list (exit %d); not verified", rc);
    return st;
}

/* Finds the key of our file in /api/v0/models: publisher matches and the id is the repo folder
 * (lowercase, -GGUF stripped), possibly with @quant. */
static int find_key(sn_http *h, const sn_lms_placed *p, char *key, size_t cap) {
    sn_http_req rq = {.method = "GET", .path = "/api/v0/models", .timeout_s = 30, .bearer = sn_http_env(h)->lm_api_token};
    sn_http_resp r;
    sn_err e = {0};
    if (sn_http_do(h, &rq, &r, &e) || r.cls != SN_HTTP_OK) {
        int auth = r.status == 401 || r.status == 403;
        sn_http_resp_free(&r);
        return auth ? -1 : 0;
    }
    int found = sn_lms_models_key(r.body, r.len, p, key, cap);
    sn_http_resp_free(&r);
    return found;
}

sn_status sn_lms_load(sn_http *h, const sn_lms_placed *p, const char *identifier, int ctx,
                      char *model_id, size_t cap, sn_lms_note_fn note, void *ud, sn_err *err) {
    char *lms = find_on_path(sn_http_env(h)->path, "lms");
    if (lms) {
        char ctxs[32], outb[4096];
        snprintf(ctxs, sizeof ctxs, "%d", ctx);
        char *argv[] = {lms, "load", "--exact", (char *)p->rel_path, "--identifier", (char *)identifier,
                        "--context-length", ctxs, "--ttl", "300", "-y", NULL};
        sn_lms_notef(note, ud, "loading with %s load --exact %s --identifier %s --context-length %s --ttl 300 -y", lms,
              p->rel_path, identifier, ctxs);
        int rc = run_capture(argv, outb, sizeof outb);
        free(lms);
        if (rc != 0) {
            const char *x = sn_lms_explain(outb);
            return sn_err_set(err, SN_EIO, "`lms load --exact %s` failed (exit %d): %.600s%s%s", p->rel_path, rc,
                              outb, *x ? " — " : "", x);
        }
        snprintf(model_id, cap, "%s", identifier);
        return SN_OK;
    }
    char key[256];
    int fk = find_key(h, p, key, sizeof key);
    if (fk < 0)
        return sn_err_set(err, SN_EIO, "GET /api/v0/models: LM Studio refused the request (HTTP 401/403) — %s",
                          sn_lms_explain("authentication"));
    if (!fk)
        return sn_err_set(err, SN_EIO, "LM Studio does not list %s in /api/v0/models — %s", p->rel_path,
                          sn_lms_explain("Invalid model identifier"));
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", key);
    cJSON_AddNumberToObject(b, "context_length", ctx);
    cJSON_AddBoolToObject(b, "echo_load_config", 1);
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    sn_http_req rq = {.method = "POST", .path = "/api/v1/models/load", .json = body, .timeout_s = 600, .bearer = sn_http_env(h)->lm_api_token};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    free(body);
    if (st) {
        if (st != SN_ENOMEM) st = transport(h, &r, err);
    } else if (unexpected_endpoint(&r)) {
        sn_lms_notef(note, ud, "no /api/v1/models/load (LM Studio < 0.4): relying on JIT loading of %s", key);
        snprintf(model_id, cap, "%s", key);
    } else if (r.cls != SN_HTTP_OK) {
        st = lms_err(h, &r, "POST /api/v1/models/load", err);
    } else {
        sn_lms_load_answer(r.body, r.len, key, model_id, cap);
        sn_lms_notef(note, ud, "loaded %s over REST as %s", key, model_id);
    }
    sn_http_resp_free(&r);
    return st;
}

sn_status sn_lms_complete(sn_http *h, const char *body, sn_lms_completion *c, const char **used,
                          sn_lms_note_fn note, void *ud, sn_err *err) {
    static const char *paths[] = {"/api/v0/completions", "/v1/completions"};
    static const char *whats[] = {"POST /api/v0/completions", "POST /v1/completions"};
    cJSON *b = cJSON_Parse(body);
    char *js = b ? sn_http_json_streamed(b) : NULL;
    cJSON_Delete(b);
    if (!js) return sn_err_set(err, SN_EINVAL, "the completion request is not a JSON object");
    sn_status st = SN_OK;
    for (int i = 0; i < 2; i++) {
        sn_lms_completion_begin(c, whats[i], err);
        *used = paths[i];
        /* one SSE event per token: silence while generating is a stall (SN_HTTP_STALL_S); before the
         * first one LM Studio may load the model (JIT, LM Studio < 0.4), bounded by SN_HTTP_LOAD_S */
        sn_http_req rq = {.method = "POST", .path = paths[i], .json = js, .bearer = sn_http_env(h)->lm_api_token,
                          .loads_model = 1, .on_line = sn_lms_completion_line, .line_ud = c};
        sn_http_resp r;
        st = sn_http_do(h, &rq, &r, err);
        if (st) {
            if (st != SN_ENOMEM) st = transport(h, &r, err);
        } else if (r.cls == SN_HTTP_OK || r.cls == SN_HTTP_ABORTED) {
            st = sn_lms_completion_end(c);
            if (st == SN_OK && i == 0 && strncmp(c->server_error, "Unexpected endpoint or method", 29) == 0) {
                sn_lms_notef(note, ud, "no /api/v0/completions; using /v1/completions (no model_info to check)");
                sn_lms_completion_free(c);
                sn_http_resp_free(&r);
                continue;
            }
            if (st == SN_OK && c->server_error[0])
                st = sn_err_set(err, SN_EIO, "%s: LM Studio answered HTTP 200 with the error '%s'%s%s", whats[i],
                                c->server_error, *sn_lms_explain(c->server_error) ? " — " : "",
                                sn_lms_explain(c->server_error));
        } else if (i == 0 && unexpected_endpoint(&r)) { /* the endpoint itself is missing: older server */
            sn_lms_notef(note, ud, "no /api/v0/completions; using /v1/completions (no model_info to check)");
            sn_lms_completion_free(c);
            sn_http_resp_free(&r);
            continue;
        } else {
            st = lms_err(h, &r, whats[i], err);
        }
        sn_http_resp_free(&r);
        break;
    }
    free(js);
    if (st) sn_lms_completion_free(c);
    return st;
}

/* The arch of the model LM Studio serves under model_id, from GET /api/v0/models/{id} ("" when the
 * server does not say: an older server, or an identifier it lists under another name). */
static void served_arch(sn_http *h, const char *model_id, char *arch, size_t cap) {
    arch[0] = 0;
    char *id = curl_easy_escape(NULL, model_id, 0), path[1024];
    if (!id) return;
    snprintf(path, sizeof path, "/api/v0/models/%s", id);
    curl_free(id);
    sn_http_req rq = {.method = "GET", .path = path, .timeout_s = 30, .bearer = sn_http_env(h)->lm_api_token};
    sn_http_resp r;
    sn_err e = {0};
    if (sn_http_do(h, &rq, &r, &e) == SN_OK && r.cls == SN_HTTP_OK) sn_lms_model_arch(r.body, r.len, arch, cap);
    sn_http_resp_free(&r);
}

/* A greedy request: temperature 0, top_k 1, no penalty, a seed (sent streamed: sn_http_json_streamed). */
static cJSON *greedy_body(const char *model_id, int n_predict, int64_t seed) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", model_id);
    cJSON_AddNumberToObject(b, "max_tokens", n_predict);
    cJSON_AddNumberToObject(b, "temperature", 0);
    cJSON_AddNumberToObject(b, "top_k", 1);
    cJSON_AddNumberToObject(b, "top_p", 1.0);
    cJSON_AddNumberToObject(b, "min_p", 0.0);
    cJSON_AddNumberToObject(b, "repeat_penalty", 1.0); /* LM Studio's default 1.1 would bend greedy */
    cJSON_AddNumberToObject(b, "seed", (double)seed);
    return b;
}

sn_status sn_lms_smoke(sn_http *h, const char *model_id, const char *arch, const char *prompt,
                       int n_predict, int64_t seed, const sn_smoke_local *ours, sn_smoke_result *res,
                       sn_lms_note_fn note, void *ud, sn_err *err) {
    cJSON *b = greedy_body(model_id, n_predict, seed);
    cJSON_AddStringToObject(b, "prompt", prompt);
    cJSON_AddNumberToObject(b, "logprobs", 2); /* OpenAI completions: top-2 per token, if the server returns them */
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    if (!body) return sn_err_set(err, SN_ENOMEM, "out of memory");
    sn_lms_completion c;
    const char *used = NULL;
    sn_status st = sn_lms_complete(h, body, &c, &used, note, ud, err);
    free(body);
    if (st) return st;
    /* the model that answered: model_info.arch when the answer carries it (a whole v0 answer does, a
     * streamed one may not), else what /api/v0/models says of the identifier */
    char served[64];
    const char *how = "model_info.arch";
    if (c.arch[0]) snprintf(served, sizeof served, "%s", c.arch);
    else if (strcmp(used, "/api/v0/completions") == 0) {
        served_arch(h, model_id, served, sizeof served);
        how = "/api/v0/models arch";
    } else served[0] = 0;
    if (served[0]) {
        if (strcmp(served, arch) != 0) {
            st = sn_err_set(err, SN_EIO, "the model that answered has architecture '%s', the GGUF '%s': LM Studio "
                            "served a different model", served, arch);
            sn_lms_completion_free(&c);
            return st;
        }
        sn_lms_notef(note, ud, "%s = %s (matches the GGUF)", how, served);
    }
    int stopped = strcmp(c.finish, "stop") == 0;
    /* LM Studio accepts the logprobs request field but answers "logprobs": null (lmstudio-ai/lms#60) */
    if (c.n_toks > 0) {
        st = sn_smoke_compare_tokens(ours, c.toks, c.n_toks, stopped, 0, res, err);
    } else {
        st = sn_smoke_compare(ours, c.text, NULL, 0, stopped, res, err);
        if (st == SN_OK)
            snprintf(res->method, sizeof res->method, "text, byte for byte (LM Studio returns no logprobs)");
    }
    sn_lms_completion_free(&c);
    return st;
}

/* POSTs b (consumed) to path, streamed like the smoke's completion (the same stall rule); the
 * answer's text (choices[0].text, or the chat answer's content) into *out. */
static sn_status greedy_text(sn_http *h, const char *path, cJSON *b, char **out, sn_err *err) {
    *out = NULL;
    char *body = sn_http_json_streamed(b);
    cJSON_Delete(b);
    if (!body) return sn_err_set(err, SN_ENOMEM, "out of memory");
    char what[96];
    snprintf(what, sizeof what, "POST %s", path);
    sn_lms_completion c;
    sn_lms_completion_begin(&c, what, err);
    sn_http_req rq = {.method = "POST", .path = path, .json = body, .bearer = sn_http_env(h)->lm_api_token,
                      .loads_model = 1, .on_line = sn_lms_completion_line, .line_ud = &c};
    sn_http_resp r = {0};
    sn_status st = sn_http_do(h, &rq, &r, err);
    free(body);
    if (st) {
        if (st != SN_ENOMEM) st = transport(h, &r, err);
    } else if (r.cls == SN_HTTP_OK || r.cls == SN_HTTP_ABORTED) {
        st = sn_lms_completion_end(&c);
        const char *x = sn_lms_explain(c.server_error);
        if (st == SN_OK && c.server_error[0])
            st = sn_err_set(err, SN_EIO, "%s: LM Studio answered '%s'%s%s", path, c.server_error, *x ? " — " : "", x);
    } else {
        st = lms_err(h, &r, path, err);
    }
    sn_http_resp_free(&r);
    if (st == SN_OK) {
        *out = c.text;
        c.text = NULL;
    }
    sn_lms_completion_free(&c);
    return st;
}

sn_status sn_lms_chat_check(sn_http *h, const char *model_id, const char *gguf, const char *user, int n_predict,
                            int64_t seed, sn_lms_note_fn note, void *ud, int *same, sn_err *err) {
    *same = 0;
    char *rendered = NULL, *chat = NULL, *raw = NULL;
    sn_status st = sn_template_render_jinja(gguf, NULL, user, 1, &rendered, err);
    if (st) return st;
    cJSON *b = greedy_body(model_id, n_predict, seed);
    cJSON *msgs = cJSON_AddArrayToObject(b, "messages");
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", user);
    cJSON_AddItemToArray(msgs, m);
    st = greedy_text(h, "/v1/chat/completions", b, &chat, err);
    if (st == SN_OK) {
        b = greedy_body(model_id, n_predict, seed);
        cJSON_AddStringToObject(b, "prompt", rendered);
        st = greedy_text(h, "/v1/completions", b, &raw, err);
    }
    if (st == SN_OK) {
        *same = strcmp(chat, raw) == 0;
        sn_lms_notef(note, ud, "chat: LM Studio's answer to one user turn %s the completion of the GGUF's Jinja "
                     "rendered by sunny (%zu bytes of prompt): \"%.60s\"%s", *same ? "equals" : "DIFFERS from",
                     strlen(rendered), chat, *same ? "" : " vs the completion's");
        if (!*same) sn_lms_notef(note, ud, "chat: the completion's answer: \"%.60s\"", raw);
    }
    free(rendered);
    free(chat);
    free(raw);
    return st;
}
