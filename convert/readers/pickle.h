/* pickle.h - a data-only pickle VM (protocols 2-5) for torch.save's data.pkl.
 *
 * A pickle is a program for a stack machine: opcodes push values (ints, strings, empty containers),
 * MARK/TUPLE/SETITEMS build containers, PUT/GET keep values in a memo, GLOBAL / STACK_GLOBAL push a
 * "module.name" reference and REDUCE calls it with a tuple of arguments. Python's unpickler imports
 * and calls whatever the file names, which is how a malicious checkpoint runs code. This VM never
 * calls anything: it knows a fixed allow-list of globals equal in spirit to torch.load(weights_only=
 * True) - collections.OrderedDict, torch._utils._rebuild_tensor_v2 / _rebuild_tensor /
 * _rebuild_parameter / _rebuild_parameter_with_state, torch.nn.parameter.Parameter, torch.Size,
 * the torch.*Storage classes, torch.UntypedStorage, the torch dtypes, _codecs.encode (how protocol
 * 2 writes bytes) - and builds plain values for them. Any other global is refused with its
 * module.name and the byte offset of the opcode. BINPERSID with ('storage', <Storage class>, key,
 * location, numel) yields a storage reference; torch's tensor rebuild functions yield a tensor
 * (storage, storage_offset, sizes, strides). Whether the referenced storage exists and is large
 * enough is the caller's check (torch_ckpt.c).
 *
 * Limits: memo entries, stack depth, MARK depth, container nesting, total values and string bytes
 * are bounded (sn_pk_limits), so a hostile file fails with a message instead of exhausting memory. */
#ifndef SN_PICKLE_H
#define SN_PICKLE_H
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef enum sn_pk_kind {
    SN_PK_NONE = 0, SN_PK_BOOL, SN_PK_INT, SN_PK_FLOAT, SN_PK_STR, SN_PK_BYTES,
    SN_PK_TUPLE, SN_PK_LIST, SN_PK_DICT, SN_PK_SET,
    SN_PK_GLOBAL,   /* an allowed global not yet called (a class or function) */
    SN_PK_STORAGE,  /* persistent id of a storage */
    SN_PK_TENSOR    /* a rebuilt tensor */
} sn_pk_kind;

/* torch scalar types by the storage class / dtype name torch writes. */
typedef enum sn_pk_dtype {
    SN_PK_DT_UNKNOWN = 0, SN_PK_DT_F32, SN_PK_DT_F16, SN_PK_DT_BF16, SN_PK_DT_F64,
    SN_PK_DT_I64, SN_PK_DT_I32, SN_PK_DT_I16, SN_PK_DT_I8, SN_PK_DT_U8, SN_PK_DT_BOOL,
    SN_PK_DT_C64, SN_PK_DT_C128, SN_PK_DT_C32
} sn_pk_dtype;

const char *sn_pk_dtype_name(sn_pk_dtype t); /* "torch.float32", ... */
uint32_t sn_pk_dtype_size(sn_pk_dtype t);     /* bytes per element, 0 if unknown */

#define SN_PK_MAX_DIMS 8

typedef struct sn_pk_value sn_pk_value;
struct sn_pk_value {
    sn_pk_kind kind;
    uint32_t depth;                 /* container nesting below this value (0 for scalars) */
    union {
        int b;
        int64_t i;
        double f;
        struct { const char *s; uint64_t len; } str;          /* STR (UTF-8) and BYTES; NUL-terminated */
        struct { sn_pk_value **items; uint64_t n, cap; } seq; /* TUPLE, LIST, SET; DICT: key, value, ... */
        struct { int id; const char *name; } global;          /* name: "module.name" */
        struct {
            sn_pk_dtype dtype;
            const char *key;        /* "0", "1", ...: the entry <archive>/data/<key> */
            const char *location;   /* "cpu", "cuda:0" */
            uint64_t numel;         /* elements of dtype, as the pickle claims */
        } storage;
        struct {
            const sn_pk_value *storage; /* SN_PK_STORAGE */
            uint64_t offset;            /* storage_offset in elements */
            uint32_t n_dims;
            uint64_t size[SN_PK_MAX_DIMS];
            int64_t stride[SN_PK_MAX_DIMS];
            uint64_t op_offset;         /* byte offset of the REDUCE that built it (errors) */
        } tensor;
    } u;
};

typedef struct sn_pk_limits {
    /* each 0 = its default in budget.h */
    uint64_t max_memo;    /* memo indices (SN_BUDGET_PKL_MEMO) */
    uint64_t max_stack;   /* values on the stack, all MARK levels together (SN_BUDGET_PKL_STACK) */
    uint64_t max_marks;   /* open MARKs (SN_BUDGET_PKL_MARKS) */
    uint64_t max_depth;   /* container nesting (SN_BUDGET_PKL_DEPTH) */
    uint64_t max_values;  /* values created (SN_BUDGET_PKL_VALUES) */
    uint64_t max_bytes;   /* total string/bytes payload (SN_BUDGET_PKL_STRINGS) */
    uint64_t max_mem;     /* VM memory (default: budget.h's SN_BUDGET_PKL_MEM_* for the pickle's size) */
} sn_pk_limits;

typedef struct sn_pk sn_pk;

/* Runs the pickle in buf[0, n). `what` names it in errors ("model.bin: archive/data.pkl");
 * base_offset is added to byte offsets in messages (the entry's offset in the file, 0 if not
 * meaningful). limits may be NULL for the defaults. */
sn_status sn_pk_load(const uint8_t *buf, uint64_t n, const char *what, uint64_t base_offset,
                     const sn_pk_limits *limits, sn_pk **out, sn_err *err);
const sn_pk_value *sn_pk_root(const sn_pk *p);
void sn_pk_free(sn_pk *p);

/* Dict lookup by string key; NULL if absent or not a dict. */
const sn_pk_value *sn_pk_dict_get(const sn_pk_value *d, const char *key);

#endif
