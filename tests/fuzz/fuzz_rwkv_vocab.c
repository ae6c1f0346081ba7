/* fuzz_rwkv_vocab.c - libFuzzer harness: arbitrary bytes as an RWKV world vocabulary
 * (rwkv_vocab_v20230424.txt: `ID LITERAL LEN` lines, Python str/bytes literals with escapes) built
 * into GGUF tokenizer keys as sunny-convert builds them, then that vocabulary loaded by the runtime's
 * RWKV tokenizer and a text encoded. The vocab code reads a folder, so each input is written to one
 * temp folder of this process. Built and run by tests/fuzz/run_fuzz.sh. */
#include "gguf.h"
#include "tokenizer.h"
#include "vocab.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], path[128], gpath[128];

static void cleanup(void) {
    unlink(path);
    unlink(gpath);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        snprintf(dir, sizeof dir, "/tmp/fuzz_rwkv_vocab_%d", (int)getpid());
        mkdir(dir, 0700);
        snprintf(path, sizeof path, "%s/rwkv_vocab_v20230424.txt", dir);
        snprintf(gpath, sizeof gpath, "%s/v.gguf", dir);
        atexit(cleanup);
        ready = 1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    sn_gguf_writer *w = sn_gguf_writer_new();
    if (!w) return 0;
    sn_err err;
    sn_vocab_report rep;
    /* a small vocab_size keeps each run fast; the seeds stay below it */
    if (sn_vocab_rwkv_write(dir, NULL, NULL, 1024, w, &rep, &err) == SN_OK &&
        sn_gguf_writer_set_str(w, "general.architecture", "rwkv7") == SN_OK &&
        sn_gguf_writer_begin(w, gpath, &err) == SN_OK && sn_gguf_writer_finish(w, &err) == SN_OK) {
        sn_gguf *g = NULL;
        sn_tokenizer *tok = NULL;
        if (sn_gguf_open(gpath, 0, &g, &err) == SN_OK && sn_tok_load(g, &tok, &err) == SN_OK) {
            static const char text[] = "Hello, world!\n\n\xe4\xbd\xa0\xe5\xa5\xbd \x80\xff end";
            int32_t ids[128];
            char out[512];
            int64_t n = sn_tok_encode(tok, text, sizeof text - 1, 1, 1, ids, 128, &err);
            if (n > 0) (void)sn_tok_decode(tok, ids, (size_t)(n < 128 ? n : 128), 1, out, sizeof out);
            sn_tok_free(tok);
        }
        sn_gguf_close(g);
    }
    sn_gguf_writer_free(w);
    return 0;
}
