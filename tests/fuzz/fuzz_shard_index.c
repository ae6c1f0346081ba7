/* fuzz_shard_index.c - libFuzzer harness: arbitrary bytes as a sharded model's index
 * (model.safetensors.index.json, or pytorch_model.bin.index.json when the first byte is odd) in a
 * folder that also holds two real shards of that kind, opened as sunny-convert opens a folder: the
 * weight_map's shard names checked, the shards opened, every tensor looked up in the shard the index
 * names. The PyTorch shards are copies of a seed of fuzz_torch_zip. Built and run by
 * tests/fuzz/run_fuzz.sh. */
#include "safetensors.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[2][64];

static void put(const char *d, const char *name, const void *buf, size_t n) {
    char p[160];
    snprintf(p, sizeof p, "%s/%s", d, name);
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    fwrite(buf, 1, n, f);
    fclose(f);
}

static void cleanup(void) {
    static const char *const names[] = {"model.safetensors.index.json", "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors", "pytorch_model.bin.index.json",
                                        "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"};
    char p[160];
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            snprintf(p, sizeof p, "%s/%s", dir[k], names[i]);
            unlink(p);
        }
        rmdir(dir[k]);
    }
}

/* a .safetensors shard holding one F32 tensor of 2 elements named `name` */
static void st_shard(const char *d, const char *file, const char *name) {
    char hdr[160];
    int n = snprintf(hdr, sizeof hdr, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", name);
    while (n % 8) hdr[n++] = ' ';
    uint8_t buf[256] = {0};
    uint64_t L = (uint64_t)n;
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(L >> (8 * i));
    memcpy(buf + 8, hdr, (size_t)n);
    put(d, file, buf, 8 + (size_t)n + 8);
}

static void setup(void) {
    for (int k = 0; k < 2; k++) {
        snprintf(dir[k], sizeof dir[k], "/tmp/fuzz_shard_index_%d_%d", (int)getpid(), k);
        mkdir(dir[k], 0700);
    }
    atexit(cleanup);
    st_shard(dir[0], "model-00001-of-00002.safetensors", "a.weight");
    st_shard(dir[0], "model-00002-of-00002.safetensors", "b.weight");
    /* the torch shards: one seed checkpoint twice would repeat its tensor names, so the second copy
     * only exists for the "does the shard exist" check of names the index gives */
    char src[512];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *slash = strrchr(src, '/');
    snprintf(slash ? slash + 1 : src, sizeof src - (size_t)(slash ? slash + 1 - src : 0), "corpus/torch_zip/sd_p2.bin");
    FILE *f = fopen(src, "rb");
    if (!f) abort();
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    put(dir[1], "pytorch_model-00001-of-00002.bin", buf, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) setup(), ready = 1;
    if (size < 1) return 0;
    const int torch = data[0] & 1;
    put(dir[torch], torch ? "pytorch_model.bin.index.json" : "model.safetensors.index.json", data + 1, size - 1);
    sn_err err;
    sn_st_model *m = NULL;
    if (sn_st_model_open(dir[torch], &m, &err) == SN_OK) {
        volatile size_t sink = sn_st_model_n_tensors(m) + sn_st_model_n_files(m);
        (void)sink;
        sn_st_model_close(m);
    } else {
        volatile size_t sink = strlen(err.msg);
        (void)sink;
    }
    return 0;
}
