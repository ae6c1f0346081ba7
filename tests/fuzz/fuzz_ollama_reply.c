/* fuzz_ollama_reply.c - libFuzzer harness: arbitrary bytes as what an Ollama server answers; the
 * first byte picks the reader: POST /api/create's NDJSON progress stream split into lines as
 * http.c splits it (fed in chunks of the second byte's size) with each line read as the install
 * reads it (0), POST /api/generate's answer with logprobs and context (1), GET /api/version's (2),
 * an error body {"error":...} (3), POST /api/show's answer checked against what was sent (4),
 * POST /api/generate's streamed answer, chunk by chunk through the same splitter (5).
 * Built and run by tests/fuzz/run_fuzz.sh. */
#include "http.h"
#include "ollama.h"
#include "smoke.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void on_status(void *ud, const char *line) { *(size_t *)ud += strlen(line); }

/* sn_ollama_gen_free lives beside the HTTP client; the same frees here */
static void gen_free(sn_ollama_gen *g) {
    free(g->text);
    free(g->context);
    for (size_t i = 0; i < g->n_toks; i++) free(g->toks[i].text);
    free(g->toks);
}

/* bytes through http.c's NDJSON splitter in chunks of the first byte's size, each line to fn */
static void stream(const uint8_t *data, size_t size, sn_http_line_fn fn, void *ud) {
    if (size < 1) return;
    const size_t chunk = (size_t)data[0] + 1;
    data++, size--;
    sn_ndjson nd = {0};
    int stopped = 0;
    for (size_t i = 0; i < size && !stopped; i += chunk)
        stopped = sn_ndjson_feed(&nd, (const char *)data + i, size - i < chunk ? size - i : chunk, fn, ud) != 0;
    if (!stopped) sn_ndjson_end(&nd, fn, ud);
    sn_ndjson_free(&nd);
}

static void show(const char *body) {
    cJSON *j = cJSON_Parse(body);
    if (!j) return;
    cJSON *params = cJSON_Parse("{\"stop\":[\"<|im_end|>\",\"\\n\\nUser:\",\"\\u0001\"]}");
    sn_ollama_model_spec m = {.template_text = "{{ .Prompt }}", .gguf_chat_template = "{{ messages }}",
                              .parameters = params};
    char note[256];
    sn_err err;
    (void)sn_ollama_verify_show(j, &m, "llama", note, sizeof note, &err);
    cJSON_Delete(params);
    cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const int which = data[0] % 6;
    data++, size--;
    sn_err err;
    if (which == 0) {
        size_t seen = 0;
        sn_ollama_create_ctx c = {.status = on_status, .ud = &seen, .err = &err};
        stream(data, size, sn_ollama_create_line, &c);
        return 0;
    }
    if (which == 5) {
        sn_ollama_gen g;
        sn_ollama_gen_ctx c;
        sn_ollama_gen_begin(&c, &g, &err);
        stream(data, size, sn_ollama_gen_line, &c);
        (void)sn_ollama_gen_end(&c);
        gen_free(&g);
        return 0;
    }
    char *s = malloc(size + 1); /* the http layer hands bodies over NUL-terminated */
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    if (which == 1) {
        sn_ollama_gen g;
        (void)sn_ollama_gen_parse(s, size, &g, &err);
        gen_free(&g);
    } else if (which == 2) {
        sn_ollama_version v;
        (void)sn_ollama_version_answer(s, size, "http://127.0.0.1:11434", &v, &err);
    } else if (which == 3) {
        char e[512];
        sn_http_json_error(s, e, sizeof e);
    } else {
        show(s);
    }
    free(s);
    return 0;
}
