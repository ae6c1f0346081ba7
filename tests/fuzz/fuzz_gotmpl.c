/* fuzz_gotmpl.c - libFuzzer harness for the Go text/template evaluator (templates/gotmpl*.c):
 * parses the input as an Ollama TEMPLATE and renders it with Ollama's semantics on a fixed
 * conversation (system, two user turns, an assistant turn, tools). Crashes, sanitizer reports,
 * leaks and hangs are bugs; errors and "cannot render" are expected. Built and run by
 * tests/integration/test_fuzz_jinja.sh. */
#include "gotmpl.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>

static cJSON *msgs, *tools;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!msgs) {
        msgs = cJSON_Parse("[{\"role\":\"system\",\"content\":\"S\"},{\"role\":\"user\",\"content\":\"a {{ .x }}\"},"
                           "{\"role\":\"assistant\",\"content\":\"b\"},{\"role\":\"user\",\"content\":\"\\u00e9\"}]");
        tools = cJSON_Parse("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"description\":\"d\","
                            "\"parameters\":{\"type\":\"object\"}}}]");
    }
    sn_gotmpl *t = NULL;
    sn_err err = {0};
    if (sn_gotmpl_parse((const char *)data, size, &t, &err) != SN_OK) return 0;
    char *out = NULL;
    sn_gotmpl_render_chat(t, msgs, size % 2 ? tools : NULL, (int)(size % 3) - 1, size % 5 ? NULL : "D", &out, &err);
    free(out);
    sn_gotmpl_free(t);
    return 0;
}
