/* jinja_int.h - the Jinja interpreter's internals, shared by jinja_lex.c (template text -> tokens,
 * with jinja2's whitespace rules), jinja_parse.c (tokens -> tree), jinja_eval.c (statements and
 * expressions), jinja_builtins.c (filters, tests, methods, globals) and jinja_value.c (values,
 * Python-compatible printing and JSON). Not a public header.
 *
 * Memory: everything a parse or a render allocates lives in one arena (ja_*), freed at once, so
 * no value needs an owner; the arena has a byte limit that turns runaway templates into a clean
 * "cannot render" instead of exhausting the machine. */
#ifndef SN_JINJA_INT_H
#define SN_JINJA_INT_H
#include "budget.h"
#include "jinja.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

/* ---- arena ---- */
typedef struct ja_chunk ja_chunk;
typedef struct jarena {
    ja_chunk *head;
    size_t total, limit;
    const char *budget; /* the limit's name in budget.h, for the error */
} jarena;
/* JA_INIT(a, BUDGET): an arena limited to that budget of budget.h, named for the error */
void ja_init(jarena *a, size_t limit, const char *budget);
#define JA_INIT(a, budget) ja_init((a), (budget), #budget)
/* "the template needs more than the N MB memory budget (NAME, budget.h)" for a full arena a */
void ja_oom_msg(const jarena *a, char *buf, size_t cap);
void ja_free(jarena *a);
void *ja_alloc(jarena *a, size_t n); /* zeroed; NULL when over the limit */
/* Appends S[0..N) to the NUL-terminated text *P of *LEN bytes in capacity *CAP, which doubles
 * (from FIRST) until it fits. 0 when done, JA_TOO_BIG when the capacity would pass MAX (0 = no
 * limit), JA_NOMEM when the arena is over its limit. Output buffers of both template engines. */
enum { JA_TOO_BIG = 1, JA_NOMEM = 2 };
int ja_append(jarena *a, char **p, size_t *len, size_t *cap, const char *s, size_t n, size_t first,
              size_t max);

/* ---- errors ---- */
/* Fills err for a failed parse or render (Jinja and Go templates alike): "cannot render: " first
 * when CODE is SN_EUNSUPPORTED (a construct we do not implement, so the caller does not guess),
 * then LEAD, the message FMT/AP (at most 699 bytes) and TAIL (where: " at 3:14"). */
void ja_verr(sn_err *err, sn_status code, const char *lead, const char *tail, const char *fmt, va_list ap);

/* ---- values ---- */
typedef enum { JT_UNDEF, JT_NONE, JT_BOOL, JT_INT, JT_FLOAT, JT_STR, JT_LIST, JT_DICT, JT_MACRO,
               JT_FUNC } jtype;
typedef struct jstr { size_t len; char s[]; } jstr;          /* NUL-terminated too */
/* gen: 1 = a Python generator (select/map results: always true, no len(), no index, consumed
 * by iteration from pos), 2 = a dict view (items()/keys()/values(): len and iteration only) */
typedef struct jlist { size_t n, cap; struct jv *v; int tuple; int gen; size_t pos; } jlist;
typedef struct jdict { size_t n, cap; struct jv *k, *v; int ns; int loop; } jdict;
struct jnode;
struct jframe;
typedef struct jmacro {
    const struct jnode *def;  /* N_MACRO or N_CALLBLOCK */
    struct jframe *closure;
    const struct jmacro *caller; /* for a {% call %}: the body, callable as caller() */
} jmacro;
typedef struct jv {
    uint8_t t;
    uint8_t markup; /* JT_STR marked safe (markupsafe.Markup): `+` escapes the other operand */
    union { int b; int64_t i; double f; jstr *s; jlist *l; jdict *d; const jmacro *m; int fn; } u;
    const char *undef_name; /* JT_UNDEF: what was missing, for error messages */
} jv;

/* ---- tokens ---- */
typedef enum { TK_EOF, TK_DATA, TK_VAR_BEGIN, TK_VAR_END, TK_BLOCK_BEGIN, TK_BLOCK_END, TK_NAME,
               TK_STRING, TK_INT, TK_FLOAT, TK_OP } jtok_type;
typedef struct jtok {
    jtok_type t;
    const char *p; size_t len; /* source text (DATA: the text after whitespace rules) */
    jstr *str;                 /* STRING: the unescaped value; DATA: the text */
    int64_t i; double f;
    uint32_t line, col;
} jtok;

/* ---- tree ---- */
typedef enum {
    /* statements */
    N_BODY, N_TEXT, N_OUTPUT, N_IF, N_FOR, N_SET, N_SETBLOCK, N_MACRO, N_CALLBLOCK, N_FILTERBLOCK,
    N_BREAK, N_CONTINUE, N_WITH,
    /* expressions */
    N_LIT, N_NAME, N_LIST, N_TUPLE, N_DICT, N_ATTR, N_ITEM, N_SLICE, N_CALL, N_FILTER, N_TEST,
    N_BIN, N_NEG, N_POS, N_NOT, N_AND, N_OR, N_COND, N_CMP
} jkind;

typedef struct jnode {
    jkind k;
    uint32_t line, col;
    int op;                      /* N_BIN/N_CMP operator, N_TEST negation, N_FOR recursive */
    struct jnode *a, *b, *c;
    struct jnode **v; size_t n;  /* body / positional args / list items / dict keys */
    struct jnode **w; size_t nw; /* else body / kw arg values / dict values / macro defaults */
    const char **names; size_t nn; /* kw arg names / macro params / for targets / set targets */
    const char *name;            /* N_NAME, N_ATTR, N_FILTER, N_TEST, N_MACRO */
    jv lit;                      /* N_LIT, N_TEXT (a string) */
} jnode;

/* operators (N_BIN / N_CMP) */
enum { OP_ADD = 1, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_CONCAT,
       OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOTIN };

struct sn_jinja {
    jarena arena;
    jnode *root;
};

/* ---- lexer / parser ---- */
typedef struct jlex_out { jtok *t; size_t n; } jlex_out;
sn_status jinja_lex(jarena *a, const char *src, size_t len, jlex_out *out, sn_err *err);
sn_status jinja_parse_tokens(jarena *a, const jlex_out *toks, jnode **root, sn_err *err);

/* ---- render context ---- */
typedef struct jbuf { char *p; size_t n, cap; } jbuf;

typedef struct jframe {
    struct jframe *parent;
    size_t n, cap;
    const char **names;
    jv *vals;
} jframe;

typedef struct jctx {
    jarena *a;               /* render arena */
    jmp_buf fail;            /* every error longjmps here after filling err */
    sn_err *err;
    uint64_t steps, max_steps;
    size_t max_output;
    int depth;
    int64_t now;
    jframe *globals;
    int loop_ctl;            /* 1 break, 2 continue, pending */
    int json_ascii;          /* tojson(ensure_ascii=True) in progress */
} jctx;
/* where an output limit comes from, for the error: budget.h's, or the caller's own */
#define JX_OUTPUT_BUDGET(c) \
    ((c)->max_output == SN_BUDGET_JINJA_OUTPUT ? "SN_BUDGET_JINJA_OUTPUT, budget.h" : "the caller's limit")

/* Errors: these longjmp to ctx->fail. */
/* ends the render with CODE and "message at line:col" (AT may be NULL); jx_raise is a template
 * error (jinja2 raises too), jx_unsupported a construct this interpreter does not implement */
_Noreturn void jx_fail(jctx *c, sn_status code, const jnode *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define jx_raise(c, at, ...) jx_fail((c), SN_JINJA_RAISED, (at), __VA_ARGS__)
#define jx_unsupported(c, at, ...) jx_fail((c), SN_EUNSUPPORTED, (at), __VA_ARGS__)
_Noreturn void jx_oom(jctx *c);

/* ---- value helpers (jinja_value.c) ---- */
jv jv_undef(const char *name);
jv jv_none(void);
jv jv_bool(int b);
jv jv_int(int64_t i);
jv jv_float(double f);
jv jv_str(jctx *c, const char *s, size_t n);
jv jv_cstr(jctx *c, const char *s);
jv jv_strv(jstr *s);
jstr *js_new(jarena *a, const char *s, size_t n);
jlist *jl_new(jctx *c, size_t cap);
void jl_push(jctx *c, jlist *l, jv v);
jv jv_list(jlist *l);
jdict *jd_new(jctx *c, size_t cap);
void jd_set(jctx *c, jdict *d, jv k, jv v);
int jd_get(const jdict *d, jv k, jv *out);           /* 1 if found */
int jd_get_s(const jdict *d, const char *k, jv *out);
jv jv_dict(jdict *d);
jv jv_from_json(jctx *c, const cJSON *j);

int jv_truthy(const jv *v);
int jv_eq(const jv *a, const jv *b);
int jv_cmp(jctx *c, const jnode *at, const jv *a, const jv *b); /* <0 0 >0; raises on mixed types */
int jv_is_num(const jv *v);
double jv_num(const jv *v);
const char *jv_type_name(const jv *v);

void jb_put(jctx *c, jbuf *b, const char *s, size_t n);
void jb_putc(jctx *c, jbuf *b, char ch);
void jv_str_into(jctx *c, jbuf *b, const jv *v);   /* Python str() */
void jv_repr_into(jctx *c, jbuf *b, const jv *v);  /* Python repr() */
jstr *jv_to_str(jctx *c, const jv *v);             /* str() as a new string */
void jv_json_into(jctx *c, const jnode *at, jbuf *b, const jv *v, int indent, int depth,
                  const char *item_sep, const char *key_sep, int sort_keys);
void py_float_repr(double f, char *out, size_t cap);

/* ---- builtins (jinja_builtins.c) ---- */
jv jx_filter(jctx *c, const jnode *at, const char *name, jv val, jv *args, size_t nargs,
             const char **kwn, jv *kwv, size_t nkw);
int jx_test(jctx *c, const jnode *at, const char *name, jv val, jv *args, size_t nargs);
jv jx_method(jctx *c, const jnode *at, jv obj, const char *name, jv *args, size_t nargs,
             const char **kwn, jv *kwv, size_t nkw);
int jx_global_fn(const char *name);   /* id > 0 of a builtin global function, 0 if none */
jv jx_call_fn(jctx *c, const jnode *at, int fn, jv *args, size_t nargs, const char **kwn, jv *kwv,
              size_t nkw);
int jx_has_filter(const char *name);
int jx_has_test(const char *name);

/* ---- strings (jinja_strings.c) ---- */
int js_is_space(uint32_t cp);
size_t js_cplen(const jstr *s);
jv js_strip(jctx *c, const jstr *s, const jstr *chars, int left, int right);
jv js_case(jctx *c, const jstr *s, int mode); /* 0 lower, 1 upper, 2 capitalize, 3 title */
jv js_escape(jctx *c, const jstr *s); /* HTML escape as markupsafe does */
jv js_replace(jctx *c, const jstr *s, const jstr *old, const jstr *new_, int64_t count);

/* ---- evaluation (jinja_eval.c), used by builtins for map/select ---- */
jv jx_eval(jctx *c, jframe *f, const jnode *e);
jv jx_getattr(jctx *c, const jnode *at, jv obj, const char *name);
jv jx_getitem(jctx *c, const jnode *at, jv obj, jv key);
jv jx_call_macro(jctx *c, const jnode *at, const jmacro *m, jv *args, size_t nargs,
                 const char **kwn, jv *kwv, size_t nkw);
void jx_step(jctx *c, const jnode *at);
jlist *jx_iterate(jctx *c, const jnode *at, jv v); /* for-loop iteration order */

#endif
