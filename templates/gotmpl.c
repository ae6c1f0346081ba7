/* gotmpl.c - a Go text/template subset (see gotmpl.h): parser and executor. Values are nil, bool,
 * int, string, list and map (a map flagged as a struct errors on a missing field, as Go does for
 * Ollama's api.Message; the top-level data is a map[string]any, so a missing key there prints
 * "<no value>" like missingkey=zero on an interface). Everything lives in one arena per parse /
 * render (jinja_int.h's ja_*), errors longjmp out. Ollama's Execute rules are in gotmpl_ollama.c. */
#include "budget.h"
#include "gotmpl_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void gt_fail(gtctx *c, sn_status code, int line, const char *fmt, ...) {
    char lead[40];
    snprintf(lead, sizeof lead, "Go template line %d: ", line);
    va_list ap;
    va_start(ap, fmt);
    ja_verr(c->err, code, lead, "", fmt, ap);
    va_end(ap);
    longjmp(c->fail, 1);
}

void *gt_alloc(gtctx *c, size_t n) {
    void *p = ja_alloc(c->a, n);
    if (!p) {
        char m[160];
        ja_oom_msg(c->a, m, sizeof m);
        gt_fail(c, SN_EUNSUPPORTED, 0, "%s", m);
    }
    return p;
}

static char *gt_strndup(gtctx *c, const char *s, size_t n) {
    char *r = gt_alloc(c, n + 1);
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

/* ---- lexing of one action's text ---- */
typedef struct { const char *p, *end; int line; gtctx *c; } alex;

static int is_sp(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }
static int is_idc(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'; }

static void skip_sp(alex *L) { while (L->p < L->end && is_sp(*L->p)) L->p++; }
static int at(alex *L, const char *s) {
    skip_sp(L);
    size_t n = strlen(s);
    return (size_t)(L->end - L->p) >= n && memcmp(L->p, s, n) == 0 && (!is_idc(s[n - 1]) || L->p + n == L->end || !is_idc(L->p[n]));
}
static int eat(alex *L, const char *s) { if (at(L, s)) { L->p += strlen(s); return 1; } return 0; }

static const char **field_chain(alex *L, size_t *nf) { /* .A.B after a term */
    const char **f = NULL;
    size_t n = 0, cap = 0;
    while (L->p < L->end && *L->p == '.' && L->p + 1 < L->end && is_idc(L->p[1])) {
        const char *s = ++L->p;
        while (L->p < L->end && is_idc(*L->p)) L->p++;
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            const char **nfv = gt_alloc(L->c, cap * sizeof *nfv);
            if (n) memcpy(nfv, f, n * sizeof *nfv);
            f = nfv;
        }
        f[n++] = gt_strndup(L->c, s, (size_t)(L->p - s));
    }
    *nf = n;
    return f;
}

static gpipe *parse_pipe(alex *L, int allow_decl);

static int parse_arg(alex *L, garg *a) {
    skip_sp(L);
    memset(a, 0, sizeof *a);
    if (L->p >= L->end || *L->p == '|' || *L->p == ')') return 0;
    char ch = *L->p;
    if (ch == '(') {
        L->p++;
        a->k = A_PIPE;
        a->pipe = parse_pipe(L, 0);
        skip_sp(L);
        if (L->p >= L->end || *L->p != ')') gt_fail(L->c, SN_JINJA_RAISED_GO, L->line, "unclosed left paren");
        L->p++;
        a->fields = field_chain(L, &a->nf);
    } else if (ch == '.') {
        if (L->p + 1 < L->end && is_idc(L->p[1])) { a->k = A_FIELD; a->fields = field_chain(L, &a->nf); }
        else { L->p++; a->k = A_DOT; }
    } else if (ch == '$') {
        const char *s = L->p++;
        while (L->p < L->end && is_idc(*L->p)) L->p++;
        a->k = A_VAR;
        a->name = gt_strndup(L->c, s, (size_t)(L->p - s));
        a->fields = field_chain(L, &a->nf);
    } else if (ch == '"' || ch == '`') {
        char q = *L->p++;
        char *o = gt_alloc(L->c, (size_t)(L->end - L->p) + 1);
        size_t n = 0;
        while (L->p < L->end && *L->p != q) {
            char x = *L->p++;
            if (q == '"' && x == '\\' && L->p < L->end) {
                char e = *L->p++;
                x = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == '\\' ? '\\' : e == '"' ? '"' : 0;
                if (!x) gt_fail(L->c, SN_EUNSUPPORTED, L->line, "string escape \\%c", e);
            }
            o[n++] = x;
        }
        if (L->p >= L->end) gt_fail(L->c, SN_JINJA_RAISED_GO, L->line, "unterminated quoted string");
        L->p++;
        a->k = A_LIT;
        a->lit = (gv){.t = GV_STR, .s = o, .n = n};
    } else if ((ch >= '0' && ch <= '9') || ch == '-') {
        char *e;
        long long v = strtoll(L->p, &e, 10);
        if (e == L->p || (e < L->end && (is_idc(*e) || *e == '.'))) gt_fail(L->c, SN_EUNSUPPORTED, L->line, "number literal '%.20s'", L->p);
        L->p = e;
        a->k = A_LIT;
        a->lit = (gv){.t = GV_INT, .i = v};
    } else if (is_idc(ch)) {
        const char *s = L->p;
        while (L->p < L->end && is_idc(*L->p)) L->p++;
        size_t n = (size_t)(L->p - s);
        if (n == 4 && !memcmp(s, "true", 4)) { a->k = A_LIT; a->lit = (gv){.t = GV_BOOL, .i = 1}; }
        else if (n == 5 && !memcmp(s, "false", 5)) { a->k = A_LIT; a->lit = (gv){.t = GV_BOOL, .i = 0}; }
        else if (n == 3 && !memcmp(s, "nil", 3)) { a->k = A_LIT; a->lit = (gv){.t = GV_NIL}; }
        else { a->k = A_FUNC; a->name = gt_strndup(L->c, s, n); }
    } else gt_fail(L->c, SN_JINJA_RAISED_GO, L->line, "unexpected '%c' in an action", ch);
    return 1;
}

static gpipe *parse_pipe(alex *L, int allow_decl) {
    gpipe *p = gt_alloc(L->c, sizeof *p);
    if (allow_decl) { /* $x := / $x = / $i, $m := */
        const char *save = L->p;
        skip_sp(L);
        const char *names[2];
        int nn = 0;
        while (nn < 2 && L->p < L->end && *L->p == '$') {
            const char *s = L->p++;
            while (L->p < L->end && is_idc(*L->p)) L->p++;
            names[nn++] = gt_strndup(L->c, s, (size_t)(L->p - s));
            skip_sp(L);
            if (nn == 1 && L->p < L->end && *L->p == ',') { L->p++; skip_sp(L); continue; }
            break;
        }
        if (nn && eat(L, ":=")) { p->ndecl = nn; p->decl[0] = names[0]; p->decl[1] = nn > 1 ? names[1] : NULL; }
        else if (nn == 1 && L->p < L->end && *L->p == '=' && (L->p + 1 >= L->end || L->p[1] != '=')) {
            L->p++;
            p->ndecl = 1; p->assign = 1; p->decl[0] = names[0];
        } else L->p = save;
    }
    size_t cap = 0;
    for (;;) {
        gcmd *cmd = gt_alloc(L->c, sizeof *cmd);
        size_t acap = 0;
        garg a;
        while (parse_arg(L, &a)) {
            if (cmd->nargs == acap) {
                acap = acap ? acap * 2 : 4;
                garg *na = gt_alloc(L->c, acap * sizeof *na);
                if (cmd->nargs) memcpy(na, cmd->args, cmd->nargs * sizeof *na);
                cmd->args = na;
            }
            cmd->args[cmd->nargs++] = a;
        }
        if (!cmd->nargs) gt_fail(L->c, SN_JINJA_RAISED_GO, L->line, "missing value for command");
        if (p->ncmds == cap) {
            cap = cap ? cap * 2 : 2;
            gcmd **nc = gt_alloc(L->c, cap * sizeof *nc);
            if (p->ncmds) memcpy(nc, p->cmds, p->ncmds * sizeof *nc);
            p->cmds = nc;
        }
        p->cmds[p->ncmds++] = cmd;
        skip_sp(L);
        if (L->p < L->end && *L->p == '|') { L->p++; continue; }
        return p;
    }
}

/* ---- template structure ---- */
typedef struct { const char *s; size_t n; size_t pos; int line; gtctx *c; } gsrc;

typedef struct { int is_text; const char *p; size_t n; int line; } seg;

/* next segment: text (with trims applied by the neighbours) or an action's inner text */
static int next_seg(gsrc *S, seg *out, int *trim_next) {
    if (S->pos >= S->n) return 0;
    const char *o = strstr(S->s + S->pos, "{{");
    size_t tend = o ? (size_t)(o - S->s) : S->n;
    if (tend > S->pos || !o) {
        size_t b = S->pos, e = tend;
        if (*trim_next) while (b < e && is_sp(S->s[b])) b++;
        *trim_next = 0;
        if (o && o[2] == '-' && o + 3 < S->s + S->n && is_sp(o[3])) while (e > b && is_sp(S->s[e - 1])) e--;
        out->is_text = 1;
        out->p = S->s + b;
        out->n = e - b;
        out->line = S->line;
        for (size_t i = S->pos; i < tend; i++) S->line += S->s[i] == '\n';
        S->pos = tend;
        if (out->n) return 1;
        if (!o) return 0;
    }
    *trim_next = 0;
    size_t a = S->pos + 2;
    if (a < S->n && S->s[a] == '-' && a + 1 < S->n && is_sp(S->s[a + 1])) a += 2;
    /* find the closing }} outside string literals */
    size_t i = a;
    char q = 0;
    for (; i + 1 < S->n; i++) {
        char ch = S->s[i];
        if (q) { if (ch == '\\' && q == '"') i++; else if (ch == q) q = 0; continue; }
        if (ch == '"' || ch == '`') { q = ch; continue; }
        if (ch == '}' && S->s[i + 1] == '}') break;
    }
    if (i + 1 >= S->n) gt_fail(S->c, SN_JINJA_RAISED_GO, S->line, "unclosed action");
    size_t e = i;
    if (e >= a + 2 && S->s[e - 1] == '-' && is_sp(S->s[e - 2])) { e -= 2; *trim_next = 1; }
    out->is_text = 0;
    out->p = S->s + a;
    out->n = e > a ? e - a : 0;
    out->line = S->line;
    for (size_t k = S->pos; k < i + 2; k++) S->line += S->s[k] == '\n';
    S->pos = i + 2;
    return 1;
}

static gnode *gnode_new(gtctx *c, gk k, int line) {
    gnode *n = gt_alloc(c, sizeof *n);
    n->k = k;
    n->line = line;
    return n;
}

static void push_node(gtctx *c, gnode ***v, size_t *n, size_t *cap, gnode *x) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        gnode **nv = gt_alloc(c, *cap * sizeof *nv);
        if (*n) memcpy(nv, *v, *n * sizeof *nv);
        *v = nv;
    }
    (*v)[(*n)++] = x;
}

/* Parses until {{end}} / {{else ...}} (returned in *stop: 0 eof, 1 end, 2 else, 3 else-if,
 * 4 else-with; for 3/4 the alex in *rest holds the rest of the action). */
static void parse_list(gsrc *S, int *trim, gnode ***v, size_t *n, int *stop, alex *rest) {
    size_t cap = 0;
    seg sg;
    *stop = 0;
    while (next_seg(S, &sg, trim)) {
        if (sg.is_text) {
            gnode *t = gnode_new(S->c, G_TEXT, sg.line);
            t->text = sg.p;
            t->len = sg.n;
            push_node(S->c, v, n, &cap, t);
            continue;
        }
        alex L = {sg.p, sg.p + sg.n, sg.line, S->c};
        skip_sp(&L);
        if (L.p + 1 < L.end && L.p[0] == '/' && L.p[1] == '*') continue; /* comment */
        if (eat(&L, "end")) { *stop = 1; return; }
        if (eat(&L, "else")) {
            if (eat(&L, "if")) { *stop = 3; *rest = L; return; }
            if (eat(&L, "with")) { *stop = 4; *rest = L; return; }
            *stop = 2;
            return;
        }
        if (at(&L, "break") || at(&L, "continue")) {
            push_node(S->c, v, n, &cap, gnode_new(S->c, eat(&L, "break") ? G_BREAK : (eat(&L, "continue"), G_CONTINUE), sg.line));
            continue;
        }
        int kind = eat(&L, "if") ? G_IF : eat(&L, "range") ? G_RANGE : eat(&L, "with") ? G_WITH : G_ACTION;
        if (kind == G_ACTION && (at(&L, "define") || at(&L, "template") || at(&L, "block")))
            gt_fail(S->c, SN_EUNSUPPORTED, sg.line, "the '%.10s' action", L.p);
        gnode *x = gnode_new(S->c, (gk)kind, sg.line);
        x->pipe = parse_pipe(&L, kind == G_ACTION || kind == G_RANGE);
        skip_sp(&L);
        if (L.p < L.end) gt_fail(S->c, SN_JINJA_RAISED_GO, sg.line, "unexpected '%.20s' in an action", L.p);
        push_node(S->c, v, n, &cap, x);
        if (kind == G_ACTION) continue;
        gnode *cur = x;
        for (;;) {
            int st;
            alex r;
            parse_list(S, trim, &cur->v, &cur->n, &st, &r);
            if (st == 0) gt_fail(S->c, SN_JINJA_RAISED_GO, sg.line, "unexpected EOF");
            if (st == 1) break;
            if (st == 2) {
                parse_list(S, trim, &cur->ev, &cur->en, &st, &r);
                if (st != 1) gt_fail(S->c, SN_JINJA_RAISED_GO, sg.line, "expected end after else");
                break;
            }
            gnode *nx = gnode_new(S->c, st == 3 ? G_IF : G_WITH, r.line);
            nx->pipe = parse_pipe(&r, 0);
            cur->ev = gt_alloc(S->c, sizeof *cur->ev);
            cur->ev[0] = nx;
            cur->en = 1;
            cur = nx;
        }
    }
}

sn_status sn_gotmpl_parse(const char *src, size_t len, sn_gotmpl **out, sn_err *err) {
    *out = NULL;
    sn_gotmpl *t = calloc(1, sizeof *t);
    if (!t) return sn_err_set(err, SN_ENOMEM, "template: out of memory");
    JA_INIT(&t->arena, SN_BUDGET_GOTMPL_PARSE);
    char *s = ja_alloc(&t->arena, len + 1);
    if (!s) { sn_gotmpl_free(t); return sn_err_set(err, SN_ENOMEM, "template: out of memory"); }
    memcpy(s, src, len);
    s[len] = 0;
    if (memchr(src, 0, len)) { sn_gotmpl_free(t); return sn_err_set(err, SN_EFORMAT, "Go template contains a NUL byte"); }
    gtctx c = {.a = &t->arena, .err = err};
    if (setjmp(c.fail)) { sn_status st = err ? err->code : SN_EFORMAT; sn_gotmpl_free(t); return st; }
    gsrc S = {s, len, 0, 1, &c};
    int trim = 0, stop;
    t->root = gnode_new(&c, G_LIST, 1);
    alex rest; /* a stray {{else if}} at top level lands here and is then an error */
    parse_list(&S, &trim, &t->root->v, &t->root->n, &stop, &rest);
    if (stop) gt_fail(&c, SN_JINJA_RAISED_GO, S.line, "unexpected {{end}} or {{else}}");
    *out = t;
    return SN_OK;
}

void sn_gotmpl_free(sn_gotmpl *t) {
    if (!t) return;
    ja_free(&t->arena);
    free(t);
}
