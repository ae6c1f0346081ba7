/* ollama_reply.c - what Ollama's answers say, read from their bytes alone (no HTTP here, so the
 * fuzz harness tests/fuzz/fuzz_ollama_reply.c reaches every line): GET /api/version's
 * {"version"}, one NDJSON progress line of POST /api/create, and POST /api/generate's
 * "stream":false answer with its logprobs. ollama.c sends the requests and calls these. */
#include "ollama.h"
#include "budget.h"
#include "num.h"
#include "smoke.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sn_status sn_ollama_version_answer(const char *body, size_t len, const char *base, sn_ollama_version *v,
                                   sn_err *err) {
    cJSON *j = body ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *ver = j ? cJSON_GetObjectItemCaseSensitive(j, "version") : NULL;
    sn_status st = SN_OK;
    if (!cJSON_IsString(ver)) {
        size_t n = len < 80 ? len : 80;
        st = sn_err_set(err, SN_EIO,
                        "%s/api/version did not answer {\"version\":...} (got '%.*s'): something other "
                        "than Ollama (a proxy?) answered",
                        base, (int)n, body ? body : "");
    } else {
        sn_ollama_version_parse(ver->valuestring, v);
    }
    cJSON_Delete(j);
    return st;
}

int sn_ollama_create_line(void *ud, const char *line, size_t len) {
    sn_ollama_create_ctx *c = ud;
    c->lines++;
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!j) {
        sn_err_set(c->err, SN_EIO, "POST /api/create: line %d of the answer is not JSON: '%.*s'",
                   c->lines, (int)(len < 120 ? len : 120), line);
        c->failed = 1;
        return 1;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (e) {
        sn_err_set(c->err, SN_EIO, "POST /api/create: Ollama reported an error mid-stream (line %d, "
                   "HTTP 200): %s", c->lines, cJSON_IsString(e) ? e->valuestring : "(non-string error)");
        c->failed = 1;
        cJSON_Delete(j);
        return 1;
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "status");
    if (cJSON_IsString(s)) {
        if (strcmp(s->valuestring, "success") == 0) c->success = 1;
        if (c->status) {
            const cJSON *tot = cJSON_GetObjectItemCaseSensitive(j, "total");
            const cJSON *com = cJSON_GetObjectItemCaseSensitive(j, "completed");
            if (cJSON_IsNumber(tot) && cJSON_IsNumber(com) && tot->valuedouble > 0) {
                char b[512];
                snprintf(b, sizeof b, "%s (%.0f%%)", s->valuestring, 100.0 * com->valuedouble / tot->valuedouble);
                c->status(c->ud, b);
            } else {
                c->status(c->ud, s->valuestring);
            }
        }
    }
    cJSON_Delete(j);
    return 0;
}

/* "logprobs": [{"token","logprob","bytes","top_logprobs":[{"token","logprob","bytes"}]}] (api/types.go
 * Logprob). The text is taken from "bytes" when present (exact bytes), else from "token". */
static char *lp_text(const cJSON *o) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");
    if (cJSON_IsArray(b)) {
        int n = cJSON_GetArraySize(b);
        char *s = malloc((size_t)n + 1);
        if (!s) return NULL;
        int i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, b) s[i++] = (char)(unsigned char)(cJSON_IsNumber(it) ? it->valueint : '?');
        s[i] = 0;
        return s;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "token");
    return strdup(cJSON_IsString(t) ? t->valuestring : "");
}

/* appends the logprobs entries of one chunk to out->toks */
static sn_status parse_logprobs(const cJSON *lps, sn_ollama_gen *out, sn_err *err) {
    size_t n = (size_t)cJSON_GetArraySize(lps);
    out->has_logprobs = 1;
    if (n == 0) return SN_OK;
    sn_smoke_token *nt = realloc(out->toks, (out->n_toks + n) * sizeof *out->toks);
    if (!nt) return sn_err_set(err, SN_ENOMEM, "out of memory");
    out->toks = nt;
    const cJSON *e;
    cJSON_ArrayForEach(e, lps) {
        sn_smoke_token *t = &out->toks[out->n_toks];
        t->text = lp_text(e);
        if (!t->text) return sn_err_set(err, SN_ENOMEM, "out of memory");
        out->n_toks++;
        const cJSON *lp = cJSON_GetObjectItemCaseSensitive(e, "logprob");
        t->logprob = cJSON_IsNumber(lp) ? lp->valuedouble : NAN;
        t->gap = NAN;
        const cJSON *top = cJSON_GetObjectItemCaseSensitive(e, "top_logprobs");
        if (cJSON_IsArray(top) && cJSON_GetArraySize(top) >= 2) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(top, 0), "logprob");
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(top, 1), "logprob");
            if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) t->gap = a->valuedouble - b->valuedouble;
        }
    }
    return SN_OK;
}

void sn_ollama_gen_begin(sn_ollama_gen_ctx *c, sn_ollama_gen *out, sn_err *err) {
    memset(c, 0, sizeof *c);
    c->out = out;
    c->err = err;
    memset(out, 0, sizeof *out);
    out->eval_count = -1;
    out->prompt_eval_count = -1;
}

static int gen_fail(sn_ollama_gen_ctx *c, sn_status st) {
    c->st = st;
    return 1;
}

int sn_ollama_gen_line(void *ud, const char *line, size_t len) {
    sn_ollama_gen_ctx *c = ud;
    sn_ollama_gen *out = c->out;
    c->lines++;
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!j)
        return gen_fail(c, sn_err_set(c->err, SN_EIO, "POST /api/generate: %s of the answer is not JSON: '%.*s'",
                                      c->lines > 1 ? "a line" : "the start", (int)(len < 120 ? len : 120), line));
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *resp = cJSON_GetObjectItemCaseSensitive(j, "response");
    if (e || !cJSON_IsString(resp)) {
        gen_fail(c, sn_err_set(c->err, SN_EIO, "POST /api/generate: %s",
                               cJSON_IsString(e) ? e->valuestring : "no \"response\" in the answer"));
        cJSON_Delete(j);
        return 1;
    }
    /* a stream's chunks each carry their piece of the text (and its logprobs); the last one, done,
     * carries the counts, the context and why it stopped */
    size_t add = strlen(resp->valuestring);
    /* each line is bounded by SN_BUDGET_NDJSON_LINE, the text of all of them by the reply budget */
    if (add + out->n_toks * sizeof *out->toks > SN_BUDGET_JSON_BODY - c->text_len) {
        cJSON_Delete(j);
        return gen_fail(c, sn_err_set(c->err, SN_EIO, "POST /api/generate: the answer is longer than the %u MB "
                                      "budget for a reply (SN_BUDGET_JSON_BODY, budget.h); stopped reading",
                                      SN_BUDGET_JSON_BODY >> 20));
    }
    char *t = realloc(out->text, c->text_len + add + 1);
    if (!t) {
        cJSON_Delete(j);
        return gen_fail(c, sn_err_set(c->err, SN_ENOMEM, "out of memory"));
    }
    memcpy(t + c->text_len, resp->valuestring, add + 1);
    out->text = t;
    c->text_len += add;
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(j, "context");
    if (cJSON_IsArray(ctx) && cJSON_GetArraySize(ctx) > 0) {
        size_t n = (size_t)cJSON_GetArraySize(ctx);
        free(out->context);
        out->n_context = 0;
        out->context = malloc(n * sizeof(int32_t));
        if (out->context) {
            const cJSON *it;
            int64_t id;
            /* token ids: anything else (a fraction, 1e300, a string) is left out, not cast */
            cJSON_ArrayForEach(it, ctx) if (cJSON_IsNumber(it) && sn_f64_to_i64(it->valuedouble, 0, INT32_MAX, &id))
                out->context[out->n_context++] = (int32_t)id;
        }
    }
    const cJSON *ec = cJSON_GetObjectItemCaseSensitive(j, "eval_count");
    if (cJSON_IsNumber(ec) && !sn_f64_to_i64(ec->valuedouble, 0, INT64_MAX, &out->eval_count)) out->eval_count = -1;
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive(j, "prompt_eval_count");
    if (cJSON_IsNumber(pc) && !sn_f64_to_i64(pc->valuedouble, 0, INT64_MAX, &out->prompt_eval_count))
        out->prompt_eval_count = -1;
    out->done = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "done"));
    const cJSON *lps = cJSON_GetObjectItemCaseSensitive(j, "logprobs");
    sn_status st = cJSON_IsArray(lps) ? parse_logprobs(lps, out, c->err) : SN_OK;
    const cJSON *dr = cJSON_GetObjectItemCaseSensitive(j, "done_reason");
    if (cJSON_IsString(dr)) snprintf(out->done_reason, sizeof out->done_reason, "%s", dr->valuestring);
    cJSON_Delete(j);
    return st == SN_OK ? 0 : gen_fail(c, st);
}

sn_status sn_ollama_gen_end(sn_ollama_gen_ctx *c) {
    if (c->st) return c->st;
    if (!c->lines) return sn_err_set(c->err, SN_EIO, "POST /api/generate: the answer is empty");
    if (strcmp(c->out->done_reason, "load") == 0) /* GenerateHandler: an empty prompt only loads */
        return sn_err_set(c->err, SN_EINVAL,
                          "POST /api/generate: the server only loaded the model (done_reason \"load\"): Ollama "
                          "answers an empty prompt that way and generates nothing; give a non-empty prompt");
    return SN_OK;
}

sn_status sn_ollama_gen_parse(const char *body, size_t len, sn_ollama_gen *out, sn_err *err) {
    sn_ollama_gen_ctx c;
    sn_ollama_gen_begin(&c, out, err);
    if (!body) return sn_err_set(err, SN_EIO, "POST /api/generate: the answer is empty");
    sn_ollama_gen_line(&c, body, len);
    return sn_ollama_gen_end(&c);
}
