/* jinja_parse.c - tokens -> tree, following jinja2's grammar and operator precedence
 * (parser.py): condexpr > or > and > not > compare > + - > ~ > * / // % > ** > unary, with
 * filters (|f), tests (is t) and calls binding to the unary operand. Statements: if/elif/else,
 * for (targets, inline if filter, else), set (incl. block set and namespace attributes), macro,
 * call, filter, with, break/continue, generation (transformers' assistant-mask tag), raw.
 * Anything else (include, import, extends, block, recursive loops, *args) is refused with
 * "cannot render: ... at line:col" rather than guessed. */
#include "jinja_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    jarena *a;
    const jtok *t;
    size_t n, i;
    sn_err *err;
    jmp_buf fail;
    int depth;
} parser;

static _Noreturn void pfail(parser *P, sn_status code, const jtok *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static _Noreturn void pfail(parser *P, sn_status code, const jtok *at, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sn_err_set(P->err, code, "%s%s at %u:%u", code == SN_EUNSUPPORTED ? "cannot render: " : "", msg,
               at->line, at->col);
    longjmp(P->fail, 1);
}

static const jtok *cur(parser *P) { return &P->t[P->i]; }
static const jtok *adv(parser *P) { const jtok *k = &P->t[P->i]; if (k->t != TK_EOF) P->i++; return k; }

static int is_op(const jtok *k, const char *op) {
    return k->t == TK_OP && k->len == strlen(op) && memcmp(k->p, op, k->len) == 0;
}
static int is_name(const jtok *k, const char *nm) {
    return k->t == TK_NAME && k->len == strlen(nm) && memcmp(k->p, nm, k->len) == 0;
}
static int accept_op(parser *P, const char *op) { if (is_op(cur(P), op)) { adv(P); return 1; } return 0; }
static int accept_name(parser *P, const char *nm) { if (is_name(cur(P), nm)) { adv(P); return 1; } return 0; }

static const char *tok_desc(const jtok *k, char *buf, size_t cap) {
    switch (k->t) {
    case TK_EOF: return "end of template";
    case TK_BLOCK_END: return "'%}'";
    case TK_VAR_END: return "'}}'";
    default: snprintf(buf, cap, "'%.*s'", (int)(k->len > 40 ? 40 : k->len), k->p); return buf;
    }
}

static void expect_op(parser *P, const char *op) {
    if (!accept_op(P, op)) {
        char b[64];
        pfail(P, SN_JINJA_RAISED, cur(P), "expected '%s', got %s", op, tok_desc(cur(P), b, sizeof b));
    }
}

static void *palloc(parser *P, size_t n) {
    void *p = ja_alloc(P->a, n);
    if (!p) { sn_err_set(P->err, SN_ENOMEM, "template: out of memory"); longjmp(P->fail, 1); }
    return p;
}

static jnode *node(parser *P, jkind k, const jtok *at) {
    jnode *n = palloc(P, sizeof *n);
    n->k = k;
    n->line = at->line;
    n->col = at->col;
    return n;
}

static const char *tok_name(parser *P, const jtok *k) {
    char *s = palloc(P, k->len + 1);
    memcpy(s, k->p, k->len);
    return s;
}

static const char *expect_name(parser *P) {
    if (cur(P)->t != TK_NAME) {
        char b[64];
        pfail(P, SN_JINJA_RAISED, cur(P), "expected a name, got %s", tok_desc(cur(P), b, sizeof b));
    }
    return tok_name(P, adv(P));
}

/* growable node / name vectors */
typedef struct { jnode **v; size_t n, cap; } nvec;
typedef struct { const char **v; size_t n, cap; } svec;
static void nv_push(parser *P, nvec *v, jnode *x) {
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 4;
        jnode **nn = palloc(P, nc * sizeof *nn);
        if (v->n) memcpy(nn, v->v, v->n * sizeof *nn);
        v->v = nn;
        v->cap = nc;
    }
    v->v[v->n++] = x;
}
static void sv_push(parser *P, svec *v, const char *x) {
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 4;
        const char **nn = palloc(P, nc * sizeof *nn);
        if (v->n) memcpy(nn, v->v, v->n * sizeof *nn);
        v->v = nn;
        v->cap = nc;
    }
    v->v[v->n++] = x;
}

static jnode *parse_expr(parser *P);
static jnode *parse_or(parser *P);
static jnode *parse_unary(parser *P, int with_filter);
static jnode *parse_primary(parser *P);
static jnode *parse_postfix(parser *P, jnode *n);

static void enter(parser *P) {
    if (++P->depth > 200) pfail(P, SN_EUNSUPPORTED, cur(P), "expression nested deeper than 200");
}

/* (args, kw=args) after the '(' */
static void parse_call_args(parser *P, jnode *n) {
    nvec pos = {0}, kwv = {0};
    svec kwn = {0};
    while (!accept_op(P, ")")) {
        if (pos.n + kwv.n) expect_op(P, ",");
        if (accept_op(P, ")")) break;
        if (is_op(cur(P), "*") || is_op(cur(P), "**"))
            pfail(P, SN_EUNSUPPORTED, cur(P), "*args / **kwargs in a call");
        if (cur(P)->t == TK_NAME && is_op(&P->t[P->i + 1], "=")) {
            sv_push(P, &kwn, tok_name(P, adv(P)));
            adv(P);
            nv_push(P, &kwv, parse_expr(P));
        } else {
            if (kwv.n) pfail(P, SN_JINJA_RAISED, cur(P), "positional argument after keyword argument");
            nv_push(P, &pos, parse_expr(P));
        }
    }
    n->v = pos.v; n->n = pos.n;
    n->w = kwv.v; n->nw = kwv.n;
    n->names = kwn.v; n->nn = kwn.n;
}

static jnode *parse_tuple(parser *P, int with_cond) {
    const jtok *at = cur(P);
    jnode *first = with_cond ? parse_expr(P) : parse_or(P);
    if (!is_op(cur(P), ",")) return first;
    nvec items = {0};
    nv_push(P, &items, first);
    while (accept_op(P, ",")) {
        const jtok *k = cur(P);
        if (k->t == TK_BLOCK_END || k->t == TK_VAR_END || is_op(k, ")") || is_name(k, "if") || is_op(k, "]"))
            break;
        nv_push(P, &items, with_cond ? parse_expr(P) : parse_or(P));
    }
    jnode *t = node(P, N_TUPLE, at);
    t->v = items.v;
    t->n = items.n;
    return t;
}

static jnode *parse_primary(parser *P) {
    const jtok *k = cur(P);
    enter(P);
    jnode *n;
    if (k->t == TK_NAME) {
        adv(P);
        n = node(P, N_LIT, k);
        if (is_name(k, "true") || is_name(k, "True")) n->lit = jv_bool(1);
        else if (is_name(k, "false") || is_name(k, "False")) n->lit = jv_bool(0);
        else if (is_name(k, "none") || is_name(k, "None")) n->lit = jv_none();
        else { n->k = N_NAME; n->name = tok_name(P, k); }
    } else if (k->t == TK_STRING) {
        jstr *s = k->str;
        adv(P);
        while (cur(P)->t == TK_STRING) { /* adjacent literals concatenate */
            const jstr *s2 = adv(P)->str;
            jstr *c = palloc(P, sizeof *c + s->len + s2->len + 1);
            memcpy(c->s, s->s, s->len);
            memcpy(c->s + s->len, s2->s, s2->len);
            c->len = s->len + s2->len;
            s = c;
        }
        n = node(P, N_LIT, k);
        n->lit = jv_strv(s);
    } else if (k->t == TK_INT || k->t == TK_FLOAT) {
        adv(P);
        n = node(P, N_LIT, k);
        n->lit = k->t == TK_INT ? jv_int(k->i) : jv_float(k->f);
    } else if (is_op(k, "(")) {
        adv(P);
        if (accept_op(P, ")")) { n = node(P, N_TUPLE, k); }
        else {
            n = parse_expr(P);
            if (is_op(cur(P), ",")) {
                nvec items = {0};
                nv_push(P, &items, n);
                while (accept_op(P, ",") && !is_op(cur(P), ")")) nv_push(P, &items, parse_expr(P));
                n = node(P, N_TUPLE, k);
                n->v = items.v;
                n->n = items.n;
            }
            expect_op(P, ")");
        }
    } else if (is_op(k, "[")) {
        adv(P);
        nvec items = {0};
        while (!accept_op(P, "]")) {
            if (items.n) expect_op(P, ",");
            if (accept_op(P, "]")) break;
            nv_push(P, &items, parse_expr(P));
        }
        n = node(P, N_LIST, k);
        n->v = items.v;
        n->n = items.n;
    } else if (is_op(k, "{")) {
        adv(P);
        nvec keys = {0}, vals = {0};
        while (!accept_op(P, "}")) {
            if (keys.n) expect_op(P, ",");
            if (accept_op(P, "}")) break;
            nv_push(P, &keys, parse_expr(P));
            expect_op(P, ":");
            nv_push(P, &vals, parse_expr(P));
        }
        n = node(P, N_DICT, k);
        n->v = keys.v; n->n = keys.n;
        n->w = vals.v; n->nw = vals.n;
    } else {
        char b[64];
        pfail(P, SN_JINJA_RAISED, k, "unexpected %s", tok_desc(k, b, sizeof b));
    }
    P->depth--;
    return n;
}

static jnode *parse_subscript(parser *P, const jtok *at, jnode *obj) {
    jnode *parts[3] = {0};
    int slice = 0, idx = 0;
    for (;;) {
        const jtok *k = cur(P);
        if (is_op(k, ":")) {
            adv(P);
            if (++idx > 2) pfail(P, SN_JINJA_RAISED, k, "too many ':' in a slice");
            slice = 1;
            continue;
        }
        if (is_op(k, "]")) break;
        if (parts[idx]) pfail(P, SN_JINJA_RAISED, k, "expected ']'");
        parts[idx] = slice ? parse_expr(P) : parse_tuple(P, 1);
    }
    expect_op(P, "]");
    jnode *n = node(P, slice ? N_SLICE : N_ITEM, at);
    n->a = obj;
    if (slice) {
        n->v = palloc(P, 3 * sizeof *n->v);
        memcpy(n->v, parts, sizeof parts);
        n->n = 3;
    } else {
        if (!parts[0]) pfail(P, SN_JINJA_RAISED, at, "empty subscript");
        n->b = parts[0];
    }
    return n;
}

static jnode *parse_postfix(parser *P, jnode *n) {
    for (;;) {
        const jtok *k = cur(P);
        if (is_op(k, ".")) {
            adv(P);
            const jtok *a = cur(P);
            if (a->t == TK_NAME) {
                jnode *x = node(P, N_ATTR, k);
                x->a = n;
                x->name = tok_name(P, adv(P));
                n = x;
            } else if (a->t == TK_INT) {
                jnode *x = node(P, N_ITEM, k), *lit = node(P, N_LIT, a);
                lit->lit = jv_int(adv(P)->i);
                x->a = n;
                x->b = lit;
                n = x;
            } else pfail(P, SN_JINJA_RAISED, a, "expected a name after '.'");
        } else if (is_op(k, "[")) {
            adv(P);
            n = parse_subscript(P, k, n);
        } else if (is_op(k, "(")) {
            adv(P);
            jnode *x = node(P, N_CALL, k);
            x->a = n;
            parse_call_args(P, x);
            n = x;
        } else return n;
    }
}

static jnode *parse_filter_expr(parser *P, jnode *n) {
    for (;;) {
        const jtok *k = cur(P);
        if (is_op(k, "|")) {
            adv(P);
            jnode *f = node(P, N_FILTER, k);
            f->a = n;
            f->name = expect_name(P);
            if (is_op(cur(P), ".")) pfail(P, SN_EUNSUPPORTED, cur(P), "dotted filter name");
            if (accept_op(P, "(")) parse_call_args(P, f);
            n = f;
        } else if (is_name(k, "is")) {
            adv(P);
            jnode *t = node(P, N_TEST, k);
            t->a = n;
            t->op = accept_name(P, "not");
            t->name = expect_name(P);
            const jtok *x = cur(P);
            if (accept_op(P, "(")) parse_call_args(P, t);
            else if ((x->t == TK_NAME || x->t == TK_STRING || x->t == TK_INT || x->t == TK_FLOAT ||
                      is_op(x, "[") || is_op(x, "{")) &&
                     !is_name(x, "else") && !is_name(x, "or") && !is_name(x, "and")) {
                if (is_name(x, "is")) pfail(P, SN_JINJA_RAISED, x, "cannot chain multiple tests with is");
                t->v = palloc(P, sizeof *t->v);
                t->v[0] = parse_postfix(P, parse_primary(P));
                t->n = 1;
            }
            n = t;
        } else if (is_op(k, "(")) {
            adv(P);
            jnode *x = node(P, N_CALL, k);
            x->a = n;
            parse_call_args(P, x);
            n = x;
        } else return n;
    }
}

static jnode *parse_unary(parser *P, int with_filter) {
    const jtok *k = cur(P);
    enter(P);
    jnode *n;
    if (is_op(k, "-") || is_op(k, "+")) {
        adv(P);
        n = node(P, is_op(k, "-") ? N_NEG : N_POS, k);
        n->a = parse_unary(P, 0);
    } else n = parse_primary(P);
    n = parse_postfix(P, n);
    if (with_filter) n = parse_filter_expr(P, n);
    P->depth--;
    return n;
}

static jnode *bin(parser *P, const jtok *at, int op, jnode *a, jnode *b) {
    jnode *n = node(P, N_BIN, at);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

static jnode *parse_pow(parser *P) {
    jnode *n = parse_unary(P, 1);
    while (is_op(cur(P), "**")) { const jtok *k = adv(P); n = bin(P, k, OP_POW, n, parse_unary(P, 1)); }
    return n;
}

static jnode *parse_math2(parser *P) {
    jnode *n = parse_pow(P);
    for (;;) {
        const jtok *k = cur(P);
        int op = is_op(k, "*") ? OP_MUL : is_op(k, "/") ? OP_DIV : is_op(k, "//") ? OP_FLOORDIV
                 : is_op(k, "%") ? OP_MOD : 0;
        if (!op) return n;
        adv(P);
        n = bin(P, k, op, n, parse_pow(P));
    }
}

static jnode *parse_concat(parser *P) {
    jnode *n = parse_math2(P);
    while (is_op(cur(P), "~")) { const jtok *k = adv(P); n = bin(P, k, OP_CONCAT, n, parse_math2(P)); }
    return n;
}

static jnode *parse_math1(parser *P) {
    jnode *n = parse_concat(P);
    for (;;) {
        const jtok *k = cur(P);
        int op = is_op(k, "+") ? OP_ADD : is_op(k, "-") ? OP_SUB : 0;
        if (!op) return n;
        adv(P);
        n = bin(P, k, op, n, parse_concat(P));
    }
}

/* a < b < c is (a < b) and (b < c), as in Python */
static jnode *parse_compare(parser *P) {
    jnode *n = parse_math1(P), *chain = NULL, *left = n;
    for (;;) {
        const jtok *k = cur(P);
        int op = is_op(k, "==") ? OP_EQ : is_op(k, "!=") ? OP_NE : is_op(k, "<") ? OP_LT
                 : is_op(k, "<=") ? OP_LE : is_op(k, ">") ? OP_GT : is_op(k, ">=") ? OP_GE
                 : is_name(k, "in") ? OP_IN : 0;
        if (!op && is_name(k, "not") && is_name(&P->t[P->i + 1], "in")) { adv(P); op = OP_NOTIN; }
        if (!op) break;
        adv(P);
        jnode *right = parse_math1(P);
        jnode *c = node(P, N_CMP, k);
        c->op = op;
        c->a = left;
        c->b = right;
        if (chain) {
            jnode *and = node(P, N_AND, k);
            and->a = chain;
            and->b = c;
            chain = and;
        } else chain = c;
        left = right;
    }
    return chain ? chain : n;
}

static jnode *parse_not(parser *P) {
    const jtok *k = cur(P);
    if (accept_name(P, "not")) {
        enter(P);
        jnode *n = node(P, N_NOT, k);
        n->a = parse_not(P);
        P->depth--;
        return n;
    }
    return parse_compare(P);
}

static jnode *parse_and(parser *P) {
    jnode *n = parse_not(P);
    while (is_name(cur(P), "and")) {
        const jtok *k = adv(P);
        jnode *x = node(P, N_AND, k);
        x->a = n;
        x->b = parse_not(P);
        n = x;
    }
    return n;
}

static jnode *parse_or(parser *P) {
    jnode *n = parse_and(P);
    while (is_name(cur(P), "or")) {
        const jtok *k = adv(P);
        jnode *x = node(P, N_OR, k);
        x->a = n;
        x->b = parse_and(P);
        n = x;
    }
    return n;
}

static jnode *parse_expr(parser *P) {
    enter(P);
    jnode *n = parse_or(P);
    while (is_name(cur(P), "if")) {
        const jtok *k = adv(P);
        jnode *c = node(P, N_COND, k);
        c->b = n;
        c->a = parse_or(P);
        if (accept_name(P, "else")) c->c = parse_expr(P);
        n = c;
    }
    P->depth--;
    return n;
}

/* ---- statements ---- */
static jnode *parse_body(parser *P, const char *const *ends, const char **ended);

static void expect_block_end(parser *P) {
    if (cur(P)->t != TK_BLOCK_END) {
        char b[64];
        pfail(P, SN_JINJA_RAISED, cur(P), "expected '%%}', got %s", tok_desc(cur(P), b, sizeof b));
    }
    adv(P);
}

/* "a" / "a, b" / "(a, b)" */
static void parse_targets(parser *P, jnode *n) {
    svec names = {0};
    int paren = accept_op(P, "(");
    do {
        if (paren && is_op(cur(P), ")")) break;
        sv_push(P, &names, expect_name(P));
    } while (accept_op(P, ","));
    if (paren) expect_op(P, ")");
    n->names = names.v;
    n->nn = names.n;
}

static void parse_params(parser *P, jnode *n) {
    svec names = {0};
    nvec defs = {0};
    if (accept_op(P, "(")) {
        while (!accept_op(P, ")")) {
            if (names.n) expect_op(P, ",");
            if (accept_op(P, ")")) break;
            sv_push(P, &names, expect_name(P));
            nv_push(P, &defs, accept_op(P, "=") ? parse_expr(P) : NULL);
        }
    }
    n->names = names.v;
    n->nn = names.n;
    n->w = defs.v;
    n->nw = defs.n;
}

static jnode *parse_if(parser *P, const jtok *at) {
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    jnode *n = node(P, N_IF, at);
    n->a = parse_tuple(P, 1);
    expect_block_end(P);
    const char *ended;
    jnode *body = parse_body(P, ends, &ended);
    n->v = body->v;
    n->n = body->n;
    if (!strcmp(ended, "elif")) {
        jnode *e = parse_if(P, &P->t[P->i - 1]);
        n->w = palloc(P, sizeof *n->w);
        n->w[0] = e;
        n->nw = 1;
        return n; /* the nested if consumed endif */
    }
    if (!strcmp(ended, "else")) {
        static const char *const ends2[] = {"endif", NULL};
        expect_block_end(P);
        jnode *eb = parse_body(P, ends2, &ended);
        n->w = eb->v;
        n->nw = eb->n;
    }
    expect_block_end(P);
    return n;
}

static jnode *parse_stmt(parser *P) {
    const jtok *k = cur(P);
    const char *ended;
    if (k->t != TK_NAME) pfail(P, SN_JINJA_RAISED, k, "expected a statement name");
    adv(P);
    if (is_name(k, "if")) return parse_if(P, k);
    if (is_name(k, "for")) {
        static const char *const ends[] = {"else", "endfor", NULL};
        jnode *n = node(P, N_FOR, k);
        parse_targets(P, n);
        if (!accept_name(P, "in")) pfail(P, SN_JINJA_RAISED, cur(P), "expected 'in'");
        n->a = parse_tuple(P, 0);
        if (accept_name(P, "if")) n->b = parse_expr(P);
        if (is_name(cur(P), "recursive")) pfail(P, SN_EUNSUPPORTED, cur(P), "recursive for loop");
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        n->v = body->v;
        n->n = body->n;
        if (!strcmp(ended, "else")) {
            static const char *const ends2[] = {"endfor", NULL};
            expect_block_end(P);
            jnode *eb = parse_body(P, ends2, &ended);
            n->w = eb->v;
            n->nw = eb->n;
        }
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "set")) {
        const jtok *t0 = cur(P);
        jnode *n = node(P, N_SET, k);
        if (cur(P)->t == TK_NAME && is_op(&P->t[P->i + 1], ".")) { /* ns.attr */
            jnode *tgt = node(P, N_ATTR, t0);
            jnode *nm = node(P, N_NAME, t0);
            nm->name = expect_name(P);
            adv(P);
            tgt->a = nm;
            tgt->name = expect_name(P);
            n->a = tgt;
        } else parse_targets(P, n);
        if (accept_op(P, "=")) {
            n->b = parse_tuple(P, 1);
            expect_block_end(P);
            return n;
        }
        if (n->a || n->nn != 1) pfail(P, SN_EUNSUPPORTED, t0, "block set of an attribute or a tuple");
        static const char *const ends[] = {"endset", NULL};
        n->k = N_SETBLOCK;
        jnode *chain = NULL; /* optional filters: {% set x | trim %} */
        while (is_op(cur(P), "|")) {
            const jtok *fk = adv(P);
            jnode *f = node(P, N_FILTER, fk);
            f->a = chain;
            f->name = expect_name(P);
            if (accept_op(P, "(")) parse_call_args(P, f);
            chain = f;
        }
        n->b = chain;
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        n->v = body->v;
        n->n = body->n;
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "macro")) {
        static const char *const ends[] = {"endmacro", NULL};
        jnode *n = node(P, N_MACRO, k);
        n->name = expect_name(P);
        if (!is_op(cur(P), "(")) pfail(P, SN_JINJA_RAISED, cur(P), "expected '('");
        parse_params(P, n);
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        n->v = body->v;
        n->n = body->n;
        if (cur(P)->t == TK_NAME) adv(P); /* {% endmacro name %} */
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "call")) {
        static const char *const ends[] = {"endcall", NULL};
        jnode *n = node(P, N_CALLBLOCK, k);
        if (is_op(cur(P), "(")) parse_params(P, n);
        n->a = parse_expr(P);
        if (n->a->k != N_CALL) pfail(P, SN_JINJA_RAISED, k, "expected a call after {%% call %%}");
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        n->v = body->v;
        n->n = body->n;
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "filter")) {
        static const char *const ends[] = {"endfilter", NULL};
        jnode *n = node(P, N_FILTERBLOCK, k), *chain = NULL;
        do {
            const jtok *fk = cur(P);
            jnode *f = node(P, N_FILTER, fk);
            f->a = chain;
            f->name = expect_name(P);
            if (accept_op(P, "(")) parse_call_args(P, f);
            chain = f;
        } while (accept_op(P, "|"));
        n->a = chain;
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        n->v = body->v;
        n->n = body->n;
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "with")) {
        static const char *const ends[] = {"endwith", NULL};
        jnode *n = node(P, N_WITH, k);
        svec names = {0};
        nvec vals = {0};
        while (cur(P)->t != TK_BLOCK_END) {
            if (names.n) expect_op(P, ",");
            sv_push(P, &names, expect_name(P));
            expect_op(P, "=");
            nv_push(P, &vals, parse_expr(P));
        }
        n->names = names.v; n->nn = names.n;
        n->w = vals.v; n->nw = vals.n;
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        n->v = body->v;
        n->n = body->n;
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "generation")) { /* transformers' AssistantTracker: renders its body as is */
        static const char *const ends[] = {"endgeneration", NULL};
        expect_block_end(P);
        jnode *body = parse_body(P, ends, &ended);
        expect_block_end(P);
        return body;
    }
    if (is_name(k, "break") || is_name(k, "continue")) {
        jnode *n = node(P, is_name(k, "break") ? N_BREAK : N_CONTINUE, k);
        expect_block_end(P);
        return n;
    }
    pfail(P, SN_EUNSUPPORTED, k, "the '%.*s' statement", (int)(k->len > 40 ? 40 : k->len), k->p);
}

/* Statements until one of ENDS (NULL-terminated; NULL = end of template). On return the end
 * keyword has been consumed and *ended names it; its '%}' has not. */
static jnode *parse_body(parser *P, const char *const *ends, const char **ended) {
    const jtok *start = cur(P);
    if (++P->depth > 200) pfail(P, SN_EUNSUPPORTED, start, "blocks nested deeper than 200");
    nvec body = {0};
    for (;;) {
        const jtok *k = cur(P);
        if (k->t == TK_EOF) {
            if (ends) pfail(P, SN_JINJA_RAISED, k, "unexpected end of template, expected '%s'", ends[0]);
            break;
        }
        if (k->t == TK_DATA) {
            jnode *t = node(P, N_TEXT, k);
            t->lit = jv_strv(k->str);
            nv_push(P, &body, t);
            adv(P);
        } else if (k->t == TK_VAR_BEGIN) {
            adv(P);
            jnode *o = node(P, N_OUTPUT, k);
            o->a = parse_tuple(P, 1);
            if (cur(P)->t != TK_VAR_END) {
                char b[64];
                pfail(P, SN_JINJA_RAISED, cur(P), "expected '}}', got %s", tok_desc(cur(P), b, sizeof b));
            }
            adv(P);
            nv_push(P, &body, o);
        } else if (k->t == TK_BLOCK_BEGIN) {
            adv(P);
            const jtok *kw = cur(P);
            int is_end = 0;
            for (size_t i = 0; ends && ends[i]; i++)
                if (is_name(kw, ends[i])) { *ended = ends[i]; is_end = 1; }
            if (is_end) { adv(P); break; }
            if (kw->t == TK_NAME && kw->len > 3 && memcmp(kw->p, "end", 3) == 0)
                pfail(P, SN_JINJA_RAISED, kw, "unexpected '%.*s'", (int)(kw->len > 40 ? 40 : kw->len), kw->p);
            if (kw->t == TK_NAME && (is_name(kw, "elif") || is_name(kw, "else")))
                pfail(P, SN_JINJA_RAISED, kw, "unexpected '%.*s'", (int)kw->len, kw->p);
            jnode *s = parse_stmt(P);
            if (s->k == N_BODY) for (size_t i = 0; i < s->n; i++) nv_push(P, &body, s->v[i]);
            else nv_push(P, &body, s);
        } else {
            char b[64];
            pfail(P, SN_JINJA_RAISED, k, "unexpected %s", tok_desc(k, b, sizeof b));
        }
    }
    P->depth--;
    jnode *n = node(P, N_BODY, start);
    n->v = body.v;
    n->n = body.n;
    return n;
}

sn_status jinja_parse_tokens(jarena *a, const jlex_out *toks, jnode **root, sn_err *err) {
    parser P = {.a = a, .t = toks->t, .n = toks->n, .err = err};
    if (setjmp(P.fail)) return err ? err->code : SN_EFORMAT;
    const char *ended = NULL;
    *root = parse_body(&P, NULL, &ended);
    return SN_OK;
}
