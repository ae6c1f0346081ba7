/* fuzz_ollama_host.c - libFuzzer harness: arbitrary bytes as OLLAMA_HOST / --host (Ollama's
 * envconfig.Host rules: scheme, brackets, ports, the 0.0.0.0 -> 127.0.0.1 connect address) and as a
 * server's version string. Built and run by tests/fuzz/run_fuzz.sh. */
#include "ollama.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    sn_ollama_host h;
    sn_ollama_parse_host(s, &h);
    volatile size_t n = strlen(h.connect_url);
    sn_ollama_version v;
    sn_ollama_version_parse(s, &v);
    n += (size_t)sn_ollama_version_cmp(&v, 0, 5, 0);
    (void)n;
    free(s);
    return 0;
}
