/* fuzz_lmstudio_reply.c - libFuzzer harness: arbitrary bytes as what an LM Studio server (or its lms
 * CLI) answers, read by integrate/lmstudio_reply.c; the first byte picks the reader: GET
 * /lmstudio-greeting (0), GET /api/v0/models searched for a placed file's key (1), GET
 * /api/v0/models/{id}'s arch (2), POST /api/v1/models/load's answer (3), `lms ls --json` checked
 * against a placed file (4), a completion answer - server-sent events or a whole body - split into
 * lines by http.c's splitter in chunks of the second byte's size (5). Built and run by
 * tests/fuzz/run_fuzz.sh. */
#include "http.h"
#include "lmstudio_reply.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void on_note(void *ud, const char *line) { *(size_t *)ud += strlen(line); }

static const sn_lms_placed placed = {.publisher = "sunny-local", .repo = "Tiny-GGUF",
                                     .rel_path = "sunny-local/Tiny-GGUF/tiny-F32.gguf", .arch = "llama",
                                     .quant = "F32", .n_files = 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const int which = data[0] % 6;
    data++, size--;
    sn_err err;
    if (which == 5) {
        if (size < 1) return 0;
        const size_t chunk = (size_t)data[0] + 1;
        data++, size--;
        sn_lms_completion c;
        sn_lms_completion_begin(&c, "POST /api/v0/completions", &err);
        sn_ndjson nd = {0};
        int stopped = 0;
        for (size_t i = 0; i < size && !stopped; i += chunk)
            stopped = sn_ndjson_feed(&nd, (const char *)data + i, size - i < chunk ? size - i : chunk,
                                     sn_lms_completion_line, &c) != 0;
        if (!stopped) sn_ndjson_end(&nd, sn_lms_completion_line, &c);
        sn_ndjson_free(&nd);
        if (sn_lms_completion_end(&c) == SN_OK) {
            volatile size_t sink = c.text_len + strlen(c.finish) + strlen(c.arch) + strlen(c.server_error);
            for (size_t i = 0; i < c.n_toks; i++) sink += strlen(c.toks[i].text);
            (void)sink;
        }
        sn_lms_completion_free(&c);
        return 0;
    }
    char *s = malloc(size + 1); /* the http layer hands bodies over NUL-terminated */
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    char buf[256];
    size_t seen = 0;
    int found = 0;
    switch (which) {
    case 0: (void)sn_lms_greeting_answer(s, size, "http://127.0.0.1:1234", buf, sizeof buf, &err); break;
    case 1: (void)sn_lms_models_key(s, size, &placed, buf, sizeof buf); break;
    case 2: sn_lms_model_arch(s, size, buf, sizeof buf); break;
    case 3: sn_lms_load_answer(s, size, "tiny", buf, sizeof buf); break;
    default: (void)sn_lms_ls_answer(s, size, &placed, &found, on_note, &seen, &err); break;
    }
    free(s);
    return 0;
}
