/* jinja_eval.c - executes a parsed template: statements write into one output buffer, expressions
 * evaluate to values with jinja2's rules (undefined names are falsy and print empty, but any
 * attribute of an undefined value raises; `a.b` tries the key b; `and`/`or` return an operand;
 * Python arithmetic incl. floor division and modulo signs). Scopes follow jinja2: a for-loop
 * iteration, a macro call and a `with` block get their own frame, so `set` inside them does not
 * leak out (templates use namespace() for that); `if` does not create one. Every node evaluated
 * costs a step, and macro calls have a depth limit, so no template can hang or recurse forever. */
#include "budget.h"
#include "jinja_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Noreturn void jx_fail(jctx *c, sn_status code, const jnode *at, const char *fmt, ...) {
    char where[32] = "";
    if (at) snprintf(where, sizeof where, " at %u:%u", at->line, at->col);
    va_list ap;
    va_start(ap, fmt);
    ja_verr(c->err, code, "", where, fmt, ap);
    va_end(ap);
    longjmp(c->fail, 1);
}

_Noreturn void jx_oom(jctx *c) {
    char m[160];
    ja_oom_msg(c->a, m, sizeof m);
    sn_err_set(c->err, SN_EUNSUPPORTED, "cannot render: %s", m);
    longjmp(c->fail, 1);
}

void jx_step(jctx *c, const jnode *at) {
    if (++c->steps > c->max_steps)
        jx_unsupported(c, at, "more than %llu evaluation steps (%s)", (unsigned long long)c->max_steps,
                       c->max_steps == SN_BUDGET_TMPL_STEPS ? "budget SN_BUDGET_TMPL_STEPS, budget.h" : "the caller's limit");
}

/* ---- frames ---- */
static jframe *frame_new(jctx *c, jframe *parent) {
    jframe *f = ja_alloc(c->a, sizeof *f);
    if (!f) jx_oom(c);
    f->parent = parent;
    return f;
}

static void frame_set(jctx *c, jframe *f, const char *name, jv v) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->names[i], name) == 0) { f->vals[i] = v; return; }
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 8;
        const char **nn = ja_alloc(c->a, nc * sizeof *nn);
        jv *nv = ja_alloc(c->a, nc * sizeof *nv);
        if (!nn || !nv) jx_oom(c);
        if (f->n) { memcpy(nn, f->names, f->n * sizeof *nn); memcpy(nv, f->vals, f->n * sizeof *nv); }
        f->names = nn;
        f->vals = nv;
        f->cap = nc;
    }
    f->names[f->n] = name;
    f->vals[f->n++] = v;
}

static jv lookup(jctx *c, jframe *f, const char *name) {
    for (; f; f = f->parent)
        for (size_t i = f->n; i-- > 0;)
            if (strcmp(f->names[i], name) == 0) return f->vals[i];
    (void)c;
    int fn = jx_global_fn(name);
    if (fn) { jv v = {.t = JT_FUNC}; v.u.fn = fn; return v; }
    return jv_undef(name);
}

static _Noreturn void undefined_error(jctx *c, const jnode *at, const jv *u) {
    if (u->undef_name) jx_raise(c, at, "'%s' is undefined", u->undef_name);
    jx_raise(c, at, "undefined value used");
}

/* ---- attribute / item access ---- */
static int is_dict_method(const char *n) {
    static const char *m[] = {"items", "keys", "values", "get", "pop", "update", "copy", "setdefault",
                              "clear", "popitem", NULL};
    for (int i = 0; m[i]; i++) if (!strcmp(m[i], n)) return 1;
    return 0;
}

static const char *const STR_METHODS[] = {"startswith", "endswith", "strip", "lstrip", "rstrip",
    "split", "rsplit", "upper", "lower", "capitalize", "title", "replace", "removeprefix",
    "removesuffix", "find", "rfind", "count", "index", "rindex", "join", "format", "splitlines",
    "isdigit", "isspace", "isalpha", "isalnum", "islower", "isupper", "center", "ljust", "rjust",
    "zfill", "encode", "casefold", "swapcase", "partition", "rpartition", "expandtabs",
    "format_map", "isnumeric", "isdecimal", "istitle", "isidentifier", "isprintable", "isascii",
    "maketrans", "translate", NULL};
static const char *const LIST_METHODS[] = {"append", "extend", "pop", "insert", "remove", "sort",
    "reverse", "clear", "index", "count", "copy", NULL};

static int is_method(const char *const *list, const char *n) {
    for (int i = 0; list[i]; i++) if (!strcmp(list[i], n)) return 1;
    return 0;
}

jv jx_getattr(jctx *c, const jnode *at, jv obj, const char *name) {
    if (obj.t == JT_UNDEF) undefined_error(c, at, &obj);
    if (obj.t == JT_DICT) {
        jv r;
        if (!obj.u.d->ns && !obj.u.d->loop && is_dict_method(name))
            jx_unsupported(c, at, "dict method '%s' used without calling it", name);
        if (jd_get_s(obj.u.d, name, &r)) return r;
        return jv_undef(NULL);
    }
    if ((obj.t == JT_STR && is_method(STR_METHODS, name)) || (obj.t == JT_LIST && is_method(LIST_METHODS, name)))
        jx_unsupported(c, at, "method '%s' of a %s used without calling it", name, jv_type_name(&obj));
    return jv_undef(NULL); /* jinja2: no such attribute -> undefined */
}

/* Code point boundaries of a UTF-8 string: offs[i] = byte offset of code point i, offs[n] = len. */
static size_t *cp_offsets(jctx *c, const jstr *s, size_t *n) {
    size_t *o = ja_alloc(c->a, (s->len + 1) * sizeof *o);
    if (!o) jx_oom(c);
    size_t k = 0;
    for (size_t i = 0; i < s->len; i++)
        if (((unsigned char)s->s[i] & 0xc0) != 0x80) o[k++] = i;
    o[k] = s->len;
    *n = k;
    return o;
}

jv jx_getitem(jctx *c, const jnode *at, jv obj, jv key) {
    if (obj.t == JT_UNDEF) undefined_error(c, at, &obj);
    if (obj.t == JT_DICT) {
        jv r;
        if (jd_get(obj.u.d, key, &r)) return r;
        return jv_undef(NULL);
    }
    if (obj.t == JT_LIST && obj.u.l->gen) jx_raise(c, at, "'%s' object is not subscriptable", jv_type_name(&obj));
    if ((obj.t == JT_LIST || obj.t == JT_STR) && (key.t == JT_INT || key.t == JT_BOOL)) {
        int64_t i = key.t == JT_INT ? key.u.i : key.u.b;
        if (obj.t == JT_LIST) {
            int64_t n = (int64_t)obj.u.l->n;
            if (i < 0) i += n;
            return i >= 0 && i < n ? obj.u.l->v[i] : jv_undef(NULL);
        }
        size_t n;
        size_t *o = cp_offsets(c, obj.u.s, &n);
        if (i < 0) i += (int64_t)n;
        if (i < 0 || i >= (int64_t)n) return jv_undef(NULL);
        return jv_str(c, obj.u.s->s + o[i], o[i + 1] - o[i]);
    }
    if (key.t == JT_STR) return jx_getattr(c, at, obj, key.u.s->s);
    return jv_undef(NULL);
}

static int64_t slice_bound(jctx *c, const jnode *at, jv v, int64_t dflt) {
    if (v.t == JT_NONE || v.t == JT_UNDEF) return dflt;
    if (v.t == JT_INT) return v.u.i;
    if (v.t == JT_BOOL) return v.u.b;
    jx_raise(c, at, "slice indices must be integers or None");
}

static jv do_slice(jctx *c, const jnode *at, jv obj, jv a, jv b, jv s) {
    int64_t step = slice_bound(c, at, s, 1);
    if (step == 0) jx_raise(c, at, "slice step cannot be zero");
    if (obj.t == JT_UNDEF) undefined_error(c, at, &obj);
    size_t n = 0, *o = NULL;
    if (obj.t == JT_LIST && obj.u.l->gen) jx_raise(c, at, "'%s' object is not subscriptable", jv_type_name(&obj));
    if (obj.t == JT_LIST) n = obj.u.l->n;
    else if (obj.t == JT_STR) o = cp_offsets(c, obj.u.s, &n);
    else jx_raise(c, at, "'%s' object is not subscriptable", jv_type_name(&obj));
    int64_t len = (int64_t)n, lo, hi;
    /* CPython's PySlice_AdjustIndices */
    if (a.t == JT_NONE || a.t == JT_UNDEF) lo = step < 0 ? len - 1 : 0;
    else {
        lo = slice_bound(c, at, a, 0);
        if (lo < 0) { lo += len; if (lo < 0) lo = step < 0 ? -1 : 0; }
        else if (lo >= len) lo = step < 0 ? len - 1 : len;
    }
    if (b.t == JT_NONE || b.t == JT_UNDEF) hi = step < 0 ? -1 : len;
    else {
        hi = slice_bound(c, at, b, 0);
        if (hi < 0) { hi += len; if (hi < 0) hi = step < 0 ? -1 : 0; }
        else if (hi >= len) hi = step < 0 ? len - 1 : len;
    }
    jlist *l = obj.t == JT_LIST ? jl_new(c, 0) : NULL;
    jbuf buf = {0};
    for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
        jx_step(c, at);
        if (l) jl_push(c, l, obj.u.l->v[i]);
        else jb_put(c, &buf, obj.u.s->s + o[i], o[i + 1] - o[i]);
    }
    if (l) { l->tuple = obj.u.l->tuple; return jv_list(l); }
    return jv_str(c, buf.p ? buf.p : "", buf.n);
}

/* ---- operators ---- */
static jv arith(jctx *c, const jnode *at, int op, jv a, jv b) {
    if (a.t == JT_UNDEF) undefined_error(c, at, &a);
    if (b.t == JT_UNDEF) undefined_error(c, at, &b);
    int ints = (a.t == JT_INT || a.t == JT_BOOL) && (b.t == JT_INT || b.t == JT_BOOL);
    int64_t x = a.t == JT_BOOL ? a.u.b : a.u.i, y = b.t == JT_BOOL ? b.u.b : b.u.i, r;
    if ((a.t == JT_LIST && a.u.l->gen) || (b.t == JT_LIST && b.u.l->gen))
        jx_raise(c, at, "unsupported operand type(s): '%s' and '%s'", jv_type_name(&a), jv_type_name(&b));
    if (jv_is_num(&a) && jv_is_num(&b)) {
        double fx = jv_num(&a), fy = jv_num(&b);
        switch (op) {
        case OP_ADD: if (ints) { if (__builtin_add_overflow(x, y, &r)) goto big; return jv_int(r); } return jv_float(fx + fy);
        case OP_SUB: if (ints) { if (__builtin_sub_overflow(x, y, &r)) goto big; return jv_int(r); } return jv_float(fx - fy);
        case OP_MUL: if (ints) { if (__builtin_mul_overflow(x, y, &r)) goto big; return jv_int(r); } return jv_float(fx * fy);
        case OP_DIV: if (fy == 0) jx_raise(c, at, "division by zero"); return jv_float(fx / fy);
        case OP_FLOORDIV: case OP_MOD:
            if (ints) {
                if (y == 0) jx_raise(c, at, "integer division or modulo by zero");
                if (x == INT64_MIN && y == -1) goto big;
                int64_t q = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) { q--; m += y; }
                return jv_int(op == OP_MOD ? m : q);
            }
            if (fy == 0) jx_raise(c, at, "float division by zero");
            if (op == OP_FLOORDIV) return jv_float(floor(fx / fy));
            { double m = fmod(fx, fy); if (m != 0 && ((m < 0) != (fy < 0))) m += fy; return jv_float(m); }
        case OP_POW:
            if (ints && y >= 0) {
                int64_t acc = 1;
                for (int64_t i = 0; i < y; i++) {
                    if (__builtin_mul_overflow(acc, x, &acc)) goto big;
                    if (acc == 0 || acc == 1) break;
                    jx_step(c, at);
                }
                return jv_int(acc);
            }
            return jv_float(pow(fx, fy));
        }
    }
    if (op == OP_ADD && a.t == JT_STR && b.t == JT_STR) {
        if (a.markup != b.markup) { /* Markup + str escapes the str (markupsafe) */
            if (!a.markup) a = js_escape(c, a.u.s);
            if (!b.markup) b = js_escape(c, b.u.s);
        }
        jbuf buf = {0};
        jb_put(c, &buf, a.u.s->s, a.u.s->len);
        jb_put(c, &buf, b.u.s->s, b.u.s->len);
        jv r = jv_str(c, buf.p ? buf.p : "", buf.n);
        r.markup = a.markup;
        return r;
    }
    if (op == OP_ADD && a.t == JT_LIST && b.t == JT_LIST) {
        jlist *l = jl_new(c, a.u.l->n + b.u.l->n);
        for (size_t i = 0; i < a.u.l->n; i++) jl_push(c, l, a.u.l->v[i]);
        for (size_t i = 0; i < b.u.l->n; i++) jl_push(c, l, b.u.l->v[i]);
        l->tuple = a.u.l->tuple;
        return jv_list(l);
    }
    if (op == OP_MUL && ((a.t == JT_STR || a.t == JT_LIST) && (b.t == JT_INT || b.t == JT_BOOL))) {
        int64_t k = b.t == JT_INT ? b.u.i : b.u.b;
        if (k > 0 && (uint64_t)k * (a.t == JT_STR ? a.u.s->len : a.u.l->n) > c->max_output)
            jx_unsupported(c, at, "repetition larger than the output budget (%s)", JX_OUTPUT_BUDGET(c));
        if (a.t == JT_STR) {
            jbuf buf = {0};
            for (int64_t i = 0; i < k; i++) jb_put(c, &buf, a.u.s->s, a.u.s->len);
            return jv_str(c, buf.p ? buf.p : "", buf.n);
        }
        jlist *l = jl_new(c, 0);
        for (int64_t i = 0; i < k; i++)
            for (size_t j = 0; j < a.u.l->n; j++) jl_push(c, l, a.u.l->v[j]);
        return jv_list(l);
    }
    if (op == OP_MUL && (b.t == JT_STR || b.t == JT_LIST) && (a.t == JT_INT || a.t == JT_BOOL))
        return arith(c, at, op, b, a);
    if (op == OP_MOD && a.t == JT_STR) jx_unsupported(c, at, "printf-style '%%' string formatting");
    jx_raise(c, at, "unsupported operand type(s): '%s' and '%s'", jv_type_name(&a), jv_type_name(&b));
big:
    jx_unsupported(c, at, "integer arithmetic beyond 64 bits");
}

static int contains(jctx *c, const jnode *at, jv needle, jv hay) {
    switch (hay.t) {
    case JT_STR:
        if (needle.t != JT_STR) jx_raise(c, at, "'in <string>' requires string as left operand");
        return needle.u.s->len == 0 || memmem(hay.u.s->s, hay.u.s->len, needle.u.s->s, needle.u.s->len) != NULL;
    case JT_LIST:
        for (size_t i = 0; i < hay.u.l->n; i++) if (jv_eq(&needle, &hay.u.l->v[i])) return 1;
        return 0;
    case JT_DICT: { jv r; return jd_get(hay.u.d, needle, &r); }
    case JT_UNDEF: return 0;
    default: jx_raise(c, at, "argument of type '%s' is not iterable", jv_type_name(&hay));
    }
}

static jv compare(jctx *c, const jnode *at, int op, jv a, jv b) {
    switch (op) {
    case OP_EQ: return jv_bool(jv_eq(&a, &b));
    case OP_NE: return jv_bool(!jv_eq(&a, &b));
    case OP_IN: return jv_bool(contains(c, at, a, b));
    case OP_NOTIN: return jv_bool(!contains(c, at, a, b));
    }
    if (a.t == JT_UNDEF) undefined_error(c, at, &a);
    if (b.t == JT_UNDEF) undefined_error(c, at, &b);
    int r = jv_cmp(c, at, &a, &b);
    return jv_bool(op == OP_LT ? r < 0 : op == OP_LE ? r <= 0 : op == OP_GT ? r > 0 : r >= 0);
}

/* ---- calls ---- */
typedef struct { jv *pos; size_t np; const char **kwn; jv *kwv; size_t nkw; } jargs;

static jargs eval_args(jctx *c, jframe *f, const jnode *n) {
    jargs a = {0};
    a.np = n->n;
    a.nkw = n->nw;
    a.kwn = n->names;
    if (n->n && !(a.pos = ja_alloc(c->a, n->n * sizeof(jv)))) jx_oom(c);
    if (n->nw && !(a.kwv = ja_alloc(c->a, n->nw * sizeof(jv)))) jx_oom(c);
    for (size_t i = 0; i < n->n; i++) a.pos[i] = jx_eval(c, f, n->v[i]);
    for (size_t i = 0; i < n->nw; i++) a.kwv[i] = jx_eval(c, f, n->w[i]);
    return a;
}

static void exec_body(jctx *c, jframe *f, jnode *const *v, size_t n, jbuf *out);

jv jx_call_macro(jctx *c, const jnode *at, const jmacro *m, jv *args, size_t nargs,
                 const char **kwn, jv *kwv, size_t nkw) {
    const jnode *d = m->def;
    if (++c->depth > 64) jx_unsupported(c, at, "macro calls nested deeper than 64");
    if (nargs > d->nn) jx_raise(c, at, "macro '%s' takes not more than %zu argument(s)", d->name ? d->name : "caller", d->nn);
    jframe *f = frame_new(c, m->closure);
    for (size_t i = 0; i < d->nn; i++) {
        jv v = jv_undef(d->names[i]);
        int have = 0;
        if (i < nargs) { v = args[i]; have = 1; }
        for (size_t k = 0; k < nkw; k++)
            if (!strcmp(kwn[k], d->names[i])) { v = kwv[k]; have = 1; }
        if (!have && i < d->nw && d->w[i]) v = jx_eval(c, f, d->w[i]);
        frame_set(c, f, d->names[i], v);
    }
    for (size_t k = 0; k < nkw; k++) {
        int known = 0;
        for (size_t i = 0; i < d->nn; i++) known |= !strcmp(kwn[k], d->names[i]);
        if (!known) jx_raise(c, at, "macro '%s' takes no keyword argument '%s'", d->name ? d->name : "caller", kwn[k]);
    }
    if (m->caller) { jv cv = {.t = JT_MACRO}; cv.u.m = m->caller; frame_set(c, f, "caller", cv); }
    jbuf out = {0};
    exec_body(c, f, d->v, d->n, &out);
    c->loop_ctl = 0;
    c->depth--;
    return jv_str(c, out.p ? out.p : "", out.n);
}

static jv eval_call(jctx *c, jframe *f, const jnode *e) {
    const jnode *callee = e->a;
    if (callee->k == N_ATTR) {
        jv obj = jx_eval(c, f, callee->a);
        if (obj.t == JT_UNDEF) undefined_error(c, callee, &obj);
        jv member;
        if (obj.t == JT_DICT && (obj.u.d->ns || !is_dict_method(callee->name)) &&
            jd_get_s(obj.u.d, callee->name, &member) && (member.t == JT_MACRO || member.t == JT_FUNC)) {
            jargs a = eval_args(c, f, e);
            if (member.t == JT_MACRO) return jx_call_macro(c, e, member.u.m, a.pos, a.np, a.kwn, a.kwv, a.nkw);
            return jx_call_fn(c, e, member.u.fn, a.pos, a.np, a.kwn, a.kwv, a.nkw);
        }
        jargs a = eval_args(c, f, e);
        return jx_method(c, e, obj, callee->name, a.pos, a.np, a.kwn, a.kwv, a.nkw);
    }
    jv fn = jx_eval(c, f, callee);
    jargs a = eval_args(c, f, e);
    if (fn.t == JT_MACRO) return jx_call_macro(c, e, fn.u.m, a.pos, a.np, a.kwn, a.kwv, a.nkw);
    if (fn.t == JT_FUNC) return jx_call_fn(c, e, fn.u.fn, a.pos, a.np, a.kwn, a.kwv, a.nkw);
    if (fn.t == JT_UNDEF) undefined_error(c, e, &fn);
    jx_raise(c, e, "'%s' object is not callable", jv_type_name(&fn));
}

static jv apply_filters(jctx *c, jframe *f, const jnode *chain, jv base) {
    if (!chain) return base;
    jv v = apply_filters(c, f, chain->a, base);
    jargs a = eval_args(c, f, chain);
    return jx_filter(c, chain, chain->name, v, a.pos, a.np, a.kwn, a.kwv, a.nkw);
}

jv jx_eval(jctx *c, jframe *f, const jnode *e) {
    jx_step(c, e);
    switch (e->k) {
    case N_LIT: return e->lit;
    case N_NAME: return lookup(c, f, e->name);
    case N_LIST: case N_TUPLE: {
        jlist *l = jl_new(c, e->n);
        for (size_t i = 0; i < e->n; i++) jl_push(c, l, jx_eval(c, f, e->v[i]));
        l->tuple = e->k == N_TUPLE;
        return jv_list(l);
    }
    case N_DICT: {
        jdict *d = jd_new(c, e->n);
        for (size_t i = 0; i < e->n; i++) jd_set(c, d, jx_eval(c, f, e->v[i]), jx_eval(c, f, e->w[i]));
        return jv_dict(d);
    }
    case N_ATTR: return jx_getattr(c, e, jx_eval(c, f, e->a), e->name);
    case N_ITEM: { jv o = jx_eval(c, f, e->a); return jx_getitem(c, e, o, jx_eval(c, f, e->b)); }
    case N_SLICE: {
        jv o = jx_eval(c, f, e->a), p[3];
        for (int i = 0; i < 3; i++) p[i] = e->v[i] ? jx_eval(c, f, e->v[i]) : jv_none();
        return do_slice(c, e, o, p[0], p[1], p[2]);
    }
    case N_CALL: return eval_call(c, f, e);
    case N_FILTER: {
        jv v = jx_eval(c, f, e->a);
        jargs a = eval_args(c, f, e);
        return jx_filter(c, e, e->name, v, a.pos, a.np, a.kwn, a.kwv, a.nkw);
    }
    case N_TEST: {
        jv v = jx_eval(c, f, e->a);
        jargs a = eval_args(c, f, e);
        int r = jx_test(c, e, e->name, v, a.pos, a.np);
        return jv_bool(e->op ? !r : r);
    }
    case N_BIN:
        if (e->op == OP_CONCAT) {
            jv a = jx_eval(c, f, e->a), b = jx_eval(c, f, e->b);
            jbuf buf = {0};
            jv_str_into(c, &buf, &a);
            jv_str_into(c, &buf, &b);
            return jv_str(c, buf.p ? buf.p : "", buf.n);
        } else {
            jv a = jx_eval(c, f, e->a);
            return arith(c, e, e->op, a, jx_eval(c, f, e->b));
        }
    case N_CMP: { jv a = jx_eval(c, f, e->a); return compare(c, e, e->op, a, jx_eval(c, f, e->b)); }
    case N_NEG: case N_POS: {
        jv v = jx_eval(c, f, e->a);
        if (v.t == JT_UNDEF) undefined_error(c, e, &v);
        if (v.t == JT_BOOL) v = jv_int(v.u.b);
        if (v.t == JT_INT) { if (e->k == N_NEG && v.u.i == INT64_MIN) jx_unsupported(c, e, "integer beyond 64 bits"); return e->k == N_NEG ? jv_int(-v.u.i) : v; }
        if (v.t == JT_FLOAT) return e->k == N_NEG ? jv_float(-v.u.f) : v;
        jx_raise(c, e, "bad operand type for unary %c: '%s'", e->k == N_NEG ? '-' : '+', jv_type_name(&v));
    }
    case N_NOT: { jv v = jx_eval(c, f, e->a); return jv_bool(!jv_truthy(&v)); }
    case N_AND: { jv a = jx_eval(c, f, e->a); return jv_truthy(&a) ? jx_eval(c, f, e->b) : a; }
    case N_OR: { jv a = jx_eval(c, f, e->a); return jv_truthy(&a) ? a : jx_eval(c, f, e->b); }
    case N_COND: {
        jv t = jx_eval(c, f, e->a);
        if (jv_truthy(&t)) return jx_eval(c, f, e->b);
        return e->c ? jx_eval(c, f, e->c) : jv_undef(NULL);
    }
    default: jx_unsupported(c, e, "expression kind %d", (int)e->k);
    }
}

/* ---- statements ---- */
static jlist *iterate(jctx *c, const jnode *at, jv v) {
    jlist *l;
    size_t n, *o;
    switch (v.t) {
    case JT_LIST:
        if (v.u.l->gen == 1) { /* a generator yields its items once */
            l = jl_new(c, v.u.l->n - v.u.l->pos);
            for (size_t i = v.u.l->pos; i < v.u.l->n; i++) jl_push(c, l, v.u.l->v[i]);
            v.u.l->pos = v.u.l->n;
            return l;
        }
        return v.u.l;
    case JT_UNDEF: return jl_new(c, 0);
    case JT_DICT:
        if (v.u.d->ns || v.u.d->loop) jx_raise(c, at, "'%s' object is not iterable", v.u.d->ns ? "Namespace" : "LoopContext");
        l = jl_new(c, v.u.d->n);
        for (size_t i = 0; i < v.u.d->n; i++) jl_push(c, l, v.u.d->k[i]);
        return l;
    case JT_STR:
        o = cp_offsets(c, v.u.s, &n);
        l = jl_new(c, n);
        for (size_t i = 0; i < n; i++) jl_push(c, l, jv_str(c, v.u.s->s + o[i], o[i + 1] - o[i]));
        return l;
    default: jx_raise(c, at, "'%s' object is not iterable", jv_type_name(&v));
    }
}

jlist *jx_iterate(jctx *c, const jnode *at, jv v) { return iterate(c, at, v); }

static void bind_targets(jctx *c, const jnode *at, jframe *f, const char **names, size_t nn, jv v) {
    if (nn == 1) { frame_set(c, f, names[0], v); return; }
    jlist *l = iterate(c, at, v);
    if (l->n != nn) jx_raise(c, at, "cannot unpack %zu value(s) into %zu name(s)", l->n, nn);
    for (size_t i = 0; i < nn; i++) frame_set(c, f, names[i], l->v[i]);
}

static void exec_for(jctx *c, jframe *f, const jnode *s, jbuf *out) {
    jlist *src = iterate(c, s, jx_eval(c, f, s->a));
    jlist *items = src;
    if (s->b) { /* {% for x in xs if cond %}: filter first, so loop.length counts kept items */
        items = jl_new(c, 0);
        for (size_t i = 0; i < src->n; i++) {
            jframe *tf = frame_new(c, f);
            bind_targets(c, s, tf, s->names, s->nn, src->v[i]);
            jv t = jx_eval(c, tf, s->b);
            if (jv_truthy(&t)) jl_push(c, items, src->v[i]);
        }
    }
    size_t n = items->n;
    for (size_t i = 0; i < n; i++) {
        jframe *it = frame_new(c, f);
        jdict *lp = jd_new(c, 12);
        lp->loop = 1;
        jd_set(c, lp, jv_cstr(c, "index"), jv_int((int64_t)i + 1));
        jd_set(c, lp, jv_cstr(c, "index0"), jv_int((int64_t)i));
        jd_set(c, lp, jv_cstr(c, "revindex"), jv_int((int64_t)(n - i)));
        jd_set(c, lp, jv_cstr(c, "revindex0"), jv_int((int64_t)(n - i - 1)));
        jd_set(c, lp, jv_cstr(c, "first"), jv_bool(i == 0));
        jd_set(c, lp, jv_cstr(c, "last"), jv_bool(i + 1 == n));
        jd_set(c, lp, jv_cstr(c, "length"), jv_int((int64_t)n));
        jd_set(c, lp, jv_cstr(c, "depth"), jv_int(1));
        jd_set(c, lp, jv_cstr(c, "depth0"), jv_int(0));
        if (i > 0) jd_set(c, lp, jv_cstr(c, "previtem"), items->v[i - 1]);
        if (i + 1 < n) jd_set(c, lp, jv_cstr(c, "nextitem"), items->v[i + 1]);
        frame_set(c, it, "loop", jv_dict(lp));
        bind_targets(c, s, it, s->names, s->nn, items->v[i]);
        exec_body(c, it, s->v, s->n, out);
        if (c->loop_ctl == 1) { c->loop_ctl = 0; break; }
        c->loop_ctl = 0;
    }
    if (n == 0) exec_body(c, f, s->w, s->nw, out);
}

/* a block's body rendered to a string and passed through its filter CHAIN (set / filter blocks) */
static jv render_filtered(jctx *c, jframe *f, const jnode *s, const jnode *chain) {
    jbuf b = {0};
    exec_body(c, f, s->v, s->n, &b);
    return apply_filters(c, f, chain, jv_str(c, b.p ? b.p : "", b.n));
}

/* the macro (or {% call %} body) DEF closing over frame F */
static jmacro *new_macro(jctx *c, const jnode *def, jframe *f) {
    jmacro *m = ja_alloc(c->a, sizeof *m);
    if (!m) jx_oom(c);
    m->def = def;
    m->closure = f;
    return m;
}

static void exec_stmt(jctx *c, jframe *f, const jnode *s, jbuf *out) {
    jx_step(c, s);
    switch (s->k) {
    case N_TEXT: jb_put(c, out, s->lit.u.s->s, s->lit.u.s->len); return;
    case N_OUTPUT: { jv v = jx_eval(c, f, s->a); jv_str_into(c, out, &v); return; }
    case N_IF: {
        jv t = jx_eval(c, f, s->a);
        if (jv_truthy(&t)) exec_body(c, f, s->v, s->n, out);
        else exec_body(c, f, s->w, s->nw, out);
        return;
    }
    case N_FOR: exec_for(c, f, s, out); return;
    case N_SET: {
        jv v = jx_eval(c, f, s->b);
        if (s->a) { /* ns.attr = v */
            jv ns = jx_eval(c, f, s->a->a);
            if (ns.t != JT_DICT || !ns.u.d->ns) jx_raise(c, s, "cannot assign attribute on non-namespace object");
            jd_set(c, ns.u.d, jv_cstr(c, s->a->name), v);
            return;
        }
        bind_targets(c, s, f, s->names, s->nn, v);
        return;
    }
    case N_SETBLOCK: frame_set(c, f, s->names[0], render_filtered(c, f, s, s->b)); return;
    case N_FILTERBLOCK: {
        jv v = render_filtered(c, f, s, s->a);
        jv_str_into(c, out, &v);
        return;
    }
    case N_MACRO: {
        jv v = {.t = JT_MACRO};
        v.u.m = new_macro(c, s, f);
        frame_set(c, f, s->name, v);
        return;
    }
    case N_CALLBLOCK: {
        jmacro *body = new_macro(c, s, f);
        const jnode *call = s->a;
        jv fn = jx_eval(c, f, call->a);
        if (fn.t != JT_MACRO) jx_unsupported(c, s, "{%% call %%} of something that is not a macro");
        jmacro m = *fn.u.m;
        m.caller = body;
        jargs a = eval_args(c, f, call);
        jv r = jx_call_macro(c, s, &m, a.pos, a.np, a.kwn, a.kwv, a.nkw);
        jv_str_into(c, out, &r);
        return;
    }
    case N_WITH: {
        jframe *w = frame_new(c, f);
        for (size_t i = 0; i < s->nn; i++) frame_set(c, w, s->names[i], jx_eval(c, f, s->w[i]));
        exec_body(c, w, s->v, s->n, out);
        return;
    }
    case N_BREAK: c->loop_ctl = 1; return;
    case N_CONTINUE: c->loop_ctl = 2; return;
    default: jx_unsupported(c, s, "statement kind %d", (int)s->k);
    }
}

static void exec_body(jctx *c, jframe *f, jnode *const *v, size_t n, jbuf *out) {
    for (size_t i = 0; i < n && !c->loop_ctl; i++) exec_stmt(c, f, v[i], out);
}

/* ---- entry points ---- */
sn_status sn_jinja_parse(const char *src, size_t len, sn_jinja **out, sn_err *err) {
    *out = NULL;
    sn_jinja *t = calloc(1, sizeof *t);
    if (!t) return sn_err_set(err, SN_ENOMEM, "template: out of memory");
    JA_INIT(&t->arena, SN_BUDGET_JINJA_PARSE);
    jlex_out toks;
    sn_status st = jinja_lex(&t->arena, src, len, &toks, err);
    if (!st) st = jinja_parse_tokens(&t->arena, &toks, &t->root, err);
    if (st) { sn_jinja_free(t); return st; }
    *out = t;
    return SN_OK;
}

void sn_jinja_free(sn_jinja *t) {
    if (!t) return;
    ja_free(&t->arena);
    free(t);
}

sn_status sn_jinja_render(const sn_jinja *t, const cJSON *vars, const sn_jinja_opts *opts,
                          char **out, size_t *out_len, sn_err *err) {
    *out = NULL;
    if (out_len) *out_len = 0;
    sn_jinja_opts o = opts ? *opts : (sn_jinja_opts){.now = -1};
    jarena arena;
    if (o.max_memory) ja_init(&arena, o.max_memory, NULL);
    else JA_INIT(&arena, SN_BUDGET_TMPL_RENDER);
    sn_err local = {0};
    jctx c = {.a = &arena, .err = err ? err : &local};
    c.max_steps = o.max_steps ? o.max_steps : SN_BUDGET_TMPL_STEPS;
    c.max_output = o.max_output ? o.max_output : SN_BUDGET_JINJA_OUTPUT;
    c.now = o.now >= 0 ? o.now : (int64_t)time(NULL);
    volatile sn_status st = SN_OK;
    if (setjmp(c.fail)) {
        st = c.err->code ? c.err->code : SN_EUNSUPPORTED;
        ja_free(&arena);
        return st;
    }
    c.globals = frame_new(&c, NULL);
    if (vars && cJSON_IsObject(vars)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, vars) {
            const char *nm = e->string ? e->string : "";
            char *cp = ja_alloc(&arena, strlen(nm) + 1);
            if (!cp) jx_oom(&c);
            strcpy(cp, nm);
            frame_set(&c, c.globals, cp, jv_from_json(&c, e));
        }
    }
    jframe *top = frame_new(&c, c.globals);
    jbuf b = {0};
    exec_body(&c, top, t->root->v, t->root->n, &b);
    if (b.n > c.max_output)
        jx_unsupported(&c, NULL, "output larger than the %zu-byte budget (%s)", c.max_output, JX_OUTPUT_BUDGET(&c));
    char *r = malloc(b.n + 1);
    if (!r) { ja_free(&arena); return sn_err_set(err, SN_ENOMEM, "template: out of memory"); }
    if (b.n) memcpy(r, b.p, b.n);
    r[b.n] = 0;
    *out = r;
    if (out_len) *out_len = b.n;
    ja_free(&arena);
    return SN_OK;
}
