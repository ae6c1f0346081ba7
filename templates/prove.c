/* prove.c - proves (or refuses) a family for a model's Jinja by rendering both (see prove.h). */
#include "prove.h"

#include "gotmpl.h"
#include "jinja.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char PROBES[] =
    "[{\"name\": \"user\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello!\"}]},"
    " {\"name\": \"system-user\", \"messages\": [{\"role\": \"system\", \"content\": \"You are a terse assistant.\"},"
    "  {\"role\": \"user\", \"content\": \"What is 2+2?\"}]},"
    " {\"name\": \"multi-turn\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"},"
    "  {\"role\": \"assistant\", \"content\": \"Hello! How can I help?\"}, {\"role\": \"user\", \"content\": \"Tell me a joke.\"}]},"
    " {\"name\": \"system-multi-turn\", \"messages\": [{\"role\": \"system\", \"content\": \"Answer in French.\"},"
    "  {\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Bonjour !\"},"
    "  {\"role\": \"user\", \"content\": \"How are you?\"}, {\"role\": \"assistant\", \"content\": \"Bien.\"},"
    "  {\"role\": \"user\", \"content\": \"Thanks\"}]},"
    " {\"name\": \"unicode\", \"messages\": [{\"role\": \"user\", \"content\": \"Gr\\u00fc\\u00dfe, \\u4e16\\u754c! \\ud83c\\udf0d \\u00e9\"},"
    "  {\"role\": \"assistant\", \"content\": \"\\u041f\\u0440\\u0438\\u0432\\u0435\\u0442 \\u2014 \\u3053\\u3093\\u306b\\u3061\\u306f\"},"
    "  {\"role\": \"user\", \"content\": \"\\u00bfY t\\u00fa?\"}]},"
    " {\"name\": \"template-syntax\", \"messages\": [{\"role\": \"system\", \"content\": \"Keep {{ braces }} and {% tags %} as text.\"},"
    "  {\"role\": \"user\", \"content\": \"Print {{ .Prompt }} and {% if x %}{# y #} literally\"}]},"
    /* content with surrounding white space: a Jinja that trims it (`| trim`, llama3, gemma, the
     * rwkv-world Jinja) cannot be matched by any Go template (Ollama's have no trim function) */
    " {\"name\": \"whitespace\", \"messages\": [{\"role\": \"system\", \"content\": \"\\nBe brief. \"},"
    "  {\"role\": \"user\", \"content\": \" Hi\\n\\n\"}, {\"role\": \"assistant\", \"content\": \"\\tHello. \\n\"},"
    "  {\"role\": \"user\", \"content\": \"\\n\\nWhat now?  \"}]},"
    /* ... and without a system message, for Jinjas that refuse the system role */
    " {\"name\": \"whitespace-no-system\", \"messages\": [{\"role\": \"user\", \"content\": \"\\tHey \"},"
    "  {\"role\": \"assistant\", \"content\": \" Yes?\\n\"}, {\"role\": \"user\", \"content\": \"Go on.\\n\\n\"}]}]";

const char *sn_tmpl_probes_json(void) { return PROBES; }

static void snip(char *dst, size_t cap, const char *s, size_t len, size_t off) {
    size_t b = off > 40 ? off - 40 : 0, e = off + 60 < len ? off + 60 : len, n = 0;
    for (size_t i = b; i < e && n + 5 < cap; i++) {
        char ch = s[i];
        if (ch == '\n') { dst[n++] = '\\'; dst[n++] = 'n'; }
        else if (ch == '\t') { dst[n++] = '\\'; dst[n++] = 't'; }
        else dst[n++] = ch;
    }
    dst[n] = 0;
}

/* Python's str.strip() white space (what Jinja's `trim` and `.strip()` remove), ASCII part. */
static int py_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

/* The role bit of a message for sn_tmpl_proof.trim_roles. */
static unsigned role_bit(const cJSON *m) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "role");
    const char *s = cJSON_IsString(r) ? r->valuestring : "";
    return !strcmp(s, "system") ? SN_TMPL_TRIM_SYSTEM : !strcmp(s, "user") ? SN_TMPL_TRIM_USER
         : !strcmp(s, "assistant") ? SN_TMPL_TRIM_ASSISTANT : SN_TMPL_TRIM_OTHER;
}

/* A copy of MESSAGES with the string content of the roles in ROLES stripped; NULL when no content
 * changes (then there is nothing a trimming Jinja would do differently). */
static cJSON *trimmed_messages(const cJSON *messages, unsigned roles) {
    cJSON *t = cJSON_Duplicate(messages, 1);
    int changed = 0;
    cJSON *m;
    cJSON_ArrayForEach(m, t) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (!cJSON_IsString(c) || !(role_bit(m) & roles)) continue;
        const char *b = c->valuestring, *e = b + strlen(b);
        while (b < e && py_space((unsigned char)*b)) b++;
        while (e > b && py_space((unsigned char)e[-1])) e--;
        if (b == c->valuestring && *e == 0) continue;
        char *n = strndup(b, (size_t)(e - b));
        if (!n) { cJSON_Delete(t); return NULL; }
        cJSON_SetValuestring(c, n);
        free(n);
        changed = 1;
    }
    if (!changed) { cJSON_Delete(t); return NULL; }
    return t;
}

/* vars for the Jinja as apply_chat_template passes them */
static cJSON *jinja_vars(const sn_tmpl_model *m, const cJSON *messages) {
    cJSON *v = cJSON_CreateObject();
    cJSON_AddItemToObject(v, "messages", cJSON_Duplicate(messages, 1));
    cJSON_AddNullToObject(v, "tools");
    cJSON_AddNullToObject(v, "documents");
    cJSON_AddTrueToObject(v, "add_generation_prompt");
    if (m->bos_token) cJSON_AddStringToObject(v, "bos_token", m->bos_token);
    if (m->eos_token) cJSON_AddStringToObject(v, "eos_token", m->eos_token);
    return v;
}

static sn_status render_jinja(const sn_jinja *t, const sn_tmpl_model *m, const cJSON *messages,
                              int64_t now, char **out, sn_err *err) {
    cJSON *v = jinja_vars(m, messages);
    sn_jinja_opts o = {.now = now};
    sn_status st = v ? sn_jinja_render(t, v, &o, out, NULL, err) : SN_ENOMEM;
    cJSON_Delete(v);
    if (st == SN_OK && m->bos_token && *m->bos_token && m->add_bos != 0 &&
        strncmp(*out, m->bos_token, strlen(m->bos_token)) == 0) /* the tokenizer adds this BOS */
        memmove(*out, *out + strlen(m->bos_token), strlen(*out) - strlen(m->bos_token) + 1);
    return st;
}

/* The default system prompt S such that Go(family, [system S] + probe) == Jinja(probe) for the
 * first probe ("user"), read off the two renderings; NULL when there is none to read. */
static char *derive_system(const sn_gotmpl *g, const cJSON *messages, const char *jinja_out) {
    static const char MARK[] = "\x01sunny-system\x01";
    char *go = NULL;
    sn_err e = {0};
    if (sn_gotmpl_render_chat(g, messages, NULL, -1, MARK, &go, &e)) return NULL;
    char *mk = strstr(go, MARK);
    char *res = NULL;
    if (mk) {
        size_t pre = (size_t)(mk - go), suf = strlen(mk + sizeof MARK - 1), jl = strlen(jinja_out);
        if (jl >= pre + suf && strncmp(jinja_out, go, pre) == 0 &&
            strcmp(jinja_out + jl - suf, mk + sizeof MARK - 1) == 0 && jl > pre + suf)
            res = strndup(jinja_out + pre, jl - pre - suf);
    }
    free(go);
    return res;
}

sn_status sn_tmpl_prove(const sn_tmpl_model *m, const sn_tmpl_family *f, int try_system,
                        sn_tmpl_proof *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    sn_jinja *jt = NULL;
    sn_gotmpl *gt = NULL;
    sn_err e = {0};
    cJSON *probes = cJSON_Parse(PROBES);
    if (!probes) return sn_err_set(err, SN_ENOMEM, "template proof: out of memory");
    if (sn_jinja_parse(m->jinja, strlen(m->jinja), &jt, &e)) {
        snprintf(out->reason, sizeof out->reason, "sunny cannot render this Jinja: %s", e.msg);
        goto done;
    }
    if (sn_gotmpl_parse(f->gotmpl, strlen(f->gotmpl), &gt, &e)) {
        snprintf(out->reason, sizeof out->reason, "%s.gotmpl: %s", f->name, e.msg);
        goto done;
    }
    int64_t now = (int64_t)time(NULL);
    const cJSON *p;
    size_t nosys_ok = 0;
    cJSON_ArrayForEach(p, probes) {
        const char *name = cJSON_GetObjectItemCaseSensitive(p, "name")->valuestring;
        const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(p, "messages");
        int has_sys = !strcmp(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(msgs, 0), "role")->valuestring, "system");
        char *jo = NULL, *j2 = NULL, *go = NULL;
        out->n_probes++;
        sn_status st = render_jinja(jt, m, msgs, now, &jo, &e);
        if (st == SN_EUNSUPPORTED) {
            snprintf(out->reason, sizeof out->reason, "sunny cannot render this Jinja on probe '%s': %s", name, e.msg);
            goto done;
        }
        if (st) { /* the Jinja itself refuses this conversation */
            size_t l = strlen(out->skipped);
            snprintf(out->skipped + l, sizeof out->skipped - l, "%s%s (%s)", l ? "; " : "", name, e.msg);
            out->n_skipped++;
            continue;
        }
        /* the same probe one day later: a date in the prompt means no fixed template can match */
        if (render_jinja(jt, m, msgs, now + 86400 * 40, &j2, &e) == SN_OK && strcmp(jo, j2) != 0) {
            snprintf(out->reason, sizeof out->reason, "the Jinja writes today's date (strftime_now): its "
                     "prompt changes from day to day, which no fixed Go template reproduces");
            free(jo); free(j2);
            goto done;
        }
        free(j2);
        if (out->n_probes == 1 && try_system && !out->system) {
            char *g0 = NULL;
            if (sn_gotmpl_render_chat(gt, msgs, NULL, -1, NULL, &g0, &e) == SN_OK && strcmp(g0, jo) != 0)
                out->system = derive_system(gt, msgs, jo);
            free(g0);
        }
        st = sn_gotmpl_render_chat(gt, msgs, NULL, -1, out->system, &go, &e);
        if (st) {
            snprintf(out->reason, sizeof out->reason, "%s.gotmpl fails on probe '%s': %s", f->name, name, e.msg);
            free(jo);
            goto done;
        }
        int same = strcmp(jo, go) == 0;
        /* the Jinja strips the content of some roles: the Go side, given that content stripped,
         * must render the same (the roles found on the first such probe hold for all of them) */
        for (unsigned roles = out->trim_roles ? out->trim_roles : 1; !same && roles < 16;
             roles = out->trim_roles ? 16 : roles + 1) {
            cJSON *tm = trimmed_messages(msgs, roles);
            char *gt_out = NULL;
            if (tm && sn_gotmpl_render_chat(gt, tm, NULL, -1, out->system, &gt_out, &e) == SN_OK &&
                strcmp(jo, gt_out) == 0) {
                same = 1;
                out->n_trimmed++;
                out->trim_roles = roles;
                if (!out->trim_probe[0]) snprintf(out->trim_probe, sizeof out->trim_probe, "%s", name);
            }
            free(gt_out);
            cJSON_Delete(tm);
        }
        if (same) {
            out->n_same++;
            nosys_ok += !has_sys;
        } else if (!out->probe[0]) {
            size_t i = 0;
            while (jo[i] && jo[i] == go[i]) i++;
            snprintf(out->probe, sizeof out->probe, "%s", name);
            out->offset = i;
            snip(out->jinja_snip, sizeof out->jinja_snip, jo, strlen(jo), i);
            snip(out->go_snip, sizeof out->go_snip, go, strlen(go), i);
            snprintf(out->reason, sizeof out->reason,
                     "%s%s renders differently from the model's Jinja on probe '%s' at byte %zu: "
                     "Jinja \"%s\" vs %s \"%s\"", f->name, out->system ? " (with the derived default "
                     "system prompt)" : "", name, i, out->jinja_snip, f->name, out->go_snip);
        }
        free(jo);
        free(go);
    }
    if (out->n_same + out->n_skipped == out->n_probes && nosys_ok > 0) out->identical = 1;
    else if (!out->reason[0])
        snprintf(out->reason, sizeof out->reason, "the Jinja refuses every probe: %s", out->skipped);
done:
    sn_jinja_free(jt);
    sn_gotmpl_free(gt);
    cJSON_Delete(probes);
    if (!out->identical && out->system) { free(out->system); out->system = NULL; }
    return SN_OK;
}

void sn_tmpl_proof_free(sn_tmpl_proof *p) {
    if (!p) return;
    free(p->system);
    p->system = NULL;
}

sn_status sn_tmpl_choose(const sn_tmpl_set *set, const sn_tmpl_model *m, const sn_tmpl_family *hint,
                        sn_tmpl_claim *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    size_t n = sn_tmpl_count(set);
    for (int pass = 0; pass < 2; pass++) { /* without, then with a derived default system prompt */
        for (size_t i = 0; i <= n; i++) {
            const sn_tmpl_family *f = i == 0 ? hint : sn_tmpl_at(set, i - 1);
            if (!f || (i > 0 && f == hint)) continue;
            sn_tmpl_proof pr;
            sn_status st = sn_tmpl_prove(m, f, pass, &pr, err);
            if (st) return st;
            if (pr.identical && !pr.n_trimmed) { /* exact on every probe: claim it */
                sn_tmpl_proof_free(&out->proof);
                out->family = f;
                out->proof = pr;
                return SN_OK;
            }
            if (pr.identical && !out->family) { /* equal only on trimmed content: keep looking */
                sn_tmpl_proof_free(&out->proof);
                out->family = f;
                out->proof = pr;
                continue;
            }
            if (pr.identical) { sn_tmpl_proof_free(&pr); continue; }
            if (out->family) { sn_tmpl_proof_free(&pr); continue; }
            if (i == 0 && pass == 0) out->proof = pr; /* the hint's difference is the one to report */
            else if (!out->proof.reason[0] && i == 1 && !hint) out->proof = pr;
            else sn_tmpl_proof_free(&pr);
        }
    }
    return SN_OK;
}

const char *sn_tmpl_trim_roles_name(unsigned roles) {
    static const char *const names[16] = {
        "no", "system", "user", "system and user", "assistant", "system and assistant",
        "user and assistant", "system, user and assistant", "tool", "system and tool", "user and tool",
        "system, user and tool", "assistant and tool", "system, assistant and tool",
        "user, assistant and tool", "every message's"};
    return names[roles & 15];
}
