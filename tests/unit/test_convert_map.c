/* test_convert_map.c - HF -> GGUF tensor names, the Llama Q/K permutation, Llama-3 rope_freqs and
 * the general.* name heuristics, each against an independent computation or llama.cpp's documented
 * examples. */
#include "arch.h"
#include "convert.h"
#include "sn_test.h"
#include "transform.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* the table's rows (convert/archs/archs.c declares them beside the table) */
extern const sn_arch sn_arch_qwen2, sn_arch_qwen3, sn_arch_qwen3moe, sn_arch_mamba2, sn_arch_gemma3, sn_arch_phi3,
    sn_arch_smollm3;

static sn_hf_config cfg_of(const char *json) {
    sn_hf_config c;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_hf_config_parse(json, "config.json", &c, &err), SN_OK);
    return c;
}

static const char *LLAMA = "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
                           "\"num_key_value_heads\":2,\"num_hidden_layers\":2,\"intermediate_size\":96,\"vocab_size\":100}";

static void expect_map(const sn_arch *a, const sn_hf_config *c, const char *hf, const char *gguf, uint64_t ne0,
                       uint64_t ne1, uint64_t heads) {
    sn_arch_tensor t;
    sn_err err = {0};
    int r = a->map_tensor(a, c, hf, &t, &err);
    CU_ASSERT_EQUAL(r, SN_ARCH_MAP_OK);
    if (r != SN_ARCH_MAP_OK) { printf("\n  %s: %s\n", hf, err.msg); return; }
    CU_ASSERT_STRING_EQUAL(t.gguf_name, gguf);
    CU_ASSERT_EQUAL(t.ne[0], ne0);
    CU_ASSERT_EQUAL(t.ne[1], ne1);
    CU_ASSERT_EQUAL(t.permute_heads, heads);
}

static void test_llama_names(void) {
    sn_hf_config c = cfg_of(LLAMA);
    const sn_arch *a = sn_arch_find("LlamaForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_llama);
    CU_ASSERT_PTR_EQUAL(sn_arch_find("MistralForCausalLM"), &sn_arch_llama);
    CU_ASSERT_PTR_NULL(sn_arch_find("GPT2LMHeadModel"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sn_arch_supported_list(), "Qwen3ForCausalLM"));
    expect_map(a, &c, "model.embed_tokens.weight", "token_embd.weight", 64, 100, 0);
    expect_map(a, &c, "lm_head.weight", "output.weight", 64, 100, 0);
    expect_map(a, &c, "model.norm.weight", "output_norm.weight", 64, 1, 0);
    expect_map(a, &c, "model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight", 64, 64, 4);
    expect_map(a, &c, "model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight", 64, 32, 2);
    expect_map(a, &c, "model.layers.0.self_attn.k_proj.bias", "blk.0.attn_k.bias", 32, 1, 2);
    expect_map(a, &c, "model.layers.0.self_attn.v_proj.weight", "blk.0.attn_v.weight", 64, 32, 0);
    expect_map(a, &c, "model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 64, 64, 0);
    expect_map(a, &c, "model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight", 96, 64, 0);
    expect_map(a, &c, "model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight", 64, 96, 0);
    expect_map(a, &c, "model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight", 64, 1, 0);
    expect_map(a, &c, "model.layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight", 64, 1, 0);
    sn_arch_tensor t;
    sn_err err = {0};
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.0.self_attn.rotary_emb.inv_freq", &t, &err), SN_ARCH_MAP_SKIP);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.vision_tower.blocks.0.weight", &t, &err), SN_ARCH_MAP_SKIP);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "multi_modal_projector.linear_1.weight", &t, &err), SN_ARCH_MAP_SKIP);
    expect_map(a, &c, "language_model.model.norm.weight", "output_norm.weight", 64, 1, 0);
    CU_ASSERT(a->map_tensor(a, &c, "model.layers.0.self_attn.q_norm.weight", &t, &err) < 0); /* qwen3 only */
    CU_ASSERT(a->map_tensor(a, &c, "embed_tokens.weight", &t, &err) < 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot map tensor 'embed_tokens.weight'"));
    CU_ASSERT(a->map_tensor(a, &c, "model.layers.2.mlp.up_proj.weight", &t, &err) < 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "num_hidden_layers"));
    sn_hf_config_free(&c);
}

static void test_qwen_names(void) {
    sn_hf_config c = cfg_of("{\"architectures\":[\"Qwen3ForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
                            "\"num_key_value_heads\":2,\"head_dim\":32,\"num_hidden_layers\":1,\"intermediate_size\":96}");
    const sn_arch *a = sn_arch_find("Qwen3ForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_qwen3);
    expect_map(a, &c, "model.layers.0.self_attn.q_norm.weight", "blk.0.attn_q_norm.weight", 32, 1, 0);
    expect_map(a, &c, "model.layers.0.self_attn.k_norm.weight", "blk.0.attn_k_norm.weight", 32, 1, 0);
    expect_map(a, &c, "model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", 64, 128, 0); /* no permute */
    expect_map(a, &c, "model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 128, 64, 0);
    sn_hf_config_free(&c);
    c = cfg_of("{\"architectures\":[\"Qwen2ForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
               "\"num_key_value_heads\":2,\"num_hidden_layers\":1,\"intermediate_size\":96}");
    a = sn_arch_find("Qwen2ForCausalLM");
    expect_map(a, &c, "model.layers.0.self_attn.q_proj.bias", "blk.0.attn_q.bias", 64, 1, 0);
    expect_map(a, &c, "model.layers.0.self_attn.v_proj.bias", "blk.0.attn_v.bias", 32, 1, 0);
    sn_hf_config_free(&c);
}

/* Mixture of experts: llama.cpp's stacking (conversion/qwen.py Qwen2MoeModel, llama.py LlamaModel)
 * yields down, gate, up (Qwen) and w1, w2, w3 = gate, down, up (Mixtral) per layer; the fused
 * gate_up_proj [E, 2F, D] is split on dim -2 (gate rows first). */
static void test_moe_names(void) {
    sn_hf_config c = cfg_of("{\"architectures\":[\"Qwen3MoeForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
                            "\"num_key_value_heads\":2,\"head_dim\":16,\"num_hidden_layers\":2,\"intermediate_size\":96,"
                            "\"num_experts\":6,\"num_experts_per_tok\":2,\"moe_intermediate_size\":32}");
    const sn_arch *a = sn_arch_find("Qwen3MoeForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_qwen3moe);
    sn_arch_tensor t;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(a->map_tensor(a, &c, "model.layers.1.mlp.experts.5.down_proj.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT_STRING_EQUAL(t.gguf_name, "blk.1.ffn_down_exps.weight");
    CU_ASSERT(t.n_dims == 3 && t.ne[0] == 32 && t.ne[1] == 64 && t.ne[2] == 6 && t.src_n_dims == 2);
    CU_ASSERT(t.part == 5 && t.n_parts == 6 && t.group_rank == 0 && t.group_size == 3);
    CU_ASSERT_STRING_EQUAL(t.group, "blk.1.experts");
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.1.mlp.experts.0.up_proj.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT(t.ne[0] == 64 && t.ne[1] == 32 && t.group_rank == 2);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.0.mlp.gate.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT_STRING_EQUAL(t.gguf_name, "blk.0.ffn_gate_inp.weight");
    CU_ASSERT(t.n_dims == 2 && t.ne[0] == 64 && t.ne[1] == 6 && t.n_parts == 0);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.0.mlp.experts.gate_up_proj", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT_STRING_EQUAL(t.gguf_name, "blk.0.ffn_gate_exps.weight");
    CU_ASSERT_STRING_EQUAL(t.also_name, "blk.0.ffn_up_exps.weight");
    CU_ASSERT(t.src_ne[1] == 64 && t.ne[1] == 32 && t.slice_group == 64 && t.slice_off == 0 && t.also_slice_off == 32);
    CU_ASSERT(a->map_tensor(a, &c, "model.layers.0.mlp.experts.6.up_proj.weight", &t, &err) < 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is expert 6 but config.json has num_experts = 6"));
    CU_ASSERT(a->map_tensor(a, &c, "model.layers.0.mlp.gate_proj.weight", &t, &err) < 0); /* no dense MLP */
    sn_hf_config_free(&c);

    c = cfg_of("{\"architectures\":[\"MixtralForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
               "\"num_key_value_heads\":2,\"num_hidden_layers\":1,\"intermediate_size\":96,\"num_local_experts\":4,"
               "\"num_experts_per_tok\":2}");
    a = sn_arch_find("MixtralForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_llama);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.0.block_sparse_moe.experts.3.w2.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT_STRING_EQUAL(t.gguf_name, "blk.0.ffn_down_exps.weight");
    CU_ASSERT(t.ne[0] == 96 && t.ne[1] == 64 && t.ne[2] == 4 && t.part == 3 && t.group_rank == 1);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.0.block_sparse_moe.experts.0.w1.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT(strcmp(t.gguf_name, "blk.0.ffn_gate_exps.weight") == 0 && t.group_rank == 0 && t.ne[1] == 96);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.layers.0.block_sparse_moe.gate.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT_STRING_EQUAL(t.gguf_name, "blk.0.ffn_gate_inp.weight");
    CU_ASSERT_EQUAL(sn_arch_expert_count(&c), 4);
    sn_hf_config_free(&c);

    /* the row slice: output row r of gate (off 0) / up (off F) from [E][2F] source rows */
    enum { E = 3, F = 4 };
    sn_tsrc s;
    memset(&s, 0, sizeof s);
    sn_st_tensor src;
    memset(&src, 0, sizeof src);
    src.contiguous = 1;
    const sn_st_tensor *parts[1] = {&src};
    s.part = parts;
    s.n_parts = 1;
    s.n_rows = E * F;
    s.slice_group = 2 * F;
    s.slice_take = F;
    for (uint64_t off = 0; off <= F; off += F) {
        s.slice_off = off;
        for (uint64_t e = 0, bad = 0; e < E; e++)
            for (uint64_t f = 0; f < F; f++) {
                uint64_t sr = 99;
                sn_tsrc_src_row(&s, e * F + f, &sr);
                bad += sr != e * 2 * F + off + f;
                if (e == E - 1 && f == F - 1) CU_ASSERT_EQUAL(bad, 0);
            }
    }
    CU_ASSERT_EQUAL(sn_tsrc_is_plain(&s), 0);

    /* pieces: Qwen3-Next's in_proj_qkvz, per key head h rows [q (dk), k (dk), v (rv), z (rv)], written as
     * attn_qkv = q of every head, k of every head, v of every head (the reference's view + split + cat) */
    enum { HK = 3, DK = 2, RV = 5, G = 2 * DK + 2 * RV };
    s.n_rows = HK * (2 * DK + RV);
    s.slice_group = G;
    s.slice_off = 0;
    s.slice_take = 2 * DK + RV;
    s.slice_piece[0] = s.slice_piece[1] = DK;
    s.slice_piece[2] = RV;
    uint64_t bad = 0;
    for (uint64_t o = 0; o < s.n_rows; o++) {
        uint64_t want = o < HK * DK ? o / DK * G + o % DK
                        : o < 2 * HK * DK ? (o - HK * DK) / DK * G + DK + (o - HK * DK) % DK
                                          : (o - 2 * HK * DK) / RV * G + 2 * DK + (o - 2 * HK * DK) % RV;
        uint64_t sr = 999;
        sn_tsrc_src_row(&s, o, &sr);
        bad += sr != want;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* torch: w.reshape(nh, 2, rows/nh/2, cols).swapaxes(1, 2).reshape(rows, cols), done literally */
static void test_permutation(void) {
    enum { NH = 3, HD = 8, ROWS = NH * HD, COLS = 5 };
    int in[ROWS][COLS], ref[ROWS][COLS], got[ROWS][COLS];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) in[r][c] = r * 100 + c;
    /* view in as [NH][2][HD/2][COLS], write swapped view [NH][HD/2][2][COLS] contiguously */
    int k = 0;
    for (int h = 0; h < NH; h++)
        for (int i = 0; i < HD / 2; i++)
            for (int j = 0; j < 2; j++, k++)
                for (int c = 0; c < COLS; c++) ref[k][c] = in[h * HD + j * (HD / 2) + i][c];
    for (int r = 0; r < ROWS; r++) {
        uint64_t s = sn_arch_permute_src((uint64_t)r, ROWS, NH);
        CU_ASSERT_FATAL(s < ROWS);
        memcpy(got[r], in[s], sizeof got[r]);
    }
    CU_ASSERT_EQUAL(memcmp(got, ref, sizeof ref), 0);
    /* spot values: row 1 of head 0 comes from row HD/2 (the second rotate-half) */
    CU_ASSERT_EQUAL(sn_arch_permute_src(1, ROWS, NH), HD / 2);
    CU_ASSERT_EQUAL(sn_arch_permute_src(2, ROWS, NH), 1);
    CU_ASSERT_EQUAL(sn_arch_permute_src(HD + 3, ROWS, NH), HD + HD / 2 + 1);
}

/* rope_freqs against the formula in double precision (torch computes in f32: allow 2e-6 relative) */
static void test_rope_freqs(void) {
    sn_hf_config c = cfg_of("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":2048,\"num_attention_heads\":32,"
                            "\"rope_theta\":500000.0,\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":32.0,"
                            "\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,\"original_max_position_embeddings\":8192}}");
    float *v = NULL;
    uint64_t n = 0;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_arch_llama3_rope_freqs(&c, &v, &n, &err), SN_OK);
    CU_ASSERT_EQUAL(n, 32);
    int n1 = 0, nf = 0, nmid = 0;
    for (uint64_t k = 0; k < n; k++) {
        double freq = 1.0 / pow(500000.0, (double)(2 * k) / 64.0);
        double wl = 2 * M_PI / freq, want;
        if (wl < 8192.0 / 4.0) { want = 1.0; n1++; }
        else if (wl > 8192.0) { want = 32.0; nf++; }
        else {
            double s = (8192.0 / wl - 1.0) / (4.0 - 1.0);
            want = 1.0 / ((1 - s) / 32.0 + s);
            nmid++;
        }
        CU_ASSERT(fabs(v[k] - want) <= 2e-6 * want);
    }
    CU_ASSERT(n1 > 0 && nf > 0 && nmid > 0); /* all three bands exercised */
    CU_ASSERT_EQUAL(v[0], 1.0f);
    CU_ASSERT_EQUAL(v[31], 32.0f);
    free(v);
    sn_hf_config_free(&c);
    /* rope_freqs only for llama3 rope type, and only for the llama family */
    sn_arch_extra ex[2];
    size_t ne = 9;
    c = cfg_of(LLAMA);
    CU_ASSERT_EQUAL(sn_arch_llama.extra_tensors(&sn_arch_llama, &c, ex, 2, &ne, &err), SN_OK);
    CU_ASSERT_EQUAL(ne, 0);
    sn_hf_config_free(&c);
}

static void test_name_heuristics(void) {
    sn_model_id_parts p;
    sn_metadata_id_components("Qwen/Qwen2.5-7B-Instruct", 0, &p);
    CU_ASSERT_STRING_EQUAL(p.name, "Qwen2.5-7B-Instruct");
    CU_ASSERT_STRING_EQUAL(p.org, "Qwen");
    CU_ASSERT_STRING_EQUAL(p.basename, "Qwen2.5");
    CU_ASSERT_STRING_EQUAL(p.finetune, "Instruct");
    CU_ASSERT_STRING_EQUAL(p.size_label, "7B");
    sn_metadata_id_components("fla-hub/rwkv7-1.5B-world", 0, &p);
    CU_ASSERT_STRING_EQUAL(p.basename, "rwkv7");
    CU_ASSERT_STRING_EQUAL(p.finetune, "world");
    CU_ASSERT_STRING_EQUAL(p.size_label, "1.5B");
    sn_metadata_id_components("Mixtral-8x7B-Instruct-v0.1", 0, &p);
    CU_ASSERT_STRING_EQUAL(p.basename, "Mixtral");
    CU_ASSERT_STRING_EQUAL(p.size_label, "8x7B");
    CU_ASSERT_STRING_EQUAL(p.version, "v0.1");
    sn_metadata_id_components("llama3-tiny-bf16", 0, &p); /* nothing but a basename -> no basename */
    CU_ASSERT_STRING_EQUAL(p.basename, "");
    CU_ASSERT_STRING_EQUAL(p.size_label, "");
    /* a size label far from the real count becomes part of the finetune */
    sn_metadata_id_components("Model-70B-x", 1000000, &p);
    CU_ASSERT_STRING_EQUAL(p.size_label, "");
    CU_ASSERT_STRING_EQUAL(p.finetune, "70b-x");
    char s[32];
    sn_metadata_size_label(16810640, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "17M");
    sn_metadata_size_label(1235814400, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "1.2B");
    sn_metadata_size_label(494032768, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "494M");
    sn_metadata_size_label(500, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "0.50K");
}

/* general.* from a README front matter + generation_config.json, read back from a written header */
static void test_metadata_keys(void) {
    char dir[128], path[256];
    snprintf(dir, sizeof dir, "/tmp/sn_test_meta_%d/Qwen2.5-0.5B-Instruct", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(path, sizeof path, "%s/README.md", dir);
    FILE *f = fopen(path, "w");
    fputs("---\nlicense: apache-2.0\nlanguage:\n- en\n- zh\ntags:\n  - chat\npipeline_tag: text-generation\n"
          "base_model: Qwen/Qwen2.5-0.5B\n---\n# Qwen2.5\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/generation_config.json", dir);
    f = fopen(path, "w");
    fputs("{\"temperature\": 0.7, \"top_k\": 20, \"top_p\": 0.8, \"repetition_penalty\": 1.05, \"do_sample\": true}", f);
    fclose(f);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_metadata_write(dir, NULL, NULL, &(sn_param_count){494032768, 494032768, 0, 0}, w, NULL, 0, &err), SN_OK);
    snprintf(path, sizeof path, "%s/meta.gguf", dir);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_finish(w, &err), SN_OK);
    sn_gguf_writer_free(w);
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(path, 0, &g, &err), SN_OK);
    char *s;
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.name")) ? s : "", "Qwen2.5 0.5B Instruct"); free(s);
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.basename")) ? s : "", "Qwen2.5"); free(s);
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.finetune")) ? s : "", "Instruct"); free(s);
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.size_label")) ? s : "", "0.5B"); free(s);
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.license")) ? s : "", "apache-2.0"); free(s);
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.base_model.0.name")) ? s : "", "Qwen2.5 0.5B"); free(s);
    CU_ASSERT_STRING_EQUAL((s = sn_gguf_str_dup(g, "general.base_model.0.repo_url")) ? s : "",
                           "https://huggingface.co/Qwen/Qwen2.5-0.5B"); free(s);
    int64_t k = sn_gguf_find_key(g, "general.sampling.top_k");
    CU_ASSERT_TRUE(k >= 0 && sn_gguf_kv_type(g, k) == SN_GGUF_I32 && sn_gguf_get_i32(g, k) == 20);
    k = sn_gguf_find_key(g, "general.sampling.penalty_repeat");
    CU_ASSERT_TRUE(k >= 0 && sn_gguf_kv_type(g, k) == SN_GGUF_F32 && sn_gguf_get_f32(g, k) == 1.05f);
    k = sn_gguf_find_key(g, "general.tags");
    CU_ASSERT_TRUE(k >= 0 && sn_gguf_arr_n(g, k) == 2); /* tags + pipeline_tag */
    k = sn_gguf_find_key(g, "general.languages");
    CU_ASSERT_TRUE(k >= 0 && sn_gguf_arr_n(g, k) == 2);
    /* order: sampling keys come before general.name, as gguf.Metadata writes them */
    CU_ASSERT_TRUE(sn_gguf_find_key(g, "general.sampling.temp") < sn_gguf_find_key(g, "general.name"));
    sn_gguf_close(g);
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/sn_test_meta_%d", (int)getpid());
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* {arch}.* keys: names, value types and the reference converter's order */
static void check_keys(const sn_arch *a, const char *json, const char *const *want, const int *types) {
    sn_hf_config c = cfg_of(json);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(a->write_kv(a, &c, 7, w, &err), SN_OK);
    char path[128];
    snprintf(path, sizeof path, "/tmp/sn_test_kv_%d.gguf", (int)getpid());
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_finish(w, &err), SN_OK);
    sn_gguf_writer_free(w);
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(path, 0, &g, &err), SN_OK);
    int64_t n = 0;
    while (want[n]) n++;
    CU_ASSERT_EQUAL(sn_gguf_n_kv(g), n);
    for (int64_t i = 0; i < n && i < sn_gguf_n_kv(g); i++) {
        if (strcmp(sn_gguf_key(g, i), want[i]) != 0) printf("\n  key %lld: %s, want %s\n", (long long)i, sn_gguf_key(g, i), want[i]);
        CU_ASSERT_STRING_EQUAL(sn_gguf_key(g, i), want[i]);
        CU_ASSERT_EQUAL(sn_gguf_kv_type(g, i), types[i]);
    }
    sn_gguf_close(g);
    unlink(path);
    sn_hf_config_free(&c);
}

static void test_arch_keys(void) {
    enum { U = SN_GGUF_U32, F = SN_GGUF_F32, S = SN_GGUF_STR };
    static const char *const llama[] = {
        "llama.block_count", "llama.context_length", "llama.embedding_length", "llama.feed_forward_length",
        "llama.attention.head_count", "llama.attention.head_count_kv", "llama.rope.scaling.type",
        "llama.rope.scaling.factor", "llama.rope.freq_base", "llama.attention.layer_norm_rms_epsilon",
        "llama.attention.key_length", "llama.attention.value_length", "general.file_type", "llama.vocab_size",
        "llama.rope.dimension_count", NULL};
    static const int llama_t[] = {U, U, U, U, U, U, S, F, F, F, U, U, U, U, U};
    check_keys(&sn_arch_llama, "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
               "\"rope_scaling\":{\"type\":\"linear\",\"factor\":2.0}}", llama, llama_t);
    static const char *const qwen2[] = {
        "qwen2.block_count", "qwen2.context_length", "qwen2.embedding_length", "qwen2.feed_forward_length",
        "qwen2.attention.head_count", "qwen2.attention.head_count_kv", "qwen2.rope.scaling.type",
        "qwen2.rope.scaling.factor", "qwen2.rope.scaling.original_context_length", "qwen2.rope.scaling.yarn_beta_fast",
        "qwen2.rope.freq_base", "qwen2.attention.layer_norm_rms_epsilon", "general.file_type", NULL};
    static const int qwen2_t[] = {U, U, U, U, U, U, S, F, U, F, F, F, U};
    check_keys(&sn_arch_qwen2, "{\"architectures\":[\"Qwen2ForCausalLM\"],\"rope_scaling\":{\"type\":\"yarn\","
               "\"factor\":4.0,\"original_max_position_embeddings\":32768,\"beta_fast\":32}}", qwen2, qwen2_t);
    static const char *const qwen3[] = {
        "qwen3.block_count", "qwen3.context_length", "qwen3.embedding_length", "qwen3.feed_forward_length",
        "qwen3.attention.head_count", "qwen3.attention.head_count_kv", "qwen3.rope.freq_base",
        "qwen3.attention.layer_norm_rms_epsilon", "qwen3.attention.key_length", "qwen3.attention.value_length",
        "general.file_type", NULL};
    static const int qwen3_t[] = {U, U, U, U, U, U, F, F, U, U, U};
    /* llama3 rope type: no scaling keys (rope_freqs tensor instead) */
    check_keys(&sn_arch_qwen3, "{\"architectures\":[\"Qwen3ForCausalLM\"],\"rope_scaling\":{\"rope_type\":\"llama3\"}}",
               qwen3, qwen3_t);
}

/* Gemma 3: names, shapes and transforms as llama.cpp's Gemma3Model writes them (norms + 1, the
 * embedding trimmed to vocab_size, language_model. dropped, the vision tower skipped). */
static void test_gemma3_names(void) {
    sn_hf_config c = cfg_of("{\"architectures\":[\"Gemma3ForConditionalGeneration\"],\"text_config\":{"
                            "\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
                            "\"num_key_value_heads\":2,\"head_dim\":32,\"intermediate_size\":96,\"vocab_size\":100,"
                            "\"sliding_window\":8}}");
    const sn_arch *a = sn_arch_find("Gemma3ForConditionalGeneration");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_gemma3);
    CU_ASSERT_PTR_EQUAL(sn_arch_find("Gemma3ForCausalLM"), &sn_arch_gemma3);
    CU_ASSERT_PTR_EQUAL(sn_arch_find_gguf("gemma3"), &sn_arch_gemma3);
    sn_err err = {0};
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_OK);
    expect_map(a, &c, "language_model.model.embed_tokens.weight", "token_embd.weight", 64, 100, 0);
    expect_map(a, &c, "model.language_model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight", 64, 128, 0);
    expect_map(a, &c, "model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight", 64, 64, 0);
    expect_map(a, &c, "model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 128, 64, 0);
    expect_map(a, &c, "model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight", 96, 64, 0);
    sn_arch_tensor t;
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "model.embed_tokens.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT(t.trim_rows && t.ew == SN_ARCH_EW_NONE);
    static const char *const norms[][2] = {
        {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
        {"model.layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"},
        {"model.layers.0.pre_feedforward_layernorm.weight", "blk.0.ffn_norm.weight"},
        {"model.layers.0.post_feedforward_layernorm.weight", "blk.0.post_ffw_norm.weight"},
        {"model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"},
        {"model.norm.weight", "output_norm.weight"}};
    for (size_t i = 0; i < sizeof norms / sizeof *norms; i++) {
        CU_ASSERT_EQUAL(a->map_tensor(a, &c, norms[i][0], &t, &err), SN_ARCH_MAP_OK);
        CU_ASSERT_STRING_EQUAL(t.gguf_name, norms[i][1]);
        CU_ASSERT_EQUAL(t.ew, SN_ARCH_EW_ADD_ONE);
    }
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "vision_tower.vision_model.post_layernorm.weight", &t, &err), SN_ARCH_MAP_SKIP);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "multi_modal_projector.mm_soft_emb_norm.weight", &t, &err), SN_ARCH_MAP_SKIP);
    CU_ASSERT(a->map_tensor(a, &c, "model.layers.2.mlp.up_proj.weight", &t, &err) < 0);
    sn_hf_config_free(&c);
    /* no sliding_window (and no pattern 1): the reference's hparams["sliding_window"] fails; so do we */
    c = cfg_of("{\"architectures\":[\"Gemma3ForCausalLM\"],\"hidden_size\":64,\"num_hidden_layers\":2,"
               "\"intermediate_size\":96,\"vocab_size\":100}");
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sliding_window"));
    sn_hf_config_free(&c);
}

/* Mamba-2: names, shapes and the declared transforms as llama.cpp's Mamba2Model writes them. */
static void test_mamba2_names(void) {
    /* d_model 64, expand 2 -> d_inner 128, head 32 -> 4 heads, 2 groups of state 16, conv 4 */
    sn_hf_config c = cfg_of("{\"architectures\":[\"Mamba2ForCausalLM\"],\"hidden_size\":64,\"num_hidden_layers\":2,"
                            "\"head_dim\":32,\"n_groups\":2,\"state_size\":16,\"vocab_size\":100,"
                            "\"time_step_limit\":[0.0,Infinity]}");
    const sn_arch *a = sn_arch_find("Mamba2ForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_mamba2);
    CU_ASSERT_PTR_EQUAL(sn_arch_find_gguf("mamba2"), &sn_arch_mamba2);
    CU_ASSERT_PTR_NOT_NULL(strstr(sn_arch_supported_list(), "Mamba2ForCausalLM"));
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(a->prepare_config(a, &c, &err), SN_OK);
    CU_ASSERT_EQUAL(c.vocab_size, 112); /* padded to a multiple of 16 */
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_OK);
    expect_map(a, &c, "backbone.embeddings.weight", "token_embd.weight", 64, 112, 0);
    expect_map(a, &c, "model.backbone.embeddings.weight", "token_embd.weight", 64, 112, 0); /* Codestral */
    expect_map(a, &c, "backbone.layers.1.mixer.in_proj.weight", "blk.1.ssm_in.weight", 64, 2 * 128 + 2 * 2 * 16 + 4, 0);
    expect_map(a, &c, "backbone.layers.1.mixer.out_proj.weight", "blk.1.ssm_out.weight", 128, 64, 0);
    expect_map(a, &c, "backbone.layers.0.mixer.dt_bias", "blk.0.ssm_dt.bias", 4, 1, 0);
    expect_map(a, &c, "backbone.norm_f.weight", "output_norm.weight", 64, 1, 0);
    sn_arch_tensor t;
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "backbone.layers.0.mixer.A_log", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT_STRING_EQUAL(t.gguf_name, "blk.0.ssm_a");
    CU_ASSERT(t.n_dims == 2 && t.ne[0] == 1 && t.ne[1] == 4 && t.src_n_dims == 1 && t.src_ne[0] == 4);
    CU_ASSERT_EQUAL(t.ew, SN_ARCH_EW_NEG_EXP);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "backbone.layers.0.mixer.D", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT(!strcmp(t.gguf_name, "blk.0.ssm_d") && t.ne[0] == 1 && t.ne[1] == 4 && t.ew == SN_ARCH_EW_NONE);
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "backbone.layers.0.mixer.conv1d.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT(t.n_dims == 2 && t.ne[0] == 4 && t.ne[1] == 128 + 64 && t.src_n_dims == 3 && t.src_ne[1] == 1);
    CU_ASSERT(sn_arch_name_in(t.gguf_name, a->keep_f32) && sn_quant_never(t.gguf_name));
    CU_ASSERT_EQUAL(a->map_tensor(a, &c, "backbone.layers.0.mixer.norm.weight", &t, &err), SN_ARCH_MAP_OK);
    CU_ASSERT(t.n_dims == 2 && t.ne[0] == 64 && t.ne[1] == 2); /* (n_group, d_inner / n_group) */
    CU_ASSERT(a->map_tensor(a, &c, "backbone.layers.2.mixer.D", &t, &err) < 0);
    CU_ASSERT(a->map_tensor(a, &c, "backbone.layers.0.mixer.x_proj.weight", &t, &err) < 0);
    sn_hf_config_free(&c);
    /* llama.cpp refuses d_inner != expand * d_model; so do we, saying why */
    c = cfg_of("{\"architectures\":[\"Mamba2ForCausalLM\"],\"hidden_size\":64,\"intermediate_size\":96,"
               "\"head_dim\":32,\"num_hidden_layers\":1,\"vocab_size\":16}");
    CU_ASSERT_EQUAL(a->prepare_config(a, &c, &err), SN_OK);
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "d_inner 96"));
    sn_hf_config_free(&c);
}

/* general.file_type labels: llama.h's enum llama_ftype (values and LLAMA_FTYPE_MOSTLY_* names) */
static void test_ftype_labels(void) {
    static const struct { uint32_t ft; const char *label; } want[] = {
        {0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {7, "Q8_0"}, {10, "Q2_K"}, {13, "Q3_K_L"}, {15, "Q4_K_M"},
        {18, "Q6_K"}, {19, "IQ2_XXS"}, {21, "Q2_K_S"}, {25, "IQ4_NL"}, {30, "IQ4_XS"}, {32, "BF16"},
        {38, "MXFP4_MOE"}, {41, "Q2_0"},
    };
    char buf[16];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_EQUAL(sn_ftype_label(want[i].ft, buf, sizeof buf), strlen(want[i].label));
        CU_ASSERT_STRING_EQUAL(buf, want[i].label);
    }
    CU_ASSERT_EQUAL(sn_ftype_label(4, buf, sizeof buf), 0); /* Q4_1_SOME_F16: removed */
    CU_ASSERT_STRING_EQUAL(buf, "");
    CU_ASSERT_EQUAL(sn_ftype_label(1024, buf, sizeof buf), 0);
    CU_ASSERT_EQUAL(sn_ftype_label(15, buf, 4), 3); /* truncated, terminated */
    CU_ASSERT_STRING_EQUAL(buf, "Q4_");
    /* names the converter only reads are no --outtype */
    CU_ASSERT_EQUAL(sn_outtype_parse("iq2_xxs"), -1);
    CU_ASSERT_EQUAL(sn_outtype_parse("Q4_K_M"), SN_OUTTYPE_Q4_K_M);
    CU_ASSERT_EQUAL(sn_outtype_parse("auto"), SN_OUTTYPE_AUTO);
}

/* Phi-3: fused qkv / gate_up as llama.cpp's Phi3MiniModel maps them (no permutation), the LongRoPE
 * factors as two generated tensors, and the configs the converter must refuse. SmolLM3: llama's
 * names and Q/K permutation under its own row; a rope pattern llama.cpp cannot express is refused. */
static void test_phi3_smollm3_names(void) {
    static const char *phi = "{\"architectures\":[\"Phi3ForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
                             "\"num_key_value_heads\":2,\"num_hidden_layers\":2,\"intermediate_size\":96,"
                             "\"vocab_size\":100,\"max_position_embeddings\":1024,\"rope_theta\":10000.0,"
                             "\"rms_norm_eps\":1e-5,\"original_max_position_embeddings\":256,"
                             "\"partial_rotary_factor\":0.5,\"rope_scaling\":{\"type\":\"longrope\","
                             "\"long_factor\":[1,2,3,4],\"short_factor\":[1,1,1,%s]}}";
    char json[1024];
    snprintf(json, sizeof json, phi, "1");
    sn_hf_config c = cfg_of(json);
    const sn_arch *a = sn_arch_find("Phi3ForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_phi3);
    sn_err err = {0};
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_OK);
    expect_map(a, &c, "model.layers.1.self_attn.qkv_proj.weight", "blk.1.attn_qkv.weight", 64, 64 + 2 * 32, 0);
    expect_map(a, &c, "model.layers.0.mlp.gate_up_proj.weight", "blk.0.ffn_up.weight", 64, 2 * 96, 0);
    expect_map(a, &c, "model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight", 96, 64, 0);
    expect_map(a, &c, "model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 64, 64, 0);
    sn_arch_extra ex[4];
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(a->extra_tensors(a, &c, ex, 4, &n, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(!strcmp(ex[0].gguf_name, "rope_factors_long.weight") && ex[0].n == 4 && ex[0].data[3] == 4.0f);
    CU_ASSERT(!strcmp(ex[1].gguf_name, "rope_factors_short.weight") && ex[1].n == 4 && ex[1].data[0] == 1.0f);
    free(ex[0].data);
    free(ex[1].data);
    sn_hf_config_free(&c);
    /* 16 rotary dims (0.5 * 64 / 4 heads) need 8 factors each, not 4 */
    snprintf(json, sizeof json, phi, "1");
    char *p = strstr(json, "0.5");
    memcpy(p, "1.0", 3);
    c = cfg_of(json);
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "must both have 8 values"));
    sn_hf_config_free(&c);
    snprintf(json, sizeof json, phi, "\"x\"");
    c = cfg_of(json);
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_EFORMAT);
    sn_hf_config_free(&c);

    static const char *sm = "{\"architectures\":[\"SmolLM3ForCausalLM\"],\"hidden_size\":64,\"num_attention_heads\":4,"
                            "\"num_key_value_heads\":2,\"num_hidden_layers\":4,\"intermediate_size\":96,"
                            "\"vocab_size\":100,\"no_rope_layers\":[1,1,1,%s]}";
    snprintf(json, sizeof json, sm, "0");
    c = cfg_of(json);
    a = sn_arch_find("SmolLM3ForCausalLM");
    CU_ASSERT_PTR_EQUAL_FATAL(a, &sn_arch_smollm3);
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_OK);
    expect_map(a, &c, "model.layers.3.self_attn.q_proj.weight", "blk.3.attn_q.weight", 64, 64, 4);
    expect_map(a, &c, "model.layers.3.self_attn.k_proj.weight", "blk.3.attn_k.weight", 64, 32, 2);
    sn_hf_config_free(&c);
    snprintf(json, sizeof json, sm, "1");
    c = cfg_of(json);
    CU_ASSERT_EQUAL(a->check_config(a, &c, &err), SN_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no_rope_layers[3]"));
    sn_hf_config_free(&c);
}

static const sn_test_case cases[] = {
    {"phi3 / smollm3 name map, rope factors, refusals", test_phi3_smollm3_names},
    {"general.file_type labels, --outtype names", test_ftype_labels},
    {"mamba2 name map, shapes, transforms", test_mamba2_names},
    {"gemma3 name map, shapes, transforms", test_gemma3_names},
    {"{arch}.* keys, types, order", test_arch_keys},
    {"general.* from README + generation_config", test_metadata_keys},
    {"llama name map + shapes", test_llama_names},
    {"qwen2/qwen3 name map", test_qwen_names},
    {"qwen3moe/mixtral expert map, row slice", test_moe_names},
    {"Q/K permutation vs reshape/swapaxes", test_permutation},
    {"llama3 rope_freqs vs formula", test_rope_freqs},
    {"general.* name heuristics", test_name_heuristics},
};
SN_TEST_MAIN("convert_map", cases)
