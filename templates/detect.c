/* detect.c - structural Jinja chat_template -> template family matcher (see detect.h).
 *
 * The Jinja is never executed: we look for the literal strings and idioms that decide the prompt
 * layout. A family qualifies when all its required markers occur, none of its forbidden ones do,
 * the BOS placement and system handling are among those it allows, and its Go template produces
 * the Jinja's generation prompt. The most specific qualifying family (most required markers) wins. */
#include "detect.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **v;
    size_t n, cap;
    int oom;
} strlist;

static void add_line(strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(strlist *l, const char *fmt, ...) {
    if (l->oom) return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) { l->oom = 1; return; }
        l->v = nv;
        l->cap = nc;
    }
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&l->v[l->n], fmt, ap);
    va_end(ap);
    if (r < 0) { l->oom = 1; return; }
    l->n++;
}

static int has(const char *j, const char *s) { return strstr(j, s) != NULL; }

/* Like has(), but "ROLE" in MARKER stands for a role expression written generically, e.g.
 * "<|im_start|>ROLE" matches '<|im_start|>' + message['role'] and <|im_start|>{{ message.role }}. */
static int has_marker(const char *j, const char *marker) {
    const char *r = strstr(marker, "ROLE");
    if (!r) return has(j, marker);
    size_t plen = (size_t)(r - marker);
    static const char *exprs[] = {"message['role']", "message[\"role\"]", "message.role", "role"};
    char prefix[128];
    if (plen == 0 || plen >= sizeof prefix) return 0;
    memcpy(prefix, marker, plen);
    prefix[plen] = 0;
    for (const char *p = strstr(j, prefix); p; p = strstr(p + 1, prefix)) {
        const char *q = p + plen;
        while (*q && strchr(" '\"+{}-", *q)) q++;
        for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++)
            if (strncmp(q, exprs[i], strlen(exprs[i])) == 0) return 1;
    }
    return 0;
}

/* Reads the quoted Jinja string literal starting at *p (a ' or "), unescaping \n \t \\ \' \".
 * Returns a malloc'd string or NULL. */
static char *read_literal(const char *p, const char **end) {
    char q = *p++;
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    for (; *p && *p != q; p++) {
        char c = *p;
        if (c == '\\' && p[1]) {
            p++;
            c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p;
        }
        if (n + 2 > cap) {
            char *ns = realloc(s, cap *= 2);
            if (!ns) { free(s); return NULL; }
            s = ns;
        }
        s[n++] = c;
    }
    s[n] = 0;
    if (end) *end = *p ? p + 1 : p;
    return s;
}

/* First string literal at or after P (NULL if none). */
static char *next_literal(const char *p) {
    for (; *p; p++)
        if (*p == '\'' || *p == '"') return read_literal(p, NULL);
    return NULL;
}

/* The keyword of the {% ... %} tag starting at P ("for", "endfor", ...), copied into KW. */
static void tag_keyword(const char *p, char *kw, size_t cap) {
    const char *q = p + 2;
    while (*q == '-' || *q == '+' || *q == ' ' || *q == '\n' || *q == '\t') q++;
    size_t n = 0;
    while (n + 1 < cap && ((*q >= 'a' && *q <= 'z') || *q == '_')) kw[n++] = *q++;
    kw[n] = 0;
}

static const char *bos_kind(const char *j) {
    const char *b = strstr(j, "bos_token");
    if (!b) return "none";
    int depth = 0;
    const char *loop_start = NULL;
    for (const char *p = strstr(j, "{%"); p && p < b; p = strstr(p + 2, "{%")) {
        char kw[16];
        tag_keyword(p, kw, sizeof kw);
        if (strcmp(kw, "for") == 0 && depth++ == 0) loop_start = p;
        else if (strcmp(kw, "endfor") == 0 && depth > 0) depth--;
    }
    if (depth == 0) return "start";
    /* inside the message loop but guarded by "if loop.index0 == 0" / "if loop.first" just before */
    const char *from = b - loop_start > 80 ? b - 80 : loop_start;
    for (const char *g = from; g < b; g++) {
        if (strncmp(g, "loop.index0 == 0 %}", 19) == 0 || strncmp(g, "loop.index0 == 0 -%}", 20) == 0 ||
            strncmp(g, "loop.first %}", 13) == 0 || strncmp(g, "loop.first -%}", 14) == 0)
            return "start";
    }
    return "per-turn";
}

/* Does any raise_exception('...') refuse system messages? */
static int rejects_system(const char *j) {
    for (const char *p = strstr(j, "raise_exception("); p; p = strstr(p + 1, "raise_exception(")) {
        char *msg = next_literal(p + 16);
        if (!msg) continue;
        int r = (strstr(msg, "ystem") && (strstr(msg, "not supported") || strstr(msg, "not allowed"))) ||
                strcmp(msg, "Only user and assistant roles are supported!") == 0;
        free(msg);
        if (r) return 1;
    }
    return 0;
}

static const char *system_kind(const char *j) {
    if (rejects_system(j)) return "reject";
    if (has(j, "<<SYS>>") || has(j, "first_user_prefix") || has(j, "loop.first and system_message") ||
        has(j, "loop.index0 == 0 and system_message"))
        return "first-user";
    if (has(j, "loop.last and system_message")) return "last-user";
    return "turn";
}

static char *generation_prompt(const char *j) {
    const char *last = NULL;
    for (const char *p = strstr(j, "add_generation_prompt"); p; p = strstr(p + 1, "add_generation_prompt"))
        last = p;
    return last ? next_literal(last + 21) : NULL;
}

/* A template that only concatenates message contents: no text outside tags, and every string
 * literal is a role name or key. */
static int is_raw(const char *j) {
    static const char *ok[] = {"system", "user", "assistant", "role", "content"};
    if (!has(j, "content")) return 0;
    const char *p = j;
    while (*p) {
        if (p[0] == '{' && (p[1] == '{' || p[1] == '%' || p[1] == '#')) {
            char close[3] = {p[1] == '{' ? '}' : p[1], '}', 0};
            const char *e = strstr(p + 2, close);
            if (!e) return 0;
            for (const char *q = p + 2; q < e; q++) {
                if (*q != '\'' && *q != '"') continue;
                const char *after;
                char *lit = read_literal(q, &after);
                if (!lit) return 0;
                int good = 0;
                for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) good |= strcmp(lit, ok[i]) == 0;
                free(lit);
                if (!good) return 0;
                q = after - 1;
            }
            p = e + 2;
        } else {
            if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r') return 0;
            p++;
        }
    }
    return 1;
}

static int in_list(char **v, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0) return 1;
    return 0;
}

typedef struct {
    int system_turn_ok;    /* system written as a turn with one of the family's system markers */
    size_t matched;        /* required markers present */
    size_t matched_text;   /* ... of which literal text, not just Jinja variable names */
    const char *forbidden; /* first forbidden marker present */
    const char *missing;   /* first required marker absent */
    int bos_ok, system_ok, gen_ok;
} candidate;

static candidate check(const sn_tmpl_family *f, const char *j, const char *bos, const char *sys,
                       const char *gen) {
    candidate c = {0};
    for (size_t i = 0; i < f->n_require; i++) {
        if (has_marker(j, f->require[i])) {
            c.matched++;
            c.matched_text += strspn(f->require[i], "abcdefghijklmnopqrstuvwxyz_.") != strlen(f->require[i]);
        } else if (!c.missing) {
            c.missing = f->require[i];
        }
    }
    for (size_t i = 0; i < f->n_forbid && !c.forbidden; i++)
        if (has_marker(j, f->forbid[i])) c.forbidden = f->forbid[i];
    c.bos_ok = in_list(f->bos, f->n_bos, bos);
    c.system_turn_ok = strcmp(sys, "turn") != 0 || f->n_system_any == 0;
    for (size_t i = 0; i < f->n_system_any && !c.system_turn_ok; i++)
        c.system_turn_ok = has_marker(j, f->system_any[i]);
    c.system_ok = in_list(f->system, f->n_system, sys) && c.system_turn_ok;
    c.gen_ok = !gen || has(f->gotmpl, gen);
    return c;
}

static int qualifies(const sn_tmpl_family *f, const candidate *c) {
    return !f->raw && f->n_require > 0 && c->matched == f->n_require && !c->forbidden && c->bos_ok &&
           c->system_ok && c->gen_ok;
}

/* Printable form of a literal for evidence lines (newlines shown as \n). */
static void quote_into(char *dst, size_t cap, const char *s) {
    size_t n = 0;
    for (; *s && n + 3 < cap; s++) {
        if (*s == '\n') { dst[n++] = '\\'; dst[n++] = 'n'; }
        else dst[n++] = *s;
    }
    dst[n] = 0;
}

sn_status sn_tmpl_detect(const sn_tmpl_set *set, const char *j, sn_tmpl_detection *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    strlist ev = {0};
    out->bos = bos_kind(j);
    out->system = system_kind(j);
    out->generation_prompt = generation_prompt(j);
    char genq[256] = "";
    if (out->generation_prompt) quote_into(genq, sizeof genq, out->generation_prompt);

    const sn_tmpl_family *best = NULL, *near = NULL;
    candidate bc = {0}, nc = {0};
    double near_score = -1;
    int ties = 0;
    for (size_t i = 0; i < sn_tmpl_count(set); i++) {
        const sn_tmpl_family *f = sn_tmpl_at(set, i);
        candidate c = check(f, j, out->bos, out->system, out->generation_prompt);
        if (qualifies(f, &c)) {
            if (!best || f->n_require > best->n_require) { best = f; bc = c; ties = 0; }
            else if (f->n_require == best->n_require) ties++;
        }
        if (f->n_require && c.matched_text > 0) {
            double s = (double)c.matched / (double)f->n_require - (c.forbidden ? 0.3 : 0) +
                       0.01 * (double)f->n_require + 0.1 * (c.bos_ok + c.system_ok + c.gen_ok);
            if (s > near_score) { near_score = s; near = f; nc = c; }
        }
    }
    if (!best && is_raw(j)) {
        for (size_t i = 0; i < sn_tmpl_count(set); i++)
            if (sn_tmpl_at(set, i)->raw) best = sn_tmpl_at(set, i);
        if (best) {
            add_line(&ev, "template only concatenates message contents (no markers, no literal text)");
            bc = (candidate){.system_turn_ok = 1, .bos_ok = 1, .system_ok = 1, .gen_ok = 1};
        }
    }

    const sn_tmpl_family *f = best ? best : near;
    candidate c = best ? bc : nc;
    if (f && !f->raw) {
        char found[512] = "";
        size_t len = 0;
        for (size_t i = 0; i < f->n_require; i++) {
            if (!has_marker(j, f->require[i])) continue;
            int w = snprintf(found + len, sizeof found - len, "%s%s", len ? ", " : "", f->require[i]);
            if (w < 0 || (size_t)w >= sizeof found - len) break;
            len += (size_t)w;
        }
        add_line(&ev, "%s markers present (%zu/%zu): %s", f->name, c.matched, f->n_require, found);
        if (c.missing) add_line(&ev, "%s marker missing: %s", f->name, c.missing);
        if (c.forbidden) add_line(&ev, "marker %s rules out %s", c.forbidden, f->name);
    }
    add_line(&ev, "BOS: %s", !strcmp(out->bos, "none") ? "not written by the template"
                             : !strcmp(out->bos, "start") ? "bos_token once at the start"
                                                          : "bos_token before every user turn");
    if (f && f->add_bos && strcmp(out->bos, "none"))
        add_line(&ev, "BOS: the tokenizer adds the leading BOS, so the Go template omits it");
    add_line(&ev, "system message: %s",
             !strcmp(out->system, "reject") ? "rejected with raise_exception (ours folds it into the first user turn)"
             : !strcmp(out->system, "first-user") ? "folded into the first user turn"
             : !strcmp(out->system, "last-user") ? "folded into the last user turn"
                                                 : "rendered as its own turn");
    if (f && !c.bos_ok) add_line(&ev, "BOS placement '%s' does not fit %s", out->bos, f->name);
    if (f && !c.system_turn_ok)
        add_line(&ev, "a system message is not written as a %s system turn (none of: %s%s)", f->name,
                 f->system_any[0], f->n_system_any > 1 ? ", ..." : "");
    else if (f && !c.system_ok)
        add_line(&ev, "system handling '%s' does not fit %s", out->system, f->name);
    if (out->generation_prompt) {
        add_line(&ev, "generation prompt: \"%s\"%s", genq,
                 f && c.gen_ok ? " (produced by the Go template)" : "");
        if (f && !c.gen_ok) add_line(&ev, "the %s Go template does not produce that generation prompt", f->name);
    } else {
        add_line(&ev, "no add_generation_prompt branch (prompt ends with the template's last literal)");
    }
    int unexpressed = 0;
    if (has(j, "must alternate")) {
        add_line(&ev, "Jinja raises unless roles alternate; Ollama merges consecutive same-role messages instead");
        unexpressed++;
    }
    if (has(j, "|trim") || has(j, "| trim") || has(j, ".strip()")) {
        add_line(&ev, "Jinja trims message content; Go templates cannot (content with surrounding whitespace differs)");
        unexpressed++;
    }
    if (has(j, "tools")) {
        add_line(&ev, "Jinja has a tool-calling branch; the Go template renders no tools");
        unexpressed++;
    }
    if (has(j, "strftime_now")) {
        add_line(&ev, "Jinja writes today's date (strftime_now); a Go template can only write a fixed date");
        unexpressed++;
    }
    if (has(j, "enable_thinking")) add_line(&ev, "thinking toggle: enable_thinking=false maps to Ollama think=false");
    if (has(j, "</think>") && has(j, "split")) {
        add_line(&ev, "Jinja strips <think> reasoning from past assistant turns");
        unexpressed++;
    }
    if (ties) add_line(&ev, "%d other family(ies) matched equally; picked %s", ties, best->name);

    out->evidence = ev.v;
    out->n_evidence = ev.n;
    if (ev.oom) {
        sn_tmpl_detection_free(out);
        return sn_err_set(err, SN_ENOMEM, "template detection: out of memory");
    }
    if (best) {
        double conf = 1.0 - 0.05 * unexpressed - 0.2 * ties;
        out->family = best;
        out->nearest = best;
        out->confidence = conf < 0.5 ? 0.5 : conf;
        return SN_OK;
    }
    out->nearest = near && nc.matched > 0 ? near : NULL;
    if (!out->nearest)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "chat template not recognised: it uses none of the markers of sunny's %zu "
                          "families; write an Ollama Go template for it and pass --template FILE",
                          sn_tmpl_count(set));
    const char *why = nc.forbidden ? "it also contains " : nc.missing ? "it lacks " : "";
    const char *what = nc.forbidden ? nc.forbidden : nc.missing ? nc.missing : "";
    if (!*why) {
        why = !nc.bos_ok ? "BOS placement is " : !nc.system_turn_ok ? "a system message is not written as "
              : !nc.system_ok ? "system handling is " : "generation prompt is ";
        what = !nc.bos_ok ? out->bos : !nc.system_turn_ok ? "a system turn" : !nc.system_ok ? out->system : genq;
    }
    return sn_err_set(err, SN_EUNSUPPORTED,
                      "chat template not recognised: nearest family is %s (%zu/%zu markers), but %s%s; "
                      "write an Ollama Go template for it (sunny's %s.gotmpl is a starting point) and "
                      "pass --template FILE",
                      near->name, nc.matched, near->n_require, why, what, near->name);
}

void sn_tmpl_detection_free(sn_tmpl_detection *d) {
    if (!d) return;
    for (size_t i = 0; i < d->n_evidence; i++) free(d->evidence[i]);
    free(d->evidence);
    free(d->generation_prompt);
    memset(d, 0, sizeof *d);
}
