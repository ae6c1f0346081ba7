/* lmstudio_home.c - where LM Studio lives, read from its own files (see lmstudio.h and
 * docs/LMSTUDIO.md): ~/.lmstudio-home-pointer, the home's settings.json (downloadsFolder) and
 * .internal/http-server*.json (the port). Read-only, no server contacted; the fuzz harness
 * tests/fuzz/fuzz_lmstudio_files.c feeds it arbitrary files. */
#include "lmstudio_internal.h"

#include "budget.h"
#include "mapfile.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sn_lms_fmt(char *dst, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(dst, cap, f, ap);
    va_end(ap);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

int sn_lms_exists(const char *p) {
    struct stat st;
    return lstat(p, &st) == 0;
}

/* ------------------------------------------------------------------------------------------------
 * Models dir: findLMStudioHome() + resolveModelsFolderPath(), read-only. */

sn_status sn_lms_resolve_models_dir(const char *flag_dir, const char *user_home, sn_lms_dirs *o,
                                    sn_err *err) {
    memset(o, 0, sizeof *o);
    if (flag_dir) {
        snprintf(o->models, sizeof o->models, "%s", flag_dir);
        snprintf(o->why, sizeof o->why, "--models-dir");
        return SN_OK;
    }
    const char *h = user_home;
    if (!h || !*h)
        return sn_err_set(err, SN_EINVAL, "HOME is not set; pass --models-dir DIR");
    char H[PATH_MAX];
    if (!realpath(h, H)) snprintf(H, sizeof H, "%s", h); /* lms uses realpath(os.homedir()) */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/.lmstudio-home-pointer", H);
    /* these are files of the user's home, but still read as untrusted: a FIFO or a huge file
     * there must not hang or exhaust sunny (sn_read_file: regular files only, a size budget) */
    struct stat sb;
    if (stat(p, &sb) == 0) {
        char *buf = NULL;
        uint64_t n = 0;
        sn_status st = SN_READ_FILE(p, SN_BUDGET_SMALL_FILE, &buf, &n, err);
        if (st != SN_OK) return st;
        char *s = buf, *e = buf + n;
        while (s < e && isspace((unsigned char)*s)) s++;
        while (e > s && isspace((unsigned char)e[-1])) e--;
        *e = 0;
        if (!*s || memchr(s, 0, (size_t)(e - s))) {
            free(buf);
            return sn_err_set(err, SN_EFORMAT, "%s is empty or not text; it should hold the LM Studio home "
                              "path (or pass --models-dir)", p);
        }
        if (sn_lms_fmt(o->home, sizeof o->home, "%s", s)) {
            free(buf);
            return sn_err_set(err, SN_EFORMAT, "%s: the path it holds is longer than %zu bytes", p,
                              sizeof o->home - 1);
        }
        free(buf);
        sn_lms_fmt(o->why, sizeof o->why, "home %s from %s", o->home, p);
    } else {
        snprintf(p, sizeof p, "%s/.cache/lm-studio", H);
        if (sn_lms_exists(p)) {
            if (sn_lms_fmt(o->home, sizeof o->home, "%s", p)) return sn_err_set(err, SN_EINVAL, "HOME path too long");
            sn_lms_fmt(o->why, sizeof o->why, "home %s (legacy location; no ~/.lmstudio-home-pointer)", p);
        } else {
            snprintf(p, sizeof p, "%s/.lmstudio", H);
            if (!sn_lms_exists(p))
                return sn_err_set(err, SN_EINVAL,
                                  "no LM Studio home found (no %s/.lmstudio-home-pointer, %s/.cache/lm-studio "
                                  "or %s/.lmstudio): is LM Studio installed and started once? Pass "
                                  "--models-dir DIR to place the file anyway",
                                  H, H, H);
            if (sn_lms_fmt(o->home, sizeof o->home, "%s", p)) return sn_err_set(err, SN_EINVAL, "HOME path too long");
            sn_lms_fmt(o->why, sizeof o->why, "home %s (no ~/.lmstudio-home-pointer)", p);
        }
    }
    char sp[sizeof o->home + 32];
    snprintf(sp, sizeof sp, "%s/settings.json", o->home);
    char *txt = NULL;
    const char *why2 = "no settings.json";
    if (stat(sp, &sb) == 0) {
        sn_err e2;
        if (SN_READ_FILE(sp, SN_BUDGET_TEXT_FILE, &txt, NULL, &e2) != SN_OK) why2 = "settings.json unreadable";
    }
    cJSON *j = txt ? cJSON_Parse(txt) : NULL;
    free(txt);
    const cJSON *df = j ? cJSON_GetObjectItemCaseSensitive(j, "downloadsFolder") : NULL;
    size_t wl = strlen(o->why);
    if (cJSON_IsString(df) && df->valuestring[0]) {
        snprintf(o->models, sizeof o->models, "%s", df->valuestring);
        snprintf(o->why + wl, sizeof o->why - wl, "; models dir from %s downloadsFolder", sp);
    } else {
        if (sn_lms_fmt(o->models, sizeof o->models, "%s/models", o->home))
            return sn_err_set(err, SN_EINVAL, "LM Studio home path too long: %s", o->home);
        snprintf(o->why + wl, sizeof o->why - wl, "; models dir <home>/models (%s)",
                 j ? "settings.json has no string downloadsFolder" : why2);
    }
    cJSON_Delete(j);
    return SN_OK;
}

void sn_lms_default_host(const sn_lms_dirs *d, char *url, size_t cap, char *why, size_t why_cap) {
    snprintf(url, cap, "http://127.0.0.1:1234");
    snprintf(why, why_cap, "LM Studio's default port");
    if (!d->home[0]) return;
    static const char *const files[] = {"http-server.json", "http-server-config.json"};
    static const char *const whys[] = {"port of the running server", "configured port"};
    for (int i = 0; i < 2; i++) {
        char p[sizeof d->home + 64];
        snprintf(p, sizeof p, "%s/.internal/%s", d->home, files[i]);
        char *buf = NULL;
        sn_err e2;
        if (SN_READ_FILE(p, SN_BUDGET_SMALL_FILE, &buf, NULL, &e2) != SN_OK) continue;
        cJSON *j = cJSON_Parse(buf);
        free(buf);
        const cJSON *port = j ? cJSON_GetObjectItemCaseSensitive(j, "port") : NULL;
        /* an integer 1..65535, else the file is ignored (readLocalAPIServerPort) */
        int okp = cJSON_IsNumber(port) && port->valuedouble >= 1 && port->valuedouble <= 65535 &&
                  port->valuedouble == (double)(int)port->valuedouble;
        if (okp) {
            snprintf(url, cap, "http://127.0.0.1:%d", (int)port->valuedouble);
            sn_lms_fmt(why, why_cap, "%s, from %s", whys[i], p);
        }
        cJSON_Delete(j);
        if (okp) return;
    }
}
