/* test_hf_config.c - config.json parsing with transformers' per-class defaults.
 *
 * llama.cpp's converter sees config.json through AutoConfig, so absent fields take the class
 * defaults (LlamaConfig head_dim = hidden/heads, MistralConfig 8 kv heads, Qwen3Config head_dim
 * 128, ...). These decide which GGUF keys exist, so each default is pinned here. */
#include "hf_config.h"

#include <cjson/cJSON.h>
#include "sn_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static sn_hf_config parse(const char *json) {
    sn_hf_config c;
    sn_err err = {0};
    sn_status st = sn_hf_config_parse(json, "config.json", &c, &err);
    if (st != SN_OK) printf("\n  parse failed: %s\n", err.msg);
    CU_ASSERT_EQUAL(st, SN_OK);
    return c;
}

static void test_llama_defaults(void) {
    sn_hf_config c = parse("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":2048,"
                           "\"num_attention_heads\":32,\"num_hidden_layers\":16}");
    CU_ASSERT_STRING_EQUAL(c.architecture, "LlamaForCausalLM");
    CU_ASSERT_EQUAL(c.hidden_size, 2048);
    CU_ASSERT_EQUAL(c.n_kv_heads, 32);        /* None -> num_attention_heads */
    CU_ASSERT_EQUAL(c.head_dim, 64);          /* hidden / heads, and a config key */
    CU_ASSERT_TRUE(c.has_head_dim);
    CU_ASSERT_EQUAL(c.vocab_size, 32000);
    CU_ASSERT_EQUAL(c.intermediate_size, 11008);
    CU_ASSERT_EQUAL(c.max_position_embeddings, 2048);
    CU_ASSERT_TRUE(c.has_rope_theta);
    CU_ASSERT_DOUBLE_EQUAL(c.rope_theta, 10000.0, 0);
    CU_ASSERT_TRUE(c.has_rms_norm_eps);
    CU_ASSERT_DOUBLE_EQUAL(c.rms_norm_eps, 1e-6, 0);
    CU_ASSERT_EQUAL(c.tie_word_embeddings, 0);
    CU_ASSERT_EQUAL(c.bos_token_id, 1);
    CU_ASSERT_EQUAL(c.eos_token_id, 2);
    CU_ASSERT_EQUAL(c.pad_token_id, -1);
    CU_ASSERT_EQUAL(c.rope_scaling, SN_ROPE_SCALING_NONE);
    sn_hf_config_free(&c);
}

static void test_mistral_qwen_defaults(void) {
    sn_hf_config c = parse("{\"architectures\":[\"MistralForCausalLM\"],\"head_dim\":128,\"hidden_size\":5120}");
    CU_ASSERT_EQUAL(c.n_kv_heads, 8);
    CU_ASSERT_EQUAL(c.head_dim, 128); /* explicit (Nemo style), not 5120/32 */
    CU_ASSERT_EQUAL(c.max_position_embeddings, 131072);
    CU_ASSERT_EQUAL(c.intermediate_size, 14336);
    sn_hf_config_free(&c);
    c = parse("{\"architectures\":[\"Qwen2ForCausalLM\"],\"hidden_size\":896,\"num_attention_heads\":14,"
              "\"tie_word_embeddings\":true,\"eos_token_id\":[151645,151643],\"bos_token_id\":null}");
    CU_ASSERT_FALSE(c.has_head_dim);          /* Qwen2Config has no head_dim: no key_length key */
    CU_ASSERT_EQUAL(c.head_dim, 64);          /* but the derived value is there for shapes */
    CU_ASSERT_EQUAL(c.n_kv_heads, 32);        /* Qwen2Config's default is 32, not "= heads" */
    CU_ASSERT_EQUAL(c.vocab_size, 151936);
    CU_ASSERT_EQUAL(c.max_position_embeddings, 32768);
    CU_ASSERT_EQUAL(c.tie_word_embeddings, 1);
    CU_ASSERT_EQUAL(c.eos_token_id, -1);      /* lists are ignored */
    CU_ASSERT_EQUAL(c.bos_token_id, -1);
    sn_hf_config_free(&c);
    c = parse("{\"architectures\":[\"Qwen3ForCausalLM\"],\"hidden_size\":1024,\"num_attention_heads\":16}");
    CU_ASSERT_TRUE(c.has_head_dim);
    CU_ASSERT_EQUAL(c.head_dim, 128);         /* Qwen3Config default, not 1024/16 */
    sn_hf_config_free(&c);
}

static void test_rope_scaling(void) {
    sn_hf_config c = parse("{\"architectures\":[\"LlamaForCausalLM\"],\"rope_theta\":500000,"
                           "\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":32.0,\"low_freq_factor\":1.0,"
                           "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":8192}}");
    CU_ASSERT_EQUAL(c.rope_scaling, SN_ROPE_SCALING_LLAMA3);
    CU_ASSERT_DOUBLE_EQUAL(c.rope_factor, 32.0, 0);
    CU_ASSERT_EQUAL(c.rope_orig_ctx, 8192);
    CU_ASSERT_DOUBLE_EQUAL(c.rope_theta, 500000.0, 0);
    sn_hf_config_free(&c);
    c = parse("{\"architectures\":[\"LlamaForCausalLM\"],\"rope_scaling\":{\"type\":\"linear\",\"factor\":2}}");
    CU_ASSERT_EQUAL(c.rope_scaling, SN_ROPE_SCALING_LINEAR); /* legacy "type" accepted */
    CU_ASSERT_DOUBLE_EQUAL(c.rope_factor, 2.0, 0);
    sn_hf_config_free(&c);
    c = parse("{\"architectures\":[\"Qwen2ForCausalLM\"],\"rope_scaling\":{\"type\":\"yarn\",\"factor\":4.0,"
              "\"original_max_position_embeddings\":32768,\"beta_fast\":32}}");
    CU_ASSERT_EQUAL(c.rope_scaling, SN_ROPE_SCALING_YARN);
    CU_ASSERT_EQUAL(c.rope_orig_ctx, 32768);
    CU_ASSERT_TRUE(c.has_yarn_beta_fast);
    CU_ASSERT_FALSE(c.has_yarn_beta_slow);
    sn_hf_config_free(&c);
    /* transformers v5 rope_parameters carries rope_theta */
    c = parse("{\"architectures\":[\"LlamaForCausalLM\"],\"rope_parameters\":{\"rope_type\":\"default\",\"rope_theta\":1000000.0}}");
    CU_ASSERT_EQUAL(c.rope_scaling, SN_ROPE_SCALING_OTHER);
    CU_ASSERT_DOUBLE_EQUAL(c.rope_theta, 1e6, 0);
    sn_hf_config_free(&c);
}

static void test_text_config_and_errors(void) {
    sn_hf_config c = parse("{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":1,"
                           "\"text_config\":{\"hidden_size\":4096,\"vocab_size\":777}}");
    CU_ASSERT_EQUAL(c.hidden_size, 4096);
    CU_ASSERT_EQUAL(c.vocab_size, 777);
    sn_hf_config_free(&c);
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_hf_config_parse("{\"architectures\":[\"LlamaForCausalLM\",", "cfg.json", &c, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cfg.json"));
    CU_ASSERT_EQUAL(sn_hf_config_parse("{\"hidden_size\":\"big\"}", "cfg.json", &c, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "hidden_size"));
    CU_ASSERT_EQUAL(sn_hf_config_load("/nonexistent/config.json", &c, &err), SN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/config.json"));
    /* unknown architecture: no class defaults applied */
    c = parse("{\"architectures\":[\"GPT2LMHeadModel\"]}");
    CU_ASSERT_EQUAL(c.vocab_size, -1);
    CU_ASSERT_FALSE(c.has_rope_theta);
    sn_hf_config_free(&c);
}

/* config.json is read like Python's json: Infinity, -Infinity, NaN outside strings are numbers;
 * inside strings they stay text; a typo next to them is still an error at the right offset. */
static void test_nonfinite(void) {
    sn_hf_config c;
    sn_err err = {0};
    const char *j = "{\"architectures\":[\"Mamba2ForCausalLM\"],\"time_step_limit\":[0.0, Infinity],"
                    "\"lo\":-Infinity,\"x\":[1,NaN,2],\"s\":\"NaN Infinity\",\"n\":NaN,\"vocab_size\":7}";
    CU_ASSERT_EQUAL_FATAL(sn_hf_config_parse(j, "config.json", &c, &err), SN_OK);
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(c.root, "time_step_limit");
    CU_ASSERT(isinf(cJSON_GetArrayItem(tl, 1)->valuedouble) && cJSON_GetArrayItem(tl, 1)->valuedouble > 0);
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(tl, 0)->valuedouble, 0.0);
    double lo = 0;
    CU_ASSERT(sn_hf_config_get_num(&c, "lo", &lo) && isinf(lo) && lo < 0);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(c.root, "x");
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(x, 0)->valuedouble, 1.0);
    CU_ASSERT(isnan(cJSON_GetArrayItem(x, 1)->valuedouble));
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(x, 2)->valuedouble, 2.0);
    CU_ASSERT_STRING_EQUAL(sn_hf_config_get_str(&c, "s"), "NaN Infinity");
    double n = 0;
    CU_ASSERT(sn_hf_config_get_num(&c, "n", &n) && isnan(n));
    CU_ASSERT_EQUAL(c.vocab_size, 7);
    sn_hf_config_free(&c);
    /* not Python's literals: still invalid, with the offset of the bad token */
    CU_ASSERT_EQUAL(sn_hf_config_parse("{\"a\": infinity}", "config.json", &c, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "offset 6"));
    CU_ASSERT_EQUAL(sn_hf_config_parse("{\"a\": NaNa}", "config.json", &c, &err), SN_EFORMAT);
    /* mamba_ssm configs name the architecture in ssm_cfg */
    CU_ASSERT_EQUAL_FATAL(sn_hf_config_parse("{\"d_model\":64,\"n_layer\":2,\"ssm_cfg\":{\"layer\":\"Mamba2\"}}",
                                             "config.json", &c, &err), SN_OK);
    CU_ASSERT_STRING_EQUAL(c.architecture, "Mamba2ForCausalLM");
    CU_ASSERT_EQUAL(c.n_layers, 2);
    sn_hf_config_free(&c);
}


/* Integers too large for int64 (found by fuzz_hf_config): refused as "must be an integer", with no
 * out-of-range double -> int64 cast on the way (UBSan in the ASan stage); the fuzzer's inputs are
 * replayed from tests/fuzz/regress/. */
static void test_huge_integers(void) {
    sn_hf_config c;
    sn_err e = {0};
    CU_ASSERT_EQUAL(sn_hf_config_parse("{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":3.2e51}", "c.json", &c, &e),
                    SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "vocab_size"));
    CU_ASSERT_EQUAL(sn_hf_config_parse("{\"architectures\":[\"LlamaForCausalLM\"],\"rope_scaling\":{\"rope_type\":\"yarn\","
                                       "\"factor\":2,\"original_max_position_embeddings\":1e300}}", "c.json", &c, &e), SN_OK);
    CU_ASSERT_EQUAL(c.rope_orig_ctx, -1);
    sn_hf_config_free(&c);
    static const char *const regress[] = {"hf_config-int-overflow-1.json", "hf_config-int-overflow-2.json"};
    for (size_t i = 0; i < sizeof regress / sizeof *regress; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/fuzz/regress/%s", sn_test_src(), regress[i]);
        FILE *f = fopen(path, "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        char buf[8192];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        if (sn_hf_config_parse(buf, regress[i], &c, &e) == SN_OK) sn_hf_config_free(&c);
    }
}

static const sn_test_case cases[] = {
    {"Infinity/NaN literals, ssm_cfg architecture", test_nonfinite},
    {"LlamaConfig defaults", test_llama_defaults},
    {"Mistral/Qwen2/Qwen3 defaults", test_mistral_qwen_defaults},
    {"rope scaling forms", test_rope_scaling},
    {"text_config merge, errors", test_text_config_and_errors},
    {"integers past int64", test_huge_integers},
};
SN_TEST_MAIN("hf_config", cases)
