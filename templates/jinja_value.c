/* jinja_value.c - the interpreter's values: an arena they all live in, constructors, Python's
 * truthiness / equality / ordering, and printing exactly as CPython does (str(), repr(), float
 * repr, json.dumps with ensure_ascii=False as transformers' tojson filter calls it), because a
 * chat template's output is compared byte for byte with what jinja2 produces. */
#include "budget.h"
#include "jinja_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */
struct ja_chunk { ja_chunk *next; size_t used, cap; _Alignas(16) unsigned char mem[]; };

void ja_init(jarena *a, size_t limit, const char *budget) {
    a->head = NULL;
    a->total = 0;
    a->limit = limit;
    a->budget = budget;
}

void ja_oom_msg(const jarena *a, char *buf, size_t cap) {
    snprintf(buf, cap, "the template needs more than the %zu MB memory budget (%s, budget.h)", a->limit >> 20,
             a->budget ? a->budget : "the caller's");
}

void ja_free(jarena *a) {
    for (ja_chunk *c = a->head, *n; c; c = n) { n = c->next; free(c); }
    a->head = NULL;
    a->total = 0;
}

void *ja_alloc(jarena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    ja_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        if (a->total + cap > a->limit || cap > SIZE_MAX - sizeof *c) return NULL;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
        a->total += cap;
    }
    void *p = c->mem + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

int ja_append(jarena *a, char **p, size_t *len, size_t *cap, const char *s, size_t n, size_t first,
              size_t max) {
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap : first / 2;
        do {
            if (nc > SIZE_MAX / 2) return JA_NOMEM;
            nc *= 2;
        } while (nc < *len + n + 1);
        if (max && nc > max) return JA_TOO_BIG;
        char *grown = ja_alloc(a, nc);
        if (!grown) return JA_NOMEM;
        if (*len) memcpy(grown, *p, *len);
        *p = grown;
        *cap = nc;
    }
    memcpy(*p + *len, s, n);
    *len += n;
    (*p)[*len] = 0;
    return 0;
}

/* ---- errors ---- */
void ja_verr(sn_err *err, sn_status code, const char *lead, const char *tail, const char *fmt, va_list ap) {
    char msg[700];
    vsnprintf(msg, sizeof msg, fmt, ap);
    sn_err_set(err, code, "%s%s%s%s", code == SN_EUNSUPPORTED ? "cannot render: " : "", lead, msg, tail);
}

/* ---- constructors ---- */
jv jv_undef(const char *name) { jv v = {.t = JT_UNDEF}; v.undef_name = name; return v; }
jv jv_none(void) { return (jv){.t = JT_NONE}; }
jv jv_bool(int b) { jv v = {.t = JT_BOOL}; v.u.b = b != 0; return v; }
jv jv_int(int64_t i) { jv v = {.t = JT_INT}; v.u.i = i; return v; }
jv jv_float(double f) { jv v = {.t = JT_FLOAT}; v.u.f = f; return v; }
jv jv_strv(jstr *s) { jv v = {.t = JT_STR}; v.u.s = s; return v; }
jv jv_list(jlist *l) { jv v = {.t = JT_LIST}; v.u.l = l; return v; }
jv jv_dict(jdict *d) { jv v = {.t = JT_DICT}; v.u.d = d; return v; }

jstr *js_new(jarena *a, const char *s, size_t n) {
    if (n > SIZE_MAX - sizeof(jstr) - 1) return NULL;
    jstr *r = ja_alloc(a, sizeof *r + n + 1);
    if (!r) return NULL;
    r->len = n;
    if (n) memcpy(r->s, s, n);
    r->s[n] = 0;
    return r;
}

jv jv_str(jctx *c, const char *s, size_t n) {
    jstr *r = js_new(c->a, s, n);
    if (!r) jx_oom(c);
    return jv_strv(r);
}

jv jv_cstr(jctx *c, const char *s) { return jv_str(c, s, strlen(s)); }

jlist *jl_new(jctx *c, size_t cap) {
    jlist *l = ja_alloc(c->a, sizeof *l);
    if (!l) jx_oom(c);
    if (cap) {
        if (cap > SIZE_MAX / sizeof(jv) || !(l->v = ja_alloc(c->a, cap * sizeof(jv)))) jx_oom(c);
        l->cap = cap;
    }
    return l;
}

void jl_push(jctx *c, jlist *l, jv v) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        jv *nv = nc < SIZE_MAX / sizeof(jv) ? ja_alloc(c->a, nc * sizeof(jv)) : NULL;
        if (!nv) jx_oom(c);
        if (l->n) memcpy(nv, l->v, l->n * sizeof(jv));
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = v;
}

jdict *jd_new(jctx *c, size_t cap) {
    jdict *d = ja_alloc(c->a, sizeof *d);
    if (!d) jx_oom(c);
    if (cap) {
        if (cap > SIZE_MAX / sizeof(jv) || !(d->k = ja_alloc(c->a, cap * sizeof(jv))) ||
            !(d->v = ja_alloc(c->a, cap * sizeof(jv))))
            jx_oom(c);
        d->cap = cap;
    }
    return d;
}

static long jd_find(const jdict *d, const jv *k) {
    for (size_t i = 0; i < d->n; i++)
        if (jv_eq(&d->k[i], k)) return (long)i;
    return -1;
}

void jd_set(jctx *c, jdict *d, jv k, jv v) {
    long i = jd_find(d, &k);
    if (i >= 0) { d->v[i] = v; return; }
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 8;
        jv *nk = nc < SIZE_MAX / sizeof(jv) ? ja_alloc(c->a, nc * sizeof(jv)) : NULL;
        jv *nv = nk ? ja_alloc(c->a, nc * sizeof(jv)) : NULL;
        if (!nv) jx_oom(c);
        if (d->n) { memcpy(nk, d->k, d->n * sizeof(jv)); memcpy(nv, d->v, d->n * sizeof(jv)); }
        d->k = nk;
        d->v = nv;
        d->cap = nc;
    }
    d->k[d->n] = k;
    d->v[d->n++] = v;
}

int jd_get(const jdict *d, jv k, jv *out) {
    long i = jd_find(d, &k);
    if (i < 0) return 0;
    *out = d->v[i];
    return 1;
}

int jd_get_s(const jdict *d, const char *k, jv *out) {
    size_t kl = strlen(k);
    for (size_t i = 0; i < d->n; i++) {
        const jv *x = &d->k[i];
        if (x->t == JT_STR && x->u.s->len == kl && memcmp(x->u.s->s, k, kl) == 0) {
            *out = d->v[i];
            return 1;
        }
    }
    return 0;
}

jv jv_from_json(jctx *c, const cJSON *j) {
    if (!j || cJSON_IsNull(j)) return jv_none();
    if (cJSON_IsBool(j)) return jv_bool(cJSON_IsTrue(j));
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        /* JSON has one number type; a whole number within int64 range becomes a Python int, as
         * json.loads makes "3" (cJSON cannot tell "3.0" from "3": such input reads as an int). */
        if (d == floor(d) && fabs(d) < 9.2e18) return jv_int((int64_t)d);
        return jv_float(d);
    }
    if (cJSON_IsString(j)) return jv_cstr(c, j->valuestring);
    if (cJSON_IsArray(j)) {
        jlist *l = jl_new(c, (size_t)cJSON_GetArraySize(j));
        const cJSON *e;
        cJSON_ArrayForEach(e, j) jl_push(c, l, jv_from_json(c, e));
        return jv_list(l);
    }
    if (cJSON_IsObject(j)) {
        jdict *d = jd_new(c, (size_t)cJSON_GetArraySize(j));
        const cJSON *e;
        cJSON_ArrayForEach(e, j) jd_set(c, d, jv_cstr(c, e->string ? e->string : ""), jv_from_json(c, e));
        return jv_dict(d);
    }
    return jv_none();
}

/* ---- Python semantics ---- */
int jv_truthy(const jv *v) {
    switch (v->t) {
    case JT_UNDEF: case JT_NONE: return 0;
    case JT_BOOL: return v->u.b;
    case JT_INT: return v->u.i != 0;
    case JT_FLOAT: return v->u.f != 0;
    case JT_STR: return v->u.s->len != 0;
    case JT_LIST: return v->u.l->gen == 1 || v->u.l->n != 0;
    case JT_DICT: return v->u.d->n != 0 || v->u.d->ns; /* a namespace object is always true */
    default: return 1;
    }
}

int jv_is_num(const jv *v) { return v->t == JT_INT || v->t == JT_FLOAT || v->t == JT_BOOL; }

double jv_num(const jv *v) {
    return v->t == JT_FLOAT ? v->u.f : v->t == JT_INT ? (double)v->u.i : v->t == JT_BOOL ? v->u.b : 0;
}

int jv_eq(const jv *a, const jv *b) {
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a->t != JT_FLOAT && b->t != JT_FLOAT)
            return (a->t == JT_INT ? a->u.i : a->u.b) == (b->t == JT_INT ? b->u.i : b->u.b);
        return jv_num(a) == jv_num(b);
    }
    if (a->t != b->t) return 0;
    switch (a->t) {
    case JT_UNDEF: case JT_NONE: return 1;
    case JT_STR: return a->u.s->len == b->u.s->len && memcmp(a->u.s->s, b->u.s->s, a->u.s->len) == 0;
    case JT_LIST:
        if (a->u.l->n != b->u.l->n) return 0;
        for (size_t i = 0; i < a->u.l->n; i++)
            if (!jv_eq(&a->u.l->v[i], &b->u.l->v[i])) return 0;
        return 1;
    case JT_DICT:
        if (a->u.d->ns || b->u.d->ns) return a->u.d == b->u.d;
        if (a->u.d->n != b->u.d->n) return 0;
        for (size_t i = 0; i < a->u.d->n; i++) {
            jv o;
            if (!jd_get(b->u.d, a->u.d->k[i], &o) || !jv_eq(&a->u.d->v[i], &o)) return 0;
        }
        return 1;
    case JT_MACRO: return a->u.m == b->u.m;
    case JT_FUNC: return a->u.fn == b->u.fn;
    default: return 0;
    }
}

const char *jv_type_name(const jv *v) {
    static const char *n[] = {"Undefined", "NoneType", "bool", "int", "float", "str", "list", "dict",
                              "Macro", "function"};
    if (v->t == JT_LIST && v->u.l->tuple) return "tuple";
    if (v->t == JT_LIST && v->u.l->gen) return v->u.l->gen == 1 ? "generator" : "dict_items";
    return n[v->t];
}

int jv_cmp(jctx *c, const jnode *at, const jv *a, const jv *b) {
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a->t != JT_FLOAT && b->t != JT_FLOAT) {
            int64_t x = a->t == JT_INT ? a->u.i : a->u.b, y = b->t == JT_INT ? b->u.i : b->u.b;
            return (x > y) - (x < y);
        }
        double x = jv_num(a), y = jv_num(b);
        return (x > y) - (x < y);
    }
    if (a->t == JT_STR && b->t == JT_STR) {
        size_t n = a->u.s->len < b->u.s->len ? a->u.s->len : b->u.s->len;
        int r = memcmp(a->u.s->s, b->u.s->s, n); /* UTF-8 byte order == code point order */
        if (r) return r;
        return (a->u.s->len > b->u.s->len) - (a->u.s->len < b->u.s->len);
    }
    if (a->t == JT_LIST && b->t == JT_LIST) {
        for (size_t i = 0; i < a->u.l->n && i < b->u.l->n; i++) {
            if (jv_eq(&a->u.l->v[i], &b->u.l->v[i])) continue;
            return jv_cmp(c, at, &a->u.l->v[i], &b->u.l->v[i]);
        }
        return (a->u.l->n > b->u.l->n) - (a->u.l->n < b->u.l->n);
    }
    jx_raise(c, at, "'<' not supported between instances of '%s' and '%s'", jv_type_name(a),
             jv_type_name(b));
}

/* ---- buffers ---- */
void jb_put(jctx *c, jbuf *b, const char *s, size_t n) {
    if (n == 0) return;
    int r = ja_append(c->a, &b->p, &b->n, &b->cap, s, n, 256, c->max_output ? 4 * c->max_output + 1024 : 0);
    if (r == JA_TOO_BIG)
        jx_unsupported(c, NULL, "output larger than the %zu-byte budget (%s)", c->max_output, JX_OUTPUT_BUDGET(c));
    if (r) jx_oom(c);
}

void jb_putc(jctx *c, jbuf *b, char ch) { jb_put(c, b, &ch, 1); }

void py_float_repr(double f, char *out, size_t cap) {
    if (isnan(f)) { snprintf(out, cap, "nan"); return; }
    if (isinf(f)) { snprintf(out, cap, f < 0 ? "-inf" : "inf"); return; }
    char buf[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
        if (strtod(buf, NULL) == f) break;
    }
    /* buf = [-]d.ddde[+-]XX : digits and decimal exponent */
    char digits[24];
    size_t nd = 0;
    const char *p = buf;
    int neg = *p == '-';
    if (neg) p++;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    size_t o = 0;
#define OUT(ch) do { if (o + 1 < cap) out[o++] = (ch); } while (0)
    if (neg) OUT('-');
    if (exp < -4 || exp >= 16) {
        OUT(digits[0]);
        if (nd > 1) { OUT('.'); for (size_t i = 1; i < nd; i++) OUT(digits[i]); }
        char e[8];
        snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        for (char *q = e; *q; q++) OUT(*q);
    } else if (exp < 0) {
        OUT('0'); OUT('.');
        for (int i = -1; i > exp; i--) OUT('0');
        for (size_t i = 0; i < nd; i++) OUT(digits[i]);
    } else {
        for (int i = 0; i <= exp; i++) OUT((size_t)i < nd ? digits[i] : '0');
        OUT('.');
        if ((size_t)exp + 1 >= nd) OUT('0');
        else for (size_t i = (size_t)exp + 1; i < nd; i++) OUT(digits[i]);
    }
#undef OUT
    out[o] = 0;
}

static void repr_str(jctx *c, jbuf *b, const jstr *s) {
    int has_sq = memchr(s->s, '\'', s->len) != NULL, has_dq = memchr(s->s, '"', s->len) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    jb_putc(c, b, q);
    for (size_t i = 0; i < s->len; i++) {
        unsigned char ch = (unsigned char)s->s[i];
        char e[8];
        if (ch == '\\' || ch == (unsigned char)q) { jb_putc(c, b, '\\'); jb_putc(c, b, (char)ch); }
        else if (ch == '\n') jb_put(c, b, "\\n", 2);
        else if (ch == '\r') jb_put(c, b, "\\r", 2);
        else if (ch == '\t') jb_put(c, b, "\\t", 2);
        else if (ch < 0x20 || ch == 0x7f) { snprintf(e, sizeof e, "\\x%02x", ch); jb_put(c, b, e, 4); }
        else jb_putc(c, b, (char)ch);
    }
    jb_putc(c, b, q);
}

void jv_repr_into(jctx *c, jbuf *b, const jv *v) {
    switch (v->t) {
    case JT_STR: repr_str(c, b, v->u.s); return;
    case JT_LIST: {
        const jlist *l = v->u.l;
        if (l->gen) jx_unsupported(c, NULL, "printing a %s object", l->gen == 1 ? "generator" : "dict view");
        jb_putc(c, b, l->tuple ? '(' : '[');
        for (size_t i = 0; i < l->n; i++) {
            if (i) jb_put(c, b, ", ", 2);
            jx_step(c, NULL);
            jv_repr_into(c, b, &l->v[i]);
        }
        if (l->tuple && l->n == 1) jb_putc(c, b, ',');
        jb_putc(c, b, l->tuple ? ')' : ']');
        return;
    }
    case JT_DICT: {
        const jdict *d = v->u.d;
        if (d->ns) jb_put(c, b, "<Namespace ", 11);
        jb_putc(c, b, '{');
        for (size_t i = 0; i < d->n; i++) {
            if (i) jb_put(c, b, ", ", 2);
            jx_step(c, NULL);
            jv_repr_into(c, b, &d->k[i]);
            jb_put(c, b, ": ", 2);
            jv_repr_into(c, b, &d->v[i]);
        }
        jb_putc(c, b, '}');
        if (d->ns) jb_putc(c, b, '>');
        return;
    }
    default: jv_str_into(c, b, v);
    }
}

void jv_str_into(jctx *c, jbuf *b, const jv *v) {
    char num[48];
    switch (v->t) {
    case JT_UNDEF: return;
    case JT_NONE: jb_put(c, b, "None", 4); return;
    case JT_BOOL: if (v->u.b) jb_put(c, b, "True", 4); else jb_put(c, b, "False", 5); return;
    case JT_INT: snprintf(num, sizeof num, "%lld", (long long)v->u.i); jb_put(c, b, num, strlen(num)); return;
    case JT_FLOAT: py_float_repr(v->u.f, num, sizeof num); jb_put(c, b, num, strlen(num)); return;
    case JT_STR: jb_put(c, b, v->u.s->s, v->u.s->len); return;
    case JT_LIST: case JT_DICT: jv_repr_into(c, b, v); return;
    case JT_MACRO: case JT_FUNC: jx_unsupported(c, NULL, "printing a function object");
    }
}

jstr *jv_to_str(jctx *c, const jv *v) {
    if (v->t == JT_STR) return v->u.s;
    jbuf b = {0};
    jv_str_into(c, &b, v);
    jstr *s = js_new(c->a, b.p ? b.p : "", b.n);
    if (!s) jx_oom(c);
    return s;
}

static void json_str(jctx *c, jbuf *b, const char *s, size_t n) {
    jb_putc(c, b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char e[8];
        switch (ch) {
        case '"': jb_put(c, b, "\\\"", 2); break;
        case '\\': jb_put(c, b, "\\\\", 2); break;
        case '\n': jb_put(c, b, "\\n", 2); break;
        case '\r': jb_put(c, b, "\\r", 2); break;
        case '\t': jb_put(c, b, "\\t", 2); break;
        case '\b': jb_put(c, b, "\\b", 2); break;
        case '\f': jb_put(c, b, "\\f", 2); break;
        default:
            if (ch < 0x20) { snprintf(e, sizeof e, "\\u%04x", ch); jb_put(c, b, e, 6); }
            else if (ch >= 0x80 && c->json_ascii) { /* \uXXXX, surrogate pairs above U+FFFF */
                const unsigned char *u = (const unsigned char *)s + i;
                size_t l = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
                if (i + l > n) l = n - i;
                uint32_t cp = l == 2 ? (uint32_t)(u[0] & 31) << 6 | (u[1] & 63)
                            : l == 3 ? (uint32_t)(u[0] & 15) << 12 | (uint32_t)(u[1] & 63) << 6 | (u[2] & 63)
                            : l == 4 ? (uint32_t)(u[0] & 7) << 18 | (uint32_t)(u[1] & 63) << 12 | (uint32_t)(u[2] & 63) << 6 | (u[3] & 63)
                                     : ch;
                char e2[16];
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    snprintf(e2, sizeof e2, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
                } else snprintf(e2, sizeof e2, "\\u%04x", cp);
                jb_put(c, b, e2, strlen(e2));
                i += l - 1;
            }
            else jb_putc(c, b, (char)ch);
        }
    }
    jb_putc(c, b, '"');
}

static void json_nl(jctx *c, jbuf *b, int indent, int depth) {
    jb_putc(c, b, '\n');
    for (int i = 0; i < indent * depth; i++) jb_putc(c, b, ' ');
}

/* json.dumps(v, ensure_ascii=False, indent=indent (<0: None), separators, sort_keys) */
void jv_json_into(jctx *c, const jnode *at, jbuf *b, const jv *v, int indent, int depth,
                  const char *item_sep, const char *key_sep, int sort_keys) {
    char num[48];
    if (depth > 200) jx_unsupported(c, at, "tojson nesting deeper than 200");
    jx_step(c, at);
    switch (v->t) {
    case JT_NONE: jb_put(c, b, "null", 4); return;
    case JT_BOOL: if (v->u.b) jb_put(c, b, "true", 4); else jb_put(c, b, "false", 5); return;
    case JT_INT: jv_str_into(c, b, v); return;
    case JT_FLOAT:
        if (isnan(v->u.f)) jb_put(c, b, "NaN", 3);
        else if (isinf(v->u.f)) { if (v->u.f < 0) jb_put(c, b, "-Infinity", 9); else jb_put(c, b, "Infinity", 8); }
        else { py_float_repr(v->u.f, num, sizeof num); jb_put(c, b, num, strlen(num)); }
        return;
    case JT_STR: json_str(c, b, v->u.s->s, v->u.s->len); return;
    case JT_LIST: {
        const jlist *l = v->u.l;
        if (l->gen) jx_raise(c, at, "Object of type %s is not JSON serializable", l->gen == 1 ? "generator" : "dict_items");
        if (!l->n) { jb_put(c, b, "[]", 2); return; }
        jb_putc(c, b, '[');
        for (size_t i = 0; i < l->n; i++) {
            if (i) jb_put(c, b, item_sep, strlen(item_sep));
            if (indent >= 0) json_nl(c, b, indent, depth + 1);
            jv_json_into(c, at, b, &l->v[i], indent, depth + 1, item_sep, key_sep, sort_keys);
        }
        if (indent >= 0) json_nl(c, b, indent, depth);
        jb_putc(c, b, ']');
        return;
    }
    case JT_DICT: {
        const jdict *d = v->u.d;
        if (d->ns) jx_raise(c, at, "Object of type Namespace is not JSON serializable");
        if (!d->n) { jb_put(c, b, "{}", 2); return; }
        size_t *ord = ja_alloc(c->a, d->n * sizeof *ord);
        if (!ord) jx_oom(c);
        for (size_t i = 0; i < d->n; i++) {
            ord[i] = i;
            if (d->k[i].t != JT_STR)
                jx_unsupported(c, at, "tojson of a dict with a %s key", jv_type_name(&d->k[i]));
        }
        if (sort_keys) /* insertion sort: dicts in templates are small */
            for (size_t i = 1; i < d->n; i++)
                for (size_t j = i; j > 0 && jv_cmp(c, at, &d->k[ord[j - 1]], &d->k[ord[j]]) > 0; j--) {
                    size_t t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t;
                }
        jb_putc(c, b, '{');
        for (size_t i = 0; i < d->n; i++) {
            if (i) jb_put(c, b, item_sep, strlen(item_sep));
            if (indent >= 0) json_nl(c, b, indent, depth + 1);
            json_str(c, b, d->k[ord[i]].u.s->s, d->k[ord[i]].u.s->len);
            jb_put(c, b, key_sep, strlen(key_sep));
            jv_json_into(c, at, b, &d->v[ord[i]], indent, depth + 1, item_sep, key_sep, sort_keys);
        }
        if (indent >= 0) json_nl(c, b, indent, depth);
        jb_putc(c, b, '}');
        return;
    }
    case JT_UNDEF: jx_raise(c, at, "Object of type Undefined is not JSON serializable");
    default: jx_raise(c, at, "Object of type %s is not JSON serializable", jv_type_name(v));
    }
}
