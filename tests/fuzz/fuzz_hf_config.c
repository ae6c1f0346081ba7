/* fuzz_hf_config.c - libFuzzer harness: arbitrary bytes as config.json (the NaN/Infinity rewrite,
 * text_config merge, rope parameters, token ids, range checks, class defaults). Built and run by
 * tests/fuzz/run_fuzz.sh. */
#include "hf_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *json = malloc(size + 1);
    if (!json) return 0;
    memcpy(json, data, size);
    json[size] = 0;
    sn_err err;
    sn_hf_config cfg;
    if (sn_hf_config_parse(json, "fuzz/config.json", &cfg, &err) == SN_OK) sn_hf_config_free(&cfg);
    free(json);
    return 0;
}
