/* pickle.c - the data-only pickle VM (see pickle.h).
 *
 * Values live in an arena owned by the sn_pk handle; the stack and memo hold pointers into it, so
 * a memoized list appended to later is seen everywhere it is referenced, as in Python. Nothing is
 * ever called: the handful of allowed globals are recognised by name and REDUCE on them builds a
 * value (an empty dict, a tensor descriptor, a bytes object). Every read is bounds-checked against
 * the buffer, every count against a limit. */
#include "pickle.h"
#include "budget.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- allowed globals ---- */

enum {
    G_ORDEREDDICT = 1, G_REBUILD_TENSOR_V2, G_REBUILD_TENSOR, G_REBUILD_PARAMETER, G_REBUILD_PARAMETER_STATE,
    G_PARAMETER, G_SIZE, G_CODECS_ENCODE, G_DEVICE, G_STORAGE, G_DTYPE
};

typedef struct { const char *name; int id; sn_pk_dtype dt; } global_def;

static const global_def k_globals[] = {
    {"collections.OrderedDict", G_ORDEREDDICT, 0},
    {"torch._utils._rebuild_tensor_v2", G_REBUILD_TENSOR_V2, 0},
    {"torch._utils._rebuild_tensor", G_REBUILD_TENSOR, 0},
    {"torch._utils._rebuild_parameter", G_REBUILD_PARAMETER, 0},
    {"torch._utils._rebuild_parameter_with_state", G_REBUILD_PARAMETER_STATE, 0},
    {"torch.nn.parameter.Parameter", G_PARAMETER, 0},
    {"torch.Size", G_SIZE, 0},
    {"_codecs.encode", G_CODECS_ENCODE, 0},
    {"torch.device", G_DEVICE, 0},
    {"torch.FloatStorage", G_STORAGE, SN_PK_DT_F32},
    {"torch.HalfStorage", G_STORAGE, SN_PK_DT_F16},
    {"torch.BFloat16Storage", G_STORAGE, SN_PK_DT_BF16},
    {"torch.DoubleStorage", G_STORAGE, SN_PK_DT_F64},
    {"torch.LongStorage", G_STORAGE, SN_PK_DT_I64},
    {"torch.IntStorage", G_STORAGE, SN_PK_DT_I32},
    {"torch.ShortStorage", G_STORAGE, SN_PK_DT_I16},
    {"torch.CharStorage", G_STORAGE, SN_PK_DT_I8},
    {"torch.ByteStorage", G_STORAGE, SN_PK_DT_U8},
    {"torch.BoolStorage", G_STORAGE, SN_PK_DT_BOOL},
    {"torch.ComplexFloatStorage", G_STORAGE, SN_PK_DT_C64},
    {"torch.ComplexDoubleStorage", G_STORAGE, SN_PK_DT_C128},
    {"torch.UntypedStorage", G_STORAGE, SN_PK_DT_U8},
    {"torch.storage.UntypedStorage", G_STORAGE, SN_PK_DT_U8},
    {"torch.float32", G_DTYPE, SN_PK_DT_F32},
    {"torch.float", G_DTYPE, SN_PK_DT_F32},
    {"torch.float16", G_DTYPE, SN_PK_DT_F16},
    {"torch.half", G_DTYPE, SN_PK_DT_F16},
    {"torch.bfloat16", G_DTYPE, SN_PK_DT_BF16},
    {"torch.float64", G_DTYPE, SN_PK_DT_F64},
    {"torch.double", G_DTYPE, SN_PK_DT_F64},
    {"torch.int64", G_DTYPE, SN_PK_DT_I64},
    {"torch.long", G_DTYPE, SN_PK_DT_I64},
    {"torch.int32", G_DTYPE, SN_PK_DT_I32},
    {"torch.int", G_DTYPE, SN_PK_DT_I32},
    {"torch.int16", G_DTYPE, SN_PK_DT_I16},
    {"torch.short", G_DTYPE, SN_PK_DT_I16},
    {"torch.int8", G_DTYPE, SN_PK_DT_I8},
    {"torch.uint8", G_DTYPE, SN_PK_DT_U8},
    {"torch.bool", G_DTYPE, SN_PK_DT_BOOL},
    {"torch.complex32", G_DTYPE, SN_PK_DT_C32},
    {"torch.complex64", G_DTYPE, SN_PK_DT_C64},
    {"torch.complex128", G_DTYPE, SN_PK_DT_C128},
};

const char *sn_pk_dtype_name(sn_pk_dtype t) {
    switch (t) {
    case SN_PK_DT_F32: return "torch.float32";
    case SN_PK_DT_F16: return "torch.float16";
    case SN_PK_DT_BF16: return "torch.bfloat16";
    case SN_PK_DT_F64: return "torch.float64";
    case SN_PK_DT_I64: return "torch.int64";
    case SN_PK_DT_I32: return "torch.int32";
    case SN_PK_DT_I16: return "torch.int16";
    case SN_PK_DT_I8: return "torch.int8";
    case SN_PK_DT_U8: return "torch.uint8";
    case SN_PK_DT_BOOL: return "torch.bool";
    case SN_PK_DT_C32: return "torch.complex32";
    case SN_PK_DT_C64: return "torch.complex64";
    case SN_PK_DT_C128: return "torch.complex128";
    default: return "torch.<unknown>";
    }
}

uint32_t sn_pk_dtype_size(sn_pk_dtype t) {
    switch (t) {
    case SN_PK_DT_F64: case SN_PK_DT_I64: case SN_PK_DT_C64: return 8;
    case SN_PK_DT_F32: case SN_PK_DT_I32: case SN_PK_DT_C32: return 4;
    case SN_PK_DT_F16: case SN_PK_DT_BF16: case SN_PK_DT_I16: return 2;
    case SN_PK_DT_I8: case SN_PK_DT_U8: case SN_PK_DT_BOOL: return 1;
    case SN_PK_DT_C128: return 16;
    default: return 0;
    }
}

/* ---- arena ---- */

typedef struct block { struct block *next; size_t used, cap; uint8_t data[]; } block;

struct sn_pk {
    const uint8_t *buf;
    uint64_t n, pos, op_pos;
    const char *what;
    uint64_t base;
    sn_pk_limits lim;
    block *blocks;
    sn_pk_value **containers; /* values whose seq.items are malloc'd */
    uint64_t n_cont, cap_cont;
    uint64_t n_values, n_bytes;
    uint64_t mem; /* bytes of values, strings and container items: against lim.max_mem */
    sn_pk_value **stack;
    uint64_t sp, stack_cap;
    uint64_t *marks;
    uint64_t n_marks, marks_cap;
    sn_pk_value **memo;
    uint64_t memo_cap;
    sn_pk_value *root;
};

static void *arena_alloc(sn_pk *p, size_t n) {
    n = (n + 15) & ~(size_t)15;
    p->mem += n;
    if (!p->blocks || p->blocks->cap - p->blocks->used < n) {
        size_t cap = n > (1u << 16) ? n : (1u << 16);
        block *b = malloc(sizeof(block) + cap);
        if (!b) return NULL;
        b->next = p->blocks;
        b->used = 0;
        b->cap = cap;
        p->blocks = b;
    }
    void *r = p->blocks->data + p->blocks->used;
    p->blocks->used += n;
    return r;
}

#define OFF(p) ((unsigned long long)((p)->base + (p)->op_pos))
#define AT(p) (p)->what, (unsigned long long)(p)->op_pos, OFF(p)
#define AT_FMT "%s: byte %llu (file offset %llu): "

/* SN_BUDGET_PKL_MEM_*: the memory a pickle may make the VM use follows its size */
static sn_status over_mem(sn_pk *p, sn_err *err) {
    return sn_err_set(err, SN_EFORMAT, AT_FMT "the pickle needs more than %llu MB of memory (budget %llu MB + %u B per pickle "
                      "byte: SN_BUDGET_PKL_MEM_BASE, SN_BUDGET_PKL_MEM_PER_BYTE in budget.h; DUP/APPENDS?)", AT(p),
                      (unsigned long long)(p->lim.max_mem >> 20), (unsigned long long)(SN_BUDGET_PKL_MEM_BASE >> 20),
                      SN_BUDGET_PKL_MEM_PER_BYTE);
}

static sn_status new_value(sn_pk *p, sn_pk_kind k, sn_pk_value **out, sn_err *err) {
    if (++p->n_values > p->lim.max_values)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "more than %llu values (budget SN_BUDGET_PKL_VALUES, budget.h)", AT(p),
                          (unsigned long long)p->lim.max_values);
    if (p->mem > p->lim.max_mem) return over_mem(p, err);
    sn_pk_value *v = arena_alloc(p, sizeof(*v));
    if (!v) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
    memset(v, 0, sizeof(*v));
    v->kind = k;
    if (k == SN_PK_TUPLE || k == SN_PK_LIST || k == SN_PK_DICT || k == SN_PK_SET) {
        sn_pk_value **nn = sn_grow(p->containers, p->n_cont, &p->cap_cont, sizeof *nn, 256);
        if (!nn) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
        p->containers = nn;
        p->containers[p->n_cont++] = v;
    }
    *out = v;
    return SN_OK;
}

static sn_status seq_push(sn_pk *p, sn_pk_value *c, sn_pk_value *item, sn_err *err) {
    p->mem += 2 * sizeof(sn_pk_value *); /* the item and its share of the array's doubling */
    if (p->mem > p->lim.max_mem) return over_mem(p, err);
    sn_pk_value **ni = sn_grow(c->u.seq.items, c->u.seq.n, &c->u.seq.cap, sizeof *ni, 4);
    if (!ni) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
    c->u.seq.items = ni;
    c->u.seq.items[c->u.seq.n++] = item;
    if (item->depth + 1 > c->depth) {
        c->depth = item->depth + 1;
        if (c->depth > p->lim.max_depth)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "containers nested deeper than %llu levels (budget SN_BUDGET_PKL_DEPTH, budget.h)", AT(p),
                              (unsigned long long)p->lim.max_depth);
    }
    return SN_OK;
}

static sn_status new_str(sn_pk *p, sn_pk_kind k, const uint8_t *s, uint64_t len, sn_pk_value **out, sn_err *err) {
    if (len > p->lim.max_bytes || p->n_bytes + len > p->lim.max_bytes)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "more than %llu bytes of strings (budget SN_BUDGET_PKL_STRINGS, budget.h)", AT(p),
                          (unsigned long long)p->lim.max_bytes);
    p->n_bytes += len;
    sn_status st = new_value(p, k, out, err);
    if (st != SN_OK) return st;
    char *d = arena_alloc(p, (size_t)len + 1);
    if (!d) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
    if (len) memcpy(d, s, (size_t)len);
    d[len] = 0;
    (*out)->u.str.s = d;
    (*out)->u.str.len = len;
    return SN_OK;
}

/* ---- stack ---- */

static sn_status push(sn_pk *p, sn_pk_value *v, sn_err *err) {
    if (p->sp >= p->lim.max_stack)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "stack deeper than %llu values (budget SN_BUDGET_PKL_STACK, budget.h)", AT(p),
                          (unsigned long long)p->lim.max_stack);
    sn_pk_value **ns = sn_grow(p->stack, p->sp, &p->stack_cap, sizeof *ns, 256);
    if (!ns) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
    p->stack = ns;
    p->stack[p->sp++] = v;
    return SN_OK;
}

static uint64_t mark_base(const sn_pk *p) { return p->n_marks ? p->marks[p->n_marks - 1] : 0; }

static sn_status need(sn_pk *p, uint64_t k, const char *op, sn_err *err) {
    if (p->sp - mark_base(p) < k)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "%s needs %llu value(s) on the stack", AT(p), op, (unsigned long long)k);
    return SN_OK;
}

static sn_pk_value *pop(sn_pk *p) { return p->stack[--p->sp]; }

static sn_status pop_mark(sn_pk *p, uint64_t *start, const char *op, sn_err *err) {
    if (!p->n_marks) return sn_err_set(err, SN_EFORMAT, AT_FMT "%s without a MARK", AT(p), op);
    *start = p->marks[--p->n_marks];
    return SN_OK;
}

/* ---- reading ---- */

static sn_status take(sn_pk *p, uint64_t k, const uint8_t **out, sn_err *err) {
    if (p->n - p->pos < k)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "truncated: opcode needs %llu more bytes, %llu left", AT(p),
                          (unsigned long long)k, (unsigned long long)(p->n - p->pos));
    *out = p->buf + p->pos;
    p->pos += k;
    return SN_OK;
}

static uint64_t le(const uint8_t *b, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | b[i];
    return v;
}

/* text line up to '\n' (GLOBAL) */
static sn_status line(sn_pk *p, const uint8_t **s, uint64_t *len, sn_err *err) {
    uint64_t max = p->n - p->pos < 4096 ? p->n - p->pos : 4096;
    const uint8_t *nl = memchr(p->buf + p->pos, '\n', (size_t)max);
    if (!nl) return sn_err_set(err, SN_EFORMAT, AT_FMT "GLOBAL name not terminated by a newline", AT(p));
    *s = p->buf + p->pos;
    *len = (uint64_t)(nl - *s);
    p->pos += *len + 1;
    return SN_OK;
}

static sn_status make_global(sn_pk *p, const char *mod, uint64_t ml, const char *name, uint64_t nl, sn_err *err) {
    char full[512];
    if (ml + nl + 2 > sizeof full)
        return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "refused global: name longer than %zu bytes", AT(p), sizeof full);
    memcpy(full, mod, (size_t)ml);
    full[ml] = '.';
    memcpy(full + ml + 1, name, (size_t)nl);
    full[ml + 1 + nl] = 0;
    for (size_t i = 0; i < ml + 1 + nl; i++)
        if ((unsigned char)full[i] < 0x20 || full[i] == 0x7f) full[i] = '?';
    for (size_t i = 0; i < sizeof k_globals / sizeof k_globals[0]; i++)
        if (strcmp(k_globals[i].name, full) == 0) {
            sn_pk_value *v;
            sn_status st = new_value(p, SN_PK_GLOBAL, &v, err);
            if (st != SN_OK) return st;
            v->u.global.id = (int)i;
            v->u.global.name = k_globals[i].name;
            return push(p, v, err);
        }
    return sn_err_set(err, SN_EUNSUPPORTED,
                      AT_FMT "refused global %s: not in the weights-only allow-list (loading it could run code; "
                      "sunny reads tensors, dicts, lists and numbers only)", AT(p), full);
}

static int gid(const sn_pk_value *v) {
    return v && v->kind == SN_PK_GLOBAL ? k_globals[v->u.global.id].id : 0;
}

/* ---- REDUCE of allowed callables ---- */

static sn_status int_tuple(sn_pk *p, const sn_pk_value *t, const char *what, uint64_t *out, uint32_t *n_out, int allow_neg,
                           int64_t *sout, sn_err *err) {
    if (!t || (t->kind != SN_PK_TUPLE && t->kind != SN_PK_LIST))
        return sn_err_set(err, SN_EFORMAT, AT_FMT "tensor %s is not a tuple of integers", AT(p), what);
    if (t->u.seq.n > SN_PK_MAX_DIMS)
        return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "tensor with %llu dimensions (at most %d)", AT(p),
                          (unsigned long long)t->u.seq.n, SN_PK_MAX_DIMS);
    for (uint64_t i = 0; i < t->u.seq.n; i++) {
        const sn_pk_value *x = t->u.seq.items[i];
        if (x->kind != SN_PK_INT)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "tensor %s[%llu] is not an integer", AT(p), what, (unsigned long long)i);
        if (x->u.i < 0 && !allow_neg)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "tensor %s[%llu] is negative (%lld)", AT(p), what,
                              (unsigned long long)i, (long long)x->u.i);
        if (out) out[i] = (uint64_t)x->u.i;
        if (sout) sout[i] = x->u.i;
    }
    *n_out = (uint32_t)t->u.seq.n;
    return SN_OK;
}

/* An argument that must be a count or an offset: an integer >= 0 (what names it in the message). */
static sn_status want_count(sn_pk *p, const sn_pk_value *x, const char *what, sn_err *err) {
    if (x->kind != SN_PK_INT || x->u.i < 0)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "%s is not a non-negative integer", AT(p), what);
    return SN_OK;
}

static sn_status rebuild_tensor(sn_pk *p, const sn_pk_value *args, sn_pk_value **out, sn_err *err) {
    if (args->kind != SN_PK_TUPLE || args->u.seq.n < 4)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "_rebuild_tensor needs (storage, offset, size, stride, ...)", AT(p));
    sn_pk_value **a = args->u.seq.items;
    if (a[0]->kind != SN_PK_STORAGE)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "_rebuild_tensor: first argument is not a storage", AT(p));
    sn_pk_value *v;
    sn_status st = want_count(p, a[1], "_rebuild_tensor: storage_offset", err);
    if (st == SN_OK) st = new_value(p, SN_PK_TENSOR, &v, err);
    if (st != SN_OK) return st;
    uint32_t nd = 0, ns = 0;
    if ((st = int_tuple(p, a[2], "size", v->u.tensor.size, &nd, 0, NULL, err)) != SN_OK) return st;
    /* strides are checked for sign here so the message names them */
    if ((st = int_tuple(p, a[3], "stride", NULL, &ns, 1, v->u.tensor.stride, err)) != SN_OK) return st;
    if (nd != ns)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "tensor has %u sizes but %u strides", AT(p), nd, ns);
    for (uint32_t i = 0; i < ns; i++)
        if (v->u.tensor.stride[i] < 0)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "tensor stride[%u] is negative (%lld)", AT(p), i,
                              (long long)v->u.tensor.stride[i]);
    v->u.tensor.storage = a[0];
    v->u.tensor.offset = (uint64_t)a[1]->u.i;
    v->u.tensor.n_dims = nd;
    v->u.tensor.op_offset = p->base + p->op_pos;
    *out = v;
    return SN_OK;
}

/* latin-1 bytes from the UTF-8 string protocol 2 uses for bytes objects */
static sn_status codecs_encode(sn_pk *p, const sn_pk_value *args, sn_pk_value **out, sn_err *err) {
    if (args->kind != SN_PK_TUPLE || args->u.seq.n < 1 || args->u.seq.items[0]->kind != SN_PK_STR)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "_codecs.encode needs (str, encoding)", AT(p));
    const sn_pk_value *s = args->u.seq.items[0];
    if (args->u.seq.n >= 2 && (args->u.seq.items[1]->kind != SN_PK_STR ||
                               (strcmp(args->u.seq.items[1]->u.str.s, "latin1") != 0 &&
                                strcmp(args->u.seq.items[1]->u.str.s, "latin-1") != 0)))
        return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "_codecs.encode: only latin1 is supported", AT(p));
    uint8_t *tmp = malloc(s->u.str.len + 1);
    if (!tmp) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
    uint64_t k = 0;
    const uint8_t *c = (const uint8_t *)s->u.str.s;
    for (uint64_t i = 0; i < s->u.str.len;) {
        if (c[i] < 0x80) tmp[k++] = c[i++];
        else if ((c[i] & 0xE0) == 0xC0 && i + 1 < s->u.str.len && c[i] <= 0xC3) {
            tmp[k++] = (uint8_t)(((c[i] & 0x1F) << 6) | (c[i + 1] & 0x3F));
            i += 2;
        } else {
            free(tmp);
            return sn_err_set(err, SN_EFORMAT, AT_FMT "_codecs.encode: character above U+00FF in a latin1 string", AT(p));
        }
    }
    sn_status st = new_str(p, SN_PK_BYTES, tmp, k, out, err);
    free(tmp);
    return st;
}

static sn_status call(sn_pk *p, sn_pk_value *fn, sn_pk_value *args, sn_pk_value **out, sn_err *err) {
    int id = gid(fn);
    if (args->kind != SN_PK_TUPLE)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "call arguments are not a tuple", AT(p));
    switch (id) {
    case G_ORDEREDDICT: {
        sn_status st = new_value(p, SN_PK_DICT, out, err);
        if (st != SN_OK) return st;
        if (args->u.seq.n == 0) return SN_OK;
        const sn_pk_value *l = args->u.seq.items[0];
        if (args->u.seq.n != 1 || (l->kind != SN_PK_LIST && l->kind != SN_PK_TUPLE))
            return sn_err_set(err, SN_EFORMAT, AT_FMT "OrderedDict() arguments must be empty or a list of pairs", AT(p));
        for (uint64_t i = 0; i < l->u.seq.n; i++) {
            const sn_pk_value *kv = l->u.seq.items[i];
            if ((kv->kind != SN_PK_TUPLE && kv->kind != SN_PK_LIST) || kv->u.seq.n != 2)
                return sn_err_set(err, SN_EFORMAT, AT_FMT "OrderedDict() item %llu is not a pair", AT(p), (unsigned long long)i);
            if ((st = seq_push(p, *out, kv->u.seq.items[0], err)) != SN_OK) return st;
            if ((st = seq_push(p, *out, kv->u.seq.items[1], err)) != SN_OK) return st;
        }
        return SN_OK;
    }
    case G_REBUILD_TENSOR_V2:
    case G_REBUILD_TENSOR: return rebuild_tensor(p, args, out, err);
    case G_REBUILD_PARAMETER:
    case G_REBUILD_PARAMETER_STATE:
    case G_PARAMETER:
        if (args->u.seq.n < 1 || args->u.seq.items[0]->kind != SN_PK_TENSOR)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "%s: first argument is not a tensor", AT(p), fn->u.global.name);
        *out = args->u.seq.items[0];
        return SN_OK;
    case G_SIZE: {
        if (args->u.seq.n == 0) return new_value(p, SN_PK_TUPLE, out, err);
        if (args->u.seq.n != 1 || args->u.seq.items[0]->kind != SN_PK_TUPLE)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "torch.Size() needs one tuple", AT(p));
        *out = args->u.seq.items[0];
        return SN_OK;
    }
    case G_CODECS_ENCODE: return codecs_encode(p, args, out, err);
    case G_DEVICE:
        if (args->u.seq.n < 1 || args->u.seq.items[0]->kind != SN_PK_STR)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "torch.device() needs a string", AT(p));
        *out = args->u.seq.items[0];
        return SN_OK;
    default:
        return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "refused call of %s (only tensor, dict and Size constructors are "
                          "run)", AT(p), fn->kind == SN_PK_GLOBAL ? fn->u.global.name : "a non-callable value");
    }
}

/* BINPERSID: ('storage', <Storage class>, key, location, numel) */
static sn_status persistent(sn_pk *p, const sn_pk_value *pid, sn_pk_value **out, sn_err *err) {
    if (pid->kind != SN_PK_TUPLE || pid->u.seq.n < 5)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "persistent id is not a ('storage', type, key, location, numel) tuple",
                          AT(p));
    sn_pk_value **a = pid->u.seq.items;
    if ((a[0]->kind != SN_PK_STR && a[0]->kind != SN_PK_BYTES) || strcmp(a[0]->u.str.s, "storage") != 0)
        return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "persistent id of kind other than 'storage' refused", AT(p));
    const sn_pk_value *cls = a[1];
    if (gid(cls) != G_STORAGE && gid(cls) != G_DTYPE)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "storage type is not a torch Storage class", AT(p));
    if (a[2]->kind != SN_PK_STR && a[2]->kind != SN_PK_INT)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "storage key is not a string", AT(p));
    sn_pk_value *v;
    sn_status st = want_count(p, a[4], "storage numel", err);
    if (st == SN_OK) st = new_value(p, SN_PK_STORAGE, &v, err);
    if (st != SN_OK) return st;
    v->u.storage.dtype = k_globals[cls->u.global.id].dt;
    if (a[2]->kind == SN_PK_INT) {
        char kb[32];
        int kl = snprintf(kb, sizeof kb, "%lld", (long long)a[2]->u.i);
        sn_pk_value *ks;
        if ((st = new_str(p, SN_PK_STR, (const uint8_t *)kb, (uint64_t)kl, &ks, err)) != SN_OK) return st;
        v->u.storage.key = ks->u.str.s;
    } else
        v->u.storage.key = a[2]->u.str.s;
    v->u.storage.location = (a[3]->kind == SN_PK_STR || a[3]->kind == SN_PK_BYTES) ? a[3]->u.str.s : "";
    v->u.storage.numel = (uint64_t)a[4]->u.i;
    *out = v;
    return SN_OK;
}

/* ---- the loop ---- */

static sn_status memo_put(sn_pk *p, uint64_t idx, sn_err *err) {
    if (p->sp == mark_base(p)) return sn_err_set(err, SN_EFORMAT, AT_FMT "memo put with an empty stack", AT(p));
    if (idx >= p->lim.max_memo)
        return sn_err_set(err, SN_EFORMAT, AT_FMT "memo index %llu exceeds the budget of %llu entries (SN_BUDGET_PKL_MEMO, budget.h)", AT(p),
                          (unsigned long long)idx, (unsigned long long)p->lim.max_memo);
    if (idx >= p->memo_cap) {
        uint64_t nc = p->memo_cap ? p->memo_cap : 64;
        while (nc <= idx) nc *= 2;
        if (nc > p->lim.max_memo) nc = p->lim.max_memo;
        sn_pk_value **nm = realloc(p->memo, nc * sizeof(*nm));
        if (!nm) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
        memset(nm + p->memo_cap, 0, (nc - p->memo_cap) * sizeof(*nm));
        p->memo = nm;
        p->memo_cap = nc;
    }
    p->memo[idx] = p->stack[p->sp - 1];
    return SN_OK;
}

static sn_status memo_get(sn_pk *p, uint64_t idx, sn_err *err) {
    if (idx >= p->memo_cap || !p->memo[idx])
        return sn_err_set(err, SN_EFORMAT, AT_FMT "memo index %llu out of range (never stored)", AT(p),
                          (unsigned long long)idx);
    return push(p, p->memo[idx], err);
}

static sn_status run(sn_pk *p, sn_err *err) {
    uint64_t memoize_next = 0;
    sn_status st = SN_OK;
    while (st == SN_OK) {
        p->op_pos = p->pos;
        if (p->pos >= p->n)
            return sn_err_set(err, SN_EFORMAT, AT_FMT "pickle ends without a STOP opcode (truncated?)", AT(p));
        uint8_t op = p->buf[p->pos++];
        const uint8_t *b;
        sn_pk_value *v = NULL;
        switch (op) {
        case 0x80: /* PROTO */
            if ((st = take(p, 1, &b, err)) != SN_OK) return st;
            if (b[0] < 2 || b[0] > 5)
                return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "pickle protocol %u (2 to 5 are supported)", AT(p), b[0]);
            break;
        case 0x95: /* FRAME */
            if ((st = take(p, 8, &b, err)) != SN_OK) return st;
            if (le(b, 8) > p->n - p->pos)
                return sn_err_set(err, SN_EFORMAT, AT_FMT "FRAME of %llu bytes runs past the end", AT(p),
                                  (unsigned long long)le(b, 8));
            break;
        case '.': /* STOP */
            if (p->n_marks) return sn_err_set(err, SN_EFORMAT, AT_FMT "STOP with an open MARK", AT(p));
            if (p->sp != 1) return sn_err_set(err, SN_EFORMAT, AT_FMT "STOP with %llu values on the stack (need 1)", AT(p),
                                              (unsigned long long)p->sp);
            p->root = p->stack[0];
            return SN_OK;
        case '(': /* MARK */
            if (p->n_marks >= p->lim.max_marks)
                return sn_err_set(err, SN_EFORMAT, AT_FMT "more than %llu nested MARKs (budget SN_BUDGET_PKL_MARKS, budget.h)", AT(p),
                                  (unsigned long long)p->lim.max_marks);
            uint64_t *nm = sn_grow(p->marks, p->n_marks, &p->marks_cap, sizeof *nm, 64);
            if (!nm) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", p->what);
            p->marks = nm;
            p->marks[p->n_marks++] = p->sp;
            break;
        case '0': /* POP */
            if ((st = need(p, 1, "POP", err)) != SN_OK) return st;
            p->sp--;
            break;
        case '1': { /* POP_MARK */
            uint64_t s0 = 0;
            if ((st = pop_mark(p, &s0, "POP_MARK", err)) != SN_OK) return st;
            p->sp = s0;
            break;
        }
        case '2': /* DUP */
            if ((st = need(p, 1, "DUP", err)) != SN_OK) return st;
            st = push(p, p->stack[p->sp - 1], err);
            break;
        case 'N': st = new_value(p, SN_PK_NONE, &v, err); if (st == SN_OK) st = push(p, v, err); break;
        case 0x88: case 0x89: /* NEWTRUE, NEWFALSE */
            st = new_value(p, SN_PK_BOOL, &v, err);
            if (st == SN_OK) { v->u.b = op == 0x88; st = push(p, v, err); }
            break;
        case 'J': case 'K': case 'M': { /* BININT, BININT1, BININT2 */
            int k = op == 'J' ? 4 : op == 'K' ? 1 : 2;
            if ((st = take(p, (uint64_t)k, &b, err)) != SN_OK) return st;
            if ((st = new_value(p, SN_PK_INT, &v, err)) != SN_OK) return st;
            v->u.i = op == 'J' ? (int64_t)(int32_t)(uint32_t)le(b, 4) : (int64_t)le(b, k);
            st = push(p, v, err);
            break;
        }
        case 0x8a: case 0x8b: { /* LONG1, LONG4 */
            if ((st = take(p, op == 0x8a ? 1 : 4, &b, err)) != SN_OK) return st;
            uint64_t k = le(b, op == 0x8a ? 1 : 4);
            if (k > 8)
                return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "integer of %llu bytes does not fit 64 bits", AT(p),
                                  (unsigned long long)k);
            if ((st = take(p, k, &b, err)) != SN_OK) return st;
            uint64_t u = le(b, (int)k);
            if (k && k < 8 && (b[k - 1] & 0x80)) u |= ~0ull << (8 * k); /* sign-extend */
            if ((st = new_value(p, SN_PK_INT, &v, err)) != SN_OK) return st;
            v->u.i = (int64_t)u;
            st = push(p, v, err);
            break;
        }
        case 'G': { /* BINFLOAT, big-endian */
            if ((st = take(p, 8, &b, err)) != SN_OK) return st;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++) u = (u << 8) | b[i];
            if ((st = new_value(p, SN_PK_FLOAT, &v, err)) != SN_OK) return st;
            memcpy(&v->u.f, &u, 8);
            st = push(p, v, err);
            break;
        }
        case 'X': case 0x8c: case 0x8d: /* BINUNICODE, SHORT_BINUNICODE, BINUNICODE8 */
        case 'B': case 'C': case 0x8e: case 0x96: /* BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8 */
        case 'T': case 'U': { /* BINSTRING, SHORT_BINSTRING (py2 str) */
            int k = (op == 'X' || op == 'B' || op == 'T') ? 4 : (op == 0x8c || op == 'C' || op == 'U') ? 1 : 8;
            if ((st = take(p, (uint64_t)k, &b, err)) != SN_OK) return st;
            uint64_t len = le(b, k);
            if (len > p->n - p->pos)
                return sn_err_set(err, SN_EFORMAT, AT_FMT "string of %llu bytes runs past the end of the pickle", AT(p),
                                  (unsigned long long)len);
            if ((st = take(p, len, &b, err)) != SN_OK) return st;
            int is_str = op == 'X' || op == 0x8c || op == 0x8d || op == 'T' || op == 'U';
            if ((st = new_str(p, is_str ? SN_PK_STR : SN_PK_BYTES, b, len, &v, err)) != SN_OK) return st;
            st = push(p, v, err);
            break;
        }
        case ')': st = new_value(p, SN_PK_TUPLE, &v, err); if (st == SN_OK) st = push(p, v, err); break;
        case ']': st = new_value(p, SN_PK_LIST, &v, err); if (st == SN_OK) st = push(p, v, err); break;
        case '}': st = new_value(p, SN_PK_DICT, &v, err); if (st == SN_OK) st = push(p, v, err); break;
        case 0x8f: st = new_value(p, SN_PK_SET, &v, err); if (st == SN_OK) st = push(p, v, err); break;
        case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
            uint64_t k = (uint64_t)(op - 0x84);
            if ((st = need(p, k, "TUPLEn", err)) != SN_OK) return st;
            if ((st = new_value(p, SN_PK_TUPLE, &v, err)) != SN_OK) return st;
            for (uint64_t i = p->sp - k; i < p->sp; i++)
                if ((st = seq_push(p, v, p->stack[i], err)) != SN_OK) return st;
            p->sp -= k;
            st = push(p, v, err);
            break;
        }
        case 't': case 'l': case 'd': case 0x91: { /* TUPLE, LIST, DICT, FROZENSET from MARK */
            uint64_t s0 = 0;
            if ((st = pop_mark(p, &s0, "TUPLE/LIST/DICT", err)) != SN_OK) return st;
            sn_pk_kind k = op == 't' ? SN_PK_TUPLE : op == 'l' ? SN_PK_LIST : op == 'd' ? SN_PK_DICT : SN_PK_SET;
            if (k == SN_PK_DICT && (p->sp - s0) % 2)
                return sn_err_set(err, SN_EFORMAT, AT_FMT "DICT with an odd number of items", AT(p));
            if ((st = new_value(p, k, &v, err)) != SN_OK) return st;
            for (uint64_t i = s0; i < p->sp; i++)
                if ((st = seq_push(p, v, p->stack[i], err)) != SN_OK) return st;
            p->sp = s0;
            st = push(p, v, err);
            break;
        }
        case 'a': { /* APPEND */
            if ((st = need(p, 2, "APPEND", err)) != SN_OK) return st;
            sn_pk_value *item = pop(p), *l = p->stack[p->sp - 1];
            if (l->kind != SN_PK_LIST) return sn_err_set(err, SN_EFORMAT, AT_FMT "APPEND to a non-list", AT(p));
            st = seq_push(p, l, item, err);
            break;
        }
        case 'e': case 0x90: { /* APPENDS, ADDITEMS */
            uint64_t s0 = 0;
            if ((st = pop_mark(p, &s0, "APPENDS", err)) != SN_OK) return st;
            if (s0 == mark_base(p)) return sn_err_set(err, SN_EFORMAT, AT_FMT "APPENDS without a list", AT(p));
            sn_pk_value *l = p->stack[s0 - 1];
            if (l->kind != (op == 'e' ? SN_PK_LIST : SN_PK_SET))
                return sn_err_set(err, SN_EFORMAT, AT_FMT "%s to a value of the wrong kind", AT(p),
                                  op == 'e' ? "APPENDS" : "ADDITEMS");
            for (uint64_t i = s0; i < p->sp; i++)
                if ((st = seq_push(p, l, p->stack[i], err)) != SN_OK) return st;
            p->sp = s0;
            break;
        }
        case 's': { /* SETITEM */
            if ((st = need(p, 3, "SETITEM", err)) != SN_OK) return st;
            sn_pk_value *val = pop(p), *key = pop(p), *d = p->stack[p->sp - 1];
            if (d->kind != SN_PK_DICT) return sn_err_set(err, SN_EFORMAT, AT_FMT "SETITEM on a non-dict", AT(p));
            if ((st = seq_push(p, d, key, err)) == SN_OK) st = seq_push(p, d, val, err);
            break;
        }
        case 'u': { /* SETITEMS */
            uint64_t s0 = 0;
            if ((st = pop_mark(p, &s0, "SETITEMS", err)) != SN_OK) return st;
            if (s0 == mark_base(p)) return sn_err_set(err, SN_EFORMAT, AT_FMT "SETITEMS without a dict", AT(p));
            sn_pk_value *d = p->stack[s0 - 1];
            if (d->kind != SN_PK_DICT) return sn_err_set(err, SN_EFORMAT, AT_FMT "SETITEMS on a non-dict", AT(p));
            if ((p->sp - s0) % 2) return sn_err_set(err, SN_EFORMAT, AT_FMT "SETITEMS with an odd number of items", AT(p));
            for (uint64_t i = s0; i < p->sp; i++)
                if ((st = seq_push(p, d, p->stack[i], err)) != SN_OK) return st;
            p->sp = s0;
            break;
        }
        case 'q': case 'r': /* BINPUT, LONG_BINPUT */
            if ((st = take(p, op == 'q' ? 1 : 4, &b, err)) != SN_OK) return st;
            st = memo_put(p, le(b, op == 'q' ? 1 : 4), err);
            break;
        case 0x94: /* MEMOIZE */
            st = memo_put(p, memoize_next, err);
            memoize_next++;
            break;
        case 'h': case 'j': /* BINGET, LONG_BINGET */
            if ((st = take(p, op == 'h' ? 1 : 4, &b, err)) != SN_OK) return st;
            st = memo_get(p, le(b, op == 'h' ? 1 : 4), err);
            break;
        case 'c': { /* GLOBAL module\nname\n */
            const uint8_t *m, *n;
            uint64_t ml, nl;
            if ((st = line(p, &m, &ml, err)) != SN_OK) return st;
            if ((st = line(p, &n, &nl, err)) != SN_OK) return st;
            st = make_global(p, (const char *)m, ml, (const char *)n, nl, err);
            break;
        }
        case 0x93: { /* STACK_GLOBAL */
            if ((st = need(p, 2, "STACK_GLOBAL", err)) != SN_OK) return st;
            sn_pk_value *n = pop(p), *m = pop(p);
            if (m->kind != SN_PK_STR || n->kind != SN_PK_STR)
                return sn_err_set(err, SN_EFORMAT, AT_FMT "STACK_GLOBAL needs two strings", AT(p));
            st = make_global(p, m->u.str.s, m->u.str.len, n->u.str.s, n->u.str.len, err);
            break;
        }
        case 'R': { /* REDUCE */
            if ((st = need(p, 2, "REDUCE", err)) != SN_OK) return st;
            sn_pk_value *args = pop(p), *fn = pop(p);
            if ((st = call(p, fn, args, &v, err)) != SN_OK) return st;
            st = push(p, v, err);
            break;
        }
        case 0x81: case 0x92: { /* NEWOBJ, NEWOBJ_EX */
            uint64_t k = op == 0x81 ? 2 : 3;
            if ((st = need(p, k, "NEWOBJ", err)) != SN_OK) return st;
            if (op == 0x92) {
                sn_pk_value *kw = pop(p);
                if (kw->kind != SN_PK_DICT || kw->u.seq.n)
                    return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "NEWOBJ_EX with keyword arguments refused", AT(p));
            }
            sn_pk_value *args = pop(p), *cls = pop(p);
            if (gid(cls) != G_PARAMETER && gid(cls) != G_ORDEREDDICT)
                return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "refused to instantiate %s (only torch.nn.Parameter and "
                                  "OrderedDict)", AT(p), cls->kind == SN_PK_GLOBAL ? cls->u.global.name : "a non-class value");
            if ((st = call(p, cls, args, &v, err)) != SN_OK) return st;
            st = push(p, v, err);
            break;
        }
        case 'b': { /* BUILD: state is dropped (state_dict._metadata, Parameter attributes) */
            if ((st = need(p, 2, "BUILD", err)) != SN_OK) return st;
            sn_pk_value *state = pop(p), *inst = p->stack[p->sp - 1];
            if (inst->kind != SN_PK_DICT && inst->kind != SN_PK_TENSOR)
                return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "BUILD on something other than a dict or tensor refused", AT(p));
            if (inst->kind == SN_PK_TENSOR && state->kind != SN_PK_DICT && state->kind != SN_PK_NONE &&
                state->kind != SN_PK_TUPLE)
                return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "BUILD on a tensor with a non-dict state refused", AT(p));
            break;
        }
        case 'Q': { /* BINPERSID */
            if ((st = need(p, 1, "BINPERSID", err)) != SN_OK) return st;
            sn_pk_value *pid = pop(p);
            if ((st = persistent(p, pid, &v, err)) != SN_OK) return st;
            st = push(p, v, err);
            break;
        }
        case 'i': case 'o':
            return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "refused opcode '%c' (INST/OBJ instantiate arbitrary classes)",
                              AT(p), op);
        case 0x82: case 0x83: case 0x84:
            return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "refused opcode EXT%d (copyreg extension registry)", AT(p),
                              op == 0x82 ? 1 : op == 0x83 ? 2 : 4);
        case 0x97: case 0x98:
            return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "out-of-band buffers (protocol 5) are not supported", AT(p));
        case 'P':
            return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "text persistent ids (PERSID) are not supported", AT(p));
        case 'I': case 'L': case 'F': case 'S': case 'V': case 'g': case 'p':
            return sn_err_set(err, SN_EUNSUPPORTED, AT_FMT "protocol 0 text opcode '%c' is not supported (torch.save "
                              "writes protocol 2)", AT(p), op);
        default:
            return sn_err_set(err, SN_EFORMAT, AT_FMT "unknown pickle opcode 0x%02x", AT(p), op);
        }
    }
    return st;
}

void sn_pk_free(sn_pk *p) {
    if (!p) return;
    for (uint64_t i = 0; i < p->n_cont; i++) free(p->containers[i]->u.seq.items);
    free(p->containers);
    while (p->blocks) {
        block *n = p->blocks->next;
        free(p->blocks);
        p->blocks = n;
    }
    free(p->stack);
    free(p->marks);
    free(p->memo);
    free(p);
}

/* The caller's limits (may be NULL), each 0 replaced by its budget. */
static sn_pk_limits limits_or_defaults(const sn_pk_limits *limits) {
    sn_pk_limits d = {SN_BUDGET_PKL_MEMO,  SN_BUDGET_PKL_STACK,   SN_BUDGET_PKL_MARKS, SN_BUDGET_PKL_DEPTH,
                      SN_BUDGET_PKL_VALUES, SN_BUDGET_PKL_STRINGS, 0};
    if (limits) {
        if (limits->max_memo) d.max_memo = limits->max_memo;
        if (limits->max_stack) d.max_stack = limits->max_stack;
        if (limits->max_marks) d.max_marks = limits->max_marks;
        if (limits->max_depth) d.max_depth = limits->max_depth;
        if (limits->max_values) d.max_values = limits->max_values;
        if (limits->max_bytes) d.max_bytes = limits->max_bytes;
        if (limits->max_mem) d.max_mem = limits->max_mem;
    }
    return d;
}

sn_status sn_pk_load(const uint8_t *buf, uint64_t n, const char *what, uint64_t base_offset,
                     const sn_pk_limits *limits, sn_pk **out, sn_err *err) {
    *out = NULL;
    sn_pk *p = calloc(1, sizeof(*p));
    if (!p) return sn_err_set(err, SN_ENOMEM, "out of memory");
    p->buf = buf;
    p->n = n;
    p->what = what ? what : "<pickle>";
    p->base = base_offset;
    p->lim = limits_or_defaults(limits);
    if (!p->lim.max_mem)
        p->lim.max_mem = SN_BUDGET_PKL_MEM_BASE +
                         (n < UINT64_MAX / SN_BUDGET_PKL_MEM_PER_BYTE ? n * SN_BUDGET_PKL_MEM_PER_BYTE : UINT64_MAX / 2);
    const sn_status st = run(p, err);
    if (st == SN_OK) *out = p;
    else sn_pk_free(p);
    return st;
}

const sn_pk_value *sn_pk_root(const sn_pk *p) { return p->root; }

const sn_pk_value *sn_pk_dict_get(const sn_pk_value *d, const char *key) {
    if (!d || d->kind != SN_PK_DICT) return NULL;
    const sn_pk_value *found = NULL;
    for (uint64_t i = 0; i + 1 < d->u.seq.n; i += 2) {
        const sn_pk_value *k = d->u.seq.items[i];
        if (k->kind == SN_PK_STR && strcmp(k->u.str.s, key) == 0) found = d->u.seq.items[i + 1]; /* last wins */
    }
    return found;
}
