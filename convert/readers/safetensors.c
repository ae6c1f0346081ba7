/* safetensors.c - validated mmap reader for safetensors files and sharded model folders.
 *
 * The header is untrusted JSON: every field is checked (types, integer ranges, byte counts against
 * shapes, offsets against the file size, overlaps, duplicate names) before a tensor is handed out, so
 * callers can read tensor data without further checks. See safetensors.h for the format. */
#include "path.h"
#include "safetensors.h"
#include "torch_ckpt.h"

#include "ggml_types.h"
#include "mapfile.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct sn_st_file {
    sn_input in;              /* the file's bytes and name */
    sn_st_tensor *tensors;    /* sorted by name */
    size_t n;
};

/* One file of a model: safetensors or a PyTorch checkpoint (torch_ckpt.h). */
typedef struct {
    sn_st_file *st;
    sn_tc_file *tc;
} model_file;

struct sn_st_model {
    model_file *files;
    size_t n_files;
    const sn_st_tensor **tensors; /* llama.cpp order */
    size_t n;
    uint64_t data_bytes;
};

const char *sn_st_dtype_name(sn_st_dtype t) {
    switch (t) {
    case SN_ST_F32: return "F32";
    case SN_ST_F16: return "F16";
    case SN_ST_BF16: return "BF16";
    case SN_ST_U8: return "U8";
    }
    return "?";
}

uint32_t sn_st_dtype_size(sn_st_dtype t) { return t == SN_ST_F32 ? 4u : t == SN_ST_U8 ? 1u : 2u; }

/* Exact non-negative integer from a JSON number (<= 2^53), else -1. */
static int json_u64(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || d != (double)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
}

static int cmp_tensor_name(const void *a, const void *b) {
    return strcmp(((const sn_st_tensor *)a)->name, ((const sn_st_tensor *)b)->name);
}

static int cmp_tensor_ptr_offset(const void *a, const void *b) {
    const sn_st_tensor *x = *(const sn_st_tensor *const *)a, *y = *(const sn_st_tensor *const *)b;
    if (x->file_offset != y->file_offset) return x->file_offset < y->file_offset ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static sn_status parse_dtype(const char *s, sn_st_dtype *out) {
    if (strcmp(s, "F32") == 0) *out = SN_ST_F32;
    else if (strcmp(s, "F16") == 0) *out = SN_ST_F16;
    else if (strcmp(s, "BF16") == 0) *out = SN_ST_BF16;
    else if (strcmp(s, "U8") == 0) *out = SN_ST_U8;
    else return SN_EUNSUPPORTED;
    return SN_OK;
}

/* Parses one tensor entry `item` (named item->string) into t. */
static sn_status parse_entry(const sn_st_file *f, const cJSON *item, uint64_t data_start,
                             sn_st_tensor *t, sn_err *err) {
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': header entry is not an object", f->in.path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt) || !dt->valuestring)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': missing or non-string \"dtype\"", f->in.path, name);
    if (!cJSON_IsArray(sh))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': missing or non-array \"shape\"", f->in.path, name);
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': \"data_offsets\" must be [begin, end]",
                          f->in.path, name);
    if (parse_dtype(dt->valuestring, &t->dtype) != SN_OK)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s: tensor '%s': unsupported dtype %s (supported: F32, F16, BF16, U8)", f->in.path,
                          name, dt->valuestring);
    int nd = cJSON_GetArraySize(sh);
    /* more dimensions (a vision tower's Conv3d patch embedding): checked and kept out of reach; the
     * converter fails only if such a tensor is one it has to convert */
    if (nd > SN_ST_MAX_DIMS) t->unsupported = "more than 4 dimensions";
    t->n_dims = nd > SN_ST_MAX_DIMS ? 0 : (uint32_t)nd;
    uint64_t n = 1;
    for (int i = 0; i < SN_ST_MAX_DIMS; i++) t->shape[i] = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t d;
        if (json_u64(cJSON_GetArrayItem(sh, i), &d) != 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': shape[%d] is not a non-negative integer",
                              f->in.path, name, i);
        if (i < SN_ST_MAX_DIMS) t->shape[i] = d;
        if (d != 0 && n > UINT64_MAX / d)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': shape overflows", f->in.path, name);
        n *= d;
    }
    t->n_elems = n;
    uint32_t es = sn_st_dtype_size(t->dtype);
    if (n > UINT64_MAX / es)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': shape overflows", f->in.path, name);
    t->nbytes = n * es;
    uint64_t b, e;
    if (json_u64(cJSON_GetArrayItem(off, 0), &b) != 0 || json_u64(cJSON_GetArrayItem(off, 1), &e) != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': data_offsets are not non-negative integers",
                          f->in.path, name);
    if (e < b)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': data_offsets end %llu < begin %llu", f->in.path,
                          name, (unsigned long long)e, (unsigned long long)b);
    if (e - b != t->nbytes)
        return sn_err_set(err, SN_EFORMAT,
                          "%s: tensor '%s': data_offsets span %llu bytes but %s shape needs %llu",
                          f->in.path, name, (unsigned long long)(e - b), dt->valuestring,
                          (unsigned long long)t->nbytes);
    uint64_t data_size = f->in.size - data_start;
    if (e > data_size)
        return sn_err_set(err, SN_EFORMAT,
                          "%s: tensor '%s': data_offsets [%llu, %llu] run past the end of the file "
                          "(data area is %llu bytes; file truncated?)",
                          f->in.path, name, (unsigned long long)b, (unsigned long long)e,
                          (unsigned long long)data_size);
    t->file_offset = data_start + b;
    t->data = f->in.base + t->file_offset;
    int64_t stv = 1;
    for (int i = (int)t->n_dims - 1; i >= 0; i--) {
        t->stride[i] = stv;
        stv *= (int64_t)t->shape[i];
    }
    t->contiguous = 1;
    t->file = f->in.path;
    t->mmapped = f->in.mapped;
    return SN_OK;
}

static sn_status parse_file(sn_st_file *f, sn_err *err) {
    if (f->in.size < 8)
        return sn_err_set(err, SN_EFORMAT, "%s: truncated: %llu bytes, need at least 8 for the header length",
                          f->in.path, (unsigned long long)f->in.size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | f->in.base[i];
    if (hlen > SN_ST_MAX_HEADER)
        return sn_err_set(err, SN_EFORMAT, "%s: header length %llu at offset 0 exceeds the %llu MB budget "
                          "(SN_BUDGET_ST_HEADER, budget.h; not a safetensors file?)", f->in.path,
                          (unsigned long long)hlen, (unsigned long long)(SN_BUDGET_ST_HEADER >> 20));
    if (hlen < 2)
        return sn_err_set(err, SN_EFORMAT, "%s: header length %llu at offset 0 is too small", f->in.path,
                          (unsigned long long)hlen);
    if (hlen > f->in.size - 8)
        return sn_err_set(err, SN_EFORMAT, "%s: truncated: header needs %llu bytes after offset 8, file has %llu",
                          f->in.path, (unsigned long long)hlen, (unsigned long long)(f->in.size - 8));
    if (f->in.base[8] != '{')
        return sn_err_set(err, SN_EFORMAT, "%s: header at offset 8 is not a JSON object", f->in.path);
    char *txt = malloc(hlen + 1);
    if (!txt) return sn_err_set(err, SN_ENOMEM, "%s: out of memory for a %llu-byte header", f->in.path,
                                (unsigned long long)hlen);
    memcpy(txt, f->in.base + 8, hlen);
    txt[hlen] = 0;
    if (memchr(txt, 0, hlen)) {
        free(txt);
        return sn_err_set(err, SN_EFORMAT, "%s: header contains a NUL byte", f->in.path);
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(txt, hlen + 1, &end, 1);
    if (!root) {
        uint64_t at = end && end >= txt ? (uint64_t)(end - txt) : 0;
        free(txt);
        return sn_err_set(err, SN_EFORMAT, "%s: header is not valid JSON (near byte offset %llu)", f->in.path,
                          (unsigned long long)(8 + at));
    }
    free(txt);
    sn_status st = SN_OK;
    if (!cJSON_IsObject(root)) {
        st = sn_err_set(err, SN_EFORMAT, "%s: header is not a JSON object", f->in.path);
        goto out;
    }
    size_t cnt = 0;
    for (const cJSON *it = root->child; it; it = it->next)
        if (strcmp(it->string, "__metadata__") != 0) cnt++;
    f->tensors = calloc(cnt ? cnt : 1, sizeof(*f->tensors));
    if (!f->tensors) {
        st = sn_err_set(err, SN_ENOMEM, "%s: out of memory", f->in.path);
        goto out;
    }
    uint64_t data_start = 8 + hlen;
    for (const cJSON *it = root->child; it; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0) continue;
        sn_st_tensor *t = &f->tensors[f->n];
        char *nm = strdup(it->string);
        if (!nm) {
            st = sn_err_set(err, SN_ENOMEM, "%s: out of memory", f->in.path);
            goto out;
        }
        t->name = nm;
        f->n++;
        if ((st = parse_entry(f, it, data_start, t, err)) != SN_OK) goto out;
    }
    qsort(f->tensors, f->n, sizeof(*f->tensors), cmp_tensor_name);
    for (size_t i = 1; i < f->n; i++)
        if (strcmp(f->tensors[i - 1].name, f->tensors[i].name) == 0) {
            st = sn_err_set(err, SN_EFORMAT, "%s: tensor name '%s' appears twice in the header", f->in.path,
                            f->tensors[i].name);
            goto out;
        }
    /* overlap check on a by-offset view */
    if (f->n > 1) {
        const sn_st_tensor **v = malloc(f->n * sizeof(*v));
        if (!v) {
            st = sn_err_set(err, SN_ENOMEM, "%s: out of memory", f->in.path);
            goto out;
        }
        for (size_t i = 0; i < f->n; i++) v[i] = &f->tensors[i];
        qsort(v, f->n, sizeof(*v), cmp_tensor_ptr_offset);
        for (size_t i = 1; i < f->n; i++) {
            const sn_st_tensor *a = v[i - 1], *b = v[i];
            if (a->nbytes && b->nbytes && a->file_offset + a->nbytes > b->file_offset) {
                st = sn_err_set(err, SN_EFORMAT, "%s: tensors '%s' and '%s' overlap (bytes %llu..%llu and %llu..%llu)",
                                f->in.path, a->name, b->name, (unsigned long long)a->file_offset,
                                (unsigned long long)(a->file_offset + a->nbytes),
                                (unsigned long long)b->file_offset,
                                (unsigned long long)(b->file_offset + b->nbytes));
                break;
            }
        }
        free(v);
    }
out:
    cJSON_Delete(root);
    return st;
}

void sn_st_file_close(sn_st_file *f) {
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) free((char *)f->tensors[i].name);
    free(f->tensors);
    sn_input_close(&f->in);
    free(f);
}

/* Parses the bytes of *in, taken over even on failure. */
static sn_status open_input(sn_input *in, sn_st_file **out, sn_err *err) {
    sn_st_file *f = calloc(1, sizeof(*f));
    if (!f) {
        sn_input_close(in);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    f->in = *in;
    sn_status st = parse_file(f, err);
    if (st != SN_OK) {
        sn_st_file_close(f);
        return st;
    }
    *out = f;
    return SN_OK;
}

sn_status sn_st_file_open_mem(const void *buf, uint64_t size, const char *what, sn_st_file **out,
                              sn_err *err) {
    *out = NULL;
    sn_input in;
    sn_status st = sn_input_borrow(&in, buf, size, what ? what : "<memory>", err);
    return st != SN_OK ? st : open_input(&in, out, err);
}

sn_status sn_st_file_open(const char *path, sn_st_file **out, sn_err *err) {
    *out = NULL;
    sn_input in;
    sn_status st = sn_input_map(&in, path, err);
    return st != SN_OK ? st : open_input(&in, out, err);
}

size_t sn_st_file_n_tensors(const sn_st_file *f) { return f->n; }
const sn_st_tensor *sn_st_file_tensor(const sn_st_file *f, size_t i) { return i < f->n ? &f->tensors[i] : NULL; }

static int cmp_name_tensor(const void *name, const void *t) { return strcmp(name, ((const sn_st_tensor *)t)->name); }

int64_t sn_st_file_find(const sn_st_file *f, const char *name) {
    if (!f->n) return -1;
    const sn_st_tensor *t = bsearch(name, f->tensors, f->n, sizeof *f->tensors, cmp_name_tensor);
    return t ? t - f->tensors : -1;
}

/* Bytes from t->data to the end of its furthest element (== nbytes when contiguous). */
static uint64_t extent_bytes(const sn_st_tensor *t) {
    if (t->contiguous || t->n_elems == 0) return t->nbytes;
    uint64_t last = 0;
    for (uint32_t i = 0; i < t->n_dims; i++) last += (t->shape[i] - 1) * (uint64_t)t->stride[i];
    return (last + 1) * sn_st_dtype_size(t->dtype);
}

static float elem_at(const sn_st_tensor *t, uint64_t off) {
    const uint8_t *p = t->data + off * sn_st_dtype_size(t->dtype);
    uint16_t h;
    switch (t->dtype) {
    case SN_ST_F32: { float f; memcpy(&f, p, 4); return f; }
    case SN_ST_F16: memcpy(&h, p, 2); return sn_fp16_to_fp32(h);
    case SN_ST_BF16: memcpy(&h, p, 2); return sn_bf16_to_fp32(h);
    case SN_ST_U8: return *p;
    }
    return 0;
}

float sn_st_elem_f32(const sn_st_tensor *t, uint64_t e) {
    uint64_t off = 0;
    for (int i = (int)t->n_dims - 1; i >= 0; i--) {
        uint64_t d = t->shape[i] ? t->shape[i] : 1;
        off += (e % d) * (uint64_t)t->stride[i];
        e /= d;
    }
    return elem_at(t, off);
}

void sn_st_row_f32(const sn_st_tensor *t, uint64_t r, float *out) {
    if (t->n_dims == 0) { out[0] = elem_at(t, 0); return; }
    uint64_t base = 0, rr = r;
    for (int i = (int)t->n_dims - 2; i >= 0; i--) {
        uint64_t d = t->shape[i] ? t->shape[i] : 1;
        base += (rr % d) * (uint64_t)t->stride[i];
        rr /= d;
    }
    uint64_t n = t->shape[t->n_dims - 1], sd = (uint64_t)t->stride[t->n_dims - 1];
    for (uint64_t j = 0; j < n; j++) out[j] = elem_at(t, base + j * sd);
}

void sn_st_release(const sn_st_tensor *t, uint64_t off, uint64_t len) {
    if (!t || !t->data || !t->mmapped || len == 0) return;
    uint64_t ext = extent_bytes(t);
    if (!t->contiguous) off = 0, len = ext; /* rows are scattered: release the whole extent */
    if (off >= ext) return;
    if (len > ext - off) len = ext - off;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)(t->data + off), e = a + len;
    a &= ~(uintptr_t)(pg - 1);
    e = (e + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
    /* Read-only private file mapping: DONTNEED only drops our page-table entries; the data comes
     * back from the page cache on the next read. Never on caller buffers (it would zero them). */
    madvise((void *)a, e - a, MADV_DONTNEED);
}

/* ---- model folders ---- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void sn_st_model_close(sn_st_model *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_files; i++) {
        sn_st_file_close(m->files[i].st);
        sn_tc_close(m->files[i].tc);
    }
    free(m->files);
    free(m->tensors);
    free(m);
}

static size_t mf_n(const model_file *f) { return f->st ? f->st->n : sn_tc_n_tensors(f->tc); }
static const sn_st_tensor *mf_tensor(const model_file *f, size_t i) {
    return f->st ? &f->st->tensors[i] : sn_tc_tensor(f->tc, i);
}
static int64_t mf_find(const model_file *f, const char *name) {
    return f->st ? sn_st_file_find(f->st, name) : sn_tc_find(f->tc, name);
}
static const char *mf_path(const model_file *f) { return f->st ? f->st->in.path : sn_tc_path(f->tc); }

static int cmp_tensor_ptr_name(const void *a, const void *b) {
    return strcmp((*(const sn_st_tensor *const *)a)->name, (*(const sn_st_tensor *const *)b)->name);
}

/* Shard names from index.json (sorted, unique), validated as plain file names. */
static sn_status index_shards(const char *dir, const char *ipath, cJSON **root_out, char ***names_out,
                              size_t *n_out, sn_err *err) {
    char *txt = NULL;
    sn_status st = SN_READ_FILE(ipath, SN_BUDGET_ST_HEADER, &txt, NULL, err);
    if (st != SN_OK) return st;
    cJSON *root = cJSON_Parse(txt);
    free(txt);
    if (!root) return sn_err_set(err, SN_EFORMAT, "%s: not valid JSON", ipath);
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(wm)) {
        cJSON_Delete(root);
        return sn_err_set(err, SN_EFORMAT, "%s: missing \"weight_map\" object", ipath);
    }
    size_t cnt = (size_t)cJSON_GetArraySize(wm);
    char **names = calloc(cnt ? cnt : 1, sizeof(char *));
    if (!names) {
        cJSON_Delete(root);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    size_t n = 0;
    for (const cJSON *it = wm->child; it; it = it->next) {
        if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0] ||
            strchr(it->valuestring, '/') || strcmp(it->valuestring, "..") == 0) {
            /* the message quotes strings owned by root: format it before root is freed */
            sn_err_set(err, SN_EFORMAT, "%s: weight_map entry '%s' names '%s', not a plain shard file name", ipath,
                       it->string ? it->string : "", cJSON_IsString(it) && it->valuestring ? it->valuestring : "");
            free(names);
            cJSON_Delete(root);
            return SN_EFORMAT;
        }
        names[n++] = it->valuestring;
    }
    qsort(names, n, sizeof(char *), cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(names[u - 1], names[i]) != 0) names[u++] = names[i];
    (void)dir;
    *root_out = root;
    *names_out = names;
    *n_out = u;
    return SN_OK;
}

/* Sorted names in dir starting with `prefix` and ending with `suffix`. */
static sn_status dir_list(const char *dir, const char *prefix, const char *suffix, char ***names_out, size_t *n_out,
                          sn_err *err) {
    DIR *d = opendir(dir);
    if (!d) return sn_err_set(err, SN_EIO, "%s: cannot open directory: %s", dir, strerror(errno));
    size_t cap = 8, n = 0, lp = strlen(prefix), ls = strlen(suffix);
    char **names = malloc(cap * sizeof(char *));
    struct dirent *e;
    while (names && (e = readdir(d)) != NULL) {
        size_t L = strlen(e->d_name);
        if (L < lp + ls || strncmp(e->d_name, prefix, lp) != 0 || strcmp(e->d_name + L - ls, suffix) != 0) continue;
        if (n == cap) {
            char **nn = realloc(names, cap * 2 * sizeof(char *));
            if (!nn) break;
            names = nn;
            cap *= 2;
        }
        if (!(names[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(d);
    if (!names || e != NULL) {
        for (size_t i = 0; names && i < n; i++) free(names[i]);
        free(names);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    qsort(names, n, sizeof(char *), cmp_str);
    *names_out = names;
    *n_out = n;
    return SN_OK;
}

static void free_names(char **names, size_t n) {
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

/* Opens files[0..n) (paths) into m, then builds the tensor list and checks names. */
static sn_status model_fill(sn_st_model *m, char **paths, size_t n, int torch, const sn_st_open_opts *o, sn_err *err) {
    m->files = calloc(n ? n : 1, sizeof(*m->files));
    if (!m->files) return sn_err_set(err, SN_ENOMEM, "out of memory");
    sn_tc_opts to = {o ? o->state_key : NULL, o ? o->tmp_dir : NULL};
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        sn_status st = torch ? sn_tc_open(paths[i], &to, &m->files[i].tc, err)
                             : sn_st_file_open(paths[i], &m->files[i].st, err);
        if (st != SN_OK) return st;
        m->n_files++;
        total += mf_n(&m->files[i]);
    }
    m->tensors = calloc(total ? total : 1, sizeof(*m->tensors));
    if (!m->tensors) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t f = 0; f < m->n_files; f++)
        for (size_t i = 0; i < mf_n(&m->files[f]); i++) {
            const sn_st_tensor *t = mf_tensor(&m->files[f], i);
            m->tensors[m->n++] = t;
            if (!t->unsupported) m->data_bytes += t->nbytes;
        }
    /* names must be unique across shards */
    if (m->n > 1) {
        const sn_st_tensor **v = malloc(m->n * sizeof(*v));
        if (!v) return sn_err_set(err, SN_ENOMEM, "out of memory");
        memcpy(v, m->tensors, m->n * sizeof(*v));
        qsort(v, m->n, sizeof(*v), cmp_tensor_ptr_name);
        for (size_t i = 1; i < m->n; i++)
            if (strcmp(v[i - 1]->name, v[i]->name) == 0) {
                sn_status st = sn_err_set(err, SN_EFORMAT, "tensor '%s' appears in both %s and %s", v[i]->name,
                                          v[i - 1]->file, v[i]->file);
                free(v);
                return st;
            }
        free(v);
    }
    return SN_OK;
}

/* every tensor the index names must be in the shard it names */
static sn_status check_index(const sn_st_model *m, const char *ipath, const cJSON *iroot, sn_err *err) {
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(iroot, "weight_map");
    for (const cJSON *it = wm->child; it; it = it->next) {
        int64_t k = sn_st_model_find(m, it->string);
        const char *want = it->valuestring;
        const char *have = k >= 0 ? m->tensors[k]->file : NULL;
        const char *base = have ? strrchr(have, '/') : NULL;
        base = base ? base + 1 : have;
        if (k < 0 || strcmp(base, want) != 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' is listed in shard '%s' but %s", ipath, it->string, want,
                              k < 0 ? "no shard contains it" : "found elsewhere");
    }
    return SN_OK;
}

/* A folder: safetensors (index, else model*.safetensors), else PyTorch checkpoints (index, else
 * pytorch_model*.bin). */
static sn_status open_dir(sn_st_model *m, const char *dir, const sn_st_open_opts *o, sn_err *err) {
    static const char *const kinds[2][3] = {{"model.safetensors.index.json", "model", ".safetensors"},
                                            {"pytorch_model.bin.index.json", "pytorch_model", ".bin"}};
    sn_status st = SN_OK;
    for (int torch = 0; torch < 2; torch++) {
        char *ipath = sn_path_join(dir, kinds[torch][0]);
        if (!ipath) return sn_err_set(err, SN_ENOMEM, "out of memory");
        struct stat sb;
        cJSON *iroot = NULL;
        char **names = NULL, **paths = NULL;
        size_t n = 0;
        int from_index = stat(ipath, &sb) == 0;
        if (from_index) {
            st = index_shards(dir, ipath, &iroot, &names, &n, err);
        } else {
            st = dir_list(dir, kinds[torch][1], kinds[torch][2], &names, &n, err);
            if (st == SN_OK && n == 0) { /* nothing of this kind: try the next */
                free(names);
                free(ipath);
                continue;
            }
        }
        if (st == SN_OK && !(paths = calloc(n ? n : 1, sizeof(char *)))) st = sn_err_set(err, SN_ENOMEM, "out of memory");
        for (size_t i = 0; st == SN_OK && i < n; i++) {
            if (!(paths[i] = sn_path_join(dir, names[i]))) st = sn_err_set(err, SN_ENOMEM, "out of memory");
            else if (from_index && stat(paths[i], &sb) != 0)
                st = sn_err_set(err, SN_EIO, "%s names shard '%s', which does not exist (%s)", ipath, names[i],
                                strerror(errno));
        }
        if (st == SN_OK) st = model_fill(m, paths, n, torch, o, err);
        if (st == SN_OK && from_index) st = check_index(m, ipath, iroot, err);
        free_names(paths, n);
        if (from_index) free(names); /* the strings live in iroot */
        else free_names(names, n);
        cJSON_Delete(iroot);
        free(ipath);
        return st;
    }
    return sn_err_set(err, SN_EIO, "%s: no model*.safetensors or pytorch_model*.bin weight files", dir);
}

sn_status sn_st_model_open_path(const char *path, const sn_st_open_opts *o, sn_st_model **out, sn_err *err) {
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0) return sn_err_set(err, SN_EIO, "%s: cannot open: %s", path, strerror(errno));
    sn_st_model *m = calloc(1, sizeof(*m));
    if (!m) return sn_err_set(err, SN_ENOMEM, "out of memory");
    sn_status st;
    if (S_ISDIR(sb.st_mode)) {
        st = open_dir(m, path, o, err);
    } else {
        size_t L = strlen(path);
        int is_st = L >= 12 && strcmp(path + L - 12, ".safetensors") == 0;
        if (!is_st && !sn_tc_sniff(path))
            st = sn_err_set(err, SN_EFORMAT, "%s: neither a .safetensors file nor a PyTorch checkpoint (no zip or pickle "
                            "signature at offset 0)", path);
        else {
            char *p = (char *)path;
            st = model_fill(m, &p, 1, !is_st, o, err);
        }
    }
    if (st != SN_OK) {
        sn_st_model_close(m);
        return st;
    }
    *out = m;
    return SN_OK;
}

sn_status sn_st_model_open(const char *dir, sn_st_model **out, sn_err *err) {
    return sn_st_model_open_path(dir, NULL, out, err);
}

size_t sn_st_model_n_tensors(const sn_st_model *m) { return m->n; }
const sn_st_tensor *sn_st_model_tensor(const sn_st_model *m, size_t i) { return i < m->n ? m->tensors[i] : NULL; }
size_t sn_st_model_n_files(const sn_st_model *m) { return m->n_files; }
const char *sn_st_model_file(const sn_st_model *m, size_t i) { return i < m->n_files ? mf_path(&m->files[i]) : NULL; }
uint64_t sn_st_model_data_bytes(const sn_st_model *m) { return m->data_bytes; }

int64_t sn_st_model_find(const sn_st_model *m, const char *name) {
    size_t base = 0;
    for (size_t f = 0; f < m->n_files; f++) {
        int64_t k = mf_find(&m->files[f], name);
        if (k >= 0) return (int64_t)(base + (size_t)k);
        base += mf_n(&m->files[f]);
    }
    return -1;
}
