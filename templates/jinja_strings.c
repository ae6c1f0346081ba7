/* jinja_strings.c - Python str / dict / list methods as chat templates call them
 * (content.startswith('<think>'), content.split('</think>')[-1].strip(), message.get('x'),
 * tools.items(), '{}'.format(x)). Strings are UTF-8; lengths, indices and strip() work on code
 * points with Python's notion of whitespace. Case mapping covers ASCII only (a non-ASCII letter is
 * left as is, so such a template would show up as a difference in the oracle test, not silently).
 * Mutating methods raise, as jinja2's ImmutableSandboxedEnvironment does. */
#include "jinja_int.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Code point at s[0..n) (n > 0) and its length, read as llama.cpp and the tokenizers read text. */
static uint32_t dec_utf8(const char *s, size_t n, size_t *len) {
    size_t off = 0;
    uint32_t cp = sn_utf8_next((const unsigned char *)s, n, &off);
    *len = off;
    return cp;
}

int js_is_space(uint32_t cp) { /* str.isspace() */
    return (cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

size_t js_cplen(const jstr *s) {
    size_t k = 0;
    for (size_t i = 0; i < s->len; i++) k += ((unsigned char)s->s[i] & 0xc0) != 0x80;
    return k;
}

static int in_chars(const jstr *chars, const char *p, size_t l) {
    for (size_t i = 0; i < chars->len;) {
        size_t cl;
        dec_utf8(chars->s + i, chars->len - i, &cl);
        if (cl == l && memcmp(chars->s + i, p, l) == 0) return 1;
        i += cl;
    }
    return 0;
}

/* strip(chars): chars NULL = whitespace */
jv js_strip(jctx *c, const jstr *s, const jstr *chars, int left, int right) {
    size_t b = 0, e = s->len;
    while (left && b < e) {
        size_t l;
        uint32_t cp = dec_utf8(s->s + b, e - b, &l);
        if (chars ? !in_chars(chars, s->s + b, l) : !js_is_space(cp)) break;
        b += l;
    }
    while (right && e > b) {
        size_t st = e - 1;
        while (st > b && ((unsigned char)s->s[st] & 0xc0) == 0x80) st--;
        size_t l;
        uint32_t cp = dec_utf8(s->s + st, e - st, &l);
        if (chars ? !in_chars(chars, s->s + st, l) : !js_is_space(cp)) break;
        e = st;
    }
    return jv_str(c, s->s + b, e - b);
}

/* mode: 0 lower, 1 upper, 2 capitalize, 3 title */
jv js_case(jctx *c, const jstr *s, int mode) {
    jstr *r = js_new(c->a, s->s, s->len);
    if (!r) jx_oom(c);
    int prev_cased = 0;
    for (size_t i = 0; i < r->len; i++) {
        char ch = r->s[i];
        int lo = ch >= 'a' && ch <= 'z', up = ch >= 'A' && ch <= 'Z';
        int to_up = mode == 1 || (mode == 2 && i == 0) || (mode == 3 && !prev_cased);
        if (to_up && lo) r->s[i] = (char)(ch - 32);
        else if (!to_up && up && mode != 1) r->s[i] = (char)(ch + 32);
        prev_cased = lo || up || ((unsigned char)ch >= 0x80 && mode == 3 && prev_cased);
    }
    return jv_strv(r);
}

jv js_escape(jctx *c, const jstr *s) {
    jbuf b = {0};
    for (size_t i = 0; i < s->len; i++) {
        char ch = s->s[i];
        const char *rep = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '"' ? "&#34;"
                        : ch == '\'' ? "&#39;" : NULL;
        if (rep) jb_put(c, &b, rep, strlen(rep));
        else jb_putc(c, &b, ch);
    }
    jv r = jv_str(c, b.p ? b.p : "", b.n);
    r.markup = 1;
    return r;
}

jv js_replace(jctx *c, const jstr *s, const jstr *old, const jstr *new, int64_t count) {
    jbuf b = {0};
    size_t i = 0;
    int64_t done = 0;
    if (old->len == 0) { /* Python inserts NEW between code points */
        for (; i <= s->len && (count < 0 || done < count);) {
            jb_put(c, &b, new->s, new->len);
            done++;
            if (i == s->len) { i++; break; }
            size_t l;
            dec_utf8(s->s + i, s->len - i, &l);
            jb_put(c, &b, s->s + i, l);
            i += l;
        }
        if (i < s->len) jb_put(c, &b, s->s + i, s->len - i);
        return jv_str(c, b.p ? b.p : "", b.n);
    }
    while (i < s->len) {
        const char *hit = (count < 0 || done < count) ? memmem(s->s + i, s->len - i, old->s, old->len) : NULL;
        if (!hit) break;
        jb_put(c, &b, s->s + i, (size_t)(hit - (s->s + i)));
        jb_put(c, &b, new->s, new->len);
        i = (size_t)(hit - s->s) + old->len;
        done++;
        jx_step(c, NULL);
    }
    jb_put(c, &b, s->s + i, s->len - i);
    return jv_str(c, b.p ? b.p : "", b.n);
}

static jv split(jctx *c, const jnode *at, const jstr *s, const jv *sep, int64_t maxsplit, int right) {
    jlist *l = jl_new(c, 0);
    if (sep && sep->t == JT_STR) {
        const jstr *p = sep->u.s;
        if (!p->len) jx_raise(c, at, "empty separator");
        if (right) {
            size_t end = s->len;
            int64_t done = 0;
            jlist *rev = jl_new(c, 0);
            while (maxsplit < 0 || done < maxsplit) {
                const char *hit = NULL;
                for (size_t k = end; k >= p->len; k--)
                    if (memcmp(s->s + k - p->len, p->s, p->len) == 0) { hit = s->s + k - p->len; break; }
                if (!hit) break;
                jl_push(c, rev, jv_str(c, hit + p->len, (size_t)(s->s + end - hit) - p->len));
                end = (size_t)(hit - s->s);
                done++;
            }
            jl_push(c, l, jv_str(c, s->s, end));
            for (size_t k = rev->n; k-- > 0;) jl_push(c, l, rev->v[k]);
            return jv_list(l);
        }
        size_t i = 0;
        int64_t done = 0;
        for (;;) {
            const char *hit = (maxsplit < 0 || done < maxsplit) ? memmem(s->s + i, s->len - i, p->s, p->len) : NULL;
            if (!hit) { jl_push(c, l, jv_str(c, s->s + i, s->len - i)); break; }
            jl_push(c, l, jv_str(c, s->s + i, (size_t)(hit - (s->s + i))));
            i = (size_t)(hit - s->s) + p->len;
            done++;
            jx_step(c, at);
        }
        return jv_list(l);
    }
    if (sep && sep->t != JT_NONE) jx_raise(c, at, "must be str or None, not %s", jv_type_name(sep));
    if (right && maxsplit >= 0) jx_unsupported(c, at, "rsplit() on whitespace with maxsplit");
    size_t i = 0;
    int64_t done = 0;
    for (;;) {
        size_t cl;
        while (i < s->len && js_is_space(dec_utf8(s->s + i, s->len - i, &cl))) i += cl;
        if (i >= s->len) break;
        if (maxsplit >= 0 && done >= maxsplit) { /* the rest, minus trailing whitespace */
            size_t e = s->len;
            while (e > i) {
                size_t st = e - 1;
                while (st > i && ((unsigned char)s->s[st] & 0xc0) == 0x80) st--;
                if (!js_is_space(dec_utf8(s->s + st, e - st, &cl))) break;
                e = st;
            }
            jl_push(c, l, jv_str(c, s->s + i, e - i));
            break;
        }
        size_t st = i;
        while (i < s->len && !js_is_space(dec_utf8(s->s + i, s->len - i, &cl))) i += cl;
        jl_push(c, l, jv_str(c, s->s + st, i - st));
        done++;
    }
    return jv_list(l);
}

static const jv *kwarg(const char *name, const char **kwn, jv *kwv, size_t nkw) {
    for (size_t i = 0; i < nkw; i++) if (!strcmp(kwn[i], name)) return &kwv[i];
    return NULL;
}

static const jstr *want_str(jctx *c, const jnode *at, const jv *v, const char *what) {
    if (!v || v->t != JT_STR) jx_raise(c, at, "%s: expected a string argument", what);
    return v->u.s;
}

static int64_t want_int(jctx *c, const jnode *at, const jv *v, const char *what) {
    if (v->t == JT_INT) return v->u.i;
    if (v->t == JT_BOOL) return v->u.b;
    jx_raise(c, at, "%s: expected an integer argument", what);
}

static int affix(const jstr *s, const jstr *p, int end) {
    if (p->len > s->len) return 0;
    return memcmp(s->s + (end ? s->len - p->len : 0), p->s, p->len) == 0;
}

/* '{} {name} {0}'.format(...) with no format specs */
static jv format(jctx *c, const jnode *at, const jstr *f, jv *args, size_t na, const char **kwn,
                 jv *kwv, size_t nkw) {
    jbuf b = {0};
    size_t auto_i = 0;
    for (size_t i = 0; i < f->len; i++) {
        char ch = f->s[i];
        if ((ch == '{' || ch == '}') && i + 1 < f->len && f->s[i + 1] == ch) { jb_putc(c, &b, ch); i++; continue; }
        if (ch == '}') jx_raise(c, at, "Single '}' encountered in format string");
        if (ch != '{') { jb_putc(c, &b, ch); continue; }
        const char *e = memchr(f->s + i, '}', f->len - i);
        if (!e) jx_raise(c, at, "Single '{' encountered in format string");
        size_t fl = (size_t)(e - (f->s + i + 1));
        const char *field = f->s + i + 1;
        if (memchr(field, ':', fl) || memchr(field, '!', fl) || memchr(field, '.', fl) || memchr(field, '[', fl))
            jx_unsupported(c, at, "format() field with a conversion or spec");
        jv v = jv_undef(NULL);
        if (fl == 0) { if (auto_i >= na) jx_raise(c, at, "Replacement index %zu out of range", auto_i); v = args[auto_i++]; }
        else if (field[0] >= '0' && field[0] <= '9') {
            size_t k = (size_t)strtoull(field, NULL, 10);
            if (k >= na) jx_raise(c, at, "Replacement index %zu out of range", k);
            v = args[k];
        } else {
            char nm[64];
            snprintf(nm, sizeof nm, "%.*s", (int)(fl < 63 ? fl : 63), field);
            const jv *kv = kwarg(nm, kwn, kwv, nkw);
            if (!kv) jx_raise(c, at, "KeyError: '%s'", nm);
            v = *kv;
        }
        jv_str_into(c, &b, &v);
        i = (size_t)(e - f->s);
    }
    return jv_str(c, b.p ? b.p : "", b.n);
}

jv jx_method(jctx *c, const jnode *at, jv obj, const char *m, jv *a, size_t na, const char **kwn,
             jv *kwv, size_t nkw) {
#define IS(x) (!strcmp(m, x))
#define ARG(i, nm) (na > (i) ? &a[i] : kwarg(nm, kwn, kwv, nkw))
    if (obj.t == JT_STR) {
        const jstr *s = obj.u.s;
        if (IS("startswith") || IS("endswith")) {
            const jv *p = ARG(0, "prefix");
            if (p && p->t == JT_LIST) {
                for (size_t i = 0; i < p->u.l->n; i++)
                    if (affix(s, want_str(c, at, &p->u.l->v[i], m), IS("endswith"))) return jv_bool(1);
                return jv_bool(0);
            }
            if (na > 1) jx_unsupported(c, at, "%s() with start/end", m);
            return jv_bool(affix(s, want_str(c, at, p, m), IS("endswith")));
        }
        if (IS("strip") || IS("lstrip") || IS("rstrip")) {
            const jv *ch = ARG(0, "chars");
            const jstr *chars = ch && ch->t != JT_NONE ? want_str(c, at, ch, m) : NULL;
            return js_strip(c, s, chars, !IS("rstrip"), !IS("lstrip"));
        }
        if (IS("split") || IS("rsplit")) {
            const jv *sep = ARG(0, "sep"), *mx = ARG(1, "maxsplit");
            return split(c, at, s, sep, mx ? want_int(c, at, mx, m) : -1, IS("rsplit"));
        }
        if (IS("upper")) return js_case(c, s, 1);
        if (IS("lower")) return js_case(c, s, 0);
        if (IS("capitalize")) return js_case(c, s, 2);
        if (IS("title")) return js_case(c, s, 3);
        if (IS("replace")) {
            const jv *cnt = ARG(2, "count");
            return js_replace(c, s, want_str(c, at, ARG(0, "old"), m), want_str(c, at, ARG(1, "new"), m),
                              cnt ? want_int(c, at, cnt, m) : -1);
        }
        if (IS("removeprefix") || IS("removesuffix")) {
            const jstr *p = want_str(c, at, ARG(0, "prefix"), m);
            int end = IS("removesuffix");
            if (!p->len || !affix(s, p, end)) return obj;
            return jv_str(c, s->s + (end ? 0 : p->len), s->len - p->len);
        }
        if (IS("find") || IS("rfind") || IS("count") || IS("index") || IS("rindex")) {
            if (na != 1) jx_unsupported(c, at, "str.%s() with start/end", m);
            const jstr *p = want_str(c, at, &a[0], m);
            long found = -1, cnt = 0;
            for (size_t i = 0; i + p->len <= s->len; i++) {
                if (memcmp(s->s + i, p->s, p->len) != 0) continue;
                if (found < 0 || m[0] == 'r') found = (long)i;
                cnt++;
                if (IS("count") && p->len) i += p->len - 1;
                if ((IS("find") || IS("index")) ) break;
            }
            if (IS("count")) return jv_int(p->len ? cnt : (int64_t)js_cplen(s) + 1);
            if (found < 0 && (IS("index") || IS("rindex"))) jx_raise(c, at, "substring not found");
            if (found < 0) return jv_int(-1);
            size_t cps = 0;
            for (long i = 0; i < found; i++) cps += ((unsigned char)s->s[i] & 0xc0) != 0x80;
            return jv_int((int64_t)cps);
        }
        if (IS("join")) {
            jlist *l = jx_iterate(c, at, na ? a[0] : jv_undef(NULL));
            jbuf b = {0};
            for (size_t i = 0; i < l->n; i++) {
                if (i) jb_put(c, &b, s->s, s->len);
                if (l->v[i].t != JT_STR) jx_raise(c, at, "sequence item %zu: expected str instance", i);
                jb_put(c, &b, l->v[i].u.s->s, l->v[i].u.s->len);
            }
            return jv_str(c, b.p ? b.p : "", b.n);
        }
        if (IS("format")) return format(c, at, s, a, na, kwn, kwv, nkw);
        if (IS("splitlines")) {
            jlist *l = jl_new(c, 0);
            size_t st = 0;
            for (size_t i = 0; i < s->len; i++) {
                char ch = s->s[i];
                if (ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f' || (ch >= 0x1c && ch <= 0x1e)) {
                    jl_push(c, l, jv_str(c, s->s + st, i - st));
                    if (ch == '\r' && i + 1 < s->len && s->s[i + 1] == '\n') i++;
                    st = i + 1;
                }
            }
            if (st < s->len) jl_push(c, l, jv_str(c, s->s + st, s->len - st));
            return jv_list(l);
        }
        if (IS("isdigit") || IS("isspace") || IS("isalpha") || IS("isalnum") || IS("islower") || IS("isupper")) {
            if (!s->len) return jv_bool(0);
            int cased = 0;
            for (size_t i = 0; i < s->len; i++) {
                unsigned char ch = (unsigned char)s->s[i];
                if (ch >= 0x80) jx_unsupported(c, at, "str.%s() on non-ASCII text", m);
                int d = ch >= '0' && ch <= '9', lo = ch >= 'a' && ch <= 'z', up = ch >= 'A' && ch <= 'Z';
                cased |= lo || up;
                if (IS("isdigit") && !d) return jv_bool(0);
                if (IS("isspace") && !js_is_space(ch)) return jv_bool(0);
                if (IS("isalpha") && !(lo || up)) return jv_bool(0);
                if (IS("isalnum") && !(lo || up || d)) return jv_bool(0);
                if (IS("islower") && up) return jv_bool(0);
                if (IS("isupper") && lo) return jv_bool(0);
            }
            return jv_bool(IS("islower") || IS("isupper") ? cased : 1);
        }
        jx_unsupported(c, at, "str.%s()", m);
    }
    if (obj.t == JT_DICT && !obj.u.d->ns) {
        const jdict *d = obj.u.d;
        if (d->loop && IS("cycle")) {
            if (!na) jx_raise(c, at, "no items for cycling given");
            jv i0;
            jd_get_s(d, "index0", &i0);
            return a[(size_t)i0.u.i % na];
        }
        if (IS("get")) {
            jv r;
            if (!na) jx_raise(c, at, "get expected at least 1 argument");
            if (jd_get(d, a[0], &r)) return r;
            return na > 1 ? a[1] : jv_none();
        }
        if (IS("items") || IS("keys") || IS("values")) {
            jlist *l = jl_new(c, d->n);
            l->gen = 2;
            for (size_t i = 0; i < d->n; i++) {
                if (IS("keys")) jl_push(c, l, d->k[i]);
                else if (IS("values")) jl_push(c, l, d->v[i]);
                else {
                    jlist *p = jl_new(c, 2);
                    jl_push(c, p, d->k[i]);
                    jl_push(c, p, d->v[i]);
                    p->tuple = 1;
                    jl_push(c, l, jv_list(p));
                }
            }
            return jv_list(l);
        }
        if (IS("update") || IS("pop") || IS("setdefault") || IS("clear") || IS("popitem"))
            jx_raise(c, at, "access to attribute '%s' of 'dict' object is unsafe", m);
        jx_unsupported(c, at, "dict.%s()", m);
    }
    if (obj.t == JT_LIST) {
        if (IS("append") || IS("extend") || IS("pop") || IS("insert") || IS("remove") || IS("sort") ||
            IS("reverse") || IS("clear"))
            jx_raise(c, at, "access to attribute '%s' of '%s' object is unsafe", m, jv_type_name(&obj));
        if (IS("index") || IS("count")) {
            if (na != 1) jx_unsupported(c, at, "list.%s() with start/end", m);
            int64_t cnt = 0;
            for (size_t i = 0; i < obj.u.l->n; i++)
                if (jv_eq(&obj.u.l->v[i], &a[0])) { if (IS("index")) return jv_int((int64_t)i); cnt++; }
            if (IS("index")) jx_raise(c, at, "value is not in list");
            return jv_int(cnt);
        }
        jx_unsupported(c, at, "list.%s()", m);
    }
    if (obj.t == JT_NONE || obj.t == JT_INT || obj.t == JT_FLOAT || obj.t == JT_BOOL)
        jx_raise(c, at, "'%s' object has no attribute '%s'", jv_type_name(&obj), m);
    jx_unsupported(c, at, "method %s() of a %s", m, jv_type_name(&obj));
#undef IS
#undef ARG
}
