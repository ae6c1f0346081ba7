/* gotmpl_render.c - renders a Go chat template with sunny's C evaluator (templates/gotmpl.h) for
 * every conversation of a conversations.json, like tests/tools/render_go does with Go's own
 * text/template, so tests can compare the two byte for byte.
 *   gotmpl_render TEMPLATE CONVERSATIONS.json OUTDIR [SYSTEM]
 * Writes OUTDIR/NAME.txt, or OUTDIR/NAME.err with the error. */
#include "gotmpl.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    if (b) { b[n] = 0; if (len) *len = (size_t)n; }
    return b;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: gotmpl_render TEMPLATE CONVERSATIONS.json OUTDIR [SYSTEM]\n"); return 2; }
    size_t tl;
    char *ts = slurp(argv[1], &tl), *cs = slurp(argv[2], NULL);
    if (!ts || !cs) { fprintf(stderr, "gotmpl_render: cannot read input\n"); return 1; }
    cJSON *doc = cJSON_Parse(cs);
    const cJSON *convs = cJSON_GetObjectItemCaseSensitive(doc, "conversations");
    if (!cJSON_IsArray(convs)) { fprintf(stderr, "gotmpl_render: %s: no conversations\n", argv[2]); return 1; }
    mkdir(argv[3], 0755);
    sn_err err = {0};
    sn_gotmpl *t = NULL;
    sn_status pst = sn_gotmpl_parse(ts, tl, &t, &err); /* a parse failure is every case's error */
    const cJSON *c;
    cJSON_ArrayForEach(c, convs) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
        const cJSON *kw = cJSON_GetObjectItemCaseSensitive(c, "kwargs");
        const cJSON *tools = kw ? cJSON_GetObjectItemCaseSensitive(kw, "tools") : NULL;
        const cJSON *th = kw ? cJSON_GetObjectItemCaseSensitive(kw, "enable_thinking") : NULL;
        int think = th ? cJSON_IsTrue(th) : -1;
        char *out = NULL, path[4096];
        sn_status st = pst ? pst : sn_gotmpl_render_chat(t, cJSON_GetObjectItemCaseSensitive(c, "messages"), tools, think,
                                             argc > 4 ? argv[4] : NULL, &out, &err);
        snprintf(path, sizeof path, "%s/%s.%s", argv[3], nm->valuestring, st ? "err" : "txt");
        FILE *f = fopen(path, "wb");
        if (!f) { fprintf(stderr, "gotmpl_render: cannot write %s\n", path); return 1; }
        if (st) fprintf(f, "%s\n", err.msg);
        else fwrite(out, 1, strlen(out), f);
        fclose(f);
        free(out);
    }
    sn_gotmpl_free(t);
    cJSON_Delete(doc);
    free(ts);
    free(cs);
    return 0;
}
