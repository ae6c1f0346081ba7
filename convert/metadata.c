/* metadata.c - the general.* keys, derived the way llama.cpp's gguf.Metadata derives them.
 *
 * Sources, first hit wins per field: --name; README.md YAML front matter (a small subset of YAML:
 * top-level "key: value" scalars, "key: [a, b]" and "- item" lists; anything nested is ignored);
 * config.json _name_or_path (only "org/name" or "name"); the model directory's name. Names such as
 * "Qwen2.5-7B-Instruct" are split into basename / size_label / finetune / version with the same
 * rules as gguf-py's get_model_id_components, so general.name and friends match the reference.
 * general.sampling.* come from generation_config.json. */
#include "convert.h"
#include "budget.h"
#include "gguf.h"
#include "mapfile.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small string helpers ---- */

static int ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

/* (v|iter)?\d+([.]\d+)* */
static int is_version(const char *s) {
    if (tolower((unsigned char)s[0]) == 'v') s++;
    else if (strncasecmp(s, "iter", 4) == 0) s += 4;
    if (!isdigit((unsigned char)*s)) return 0;
    while (*s) {
        while (isdigit((unsigned char)*s)) s++;
        if (!*s) return 1;
        if (*s != '.' || !isdigit((unsigned char)s[1])) return 0;
        s++;
    }
    return 1;
}

static int is_word_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* i?q\d(_\w)* | b?fp?(16|32) */
static int is_type(const char *s) {
    const char *p = s;
    if (tolower((unsigned char)*p) == 'i') p++;
    if (tolower((unsigned char)*p) == 'q' && isdigit((unsigned char)p[1])) {
        p += 2;
        /* (_\w)*: each "_" followed by one word char; "_" itself is a word char */
        while (*p) {
            if (*p != '_' || !p[1] || !is_word_char((unsigned char)p[1])) return 0;
            p += 2;
        }
        return 1;
    }
    p = s;
    if (tolower((unsigned char)*p) == 'b') p++;
    if (tolower((unsigned char)*p) != 'f') return 0;
    p++;
    if (tolower((unsigned char)*p) == 'p') p++;
    return strcmp(p, "16") == 0 || strcmp(p, "32") == 0;
}

/* \d+([._]\d+)?[KMBT]\d? (case-insensitive), whole string */
static int size_rest(const char *p) {
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
    if ((*p == '.' || *p == '_') && isdigit((unsigned char)p[1])) {
        p++;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (!*p || !strchr("kmbtKMBT", *p)) return 0;
    p++;
    if (isdigit((unsigned char)*p)) p++;
    return *p == 0;
}

/* (([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl) */
static int is_size(const char *s) {
    static const char *const words[] = {"small", "mini", "medium", "large", "xl", "xxl"};
    for (size_t i = 0; i < 6; i++)
        if (ieq(s, words[i])) return 1;
    if (size_rest(s)) return 1;
    if (tolower((unsigned char)*s) == 'a' && size_rest(s + 1)) return 1;
    const char *p = s;
    while (isdigit((unsigned char)*p)) p++;
    if (p > s && tolower((unsigned char)*p) == 'x' && size_rest(p + 1)) return 1;
    return 0;
}

static int is_finetune_word(const char *s) {
    return ieq(s, "chat") || ieq(s, "instruct") || ieq(s, "vision") || ieq(s, "lora");
}

/* Python str.islower(): at least one cased char, none upper. */
static int py_islower(const char *s) {
    int cased = 0;
    for (; *s; s++) {
        if (isupper((unsigned char)*s)) return 0;
        if (islower((unsigned char)*s)) cased = 1;
    }
    return cased;
}

/* Python str.title() on ASCII. */
static void py_title(char *s) {
    int prev_letter = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalpha(c)) {
            *s = (char)(prev_letter ? tolower(c) : toupper(c));
            prev_letter = 1;
        } else prev_letter = 0;
    }
}

/* Metadata.id_to_title */
static void id_to_title(const char *in, char *out, size_t n) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", in);
    for (char *p = buf; *p; p++)
        if (*p == '-') *p = ' ';
    size_t k = 0;
    out[0] = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t\n\r\f\v", &save); w; w = strtok_r(NULL, " \t\n\r\f\v", &save)) {
        /* title-case lowercase words unless they match ^(v\d+(?:\.\d+)*|\d.*)$ */
        int v_version = w[0] == 'v' && isdigit((unsigned char)w[1]) && is_version(w);
        int keep = !py_islower(w) || v_version || isdigit((unsigned char)w[0]);
        if (!keep) py_title(w);
        k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s%s", k ? " " : "", w);
    }
}

enum { T_BASENAME = 1, T_SIZE = 2, T_FINETUNE = 4, T_VERSION = 8, T_TYPE = 16 };

void sn_metadata_id_components(const char *model_id, int64_t total_params, sn_model_id_parts *o) {
    memset(o, 0, sizeof(*o));
    if (!model_id) return;
    if (strchr(model_id, ' ')) {
        snprintf(o->name, sizeof o->name, "%s", model_id);
        return;
    }
    const char *full = model_id;
    const char *slash = strchr(model_id, '/');
    if (slash) {
        size_t ol = (size_t)(slash - model_id);
        if (ol > 0 && model_id[0] != '.') snprintf(o->org, sizeof o->org, "%.*s", (int)ol, model_id);
        full = slash + 1;
    }
    snprintf(o->name, sizeof o->name, "%s", full);

    char buf[256];
    snprintf(buf, sizeof buf, "%s", full);
    char *parts[64];
    int types[64];
    int np = 0;
    char *save = NULL;
    for (char *p = buf, *q; np < 64; p = q + 1) {
        q = strchr(p, '-');
        if (q) *q = 0;
        if (*p) { parts[np] = p; types[np] = 0; np++; }
        if (!q) break;
    }
    (void)save;
    char partbuf[64][64];
    for (int i = 0; i < np; i++) {
        char *part = parts[i];
        if (is_version(part)) types[i] |= T_VERSION;
        else if (is_type(part)) {
            for (char *c = part; *c; c++) *c = (char)toupper((unsigned char)*c);
            types[i] |= T_TYPE;
        } else if (i > 0 && is_size(part)) {
            char *s = partbuf[i];
            snprintf(s, sizeof partbuf[i], "%s", part);
            for (char *c = s; *c; c++)
                if (*c == '_') *c = '.';
            size_t L = strlen(s);
            if (L >= 2 && isdigit((unsigned char)s[L - 1])) { /* "1B5" -> "1.5B" */
                char last = s[L - 1], prev = s[L - 2];
                s[L - 2] = '.';
                s[L - 1] = last;
                s[L] = prev;
                s[L + 1] = 0;
                L++;
            }
            if (L > 1 && isdigit((unsigned char)s[L - 2]) && strchr("kmbt", s[L - 1]))
                s[L - 1] = (char)toupper((unsigned char)s[L - 1]);
            if (total_params != 0 && L >= 1) {
                char num[64];
                snprintf(num, sizeof num, "%.*s", (int)(L - 1), s);
                char *end;
                double v = strtod(num, &end);
                const char *units = " KMBT";
                const char *u = strchr(units, s[L - 1]);
                if (num[0] && *end == 0 && !isspace((unsigned char)num[0])) {
                    double label = v * pow(1000.0, u && s[L - 1] ? (double)(u - units) : -1.0);
                    int64_t tp = total_params;
                    int64_t atp = tp < 0 ? -tp : tp;
                    if ((tp < 0 && label < (double)(atp / 8)) ||
                        (tp > 0 && fabs(label - (double)tp) > (double)(7 * tp / 8))) {
                        types[i] |= T_FINETUNE;
                        s[L - 1] = (char)tolower((unsigned char)s[L - 1]);
                    }
                }
            }
            if (types[i] == 0) types[i] |= T_SIZE;
            parts[i] = s;
        } else if (i > 0 && is_finetune_word(part)) {
            if (total_params < 0 && ieq(part, "lora")) types[i] |= T_TYPE;
            else types[i] |= T_FINETUNE;
        }
    }
    /* size labels with digits make all-letter size labels ("small") ordinary */
    int digit_size = 0;
    for (int i = 0; i < np; i++)
        if (types[i] & T_SIZE)
            for (const char *c = parts[i]; *c; c++)
                if (isdigit((unsigned char)*c)) digit_size = 1;
    if (digit_size)
        for (int i = 0; i < np; i++)
            if (types[i] & T_SIZE) {
                int alpha = 1;
                for (const char *c = parts[i]; *c; c++)
                    if (!isalpha((unsigned char)*c)) alpha = 0;
                if (alpha) types[i] &= ~T_SIZE;
            }
    int at_start = 1;
    for (int i = 0; i < np; i++) {
        if (at_start && ((types[i] == 0 && isalpha((unsigned char)parts[i][0])) || (types[i] & T_VERSION)))
            types[i] |= T_BASENAME;
        else {
            at_start = 0;
            if (types[i] == 0) types[i] |= T_FINETUNE;
        }
    }
    for (int i = np - 1; i >= 0; i--) {
        if ((types[i] & T_BASENAME) && (types[i] & ~T_BASENAME)) types[i] &= ~T_BASENAME;
        else break;
    }
    size_t kb = 0, ks = 0, kf = 0, kv = 0;
    for (int i = 0; i < np; i++) {
        if (types[i] & T_BASENAME)
            kb += (size_t)snprintf(o->basename + kb, kb < sizeof o->basename ? sizeof o->basename - kb : 0,
                                   "%s%s", kb ? "-" : "", parts[i]);
        if (types[i] & T_SIZE) {
            int dup = 0; /* dict.fromkeys: unique, first occurrence order */
            for (int j = 0; j < i; j++)
                if ((types[j] & T_SIZE) && strcmp(parts[j], parts[i]) == 0) dup = 1;
            if (!dup)
                ks += (size_t)snprintf(o->size_label + ks, ks < sizeof o->size_label ? sizeof o->size_label - ks : 0,
                                       "%s%s", ks ? "-" : "", parts[i]);
        }
        if (types[i] & T_FINETUNE)
            kf += (size_t)snprintf(o->finetune + kf, kf < sizeof o->finetune ? sizeof o->finetune - kf : 0,
                                   "%s%s", kf ? "-" : "", parts[i]);
        if ((types[i] & T_VERSION) && !(types[i] & T_BASENAME))
            kv += (size_t)snprintf(o->version + kv, kv < sizeof o->version ? sizeof o->version - kv : 0,
                                   "%s%s", kv ? "-" : "", parts[i]);
    }
    if (!o->size_label[0] && !o->finetune[0] && !o->version[0]) o->basename[0] = 0;
}

void sn_metadata_size_label(uint64_t n, char *out, size_t out_size) {
    double x;
    char suf;
    if ((double)n > 1e12) { x = (double)n * 1e-12; suf = 'T'; }
    else if ((double)n > 1e9) { x = (double)n * 1e-9; suf = 'B'; }
    else if ((double)n > 1e6) { x = (double)n * 1e-6; suf = 'M'; }
    else { x = (double)n * 1e-3; suf = 'K'; }
    double r = nearbyint(x); /* Python round(): half to even */
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", r);
    const char *d = digits;
    while (*d == '0') d++;
    int fix = 2 - (int)strlen(d);
    if (fix < 0) fix = 0;
    snprintf(out, out_size, "%.*f%c", fix, x, suf);
}

/* ---- README.md front matter (tiny YAML subset) ---- */

#define MAX_LIST 64
typedef struct {
    char *key;
    char *val;              /* scalar or NULL */
    char *list[MAX_LIST];   /* list items */
    int n_list, is_list;
} yaml_kv;

typedef struct {
    yaml_kv kv[128];
    int n;
} yaml_doc;

static void yaml_free(yaml_doc *d) {
    for (int i = 0; i < d->n; i++) {
        free(d->kv[i].key);
        free(d->kv[i].val);
        for (int j = 0; j < d->kv[i].n_list; j++) free(d->kv[i].list[j]);
    }
    d->n = 0;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t L = strlen(s);
    while (L && (s[L - 1] == ' ' || s[L - 1] == '\t' || s[L - 1] == '\r')) s[--L] = 0;
    return s;
}

static char *unquote_dup(char *s) {
    s = trim(s);
    size_t L = strlen(s);
    if (L >= 2 && ((s[0] == '"' && s[L - 1] == '"') || (s[0] == '\'' && s[L - 1] == '\''))) {
        s[L - 1] = 0;
        s++;
    }
    return strdup(s);
}

static const yaml_kv *yaml_get(const yaml_doc *d, const char *key) {
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->kv[i].key, key) == 0) return &d->kv[i];
    return NULL;
}

static void yaml_parse(const char *text, yaml_doc *d) {
    memset(d, 0, sizeof(*d));
    if (strncmp(text, "---", 3) != 0 || (text[3] != '\n' && text[3] != '\r')) return;
    const char *p = strchr(text, '\n');
    yaml_kv *cur = NULL;
    while (p && *++p) {
        const char *e = strchr(p, '\n');
        size_t L = e ? (size_t)(e - p) : strlen(p);
        char line[2048];
        if (L >= sizeof line) L = sizeof line - 1;
        memcpy(line, p, L);
        line[L] = 0;
        if (L && line[L - 1] == '\r') line[--L] = 0;
        p = e;
        if (strcmp(line, "---") == 0) break;
        char *t = trim(line);
        if (!*t || *t == '#') continue;
        if (t[0] == '-' && (t[1] == ' ' || t[1] == 0)) {
            if (cur && cur->is_list && cur->n_list < MAX_LIST) {
                char *it = unquote_dup(t + 1);
                if (it) cur->list[cur->n_list++] = it;
            }
            continue;
        }
        if (line[0] == ' ' || line[0] == '\t') { cur = NULL; continue; } /* nested: ignored */
        char *colon = strchr(line, ':');
        if (!colon || d->n >= 128) { cur = NULL; continue; }
        *colon = 0;
        yaml_kv *kv = &d->kv[d->n];
        memset(kv, 0, sizeof(*kv));
        kv->key = strdup(trim(line));
        if (!kv->key) continue;
        d->n++;
        char *v = trim(colon + 1);
        cur = NULL;
        if (!*v) {
            kv->is_list = 1; /* block list (or nested map: then no "- " items follow at this level) */
            cur = kv;
        } else if (*v == '[') {
            kv->is_list = 1;
            char *endb = strrchr(v, ']');
            if (endb) *endb = 0;
            char *save = NULL;
            for (char *it = strtok_r(v + 1, ",", &save); it && kv->n_list < MAX_LIST; it = strtok_r(NULL, ",", &save)) {
                char *x = unquote_dup(it);
                if (x && *x) kv->list[kv->n_list++] = x;
                else free(x);
            }
        } else {
            kv->val = unquote_dup(v);
        }
    }
}

/* ---- the metadata record ---- */

typedef struct {
    char *name, *author, *version, *organization, *finetune, *basename, *description, *quantized_by;
    char *size_label, *license, *license_name, *license_link;
    char *source_url, *source_doi, *source_uuid, *source_repo_url;
    char *tags[MAX_LIST * 2];
    int n_tags, has_tags;
    char *langs[MAX_LIST * 2];
    int n_langs, has_langs;
} meta_t;

static void set_if_unset(char **field, const char *v) {
    if (!*field && v) *field = strdup(v);
}

static void card_scalar(meta_t *m, const yaml_doc *d, char **field, const char *key) {
    const yaml_kv *kv = yaml_get(d, key);
    if (kv && kv->val) set_if_unset(field, kv->val);
}

static void card_list(const yaml_doc *d, const char *key, char **arr, int *n, int *has) {
    const yaml_kv *kv = yaml_get(d, key);
    if (!kv) return;
    *has = 1;
    if (kv->val) {
        if (*n < MAX_LIST * 2) arr[(*n)++] = strdup(kv->val);
    } else
        for (int i = 0; i < kv->n_list && *n < MAX_LIST * 2; i++) arr[(*n)++] = strdup(kv->list[i]);
}

static void apply_id(meta_t *m, const char *model_id, int64_t total) {
    sn_model_id_parts c;
    sn_metadata_id_components(model_id, total, &c);
    char t[512];
    if (c.name[0]) {
        id_to_title(c.name, t, sizeof t);
        set_if_unset(&m->name, t);
    }
    if (c.org[0]) {
        id_to_title(c.org, t, sizeof t);
        set_if_unset(&m->organization, t);
    }
    if (c.basename[0]) set_if_unset(&m->basename, c.basename);
    if (c.finetune[0]) set_if_unset(&m->finetune, c.finetune);
    if (c.version[0]) set_if_unset(&m->version, c.version);
    if (c.size_label[0]) set_if_unset(&m->size_label, c.size_label);
}

/* DIR/NAME as a string, or NULL when it is missing, unreadable or over MAX bytes (optional files) */
static char *slurp(const char *dir, const char *name, size_t max) {
    size_t a = strlen(dir), b = strlen(name);
    char *path = malloc(a + b + 2), *buf = NULL;
    if (!path) return NULL;
    snprintf(path, a + b + 2, "%s/%s", dir, name);
    sn_read_file(path, max, NULL, &buf, NULL, NULL);
    free(path);
    return buf;
}

static sn_status put_str(sn_gguf_writer *w, const char *key, const char *v, sn_err *err) {
    if (!v || !*v) return SN_OK; /* the reference writer skips empty strings */
    sn_status st = sn_gguf_writer_set_str(w, key, v);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}

static sn_status write_sampling(const char *dir, sn_gguf_writer *w, sn_err *err) {
    char *txt = slurp(dir, "generation_config.json", SN_BUDGET_TEXT_FILE);
    if (!txt) return SN_OK;
    cJSON *g = cJSON_Parse(txt);
    free(txt);
    if (!cJSON_IsObject(g)) { cJSON_Delete(g); return SN_OK; } /* reference ignores a bad file */
    static const struct { const char *src, *alt, *key; int kind; } k[] = {
        {"sequence", NULL, "general.sampling.sequence", 's'},
        {"top_k", NULL, "general.sampling.top_k", 'i'},
        {"top_p", NULL, "general.sampling.top_p", 'f'},
        {"min_p", NULL, "general.sampling.min_p", 'f'},
        {"xtc_probability", NULL, "general.sampling.xtc_probability", 'f'},
        {"xtc_threshold", NULL, "general.sampling.xtc_threshold", 'f'},
        {"temperature", NULL, "general.sampling.temp", 'f'},
        {"penalty_last_n", NULL, "general.sampling.penalty_last_n", 'i'},
        {"penalty_repeat", "repetition_penalty", "general.sampling.penalty_repeat", 'f'},
        {"mirostat", NULL, "general.sampling.mirostat", 'i'},
        {"mirostat_tau", NULL, "general.sampling.mirostat_tau", 'f'},
        {"mirostat_eta", NULL, "general.sampling.mirostat_eta", 'f'},
    };
    sn_status st = SN_OK;
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]) && st == SN_OK; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, k[i].src);
        if (!v && k[i].alt) v = cJSON_GetObjectItemCaseSensitive(g, k[i].alt);
        if (!v || cJSON_IsNull(v)) continue;
        if (k[i].kind == 's' && cJSON_IsString(v)) st = put_str(w, k[i].key, v->valuestring, err);
        else if (k[i].kind == 'i' && cJSON_IsNumber(v)) st = sn_gguf_writer_set_i32(w, k[i].key, (int32_t)v->valuedouble);
        else if (k[i].kind == 'f' && cJSON_IsNumber(v)) st = sn_gguf_writer_set_f32(w, k[i].key, (float)v->valuedouble);
        else if (k[i].kind != 's' && cJSON_IsBool(v))
            st = k[i].kind == 'i' ? sn_gguf_writer_set_i32(w, k[i].key, cJSON_IsTrue(v))
                                  : sn_gguf_writer_set_f32(w, k[i].key, (float)cJSON_IsTrue(v));
        if (st != SN_OK && err && !err->msg[0]) sn_err_set(err, st, "cannot set %s", k[i].key);
    }
    cJSON_Delete(g);
    return st;
}

static const char *basename_of(const char *dir, char *buf, size_t n) {
    snprintf(buf, n, "%s", dir);
    size_t L = strlen(buf);
    while (L > 1 && buf[L - 1] == '/') buf[--L] = 0;
    const char *s = strrchr(buf, '/');
    return s ? s + 1 : buf;
}

static sn_status write_base_list(sn_gguf_writer *w, const yaml_doc *d, const char *const *keys,
                                 const char *prefix, int64_t total, sn_err *err) {
    const yaml_kv *kv = NULL;
    for (; *keys && !kv; keys++) kv = yaml_get(d, *keys);
    if (!kv) return SN_OK;
    const char *items[MAX_LIST];
    int n = 0;
    if (kv->val) items[n++] = kv->val;
    else
        for (int i = 0; i < kv->n_list; i++) items[n++] = kv->list[i];
    char key[160];
    snprintf(key, sizeof key, "general.%s.count", prefix);
    sn_status st = sn_gguf_writer_set_u32(w, key, (uint32_t)n);
    if (st != SN_OK) return sn_err_set(err, st, "cannot set %s", key);
    for (int i = 0; i < n && st == SN_OK; i++) {
        const char *id = items[i];
        char name[512] = "", org[512] = "", repo[700] = "", version[64] = "";
        if (strncmp(id, "http://", 7) == 0 || strncmp(id, "https://", 8) == 0 || strncmp(id, "ssh://", 6) == 0) {
            snprintf(repo, sizeof repo, "%s", id);
            const char *h = strstr(id, "huggingface.co/");
            if (h && strncmp(id, "ssh://", 6) != 0) {
                const char *rest = h + strlen("huggingface.co/");
                const char *sl = strchr(rest, '/');
                if (sl && sl > rest && sl[1] && !strchr(sl + 1, '/')) {
                    sn_model_id_parts c;
                    sn_metadata_id_components(rest, total, &c);
                    if (c.name[0]) id_to_title(c.name, name, sizeof name);
                    if (c.org[0]) id_to_title(c.org, org, sizeof org);
                    snprintf(version, sizeof version, "%s", c.version);
                }
            }
        } else {
            sn_model_id_parts c;
            sn_metadata_id_components(id, total, &c);
            if (c.name[0]) id_to_title(c.name, name, sizeof name);
            if (c.org[0]) id_to_title(c.org, org, sizeof org);
            snprintf(version, sizeof version, "%s", c.version);
            if (c.org[0] && c.name[0]) snprintf(repo, sizeof repo, "https://huggingface.co/%s/%s", c.org, c.name);
        }
        struct { const char *f; const char *v; } fields[] = {
            {"name", name}, {"version", version}, {"organization", org}, {"repo_url", repo}};
        for (size_t f = 0; f < 4 && st == SN_OK; f++) {
            snprintf(key, sizeof key, "general.%s.%d.%s", prefix, i, fields[f].f);
            st = put_str(w, key, fields[f].v, err);
        }
    }
    return st;
}

/* gguf.naming_convention without the encoding and kind: name (basename, else name; spaces and '/'
 * as '-'), then -size_label, -finetune, -version (spaces as '-'). */
static void naming_stem(const meta_t *m, char *out, size_t cap) {
    const char *parts[4] = {m->basename ? m->basename : m->name, m->size_label, m->finetune, m->version};
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < 4; i++) {
        const char *v = parts[i];
        if (!v) {
            if (i == 0) v = "ggml-model";
            else continue;
        }
        if (i && k + 1 < cap) out[k++] = '-';
        const char *e = v + strlen(v);
        if (i != 1) { /* strip(); size_label goes in as it is */
            while (*v && isspace((unsigned char)*v)) v++;
            while (e > v && isspace((unsigned char)e[-1])) e--;
        }
        for (; v < e && k + 1 < cap; v++) out[k++] = (*v == ' ' || (i == 0 && *v == '/')) ? '-' : *v;
        out[k] = 0;
    }
}

sn_status sn_metadata_write(const char *model_dir, const sn_hf_config *cfg, const char *name_override,
                            const sn_param_count *pc, sn_gguf_writer *w, char *stem, size_t stem_cap, sn_err *err) {
    uint64_t total_params = pc->total;
    meta_t m;
    memset(&m, 0, sizeof m);
    yaml_doc card;
    memset(&card, 0, sizeof card);
    int64_t total = total_params > INT64_MAX ? INT64_MAX : (int64_t)total_params;
    char *readme = slurp(model_dir, "README.md", SN_BUDGET_TEXT_FILE);
    if (readme && !sn_gguf_utf8_ok(readme, strlen(readme))) { /* its text would go into GGUF strings */
        free(readme); /* dropped: the names come from config.json or the folder, as without a card */
        readme = NULL;
    }
    if (readme) {
        yaml_parse(readme, &card);
        free(readme);
    }
    /* Metadata.apply_metadata_heuristic: model card first */
    static const char *const direct[][2] = {
        {"name", "name"}, {"author", "author"}, {"version", "version"}, {"organization", "organization"},
        {"description", "description"}, {"finetune", "finetune"}, {"basename", "basename"},
        {"size_label", "size_label"}, {"source_url", "url"}, {"source_doi", "doi"}, {"source_uuid", "uuid"},
        {"source_repo_url", "repo_url"},
        {"name", "model_name"}, {"author", "model_author"}, {"version", "model_version"},
        {"organization", "model_organization"}, {"description", "model_description"},
        {"finetune", "model_finetune"}, {"basename", "model_basename"}, {"size_label", "model_size_label"},
        {"source_url", "model_url"}, {"source_doi", "model_doi"}, {"source_uuid", "model_uuid"},
        {"source_repo_url", "model_repo_url"},
        {"name", "model_name"}, {"author", "model_creator"}, {"basename", "model_type"},
        {"license", "license"}, {"license_name", "license_name"}, {"license_link", "license_link"},
    };
    for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++) {
        const char *f = direct[i][0];
        char **field = strcmp(f, "name") == 0 ? &m.name : strcmp(f, "author") == 0 ? &m.author
                     : strcmp(f, "version") == 0 ? &m.version : strcmp(f, "organization") == 0 ? &m.organization
                     : strcmp(f, "description") == 0 ? &m.description : strcmp(f, "finetune") == 0 ? &m.finetune
                     : strcmp(f, "basename") == 0 ? &m.basename : strcmp(f, "size_label") == 0 ? &m.size_label
                     : strcmp(f, "source_url") == 0 ? &m.source_url : strcmp(f, "source_doi") == 0 ? &m.source_doi
                     : strcmp(f, "source_uuid") == 0 ? &m.source_uuid : strcmp(f, "source_repo_url") == 0 ? &m.source_repo_url
                     : strcmp(f, "license") == 0 ? &m.license : strcmp(f, "license_name") == 0 ? &m.license_name
                     : &m.license_link;
        card_scalar(&m, &card, field, direct[i][1]);
        if (strcmp(f, "license") == 0 && !m.license) { /* a list of licenses is joined with "," */
            const yaml_kv *kv = yaml_get(&card, "license");
            if (kv && kv->n_list) {
                char buf[1024];
                size_t k = 0;
                buf[0] = 0;
                for (int j = 0; j < kv->n_list; j++)
                    k += (size_t)snprintf(buf + k, k < sizeof buf ? sizeof buf - k : 0, "%s%s", j ? "," : "", kv->list[j]);
                m.license = strdup(buf);
            }
        }
    }
    card_list(&card, "tags", m.tags, &m.n_tags, &m.has_tags);
    card_list(&card, "pipeline_tag", m.tags, &m.n_tags, &m.has_tags);
    card_list(&card, "languages", m.langs, &m.n_langs, &m.has_langs);
    card_list(&card, "language", m.langs, &m.n_langs, &m.has_langs);
    /* then config.json _name_or_path ("org/name" at most), then the directory name */
    if (cfg && cfg->name_or_path) {
        int slashes = 0;
        for (const char *c = cfg->name_or_path; *c; c++) slashes += *c == '/';
        if (slashes <= 1) apply_id(&m, cfg->name_or_path, total);
    }
    char dbuf[1024];
    apply_id(&m, basename_of(model_dir, dbuf, sizeof dbuf), total);
    if (name_override) {
        free(m.name);
        m.name = strdup(name_override);
    }
    if (!m.name) m.name = strdup(basename_of(model_dir, dbuf, sizeof dbuf));
    if (!m.size_label && total > 0) {
        char sl[64];
        /* gguf.size_label: "{experts}x{shared + one expert's params}" for MoE */
        size_t k = pc->expert_count ? (size_t)snprintf(sl, sizeof sl, "%llux", (unsigned long long)pc->expert_count) : 0;
        sn_metadata_size_label(pc->expert_count ? pc->shared + pc->per_expert : (uint64_t)total, sl + k, sizeof sl - k);
        m.size_label = strdup(sl);
    }

    if (stem && stem_cap) naming_stem(&m, stem, stem_cap);
    sn_status st = write_sampling(model_dir, w, err);
    struct { const char *key; const char *v; } seq[] = {
        {"general.name", m.name}, {"general.author", m.author}, {"general.version", m.version},
        {"general.organization", m.organization}, {"general.finetune", m.finetune},
        {"general.basename", m.basename}, {"general.description", m.description},
        {"general.quantized_by", m.quantized_by}, {"general.size_label", m.size_label},
        {"general.license", m.license}, {"general.license.name", m.license_name},
        {"general.license.link", m.license_link},
        {"general.source.url", m.source_url}, {"general.source.doi", m.source_doi},
        {"general.source.uuid", m.source_uuid}, {"general.source.repo_url", m.source_repo_url},
    };
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]) && st == SN_OK; i++) st = put_str(w, seq[i].key, seq[i].v, err);
    static const char *const bm_keys[] = {"base_model", "base_models", "base_model_sources", NULL};
    static const char *const ds_keys[] = {"datasets", "dataset", "dataset_sources", NULL};
    if (st == SN_OK) st = write_base_list(w, &card, bm_keys, "base_model", total, err);
    if (st == SN_OK) st = write_base_list(w, &card, ds_keys, "dataset", total, err);
    if (st == SN_OK && m.has_tags && m.n_tags) {
        st = sn_gguf_writer_set_arr_str(w, "general.tags", (const char *const *)m.tags, NULL, (uint64_t)m.n_tags);
        if (st != SN_OK) sn_err_set(err, st, "cannot set general.tags");
    }
    if (st == SN_OK && m.has_langs && m.n_langs) {
        st = sn_gguf_writer_set_arr_str(w, "general.languages", (const char *const *)m.langs, NULL, (uint64_t)m.n_langs);
        if (st != SN_OK) sn_err_set(err, st, "cannot set general.languages");
    }

    char **all[] = {&m.name, &m.author, &m.version, &m.organization, &m.finetune, &m.basename, &m.description,
                    &m.quantized_by, &m.size_label, &m.license, &m.license_name, &m.license_link,
                    &m.source_url, &m.source_doi, &m.source_uuid, &m.source_repo_url};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) free(*all[i]);
    for (int i = 0; i < m.n_tags; i++) free(m.tags[i]);
    for (int i = 0; i < m.n_langs; i++) free(m.langs[i]);
    yaml_free(&card);
    return st;
}
