/* jinja_render.c - renders one Jinja template with sunny's interpreter (templates/jinja.h) for
 * each case of a JSON file, for the oracle test against Python jinja2
 * (tests/integration/test_jinja_oracle.sh) and for the fuzz regression corpus.
 *
 *   jinja_render TEMPLATE CASES.json [NOW]
 * CASES.json: [{"name": "...", "vars": {...}}, ...]. NOW: seconds since the epoch for
 * strftime_now. Prints one JSON object per line: {"name", "status": "ok"|"raised"|"unsupported",
 * "text" | "error"}. Exit 0 unless the files cannot be read. */
#include "jinja.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) { char *nb = realloc(b, cap *= 2); if (!nb) { free(b); b = NULL; } else b = nb; }
    }
    fclose(f);
    if (b) b[n] = 0;
    if (len) *len = n;
    return b;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: jinja_render TEMPLATE CASES.json [NOW]\n"); return 2; }
    size_t tl;
    char *tsrc = slurp(argv[1], &tl), *csrc = slurp(argv[2], NULL);
    if (!tsrc || !csrc) { fprintf(stderr, "jinja_render: cannot read %s\n", tsrc ? argv[2] : argv[1]); return 1; }
    cJSON *cases = cJSON_Parse(csrc);
    if (!cJSON_IsArray(cases)) { fprintf(stderr, "jinja_render: %s: not a JSON array\n", argv[2]); return 1; }
    sn_jinja_opts o = {.now = argc > 3 ? atoll(argv[3]) : -1};
    sn_err err = {0};
    sn_jinja *t = NULL;
    sn_status pst = sn_jinja_parse(tsrc, tl, &t, &err);
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        cJSON *r = cJSON_CreateObject();
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
        cJSON_AddStringToObject(r, "name", cJSON_IsString(nm) ? nm->valuestring : "?");
        sn_status st = pst;
        char *out = NULL;
        size_t ol = 0;
        sn_err e = err;
        if (!st) st = sn_jinja_render(t, cJSON_GetObjectItemCaseSensitive(c, "vars"), &o, &out, &ol, &e);
        if (st == SN_OK) {
            cJSON_AddStringToObject(r, "status", "ok");
            cJSON_AddStringToObject(r, "text", out);
        } else {
            cJSON_AddStringToObject(r, "status", st == SN_JINJA_RAISED ? "raised" : st == SN_EUNSUPPORTED ? "unsupported" : "error");
            cJSON_AddStringToObject(r, "error", e.msg);
        }
        free(out);
        char *s = cJSON_PrintUnformatted(r);
        puts(s);
        free(s);
        cJSON_Delete(r);
    }
    sn_jinja_free(t);
    cJSON_Delete(cases);
    free(tsrc);
    free(csrc);
    return 0;
}
