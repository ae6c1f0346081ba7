/* fuzz_tokenizer_json.c - libFuzzer harness: arbitrary bytes as a model folder's tokenizer.json (BPE
 * vocab and merges, added tokens, pre-tokenizer, byte fallback), built into GGUF tokenizer keys as
 * sunny-convert builds them (with a Llama config.json). The vocab code reads a folder, so each input
 * is written to one temp folder of this process. Built and run by tests/fuzz/run_fuzz.sh. */
#include "gguf.h"
#include "hf_config.h"
#include "vocab.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], path[96];

static void cleanup(void) {
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static sn_hf_config cfg;
    static int ready;
    sn_err err;
    if (!ready) {
        snprintf(dir, sizeof dir, "/tmp/fuzz_tokenizer_json_%d", (int)getpid());
        mkdir(dir, 0700);
        atexit(cleanup);
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        if (sn_hf_config_parse("{\"architectures\":[\"LlamaForCausalLM\"],\"vocab_size\":300,\"hidden_size\":64,"
                               "\"num_attention_heads\":4,\"num_hidden_layers\":1,\"bos_token_id\":1,"
                               "\"eos_token_id\":2}", "config.json", &cfg, &err) != SN_OK)
            return 0;
        ready = 1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_vocab_report rep;
    if (w) (void)sn_vocab_write_gguf(dir, &cfg, w, NULL, &rep, &err);
    sn_gguf_writer_free(w);
    return 0;
}
