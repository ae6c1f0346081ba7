/* doctor.c - Ollama environment diagnosis (see doctor.h and docs/OLLAMA.md). */
#include "doctor.h"
#include "http.h"
#include "ollama.h"
#include "sizefmt.h"
#include <dirent.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

static void add(cJSON *checks, const char *name, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(cJSON *checks, const char *name, const char *status, const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "check", name);
    cJSON_AddStringToObject(c, "status", status);
    cJSON_AddStringToObject(c, "detail", buf);
    cJSON_AddItemToArray(checks, c);
}

/* Reads Environment=OLLAMA_MODELS=... and User=... from a systemd unit file. */
static void scan_unit(const char *path, char *user, size_t ucap, char *models, size_t mcap) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (strncmp(line, "User=", 5) == 0) snprintf(user, ucap, "%.63s", line + 5);
        char *p = strstr(line, "OLLAMA_MODELS=");
        if (strncmp(line, "Environment=", 12) == 0 && p) {
            p += 14;
            size_t n = strcspn(p, "\" ");
            snprintf(models, mcap, "%.*s", (int)n, p);
        }
    }
    fclose(f);
}

cJSON *sn_doctor_ollama(const char *host_flag, const sn_env *user_env) {
    static const sn_env unset;
    const sn_env *ue = user_env ? user_env : &unset;
    cJSON *rep = cJSON_CreateObject();
    if (!rep) return NULL;
    cJSON *checks = cJSON_AddArrayToObject(rep, "checks");
    const char *env = ue->ollama_host;
    sn_ollama_host oh;
    sn_ollama_parse_host(host_flag ? host_flag : env, &oh);
    cJSON_AddStringToObject(rep, "host", oh.connect_url);

    /* 1. OLLAMA_HOST */
    if (host_flag)
        add(checks, "host", "ok", "--host %s -> %s (connecting to %s)", host_flag, oh.url, oh.connect_url);
    else if (!env || !*env)
        add(checks, "host", "ok", "OLLAMA_HOST unset -> %s (Ollama's default)", oh.url);
    else
        add(checks, "host", "ok", "OLLAMA_HOST=%s -> %s as Ollama parses it; connecting to %s", env, oh.url,
            oh.connect_url);
    if (oh.bad_port)
        add(checks, "host-port", "warn", "the port in '%s' is not a valid port; Ollama (and sunny) fall back "
            "to %s", host_flag ? host_flag : env, oh.port);
    if (strcmp(oh.host, "0.0.0.0") == 0 || strcmp(oh.host, "::") == 0)
        add(checks, "host-bind", "warn",
            "%s is a bind address for `ollama serve` (listen everywhere). sunny connects to %s like "
            "ConnectableHost(); the ollama CLI connects to %s itself, which fails on Windows and goes "
            "through HTTP_PROXY unless NO_PROXY contains it. Clients should use OLLAMA_HOST=127.0.0.1:%s",
            oh.host, oh.connect_url, oh.url, oh.port);
    if (env && *env && !host_flag) {
        if (!strstr(env, "://") && strcmp(oh.port, "11434") != 0 && !strchr(env, ':'))
            add(checks, "host-form", "ok", "no scheme and no port: port 11434 is used");
        if (strstr(env, "://") && !strchr(strstr(env, "://") + 3, ':'))
            add(checks, "host-form", "warn",
                "a scheme without a port means the scheme's default port (%s), not 11434 — "
                "write %s:11434 if the server uses the default port", oh.port, env);
    }

    /* 2. proxies */
    char var[64], val[512];
    sn_http *h = NULL;
    sn_err err = {0};
    int have_http = sn_http_new(oh.connect_url, ue, &h, &err) == SN_OK;
    const char *hostname = have_http ? sn_http_hostname(h) : oh.host;
    if (sn_http_proxy_for(ue, oh.scheme, hostname, var, sizeof var, val, sizeof val)) {
        if (have_http && sn_http_is_loopback(h))
            add(checks, "proxy", "ok",
                "%s=%s is set but %s is loopback: sunny never proxies loopback. Beware: Python "
                "clients (httpx/requests) and other libcurl programs DO send localhost through it "
                "(502 Bad Gateway / HTML answers); add 127.0.0.1,localhost to NO_PROXY",
                var, val, hostname);
        else
            add(checks, "proxy", "warn",
                "%s=%s will be used to reach %s (not loopback, not in NO_PROXY). If the server is on "
                "your LAN, add it to NO_PROXY (ollama/ollama#4674)", var, val, hostname);
    } else {
        add(checks, "proxy", "ok", "no proxy variable applies to %s", hostname);
    }

    /* 3. server */
    sn_ollama_version v = {0};
    int up = 0;
    if (have_http) {
        if (sn_ollama_probe(h, &v, &err) == SN_OK) {
            up = 1;
            cJSON_AddStringToObject(rep, "version", v.raw);
            add(checks, "server", "ok", "Ollama %s answers at %s", v.raw, oh.connect_url);
            if (sn_ollama_version_cmp(&v, 0, 5, 5) < 0)
                add(checks, "server-version", "warn",
                    "%s < 0.5.5: /api/create takes the legacy Modelfile body (sunny falls back to it); "
                    "no _debug_render_only; the GGUF's Jinja template is never used, so an explicit "
                    "TEMPLATE is required (sunny sends one)", v.raw);
            else if (sn_ollama_version_cmp(&v, 0, 30, 0) < 0)
                add(checks, "server-version", "ok",
                    "%s < 0.30: models run on Ollama's own engines; --template jinja would fall back to "
                    "{{ .Prompt }} — keep --template auto", v.raw);
            else
                add(checks, "server-version", "ok",
                    "%s >= 0.30: every GGUF runs in llama-server (same code sunny's parity oracle "
                    "runs); imported GGUFs are rewritten, so the stored digest differs from the "
                    "uploaded one", v.raw);
        } else {
            add(checks, "server", "fail", "%s", err.msg);
        }
    } else {
        add(checks, "server", "fail", "%s", err.msg);
    }

    /* 4. OLLAMA_MODELS is the server's */
    const char *om = ue->ollama_models;
    const char *home = ue->home;
    char models_dir[1024] = "";
    if (om && *om) {
        add(checks, "models-dir", "ok",
            "OLLAMA_MODELS=%s is set here, but only the SERVER's environment matters: the API client "
            "never reads it. Blobs go wherever the running server was told", om);
        snprintf(models_dir, sizeof models_dir, "%s", om);
    } else if (home) {
        snprintf(models_dir, sizeof models_dir, "%s/.ollama/models", home);
    }
    if (have_http && sn_http_is_loopback(h)) {
        char user[64] = "", unit_models[512] = "";
        const char *units[] = {"/etc/systemd/system/ollama.service", "/lib/systemd/system/ollama.service",
                               "/usr/lib/systemd/system/ollama.service"};
        int found = 0;
        for (size_t i = 0; i < 3; i++) {
            FILE *f = fopen(units[i], "r");
            if (!f) continue;
            fclose(f);
            found = 1;
            scan_unit(units[i], user, sizeof user, unit_models, sizeof unit_models);
        }
        DIR *d = opendir("/etc/systemd/system/ollama.service.d");
        if (d) {
            struct dirent *de;
            while ((de = readdir(d))) {
                if (de->d_name[0] == '.') continue;
                char p[512];
                snprintf(p, sizeof p, "/etc/systemd/system/ollama.service.d/%.200s", de->d_name);
                scan_unit(p, user, sizeof user, unit_models, sizeof unit_models);
            }
            closedir(d);
        }
        if (found) {
            char svc_models[1024];
            if (unit_models[0]) snprintf(svc_models, sizeof svc_models, "%s", unit_models);
            else {
                struct passwd *pw = user[0] ? getpwnam(user) : NULL;
                snprintf(svc_models, sizeof svc_models, "%s/.ollama/models",
                         pw ? pw->pw_dir : (user[0] ? "/usr/share/ollama" : "/root"));
            }
            add(checks, "service", "warn",
                "a systemd ollama service exists (User=%s): when it is the server you talk to, models live "
                "in %s, not in your ~/.ollama (\"my models disappeared\", ollama/ollama#1296). Set "
                "OLLAMA_MODELS with `systemctl edit ollama` and make the dir writable by that user",
                user[0] ? user : "root", svc_models);
            snprintf(models_dir, sizeof models_dir, "%s", svc_models);
        }
    }

    /* 5. free disk */
    if (models_dir[0]) {
        char probe[1024];
        snprintf(probe, sizeof probe, "%s", models_dir);
        struct statvfs sv;
        while (statvfs(probe, &sv) != 0) {
            char *s = strrchr(probe, '/');
            if (!s || s == probe) { snprintf(probe, sizeof probe, "/"); if (statvfs(probe, &sv)) break; else goto have; }
            *s = 0;
        }
    have:;
        uint64_t free_b = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
        char hb[SN_SIZE_STR_MAX];
        sn_size_short(free_b, hb, sizeof hb);
        add(checks, "disk", free_b < (4ull << 30) ? "warn" : "ok",
            "%s free on the filesystem of %s (a GGUF import needs its size in blobs, and >= 0.30 a second "
            "copy while llama-quantize rewrites it)%s", hb, models_dir,
            up ? "" : " — assumed local; the server may keep blobs elsewhere");
    }
    sn_http_free(h);
    return rep;
}

int sn_doctor_failed(const cJSON *report) {
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    const cJSON *c;
    cJSON_ArrayForEach(c, checks) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (cJSON_IsString(s) && strcmp(s->valuestring, "fail") == 0) return 1;
    }
    return 0;
}
