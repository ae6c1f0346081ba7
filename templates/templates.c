/* templates.c - loads the embedded chat-template families (.json + .gotmpl in templates/data/).
 *
 * The data is generated into the library by templates/embed.cmake; this file only turns the JSON
 * half into sn_tmpl_family records and pairs each with its Go template. A malformed embedded
 * file is a build defect, but it is still reported through sn_err, naming the file and field. */
#include "templates.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct sn_tmpl_set {
    sn_tmpl_family *fam;
    size_t n;
};

const char *sn_tmpl_embedded(const char *name, size_t *len) {
    for (const struct sn_embedded_file *f = sn_templates_files; f->name; f++) {
        if (strcmp(f->name, name) == 0) {
            if (len) *len = f->len;
            return f->data;
        }
    }
    return NULL;
}

static void free_strv(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void family_free(sn_tmpl_family *f) {
    free(f->name);
    free(f->description);
    free_strv(f->stop, f->n_stop);
    free(f->params_json);
    free_strv(f->require, f->n_require);
    free_strv(f->forbid, f->n_forbid);
    free_strv(f->bos, f->n_bos);
    free_strv(f->system, f->n_system);
    free_strv(f->system_any, f->n_system_any);
}

/* Copies the string array FIELD of OBJ (absent = empty). */
static sn_status get_strv(const cJSON *obj, const char *file, const char *field, char ***out,
                          size_t *n, sn_err *err) {
    *out = NULL;
    *n = 0;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!a) return SN_OK;
    if (!cJSON_IsArray(a))
        return sn_err_set(err, SN_EFORMAT, "%s: field \"%s\" is not an array", file, field);
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    char **v = calloc(cnt ? cnt : 1, sizeof *v);
    if (!v) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", file);
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsString(e) || !(v[i] = strdup(e->valuestring))) {
            free_strv(v, i);
            return sn_err_set(err, cJSON_IsString(e) ? SN_ENOMEM : SN_EFORMAT,
                              "%s: field \"%s\"[%zu] is not a string", file, field, i);
        }
        i++;
    }
    *out = v;
    *n = cnt;
    return SN_OK;
}

static sn_status parse_family(const struct sn_embedded_file *jf, sn_tmpl_family *f, sn_err *err) {
    memset(f, 0, sizeof *f);
    cJSON *root = cJSON_ParseWithLength(jf->data, jf->len);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return sn_err_set(err, SN_EFORMAT, "embedded %s: not a JSON object", jf->name);
    }
    sn_status st = SN_OK;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "family");
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    const cJSON *detect = cJSON_GetObjectItemCaseSensitive(root, "detect");
    char gotmpl_name[256];
    if (!cJSON_IsString(name) || !cJSON_IsObject(detect)) {
        st = sn_err_set(err, SN_EFORMAT, "embedded %s: needs string \"family\" and object \"detect\"",
                        jf->name);
        goto out;
    }
    if (snprintf(gotmpl_name, sizeof gotmpl_name, "%s.gotmpl", name->valuestring) >=
            (int)sizeof gotmpl_name ||
        !(f->gotmpl = sn_tmpl_embedded(gotmpl_name, NULL))) {
        st = sn_err_set(err, SN_EFORMAT, "embedded %s: no template %s.gotmpl", jf->name,
                        name->valuestring);
        goto out;
    }
    f->name = strdup(name->valuestring);
    f->description = strdup(cJSON_IsString(desc) ? desc->valuestring : "");
    f->params_json = params ? cJSON_PrintUnformatted(params) : strdup("{}");
    f->add_bos = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "add_bos"));
    f->raw = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(detect, "raw"));
    if (!f->name || !f->description || !f->params_json) {
        st = sn_err_set(err, SN_ENOMEM, "embedded %s: out of memory", jf->name);
        goto out;
    }
    if ((st = get_strv(root, jf->name, "stop", &f->stop, &f->n_stop, err)) ||
        (st = get_strv(detect, jf->name, "require", &f->require, &f->n_require, err)) ||
        (st = get_strv(detect, jf->name, "forbid", &f->forbid, &f->n_forbid, err)) ||
        (st = get_strv(detect, jf->name, "bos", &f->bos, &f->n_bos, err)) ||
        (st = get_strv(detect, jf->name, "system", &f->system, &f->n_system, err)) ||
        (st = get_strv(detect, jf->name, "system_any", &f->system_any, &f->n_system_any, err)))
        goto out;
out:
    cJSON_Delete(root);
    if (st) family_free(f);
    return st;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const sn_tmpl_family *)a)->name, ((const sn_tmpl_family *)b)->name);
}

sn_status sn_tmpl_load(sn_tmpl_set **out, sn_err *err) {
    *out = NULL;
    size_t cap = 0;
    for (const struct sn_embedded_file *f = sn_templates_files; f->name; f++) cap++;
    sn_tmpl_set *s = calloc(1, sizeof *s);
    if (!s || !(s->fam = calloc(cap ? cap : 1, sizeof *s->fam))) {
        free(s);
        return sn_err_set(err, SN_ENOMEM, "templates: out of memory");
    }
    for (const struct sn_embedded_file *f = sn_templates_files; f->name; f++) {
        size_t l = strlen(f->name);
        if (l < 5 || strcmp(f->name + l - 5, ".json") != 0) continue;
        sn_status st = parse_family(f, &s->fam[s->n], err);
        if (st) {
            sn_tmpl_set_free(s);
            return st;
        }
        s->n++;
    }
    qsort(s->fam, s->n, sizeof *s->fam, by_name);
    *out = s;
    return SN_OK;
}

void sn_tmpl_set_free(sn_tmpl_set *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) family_free(&s->fam[i]);
    free(s->fam);
    free(s);
}

size_t sn_tmpl_count(const sn_tmpl_set *s) { return s->n; }

const sn_tmpl_family *sn_tmpl_at(const sn_tmpl_set *s, size_t i) {
    return i < s->n ? &s->fam[i] : NULL;
}

const sn_tmpl_family *sn_tmpl_find(const sn_tmpl_set *s, const char *name) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->fam[i].name, name) == 0) return &s->fam[i];
    return NULL;
}
