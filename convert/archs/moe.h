/* moe.h - Mixture-of-Experts tensors of the Llama-family layouts (Mixtral, Qwen3-MoE), shared by the
 * rows of arch_llama.c.
 *
 * A sparse layer has a router (HF "<block>gate.weight" -> ffn_gate_inp, kept F32) and n_expert
 * experts of three matrices each. Checkpoints store the experts one tensor per expert and matrix
 * ("<block>experts.E.<proj>.weight"); each matrix kind is stacked into one 3-D GGUF tensor
 * blk.N.ffn_{gate,up,down}_exps {cols, rows, n_expert}, and the reference converter yields a layer's
 * three stacks together, in its own order, when the layer's last expert tensor arrives. Newer
 * transformers save the stacks already fused ("experts.gate_up_proj" [E, 2F, D], split into gate and
 * up rows; "experts.down_proj" [E, D, F]). */
#ifndef SN_MOE_H
#define SN_MOE_H
#include "arch.h"

typedef struct sn_moe_names {
    const char *block;          /* after "model.layers.N.": "block_sparse_moe." or "mlp." */
    const char *proj[3];        /* per-expert matrix names, in the order the reference yields the stacks */
    const char *gguf[3];        /* their GGUF kinds ("ffn_gate_exps", ...) */
    int is_down[3];             /* 1: the down projection ([D, F] per expert instead of [F, D]) */
    const char *const *count_keys; /* config keys of the expert count the converter reads, NULL-terminated */
    const char *ff_key;         /* config key of one expert's FFN width */
    int fused;                  /* also accept experts.gate_up_proj / experts.down_proj */
} sn_moe_names;

typedef struct sn_moe_dims {
    int64_t n_expert, n_used, n_ff;
    const char *count_key;      /* the config key the count was read from */
} sn_moe_dims;

/* Reads and checks the expert count, top-k and expert FFN width from config.json: each present,
 * 1 <= top-k <= count. Errors name config.json and the key. */
sn_status sn_moe_dims_of(const sn_moe_names *nm, const sn_hf_config *c, sn_moe_dims *d, sn_err *err);
/* 1 if the config names an expert count (a sparse model), else 0. */
int sn_moe_is_sparse(const sn_moe_names *nm, const sn_hf_config *c);
/* Maps `rest` (the HF name after "model.layers.<bid>.") when it is an MoE tensor: 1 = out filled,
 * 0 = not an MoE tensor, < 0 = an error naming hf_name (an expert index beyond the count, an
 * unknown expert matrix). n_embd is the hidden size. */
int sn_moe_map(const sn_moe_names *nm, const sn_hf_config *c, uint64_t bid, const char *rest, const char *hf_name,
               uint64_t n_embd, sn_arch_tensor *out, sn_err *err);
/* The reference's expert keys of TextModel.set_gguf_parameters: {arch}.expert_count and
 * expert_used_count, each when the config has one of its keys. */
sn_status sn_moe_write_counts(const char *arch, const sn_hf_config *c, sn_gguf_writer *w, sn_err *err);
/* Qwen2MoeModel.set_gguf_parameters' own keys (after TextModel's): {arch}.expert_feed_forward_length and
 * expert_shared_feed_forward_length, each when the config has moe_intermediate_size /
 * shared_expert_intermediate_size. */
sn_status sn_moe_write_qwen_ff(const char *arch, const sn_hf_config *c, sn_gguf_writer *w, sn_err *err);

#endif
