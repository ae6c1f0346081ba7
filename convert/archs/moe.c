/* moe.c - the expert tensors and keys of Mixtral and Qwen3-MoE (see moe.h). */
#include "moe.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* find_hparam order of TextModel.set_gguf_parameters */
static const char *const k_count_keys[] = {"num_local_experts", "num_experts", "n_routed_experts", NULL};
static const char *const k_used_keys[] = {"num_experts_per_tok", "num_experts_per_token", "top_k_experts", NULL};

/* The first of keys the config has (as a number): its value in *v and its name, else NULL. */
static const char *find_num(const sn_hf_config *c, const char *const *keys, int64_t *v) {
    for (; keys && *keys; keys++) {
        double d;
        if (sn_hf_config_get_num(c, *keys, &d)) {
            *v = d >= -9.2e18 && d <= 9.2e18 ? (int64_t)d : -1;
            return *keys;
        }
    }
    return NULL;
}

int64_t sn_arch_expert_count(const sn_hf_config *c) {
    int64_t v = 0;
    return find_num(c, k_count_keys, &v) && v > 0 ? v : 0;
}

int sn_moe_is_sparse(const sn_moe_names *nm, const sn_hf_config *c) {
    int64_t v;
    return find_num(c, nm->count_keys, &v) != NULL;
}

sn_status sn_moe_dims_of(const sn_moe_names *nm, const sn_hf_config *c, sn_moe_dims *d, sn_err *err) {
    const char *kc = d->count_key = find_num(c, nm->count_keys, &d->n_expert);
    const char *ku = find_num(c, k_used_keys, &d->n_used);
    double ff;
    d->n_ff = sn_hf_config_get_num(c, nm->ff_key, &ff) && ff >= 0 && ff <= 9.2e18 ? (int64_t)ff : -1;
    if (!kc) return sn_err_set(err, SN_EFORMAT, "config.json: no expert count (%s) for a mixture-of-experts model",
                               nm->count_keys[0]);
    if (!ku) return sn_err_set(err, SN_EFORMAT, "config.json: no experts-per-token count (%s)", k_used_keys[0]);
    const sn_arch_value v[] = {{kc, d->n_expert}, {ku, d->n_used}, {nm->ff_key, d->n_ff}};
    SN_ARCH_TRY(sn_arch_check_range(v, 3, 16, err));
    if (d->n_used > d->n_expert)
        return sn_err_set(err, SN_EFORMAT, "config.json: %s = %lld but %s = %lld: top-k cannot exceed the expert count",
                          ku, (long long)d->n_used, kc, (long long)d->n_expert);
    return SN_OK;
}

sn_status sn_moe_write_counts(const char *arch, const sn_hf_config *c, sn_gguf_writer *w, sn_err *err) {
    int64_t v;
    if (find_num(c, k_count_keys, &v)) SN_ARCH_TRY(sn_arch_kv_u32(w, arch, "expert_count", v, err));
    if (find_num(c, k_used_keys, &v)) SN_ARCH_TRY(sn_arch_kv_u32(w, arch, "expert_used_count", v, err));
    return SN_OK;
}

sn_status sn_moe_write_qwen_ff(const char *arch, const sn_hf_config *c, sn_gguf_writer *w, sn_err *err) {
    double d;
    if (sn_hf_config_get_num(c, "moe_intermediate_size", &d))
        SN_ARCH_TRY(sn_arch_kv_u32(w, arch, "expert_feed_forward_length", (int64_t)d, err));
    if (sn_hf_config_get_num(c, "shared_expert_intermediate_size", &d))
        SN_ARCH_TRY(sn_arch_kv_u32(w, arch, "expert_shared_feed_forward_length", (int64_t)d, err));
    return SN_OK;
}

static void shape3(uint64_t *ne, uint64_t a, uint64_t b, uint64_t e) {
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) ne[i] = 1;
    ne[0] = a;
    ne[1] = b;
    ne[2] = e;
}

static void name_of(char *dst, uint64_t bid, const char *kind) {
    snprintf(dst, SN_GGUF_MAX_NAME, "blk.%llu.%s.weight", (unsigned long long)bid, kind);
}

/* One matrix of one expert: part e of its layer's stack, in the layer's group. */
static int map_expert(const sn_moe_names *nm, const sn_moe_dims *d, uint64_t bid, const char *p, const char *hf_name,
                      uint64_t n_embd, sn_arch_tensor *out, sn_err *err) {
    uint64_t e = 0;
    while (isdigit((unsigned char)*p) && e < ((uint64_t)1 << 32)) e = e * 10 + (uint64_t)(*p++ - '0');
    if (*p++ != '.') return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (not an expert matrix)", hf_name);
    for (int i = 0; i < 3; i++) {
        size_t L = strlen(nm->proj[i]);
        if (strncmp(p, nm->proj[i], L) != 0 || strcmp(p + L, ".weight") != 0) continue;
        if (e >= (uint64_t)d->n_expert)
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is expert %llu but config.json has %s = %lld", hf_name,
                              (unsigned long long)e, d->count_key, (long long)d->n_expert);
        uint64_t F = (uint64_t)d->n_ff, E = (uint64_t)d->n_expert;
        name_of(out->gguf_name, bid, nm->gguf[i]);
        out->n_dims = 3;
        if (nm->is_down[i]) shape3(out->ne, F, n_embd, E);
        else shape3(out->ne, n_embd, F, E);
        out->src_n_dims = 2;
        memcpy(out->src_ne, out->ne, sizeof out->src_ne);
        out->src_ne[2] = 1;
        out->part = (uint32_t)e;
        out->n_parts = (uint32_t)E;
        snprintf(out->group, sizeof out->group, "blk.%llu.experts", (unsigned long long)bid);
        out->group_rank = (uint32_t)i;
        out->group_size = 3;
        return 1;
    }
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (expert matrices are %s, %s and %s)", hf_name,
                      nm->proj[0], nm->proj[1], nm->proj[2]);
}

static int is_name(const char *p, const char *base) {
    size_t L = strlen(base);
    return strncmp(p, base, L) == 0 && (p[L] == 0 || strcmp(p + L, ".weight") == 0);
}

int sn_moe_map(const sn_moe_names *nm, const sn_hf_config *c, uint64_t bid, const char *rest, const char *hf_name,
               uint64_t n_embd, sn_arch_tensor *out, sn_err *err) {
    size_t L = strlen(nm->block);
    if (strncmp(rest, nm->block, L) != 0) return 0;
    const char *p = rest + L;
    int router = strcmp(p, "gate.weight") == 0;
    if (!router && strncmp(p, "experts.", 8) != 0) return 0;
    sn_moe_dims d;
    sn_status st = sn_moe_dims_of(nm, c, &d, err);
    if (st != SN_OK) return sn_err_prefix(err, "tensor '%s'", hf_name);
    uint64_t F = (uint64_t)d.n_ff, E = (uint64_t)d.n_expert;
    if (router) {
        name_of(out->gguf_name, bid, "ffn_gate_inp");
        out->n_dims = 2;
        shape3(out->ne, n_embd, E, 1);
        return 1;
    }
    p += 8;
    if (isdigit((unsigned char)*p)) return map_expert(nm, &d, bid, p, hf_name, n_embd, out, err);
    if (nm->fused && is_name(p, "gate_up_proj")) { /* [E, 2F, D]: gate rows then up rows of each expert */
        name_of(out->gguf_name, bid, "ffn_gate_exps");
        name_of(out->also_name, bid, "ffn_up_exps");
        out->n_dims = 3;
        shape3(out->ne, n_embd, F, E);
        out->src_n_dims = 3;
        shape3(out->src_ne, n_embd, 2 * F, E);
        out->slice_group = 2 * F;
        out->slice_off = 0;
        out->also_slice_off = F;
        return 1;
    }
    if (nm->fused && is_name(p, "down_proj")) { /* [E, D, F] */
        name_of(out->gguf_name, bid, "ffn_down_exps");
        out->n_dims = 3;
        shape3(out->ne, F, n_embd, E);
        return 1;
    }
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (an expert tensor of an unknown layout)", hf_name);
}
