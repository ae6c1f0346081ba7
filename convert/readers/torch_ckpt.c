/* torch_ckpt.c - torch.save archives as safetensors-like tensor lists (see torch_ckpt.h).
 *
 * Open = map the file, check the zip, run data.pkl through the data-only pickle VM, pick the state
 * dict, then turn every (storage, offset, sizes, strides) into an sn_st_tensor after checking it
 * against its storage entry. Storages are resolved once per key; several tensors may point into
 * the same one. */
#include "torch_ckpt.h"
#include "pickle.h"
#include "torch_zip.h"
#include "budget.h"

#include "grow.h"
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_WALK_DEPTH 16      /* how deep we look for the state dict */
#define MAX_WALK_VISITS 100000 /* dicts looked at; memo references can share one dict many times */

typedef struct {
    const char *key;
    const uint8_t *data;
    uint64_t nbytes;
    uint64_t file_offset;
    int mmapped;
} storage_t;

typedef struct { void *p; uint64_t n; int heap; } map_t; /* heap: malloc'd (in-memory archives) */

struct sn_tc_file {
    sn_input in;         /* the archive's bytes and name */
    sn_zip *zip;
    sn_st_tensor *t;
    size_t n;
    storage_t *storages;
    size_t n_storages;
    uint64_t cap_storages;
    map_t *maps;     /* inflated storages */
    size_t n_maps;
    char state_key[256];
    char prefix[256];
    char tmp_dir[4096]; /* where deflated storages are inflated */
};

static const uint8_t k_legacy_magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

int sn_tc_sniff(const char *path) {
    int fd = sn_open_regular(path, NULL);
    if (fd < 0) return 0;
    uint8_t b[16];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (n >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) return 1;
    if (n >= (ssize_t)sizeof k_legacy_magic && memcmp(b, k_legacy_magic, sizeof k_legacy_magic) == 0) return 1;
    return 0;
}

void sn_tc_close(sn_tc_file *f) {
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) free((char *)f->t[i].name);
    free(f->t);
    free(f->storages);
    for (size_t i = 0; i < f->n_maps; i++) {
        if (f->maps[i].heap) free(f->maps[i].p);
        else munmap(f->maps[i].p, f->maps[i].n);
    }
    free(f->maps);
    sn_zip_close(f->zip);
    sn_input_close(&f->in);
    free(f);
}

static sn_status refuse_legacy(const sn_tc_file *f, const char *kind, sn_err *err) {
    return sn_err_set(err, SN_EUNSUPPORTED,
                      "%s: %s torch.save format (written by torch < 1.6 or with _use_new_zipfile_serialization=False) "
                      "is not supported; re-save it in the zip format with torch >= 1.6: python -c \"import torch; "
                      "torch.save(torch.load('%s', map_location='cpu', weights_only=True), 'resaved.bin')\"",
                      f->in.path, kind, f->in.path);
}

/* one more slot in f->maps, for an inflated storage; 0 when out of memory */
static int room_for_map(sn_tc_file *f) {
    map_t *nm = realloc(f->maps, (f->n_maps + 1) * sizeof(*nm));
    if (!nm) return 0;
    f->maps = nm;
    return 1;
}

/* The storage entry for key, inflated to a mapped temp file if deflated; want = the bytes the pickle
 * declares for it, checked against the entry's stated size before anything is inflated. */
static sn_status get_storage(sn_tc_file *f, const char *key, uint64_t want, const storage_t **out, sn_err *err) {
    for (size_t i = 0; i < f->n_storages; i++)
        if (strcmp(f->storages[i].key, key) == 0) {
            *out = &f->storages[i];
            return SN_OK;
        }
    char name[600];
    snprintf(name, sizeof name, "%s/data/%s", f->prefix, key);
    int64_t k = sn_zip_find(f->zip, name);
    if (k < 0)
        return sn_err_set(err, SN_EFORMAT, "%s: the pickle references storage '%s' but the archive has no entry %s", f->in.path,
                          key, name);
    const sn_zip_entry *e = sn_zip_entry_at(f->zip, (size_t)k);
    if (e->size != want)
        return sn_err_set(err, SN_EFORMAT, "%s: storage %s holds %llu bytes but the pickle declares %llu bytes", f->in.path, name,
                          (unsigned long long)e->size, (unsigned long long)want);
    storage_t *ns = sn_grow(f->storages, f->n_storages, &f->cap_storages, sizeof *ns, 64);
    if (!ns) return sn_err_set(err, SN_ENOMEM, "out of memory");
    f->storages = ns;
    storage_t s = {e->name, NULL, e->size, e->data_offset, f->in.mapped};
    if (e->method == SN_ZIP_STORED) {
        s.data = f->in.base + e->data_offset;
    } else if (!f->in.mapped) { /* in-memory archives (tests, fuzzing): inflate to the heap, bounded */
        const uint8_t *d;
        uint8_t *own = NULL;
        if (!room_for_map(f)) return sn_err_set(err, SN_ENOMEM, "out of memory");
        sn_status st = sn_zip_read(f->zip, (size_t)k, 64u << 20, &d, &own, err);
        if (st != SN_OK) return st;
        f->maps[f->n_maps++] = (map_t){own, e->size, 1};
        s.data = d;
        s.file_offset = 0;
    } else if (e->size) {
        /* inflate once into an unlinked temp file and map it: bounded memory, pages reclaimable */
        if (!room_for_map(f)) return sn_err_set(err, SN_ENOMEM, "out of memory");
        char tmpl[4096 + 32];
        snprintf(tmpl, sizeof tmpl, "%s/sunny-inflate-XXXXXX", f->tmp_dir);
        int fd = mkstemp(tmpl);
        if (fd < 0) return sn_err_set(err, SN_EIO, "%s: cannot create a temporary file for deflated %s: %s", f->in.path, name,
                                      strerror(errno));
        unlink(tmpl);
        sn_status st = sn_zip_inflate_to_fd(f->zip, (size_t)k, fd, err);
        void *p = MAP_FAILED;
        if (st == SN_OK) {
            p = mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) st = sn_err_set(err, SN_EIO, "%s: mmap of inflated %s failed: %s", f->in.path, name, strerror(errno));
        }
        close(fd);
        if (st != SN_OK) return st;
        f->maps[f->n_maps++] = (map_t){p, e->size, 0};
        s.data = p;
        s.file_offset = 0;
        s.mmapped = 1;
    }
    s.key = key;
    f->storages[f->n_storages] = s;
    *out = &f->storages[f->n_storages++];
    return SN_OK;
}

static int is_tensor_dict(const sn_pk_value *d) {
    if (!d || d->kind != SN_PK_DICT || d->u.seq.n == 0) return 0;
    int any = 0;
    for (uint64_t i = 0; i + 1 < d->u.seq.n; i += 2) {
        const sn_pk_value *k = d->u.seq.items[i], *v = d->u.seq.items[i + 1];
        if (k->kind != SN_PK_STR) return 0;
        if (v->kind == SN_PK_TENSOR) any = 1;
        else if (v->kind != SN_PK_NONE) return 0;
    }
    return any;
}

/* Collects "path" of every dict of tensors under v. Bounded in depth (cycles end there) and in dicts
 * visited: a pickle can reference one dict from many keys, and a walk of such a graph would double at
 * every level; *visits counts down and the caller reports its exhaustion. */
static void find_state_dicts(const sn_pk_value *v, char *path, size_t plen, int depth, const sn_pk_value **found,
                             char (*found_path)[256], int *n_found, long *visits) {
    if (depth > MAX_WALK_DEPTH || !v || v->kind != SN_PK_DICT || *n_found > 8 || *visits <= 0) return;
    (*visits)--;
    if (is_tensor_dict(v)) {
        if (*n_found < 8) {
            found[*n_found] = v;
            snprintf(found_path[*n_found], 256, "%s", path);
        }
        (*n_found)++;
        return;
    }
    for (uint64_t i = 0; i + 1 < v->u.seq.n; i += 2) {
        const sn_pk_value *k = v->u.seq.items[i], *c = v->u.seq.items[i + 1];
        if (k->kind != SN_PK_STR || c->kind != SN_PK_DICT) continue;
        size_t L0 = strlen(path), L = L0;
        if (L + 1 + k->u.str.len + 1 > plen) continue;
        if (L) path[L++] = '.';
        memcpy(path + L, k->u.str.s, k->u.str.len + 1);
        find_state_dicts(c, path, plen, depth + 1, found, found_path, n_found, visits);
        path[L0] = 0; /* back to the parent's path */
    }
}

static sn_status pick_state(sn_tc_file *f, const sn_pk_value *root, const char *state_key, const sn_pk_value **out,
                            sn_err *err) {
    if (state_key && *state_key) {
        const sn_pk_value *v = root;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", state_key);
        for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, ".")) {
            const sn_pk_value *n = sn_pk_dict_get(v, tok);
            if (!n)
                return sn_err_set(err, SN_EFORMAT, "%s: --state-key %s: no key '%s' in the saved %s", f->in.path, state_key,
                                  tok, v && v->kind == SN_PK_DICT ? "dict" : "object (not a dict)");
            v = n;
        }
        if (!is_tensor_dict(v))
            return sn_err_set(err, SN_EFORMAT, "%s: --state-key %s does not name a dict of tensors", f->in.path, state_key);
        snprintf(f->state_key, sizeof f->state_key, "%s", state_key);
        *out = v;
        return SN_OK;
    }
    if (!root || root->kind != SN_PK_DICT)
        return sn_err_set(err, SN_EFORMAT, "%s: the saved object is not a dict (a state dict or a dict holding one)", f->in.path);
    const sn_pk_value *found[8];
    char paths[8][256];
    int n = 0;
    char path[256] = "";
    long visits = MAX_WALK_VISITS;
    find_state_dicts(root, path, sizeof path, 0, found, paths, &n, &visits);
    if (visits <= 0)
        return sn_err_set(err, SN_EFORMAT,
                          "%s: the saved object's dicts reference each other more than %d times while looking for the "
                          "state dict (not a model checkpoint?); name it with --state-key",
                          f->in.path, MAX_WALK_VISITS);
    if (n == 1) {
        snprintf(f->state_key, sizeof f->state_key, "%s", paths[0]);
        *out = found[0];
        return SN_OK;
    }
    if (n == 0)
        return sn_err_set(err, SN_EFORMAT, "%s: no dict of tensors found in the saved object (not a model checkpoint?)",
                          f->in.path);
    char list[600];
    size_t k = 0;
    for (int i = 0; i < n && i < 8; i++)
        k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0, "%s'%s'", i ? ", " : "", paths[i]);
    return sn_err_set(err, SN_EFORMAT, "%s: %d dicts of tensors found (%s%s); choose one with --state-key", f->in.path, n, list,
                      n > 8 ? ", ..." : "");
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(((const sn_st_tensor *)a)->name, ((const sn_st_tensor *)b)->name);
}

static sn_status make_tensor(sn_tc_file *f, const char *name, const sn_pk_value *v, sn_st_tensor *t, sn_err *err) {
    const sn_pk_value *sv = v->u.tensor.storage;
    sn_pk_dtype dt = sv->u.storage.dtype;
    uint32_t es = sn_pk_dtype_size(dt);
    const storage_t *s = NULL;
    if (es == 0) return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor '%s': unknown storage dtype", f->in.path, name);
    if (sv->u.storage.numel > UINT64_MAX / es)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': storage %s declares %llu elements of %s (overflow)",
                          f->in.path, name, sv->u.storage.key, (unsigned long long)sv->u.storage.numel,
                          sn_pk_dtype_name(dt));
    sn_status st = get_storage(f, sv->u.storage.key, sv->u.storage.numel * es, &s, err);
    if (st != SN_OK) return sn_err_prefix(err, "tensor '%s'", name);
    if (sv->u.storage.numel * es != s->nbytes)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': storage %s holds %llu bytes but the pickle declares %llu "
                          "elements of %s", f->in.path, name, s->key, (unsigned long long)s->nbytes,
                          (unsigned long long)sv->u.storage.numel, sn_pk_dtype_name(dt));
    uint32_t nd = v->u.tensor.n_dims;
    uint64_t n = 1, max_off = v->u.tensor.offset;
    int empty = 0;
    for (uint32_t i = 0; i < nd; i++) {
        uint64_t d = v->u.tensor.size[i];
        if (d == 0) empty = 1;
        if (d && n > UINT64_MAX / d)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': sizes overflow (pickle offset %llu)", f->in.path, name,
                              (unsigned long long)v->u.tensor.op_offset);
        n *= d;
    }
    for (uint32_t i = 0; i < nd && !empty; i++) {
        uint64_t d = v->u.tensor.size[i], sd = (uint64_t)v->u.tensor.stride[i];
        if (sd && d - 1 > (UINT64_MAX - max_off) / sd)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': sizes x strides overflow (pickle offset %llu)", f->in.path,
                              name, (unsigned long long)v->u.tensor.op_offset);
        max_off += (d - 1) * sd;
    }
    if (!empty && (max_off >= s->nbytes / es))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' needs element %llu (offset %llu, sizes and strides of the "
                          "pickle at offset %llu) but storage %s holds only %llu elements of %s", f->in.path, name,
                          (unsigned long long)max_off, (unsigned long long)v->u.tensor.offset,
                          (unsigned long long)v->u.tensor.op_offset, s->key, (unsigned long long)(s->nbytes / es),
                          sn_pk_dtype_name(dt));
    if (n > UINT64_MAX / es)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': byte size overflows", f->in.path, name);
    memset(t, 0, sizeof(*t));
    if (!(t->name = strdup(name))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    t->file = f->in.path;
    t->n_elems = n;
    t->n_dims = nd;
    for (int i = 0; i < SN_ST_MAX_DIMS; i++) t->shape[i] = 1;
    if (nd > SN_ST_MAX_DIMS) {
        t->unsupported = "more than 4 dimensions";
        t->n_dims = 0;
        return SN_OK;
    }
    int contig = 1;
    uint64_t want = 1;
    for (int i = (int)nd - 1; i >= 0; i--) {
        t->shape[i] = v->u.tensor.size[i];
        t->stride[i] = v->u.tensor.stride[i];
        if (t->shape[i] != 1 && (uint64_t)t->stride[i] != want) contig = 0;
        want *= t->shape[i];
    }
    t->contiguous = contig || empty;
    switch (dt) {
    case SN_PK_DT_F32: t->dtype = SN_ST_F32; break;
    case SN_PK_DT_F16: t->dtype = SN_ST_F16; break;
    case SN_PK_DT_BF16: t->dtype = SN_ST_BF16; break;
    default: t->unsupported = sn_pk_dtype_name(dt); return SN_OK;
    }
    t->nbytes = n * es;
    t->data = s->data ? s->data + v->u.tensor.offset * es : NULL;
    t->file_offset = s->file_offset + v->u.tensor.offset * es;
    t->mmapped = s->mmapped;
    return SN_OK;
}

static sn_status parse(sn_tc_file *f, const sn_tc_opts *o, sn_err *err) {
    if (f->in.size >= sizeof k_legacy_magic && memcmp(f->in.base, k_legacy_magic, sizeof k_legacy_magic) == 0)
        return refuse_legacy(f, "legacy (pre-1.6) pickle-stream", err);
    if (f->in.size >= 262 && memcmp(f->in.base + 257, "ustar", 5) == 0) return refuse_legacy(f, "legacy tar", err);
    if (f->in.size < 4 || memcmp(f->in.base, "PK\3\4", 4) != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: not a PyTorch checkpoint (no zip signature at offset 0)", f->in.path);
    sn_status st = sn_zip_open_mem(f->in.base, f->in.size, f->in.path, &f->zip, err);
    if (st != SN_OK) return st;
    int64_t pk = -1;
    for (size_t i = 0; i < sn_zip_n_entries(f->zip); i++) {
        const char *nm = sn_zip_entry_at(f->zip, i)->name;
        const char *sl = strchr(nm, '/');
        if (sl && strcmp(sl, "/data.pkl") == 0) {
            if (pk >= 0) return sn_err_set(err, SN_EFORMAT, "%s: two data.pkl entries in the archive", f->in.path);
            pk = (int64_t)i;
        }
    }
    if (pk < 0) return sn_err_set(err, SN_EFORMAT, "%s: zip archive without <name>/data.pkl (not a torch.save file)", f->in.path);
    const sn_zip_entry *pe = sn_zip_entry_at(f->zip, (size_t)pk);
    size_t plen = (size_t)(strchr(pe->name, '/') - pe->name);
    if (plen >= sizeof f->prefix) return sn_err_set(err, SN_EFORMAT, "%s: archive folder name too long", f->in.path);
    memcpy(f->prefix, pe->name, plen);
    f->prefix[plen] = 0;
    /* byteorder: absent means little (torch < 1.10 wrote none) */
    char bo_name[300];
    snprintf(bo_name, sizeof bo_name, "%s/byteorder", f->prefix);
    int64_t bo = sn_zip_find(f->zip, bo_name);
    if (bo >= 0) {
        const uint8_t *d;
        uint8_t *own;
        if ((st = sn_zip_read(f->zip, (size_t)bo, 64, &d, &own, err)) != SN_OK) return st;
        uint64_t bl = sn_zip_entry_at(f->zip, (size_t)bo)->size;
        int little = bl == 6 && memcmp(d, "little", 6) == 0, big = bl == 3 && memcmp(d, "big", 3) == 0;
        free(own);
        if (big) return sn_err_set(err, SN_EUNSUPPORTED, "%s: big-endian checkpoint (byteorder 'big') is not supported", f->in.path);
        if (!little) return sn_err_set(err, SN_EFORMAT, "%s: %s is neither 'little' nor 'big'", f->in.path, bo_name);
    }
    const uint8_t *pkl;
    uint8_t *own = NULL;
    if (pe->size > SN_BUDGET_PKL_BYTES)
        return sn_err_set(err, SN_EFORMAT, "%s: %s is %llu bytes, more than the %llu MB budget for a state dict's pickle "
                          "(SN_BUDGET_PKL_BYTES, budget.h)", f->in.path, pe->name, (unsigned long long)pe->size,
                          (unsigned long long)(SN_BUDGET_PKL_BYTES >> 20));
    if ((st = sn_zip_read(f->zip, (size_t)pk, SN_BUDGET_PKL_BYTES, &pkl, &own, err)) != SN_OK) return st;
    char what[700];
    snprintf(what, sizeof what, "%s: %s", f->in.path, pe->name);
    sn_pk *p = NULL;
    st = sn_pk_load(pkl, pe->size, what, pe->method == SN_ZIP_STORED ? pe->data_offset : 0, NULL, &p, err);
    if (st != SN_OK) {
        free(own);
        return st;
    }
    const sn_pk_value *sd = NULL;
    if ((st = pick_state(f, sn_pk_root(p), o ? o->state_key : NULL, &sd, err)) != SN_OK) goto out;
    size_t cnt = 0;
    for (uint64_t i = 0; i + 1 < sd->u.seq.n; i += 2)
        if (sd->u.seq.items[i + 1]->kind == SN_PK_TENSOR) cnt++;
    f->t = calloc(cnt ? cnt : 1, sizeof(*f->t));
    if (!f->t) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto out; }
    for (uint64_t i = 0; i + 1 < sd->u.seq.n; i += 2) {
        const sn_pk_value *k = sd->u.seq.items[i], *v = sd->u.seq.items[i + 1];
        if (v->kind != SN_PK_TENSOR) continue;
        if (strlen(k->u.str.s) != k->u.str.len || k->u.str.len == 0) {
            st = sn_err_set(err, SN_EFORMAT, "%s: a tensor name is empty or contains a NUL byte", f->in.path);
            goto out;
        }
        if ((st = make_tensor(f, k->u.str.s, v, &f->t[f->n], err)) != SN_OK) goto out;
        f->n++;
    }
    qsort(f->t, f->n, sizeof(*f->t), cmp_name);
    for (size_t i = 1; i < f->n; i++)
        if (strcmp(f->t[i - 1].name, f->t[i].name) == 0) {
            st = sn_err_set(err, SN_EFORMAT, "%s: tensor name '%s' appears twice in the state dict", f->in.path, f->t[i].name);
            goto out;
        }
    /* storage keys point into the pickle arena, which is freed below */
    for (size_t i = 0; i < f->n_storages; i++) f->storages[i].key = NULL;
out:
    sn_pk_free(p);
    free(own);
    return st;
}

/* Parses the archive in *in, taken over even on failure. */
static sn_status open_input(sn_input *in, const sn_tc_opts *o, sn_tc_file **out, sn_err *err) {
    sn_tc_file *f = calloc(1, sizeof(*f));
    if (!f) {
        sn_input_close(in);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    f->in = *in;
    snprintf(f->tmp_dir, sizeof f->tmp_dir, "%s", o && o->tmp_dir && *o->tmp_dir ? o->tmp_dir : "/tmp");
    sn_status st = parse(f, o, err);
    if (st != SN_OK) {
        sn_tc_close(f);
        return st;
    }
    *out = f;
    return SN_OK;
}

sn_status sn_tc_open_mem(const void *buf, uint64_t size, const char *what, const sn_tc_opts *o, sn_tc_file **out,
                         sn_err *err) {
    *out = NULL;
    sn_input in;
    sn_status st = sn_input_borrow(&in, buf, size, what ? what : "<memory>", err);
    return st != SN_OK ? st : open_input(&in, o, out, err);
}

sn_status sn_tc_open(const char *path, const sn_tc_opts *o, sn_tc_file **out, sn_err *err) {
    *out = NULL;
    sn_input in;
    sn_status st = sn_input_map(&in, path, err);
    return st != SN_OK ? st : open_input(&in, o, out, err);
}

size_t sn_tc_n_tensors(const sn_tc_file *f) { return f->n; }
const sn_st_tensor *sn_tc_tensor(const sn_tc_file *f, size_t i) { return i < f->n ? &f->t[i] : NULL; }
const char *sn_tc_path(const sn_tc_file *f) { return f->in.path; }
const char *sn_tc_state_key(const sn_tc_file *f) { return f->state_key; }

int64_t sn_tc_find(const sn_tc_file *f, const char *name) {
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->t[mid].name, name);
        if (c == 0) return (int64_t)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}
