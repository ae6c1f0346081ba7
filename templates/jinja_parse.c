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
    char where[32];
    snprintf(where, sizeof where, " at %u:%u", at->line, at->col);
    va_list ap;
    va_start(ap, fmt);
    ja_verr(P->err, code, "", where, fmt, ap);
    va_end(ap);
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

/* growable node / name vectors in the arena */
typedef struct { jnode **v; size_t n, cap; } nvec;
typedef struct { const char **v; size_t n, cap; } svec;
/* room for one more of n items of `size` bytes: the same array, or a copy twice as large */
static void *vec_room(parser *P, void *items, size_t n, size_t *cap, size_t size) {
    if (n < *cap) return items;
    size_t nc = *cap ? *cap * 2 : 4;
    void *grown = palloc(P, nc * size);
    if (n) memcpy(grown, items, n * size);
    *cap = nc;
    return grown;
}
static void nv_push(parser *P, nvec *v, jnode *x) {
    v->v = vec_room(P, v->v, v->n, &v->cap, sizeof *v->v);
    v->v[v->n++] = x;
}
static void sv_push(parser *P, svec *v, const char *x) {
    v->v = vec_room(P, v->v, v->n, &v->cap, sizeof *v->v);
    v->v[v->n++] = x;
}

/* binary precedence levels, loosest first (see k_binops) */
enum { LV_OR, LV_AND, LV_NOT, LV_ADD, LV_CONCAT, LV_MUL, LV_POW, LV_UNARY };
static jnode *parse_expr(parser *P);
static jnode *parse_binary(parser *P, int level);
static jnode *parse_unary(parser *P, int with_filter);
static jnode *parse_primary(parser *P);
static jnode *parse_postfix(parser *P, jnode *n);

/* In "a, b, c" up to CLOSE (a trailing comma allowed): 1 when another item follows, 0 once
 * CLOSE has been read. SEEN counts the items read so far. */
static int more_items(parser *P, const char *close, size_t seen) {
    if (accept_op(P, close)) return 0;
    if (seen) expect_op(P, ",");
    return !accept_op(P, close);
}

static void enter(parser *P) {
    if (++P->depth > 200) pfail(P, SN_EUNSUPPORTED, cur(P), "expression nested deeper than 200");
}

/* (args, kw=args) after the '(' */
static void parse_call_args(parser *P, jnode *n) {
    nvec pos = {0}, kwv = {0};
    svec kwn = {0};
    while (more_items(P, ")", pos.n + kwv.n)) {
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
    jnode *first = with_cond ? parse_expr(P) : parse_binary(P, LV_OR);
    if (!is_op(cur(P), ",")) return first;
    nvec items = {0};
    nv_push(P, &items, first);
    while (accept_op(P, ",")) {
        const jtok *k = cur(P);
        if (k->t == TK_BLOCK_END || k->t == TK_VAR_END || is_op(k, ")") || is_name(k, "if") || is_op(k, "]"))
            break;
        nv_push(P, &items, with_cond ? parse_expr(P) : parse_binary(P, LV_OR));
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
        while (more_items(P, "]", items.n))
            nv_push(P, &items, parse_expr(P));
        n = node(P, N_LIST, k);
        n->v = items.v;
        n->n = items.n;
    } else if (is_op(k, "{")) {
        adv(P);
        nvec keys = {0}, vals = {0};
        while (more_items(P, "}", keys.n)) {
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

/* FN(args...) after its '(' */
static jnode *parse_call(parser *P, const jtok *at, jnode *fn) {
    jnode *x = node(P, N_CALL, at);
    x->a = fn;
    parse_call_args(P, x);
    return x;
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
            n = parse_call(P, k, n);
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
            n = parse_call(P, k, n);
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

/* a node for "a OP b" (N_BIN / N_CMP carry the operator; N_AND / N_OR leave it 0) */
static jnode *pair(parser *P, const jtok *at, jkind kind, int op, jnode *a, jnode *b) {
    jnode *n = node(P, kind, at);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

/* The left-associative binary levels, loosest first: each level's operands are the next
 * level's expressions. "not" (unary) and the chained comparisons sit between "and" and
 * "+ -"; they are written out below, as is the unary operand under "**". */
typedef struct { const char *tok; jkind kind; int op; } binop;
static const binop k_binops[][5] = {
    [LV_OR] = {{"or", N_OR, 0}},
    [LV_AND] = {{"and", N_AND, 0}},
    [LV_ADD] = {{"+", N_BIN, OP_ADD}, {"-", N_BIN, OP_SUB}},
    [LV_CONCAT] = {{"~", N_BIN, OP_CONCAT}},
    [LV_MUL] = {{"*", N_BIN, OP_MUL}, {"/", N_BIN, OP_DIV}, {"//", N_BIN, OP_FLOORDIV}, {"%", N_BIN, OP_MOD}},
    [LV_POW] = {{"**", N_BIN, OP_POW}},
};

static const binop *match_binop(const jtok *k, int level) {
    for (const binop *o = k_binops[level]; o->tok; o++)
        if (o->tok[0] >= 'a' && o->tok[0] <= 'z' ? is_name(k, o->tok) : is_op(k, o->tok)) return o;
    return NULL;
}

static jnode *parse_not(parser *P);

static jnode *parse_binary(parser *P, int level) {
    if (level == LV_NOT) return parse_not(P);
    if (level == LV_UNARY) return parse_unary(P, 1);
    jnode *n = parse_binary(P, level + 1);
    for (;;) {
        const jtok *k = cur(P);
        const binop *o = match_binop(k, level);
        if (!o) return n;
        adv(P);
        n = pair(P, k, o->kind, o->op, n, parse_binary(P, level + 1));
    }
}

/* a < b < c is (a < b) and (b < c), as in Python */
static jnode *parse_compare(parser *P) {
    jnode *n = parse_binary(P, LV_ADD), *chain = NULL, *left = n;
    for (;;) {
        const jtok *k = cur(P);
        int op = is_op(k, "==") ? OP_EQ : is_op(k, "!=") ? OP_NE : is_op(k, "<") ? OP_LT
                 : is_op(k, "<=") ? OP_LE : is_op(k, ">") ? OP_GT : is_op(k, ">=") ? OP_GE
                 : is_name(k, "in") ? OP_IN : 0;
        if (!op && is_name(k, "not") && is_name(&P->t[P->i + 1], "in")) { adv(P); op = OP_NOTIN; }
        if (!op) break;
        adv(P);
        jnode *right = parse_binary(P, LV_ADD);
        jnode *c = pair(P, k, N_CMP, op, left, right);
        chain = chain ? pair(P, k, N_AND, 0, chain, c) : c;
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

static jnode *parse_expr(parser *P) {
    enter(P);
    jnode *n = parse_binary(P, LV_OR);
    while (is_name(cur(P), "if")) {
        const jtok *k = adv(P);
        jnode *c = node(P, N_COND, k);
        c->b = n;
        c->a = parse_binary(P, LV_OR);
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

/* The '%}' after a block tag, then its statements up to one of ENDS into *ITEMS / *COUNT.
 * Returns the end keyword read; the '%}' after it is not. */
static const char *parse_block(parser *P, const char *const *ends, jnode ***items, size_t *count) {
    const char *ended;
    expect_block_end(P);
    jnode *body = parse_body(P, ends, &ended);
    *items = body->v;
    *count = body->n;
    return ended;
}

/* the statements of block N up to its END tag, and that tag's '%}' */
static jnode *parse_block_to(parser *P, jnode *n, const char *end) {
    const char *const ends[] = {end, NULL};
    parse_block(P, ends, &n->v, &n->n);
    expect_block_end(P);
    return n;
}

/* one "| name(args)" link of a filter chain, after the '|' (or {% filter %}) */
static jnode *parse_filter_link(parser *P, const jtok *at, jnode *chain) {
    jnode *f = node(P, N_FILTER, at);
    f->a = chain;
    f->name = expect_name(P);
    if (accept_op(P, "(")) parse_call_args(P, f);
    return f;
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
        while (more_items(P, ")", names.n)) {
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
    const char *ended = parse_block(P, ends, &n->v, &n->n);
    if (!strcmp(ended, "elif")) {
        jnode *e = parse_if(P, &P->t[P->i - 1]);
        n->w = palloc(P, sizeof *n->w);
        n->w[0] = e;
        n->nw = 1;
        return n; /* the nested if consumed endif */
    }
    if (!strcmp(ended, "else")) {
        static const char *const ends2[] = {"endif", NULL};
        parse_block(P, ends2, &n->w, &n->nw);
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
        if (!strcmp(parse_block(P, ends, &n->v, &n->n), "else")) {
            static const char *const ends2[] = {"endfor", NULL};
            parse_block(P, ends2, &n->w, &n->nw);
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
        n->k = N_SETBLOCK;
        jnode *chain = NULL; /* optional filters: {% set x | trim %} */
        while (is_op(cur(P), "|")) chain = parse_filter_link(P, adv(P), chain);
        n->b = chain;
        return parse_block_to(P, n, "endset");
    }
    if (is_name(k, "macro")) {
        static const char *const ends[] = {"endmacro", NULL};
        jnode *n = node(P, N_MACRO, k);
        n->name = expect_name(P);
        if (!is_op(cur(P), "(")) pfail(P, SN_JINJA_RAISED, cur(P), "expected '('");
        parse_params(P, n);
        parse_block(P, ends, &n->v, &n->n);
        if (cur(P)->t == TK_NAME) adv(P); /* {% endmacro name %} */
        expect_block_end(P);
        return n;
    }
    if (is_name(k, "call")) {
        jnode *n = node(P, N_CALLBLOCK, k);
        if (is_op(cur(P), "(")) parse_params(P, n);
        n->a = parse_expr(P);
        if (n->a->k != N_CALL) pfail(P, SN_JINJA_RAISED, k, "expected a call after {%% call %%}");
        return parse_block_to(P, n, "endcall");
    }
    if (is_name(k, "filter")) {
        jnode *n = node(P, N_FILTERBLOCK, k), *chain = NULL;
        do chain = parse_filter_link(P, cur(P), chain);
        while (accept_op(P, "|"));
        n->a = chain;
        return parse_block_to(P, n, "endfilter");
    }
    if (is_name(k, "with")) {
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
        return parse_block_to(P, n, "endwith");
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
