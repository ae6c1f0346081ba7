/* fuzz_lmstudio_files.c - libFuzzer harness: arbitrary bytes as the LM Studio files sunny reads to
 * find LM Studio (integrate/lmstudio_home.c): the first byte picks which one -
 * ~/.lmstudio-home-pointer (0), the home's settings.json with its downloadsFolder (1), or
 * .internal/http-server.json with the server's port (2) - the others are fixed and valid. Each input
 * is written into one temp HOME of this process. Built and run by tests/fuzz/run_fuzz.sh. */
#include "lmstudio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char home[64], lms[96], ptr[128], settings[128], internal[128], server[160];

static void cleanup(void) {
    unlink(ptr);
    unlink(settings);
    unlink(server);
    rmdir(internal);
    rmdir(lms);
    rmdir(home);
}

static void put(const char *path, const void *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(buf, 1, n, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        snprintf(home, sizeof home, "/tmp/fuzz_lmstudio_files_%d", (int)getpid());
        snprintf(lms, sizeof lms, "%s/lms", home);
        snprintf(ptr, sizeof ptr, "%s/.lmstudio-home-pointer", home);
        snprintf(settings, sizeof settings, "%s/settings.json", lms);
        snprintf(internal, sizeof internal, "%s/.internal", lms);
        snprintf(server, sizeof server, "%s/http-server.json", internal);
        mkdir(home, 0700);
        mkdir(lms, 0700);
        mkdir(internal, 0700);
        atexit(cleanup);
        ready = 1;
    }
    if (size < 1) return 0;
    const int which = data[0] % 3;
    char valid[256];
    put(ptr, valid, (size_t)snprintf(valid, sizeof valid, "%s\n", lms));
    put(settings, valid, (size_t)snprintf(valid, sizeof valid, "{\"downloadsFolder\":\"%s/models\"}", lms));
    put(server, "{\"port\":41234}", 14);
    put(which == 0 ? ptr : which == 1 ? settings : server, data + 1, size - 1);
    sn_lms_dirs d;
    sn_err err;
    if (sn_lms_resolve_models_dir(NULL, home, &d, &err) == SN_OK) {
        char url[128], why[512];
        sn_lms_default_host(&d, url, sizeof url, why, sizeof why);
        volatile size_t sink = strlen(d.models) + strlen(d.why) + strlen(url) + strlen(why);
        (void)sink;
    }
    return 0;
}
