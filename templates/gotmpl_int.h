/* gotmpl_int.h - internals of the Go text/template subset (gotmpl.c parses, gotmpl_exec.c runs,
 * with Ollama's Execute rules). Not a public header. */
#ifndef SN_GOTMPL_INT_H
#define SN_GOTMPL_INT_H
#include "gotmpl.h"
#include "jinja_int.h" /* the arena */

#include <setjmp.h>
#include <stdint.h>

#define SN_JINJA_RAISED_GO SN_EFORMAT /* the template is invalid or fails as Go's would */

typedef enum { GV_NIL, GV_BOOL, GV_INT, GV_STR, GV_LIST, GV_MAP } gvt;
typedef struct gv {
    gvt t;
    int strukt;          /* GV_MAP standing for a Go struct: a missing field is an error */
    int64_t i;           /* BOOL, INT */
    const char *s;       /* STR (NUL-terminated too) */
    size_t n;            /* STR length, LIST / MAP count */
    struct gv *items;    /* LIST */
    const char **keys;   /* MAP */
    struct gv *vals;
} gv;

enum { A_DOT, A_FIELD, A_VAR, A_LIT, A_PIPE, A_FUNC };
struct gpipe;
typedef struct garg {
    int k;
    const char *name;     /* A_VAR ("$x", "$"), A_FUNC */
    const char **fields;  /* trailing .A.B */
    size_t nf;
    gv lit;
    struct gpipe *pipe;   /* A_PIPE */
} garg;
typedef struct gcmd { garg *args; size_t nargs; } gcmd;
typedef struct gpipe {
    const char *decl[2];
    int ndecl, assign;
    gcmd **cmds;
    size_t ncmds;
} gpipe;

typedef enum { G_TEXT, G_ACTION, G_IF, G_RANGE, G_WITH, G_LIST, G_BREAK, G_CONTINUE } gk;
typedef struct gnode {
    gk k;
    int line;
    const char *text;
    size_t len;
    gpipe *pipe;
    struct gnode **v, **ev; /* list, else list */
    size_t n, en;
} gnode;

struct sn_gotmpl {
    jarena arena;
    gnode *root;
};

typedef struct gtctx {
    jarena *a;
    sn_err *err;
    jmp_buf fail;
    uint64_t steps;
} gtctx;

_Noreturn void gt_fail(gtctx *c, sn_status code, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void *gt_alloc(gtctx *c, size_t n);

#endif
