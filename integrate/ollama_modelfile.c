/* ollama_modelfile.c - what sunny sends Ollama and how it reads it back, as text.
 *
 * Typed PARAMETER values (api.Options by JSON name), model names (the registry's name rules),
 * the /api/create bodies (files + template/system/parameters/license, or the legacy Modelfile
 * body for servers < 0.5.5), the Modelfile itself with values quoted so Ollama's parser reads them
 * back unchanged, and the check of POST /api/show's answer against what was asked for (Go
 * strconv.Unquote for its parameter text). No I/O: the HTTP calls are ollama.c. */
#include "ollama.h"

#include "utf8_fix.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------------------------------
 * Parameters, typed like api.Options (api/types.go): Runner + Options fields by JSON name. */

typedef enum { P_INT, P_FLOAT, P_BOOL, P_STRS } ptype;
static const struct { const char *key; ptype t; } k_params[] = {
    {"num_ctx", P_INT},        {"num_batch", P_INT},        {"num_gpu", P_INT},
    {"main_gpu", P_INT},       {"use_mmap", P_BOOL},        {"num_thread", P_INT},
    {"num_keep", P_INT},       {"seed", P_INT},             {"num_predict", P_INT},
    {"top_k", P_INT},          {"top_p", P_FLOAT},          {"min_p", P_FLOAT},
    {"typical_p", P_FLOAT},    {"repeat_last_n", P_INT},    {"temperature", P_FLOAT},
    {"repeat_penalty", P_FLOAT}, {"presence_penalty", P_FLOAT}, {"frequency_penalty", P_FLOAT},
    {"stop", P_STRS},
};
static const char *const k_deprecated[] = {"penalize_newline", "low_vram", "f16_kv", "logits_all",
                                           "vocab_only", "use_mlock", "mirostat", "mirostat_tau",
                                           "mirostat_eta", "tfs_z", "numa"};

sn_status sn_ollama_param_add(cJSON *params, const char *key, const char *value, sn_err *err) {
    for (size_t i = 0; i < sizeof k_deprecated / sizeof k_deprecated[0]; i++)
        if (strcmp(key, k_deprecated[i]) == 0)
            return sn_err_set(err, SN_EINVAL, "--param %s: deprecated in Ollama and ignored; drop it", key);
    for (size_t i = 0; i < sizeof k_params / sizeof k_params[0]; i++) {
        if (strcmp(key, k_params[i].key) != 0) continue;
        char *end;
        switch (k_params[i].t) {
        case P_INT: {
            errno = 0;
            long long v = strtoll(value, &end, 10);
            if (!*value || *end || errno)
                return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be an integer", key, value);
            cJSON_DeleteItemFromObjectCaseSensitive(params, key);
            cJSON_AddNumberToObject(params, key, (double)v);
            return SN_OK;
        }
        case P_FLOAT: {
            errno = 0;
            double v = strtod(value, &end);
            if (!*value || *end || errno)
                return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be a number", key, value);
            if (!isfinite(v)) /* JSON has no NaN or Infinity: cJSON would send null */
                return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be a finite number", key, value);
            cJSON_DeleteItemFromObjectCaseSensitive(params, key);
            cJSON_AddNumberToObject(params, key, v);
            return SN_OK;
        }
        case P_BOOL: {
            int b;
            if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "True") || !strcmp(value, "TRUE") || !strcmp(value, "t") || !strcmp(value, "T")) b = 1;
            else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "False") || !strcmp(value, "FALSE") || !strcmp(value, "f") || !strcmp(value, "F")) b = 0;
            else return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be true or false", key, value);
            cJSON_DeleteItemFromObjectCaseSensitive(params, key);
            cJSON_AddBoolToObject(params, key, b);
            return SN_OK;
        }
        case P_STRS: {
            cJSON *arr = cJSON_GetObjectItemCaseSensitive(params, key);
            if (!cJSON_IsArray(arr)) {
                cJSON_DeleteItemFromObjectCaseSensitive(params, key);
                arr = cJSON_AddArrayToObject(params, key);
            }
            if (!arr) return sn_err_set(err, SN_ENOMEM, "out of memory");
            cJSON *it;
            cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it) && strcmp(it->valuestring, value) == 0) return SN_OK;
            cJSON_AddItemToArray(arr, cJSON_CreateString(value));
            return SN_OK;
        }
        }
    }
    return sn_err_set(err, SN_EINVAL,
                      "--param %s: not an Ollama parameter (known: num_ctx, num_batch, num_gpu, main_gpu, "
                      "use_mmap, num_thread, num_keep, seed, num_predict, top_k, top_p, min_p, typical_p, "
                      "repeat_last_n, temperature, repeat_penalty, presence_penalty, frequency_penalty, "
                      "stop)",
                      key);
}

/* ------------------------------------------------------------------------------------------------
 * Names, bodies, Modelfile */

static int name_part_ok(const char *s, size_t n, size_t max, const char *extra) {
    if (n == 0 || n > max) return 0;
    if (!(isalnum((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == '_' || strchr(extra, c))) return 0;
    }
    return 1;
}

sn_status sn_ollama_base_model_template(char **tmpl, char *src, size_t src_cap, sn_err *err) {
    *tmpl = strdup("{{ .Prompt }}");
    if (!*tmpl) return sn_err_set(err, SN_ENOMEM, "out of memory");
    snprintf(src, src_cap, "{{ .Prompt }} (raw completion: the GGUF has no tokenizer.chat_template, a base "
             "model; prompts reach the model as they are, with no chat markers)");
    return SN_OK;
}

/* internal/modelref parseSourceSuffix: a tag "local" or "cloud" (any case, spaces trimmed), or a tag
 * ending in "-cloud" without a '/', is a source selector, stripped before show/generate resolve the
 * name - while create stores the literal name. Returns the offending suffix or NULL. */
static const char *source_suffix(const char *name) {
    const char *c = strrchr(name, ':');
    if (!c) return NULL;
    const char *t = c + 1, *e = t + strlen(t);
    while (*t == ' ' || *t == '\t') t++;
    while (e > t && (e[-1] == ' ' || e[-1] == '\t')) e--;
    size_t n = (size_t)(e - t);
    if ((n == 5 && strncasecmp(t, "local", 5) == 0) || (n == 5 && strncasecmp(t, "cloud", 5) == 0)) return c;
    if (n >= 6 && strncasecmp(e - 6, "-cloud", 6) == 0 && !memchr(t, '/', n)) return e - 6;
    return NULL;
}

sn_status sn_ollama_check_name(const char *name, sn_err *err) {
    const char *sfx = source_suffix(name);
    if (sfx)
        return sn_err_set(err, SN_EINVAL,
                          "invalid model name '%s': Ollama reads the tag suffix '%s' as a model source "
                          "(':local', ':cloud' and '-cloud' select local or ollama.com models; "
                          "internal/modelref): the model would be created under the literal name, but "
                          "show and generate would look for '%.*s' instead (404) or go to the cloud. "
                          "Choose another tag",
                          name, sfx, (int)(sfx - name), name);
    const char *colon = NULL;
    const char *last_slash = strrchr(name, '/');
    const char *c = strrchr(name, ':');
    if (c && (!last_slash || c > last_slash)) colon = c;
    const char *model_end = colon ? colon : name + strlen(name);
    const char *model = last_slash ? last_slash + 1 : name;
    int ok = name_part_ok(model, (size_t)(model_end - model), 80, "._-");
    if (ok && colon) ok = name_part_ok(colon + 1, strlen(colon + 1), 80, "._-");
    if (ok && last_slash) {
        const char *first_slash = strchr(name, '/');
        if (first_slash == last_slash) {
            ok = name_part_ok(name, (size_t)(last_slash - name), 80, "_-");
        } else {
            ok = name_part_ok(name, (size_t)(first_slash - name), 350, "._-:") &&
                 name_part_ok(first_slash + 1, (size_t)(last_slash - first_slash - 1), 80, "_-") &&
                 memchr(first_slash + 1, '/', (size_t)(last_slash - first_slash - 1)) == NULL;
        }
    }
    if (!ok)
        return sn_err_set(err, SN_EINVAL,
                          "invalid model name '%s': Ollama names are [host/][namespace/]model[:tag]; "
                          "each part starts with a letter, digit or '_' and continues with letters, "
                          "digits, '_', '-', '.' (no '.' in the namespace), at most 80 characters",
                          name);
    return SN_OK;
}

void sn_ollama_default_name(const char *stem, const char *quant, char *out, size_t cap) {
    char model[81], tag[81];
    size_t k = 0;
    for (const char *c = stem; *c && k < 80; c++) {
        char ch = (char)tolower((unsigned char)*c);
        if (!isalnum((unsigned char)ch) && ch != '_' && ch != '-' && ch != '.') ch = '-';
        if (k == 0 && !isalnum((unsigned char)ch) && ch != '_') continue; /* a part starts with [a-z0-9_] */
        model[k++] = ch;
    }
    model[k] = 0;
    k = 0;
    for (const char *c = quant; *c && k < 80; c++) tag[k++] = (char)tolower((unsigned char)*c);
    tag[k] = 0;
    snprintf(out, cap, "%s:%s", model[0] ? model : "sunny-model",
             tag[0] && strcmp(tag, "unknown") != 0 ? tag : "latest");
    sn_err e = {0};
    if (sn_ollama_check_name(out, &e) != SN_OK) snprintf(out, cap, "sunny-model:latest");
}

static const char *base_name(const char *p) {
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

char *sn_ollama_create_body(const sn_ollama_model_spec *m, const char *digest) {
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddStringToObject(j, "model", m->name);
    cJSON *files = cJSON_AddObjectToObject(j, "files");
    if (m->n_parts > 1) {
        for (size_t i = 0; i < m->n_parts; i++)
            cJSON_AddStringToObject(files, base_name(m->part_paths[i]), m->part_digests[i]);
        goto files_done;
    }
    char key[512];
    snprintf(key, sizeof key, "%s", base_name(m->gguf_path));
    size_t kl = strlen(key);
    if (kl < 5 || strcmp(key + kl - 5, ".gguf") != 0) /* the server detects type by suffix first */
        snprintf(key + kl, sizeof key - kl, ".gguf");
    cJSON_AddStringToObject(files, key, digest);
files_done:
    if (m->template_text) cJSON_AddStringToObject(j, "template", m->template_text);
    if (m->system) cJSON_AddStringToObject(j, "system", m->system);
    if (m->parameters && cJSON_GetArraySize(m->parameters) > 0)
        cJSON_AddItemToObject(j, "parameters", cJSON_Duplicate(m->parameters, 1));
    if (m->license) {
        cJSON *l = cJSON_AddArrayToObject(j, "license");
        cJSON_AddItemToArray(l, cJSON_CreateString(m->license));
    }
    cJSON_AddBoolToObject(j, "stream", 1);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

/* Ollama's Modelfile reader (parser/parser.go, ParseFile) decodes the file as UTF-8 (ill-formed
 * bytes become U+FFFD) and keeps only the runes strconv.IsPrint accepts, plus tab, CR and LF inside a
 * value. A value ends at the first CR or LF (never at a space or tab) at which
 * unquote(strings.TrimSpace(text so far)) succeeds: text not starting with a quote, or """...""" (6+
 * bytes), or "..." (2+ bytes, and not starting with """). So sunny refuses what no spelling keeps
 * (a rune that would be dropped, ill-formed UTF-8) and otherwise tries bare, then "..." and
 * """...""", keeping the first one the reader gives back unchanged: a spelling fails when TrimSpace
 * or unquote alters the whole value (leading/trailing whitespace, a leading quote), or when a line
 * inside it already completes it. */

/* parser.go's unquote(strings.TrimSpace(s[0..n))) for ASCII whitespace (the only kind mf_quote lets
 * through): 1 and the inner text in *b..*e when complete, 0 when the reader would read on. */
static int mf_unquote(const char *s, size_t n, const char **b, const char **e) {
#define MF_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r')
    while (n && MF_WS(*s)) s++, n--;
    while (n && MF_WS(s[n - 1])) n--;
#undef MF_WS
    size_t q = n >= 3 && !memcmp(s, "\"\"\"", 3) ? 3 : n >= 1 && s[0] == '"' ? 1 : 0;
    if (q && (n < 2 * q || memcmp(s + n - q, "\"\"\"", q))) return 0;
    *b = s + q;
    *e = s + n - q;
    return 1;
}

/* Does Ollama read q + v + q + "\n" back as exactly v? */
static int mf_spelling_ok(const char *v, size_t n, const char *q, char *buf) {
    size_t ql = strlen(q);
    const char *b, *e;
    memcpy(buf, q, ql);
    memcpy(buf + ql, v, n);
    memcpy(buf + ql + n, q, ql);
    for (size_t i = 0; i < n; i++) /* a CR/LF inside v where the text so far is already complete */
        if ((v[i] == '\n' || v[i] == '\r') && mf_unquote(buf, ql + i, &b, &e)) return 0;
    return mf_unquote(buf, n + 2 * ql, &b, &e) && (size_t)(e - b) == n && !memcmp(b, v, n);
}

static sn_status mf_quote(const char *what, const char *v, char **out, sn_err *err) {
    const unsigned char *s = (const unsigned char *)v;
    size_t n = strlen(v);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = sn_utf8_decode(s + i, n - i, &cp);
        if (!l)
            return sn_err_set(err, SN_EINVAL,
                              "%s is not valid UTF-8 at byte %zu, which Ollama's Modelfile parser turns "
                              "into U+FFFD; install through the API instead of --modelfile-out",
                              what, i);
        if (cp != '\t' && cp != '\n' && cp != '\r' && !sn_utf8_go_printable(cp))
            return sn_err_set(err, SN_EINVAL,
                              "%s contains the non-printable character U+%04X at byte %zu, which Ollama's "
                              "Modelfile parser silently drops; install through the API instead of "
                              "--modelfile-out",
                              what, (unsigned)cp, i);
        i += l;
    }
    if (n > SIZE_MAX - 7) return sn_err_set(err, SN_ENOMEM, "out of memory");
    *out = malloc(n + 7);
    if (!*out) return sn_err_set(err, SN_ENOMEM, "out of memory");
    /* Ollama's own writer (quote() in parser.go) picks """ for text with a quote in it, else " */
    const char *spellings[] = {"", "\"", "\"\"\""};
    if (strchr(v, '"')) spellings[1] = "\"\"\"", spellings[2] = "\"";
    for (size_t k = 0; k < 3; k++) {
        if (mf_spelling_ok(v, n, spellings[k], *out)) {
            (*out)[n + 2 * strlen(spellings[k])] = 0;
            return SN_OK;
        }
    }
    free(*out);
    *out = NULL;
    return sn_err_set(err, SN_EINVAL,
                      "%s cannot be written so Ollama's Modelfile parser reads it back unchanged (a line "
                      "in it ends with \" or \"\"\" where quoting is needed); install through the API "
                      "(the text is sent as JSON there) or change the text",
                      what);
}

typedef struct sbuf { char *p; size_t n, cap; int oom; } sbuf;
static void sb_add(sbuf *b, const char *s) {
    size_t l = strlen(s);
    if (b->oom) return;
    if (b->n + l + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < b->n + l + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) { b->oom = 1; return; }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

static sn_status mf_line(sbuf *b, const char *cmd, const char *what, const char *v, sn_err *err) {
    char *q;
    sn_status st = mf_quote(what, v, &q, err);
    if (st) return st;
    sb_add(b, cmd);
    sb_add(b, " ");
    sb_add(b, q);
    sb_add(b, "\n");
    free(q);
    return SN_OK;
}

char *sn_ollama_modelfile(const sn_ollama_model_spec *m, const char *from, sn_err *err) {
    sbuf b = {0};
    sn_status st = SN_OK;
    if (strchr(from, '\n')) {
        sn_err_set(err, SN_EINVAL, "FROM path contains a newline");
        return NULL;
    }
    sb_add(&b, "FROM ");
    sb_add(&b, from);
    sb_add(&b, "\n");
    if (m->template_text) st = mf_line(&b, "TEMPLATE", "the template", m->template_text, err);
    if (!st && m->system) st = mf_line(&b, "SYSTEM", "the system prompt", m->system, err);
    const cJSON *it;
    if (!st && m->parameters) {
        cJSON_ArrayForEach(it, m->parameters) {
            char what[160];
            snprintf(what, sizeof what, "parameter %s", it->string);
            char cmd[160];
            snprintf(cmd, sizeof cmd, "PARAMETER %s", it->string);
            if (cJSON_IsArray(it)) {
                const cJSON *s;
                cJSON_ArrayForEach(s, it) {
                    if (!st && cJSON_IsString(s)) st = mf_line(&b, cmd, what, s->valuestring, err);
                }
            } else if (cJSON_IsBool(it)) {
                if (!st) st = mf_line(&b, cmd, what, cJSON_IsTrue(it) ? "true" : "false", err);
            } else if (cJSON_IsNumber(it)) {
                char num[64];
                double d = it->valuedouble;
                if (d == (double)(long long)d && d < 1e15 && d > -1e15) snprintf(num, sizeof num, "%lld", (long long)d);
                else snprintf(num, sizeof num, "%.9g", d);
                if (!st) st = mf_line(&b, cmd, what, num, err);
            }
            if (st) break;
        }
    }
    if (!st && m->license) st = mf_line(&b, "LICENSE", "the license", m->license, err);
    if (!st && b.oom) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    if (st) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

char *sn_ollama_create_body_legacy(const sn_ollama_model_spec *m, const char *digest, sn_err *err) {
    char from[128];
    snprintf(from, sizeof from, "@%s", digest);
    char *mf = sn_ollama_modelfile(m, from, err);
    if (!mf) return NULL;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", m->name);
    cJSON_AddStringToObject(j, "name", m->name); /* <= 0.1.x servers read "name" */
    cJSON_AddStringToObject(j, "modelfile", mf);
    cJSON_AddBoolToObject(j, "stream", 1);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    free(mf);
    return s;
}

int sn_ollama_go_unquote(const char *s, size_t n, char *out, size_t cap) {
    if (n < 2 || s[0] != '"' || s[n - 1] != '"' || cap == 0) return 0;
    size_t o = 0;
    const char *p = s + 1, *e = s + n - 1;
#define PUT(c) do { if (o + 1 < cap) out[o++] = (char)(c); } while (0)
    while (p < e) {
        if (*p != '\\') { PUT(*p++); continue; }
        if (++p >= e) return 0;
        char c = *p++;
        switch (c) {
        case 'a': PUT('\a'); break;
        case 'b': PUT('\b'); break;
        case 'f': PUT('\f'); break;
        case 'n': PUT('\n'); break;
        case 'r': PUT('\r'); break;
        case 't': PUT('\t'); break;
        case 'v': PUT('\v'); break;
        case '\\': PUT('\\'); break;
        case '"': PUT('"'); break;
        case '\'': PUT('\''); break;
        case 'x': case 'u': case 'U': {
            int len = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            if (e - p < len) return 0;
            unsigned long cp = 0;
            for (int i = 0; i < len; i++) {
                int d = isdigit((unsigned char)p[i]) ? p[i] - '0' : (tolower((unsigned char)p[i]) >= 'a' && tolower((unsigned char)p[i]) <= 'f') ? tolower((unsigned char)p[i]) - 'a' + 10 : -1;
                if (d < 0) return 0;
                cp = cp * 16 + (unsigned long)d;
            }
            p += len;
            if (c == 'x') { PUT(cp); break; }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return 0; /* Go: not a valid rune */
            /* UTF-8 encode the rune */
            if (cp < 0x80) PUT(cp);
            else if (cp < 0x800) { PUT(0xC0 | (cp >> 6)); PUT(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) { PUT(0xE0 | (cp >> 12)); PUT(0x80 | ((cp >> 6) & 0x3F)); PUT(0x80 | (cp & 0x3F)); }
            else { PUT(0xF0 | (cp >> 18)); PUT(0x80 | ((cp >> 12) & 0x3F)); PUT(0x80 | ((cp >> 6) & 0x3F)); PUT(0x80 | (cp & 0x3F)); }
            break;
        }
        default:
            if (c >= '0' && c <= '7') { /* \ooo: exactly three octal digits, at most \377 (Go) */
                if (e - p < 2 || p[0] < '0' || p[0] > '7' || p[1] < '0' || p[1] > '7' || c > '3') return 0;
                PUT(((c - '0') << 6) | ((p[0] - '0') << 3) | (p[1] - '0'));
                p += 2;
            } else return 0;
        }
    }
#undef PUT
    out[o] = 0;
    return 1;
}

/* Parses the preformatted "parameters" string of /api/show (`stop    "<|im_end|>"` lines, each value
 * printed with Go's %#v, so control characters come back escaped) and returns 1 if stop value v is
 * listed. */
static int show_has_stop(const char *params, const char *v) {
    if (!params) return 0;
    const char *p = params;
    size_t vl = strlen(v);
    char *buf = malloc(strlen(params) + 1);
    if (!buf) return 0;
    int found = 0;
    while (*p && !found) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 4 && strncmp(p, "stop", 4) == 0 && (p[4] == ' ' || p[4] == '\t')) {
            const char *q = p + 4;
            while (q < p + n && (*q == ' ' || *q == '\t')) q++;
            size_t rest = (size_t)(p + n - q);
            if (sn_ollama_go_unquote(q, rest, buf, strlen(params) + 1)) found = strlen(buf) == vl && memcmp(buf, v, vl) == 0;
            else found = rest == vl && memcmp(q, v, vl) == 0; /* an unquoted value (old servers) */
        }
        p += n;
        if (*p == '\n') p++;
    }
    free(buf);
    return found;
}

sn_ollama_tmpl_sel sn_ollama_selected_template(const cJSON *show, const sn_ollama_model_spec *m) {
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(show, "template");
    const char *t = cJSON_IsString(tmpl) ? tmpl->valuestring : "";
    if (m->template_text && strcmp(t, m->template_text) == 0) return SN_OLLAMA_TMPL_GO;
    if (m->gguf_chat_template && m->gguf_chat_template[0] && strcmp(t, m->gguf_chat_template) == 0)
        return SN_OLLAMA_TMPL_JINJA;
    if (!m->template_text) return SN_OLLAMA_TMPL_SERVER;
    return SN_OLLAMA_TMPL_OTHER;
}

const char *sn_ollama_tmpl_sel_name(sn_ollama_tmpl_sel s) {
    switch (s) {
    case SN_OLLAMA_TMPL_GO: return "go_template";
    case SN_OLLAMA_TMPL_JINJA: return "gguf_chat_template";
    case SN_OLLAMA_TMPL_SERVER: return "server_default";
    default: return "other";
    }
}

sn_status sn_ollama_verify_show(const cJSON *show, const sn_ollama_model_spec *m, const char *arch,
                                char *note, size_t note_cap, sn_err *err) {
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(show, "details");
    const cJSON *family = details ? cJSON_GetObjectItemCaseSensitive(details, "family") : NULL;
    const cJSON *ql = details ? cJSON_GetObjectItemCaseSensitive(details, "quantization_level") : NULL;
    if (arch && cJSON_IsString(family) && strcmp(family->valuestring, arch) != 0)
        return sn_err_set(err, SN_EIO, "/api/show: family is '%s' but the GGUF's architecture is '%s'",
                          family->valuestring, arch);
    if (arch && !cJSON_IsString(family))
        return sn_err_set(err, SN_EIO, "/api/show: no details.family in the answer");
    sn_ollama_tmpl_sel sel = sn_ollama_selected_template(show, m);
    if (sel == SN_OLLAMA_TMPL_OTHER)
        return sn_err_set(err, SN_EIO,
                          "/api/show: the template the server reports is neither the one sent nor the GGUF's "
                          "own chat template");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(show, "parameters");
    const cJSON *stop = m->parameters ? cJSON_GetObjectItemCaseSensitive(m->parameters, "stop") : NULL;
    int n_stop = 0;
    if (cJSON_IsArray(stop)) {
        const cJSON *s;
        cJSON_ArrayForEach(s, stop) {
            if (!cJSON_IsString(s)) continue;
            if (!show_has_stop(cJSON_IsString(params) ? params->valuestring : NULL, s->valuestring))
                return sn_err_set(err, SN_EIO, "/api/show: stop parameter \"%s\" was not stored",
                                  s->valuestring);
            n_stop++;
        }
    }
    static const char *const what[] = {
        [SN_OLLAMA_TMPL_GO] = "the Go TEMPLATE sent",
        [SN_OLLAMA_TMPL_JINJA] = "the GGUF's own Jinja chat template",
        [SN_OLLAMA_TMPL_SERVER] = "the server's own",
        [SN_OLLAMA_TMPL_OTHER] = "?"};
    if (note)
        snprintf(note, note_cap, "family %s, quantization %s, %d stop value(s) stored; chat uses %s%s",
                 cJSON_IsString(family) ? family->valuestring : "?",
                 cJSON_IsString(ql) ? ql->valuestring : "?", n_stop, what[sel],
                 sel == SN_OLLAMA_TMPL_JINJA && m->template_text
                     ? " (Ollama >= 0.30 prefers the Jinja when it exposes more capabilities - tools, thinking - "
                       "than the Go TEMPLATE, or when the server runs with OLLAMA_GO_TEMPLATE=0; the TEMPLATE "
                       "sent is stored but unused)"
                     : "");
    return SN_OK;
}
