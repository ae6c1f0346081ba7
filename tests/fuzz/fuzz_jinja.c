/* fuzz_jinja.c - libFuzzer harness for the Jinja interpreter (templates/jinja*.c): parses the
 * input as a template and renders it with a fixed conversation (system/user/assistant turns,
 * tools, unicode). Any crash, sanitizer report, leak or hang is a bug; "raised" and "cannot
 * render" are the expected outcomes for garbage. Step, output and memory limits are lowered so a
 * mutated template cannot run for long. Built and run by tests/integration/test_fuzz_jinja.sh:
 *   clang -fsanitize=fuzzer,address,undefined -Itemplates -Iruntime tests/fuzz/fuzz_jinja.c \
 *         templates/jinja*.c runtime/base/sn_err.c -lcjson */
#include "jinja.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>

static cJSON *vars;

static const char VARS[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
    " {\"role\": \"user\", \"content\": \"Hi {{ x }} {% if %} \\u00e9\\u4e2d\"},"
    " {\"role\": \"assistant\", \"content\": \"<think>r</think>ok\", \"tool_calls\": [{\"type\": \"function\","
    " \"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1}}}]},"
    " {\"role\": \"tool\", \"content\": \"42\"}, {\"role\": \"user\", \"content\": \"  again  \"}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"d\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}}],"
    " \"documents\": null, \"add_generation_prompt\": true, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!vars) vars = cJSON_Parse(VARS);
    sn_jinja *t = NULL;
    sn_err err = {0};
    if (sn_jinja_parse((const char *)data, size, &t, &err) != SN_OK) return 0;
    sn_jinja_opts o = {.now = 1764580000, .max_steps = 200000, .max_output = 1 << 20, .max_memory = 64u << 20};
    char *out = NULL;
    size_t n = 0;
    sn_jinja_render(t, vars, &o, &out, &n, &err);
    free(out);
    sn_jinja_free(t);
    return 0;
}
