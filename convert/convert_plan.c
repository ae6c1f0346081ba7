/* convert_plan.c - the conversion plan: every source tensor mapped to its GGUF tensor.
 *
 * The family's map_tensor names each source's GGUF tensor, output shape and transforms; the plan
 * checks the source shape against what config.json implies, assembles fused tensors from their
 * parts (a fused tensor takes the place where its last part arrives, as the reference yields it),
 * adds a second name for tensors copied twice, checks that every required tensor is there, and
 * picks each tensor's output type with llama.cpp's rules. */
#include "convert_internal.h"

#include "ggml_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sn_conv_plan_free(plan_list *pl) {
    for (size_t i = 0; i < pl->n; i++) {
        free(pl->t[i].gen);
        free(pl->t[i].ts.part);
    }
    free(pl->t);
    memset(pl, 0, sizeof(*pl));
}

static plan_t *plan_push(plan_list *pl) {
    if (pl->n == pl->cap) {
        size_t nc = pl->cap ? pl->cap * 2 : 64;
        plan_t *nt = realloc(pl->t, nc * sizeof(*nt));
        if (!nt) return NULL;
        pl->t = nt;
        pl->cap = nc;
    }
    plan_t *p = &pl->t[pl->n++];
    memset(p, 0, sizeof(*p));
    return p;
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

int sn_conv_find_plan(const plan_list *pl, const char *gguf_name) {
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->t[i].gguf_name, gguf_name) == 0) return (int)i;
    return -1;
}

/* llama.cpp's converter rules (f32/f16/bf16/q8_0): F32 for rank <= 1, *_norm.weight, names not
 * ending in .weight and the family's keep_f32 kinds; the outtype otherwise; F16 when a row is not a
 * multiple of the quant block. The quantized file types follow quant_rules.c instead. */
int sn_conv_choose_type(const sn_arch *a, sn_outtype ot, const plan_t *p) {
    if (p->ts.mx_scales) return SN_CONV_MXFP4; /* repacked as it is, for every converter outtype */
    if (p->n_dims <= 1 || ends_with(p->gguf_name, "_norm.weight") || !ends_with(p->gguf_name, ".weight"))
        return SN_GGML_F32;
    if (sn_arch_name_in(p->gguf_name, a->keep_f32)) return SN_GGML_F32;
    int t = sn_outtype_info_of(ot)->type;
    return p->ne[0] % sn_ggml_blck_size(t) ? SN_GGML_F16 : t;
}

/* llama-quantize writes tensors in its loader's map order: layer number ("blk.N.", -1 for the
 * rest) first, then name. A quantized file follows it so it equals llama-quantize's byte for byte. */
static int layer_of(const char *name) {
    int l = -1;
    if (sscanf(name, "blk.%d.", &l) != 1) l = -1;
    return l;
}

int sn_conv_cmp_quantize_order(const void *a, const void *b) {
    const plan_t *x = a, *y = b;
    int lx = layer_of(x->gguf_name), ly = layer_of(y->gguf_name);
    if (lx != ly) return lx < ly ? -1 : 1;
    return strcmp(x->gguf_name, y->gguf_name);
}

static void shape_str(const uint64_t *ne, uint32_t n_dims, int reversed, char *buf, size_t n) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (uint32_t i = 0; i < n_dims && k < n; i++) {
        uint64_t v = reversed ? ne[n_dims - 1 - i] : ne[i];
        k += (size_t)snprintf(buf + k, n - k, "%s%llu", i ? ", " : "", (unsigned long long)v);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Rows as the writer streams them: 1-D permuted tensors (llama q/k biases) are permuted
 * element-wise, i.e. rows of length 1. */
static void plan_rows(plan_t *p, int elem_rows) {
    p->ts.row_len = (p->n_dims >= 2 || !p->permute_heads) && !elem_rows ? p->ne[0] : 1;
    p->ts.n_rows = p->ts.row_len ? p->n_elems / p->ts.row_len : 0;
}

static uint64_t elems_of(const uint64_t *ne, uint32_t n_dims) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < n_dims; d++) n *= ne[d];
    return n;
}

/* Moves pl->t[k] to the end of the list (the reference yields a fused tensor where its last part
 * arrives). */
static void move_to_end(plan_list *pl, size_t k) {
    plan_t done = pl->t[k];
    memmove(&pl->t[k], &pl->t[k + 1], (pl->n - 1 - k) * sizeof *pl->t);
    pl->t[pl->n - 1] = done;
}

static int plan_complete(const plan_t *p) {
    for (uint32_t i = 0; i < p->ts.n_parts; i++)
        if (!p->ts.part[i]) return 0;
    return 1;
}

/* p (index k) just got its last part: move it to the end, or, when it belongs to a group, move the
 * whole group there in rank order once every member is complete. */
static void place_completed(plan_list *pl, size_t k) {
    if (!pl->t[k].group[0]) {
        move_to_end(pl, k);
        return;
    }
    char group[SN_GGUF_MAX_NAME];
    memcpy(group, pl->t[k].group, sizeof group);
    uint32_t size = pl->t[k].group_size, have = 0;
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->t[i].group, group) == 0 && plan_complete(&pl->t[i])) have++;
    if (have < size) return;
    for (uint32_t rank = 0; rank < size; rank++)
        for (size_t i = 0; i < pl->n; i++)
            if (strcmp(pl->t[i].group, group) == 0 && pl->t[i].group_rank == rank) {
                move_to_end(pl, i);
                break;
            }
}

/* Adds source t under the mapping at (one part of a fused tensor, or all of one); slice_off is the
 * row slice this name takes. */
/* The scales beside MXFP4 blocks t ("X_blocks" [.., rows, nb, 16] -> "X_scales" [.., rows, nb], U8). */
static sn_status mxfp4_scales_of(const sn_st_model *m, const sn_st_tensor *t, const sn_st_tensor **out,
                                 sn_err *err) {
    char name[512];
    size_t L = strlen(t->name);
    if (L < 7 || L >= sizeof name || strcmp(t->name + L - 7, "_blocks") != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': MXFP4 blocks must be named *_blocks", t->file, t->name);
    snprintf(name, sizeof name, "%.*s_scales", (int)(L - 7), t->name);
    int64_t k = sn_st_model_find(m, name);
    const sn_st_tensor *s = k >= 0 ? sn_st_model_tensor(m, (size_t)k) : NULL;
    if (!s) return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' has no scales: '%s' is missing", t->file, t->name, name);
    int same = s->dtype == SN_ST_U8 && !s->unsupported && s->contiguous && t->contiguous && s->n_dims + 1 == t->n_dims;
    for (uint32_t d = 0; same && d < s->n_dims; d++) same = s->shape[d] == t->shape[d];
    if (!same) {
        char got[96], exp[96];
        shape_str(s->shape, s->n_dims, 0, got, sizeof got);
        shape_str(t->shape, t->n_dims ? t->n_dims - 1 : 0, 0, exp, sizeof exp);
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' is %s %s but its blocks '%s' need U8 %s", s->file,
                          s->name, sn_st_dtype_name(s->dtype), got, t->name, exp);
    }
    *out = s;
    return SN_OK;
}

static sn_status plan_add_source(plan_list *pl, const sn_st_model *m, const sn_st_tensor *t,
                                 const sn_arch_tensor *at, const char *gguf_name, uint64_t slice_off, sn_err *err) {
    sn_status st;
    /* the source shape: as declared, else the output shape (HF shape reversed) */
    const uint64_t *want = at->src_n_dims ? at->src_ne : at->ne;
    uint32_t want_dims = at->src_n_dims ? at->src_n_dims : at->n_dims;
    uint32_t n_parts = at->n_parts > 1 ? at->n_parts : 1;
    int same = t->n_dims == want_dims;
    for (uint32_t d = 0; same && d < t->n_dims; d++)
        if (t->shape[t->n_dims - 1 - d] != want[d]) same = 0;
    /* a row trim: a longer 2-D source whose first want[1] rows are kept is one slice of all its rows */
    uint64_t slice_group = at->slice_group;
    if (!same && at->trim_rows && !at->src_n_dims && want_dims == 2 && t->n_dims == 2 && t->shape[1] == want[0] &&
        t->shape[0] > want[1]) {
        same = 1;
        slice_group = t->shape[0];
    }
    if (!same) {
        char got[96], exp[96];
        shape_str(t->shape, t->n_dims, 0, got, sizeof got);
        shape_str(want, want_dims, 1, exp, sizeof exp);
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' has shape %s but config.json implies %s",
                          t->file, t->name, got, exp);
    }
    const sn_st_tensor *mx_scales = NULL;
    if ((t->dtype == SN_ST_U8) != (at->mxfp4 != 0))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' has dtype %s, but %s", t->file, t->name,
                          sn_st_dtype_name(t->dtype), at->mxfp4 ? "MXFP4 blocks are U8" : "only MXFP4 blocks and "
                          "scales may be U8");
    if (at->mxfp4 && (st = mxfp4_scales_of(m, t, &mx_scales, err)) != SN_OK) return st;
    uint64_t out_elems = elems_of(at->ne, at->n_dims), take = 0;
    /* the source row as the output sees it: row_w values from row_units source elements (an MXFP4
     * row of cols/32 blocks of 16 bytes; a transposed matrix's column) */
    uint64_t last = t->n_dims ? t->shape[t->n_dims - 1] : 1, prev = t->n_dims > 1 ? t->shape[t->n_dims - 2] : 1;
    uint64_t row_units = at->elem_rows ? 1 : at->mxfp4 ? 16 * prev : at->transpose ? prev : last;
    uint64_t row_w = at->elem_rows ? 1 : at->mxfp4 ? 32 * prev : row_units;
    int bad = at->part >= n_parts || n_parts > SN_ARCH_MAX_PARTS || (n_parts > 1 && at->permute_heads) ||
              (at->transpose && want_dims != 2 && want_dims != 3) || (at->mxfp4 && (last != 16 || t->n_dims < 2));
    if (slice_group) { /* out: take rows of each group of slice_group source rows */
        uint64_t rows = row_units ? t->n_elems / row_units : 0;
        uint64_t groups = rows / slice_group, out_rows = row_w ? out_elems / row_w : 0;
        take = groups ? out_rows / groups : 0;
        uint64_t pieces = 0;
        for (int i = 0; i < 4; i++) pieces += at->slice_piece[i];
        bad |= n_parts > 1 || at->permute_heads || (!at->elem_rows && at->ne[0] != row_w) ||
               rows % slice_group || !take || take * groups != out_rows || slice_off + take > slice_group ||
               (pieces && (pieces != take || at->elem_rows));
    } else bad |= t->n_elems * (at->mxfp4 ? 2 : 1) * n_parts != out_elems || (at->mxfp4 && at->ne[0] != row_w);
    if (bad)
        return sn_err_set(err, SN_EINVAL, "%s: tensor '%s': the %s mapping to %s is inconsistent", t->file,
                          t->name, n_parts > 1 ? "fused" : slice_group ? "sliced" : "reshaped", gguf_name);
    if (at->permute_heads && (t->shape[0] % (2 * at->permute_heads) != 0))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': %llu rows cannot be split into %llu heads",
                          t->file, t->name, (unsigned long long)t->shape[0],
                          (unsigned long long)at->permute_heads);
    int k = n_parts > 1 ? sn_conv_find_plan(pl, gguf_name) : -1;
    plan_t *p;
    if (k >= 0) {
        p = &pl->t[k];
        if (p->ts.n_parts != n_parts || p->ts.part[at->part] || memcmp(p->ne, at->ne, sizeof p->ne) != 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' maps to part %u of %s a second time", t->file,
                              t->name, at->part, gguf_name);
    } else {
        if (sn_conv_find_plan(pl, gguf_name) >= 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' maps to %s, which another tensor already "
                              "maps to", t->file, t->name, gguf_name);
        if (!(p = plan_push(pl)) || !(p->ts.part = calloc(n_parts, sizeof *p->ts.part))) {
            if (p) pl->n--;
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        }
        snprintf(p->hf_name, sizeof p->hf_name, "%s", t->name);
        snprintf(p->gguf_name, sizeof p->gguf_name, "%s", gguf_name);
        p->n_dims = at->n_dims;
        memcpy(p->ne, at->ne, sizeof p->ne);
        p->n_elems = out_elems;
        p->permute_heads = at->permute_heads;
        p->ts.n_parts = n_parts;
        p->ts.permute_heads = at->permute_heads;
        p->ts.transpose = at->transpose;
        p->ts.ew = at->ew;
        p->ts.vr = at->vr;
        p->ts.slice_group = slice_group;
        p->ts.slice_off = slice_off;
        p->ts.slice_take = take;
        memcpy(p->ts.slice_piece, at->slice_piece, sizeof p->ts.slice_piece);
        memcpy(p->group, at->group, sizeof p->group);
        p->group_rank = at->group_rank;
        p->group_size = at->group_size;
        p->early = at->early;
        p->ts.mx_scales = mx_scales;
        plan_rows(p, at->elem_rows);
        k = (int)(p - pl->t);
    }
    p->ts.part[at->part] = t;
    if (at->part == 0) p->src = t;
    if (n_parts > 1 && plan_complete(p)) place_completed(pl, (size_t)k);
    return SN_OK;
}

/* 1 if the plan has gguf_name, or for "a|b", one of the alternatives (prefix "blk.N." applies to each). */
static int has_required(const plan_list *pl, const char *prefix, const char *alts) {
    char nm[SN_GGUF_MAX_NAME + 16];
    for (const char *a = alts; *a;) {
        size_t n = strcspn(a, "|");
        snprintf(nm, sizeof nm, "%s%.*s", prefix, (int)n, a);
        if (sn_conv_find_plan(pl, nm) >= 0) return 1;
        a += n + (a[n] == '|');
    }
    return 0;
}

/* Builds the plan: generated tensors first, then safetensors order (llama.cpp's). */
sn_status sn_conv_build_plan(const sn_arch *a, const sn_hf_config *cfg, const sn_st_model *m, plan_list *pl,
                            sn_err *err) {
    sn_arch_extra ex[4];
    size_t n_ex = 0;
    memset(ex, 0, sizeof ex);
    sn_status st = a->extra_tensors ? a->extra_tensors(a, cfg, ex, 4, &n_ex, err) : SN_OK;
    if (st != SN_OK) return st;
    for (size_t i = 0; i < n_ex; i++) {
        plan_t *p = plan_push(pl);
        if (!p) {
            for (size_t j = i; j < n_ex; j++) free(ex[j].data);
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        }
        snprintf(p->hf_name, sizeof p->hf_name, "(generated)");
        memcpy(p->gguf_name, ex[i].gguf_name, sizeof p->gguf_name);
        p->gguf_name[sizeof p->gguf_name - 1] = 0;
        p->gen = ex[i].data;
        p->ts.gen = ex[i].data;
        p->n_dims = 1;
        for (int d = 0; d < SN_GGUF_MAX_DIMS; d++) p->ne[d] = 1;
        p->ne[0] = ex[i].n;
        p->n_elems = ex[i].n;
        plan_rows(p, 0);
    }
    for (size_t i = 0; i < sn_st_model_n_tensors(m); i++) {
        const sn_st_tensor *t = sn_st_model_tensor(m, i);
        sn_arch_tensor at;
        memset(&at, 0, sizeof at);
        int r = a->map_tensor(a, cfg, t->name, &at, err);
        if (r < 0) return sn_err_prefix(err, "%s", t->file);
        if (r == SN_ARCH_MAP_SKIP) {
            pl->n_skipped += sn_arch_is_multimodal(t->name);
            continue;
        }
        if (t->unsupported)
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor '%s' has %s, which the converter cannot read "
                              "(supported: float32, float16, bfloat16 with at most %d dimensions)", t->file, t->name,
                              t->unsupported, SN_ST_MAX_DIMS);
        if ((st = plan_add_source(pl, m, t, &at, at.gguf_name, at.slice_off, err)) != SN_OK) return st;
        if (at.also_name[0]) { /* the copy: a plain run of rows, its own row count */
            sn_arch_tensor al = at;
            memset(al.slice_piece, 0, sizeof al.slice_piece);
            if (at.also_rows) al.ne[1] = at.also_rows;
            if ((st = plan_add_source(pl, m, t, &al, at.also_name, at.also_slice_off, err)) != SN_OK) return st;
        }
    }
    /* tensors the reference writes while it prepares the others go first, in arrival order */
    for (size_t i = 0, front = n_ex; i < pl->n; i++)
        if (pl->t[i].early) {
            plan_t e = pl->t[i];
            memmove(&pl->t[front + 1], &pl->t[front], (i - front) * sizeof *pl->t);
            pl->t[front++] = e;
        }
    for (size_t i = 0; i < pl->n; i++)
        for (uint32_t k = 0; k < pl->t[i].ts.n_parts; k++)
            if (!pl->t[i].ts.part[k])
                return sn_err_set(err, SN_EFORMAT, "%s: %s is %s from %u tensors (like '%s') but %s %u is missing",
                                  sn_st_model_file(m, 0), pl->t[i].gguf_name, pl->t[i].group[0] ? "stacked" : "fused",
                                  pl->t[i].ts.n_parts, pl->t[i].hf_name, pl->t[i].group[0] ? "expert" : "part", k);
    /* completeness: a model missing a layer tensor would only fail later, inside llama.cpp */
    for (const char *const *q = a->required; q && *q; q++)
        if (!has_required(pl, "", *q))
            return sn_err_set(err, SN_EFORMAT, "%s: no tensor maps to %s (is a weight file missing?)",
                              sn_st_model_file(m, 0), *q);
    for (int64_t l = 0; l < cfg->n_layers; l++)
        for (const char *const *q = a->required_per_layer; q && *q; q++) {
            char pre[32];
            snprintf(pre, sizeof pre, "blk.%lld.", (long long)l);
            if (!has_required(pl, pre, *q))
                return sn_err_set(err, SN_EFORMAT, "%s: no tensor maps to %s%s (layer %lld of %lld is incomplete)",
                                  sn_st_model_file(m, 0), pre, *q, (long long)l, (long long)cfg->n_layers);
        }
    return SN_OK;
}
