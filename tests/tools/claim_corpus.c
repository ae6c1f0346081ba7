/* claim_corpus.c - runs sunny's claim decision (templates/prove.h: structural hint, then proof
 * by rendering) on every template of a corpus manifest and prints one tab-separated line each:
 *   FILE <tab> claimed|refused <tab> FAMILY-or-nearest <tab> SYSTEM-or-empty (JSON) <tab> reason
 * for tests/integration/test_template_claims.sh, which checks every claim with jinja2 and Go.
 *   claim_corpus MANIFEST.json
 *   claim_corpus --probes        prints the probe conversations (JSON) */
#include "detect.h"
#include "prove.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--probes")) { puts(sn_tmpl_probes_json()); return 0; }
    if (argc != 2) { fprintf(stderr, "usage: claim_corpus MANIFEST.json | --probes\n"); return 2; }
    char *ms = slurp(argv[1]);
    cJSON *man = ms ? cJSON_Parse(ms) : NULL;
    if (!man) { fprintf(stderr, "claim_corpus: cannot read %s\n", argv[1]); return 1; }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", argv[1]);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = 0; else strcpy(dir, ".");
    sn_tmpl_set *set = NULL;
    sn_err err = {0};
    if (sn_tmpl_load(&set, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(man, "templates")) {
        const char *file = cJSON_GetObjectItemCaseSensitive(e, "file")->valuestring;
        const cJSON *bos = cJSON_GetObjectItemCaseSensitive(e, "bos_token"), *eos = cJSON_GetObjectItemCaseSensitive(e, "eos_token");
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        char *j = slurp(path);
        if (!j) { fprintf(stderr, "cannot read %s\n", path); return 1; }
        sn_tmpl_detection d;
        sn_err de = {0};
        sn_tmpl_detect(set, j, &d, &de);
        sn_tmpl_model m = {.jinja = j,
                           .bos_token = cJSON_IsString(bos) && *bos->valuestring ? bos->valuestring : NULL,
                           .eos_token = cJSON_IsString(eos) && *eos->valuestring ? eos->valuestring : NULL,
                           .add_bos = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "add_bos"))};
        sn_tmpl_claim c;
        if (sn_tmpl_choose(set, &m, d.family ? d.family : d.nearest, &c, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
        cJSON *sys = cJSON_CreateString(c.proof.system ? c.proof.system : "");
        char *sj = cJSON_PrintUnformatted(sys);
        const sn_tmpl_family *shown = c.family ? c.family : (d.family ? d.family : d.nearest);
        printf("%s\t%s\t%s\t%s\t%u\t%s\n", file, c.family ? "claimed" : "refused", shown ? shown->name : "-",
               c.proof.system ? sj : "", c.family && c.proof.n_trimmed ? c.proof.trim_roles : 0u,
               c.family ? "" : c.proof.reason);
        free(sj);
        cJSON_Delete(sys);
        sn_tmpl_proof_free(&c.proof);
        sn_tmpl_detection_free(&d);
        free(j);
    }
    sn_tmpl_set_free(set);
    cJSON_Delete(man);
    free(ms);
    return 0;
}
