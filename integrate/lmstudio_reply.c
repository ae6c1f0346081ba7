/* lmstudio_reply.c - what LM Studio's answers say, read from their bytes alone (see lmstudio_reply.h):
 * the greeting, /api/v0/models, the load reply, `lms ls --json`, and a completion streamed as
 * server-sent events or sent whole. */
#include "lmstudio_reply.h"

#include "budget.h"
#include "lmstudio_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void sn_lms_notef(sn_lms_note_fn fn, void *ud, const char *fmt, ...) {
    if (!fn) return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fn(ud, buf);
}

sn_status sn_lms_greeting_answer(const char *body, size_t len, const char *base, char *version, size_t cap,
                                 sn_err *err) {
    if (cap) version[0] = 0;
    cJSON *j = body ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *lm = cJSON_GetObjectItemCaseSensitive(j, "lmstudio");
    sn_status st = SN_OK;
    if (!cJSON_IsTrue(lm)) st = sn_err_set(err, SN_EIO, "%s/lmstudio-greeting did not answer {\"lmstudio\":true}", base);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
    if (cJSON_IsString(v) && cap) snprintf(version, cap, "%s", v->valuestring);
    cJSON_Delete(j);
    return st;
}

int sn_lms_models_key(const char *body, size_t len, const sn_lms_placed *p, char *key, size_t cap) {
    char want[160];
    snprintf(want, sizeof want, "%s", p->repo);
    size_t wl = strlen(want);
    if (wl > 5 && strcasecmp(want + wl - 5, "-GGUF") == 0) want[wl -= 5] = 0;
    for (char *c = want; *c; c++) *c = (char)tolower((unsigned char)*c);
    cJSON *j = body ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *it;
    int found = 0;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
    if (!cJSON_IsArray(data)) data = NULL;
    cJSON_ArrayForEach(it, data) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
        const cJSON *pub = cJSON_GetObjectItemCaseSensitive(it, "publisher");
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(it, "quantization");
        if (!cJSON_IsString(id)) continue;
        if (cJSON_IsString(pub) && strcasecmp(pub->valuestring, p->publisher) != 0) continue;
        const char *s = id->valuestring;
        int name_ok = strncasecmp(s, want, wl) == 0 && (s[wl] == 0 || s[wl] == '@');
        int q_ok = !cJSON_IsString(q) || strcasecmp(q->valuestring, p->quant) == 0;
        if (name_ok && q_ok) {
            snprintf(key, cap, "%s", s);
            found = 1;
            break;
        }
    }
    cJSON_Delete(j);
    return found;
}

void sn_lms_model_arch(const char *body, size_t len, char *arch, size_t cap) {
    if (cap) arch[0] = 0;
    cJSON *j = body ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "arch");
    if (cJSON_IsString(a) && cap) snprintf(arch, cap, "%s", a->valuestring);
    cJSON_Delete(j);
}

void sn_lms_load_answer(const char *body, size_t len, const char *key, char *model_id, size_t cap) {
    cJSON *j = body ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *iid = cJSON_GetObjectItemCaseSensitive(j, "instance_id");
    snprintf(model_id, cap, "%s", cJSON_IsString(iid) && iid->valuestring[0] ? iid->valuestring : key);
    cJSON_Delete(j);
}

sn_status sn_lms_ls_answer(const char *json, size_t len, const sn_lms_placed *p, int *found, sn_lms_note_fn note,
                           void *ud, sn_err *err) {
    cJSON *j = json ? cJSON_ParseWithLength(json, len) : NULL;
    *found = -1;
    if (!cJSON_IsArray(j)) {
        cJSON_Delete(j);
        return SN_OK;
    }
    sn_status st = SN_OK;
    *found = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(it, "path");
        if (!cJSON_IsString(path) || strcmp(path->valuestring, p->rel_path) != 0) continue;
        *found = 1;
        const cJSON *arch = cJSON_GetObjectItemCaseSensitive(it, "architecture");
        const cJSON *fmtj = cJSON_GetObjectItemCaseSensitive(it, "format");
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(it, "quantization");
        const cJSON *qn = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "name") : NULL;
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(it, "modelKey");
        if (cJSON_IsString(arch) && strcmp(arch->valuestring, p->arch) != 0)
            st = sn_err_set(err, SN_EIO, "`lms ls` lists %s with architecture '%s', the GGUF says '%s'", p->rel_path,
                            arch->valuestring, p->arch);
        else if (cJSON_IsString(fmtj) && strcmp(fmtj->valuestring, "gguf") != 0)
            st = sn_err_set(err, SN_EIO, "`lms ls` lists %s with format '%s'", p->rel_path, fmtj->valuestring);
        else
            sn_lms_notef(note, ud, "lms ls: %s listed as %s (%s, %s)", p->rel_path,
                         cJSON_IsString(key) ? key->valuestring : "?", cJSON_IsString(arch) ? arch->valuestring : "?",
                         cJSON_IsString(qn) ? qn->valuestring : "?");
        break;
    }
    if (*found == 0)
        sn_lms_notef(note, ud, "warning: `lms ls` does not list %s yet: press refresh in My Models or restart LM Studio",
                     p->rel_path);
    cJSON_Delete(j);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Completions */

void sn_lms_completion_begin(sn_lms_completion *c, const char *what, sn_err *err) {
    memset(c, 0, sizeof *c);
    c->what = what;
    c->err = err;
}

void sn_lms_completion_free(sn_lms_completion *c) {
    free(c->text);
    free(c->raw);
    for (size_t i = 0; i < c->n_toks; i++) free(c->toks[i].text);
    free(c->toks);
    c->text = c->raw = NULL;
    c->toks = NULL;
    c->n_toks = c->text_len = c->raw_len = c->raw_cap = 0;
}

static int fail(sn_lms_completion *c, sn_status st) {
    if (!c->st) c->st = st;
    return 1;
}

/* counts n more bytes collected; fails past the budget */
static int spend(sn_lms_completion *c, size_t n) {
    if (n > SN_BUDGET_JSON_BODY - c->spent) {
        sn_err_set(c->err, SN_EIO, "%s: the answer is longer than the %u MB budget for a JSON reply "
                   "(SN_BUDGET_JSON_BODY, budget.h); stopped reading", c->what, SN_BUDGET_JSON_BODY >> 20);
        return fail(c, SN_EIO);
    }
    c->spent += n;
    return 0;
}

/* OpenAI completions logprobs of one chunk, {"tokens":[..],"token_logprobs":[..],"top_logprobs":
 * [{token:lp},..]}, appended to c->toks */
static int add_logprobs(sn_lms_completion *c, const cJSON *lp) {
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(lp, "tokens");
    if (!cJSON_IsArray(lt)) return 0;
    size_t n = (size_t)cJSON_GetArraySize(lt);
    if (!n) return 0;
    if (spend(c, n * sizeof *c->toks)) return 1;
    sn_smoke_token *nt = realloc(c->toks, (c->n_toks + n) * sizeof *c->toks);
    if (!nt) return fail(c, sn_err_set(c->err, SN_ENOMEM, "out of memory"));
    c->toks = nt;
    const cJSON *tlp = cJSON_GetObjectItemCaseSensitive(lp, "token_logprobs");
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(lp, "top_logprobs");
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, lt) {
        sn_smoke_token *t = &c->toks[c->n_toks];
        t->text = strdup(cJSON_IsString(it) ? it->valuestring : "");
        if (!t->text) return fail(c, sn_err_set(c->err, SN_ENOMEM, "out of memory"));
        c->n_toks++;
        if (spend(c, strlen(t->text))) return 1;
        const cJSON *v = cJSON_GetArrayItem(tlp, k);
        t->logprob = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        t->gap = NAN;
        double a = -INFINITY, b = -INFINITY;
        const cJSON *x, *m = cJSON_GetArrayItem(top, k);
        if (!cJSON_IsObject(m)) m = NULL;
        cJSON_ArrayForEach(x, m) {
            if (!cJSON_IsNumber(x)) continue;
            if (x->valuedouble > a) b = a, a = x->valuedouble;
            else if (x->valuedouble > b) b = x->valuedouble;
        }
        if (isfinite(a) && isfinite(b)) t->gap = a - b;
        k++;
    }
    return 0;
}

/* one answer object: a chunk of the stream, or the whole answer */
static int take(sn_lms_completion *c, const cJSON *j) {
    if (!cJSON_IsObject(j))
        return fail(c, sn_err_set(c->err, SN_EIO, "%s: the answer is not a JSON object", c->what));
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (e) {
        const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
        snprintf(c->server_error, sizeof c->server_error, "%s", cJSON_IsString(m) ? m->valuestring : "(no message)");
        return 1;
    }
    const cJSON *mi = cJSON_GetObjectItemCaseSensitive(j, "model_info");
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(mi, "arch");
    if (cJSON_IsString(ma)) snprintf(c->arch, sizeof c->arch, "%s", ma->valuestring);
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    if (!cJSON_IsObject(c0)) return 0; /* e.g. a usage-only chunk */
    /* a completion's "text"; a chat answer's "message" or a chat chunk's "delta" {"content"} */
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c0, "delta");
    if (!msg) msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
    const cJSON *text = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "content")
                                            : cJSON_GetObjectItemCaseSensitive(c0, "text");
    if (cJSON_IsString(text)) {
        size_t add = strlen(text->valuestring);
        if (spend(c, add)) return 1;
        char *t = realloc(c->text, c->text_len + add + 1);
        if (!t) return fail(c, sn_err_set(c->err, SN_ENOMEM, "out of memory"));
        memcpy(t + c->text_len, text->valuestring, add + 1);
        c->text = t;
        c->text_len += add;
        c->has_text = 1;
    }
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
    if (cJSON_IsString(fr)) snprintf(c->finish, sizeof c->finish, "%s", fr->valuestring);
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(c0, "logprobs");
    return cJSON_IsObject(lp) ? add_logprobs(c, lp) : 0;
}

static int is_field(const char *line, size_t len, const char *name) {
    size_t n = strlen(name);
    return len >= n && memcmp(line, name, n) == 0;
}

int sn_lms_completion_line(void *ud, const char *line, size_t len) {
    sn_lms_completion *c = ud;
    if (c->st) return 1;
    if (is_field(line, len, "data:")) {
        const char *v = line + 5;
        size_t n = len - 5;
        if (n && *v == ' ') v++, n--; /* one space after the colon belongs to the field syntax */
        c->events++;
        if (n == 6 && memcmp(v, "[DONE]", 6) == 0) {
            c->done = 1;
            return 0;
        }
        cJSON *j = cJSON_ParseWithLength(v, n);
        if (!j)
            return fail(c, sn_err_set(c->err, SN_EIO, "%s: event %d of the answer is not JSON: '%.*s'", c->what,
                                      c->events, (int)(n < 120 ? n : 120), v));
        int r = take(c, j);
        cJSON_Delete(j);
        return r;
    }
    /* the other SSE fields and comments (keep-alives) carry nothing for us */
    if (line[0] == ':' || is_field(line, len, "event:") || is_field(line, len, "id:") || is_field(line, len, "retry:"))
        return 0;
    /* anything else is a body sent whole (a server that ignores "stream"), read at the end */
    if (spend(c, len + 1)) return 1;
    if (c->raw_len + len + 2 > c->raw_cap) {
        size_t nc = c->raw_cap ? c->raw_cap : 4096;
        while (nc < c->raw_len + len + 2) nc *= 2;
        char *nr = realloc(c->raw, nc);
        if (!nr) return fail(c, sn_err_set(c->err, SN_ENOMEM, "out of memory"));
        c->raw = nr;
        c->raw_cap = nc;
    }
    memcpy(c->raw + c->raw_len, line, len);
    c->raw_len += len;
    c->raw[c->raw_len++] = '\n';
    c->raw[c->raw_len] = 0;
    return 0;
}

sn_status sn_lms_completion_end(sn_lms_completion *c) {
    if (c->st) return c->st;
    if (!c->server_error[0] && !c->events && c->raw_len) {
        cJSON *j = cJSON_ParseWithLength(c->raw, c->raw_len);
        if (!j)
            return sn_err_set(c->err, SN_EIO, "%s: the answer is neither events nor JSON: '%.*s'", c->what,
                              (int)(c->raw_len < 120 ? c->raw_len : 120), c->raw);
        take(c, j);
        cJSON_Delete(j);
        if (c->st) return c->st;
    }
    if (c->server_error[0] || c->has_text) return SN_OK;
    return sn_err_set(c->err, SN_EIO, "%s: no choices[0].text (or message / delta content) in the answer%s", c->what,
                      c->events && !c->done ? " (the stream ended without data: [DONE])" : "");
}
