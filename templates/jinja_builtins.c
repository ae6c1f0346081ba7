/* jinja_builtins.c - the filters, tests and global functions chat templates use, with jinja2 3.x
 * semantics (filters.py / tests.py / defaults.py) plus transformers' additions: tojson is HF's
 * override (json.dumps(x, ensure_ascii=False, indent, separators, sort_keys), no HTML escaping),
 * raise_exception(msg) fails the render, strftime_now(fmt) formats the render's clock.
 * An unknown filter or test is "cannot render", never skipped. */
#include "jinja_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FN_RANGE = 1, FN_NAMESPACE, FN_DICT, FN_RAISE, FN_STRFTIME, FN_LIST };

int jx_global_fn(const char *n) {
    if (!strcmp(n, "range")) return FN_RANGE;
    if (!strcmp(n, "namespace")) return FN_NAMESPACE;
    if (!strcmp(n, "dict")) return FN_DICT;
    if (!strcmp(n, "raise_exception")) return FN_RAISE;
    if (!strcmp(n, "strftime_now")) return FN_STRFTIME;
    return 0;
}

static const jv *kw(const char *name, const char **kwn, jv *kwv, size_t nkw) {
    for (size_t i = 0; i < nkw; i++) if (!strcmp(kwn[i], name)) return &kwv[i];
    return NULL;
}

static int64_t as_int(jctx *c, const jnode *at, jv v) {
    if (v.t == JT_INT) return v.u.i;
    if (v.t == JT_BOOL) return v.u.b;
    jx_raise(c, at, "'%s' object cannot be interpreted as an integer", jv_type_name(&v));
}

jv jx_call_fn(jctx *c, const jnode *at, int fn, jv *a, size_t na, const char **kwn, jv *kwv, size_t nkw) {
    switch (fn) {
    case FN_RANGE: {
        if (na < 1 || na > 3 || nkw) jx_raise(c, at, "range expected 1 to 3 arguments");
        int64_t lo = 0, hi, st = 1;
        if (na == 1) hi = as_int(c, at, a[0]);
        else { lo = as_int(c, at, a[0]); hi = as_int(c, at, a[1]); if (na == 3) st = as_int(c, at, a[2]); }
        if (st == 0) jx_raise(c, at, "range() arg 3 must not be zero");
        jlist *l = jl_new(c, 0);
        for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
            if (l->n >= 100000) jx_raise(c, at, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
            jl_push(c, l, jv_int(i));
        }
        return jv_list(l);
    }
    case FN_NAMESPACE: case FN_DICT: {
        jdict *d = jd_new(c, nkw);
        d->ns = fn == FN_NAMESPACE;
        if (na > 1) jx_raise(c, at, "%s expected at most 1 positional argument", fn == FN_DICT ? "dict" : "namespace");
        if (na == 1) {
            if (a[0].t != JT_DICT) jx_unsupported(c, at, "%s() from a %s", fn == FN_DICT ? "dict" : "namespace", jv_type_name(&a[0]));
            for (size_t i = 0; i < a[0].u.d->n; i++) jd_set(c, d, a[0].u.d->k[i], a[0].u.d->v[i]);
        }
        for (size_t i = 0; i < nkw; i++) jd_set(c, d, jv_cstr(c, kwn[i]), kwv[i]);
        return jv_dict(d);
    }
    case FN_RAISE: {
        jstr *m = na ? jv_to_str(c, &a[0]) : NULL;
        jx_raise(c, at, "raise_exception: %s", m ? m->s : "");
    }
    case FN_STRFTIME: {
        if (na != 1 || a[0].t != JT_STR) jx_raise(c, at, "strftime_now expects one string");
        time_t t = (time_t)c->now;
        struct tm tm;
        if (!localtime_r(&t, &tm)) jx_unsupported(c, at, "strftime_now: bad clock");
        char buf[512];
        size_t n = a[0].u.s->len ? strftime(buf, sizeof buf, a[0].u.s->s, &tm) : 0;
        if (a[0].u.s->len && n == 0) jx_unsupported(c, at, "strftime_now format producing nothing or > 511 bytes");
        return jv_str(c, buf, n);
    }
    }
    jx_unsupported(c, at, "function %d", fn);
}

/* ---- tests ---- */
static const char *const TESTS[] = {"defined", "undefined", "none", "boolean", "false", "true",
    "integer", "float", "number", "string", "mapping", "iterable", "sequence", "callable", "sameas",
    "equalto", "eq", "==", "ne", "!=", "lt", "<", "le", "<=", "gt", ">", "ge", ">=", "in", "odd",
    "even", "divisibleby", "lower", "upper", "escaped", NULL};

int jx_has_test(const char *n) {
    for (int i = 0; TESTS[i]; i++) if (!strcmp(TESTS[i], n)) return 1;
    return 0;
}

int jx_test(jctx *c, const jnode *at, const char *n, jv v, jv *a, size_t na) {
#define IS(x) (!strcmp(n, x))
    if (IS("defined")) return v.t != JT_UNDEF;
    if (IS("undefined")) return v.t == JT_UNDEF;
    if (IS("none")) return v.t == JT_NONE;
    if (IS("boolean")) return v.t == JT_BOOL;
    if (IS("false")) return v.t == JT_BOOL && !v.u.b;
    if (IS("true")) return v.t == JT_BOOL && v.u.b;
    if (IS("integer")) return v.t == JT_INT;
    if (IS("float")) return v.t == JT_FLOAT;
    if (IS("number")) return jv_is_num(&v);
    if (IS("string")) return v.t == JT_STR;
    if (IS("mapping")) return v.t == JT_DICT && !v.u.d->ns && !v.u.d->loop;
    if (IS("iterable")) return v.t == JT_STR || v.t == JT_LIST || v.t == JT_UNDEF || (v.t == JT_DICT && !v.u.d->ns && !v.u.d->loop);
    if (IS("sequence")) return v.t == JT_STR || v.t == JT_LIST || v.t == JT_UNDEF || (v.t == JT_DICT && !v.u.d->ns && !v.u.d->loop);
    if (IS("callable")) return v.t == JT_MACRO || v.t == JT_FUNC;
    if (IS("escaped")) return 0;
    if (IS("lower") || IS("upper")) {
        if (v.t != JT_STR) jx_raise(c, at, "test '%s' needs a string", n);
        jv x = js_case(c, v.u.s, IS("upper"));
        return jv_eq(&x, &v);
    }
    if (IS("odd") || IS("even")) {
        int64_t i = as_int(c, at, v);
        return IS("odd") ? (i % 2 != 0) : (i % 2 == 0);
    }
    if (na != 1) jx_raise(c, at, "test '%s' takes one argument", n);
    if (IS("divisibleby")) {
        int64_t d = as_int(c, at, a[0]);
        if (d == 0) jx_raise(c, at, "integer division or modulo by zero");
        return as_int(c, at, v) % d == 0;
    }
    if (IS("sameas")) {
        if (v.t != a[0].t) return 0;
        if (v.t == JT_NONE || v.t == JT_UNDEF) return 1;
        if (v.t == JT_BOOL) return v.u.b == a[0].u.b;
        if (v.t == JT_LIST) return v.u.l == a[0].u.l;
        if (v.t == JT_DICT) return v.u.d == a[0].u.d;
        jx_unsupported(c, at, "'sameas' on a %s", jv_type_name(&v));
    }
    if (IS("equalto") || IS("eq") || IS("==")) return jv_eq(&v, &a[0]);
    if (IS("ne") || IS("!=")) return !jv_eq(&v, &a[0]);
    if (IS("in")) {
        jv hay = a[0];
        if (hay.t == JT_STR) {
            if (v.t != JT_STR) jx_raise(c, at, "'in <string>' requires string as left operand");
            return memmem(hay.u.s->s, hay.u.s->len, v.u.s->s, v.u.s->len) != NULL || !v.u.s->len;
        }
        if (hay.t == JT_LIST) { for (size_t i = 0; i < hay.u.l->n; i++) if (jv_eq(&v, &hay.u.l->v[i])) return 1; return 0; }
        if (hay.t == JT_DICT) { jv r; return jd_get(hay.u.d, v, &r); }
        jx_raise(c, at, "argument of type '%s' is not iterable", jv_type_name(&hay));
    }
    if (v.t == JT_UNDEF || a[0].t == JT_UNDEF) jx_raise(c, at, "undefined value compared");
    int r = jv_cmp(c, at, &v, &a[0]);
    if (IS("lt") || IS("<")) return r < 0;
    if (IS("le") || IS("<=")) return r <= 0;
    if (IS("gt") || IS(">")) return r > 0;
    if (IS("ge") || IS(">=")) return r >= 0;
    jx_unsupported(c, at, "the test '%s'", n);
#undef IS
}

/* ---- filters ---- */
static const char *const FILTERS[] = {"trim", "tojson", "length", "count", "default", "d", "join",
    "upper", "lower", "capitalize", "title", "replace", "selectattr", "rejectattr", "select",
    "reject", "map", "list", "first", "last", "items", "string", "int", "float", "indent", "abs",
    "round", "unique", "reverse", "sort", "sum", "min", "max", "safe", "escape", "e", "dictsort",
    "wordcount", NULL};

int jx_has_filter(const char *n) {
    for (int i = 0; FILTERS[i]; i++) if (!strcmp(FILTERS[i], n)) return 1;
    return 0;
}

/* attribute lookup by a dotted path ("function.name"), as jinja2's make_attrgetter does */
static jv attr_path(jctx *c, const jnode *at, jv v, const jstr *path) {
    const char *p = path->s;
    while (1) {
        const char *dot = strchr(p, '.');
        size_t l = dot ? (size_t)(dot - p) : strlen(p);
        char part[128];
        if (l >= sizeof part) jx_unsupported(c, at, "attribute path part longer than 127 bytes");
        memcpy(part, p, l);
        part[l] = 0;
        int digits = l > 0 && strspn(part, "0123456789") == l;
        if (v.t == JT_UNDEF) jx_raise(c, at, "attribute '%s' of an undefined value", part);
        v = digits ? jx_getitem(c, at, v, jv_int(atoll(part))) : jx_getitem(c, at, v, jv_cstr(c, part));
        if (!dot) return v;
        p = dot + 1;
    }
}

static jv sort_list(jctx *c, const jnode *at, jlist *src, int reverse, const jstr *attr, int case_sens) {
    jlist *l = jl_new(c, src->n);
    jv *keys = ja_alloc(c->a, (src->n ? src->n : 1) * sizeof *keys);
    if (!keys) jx_oom(c);
    for (size_t i = 0; i < src->n; i++) {
        jl_push(c, l, src->v[i]);
        jv k = attr ? attr_path(c, at, src->v[i], attr) : src->v[i];
        if (!case_sens && k.t == JT_STR) k = js_case(c, k.u.s, 0);
        keys[i] = k;
    }
    for (size_t i = 1; i < l->n; i++) /* stable insertion sort */
        for (size_t j = i; j > 0; j--) {
            int r = jv_cmp(c, at, &keys[j - 1], &keys[j]);
            if (reverse ? r >= 0 : r <= 0) break;
            jv t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t;
            t = l->v[j]; l->v[j] = l->v[j - 1]; l->v[j - 1] = t;
            jx_step(c, at);
        }
    return jv_list(l);
}

jv jx_filter(jctx *c, const jnode *at, const char *n, jv v, jv *a, size_t na, const char **kwn,
             jv *kwv, size_t nkw) {
#define IS(x) (!strcmp(n, x))
#define ARG(i, nm) (na > (i) ? &a[i] : kw(nm, kwn, kwv, nkw))
    if (IS("default") || IS("d")) {
        const jv *dv = ARG(0, "default_value"), *b = ARG(1, "boolean");
        int use = v.t == JT_UNDEF || (b && jv_truthy(b) && !jv_truthy(&v));
        return use ? (dv ? *dv : jv_cstr(c, "")) : v;
    }
    if (IS("safe")) { jv r = jv_strv(jv_to_str(c, &v)); r.markup = 1; return r; }
    if (IS("string")) return jv_strv(jv_to_str(c, &v));
    if (IS("length") || IS("count")) {
        if (v.t == JT_STR) return jv_int((int64_t)js_cplen(v.u.s));
        if (v.t == JT_LIST && v.u.l->gen == 1) jx_raise(c, at, "object of type 'generator' has no len()");
        if (v.t == JT_LIST) return jv_int((int64_t)v.u.l->n);
        if (v.t == JT_DICT && !v.u.d->loop && !v.u.d->ns) return jv_int((int64_t)v.u.d->n);
        if (v.t == JT_UNDEF) return jv_int(0);
        jx_raise(c, at, "object of type '%s' has no len()", jv_type_name(&v));
    }
    if (IS("tojson")) {
        const jv *ind = ARG(0, "indent"), *sep = kw("separators", kwn, kwv, nkw), *sk = kw("sort_keys", kwn, kwv, nkw);
        const jv *ea = kw("ensure_ascii", kwn, kwv, nkw);
        int indent = -1;
        if (ind && ind->t != JT_NONE) {
            if (ind->t == JT_STR) jx_unsupported(c, at, "tojson with a string indent");
            indent = (int)as_int(c, at, *ind);
            if (indent < 0) indent = 0;
            if (indent > 64) jx_unsupported(c, at, "tojson indent above 64");
        }
        const char *isep = indent >= 0 ? "," : ", ", *ksep = ": ";
        if (sep && sep->t != JT_NONE) {
            if (sep->t != JT_LIST || sep->u.l->n != 2 || sep->u.l->v[0].t != JT_STR || sep->u.l->v[1].t != JT_STR)
                jx_raise(c, at, "tojson separators must be a pair of strings");
            isep = sep->u.l->v[0].u.s->s;
            ksep = sep->u.l->v[1].u.s->s;
        }
        jbuf b = {0};
        c->json_ascii = ea && jv_truthy(ea);
        jv_json_into(c, at, &b, &v, indent, 0, isep, ksep, sk && jv_truthy(sk));
        c->json_ascii = 0;
        return jv_str(c, b.p ? b.p : "", b.n);
    }
    if (IS("list")) {
        jlist *l = jx_iterate(c, at, v), *r = jl_new(c, l->n);
        for (size_t i = 0; i < l->n; i++) jl_push(c, r, l->v[i]);
        return jv_list(r);
    }
    if (IS("first") && v.t == JT_LIST && v.u.l->gen == 1)
        return v.u.l->pos < v.u.l->n ? v.u.l->v[v.u.l->pos++] : jv_undef(NULL);
    if (IS("last") && v.t == JT_LIST && v.u.l->gen == 1) jx_raise(c, at, "'generator' object is not reversible");
    if (IS("first") || IS("last")) {
        jlist *l = jx_iterate(c, at, v);
        if (!l->n) return jv_undef(NULL);
        return IS("first") ? l->v[0] : l->v[l->n - 1];
    }
    if (IS("items")) {
        if (v.t == JT_UNDEF) return jv_list(jl_new(c, 0));
        if (v.t != JT_DICT) jx_raise(c, at, "can only get item pairs from a mapping");
        return jx_method(c, at, v, "items", NULL, 0, NULL, NULL, 0);
    }
    if (IS("dictsort")) {
        if (v.t != JT_DICT) jx_raise(c, at, "dictsort needs a mapping");
        if (na || nkw) jx_unsupported(c, at, "dictsort with arguments");
        jv items = jx_method(c, at, v, "items", NULL, 0, NULL, NULL, 0);
        jstr *k0 = js_new(c->a, "0", 1);
        if (!k0) jx_oom(c);
        return sort_list(c, at, items.u.l, 0, k0, 0);
    }
    if (IS("join")) {
        const jv *sep = ARG(0, "d"), *attr = ARG(1, "attribute");
        jlist *l = jx_iterate(c, at, v);
        jbuf b = {0};
        for (size_t i = 0; i < l->n; i++) {
            if (i && sep) jv_str_into(c, &b, sep);
            jv x = attr ? attr_path(c, at, l->v[i], jv_to_str(c, attr)) : l->v[i];
            jv_str_into(c, &b, &x);
        }
        return jv_str(c, b.p ? b.p : "", b.n);
    }
    if (IS("upper") || IS("lower") || IS("capitalize") || IS("title")) {
        jstr *s = jv_to_str(c, &v);
        return js_case(c, s, IS("lower") ? 0 : IS("upper") ? 1 : IS("capitalize") ? 2 : 3);
    }
    if (IS("trim")) {
        const jv *ch = ARG(0, "chars");
        return js_strip(c, jv_to_str(c, &v), ch && ch->t != JT_NONE ? jv_to_str(c, ch) : NULL, 1, 1);
    }
    if (IS("replace")) {
        const jv *o = ARG(0, "old"), *nw = ARG(1, "new"), *cnt = ARG(2, "count");
        if (!o || !nw) jx_raise(c, at, "replace needs old and new");
        return js_replace(c, jv_to_str(c, &v), jv_to_str(c, o), jv_to_str(c, nw),
                          cnt && cnt->t != JT_NONE ? as_int(c, at, *cnt) : -1);
    }
    if (IS("selectattr") || IS("rejectattr") || IS("select") || IS("reject")) {
        int by_attr = n[6] == 'a', keep = n[0] == 's';
        jlist *r = jl_new(c, 0);
        r->gen = 1;
        if (!jv_truthy(&v)) return jv_list(r); /* jinja2: "if value:" before iterating */
        jlist *l = jx_iterate(c, at, v);
        if (by_attr && (!na || a[0].t != JT_STR)) jx_raise(c, at, "%s needs an attribute name", n);
        size_t ti = by_attr ? 1 : 0;
        const char *test = na > ti ? (a[ti].t == JT_STR ? a[ti].u.s->s : NULL) : NULL;
        if (na > ti && !test) jx_raise(c, at, "%s: the test name must be a string", n);
        if (test && !jx_has_test(test)) jx_unsupported(c, at, "the test '%s'", test);
        for (size_t i = 0; i < l->n; i++) {
            jv x = by_attr ? attr_path(c, at, l->v[i], a[0].u.s) : l->v[i];
            int ok = test ? jx_test(c, at, test, x, a + ti + 1, na - ti - 1) : jv_truthy(&x);
            if (ok == keep) jl_push(c, r, l->v[i]);
        }
        return jv_list(r);
    }
    if (IS("map")) {
        jlist *r = jl_new(c, 0);
        r->gen = 1;
        if (!jv_truthy(&v)) return jv_list(r);
        jlist *l = jx_iterate(c, at, v);
        const jv *attr = kw("attribute", kwn, kwv, nkw), *dflt = kw("default", kwn, kwv, nkw);
        if (attr) {
            jstr *path = jv_to_str(c, attr);
            for (size_t i = 0; i < l->n; i++) {
                jv x = attr_path(c, at, l->v[i], path);
                jl_push(c, r, x.t == JT_UNDEF && dflt ? *dflt : x);
            }
            return jv_list(r);
        }
        if (!na || a[0].t != JT_STR) jx_raise(c, at, "map needs a filter name or attribute=");
        const char *f = a[0].u.s->s;
        if (!jx_has_filter(f)) jx_unsupported(c, at, "the filter '%s'", f);
        for (size_t i = 0; i < l->n; i++) jl_push(c, r, jx_filter(c, at, f, l->v[i], a + 1, na - 1, kwn, kwv, nkw));
        return jv_list(r);
    }
    if (IS("int")) {
        const jv *dv = ARG(0, "default");
        jv d = dv ? *dv : jv_int(0);
        if (v.t == JT_INT) return v;
        if (v.t == JT_BOOL) return jv_int(v.u.b);
        if (v.t == JT_FLOAT) return isfinite(v.u.f) && fabs(v.u.f) < 9e18 ? jv_int((int64_t)v.u.f) : d;
        if (v.t == JT_STR) {
            jv t = js_strip(c, v.u.s, NULL, 1, 1);
            char *end;
            long long x = strtoll(t.u.s->s, &end, 10);
            if (t.u.s->len && *end == 0) return jv_int(x);
            double f = strtod(t.u.s->s, &end);
            if (t.u.s->len && *end == 0 && isfinite(f)) return jv_int((int64_t)f);
        }
        return d;
    }
    if (IS("float")) {
        const jv *dv = ARG(0, "default");
        if (jv_is_num(&v)) return jv_float(jv_num(&v));
        if (v.t == JT_STR) {
            char *end;
            jv t = js_strip(c, v.u.s, NULL, 1, 1);
            double f = strtod(t.u.s->s, &end);
            if (t.u.s->len && *end == 0) return jv_float(f);
        }
        return dv ? *dv : jv_float(0);
    }
    if (IS("abs")) {
        if (v.t == JT_INT) return jv_int(v.u.i < 0 ? -v.u.i : v.u.i);
        if (v.t == JT_FLOAT) return jv_float(fabs(v.u.f));
        jx_raise(c, at, "bad operand type for abs()");
    }
    if (IS("indent")) {
        const jv *w = ARG(0, "width"), *first = ARG(1, "first"), *blank = ARG(2, "blank");
        jbuf ind = {0};
        if (w && w->t == JT_STR) jb_put(c, &ind, w->u.s->s, w->u.s->len);
        else for (int64_t i = 0, k = w ? as_int(c, at, *w) : 4; i < k && i < 256; i++) jb_putc(c, &ind, ' ');
        jstr *s = jv_to_str(c, &v);
        jv lines = jx_method(c, at, jv_str(c, s->s, s->len), "splitlines", NULL, 0, NULL, NULL, 0);
        jbuf b = {0};
        if (first && jv_truthy(first)) jb_put(c, &b, ind.p, ind.n);
        for (size_t i = 0; i < lines.u.l->n; i++) {
            const jstr *ln = lines.u.l->v[i].u.s;
            if (i) {
                jb_putc(c, &b, '\n');
                if (ln->len || (blank && jv_truthy(blank))) jb_put(c, &b, ind.p, ind.n);
            }
            jb_put(c, &b, ln->s, ln->len);
        }
        return jv_str(c, b.p ? b.p : "", b.n);
    }
    if (IS("reverse")) {
        if (v.t == JT_STR) {
            jlist *l = jx_iterate(c, at, v);
            jbuf b = {0};
            for (size_t i = l->n; i-- > 0;) jb_put(c, &b, l->v[i].u.s->s, l->v[i].u.s->len);
            return jv_str(c, b.p ? b.p : "", b.n);
        }
        jlist *l = jx_iterate(c, at, v), *r = jl_new(c, l->n);
        for (size_t i = l->n; i-- > 0;) jl_push(c, r, l->v[i]);
        return jv_list(r);
    }
    if (IS("unique")) {
        if (na || nkw) jx_unsupported(c, at, "unique with arguments");
        jlist *l = jx_iterate(c, at, v), *r = jl_new(c, 0);
        for (size_t i = 0; i < l->n; i++) {
            int seen = 0;
            jv k = l->v[i].t == JT_STR ? js_case(c, l->v[i].u.s, 0) : l->v[i];
            for (size_t j = 0; j < r->n && !seen; j++) {
                jv o = r->v[j].t == JT_STR ? js_case(c, r->v[j].u.s, 0) : r->v[j];
                seen = jv_eq(&k, &o);
            }
            if (!seen) jl_push(c, r, l->v[i]);
        }
        return jv_list(r);
    }
    if (IS("sort")) {
        const jv *rev = ARG(0, "reverse"), *cs = ARG(1, "case_sensitive"), *attr = ARG(2, "attribute");
        return sort_list(c, at, jx_iterate(c, at, v), rev && jv_truthy(rev), attr ? jv_to_str(c, attr) : NULL,
                         cs && jv_truthy(cs));
    }
    if (IS("min") || IS("max")) {
        if (na || nkw) jx_unsupported(c, at, "%s with arguments", n);
        jlist *l = jx_iterate(c, at, v);
        if (!l->n) return jv_undef(NULL);
        jv s = sort_list(c, at, l, 0, NULL, 0);
        return IS("min") ? s.u.l->v[0] : s.u.l->v[s.u.l->n - 1];
    }
    if (IS("sum")) {
        const jv *attr = ARG(0, "attribute"), *start = ARG(1, "start");
        jlist *l = jx_iterate(c, at, v);
        jv acc = start ? *start : jv_int(0);
        for (size_t i = 0; i < l->n; i++) {
            jv x = attr ? attr_path(c, at, l->v[i], jv_to_str(c, attr)) : l->v[i];
            if (!jv_is_num(&x) || !jv_is_num(&acc)) jx_raise(c, at, "sum of non-numbers");
            if (acc.t == JT_FLOAT || x.t == JT_FLOAT) acc = jv_float(jv_num(&acc) + jv_num(&x));
            else acc = jv_int(as_int(c, at, acc) + as_int(c, at, x));
        }
        return acc;
    }
    if (IS("round")) {
        const jv *pr = ARG(0, "precision"), *me = ARG(1, "method");
        if (me && !(me->t == JT_STR && !strcmp(me->u.s->s, "common"))) jx_unsupported(c, at, "round with a method other than 'common'");
        if (!jv_is_num(&v)) jx_raise(c, at, "round needs a number");
        int64_t p = pr ? as_int(c, at, *pr) : 0;
        if (p < 0 || p > 15) jx_unsupported(c, at, "round precision %lld", (long long)p);
        double m = pow(10, (double)p), x = jv_num(&v) * m;
        double r = x < 0 ? ceil(x - 0.5) : floor(x + 0.5);
        return jv_float(r / m);
    }
    if (IS("escape") || IS("e")) {
        if (v.t == JT_STR && v.markup) return v;
        return js_escape(c, jv_to_str(c, &v));
    }
    if (IS("wordcount")) {
        jstr *s = jv_to_str(c, &v);
        int64_t words = 0, in = 0;
        for (size_t i = 0; i < s->len; i++) {
            char ch = s->s[i];
            int w = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || (unsigned char)ch >= 0x80;
            if (w && !in) words++;
            in = w;
        }
        return jv_int(words);
    }
    jx_unsupported(c, at, "the filter '%s'", n);
#undef IS
#undef ARG
}
