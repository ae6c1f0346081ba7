/* test_integrate_ollama.c - OLLAMA_HOST parsing against Ollama's own envconfig test table (plus
 * ConnectableHost mapping), Modelfile quoting as Ollama's parser reads it, parameter typing, name
 * grammar and loopback detection. Pure functions; no server needed. The install job as a library
 * call (sn_ollama_install): a dry run with no server reports through the callbacks only. */
#include "gguf.h"
#include "http.h"
#include "ollama.h"
#include "ollama_install.h"
#include "sn_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_host_table(void) {
    /* envconfig/config_test.go TestHost, plus the ollama.com and bracket-less IPv6 cases. */
    static const struct { const char *in, *want; } t[] = {
        {"", "http://127.0.0.1:11434"},
        {"1.2.3.4", "http://1.2.3.4:11434"},
        {":1234", "http://:1234"},
        {"1.2.3.4:1234", "http://1.2.3.4:1234"},
        {"example.com", "http://example.com:11434"},
        {"example.com:1234", "http://example.com:1234"},
        {":0", "http://:0"},
        {":66000", "http://:11434"},
        {":-1", "http://:11434"},
        {"[::1]", "http://[::1]:11434"},
        {"[::]", "http://[::]:11434"},
        {"::1", "http://[::1]:11434"},
        {"[::1]:1337", "http://[::1]:1337"},
        {" 1.2.3.4 ", "http://1.2.3.4:11434"},
        {"\"1.2.3.4\"", "http://1.2.3.4:11434"},
        {" \" 1.2.3.4 \" ", "http://1.2.3.4:11434"},
        {"'1.2.3.4'", "http://1.2.3.4:11434"},
        {"http://1.2.3.4", "http://1.2.3.4:80"},
        {"http://1.2.3.4:4321", "http://1.2.3.4:4321"},
        {"https://1.2.3.4", "https://1.2.3.4:443"},
        {"https://1.2.3.4:4321", "https://1.2.3.4:4321"},
        {"https://example.com/ollama", "https://example.com:443/ollama"},
        {"ollama.com", "https://ollama.com:443"},
        {"0.0.0.0", "http://0.0.0.0:11434"},
        {"0.0.0.0:8080", "http://0.0.0.0:8080"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sn_ollama_host h;
        sn_ollama_parse_host(t[i].in, &h);
        if (strcmp(h.url, t[i].want) != 0) fprintf(stderr, "OLLAMA_HOST=[%s]: got %s want %s\n", t[i].in, h.url, t[i].want);
        CU_ASSERT_STRING_EQUAL(h.url, t[i].want);
    }
    sn_ollama_host h;
    sn_ollama_parse_host(NULL, &h);
    CU_ASSERT_STRING_EQUAL(h.url, "http://127.0.0.1:11434");
}

static void test_connectable(void) {
    static const struct { const char *in, *want; } t[] = {
        {"0.0.0.0", "http://127.0.0.1:11434"},
        {"0.0.0.0:9999", "http://127.0.0.1:9999"},
        {"[::]", "http://[::1]:11434"},
        {":1234", "http://127.0.0.1:1234"},
        {"1.2.3.4", "http://1.2.3.4:11434"},
        {"https://example.com/ollama", "https://example.com:443/ollama"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sn_ollama_host h;
        sn_ollama_parse_host(t[i].in, &h);
        CU_ASSERT_STRING_EQUAL(h.connect_url, t[i].want);
    }
}

static void test_loopback(void) {
    CU_ASSERT(sn_http_host_is_loopback("localhost"));
    CU_ASSERT(sn_http_host_is_loopback("LOCALHOST"));
    CU_ASSERT(sn_http_host_is_loopback("foo.localhost"));
    CU_ASSERT(sn_http_host_is_loopback("127.0.0.1"));
    CU_ASSERT(sn_http_host_is_loopback("127.255.3.4"));
    CU_ASSERT(sn_http_host_is_loopback("::1"));
    CU_ASSERT(sn_http_host_is_loopback("[::1]"));
    CU_ASSERT(sn_http_host_is_loopback("::ffff:127.0.0.1"));
    CU_ASSERT(!sn_http_host_is_loopback("128.0.0.1"));
    CU_ASSERT(!sn_http_host_is_loopback("0.0.0.0"));
    CU_ASSERT(!sn_http_host_is_loopback("example.com"));
    CU_ASSERT(!sn_http_host_is_loopback("localhost.example.com"));
    CU_ASSERT(!sn_http_host_is_loopback("10.0.0.1"));
}

static void test_params(void) {
    sn_err e = {0};
    cJSON *p = cJSON_CreateObject();
    CU_ASSERT_EQUAL(sn_ollama_param_add(p, "stop", "<|im_end|>", &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_param_add(p, "stop", "<|im_start|>", &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_param_add(p, "num_ctx", "4096", &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_param_add(p, "temperature", "0.7", &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_param_add(p, "use_mmap", "false", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_param_add(p, "num_ctx", "4k", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_param_add(p, "bogus", "1", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_param_add(p, "mirostat", "1", &e), SN_OK);
    /* not finite: JSON cannot carry it (cJSON would send null, and the check of /api/show then
     * compared null with null) */
    const char *nonfinite[] = {"nan", "NaN", "inf", "-Infinity", "1e999"};
    for (size_t i = 0; i < sizeof nonfinite / sizeof *nonfinite; i++) {
        CU_ASSERT_EQUAL(sn_ollama_param_add(p, "temperature", nonfinite[i], &e), SN_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, i < 4 ? "finite" : "must be a number"));
    }
    char *s = cJSON_PrintUnformatted(p);
    CU_ASSERT_STRING_EQUAL(s, "{\"stop\":[\"<|im_end|>\",\"<|im_start|>\"],\"num_ctx\":4096,\"temperature\":0.7,\"use_mmap\":false}");
    free(s);
    cJSON_Delete(p);
}

static void test_modelfile(void) {
    sn_err e = {0};
    cJSON *p = cJSON_CreateObject();
    sn_ollama_param_add(p, "stop", "<|im_end|>", &e);
    sn_ollama_param_add(p, "stop", " leading space", &e);
    sn_ollama_param_add(p, "num_ctx", "2048", &e);
    sn_ollama_model_spec m = {.name = "x", .gguf_path = "/a/b.gguf",
                              .template_text = "{{ .System }}\n\"{{ .Prompt }}\"", .system = "Be terse.",
                              .parameters = p, .license = "MIT"};
    char *mf = sn_ollama_modelfile(&m, "./b.gguf", &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mf);
    CU_ASSERT_STRING_EQUAL(mf, "FROM ./b.gguf\n"
                               "TEMPLATE \"\"\"{{ .System }}\n\"{{ .Prompt }}\"\"\"\"\n"
                               "SYSTEM Be terse.\n"
                               "PARAMETER stop <|im_end|>\n"
                               "PARAMETER stop \" leading space\"\n"
                               "PARAMETER num_ctx 2048\n"
                               "LICENSE MIT\n");
    free(mf);
    m.template_text = "a \"\"\" b\nc"; /* a """ inside a line does not end the value */
    mf = sn_ollama_modelfile(&m, "./b.gguf", &e);
    CU_ASSERT_PTR_NOT_NULL(mf && strstr(mf, "TEMPLATE \"\"\"a \"\"\" b\nc\"\"\"\n"));
    free(mf);
    m.template_text = "a\"\nb"; /* a line ending in ": "..." would end there, """...""" keeps it */
    mf = sn_ollama_modelfile(&m, "./b.gguf", &e);
    CU_ASSERT_PTR_NOT_NULL(mf && strstr(mf, "TEMPLATE \"\"\"a\"\nb\"\"\"\n"));
    free(mf);
    m.template_text = "x\"\ny\"\"\"\nz"; /* line ends: " in "...", """ in """...""", bare ends at once */
    CU_ASSERT_PTR_NULL(sn_ollama_modelfile(&m, "./b.gguf", &e));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "\"\"\""));
    m.template_text = "trailing space ";
    mf = sn_ollama_modelfile(&m, "./b.gguf", &e);
    CU_ASSERT_PTR_NOT_NULL(mf && strstr(mf, "TEMPLATE \"trailing space \"\n"));
    free(mf);
    m.template_text = "trailing tab\t";
    mf = sn_ollama_modelfile(&m, "./b.gguf", &e);
    CU_ASSERT_PTR_NOT_NULL(mf && strstr(mf, "TEMPLATE \"trailing tab\t\"\n"));
    free(mf);
    m.template_text = "nbsp\xC2\xA0"; /* U+00A0: strconv.IsPrint drops it even inside quotes */
    CU_ASSERT_PTR_NULL(sn_ollama_modelfile(&m, "./b.gguf", &e));
    m.template_text = "bell\a";
    CU_ASSERT_PTR_NULL(sn_ollama_modelfile(&m, "./b.gguf", &e));
    m.template_text = "multi\nline";
    mf = sn_ollama_modelfile(&m, "./b.gguf", &e);
    CU_ASSERT_PTR_NOT_NULL(mf && strstr(mf, "TEMPLATE \"multi\nline\"\n"));
    free(mf);
    cJSON_Delete(p);
}

static void test_names_versions(void) {
    sn_err e = {0};
    CU_ASSERT_EQUAL(sn_ollama_check_name("tinyq:q8", &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_check_name("me/tiny-model_1.5:latest", &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_check_name("hf.co/user/repo:Q8_0", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_check_name("-bad", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_check_name("a b", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_check_name("ns.x/model", &e), SN_OK);
    CU_ASSERT_NOT_EQUAL(sn_ollama_check_name("model:", &e), SN_OK);
    sn_ollama_version v;
    sn_ollama_version_parse("0.5.4", &v);
    CU_ASSERT(sn_ollama_version_cmp(&v, 0, 5, 5) < 0);
    sn_ollama_version_parse("0.33.0-rc2", &v);
    CU_ASSERT(sn_ollama_version_cmp(&v, 0, 30, 0) > 0);
    sn_ollama_version_parse("0.0.0", &v);
    CU_ASSERT(sn_ollama_version_cmp(&v, 0, 5, 5) > 0);
}

static void test_create_body(void) {
    sn_err e = {0};
    cJSON *p = cJSON_CreateObject();
    sn_ollama_param_add(p, "stop", "<|eot_id|>", &e);
    sn_ollama_param_add(p, "num_ctx", "4096", &e);
    sn_ollama_model_spec m = {.name = "t:q8", .gguf_path = "/x/tiny-q8_0.gguf", .template_text = "{{ .Prompt }}",
                              .parameters = p, .license = "Apache-2.0"};
    char *b = sn_ollama_create_body(&m, "sha256:abc");
    CU_ASSERT_STRING_EQUAL(b, "{\"model\":\"t:q8\",\"files\":{\"tiny-q8_0.gguf\":\"sha256:abc\"},\"template\":"
                              "\"{{ .Prompt }}\",\"parameters\":{\"stop\":[\"<|eot_id|>\"],\"num_ctx\":4096},"
                              "\"license\":[\"Apache-2.0\"],\"stream\":true}");
    free(b);
    b = sn_ollama_create_body_legacy(&m, "sha256:abc", &e);
    CU_ASSERT_PTR_NOT_NULL(b && strstr(b, "\"modelfile\":\"FROM @sha256:abc\\nTEMPLATE {{ .Prompt }}\\n"));
    free(b);
    cJSON_Delete(p);
}

static void test_go_unquote(void) {
    char b[64];
    const char *q = "\"\\n\\n\"";
    CU_ASSERT(sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    CU_ASSERT_STRING_EQUAL(b, "\n\n");
    q = "\"<|im_end|>\"";
    CU_ASSERT(sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    CU_ASSERT_STRING_EQUAL(b, "<|im_end|>");
    q = "\"a\\t\\\"b\\\\\\x01\\u00e9\"";
    CU_ASSERT(sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    CU_ASSERT_STRING_EQUAL(b, "a\t\"b\\\x01\xc3\xa9");
    q = "noquotes";
    CU_ASSERT(!sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    /* octal escapes take exactly three octal digits up to \377, runes must be valid (Go's
     * strconv.Unquote); "\0x9" once shifted a negative digit value (UBSan, found by fuzz_ollama_reply) */
    q = "\"\\101\\0x9\"";
    CU_ASSERT(!sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    q = "\"\\400\"";
    CU_ASSERT(!sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    q = "\"\\101\\377\"";
    CU_ASSERT(sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    CU_ASSERT_STRING_EQUAL(b, "A\xff");
    q = "\"\\U00110000\"";
    CU_ASSERT(!sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    q = "\"\\ud800\"";
    CU_ASSERT(!sn_ollama_go_unquote(q, strlen(q), b, sizeof b));
    /* verify_show finds an escaped stop */
    cJSON *show = cJSON_Parse("{\"details\":{\"family\":\"rwkv7\"},\"template\":\"T\","
                              "\"parameters\":\"temperature                    0.7\\nstop                           \\\"\\\\n\\\\n\\\"\"}");
    cJSON *params = cJSON_CreateObject();
    sn_err e = {0};
    CU_ASSERT_EQUAL(sn_ollama_param_add(params, "stop", "\n\n", &e), SN_OK);
    sn_ollama_model_spec m = {.name = "x", .gguf_path = "x.gguf", .template_text = "T", .parameters = params};
    CU_ASSERT_EQUAL(sn_ollama_verify_show(show, &m, "rwkv7", NULL, 0, &e), SN_OK);
    /* the GGUF's Jinja selected by the server is accepted and named */
    m.template_text = "GO";
    m.gguf_chat_template = "T";
    CU_ASSERT_EQUAL(sn_ollama_verify_show(show, &m, "rwkv7", NULL, 0, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_ollama_selected_template(show, &m), SN_OLLAMA_TMPL_JINJA);
    m.gguf_chat_template = "other";
    CU_ASSERT_NOT_EQUAL(sn_ollama_verify_show(show, &m, "rwkv7", NULL, 0, &e), SN_OK);
    cJSON_Delete(params);
    cJSON_Delete(show);
}

typedef struct { char text[16384]; size_t n_lines, n_warn; } captured;
static void cap_line(void *ud, const char *t) {
    captured *c = ud;
    size_t l = strlen(c->text);
    snprintf(c->text + l, sizeof c->text - l, "%s\n", t);
    c->n_lines++;
}
static void cap_warn(void *ud, const char *t) { (void)t; ((captured *)ud)->n_warn++; }

static void test_install_library(void) {
    char dir[] = "/tmp/sn-test-install-XXXXXX", path[128], mf[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/base.gguf", dir);
    snprintf(mf, sizeof mf, "%s/Modelfile", dir);
    static const char *tokens[] = {"<unk>", "<s>", "</s>", "hi"};
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err err = {0};
    /* an architecture llama.cpp knows and sunny-run does not: only its structure is validated, so a
     * tokenizer-only file will do (a "llama" one would be refused as sunny-run refuses it) */
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "general.architecture", "gpt2"), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", tokens, NULL, 4), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 2), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &err), SN_OK);
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_finish(w, &err), SN_OK);
    sn_gguf_writer_free(w);

    /* a dry run against a port nobody listens on: previews, contacts nothing, prints nothing itself */
    captured c = {{0}, 0, 0};
    sn_ollama_install_cb cb = {.ud = &c, .line = cap_line, .warn = cap_warn};
    sn_ollama_install_opts o = {.gguf = path, .name = "base:test", .host = "http://127.0.0.1:1", .dry_run = 1,
                                .modelfile_out = mf, .params = cJSON_CreateObject(), .n_predict = 8, .ctx = 512};
    sn_ollama_install_result res;
    sn_ollama_job *job = NULL;
    sn_status st = sn_ollama_install_plan(&o, &cb, &job, &res, &err);
    if (st) fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    /* the plan: the Modelfile and the requests, as data for cmd/ to print */
    const sn_install_plan *plan = sn_ollama_job_plan(job);
    CU_ASSERT(plan->preamble && strstr(plan->preamble, "Modelfile (equivalent") && strstr(plan->preamble, "FROM "));
    CU_ASSERT(plan->heading && strstr(plan->heading, "none was: no server was contacted"));
    CU_ASSERT(plan->n_steps == 4 && !strncmp(plan->steps[0], "HEAD http://127.0.0.1:1/api/blobs/sha256:", 41));
    CU_ASSERT(access(mf, F_OK) != 0); /* the plan writes nothing */
    st = sn_ollama_install_run(job, &cb, &res, &err);
    sn_ollama_job_free(job);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res.json);
    CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(res.json, "server_contacted")));
    CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(res.json, "dry_run")));
    const cJSON *body = cJSON_GetObjectItem(res.json, "create_body");
    CU_ASSERT(cJSON_IsRaw(body) && strstr(body->valuestring, "\"template\":\"{{ .Prompt }}\"") != NULL);
    CU_ASSERT_EQUAL(res.diverged, 0);
    CU_ASSERT(strstr(c.text, "did not contact a server") != NULL);
    CU_ASSERT(strstr(c.text, "{{ .Prompt }}") != NULL); /* a base model: the raw completion template, said so */
    CU_ASSERT(access(mf, F_OK) == 0);
    cJSON_Delete(res.json);
    unlink(mf);

    /* not the first part of a split GGUF: the options are wrong (a usage error), nothing is done */
    char part[160];
    snprintf(part, sizeof part, "%s/m-00002-of-00003.gguf", dir);
    o.gguf = part;
    c.n_lines = 0;
    CU_ASSERT_EQUAL(sn_ollama_install(&o, &cb, &res, &err), SN_EINVAL);
    CU_ASSERT_EQUAL(err.detail, SN_OLLAMA_BAD_OPTIONS);
    CU_ASSERT(strstr(err.msg, "part 2 of a 3-part") != NULL);
    CU_ASSERT_EQUAL(c.n_lines, 0);
    CU_ASSERT_PTR_NULL(res.json);
    cJSON_Delete(o.params);
    unlink(path);
    rmdir(dir);
}

/* Answers read from their bytes (integrate/ollama_reply.c): context ids that are no int32 token id
 * (1e300 was cast to int32_t: undefined behaviour, UBSan) are left out; the create stream's lines
 * through http.c's NDJSON splitter, an error line ending it even under HTTP 200. */
static void test_replies(void) {
    sn_ollama_gen g;
    sn_err e = {0};
    const char *b = "{\"response\":\"hi\",\"done\":true,\"context\":[1,1e300,2.5,-3,\"x\",7],"
                    "\"eval_count\":1e30,\"logprobs\":[{\"token\":\"h\",\"bytes\":[104,999999999999],"
                    "\"top_logprobs\":[{\"logprob\":-0.5},{\"logprob\":-2}]}]}";
    CU_ASSERT_EQUAL_FATAL(sn_ollama_gen_parse(b, strlen(b), &g, &e), SN_OK);
    CU_ASSERT_EQUAL(g.n_context, 2);
    CU_ASSERT(g.n_context == 2 && g.context[0] == 1 && g.context[1] == 7);
    CU_ASSERT_EQUAL(g.eval_count, -1);
    CU_ASSERT(g.n_toks == 1 && g.toks[0].gap == 1.5);
    sn_ollama_gen_free(&g);
    b = "{\"response\":\"\",\"done_reason\":\"load\"}";
    CU_ASSERT_EQUAL(sn_ollama_gen_parse(b, strlen(b), &g, &e), SN_EINVAL);
    sn_ollama_gen_free(&g);
    CU_ASSERT_EQUAL(sn_ollama_gen_parse("nope", 4, &g, &e), SN_EIO);
    CU_ASSERT(strstr(e.msg, "POST /api/generate") != NULL);
    sn_ollama_gen_free(&g);
    sn_ollama_version v;
    CU_ASSERT_EQUAL(sn_ollama_version_answer("<html>", 6, "http://h:1", &v, &e), SN_EIO);
    CU_ASSERT(strstr(e.msg, "http://h:1/api/version") && strstr(e.msg, "<html>"));
    sn_ollama_create_ctx c = {.err = &e};
    sn_ndjson nd = {0};
    const char *s = "{\"status\":\"a\"}\r\n\n{\"stat";
    CU_ASSERT_EQUAL(sn_ndjson_feed(&nd, s, strlen(s), sn_ollama_create_line, &c), 0);
    s = "us\":\"success\"}\n{\"error\":\"boom\"}\n{\"status\":\"late\"}\n";
    CU_ASSERT_EQUAL(sn_ndjson_feed(&nd, s, strlen(s), sn_ollama_create_line, &c), -1);
    CU_ASSERT(nd.aborted && c.failed && c.success && c.lines == 3);
    CU_ASSERT(strstr(e.msg, "boom") && strstr(e.msg, "line 3"));
    sn_ndjson_free(&nd);
}

static const sn_test_case cases[] = {
    {"Ollama answers: generate, version, create stream", test_replies},
    {"install as a library call (dry run, no server)", test_install_library},
    {"go %#v unquote, escaped stops, selected template", test_go_unquote},
    {"OLLAMA_HOST table", test_host_table},
    {"ConnectableHost", test_connectable},
    {"loopback", test_loopback},
    {"parameter types", test_params},
    {"Modelfile quoting", test_modelfile},
    {"names and versions", test_names_versions},
    {"create bodies", test_create_body},
};
SN_TEST_MAIN("integrate_ollama", cases)
