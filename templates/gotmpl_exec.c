/* gotmpl_exec.c - executes a parsed Go template (gotmpl.c) with text/template's rules (truth of
 * empty values, variables scoped to their control structure, range setting dot, and/or returning
 * an operand, eq against several values) and wraps it in Ollama's Execute: message collation,
 * .Messages vs legacy .Prompt/.Response turns, the implicit {{ .Response }} and the cut of the
 * last legacy turn at the first .Response (template/template.go). */
#include "budget.h"
#include "gotmpl_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    gtctx *c;
    char *out;
    size_t n, cap;
    const char **vn;
    gv *vv;
    size_t nv, vcap;
    int ctl; /* pending {{break}} (1) / {{continue}} (2) inside a range */
} gx;

static void put(gx *x, const char *s, size_t n) {
    int r = ja_append(x->c->a, &x->out, &x->n, &x->cap, s, n, 1024, SN_BUDGET_GOTMPL_OUTPUT);
    if (r == JA_TOO_BIG)
        gt_fail(x->c, SN_EUNSUPPORTED, 0, "output larger than the %u MB budget (SN_BUDGET_GOTMPL_OUTPUT, budget.h)",
                SN_BUDGET_GOTMPL_OUTPUT >> 20);
    if (r) {
        char m[160];
        ja_oom_msg(x->c->a, m, sizeof m);
        gt_fail(x->c, SN_EUNSUPPORTED, 0, "%s", m);
    }
}

static void step(gx *x, int line) {
    if (++x->c->steps > SN_BUDGET_TMPL_STEPS)
        gt_fail(x->c, SN_EUNSUPPORTED, line, "more than %llu steps (SN_BUDGET_TMPL_STEPS, budget.h)", SN_BUDGET_TMPL_STEPS);
}

static void var_set(gx *x, const char *name, gv v, int declare, int line) {
    if (!declare) {
        for (size_t i = x->nv; i-- > 0;)
            if (!strcmp(x->vn[i], name)) { x->vv[i] = v; return; }
        gt_fail(x->c, SN_JINJA_RAISED_GO, line, "undefined variable: %s", name);
    }
    if (x->nv == x->vcap) {
        x->vcap = x->vcap ? x->vcap * 2 : 16;
        const char **nn = gt_alloc(x->c, x->vcap * sizeof *nn);
        gv *nvv = gt_alloc(x->c, x->vcap * sizeof *nvv);
        if (x->nv) { memcpy(nn, x->vn, x->nv * sizeof *nn); memcpy(nvv, x->vv, x->nv * sizeof *nvv); }
        x->vn = nn;
        x->vv = nvv;
    }
    x->vn[x->nv] = name;
    x->vv[x->nv++] = v;
}

static gv var_get(gx *x, const char *name, int line) {
    for (size_t i = x->nv; i-- > 0;)
        if (!strcmp(x->vn[i], name)) return x->vv[i];
    gt_fail(x->c, SN_JINJA_RAISED_GO, line, "undefined variable: %s", name);
}

static int truth(const gv *v) {
    switch (v->t) {
    case GV_NIL: return 0;
    case GV_BOOL: case GV_INT: return v->i != 0;
    case GV_STR: case GV_LIST: return v->n != 0;
    case GV_MAP: return v->strukt || v->n != 0;
    }
    return 0;
}

static gv field(gx *x, gv v, const char *name, int line) {
    if (v.t == GV_MAP) {
        for (size_t i = 0; i < v.n; i++)
            if (!strcmp(v.keys[i], name)) return v.vals[i];
        if (v.strukt) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "can't evaluate field %s", name);
        return (gv){.t = GV_NIL};
    }
    gt_fail(x->c, SN_JINJA_RAISED_GO, line, "can't evaluate field %s in a %s", name,
            v.t == GV_NIL ? "nil value" : v.t == GV_STR ? "string" : v.t == GV_LIST ? "slice" : "basic value");
}

static gv eval_pipe(gx *x, const gpipe *p, gv dot, int line);

static gv fields(gx *x, gv v, const garg *a, int line) {
    for (size_t i = 0; i < a->nf; i++) v = field(x, v, a->fields[i], line);
    return v;
}

static gv eval_arg(gx *x, const garg *a, gv dot, int line) {
    switch (a->k) {
    case A_DOT: return dot;
    case A_FIELD: return fields(x, dot, a, line);
    case A_VAR: return fields(x, var_get(x, a->name, line), a, line);
    case A_LIT: return a->lit;
    case A_PIPE: return fields(x, eval_pipe(x, a->pipe, dot, line), a, line);
    default: gt_fail(x->c, SN_EUNSUPPORTED, line, "function %s used as a value", a->name);
    }
}

static int basic_eq(gx *x, const gv *a, const gv *b, int line) {
    if (a->t != b->t || a->t == GV_LIST || a->t == GV_MAP)
        gt_fail(x->c, SN_JINJA_RAISED_GO, line, "incompatible types for comparison");
    if (a->t == GV_STR) return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
    return a->t == GV_NIL || a->i == b->i;
}

static int basic_cmp(gx *x, const gv *a, const gv *b, int line) {
    if (a->t != b->t || (a->t != GV_INT && a->t != GV_STR))
        gt_fail(x->c, SN_JINJA_RAISED_GO, line, "incompatible types for comparison");
    if (a->t == GV_INT) return (a->i > b->i) - (a->i < b->i);
    size_t m = a->n < b->n ? a->n : b->n;
    int r = memcmp(a->s, b->s, m);
    return r ? r : (a->n > b->n) - (a->n < b->n);
}

static int64_t want_int(gx *x, const gv *v, int line) {
    if (v->t != GV_INT) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "cannot index with a non-integer");
    return v->i;
}

static gv call(gx *x, const char *fn, gv *a, size_t n, int line) {
#define IS(s) (!strcmp(fn, s))
    if (IS("and") || IS("or")) {
        if (n < 1) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "wrong number of args for %s", fn);
        for (size_t i = 0; i + 1 < n; i++)
            if (truth(&a[i]) == (IS("or") ? 1 : 0)) return a[i];
        return a[n - 1];
    }
    if (IS("not")) {
        if (n != 1) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "wrong number of args for not");
        return (gv){.t = GV_BOOL, .i = !truth(&a[0])};
    }
    if (IS("eq")) {
        if (n < 2) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "missing argument for comparison");
        for (size_t i = 1; i < n; i++)
            if (basic_eq(x, &a[0], &a[i], line)) return (gv){.t = GV_BOOL, .i = 1};
        return (gv){.t = GV_BOOL, .i = 0};
    }
    if (IS("ne") || IS("lt") || IS("le") || IS("gt") || IS("ge")) {
        if (n != 2) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "wrong number of args for %s", fn);
        if (IS("ne")) return (gv){.t = GV_BOOL, .i = !basic_eq(x, &a[0], &a[1], line)};
        int r = basic_cmp(x, &a[0], &a[1], line);
        return (gv){.t = GV_BOOL, .i = IS("lt") ? r < 0 : IS("le") ? r <= 0 : IS("gt") ? r > 0 : r >= 0};
    }
    if (IS("len")) {
        if (n != 1) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "wrong number of args for len");
        if (a[0].t != GV_STR && a[0].t != GV_LIST && (a[0].t != GV_MAP || a[0].strukt))
            gt_fail(x->c, SN_JINJA_RAISED_GO, line, "len of a value without a length");
        return (gv){.t = GV_INT, .i = (int64_t)a[0].n};
    }
    if (IS("index")) {
        if (n < 1) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "wrong number of args for index");
        gv v = a[0];
        for (size_t k = 1; k < n; k++) {
            if (v.t == GV_LIST) {
                int64_t i = want_int(x, &a[k], line);
                if (i < 0 || (uint64_t)i >= v.n) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "error calling index: index out of range: %lld", (long long)i);
                v = v.items[i];
            } else if (v.t == GV_MAP && !v.strukt && a[k].t == GV_STR) {
                v = field(x, v, a[k].s, line);
            } else gt_fail(x->c, SN_EUNSUPPORTED, line, "index of this kind of value");
        }
        return v;
    }
    if (IS("slice")) {
        if (n < 2 || n > 3) gt_fail(x->c, SN_EUNSUPPORTED, line, "slice with %zu arguments", n);
        gv v = a[0];
        if (v.t != GV_LIST && v.t != GV_STR) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "can't slice this value");
        int64_t lo = want_int(x, &a[1], line), hi = n == 3 ? want_int(x, &a[2], line) : (int64_t)v.n;
        if (lo < 0 || hi < lo || (uint64_t)hi > v.n) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "error calling slice: index out of range");
        gv r = v;
        r.n = (size_t)(hi - lo);
        if (v.t == GV_LIST) r.items = v.items + lo;
        else { char *s = gt_alloc(x->c, r.n + 1); memcpy(s, v.s + lo, r.n); r.s = s; }
        return r;
    }
    gt_fail(x->c, SN_EUNSUPPORTED, line, "the function '%s'", fn);
#undef IS
}

static gv eval_cmd(gx *x, const gcmd *cmd, gv dot, const gv *final, int line) {
    const garg *a0 = &cmd->args[0];
    if (a0->k != A_FUNC) {
        if (cmd->nargs > 1 || final) gt_fail(x->c, SN_JINJA_RAISED_GO, line, "can't give argument to non-function");
        return eval_arg(x, a0, dot, line);
    }
    size_t n = cmd->nargs - 1 + (final ? 1 : 0);
    gv *args = gt_alloc(x->c, (n ? n : 1) * sizeof *args);
    for (size_t i = 1; i < cmd->nargs; i++) args[i - 1] = eval_arg(x, &cmd->args[i], dot, line);
    if (final) args[n - 1] = *final;
    return call(x, a0->name, args, n, line);
}

static gv eval_pipe(gx *x, const gpipe *p, gv dot, int line) {
    gv v = {0};
    for (size_t i = 0; i < p->ncmds; i++) v = eval_cmd(x, p->cmds[i], dot, i ? &v : NULL, line);
    return v;
}

static void print_value(gx *x, const gv *v, int line) {
    char num[32];
    switch (v->t) {
    case GV_NIL: put(x, "<no value>", 10); return;
    case GV_BOOL: if (v->i) put(x, "true", 4); else put(x, "false", 5); return;
    case GV_INT: snprintf(num, sizeof num, "%lld", (long long)v->i); put(x, num, strlen(num)); return;
    case GV_STR: put(x, v->s, v->n); return;
    default: gt_fail(x->c, SN_EUNSUPPORTED, line, "printing a slice or map with %%v formatting");
    }
}

static void exec_list(gx *x, gnode *const *v, size_t n, gv dot);

static void exec_node(gx *x, const gnode *nd, gv dot) {
    step(x, nd->line);
    switch (nd->k) {
    case G_TEXT: put(x, nd->text, nd->len); return;
    case G_ACTION: {
        gv v = eval_pipe(x, nd->pipe, dot, nd->line);
        if (nd->pipe->ndecl) var_set(x, nd->pipe->decl[0], v, !nd->pipe->assign, nd->line);
        else print_value(x, &v, nd->line);
        return;
    }
    case G_IF: case G_WITH: {
        gv v = eval_pipe(x, nd->pipe, dot, nd->line);
        size_t mark = x->nv;
        if (truth(&v)) exec_list(x, nd->v, nd->n, nd->k == G_WITH ? v : dot);
        else exec_list(x, nd->ev, nd->en, dot);
        x->nv = mark;
        return;
    }
    case G_RANGE: {
        gv v = eval_pipe(x, nd->pipe, dot, nd->line);
        if (v.t != GV_LIST && v.t != GV_NIL) gt_fail(x->c, SN_EUNSUPPORTED, nd->line, "range over something that is not a slice");
        if (v.t == GV_NIL || v.n == 0) { size_t m = x->nv; exec_list(x, nd->ev, nd->en, dot); x->nv = m; return; }
        for (size_t i = 0; i < v.n; i++) {
            size_t mark = x->nv;
            if (nd->pipe->ndecl == 1) var_set(x, nd->pipe->decl[0], v.items[i], 1, nd->line);
            if (nd->pipe->ndecl == 2) {
                var_set(x, nd->pipe->decl[0], (gv){.t = GV_INT, .i = (int64_t)i}, 1, nd->line);
                var_set(x, nd->pipe->decl[1], v.items[i], 1, nd->line);
            }
            exec_list(x, nd->v, nd->n, v.items[i]);
            x->nv = mark;
            int brk = x->ctl == 1;
            x->ctl = 0;
            if (brk) break;
        }
        return;
    }
    case G_LIST: exec_list(x, nd->v, nd->n, dot); return;
    case G_BREAK: x->ctl = 1; return;
    case G_CONTINUE: x->ctl = 2; return;
    }
}

static void exec_list(gx *x, gnode *const *v, size_t n, gv dot) {
    for (size_t i = 0; i < n && !x->ctl; i++) exec_node(x, v[i], dot);
}

/* ---- Ollama's Execute ---- */
static int mentions(const gnode *nd, const char *lname);

static int arg_mentions(const garg *a, const char *lname) {
    for (size_t i = 0; i < a->nf; i++) if (!strcasecmp(a->fields[i], lname)) return 1;
    if (a->k == A_VAR && !strcasecmp(a->name, lname)) return 1;
    if (a->k == A_PIPE) {
        for (size_t i = 0; i < a->pipe->ncmds; i++)
            for (size_t k = 0; k < a->pipe->cmds[i]->nargs; k++)
                if (arg_mentions(&a->pipe->cmds[i]->args[k], lname)) return 1;
    }
    return 0;
}

/* Ollama's Template.Vars(): does any field or variable of the template have this (lower-case) name */
static int mentions(const gnode *nd, const char *lname) {
    if (nd->pipe)
        for (size_t i = 0; i < nd->pipe->ncmds; i++)
            for (size_t k = 0; k < nd->pipe->cmds[i]->nargs; k++)
                if (arg_mentions(&nd->pipe->cmds[i]->args[k], lname)) return 1;
    for (size_t i = 0; i < nd->n; i++) if (mentions(nd->v[i], lname)) return 1;
    for (size_t i = 0; i < nd->en; i++) if (mentions(nd->ev[i], lname)) return 1;
    return 0;
}

/* A copy of LIST without everything after the first .Response field, in document order (the
 * last legacy turn stops where the model's answer begins). */
static int cut_node(gtctx *c, const gnode *nd, gnode **out, int *seen);

static gnode **cut_list(gtctx *c, gnode *const *v, size_t n, size_t *on, int *seen) {
    gnode **r = gt_alloc(c, (n ? n : 1) * sizeof *r);
    *on = 0;
    for (size_t i = 0; i < n; i++) {
        gnode *k;
        if (cut_node(c, v[i], &k, seen)) r[(*on)++] = k;
    }
    return r;
}

static gpipe *cut_pipe(gtctx *c, const gpipe *p, int *seen) {
    gpipe *r = gt_alloc(c, sizeof *r);
    *r = *p;
    r->ncmds = 0;
    r->cmds = gt_alloc(c, (p->ncmds ? p->ncmds : 1) * sizeof *r->cmds);
    for (size_t i = 0; i < p->ncmds; i++) {
        gcmd *cm = gt_alloc(c, sizeof *cm);
        cm->args = gt_alloc(c, p->cmds[i]->nargs * sizeof *cm->args);
        for (size_t k = 0; k < p->cmds[i]->nargs && !*seen; k++) {
            const garg *a = &p->cmds[i]->args[k];
            cm->args[cm->nargs++] = *a;
            if (a->k == A_FIELD)
                for (size_t f = 0; f < a->nf; f++) if (!strcmp(a->fields[f], "Response")) *seen = 1;
        }
        if (cm->nargs) r->cmds[r->ncmds++] = cm;
    }
    return r;
}

static int cut_node(gtctx *c, const gnode *nd, gnode **out, int *seen) {
    if (*seen) return 0;
    gnode *r = gt_alloc(c, sizeof *r);
    *r = *nd;
    if (nd->pipe) {
        r->pipe = cut_pipe(c, nd->pipe, seen);
        if (nd->k == G_ACTION && !r->pipe->ncmds) return 0;
    }
    if (nd->k != G_TEXT && nd->k != G_ACTION) {
        r->v = cut_list(c, nd->v, nd->n, &r->n, seen);
        r->ev = cut_list(c, nd->ev, nd->en, &r->en, seen);
    }
    *out = r;
    return 1;
}

static gv gstr(gtctx *c, const char *s) {
    size_t n = strlen(s);
    char *d = gt_alloc(c, n + 1);
    memcpy(d, s, n + 1);
    return (gv){.t = GV_STR, .s = d, .n = n};
}

static gv gmap(gtctx *c, size_t n, int strukt) {
    gv m = {.t = GV_MAP, .strukt = strukt};
    m.keys = gt_alloc(c, (n ? n : 1) * sizeof *m.keys);
    m.vals = gt_alloc(c, (n ? n : 1) * sizeof *m.vals);
    return m;
}

static void mset(gv *m, const char *k, gv v) { m->keys[m->n] = k; m->vals[m->n++] = v; }

static gv from_json(gtctx *c, const cJSON *j) {
    if (!j || cJSON_IsNull(j)) return (gv){.t = GV_NIL};
    if (cJSON_IsBool(j)) return (gv){.t = GV_BOOL, .i = cJSON_IsTrue(j)};
    if (cJSON_IsNumber(j)) { /* truncated; a number no int64 holds (1e300, NaN) is 0, never a UB cast */
        const double d = j->valuedouble;
        return (gv){.t = GV_INT, .i = isfinite(d) && d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0};
    }
    if (cJSON_IsString(j)) return gstr(c, j->valuestring);
    size_t n = (size_t)cJSON_GetArraySize(j), i = 0;
    const cJSON *e;
    if (cJSON_IsArray(j)) {
        gv l = {.t = GV_LIST, .n = n, .items = gt_alloc(c, (n ? n : 1) * sizeof(gv))};
        cJSON_ArrayForEach(e, j) l.items[i++] = from_json(c, e);
        return l;
    }
    gv m = gmap(c, n, 0);
    cJSON_ArrayForEach(e, j) mset(&m, e->string ? e->string : "", from_json(c, e));
    return m;
}

/* tools as Ollama's api.Tool struct: {Type, Function {Name, Description, Parameters}}; the
 * parameters stay a JSON-shaped map (like tests/tools/render_go; Ollama's own struct differs
 * below that level, which sunny's family templates never reach). */
static gv tools_value(gtctx *c, const cJSON *tools) {
    if (!cJSON_IsArray(tools)) return (gv){.t = GV_NIL};
    size_t n = (size_t)cJSON_GetArraySize(tools), i = 0;
    gv l = {.t = GV_LIST, .n = n, .items = gt_alloc(c, (n ? n : 1) * sizeof(gv))};
    const cJSON *e;
    cJSON_ArrayForEach(e, tools) {
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(e, "type"), *fn = cJSON_GetObjectItemCaseSensitive(e, "function");
        const cJSON *nm = fn ? cJSON_GetObjectItemCaseSensitive(fn, "name") : NULL;
        const cJSON *ds = fn ? cJSON_GetObjectItemCaseSensitive(fn, "description") : NULL;
        gv f = gmap(c, 3, 1), t = gmap(c, 2, 1);
        mset(&f, "Name", gstr(c, cJSON_IsString(nm) ? nm->valuestring : ""));
        mset(&f, "Description", gstr(c, cJSON_IsString(ds) ? ds->valuestring : ""));
        mset(&f, "Parameters", from_json(c, fn ? cJSON_GetObjectItemCaseSensitive(fn, "parameters") : NULL));
        mset(&t, "Type", gstr(c, cJSON_IsString(ty) ? ty->valuestring : ""));
        mset(&t, "Function", f);
        l.items[i++] = t;
    }
    return l;
}

typedef struct { const char *role; char *content; } cmsg;

sn_status sn_gotmpl_render_chat(const sn_gotmpl *t, const cJSON *messages, const cJSON *tools,
                                int think, const char *default_system, char **out, sn_err *err) {
    *out = NULL;
    jarena arena;
    JA_INIT(&arena, SN_BUDGET_TMPL_RENDER);
    gtctx c = {.a = &arena, .err = err};
    if (setjmp(c.fail)) { sn_status st = err ? err->code : SN_EFORMAT; ja_free(&arena); return st; }
    size_t nm = (size_t)cJSON_GetArraySize(messages), n = 0;
    cmsg *ms = gt_alloc(&c, (nm + 2) * sizeof *ms);
    size_t sys_len = 0, sys_cap = 0;
    char *sys = NULL;
    int first = 1;
    const cJSON *m0 = cJSON_GetArrayItem(messages, 0);
    const cJSON *r0 = m0 ? cJSON_GetObjectItemCaseSensitive(m0, "role") : NULL;
    if (default_system && *default_system && !(cJSON_IsString(r0) && !strcmp(r0->valuestring, "system"))) {
        ms[n].role = "system";
        ms[n++].content = (char *)default_system;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, messages) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "role"), *ct = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (!cJSON_IsString(r)) gt_fail(&c, SN_EINVAL, 0, "message without a string role");
        ms[n].role = r->valuestring;
        ms[n++].content = cJSON_IsString(ct) ? ct->valuestring : "";
    }
    /* collate: merge consecutive same-role messages, join the system contents */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(ms[i].role, "system")) {
            size_t cl = strlen(ms[i].content), need = sys_len + cl + 3;
            if (need > sys_cap) {
                char *ns = gt_alloc(&c, sys_cap = need * 2);
                if (sys_len) memcpy(ns, sys, sys_len);
                sys = ns;
            }
            if (!first) { memcpy(sys + sys_len, "\n\n", 2); sys_len += 2; }
            memcpy(sys + sys_len, ms[i].content, cl);
            sys_len += cl;
            sys[sys_len] = 0;
            first = 0;
        }
        if (k && !strcmp(ms[k - 1].role, ms[i].role) && strcmp(ms[i].role, "tool")) {
            size_t a = strlen(ms[k - 1].content), b = strlen(ms[i].content);
            char *mg = gt_alloc(&c, a + b + 3);
            memcpy(mg, ms[k - 1].content, a);
            memcpy(mg + a, "\n\n", 2);
            memcpy(mg + a + 2, ms[i].content, b + 1);
            ms[k - 1].content = mg;
        } else ms[k++] = ms[i];
    }
    n = k;
    gv system = gstr(&c, sys ? sys : "");
    gnode root = *t->root;
    if (!mentions(&root, "messages") && !mentions(&root, "response")) { /* implicit {{ .Response }} */
        gnode *resp = gt_alloc(&c, sizeof *resp);
        resp->k = G_ACTION;
        resp->pipe = gt_alloc(&c, sizeof *resp->pipe);
        resp->pipe->cmds = gt_alloc(&c, sizeof *resp->pipe->cmds);
        resp->pipe->cmds[0] = gt_alloc(&c, sizeof **resp->pipe->cmds);
        resp->pipe->cmds[0]->args = gt_alloc(&c, sizeof(garg));
        resp->pipe->cmds[0]->nargs = 1;
        resp->pipe->ncmds = 1;
        garg *a = &resp->pipe->cmds[0]->args[0];
        a->k = A_FIELD;
        a->fields = gt_alloc(&c, sizeof *a->fields);
        a->fields[0] = "Response";
        a->nf = 1;
        gnode **nv = gt_alloc(&c, (root.n + 1) * sizeof *nv);
        if (root.n) memcpy(nv, root.v, root.n * sizeof *nv);
        nv[root.n++] = resp;
        root.v = nv;
    }
    gx x = {.c = &c};
    gv th = {.t = GV_BOOL, .i = think > 0}, thset = {.t = GV_BOOL, .i = think >= 0};
    if (mentions(&root, "messages")) {
        gv list = {.t = GV_LIST, .n = n, .items = gt_alloc(&c, (n ? n : 1) * sizeof(gv))};
        for (size_t i = 0; i < n; i++) {
            gv mm = gmap(&c, 7, 1);
            mset(&mm, "Role", gstr(&c, ms[i].role));
            mset(&mm, "Content", gstr(&c, ms[i].content));
            mset(&mm, "Thinking", gstr(&c, ""));
            mset(&mm, "Images", (gv){.t = GV_NIL});
            mset(&mm, "ToolCalls", (gv){.t = GV_NIL});
            mset(&mm, "ToolName", gstr(&c, ""));
            mset(&mm, "ToolCallID", gstr(&c, ""));
            list.items[i] = mm;
        }
        gv data = gmap(&c, 8, 0);
        mset(&data, "System", system);
        mset(&data, "Messages", list);
        mset(&data, "Tools", tools_value(&c, tools));
        mset(&data, "Response", gstr(&c, ""));
        mset(&data, "Think", th);
        mset(&data, "ThinkLevel", gstr(&c, ""));
        mset(&data, "IsThinkSet", thset);
        var_set(&x, "$", data, 1, 0);
        exec_list(&x, root.v, root.n, data);
    } else { /* legacy: one execution per turn */
        const char *s = "", *p = "", *r = "";
        for (size_t i = 0; i <= n; i++) {
            int last = i == n, run = 0;
            if (!last && !strcmp(ms[i].role, "system")) { run = *p || *r; }
            else if (!last && !strcmp(ms[i].role, "user")) { run = *r != 0; }
            if (run || last) {
                gv data = gmap(&c, 5, 0);
                mset(&data, "System", gstr(&c, s));
                mset(&data, "Prompt", gstr(&c, p));
                mset(&data, "Response", gstr(&c, r));
                mset(&data, "Think", th);
                mset(&data, "IsThinkSet", thset);
                x.nv = 0;
                var_set(&x, "$", data, 1, 0);
                if (last) {
                    int seen = 0;
                    size_t cn;
                    gnode **cv = cut_list(&c, root.v, root.n, &cn, &seen);
                    exec_list(&x, cv, cn, data);
                } else exec_list(&x, root.v, root.n, data);
                s = p = r = "";
            }
            if (last) break;
            if (!strcmp(ms[i].role, "system")) s = ms[i].content;
            else if (!strcmp(ms[i].role, "user")) p = ms[i].content;
            else if (!strcmp(ms[i].role, "assistant")) r = ms[i].content;
        }
    }
    char *res = malloc(x.n + 1);
    if (!res) { ja_free(&arena); return sn_err_set(err, SN_ENOMEM, "template: out of memory"); }
    if (x.n) memcpy(res, x.out, x.n);
    res[x.n] = 0;
    *out = res;
    ja_free(&arena);
    return SN_OK;
}
