/* modelfile_write.c - writes Modelfiles with sunny's writer (sn_ollama_modelfile) for test values.
 * usage: modelfile_write VALUES.json OUTDIR
 * VALUES.json is an array of strings; for value i it writes OUTDIR/i.Modelfile with the value as
 * TEMPLATE, SYSTEM, PARAMETER stop and LICENSE, or OUTDIR/i.err with the writer's error. */
#include "ollama.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = l >= 0 ? malloc((size_t)l + 1) : NULL;
    if (b && fread(b, 1, (size_t)l, f) != (size_t)l) { free(b); b = NULL; }
    fclose(f);
    if (b) { b[l] = 0; *n = (size_t)l; }
    return b;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: modelfile_write VALUES.json OUTDIR\n"); return 2; }
    size_t n;
    char *txt = slurp(argv[1], &n);
    cJSON *vals = txt ? cJSON_ParseWithLength(txt, n) : NULL;
    if (!cJSON_IsArray(vals)) { fprintf(stderr, "%s: not a JSON array\n", argv[1]); return 1; }
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, vals) {
        char path[4096];
        cJSON *p = cJSON_CreateObject();
        sn_err err = {0};
        sn_ollama_param_add(p, "stop", v->valuestring, &err);
        sn_ollama_model_spec m = {.name = "t", .gguf_path = "./m.gguf", .template_text = v->valuestring,
                                  .system = v->valuestring, .parameters = p, .license = v->valuestring};
        char *mf = sn_ollama_modelfile(&m, "./m.gguf", &err);
        snprintf(path, sizeof path, "%s/%d.%s", argv[2], i, mf ? "Modelfile" : "err");
        FILE *f = fopen(path, "wb");
        if (!f) { perror(path); return 1; }
        fputs(mf ? mf : err.msg, f);
        fclose(f);
        free(mf);
        cJSON_Delete(p);
        i++;
    }
    cJSON_Delete(vals);
    free(txt);
    return 0;
}
