/* arch_smollm3.c - SmolLM3: SmolLM3ForCausalLM -> "smollm3".
 *
 * llama.cpp's converter (conversion/llama.py, SmolLM3Model) is its LlamaModel under another
 * architecture name: the same keys, Q/K permutation, tensors and LlamaModel.set_vocab, so this row
 * reuses the llama row's functions (they write the keys under a->gguf_arch). The twist is in the
 * runtime: no rope in every 4th layer. llama.cpp's loader hard-codes that step (no key carries it),
 * so a config whose no_rope_layers / no_rope_layer_interval says otherwise is refused rather than
 * converted into a file llama.cpp would run wrongly. */
#include "arch.h"

#include <cjson/cJSON.h>

/* transformers' SmolLM3Config rope pattern: layer i uses rope unless (i + 1) % interval == 0 */
static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    SN_ARCH_TRY(sn_arch_llama.check_config(a, c, err));
    double step = 4;
    if (sn_hf_config_get_num(c, "no_rope_layer_interval", &step) && step != 4)
        return sn_err_set(err, SN_EUNSUPPORTED, "config.json: no_rope_layer_interval %g: llama.cpp's smollm3 "
                          "leaves out rope in every 4th layer only", step);
    const cJSON *nr = c->root ? cJSON_GetObjectItemCaseSensitive(c->root, "no_rope_layers") : NULL;
    if (nr && !cJSON_IsNull(nr)) {
        if (!cJSON_IsArray(nr) || cJSON_GetArraySize(nr) != c->n_layers)
            return sn_err_set(err, SN_EFORMAT, "config.json: no_rope_layers is not a list of %lld flags",
                              (long long)c->n_layers);
        int64_t i = 0;
        for (const cJSON *x = nr->child; x; x = x->next, i++)
            if (!cJSON_IsNumber(x) || (x->valuedouble != 0) != ((i + 1) % 4 != 0))
                return sn_err_set(err, SN_EUNSUPPORTED, "config.json: no_rope_layers[%lld] does not follow the "
                                  "every-4th-layer pattern llama.cpp's smollm3 assumes", (long long)i);
    }
    return SN_OK;
}

/* the llama row's functions, called with this row (keys under "smollm3") */
static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    return sn_arch_llama.write_kv(a, c, file_type, w, err);
}
static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf, sn_arch_tensor *out, sn_err *err) {
    return sn_arch_llama.map_tensor(a, c, hf, out, err);
}
static sn_status extra_tensors(const sn_arch *a, const sn_hf_config *c, sn_arch_extra *out, size_t n_max,
                               size_t *n_out, sn_err *err) {
    return sn_arch_llama.extra_tensors(a, c, out, n_max, n_out, err);
}

/* transformers' SmolLM3Config defaults: vocab hidden inter layers heads kv_heads max_pos rope_theta
 * rms_eps head_dim bos eos */
static const sn_hf_defaults k_smollm3_def = {128256, 2048, 11008, 36, 16, 4, 32768, 2000000.0, 1e-6, -1, 128000,
                                             128001};
static const sn_arch_class k_classes[] = {{"SmolLM3ForCausalLM", &k_smollm3_def}, {NULL, NULL}};

static const char *const k_vocab_files[] = {"tokenizer.json", "tokenizer.model", NULL};
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
static const char *const k_layer_required[] = {"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
                                               "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight",
                                               "ffn_up.weight", "ffn_down.weight", NULL};

const sn_arch sn_arch_smollm3 = {
    .gguf_arch = "smollm3", .classes = k_classes, .vocab = SN_ARCH_VOCAB_LLAMA, .vocab_files = k_vocab_files,
    .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor, .extra_tensors = extra_tensors,
    .required = k_required, .required_per_layer = k_layer_required};
