/* outname.c - the output file name when the user gave none, a folder, or a templated name: what
 * convert_hf_to_gguf.py does (default: the model folder; a folder gets
 * gguf.naming_convention(...).gguf; a file name goes through gguf.fill_templated_filename) and, for
 * a GGUF input, llama-quantize's [input folder]/ggml-model-FTYPE.gguf. */
#include "convert.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int is_dir(const char *p) {
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int sn_convert_out_needs_name(const char *spec) {
    if (!spec || is_dir(spec)) return 1;
    const char *b = strrchr(spec, '/');
    return strchr(b ? b + 1 : spec, '{') != NULL || strchr(b ? b + 1 : spec, '}') != NULL;
}

/* str.format(ftype_lower, outtype=lower, ftype=lower, OUTTYPE=upper, FTYPE=upper) on one name. */
static sn_status fill(const char *name, const char *ftype, char *out, size_t cap, sn_err *err) {
    size_t k = 0;
    for (const char *p = name; *p;) {
        const char *ins = NULL;
        int upper = 0;
        size_t adv = 1;
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            ins = p[0] == '{' ? "{" : "}";
            adv = 2;
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            if (!e) return sn_err_set(err, SN_EINVAL, "-o %s: unmatched '{' (write {{ for a literal brace)", name);
            size_t n = (size_t)(e - p - 1);
            const char *f = p + 1;
            if (n == 0 || (n == 1 && f[0] == '0') || (n == 5 && !strncmp(f, "ftype", 5)) ||
                (n == 7 && !strncmp(f, "outtype", 7)))
                ins = ftype;
            else if ((n == 5 && !strncmp(f, "FTYPE", 5)) || (n == 7 && !strncmp(f, "OUTTYPE", 7)))
                ins = ftype, upper = 1;
            else
                return sn_err_set(err, SN_EINVAL, "-o %s: unknown field {%.*s} (use {ftype}, {outtype}, {FTYPE}, "
                                  "{OUTTYPE} or {})", name, (int)n, f);
            adv = n + 2;
        } else if (*p == '}') {
            return sn_err_set(err, SN_EINVAL, "-o %s: single '}' (write }} for a literal brace)", name);
        }
        if (ins) {
            for (const char *c = ins; *c && k + 1 < cap; c++)
                out[k++] = (char)(ins == ftype ? (upper ? toupper((unsigned char)*c) : tolower((unsigned char)*c)) : *c);
        } else if (k + 1 < cap) out[k++] = *p;
        if (k + 1 >= cap) return sn_err_set(err, SN_EINVAL, "-o %s: expanded name too long", name);
        p += adv;
    }
    out[k] = 0;
    return SN_OK;
}

sn_status sn_convert_out_path(const char *spec, const char *in_path, const char *default_name, const char *ftype,
                              char *out, size_t cap, sn_err *err) {
    char dir[4096];
    const char *name = NULL;
    if (spec && !is_dir(spec)) { /* a file name, maybe templated: only its last component is filled */
        const char *b = strrchr(spec, '/');
        snprintf(dir, sizeof dir, "%.*s", b ? (int)(b - spec) + 1 : 0, spec);
        char filled[1024];
        sn_status st = fill(b ? b + 1 : spec, ftype, filled, sizeof filled, err);
        if (st) return st;
        int n = snprintf(out, cap, "%s%s", dir, filled);
        return n < 0 || (size_t)n >= cap ? sn_err_set(err, SN_EINVAL, "-o %s: path too long", spec) : SN_OK;
    }
    if (spec) snprintf(dir, sizeof dir, "%s", spec);
    else if (is_dir(in_path)) snprintf(dir, sizeof dir, "%s", in_path);
    else { /* one weight file or a GGUF: the folder it is in */
        const char *b = strrchr(in_path, '/');
        snprintf(dir, sizeof dir, "%.*s", b ? (int)(b - in_path) : 1, b ? in_path : ".");
        if (b == in_path) snprintf(dir, sizeof dir, "/");
    }
    name = default_name;
    size_t l = strlen(dir);
    int n = snprintf(out, cap, "%s%s%s.gguf", dir, l && dir[l - 1] == '/' ? "" : "/", name);
    return n < 0 || (size_t)n >= cap ? sn_err_set(err, SN_EINVAL, "%s: output path too long", dir) : SN_OK;
}
