/* ollama.c - Ollama HTTP install flow (see ollama.h and docs/OLLAMA.md). */
#include "ollama.h"
#include "smoke.h"
#include "utf8.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------
 * OLLAMA_HOST. Mirrors envconfig.Host(): trim spaces, trim quotes, trim spaces; split "scheme://";
 * a scheme selects its default port (http 80, https 443), no scheme means http + 11434 (and the bare
 * "ollama.com" means https://ollama.com:443); the first '/' starts a path prefix; net.SplitHostPort
 * semantics for host:port; on a split failure the whole text is an IP (canonicalised) or a host
 * name; an invalid port falls back to the default. */

static void trim_cut(const char **s, const char **e, const char *set) {
    while (*s < *e && strchr(set, **s)) (*s)++;
    while (*e > *s && strchr(set, (*e)[-1])) (*e)--;
}

/* Go's net.SplitHostPort. Returns 0 on success. */
static int split_host_port(const char *hp, size_t n, char *host, size_t hcap, char *port,
                           size_t pcap) {
    const char *end = hp + n;
    const char *colon = NULL;
    for (const char *p = hp; p < end; p++)
        if (*p == ':') colon = p;
    if (!colon) return -1; /* missing port */
    const char *hs, *he;
    if (hp[0] == '[') {
        const char *rb = memchr(hp, ']', n);
        if (!rb) return -1;
        if (rb + 1 == end) return -1;       /* missing port */
        if (rb + 1 != colon) return -1;     /* "[::1]x:80" or too many colons after ']' */
        hs = hp + 1;
        he = rb;
        if (memchr(rb + 1, '[', (size_t)(end - rb - 1)) || memchr(rb + 1, ']', (size_t)(end - rb - 1)))
            return -1;
    } else {
        hs = hp;
        he = colon;
        if (memchr(hs, ':', (size_t)(he - hs))) return -1; /* too many colons */
        if (memchr(hs, '[', (size_t)(he - hs)) || memchr(hs, ']', (size_t)(he - hs))) return -1;
    }
    if ((size_t)(he - hs) >= hcap || (size_t)(end - colon - 1) >= pcap) return -1;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = 0;
    memcpy(port, colon + 1, (size_t)(end - colon - 1));
    port[end - colon - 1] = 0;
    return 0;
}

/* Go's net.ParseIP + IP.String() canonical form. Returns 0 if s is an IP. */
static int canonical_ip(const char *s, char *out, size_t cap) {
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, s, &a4) == 1) return inet_ntop(AF_INET, &a4, out, (socklen_t)cap) ? 0 : -1;
    if (inet_pton(AF_INET6, s, &a6) == 1) {
        static const unsigned char v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a6.s6_addr, v4m, 12) == 0) { /* Go prints IPv4-mapped addresses as IPv4 */
            memcpy(&a4, a6.s6_addr + 12, 4);
            return inet_ntop(AF_INET, &a4, out, (socklen_t)cap) ? 0 : -1;
        }
        return inet_ntop(AF_INET6, &a6, out, (socklen_t)cap) ? 0 : -1;
    }
    return -1;
}

/* Go's strconv.ParseInt(port, 10, 32) && 0 <= n <= 65535. */
static int valid_port(const char *p, long *out) {
    const char *q = p;
    if (*q == '+' || *q == '-') q++;
    if (!*q) return 0;
    for (const char *c = q; *c; c++)
        if (!isdigit((unsigned char)*c)) return 0;
    errno = 0;
    long v = strtol(p, NULL, 10);
    if (errno || v < 0 || v > 65535) return 0;
    *out = v;
    return 1;
}

static void join_host_port(char *out, size_t cap, const char *scheme, const char *host,
                           const char *port, const char *path) {
    int v6 = strchr(host, ':') != NULL;
    snprintf(out, cap, "%s://%s%s%s:%s%s%s", scheme, v6 ? "[" : "", host, v6 ? "]" : "", port,
             path[0] ? "/" : "", path);
}

void sn_ollama_parse_host(const char *value, sn_ollama_host *o) {
    memset(o, 0, sizeof *o);
    const char *s = value ? value : "";
    const char *e = s + strlen(s);
    trim_cut(&s, &e, " \t\n\r\v\f");
    trim_cut(&s, &e, "\"'");
    trim_cut(&s, &e, " \t\n\r\v\f");
    char buf[512];
    size_t n = (size_t)(e - s) < sizeof buf - 1 ? (size_t)(e - s) : sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;

    const char *default_port = "11434";
    const char *hostport;
    char *sep = strstr(buf, "://");
    if (!sep) {
        snprintf(o->scheme, sizeof o->scheme, "http");
        hostport = buf;
        if (strcmp(buf, "ollama.com") == 0) {
            snprintf(o->scheme, sizeof o->scheme, "https");
            hostport = "ollama.com:443";
        }
    } else {
        *sep = 0;
        snprintf(o->scheme, sizeof o->scheme, "%.15s", buf);
        hostport = sep + 3;
        if (strcmp(o->scheme, "http") == 0) default_port = "80";
        else if (strcmp(o->scheme, "https") == 0) default_port = "443";
    }
    char hp[512];
    snprintf(hp, sizeof hp, "%s", hostport);
    char *slash = strchr(hp, '/');
    if (slash) {
        *slash = 0;
        snprintf(o->path, sizeof o->path, "%s", slash + 1);
    }
    char port[64];
    if (split_host_port(hp, strlen(hp), o->host, sizeof o->host, port, sizeof port) != 0) {
        snprintf(o->host, sizeof o->host, "127.0.0.1");
        snprintf(port, sizeof port, "%s", default_port);
        char inner[512];
        const char *a = hp, *b = hp + strlen(hp);
        trim_cut(&a, &b, "[]");
        snprintf(inner, sizeof inner, "%.*s", (int)(b - a), a);
        char ip[INET6_ADDRSTRLEN];
        if (canonical_ip(inner, ip, sizeof ip) == 0) snprintf(o->host, sizeof o->host, "%s", ip);
        else if (hp[0]) snprintf(o->host, sizeof o->host, "%s", hp);
    }
    long pn;
    if (!valid_port(port, &pn)) {
        o->bad_port = 1;
        snprintf(o->port, sizeof o->port, "%s", default_port);
    } else {
        snprintf(o->port, sizeof o->port, "%ld", pn);
    }
    join_host_port(o->url, sizeof o->url, o->scheme, o->host, o->port, o->path);

    /* ConnectableHost(): unspecified addresses mean "this machine". An empty host (":1234") is
     * dialled by Go as the local system too; libcurl needs it spelled out. */
    char ch[256];
    snprintf(ch, sizeof ch, "%s", o->host);
    if (strcmp(ch, "0.0.0.0") == 0 || ch[0] == 0) snprintf(ch, sizeof ch, "127.0.0.1");
    else if (strcmp(ch, "::") == 0) snprintf(ch, sizeof ch, "::1");
    join_host_port(o->connect_url, sizeof o->connect_url, o->scheme, ch, o->port, o->path);
}

/* ------------------------------------------------------------------------------------------------
 * Version */

void sn_ollama_version_parse(const char *s, sn_ollama_version *v) {
    memset(v, 0, sizeof *v);
    snprintf(v->raw, sizeof v->raw, "%s", s ? s : "");
    const char *p = v->raw;
    if (*p == 'v') p++;
    int a, b, c;
    if (sscanf(p, "%d.%d.%d", &a, &b, &c) != 3) {
        v->dev = 1;
        return;
    }
    v->major = a;
    v->minor = b;
    v->patch = c;
    if (a == 0 && b == 0 && c == 0) v->dev = 1;
}

int sn_ollama_version_cmp(const sn_ollama_version *v, int maj, int min, int pat) {
    if (v->dev) return 1;
    if (v->major != maj) return v->major < maj ? -1 : 1;
    if (v->minor != min) return v->minor < min ? -1 : 1;
    if (v->patch != pat) return v->patch < pat ? -1 : 1;
    return 0;
}

static sn_status explain_transport(sn_http *h, const sn_http_resp *r, sn_err *err) {
    const char *base = sn_http_base(h);
    switch (r->cls) {
    case SN_HTTP_REFUSED:
        return sn_err_set(err, SN_EIO,
                          "no Ollama server at %s — start it with `ollama serve` (the CLI's 'could not "
                          "locate ollama app' / 'could not connect to ollama app' means the same); if it "
                          "runs elsewhere pass --host or set OLLAMA_HOST",
                          base);
    case SN_HTTP_RESOLVE:
        return sn_err_set(err, SN_EIO, "cannot resolve the host of %s (%s); check --host/OLLAMA_HOST",
                          base, r->transport_error);
    case SN_HTTP_TIMEOUT:
        return sn_err_set(err, SN_EIO,
                          "%s did not answer in time (%s); a firewall or a server that is still "
                          "loading?",
                          base, r->transport_error);
    case SN_HTTP_PROXY:
        return sn_err_set(err, SN_EIO, "cannot reach %s: %s; fix the proxy, or add the host to "
                          "NO_PROXY to connect directly", base, r->transport_error);
    default:
        return sn_err_set(err, SN_EIO, "cannot talk to %s: %s", base, r->transport_error);
    }
}

static sn_status ollama_check(sn_http *h, const sn_http_resp *r, const char *what, sn_err *err) {
    if (r->cls == SN_HTTP_FORBIDDEN) {
        char e[256];
        sn_http_json_error(r->body, e, sizeof e);
        return sn_err_set(err, SN_EIO,
                          "%s: Ollama at %s answered 403 Forbidden%s%s. An Ollama server that listens on "
                          "a loopback address (allowedHostsMiddleware) rejects requests whose Host header "
                          "is not localhost, a loopback/private IP, the machine's name or "
                          "*.localhost|*.local|*.internal: behind a reverse proxy set `proxy_set_header "
                          "Host localhost:11434`, or make the server listen on another address "
                          "(OLLAMA_HOST=0.0.0.0 on the server), where that check does not apply. "
                          "(OLLAMA_ORIGINS does not help: it is about the Origin header, which sunny "
                          "never sends.)",
                          what, sn_http_base(h), e[0] ? ": " : "", e);
    }
    return sn_http_check(h, r, "Ollama", what, err);
}

sn_status sn_ollama_probe(sn_http *h, sn_ollama_version *v, sn_err *err) {
    sn_http_req rq = {.method = "GET", .path = "/api/version", .timeout_s = 30};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    if (st != SN_OK) {
        if (st != SN_ENOMEM) st = explain_transport(h, &r, err);
        sn_http_resp_free(&r);
        return st;
    }
    if (r.cls != SN_HTTP_OK) {
        st = ollama_check(h, &r, "GET /api/version", err);
        if (r.status == 404)
            st = sn_err_set(err, SN_EIO,
                            "%s answered 404 to GET /api/version: this is not an Ollama server (LM "
                            "Studio listens on 1234, Ollama on 11434)",
                            sn_http_base(h));
        sn_http_resp_free(&r);
        return st;
    }
    cJSON *j = cJSON_Parse(r.body);
    const cJSON *ver = j ? cJSON_GetObjectItemCaseSensitive(j, "version") : NULL;
    if (!cJSON_IsString(ver)) {
        size_t n = r.len < 80 ? r.len : 80;
        st = sn_err_set(err, SN_EIO,
                        "%s/api/version did not answer {\"version\":...} (got '%.*s'): something other "
                        "than Ollama (a proxy?) answered",
                        sn_http_base(h), (int)n, r.body);
    } else {
        sn_ollama_version_parse(ver->valuestring, v);
    }
    cJSON_Delete(j);
    sn_http_resp_free(&r);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * SHA-256 */

sn_status sn_ollama_sha256_file(const char *path, char hex[65], uint64_t *size, double *seconds,
                                sn_err *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sn_err_set(err, SN_EIO, "%s: %s", path, strerror(errno));
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    const size_t bufsz = 4u << 20;
    unsigned char *buf = malloc(bufsz);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!buf || !ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        free(buf);
        EVP_MD_CTX_free(ctx);
        close(fd);
        return sn_err_set(err, SN_ENOMEM, "cannot set up SHA-256");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t total = 0;
    sn_status st = SN_OK;
    struct stat sb;
    void *map = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
        map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) { /* no copy through a buffer: ~30% less CPU than read() */
        madvise(map, (size_t)sb.st_size, MADV_SEQUENTIAL);
        const unsigned char *p = map;
        uint64_t n = (uint64_t)sb.st_size;
        while (total < n) {
            size_t step = n - total < (64u << 20) ? (size_t)(n - total) : (64u << 20);
            EVP_DigestUpdate(ctx, p + total, step);
            total += step;
        }
        munmap(map, (size_t)sb.st_size);
    } else for (;;) {
        ssize_t n = read(fd, buf, bufsz);
        if (n < 0) {
            if (errno == EINTR) continue;
            st = sn_err_set(err, SN_EIO, "%s: read at offset %llu: %s", path,
                            (unsigned long long)total, strerror(errno));
            break;
        }
        if (n == 0) break;
        EVP_DigestUpdate(ctx, buf, (size_t)n);
        total += (uint64_t)n;
    }
    unsigned char md[32];
    unsigned int mdlen = 0;
    if (st == SN_OK) {
        EVP_DigestFinal_ex(ctx, md, &mdlen);
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
        hex[64] = 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (size) *size = total;
    if (seconds) *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    EVP_MD_CTX_free(ctx);
    free(buf);
    close(fd);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Parameters, typed like api.Options (api/types.go): Runner + Options fields by JSON name. */

typedef enum { P_INT, P_FLOAT, P_BOOL, P_STRS } ptype;
static const struct { const char *key; ptype t; } k_params[] = {
    {"num_ctx", P_INT},        {"num_batch", P_INT},        {"num_gpu", P_INT},
    {"main_gpu", P_INT},       {"use_mmap", P_BOOL},        {"num_thread", P_INT},
    {"num_keep", P_INT},       {"seed", P_INT},             {"num_predict", P_INT},
    {"top_k", P_INT},          {"top_p", P_FLOAT},          {"min_p", P_FLOAT},
    {"typical_p", P_FLOAT},    {"repeat_last_n", P_INT},    {"temperature", P_FLOAT},
    {"repeat_penalty", P_FLOAT}, {"presence_penalty", P_FLOAT}, {"frequency_penalty", P_FLOAT},
    {"stop", P_STRS},
};
static const char *const k_deprecated[] = {"penalize_newline", "low_vram", "f16_kv", "logits_all",
                                           "vocab_only", "use_mlock", "mirostat", "mirostat_tau",
                                           "mirostat_eta", "tfs_z", "numa"};

sn_status sn_ollama_param_add(cJSON *params, const char *key, const char *value, sn_err *err) {
    for (size_t i = 0; i < sizeof k_deprecated / sizeof k_deprecated[0]; i++)
        if (strcmp(key, k_deprecated[i]) == 0)
            return sn_err_set(err, SN_EINVAL, "--param %s: deprecated in Ollama and ignored; drop it", key);
    for (size_t i = 0; i < sizeof k_params / sizeof k_params[0]; i++) {
        if (strcmp(key, k_params[i].key) != 0) continue;
        char *end;
        switch (k_params[i].t) {
        case P_INT: {
            errno = 0;
            long long v = strtoll(value, &end, 10);
            if (!*value || *end || errno)
                return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be an integer", key, value);
            cJSON_DeleteItemFromObjectCaseSensitive(params, key);
            cJSON_AddNumberToObject(params, key, (double)v);
            return SN_OK;
        }
        case P_FLOAT: {
            errno = 0;
            double v = strtod(value, &end);
            if (!*value || *end || errno)
                return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be a number", key, value);
            cJSON_DeleteItemFromObjectCaseSensitive(params, key);
            cJSON_AddNumberToObject(params, key, v);
            return SN_OK;
        }
        case P_BOOL: {
            int b;
            if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "True") || !strcmp(value, "TRUE") || !strcmp(value, "t") || !strcmp(value, "T")) b = 1;
            else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "False") || !strcmp(value, "FALSE") || !strcmp(value, "f") || !strcmp(value, "F")) b = 0;
            else return sn_err_set(err, SN_EINVAL, "--param %s=%s: must be true or false", key, value);
            cJSON_DeleteItemFromObjectCaseSensitive(params, key);
            cJSON_AddBoolToObject(params, key, b);
            return SN_OK;
        }
        case P_STRS: {
            cJSON *arr = cJSON_GetObjectItemCaseSensitive(params, key);
            if (!cJSON_IsArray(arr)) {
                cJSON_DeleteItemFromObjectCaseSensitive(params, key);
                arr = cJSON_AddArrayToObject(params, key);
            }
            if (!arr) return sn_err_set(err, SN_ENOMEM, "out of memory");
            cJSON *it;
            cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it) && strcmp(it->valuestring, value) == 0) return SN_OK;
            cJSON_AddItemToArray(arr, cJSON_CreateString(value));
            return SN_OK;
        }
        }
    }
    return sn_err_set(err, SN_EINVAL,
                      "--param %s: not an Ollama parameter (known: num_ctx, num_batch, num_gpu, main_gpu, "
                      "use_mmap, num_thread, num_keep, seed, num_predict, top_k, top_p, min_p, typical_p, "
                      "repeat_last_n, temperature, repeat_penalty, presence_penalty, frequency_penalty, "
                      "stop)",
                      key);
}

/* ------------------------------------------------------------------------------------------------
 * Names, bodies, Modelfile */

static int name_part_ok(const char *s, size_t n, size_t max, const char *extra) {
    if (n == 0 || n > max) return 0;
    if (!(isalnum((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == '_' || strchr(extra, c))) return 0;
    }
    return 1;
}

sn_status sn_ollama_base_model_template(char **tmpl, char *src, size_t src_cap, sn_err *err) {
    *tmpl = strdup("{{ .Prompt }}");
    if (!*tmpl) return sn_err_set(err, SN_ENOMEM, "out of memory");
    snprintf(src, src_cap, "{{ .Prompt }} (raw completion: the GGUF has no tokenizer.chat_template, a base "
             "model; prompts reach the model as they are, with no chat markers)");
    return SN_OK;
}

/* internal/modelref parseSourceSuffix: a tag "local" or "cloud" (any case, spaces trimmed), or a tag
 * ending in "-cloud" without a '/', is a source selector, stripped before show/generate resolve the
 * name - while create stores the literal name. Returns the offending suffix or NULL. */
static const char *source_suffix(const char *name) {
    const char *c = strrchr(name, ':');
    if (!c) return NULL;
    const char *t = c + 1, *e = t + strlen(t);
    while (*t == ' ' || *t == '\t') t++;
    while (e > t && (e[-1] == ' ' || e[-1] == '\t')) e--;
    size_t n = (size_t)(e - t);
    if ((n == 5 && strncasecmp(t, "local", 5) == 0) || (n == 5 && strncasecmp(t, "cloud", 5) == 0)) return c;
    if (n >= 6 && strncasecmp(e - 6, "-cloud", 6) == 0 && !memchr(t, '/', n)) return e - 6;
    return NULL;
}

sn_status sn_ollama_check_name(const char *name, sn_err *err) {
    const char *sfx = source_suffix(name);
    if (sfx)
        return sn_err_set(err, SN_EINVAL,
                          "invalid model name '%s': Ollama reads the tag suffix '%s' as a model source "
                          "(':local', ':cloud' and '-cloud' select local or ollama.com models; "
                          "internal/modelref): the model would be created under the literal name, but "
                          "show and generate would look for '%.*s' instead (404) or go to the cloud. "
                          "Choose another tag",
                          name, sfx, (int)(sfx - name), name);
    const char *colon = NULL;
    const char *last_slash = strrchr(name, '/');
    const char *c = strrchr(name, ':');
    if (c && (!last_slash || c > last_slash)) colon = c;
    const char *model_end = colon ? colon : name + strlen(name);
    const char *model = last_slash ? last_slash + 1 : name;
    int ok = name_part_ok(model, (size_t)(model_end - model), 80, "._-");
    if (ok && colon) ok = name_part_ok(colon + 1, strlen(colon + 1), 80, "._-");
    if (ok && last_slash) {
        const char *first_slash = strchr(name, '/');
        if (first_slash == last_slash) {
            ok = name_part_ok(name, (size_t)(last_slash - name), 80, "_-");
        } else {
            ok = name_part_ok(name, (size_t)(first_slash - name), 350, "._-:") &&
                 name_part_ok(first_slash + 1, (size_t)(last_slash - first_slash - 1), 80, "_-") &&
                 memchr(first_slash + 1, '/', (size_t)(last_slash - first_slash - 1)) == NULL;
        }
    }
    if (!ok)
        return sn_err_set(err, SN_EINVAL,
                          "invalid model name '%s': Ollama names are [host/][namespace/]model[:tag]; "
                          "each part starts with a letter, digit or '_' and continues with letters, "
                          "digits, '_', '-', '.' (no '.' in the namespace), at most 80 characters",
                          name);
    return SN_OK;
}

static const char *base_name(const char *p) {
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

char *sn_ollama_create_body(const sn_ollama_model_spec *m, const char *digest) {
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddStringToObject(j, "model", m->name);
    cJSON *files = cJSON_AddObjectToObject(j, "files");
    if (m->n_parts > 1) {
        for (size_t i = 0; i < m->n_parts; i++)
            cJSON_AddStringToObject(files, base_name(m->part_paths[i]), m->part_digests[i]);
        goto files_done;
    }
    char key[512];
    snprintf(key, sizeof key, "%s", base_name(m->gguf_path));
    size_t kl = strlen(key);
    if (kl < 5 || strcmp(key + kl - 5, ".gguf") != 0) /* the server detects type by suffix first */
        snprintf(key + kl, sizeof key - kl, ".gguf");
    cJSON_AddStringToObject(files, key, digest);
files_done:
    if (m->template_text) cJSON_AddStringToObject(j, "template", m->template_text);
    if (m->system) cJSON_AddStringToObject(j, "system", m->system);
    if (m->parameters && cJSON_GetArraySize(m->parameters) > 0)
        cJSON_AddItemToObject(j, "parameters", cJSON_Duplicate(m->parameters, 1));
    if (m->license) {
        cJSON *l = cJSON_AddArrayToObject(j, "license");
        cJSON_AddItemToArray(l, cJSON_CreateString(m->license));
    }
    cJSON_AddBoolToObject(j, "stream", 1);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

/* Ollama's Modelfile reader (parser/parser.go, ParseFile) decodes the file as UTF-8 (ill-formed
 * bytes become U+FFFD) and keeps only the runes strconv.IsPrint accepts, plus tab, CR and LF inside a
 * value. A value ends at the first CR or LF (never at a space or tab) at which
 * unquote(strings.TrimSpace(text so far)) succeeds: text not starting with a quote, or """...""" (6+
 * bytes), or "..." (2+ bytes, and not starting with """). So sunny refuses what no spelling keeps
 * (a rune that would be dropped, ill-formed UTF-8) and otherwise tries bare, then "..." and
 * """...""", keeping the first one the reader gives back unchanged: a spelling fails when TrimSpace
 * or unquote alters the whole value (leading/trailing whitespace, a leading quote), or when a line
 * inside it already completes it. */

/* parser.go's unquote(strings.TrimSpace(s[0..n))) for ASCII whitespace (the only kind mf_quote lets
 * through): 1 and the inner text in *b..*e when complete, 0 when the reader would read on. */
static int mf_unquote(const char *s, size_t n, const char **b, const char **e) {
#define MF_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r')
    while (n && MF_WS(*s)) s++, n--;
    while (n && MF_WS(s[n - 1])) n--;
#undef MF_WS
    size_t q = n >= 3 && !memcmp(s, "\"\"\"", 3) ? 3 : n >= 1 && s[0] == '"' ? 1 : 0;
    if (q && (n < 2 * q || memcmp(s + n - q, "\"\"\"", q))) return 0;
    *b = s + q;
    *e = s + n - q;
    return 1;
}

/* Does Ollama read q + v + q + "\n" back as exactly v? */
static int mf_spelling_ok(const char *v, size_t n, const char *q, char *buf) {
    size_t ql = strlen(q);
    const char *b, *e;
    memcpy(buf, q, ql);
    memcpy(buf + ql, v, n);
    memcpy(buf + ql + n, q, ql);
    for (size_t i = 0; i < n; i++) /* a CR/LF inside v where the text so far is already complete */
        if ((v[i] == '\n' || v[i] == '\r') && mf_unquote(buf, ql + i, &b, &e)) return 0;
    return mf_unquote(buf, n + 2 * ql, &b, &e) && (size_t)(e - b) == n && !memcmp(b, v, n);
}

static sn_status mf_quote(const char *what, const char *v, char **out, sn_err *err) {
    const unsigned char *s = (const unsigned char *)v;
    size_t n = strlen(v);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = sn_utf8_decode(s + i, n - i, &cp);
        if (!l)
            return sn_err_set(err, SN_EINVAL,
                              "%s is not valid UTF-8 at byte %zu, which Ollama's Modelfile parser turns "
                              "into U+FFFD; install through the API instead of --modelfile-out",
                              what, i);
        if (cp != '\t' && cp != '\n' && cp != '\r' && !sn_utf8_go_printable(cp))
            return sn_err_set(err, SN_EINVAL,
                              "%s contains the non-printable character U+%04X at byte %zu, which Ollama's "
                              "Modelfile parser silently drops; install through the API instead of "
                              "--modelfile-out",
                              what, (unsigned)cp, i);
        i += l;
    }
    if (n > SIZE_MAX - 7) return sn_err_set(err, SN_ENOMEM, "out of memory");
    *out = malloc(n + 7);
    if (!*out) return sn_err_set(err, SN_ENOMEM, "out of memory");
    /* Ollama's own writer (quote() in parser.go) picks """ for text with a quote in it, else " */
    const char *spellings[] = {"", "\"", "\"\"\""};
    if (strchr(v, '"')) spellings[1] = "\"\"\"", spellings[2] = "\"";
    for (size_t k = 0; k < 3; k++) {
        if (mf_spelling_ok(v, n, spellings[k], *out)) {
            (*out)[n + 2 * strlen(spellings[k])] = 0;
            return SN_OK;
        }
    }
    free(*out);
    *out = NULL;
    return sn_err_set(err, SN_EINVAL,
                      "%s cannot be written so Ollama's Modelfile parser reads it back unchanged (a line "
                      "in it ends with \" or \"\"\" where quoting is needed); install through the API "
                      "(the text is sent as JSON there) or change the text",
                      what);
}

typedef struct sbuf { char *p; size_t n, cap; int oom; } sbuf;
static void sb_add(sbuf *b, const char *s) {
    size_t l = strlen(s);
    if (b->oom) return;
    if (b->n + l + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < b->n + l + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) { b->oom = 1; return; }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

static sn_status mf_line(sbuf *b, const char *cmd, const char *what, const char *v, sn_err *err) {
    char *q;
    sn_status st = mf_quote(what, v, &q, err);
    if (st) return st;
    sb_add(b, cmd);
    sb_add(b, " ");
    sb_add(b, q);
    sb_add(b, "\n");
    free(q);
    return SN_OK;
}

char *sn_ollama_modelfile(const sn_ollama_model_spec *m, const char *from, sn_err *err) {
    sbuf b = {0};
    sn_status st = SN_OK;
    if (strchr(from, '\n')) {
        sn_err_set(err, SN_EINVAL, "FROM path contains a newline");
        return NULL;
    }
    sb_add(&b, "FROM ");
    sb_add(&b, from);
    sb_add(&b, "\n");
    if (m->template_text) st = mf_line(&b, "TEMPLATE", "the template", m->template_text, err);
    if (!st && m->system) st = mf_line(&b, "SYSTEM", "the system prompt", m->system, err);
    const cJSON *it;
    if (!st && m->parameters) {
        cJSON_ArrayForEach(it, m->parameters) {
            char what[160];
            snprintf(what, sizeof what, "parameter %s", it->string);
            char cmd[160];
            snprintf(cmd, sizeof cmd, "PARAMETER %s", it->string);
            if (cJSON_IsArray(it)) {
                const cJSON *s;
                cJSON_ArrayForEach(s, it) {
                    if (!st && cJSON_IsString(s)) st = mf_line(&b, cmd, what, s->valuestring, err);
                }
            } else if (cJSON_IsBool(it)) {
                if (!st) st = mf_line(&b, cmd, what, cJSON_IsTrue(it) ? "true" : "false", err);
            } else if (cJSON_IsNumber(it)) {
                char num[64];
                double d = it->valuedouble;
                if (d == (double)(long long)d && d < 1e15 && d > -1e15) snprintf(num, sizeof num, "%lld", (long long)d);
                else snprintf(num, sizeof num, "%.9g", d);
                if (!st) st = mf_line(&b, cmd, what, num, err);
            }
            if (st) break;
        }
    }
    if (!st && m->license) st = mf_line(&b, "LICENSE", "the license", m->license, err);
    if (!st && b.oom) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    if (st) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

char *sn_ollama_create_body_legacy(const sn_ollama_model_spec *m, const char *digest, sn_err *err) {
    char from[128];
    snprintf(from, sizeof from, "@%s", digest);
    char *mf = sn_ollama_modelfile(m, from, err);
    if (!mf) return NULL;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", m->name);
    cJSON_AddStringToObject(j, "name", m->name); /* <= 0.1.x servers read "name" */
    cJSON_AddStringToObject(j, "modelfile", mf);
    cJSON_AddBoolToObject(j, "stream", 1);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    free(mf);
    return s;
}

/* ------------------------------------------------------------------------------------------------
 * Split GGUFs */

void sn_ollama_parts_free(char **parts, size_t n) {
    if (!parts) return;
    for (size_t i = 0; i < n; i++) free(parts[i]);
    free(parts);
}

int sn_ollama_split_name(const char *path, int *part, int *count) {
    size_t l = strlen(path);
    if (l < 20) return 0;
    const char *suf = path + l - 20;
    char tail[8];
    return suf[0] == '-' && strncmp(suf + 6, "-of-", 4) == 0 &&
           sscanf(suf, "-%5d-of-%5d%7s", part, count, tail) == 3 && strcmp(tail, ".gguf") == 0;
}

sn_status sn_ollama_split_parts(const char *first, int split_count, char ***parts, size_t *n, sn_err *err) {
    *parts = NULL;
    *n = 0;
    size_t l = strlen(first);
    const char *suf = l >= 20 ? first + l - 20 : NULL; /* "-00001-of-00003.gguf" */
    int part = 0, count = 0;
    char tail[8];
    if (!suf || sscanf(suf, "-%5d-of-%5d%7s", &part, &count, tail) != 3 || strcmp(tail, ".gguf") != 0 ||
        suf[0] != '-' || strncmp(suf + 6, "-of-", 4) != 0)
        return sn_err_set(err, SN_EINVAL,
                          "%s: split.count is %d but the name is not llama.cpp's split pattern "
                          "<stem>-00001-of-%05d.gguf (Ollama groups shards by that name)",
                          first, split_count, split_count);
    if (part != 1)
        return sn_err_set(err, SN_EINVAL, "%s is part %d of %d; pass the first part (-00001-of-%05d.gguf)",
                          first, part, count, count);
    if (count != split_count)
        return sn_err_set(err, SN_EINVAL, "%s: the name says %d parts but split.count says %d", first, count,
                          split_count);
    char **p = calloc((size_t)count, sizeof *p);
    if (!p) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int i = 0; i < count; i++) {
        p[i] = malloc(l + 1);
        if (!p[i]) { sn_ollama_parts_free(p, (size_t)count); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
        snprintf(p[i], l + 1, "%.*s-%05d-of-%05d.gguf", (int)(suf - first), first, i + 1, count);
        struct stat sb;
        if (stat(p[i], &sb) != 0) {
            sn_status st = sn_err_set(err, SN_EIO, "split part %s is missing (%s)", p[i], strerror(errno));
            sn_ollama_parts_free(p, (size_t)count);
            return st;
        }
    }
    *parts = p;
    *n = (size_t)count;
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Blobs */

sn_status sn_ollama_blob_exists(sn_http *h, const char *digest, int *exists, sn_err *err) {
    char path[128];
    snprintf(path, sizeof path, "/api/blobs/%s", digest);
    sn_http_req rq = {.method = "HEAD", .path = path, .timeout_s = 60};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    if (st != SN_OK) {
        if (st != SN_ENOMEM) st = explain_transport(h, &r, err);
    } else if (r.status == 200) {
        *exists = 1;
    } else if (r.status == 404) {
        *exists = 0;
    } else {
        st = ollama_check(h, &r, "HEAD /api/blobs", err);
        if (st == SN_OK) st = sn_err_set(err, SN_EIO, "HEAD %s: unexpected HTTP %ld", path, r.status);
    }
    sn_http_resp_free(&r);
    return st;
}

sn_status sn_ollama_blob_upload(sn_http *h, const char *path, const char *digest,
                                sn_http_progress_fn progress, void *progress_ud,
                                sn_ollama_status_fn status, void *status_ud, sn_err *err) {
    char url[128];
    snprintf(url, sizeof url, "/api/blobs/%s", digest);
    for (int attempt = 0; attempt < 2; attempt++) {
        sn_http_req rq = {.method = "POST", .path = url, .upload_path = path,
                          .on_progress = progress, .progress_ud = progress_ud};
        sn_http_resp r;
        sn_status st = sn_http_do(h, &rq, &r, err);
        int transient = 0;
        if (st != SN_OK) {
            if (st == SN_ENOMEM) { sn_http_resp_free(&r); return st; }
            transient = r.cls != SN_HTTP_REFUSED && r.cls != SN_HTTP_RESOLVE;
            if (!transient || attempt == 1) {
                st = explain_transport(h, &r, err);
                sn_err_prefix(err, "uploading %s", path);
                sn_http_resp_free(&r);
                return st;
            }
        } else if (r.status == 200 || r.status == 201) {
            sn_http_resp_free(&r);
            return SN_OK;
        } else if (r.status == 400) {
            char e[512];
            sn_http_json_error(r.body, e, sizeof e);
            if (strstr(e, "digest mismatch"))
                st = sn_err_set(err, SN_EIO,
                                "uploading %s: Ollama says %s — the bytes it received do not hash to "
                                "the digest we computed (file changed during upload, or something "
                                "rewrote the body on the way)",
                                path, e);
            else st = ollama_check(h, &r, "POST /api/blobs", err);
            sn_http_resp_free(&r);
            return st;
        } else if (r.status >= 500 && r.cls != SN_HTTP_PROXY) {
            transient = 1;
            st = ollama_check(h, &r, "POST /api/blobs", err);
            if (attempt == 1) {
                sn_http_resp_free(&r);
                return st;
            }
        } else {
            st = ollama_check(h, &r, "POST /api/blobs", err);
            if (st == SN_OK) st = sn_err_set(err, SN_EIO, "POST %s: unexpected HTTP %ld", url, r.status);
            sn_http_resp_free(&r);
            return st;
        }
        sn_http_resp_free(&r);
        if (status) {
            char line[1200];
            snprintf(line, sizeof line, "upload failed (%s); retrying once", err->msg);
            status(status_ud, line);
        }
        sleep(1);
    }
    return sn_err_set(err, SN_EIO, "uploading %s failed", path);
}

/* ------------------------------------------------------------------------------------------------
 * Create (NDJSON) */

typedef struct create_ctx {
    sn_ollama_status_fn status;
    void *ud;
    sn_err *err;
    int failed;
    int success;
    int lines;
} create_ctx;

static int create_line(void *ud, const char *line, size_t len) {
    create_ctx *c = ud;
    c->lines++;
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!j) {
        sn_err_set(c->err, SN_EIO, "POST /api/create: line %d of the answer is not JSON: '%.120s'",
                   c->lines, line);
        c->failed = 1;
        return 1;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (e) {
        sn_err_set(c->err, SN_EIO, "POST /api/create: Ollama reported an error mid-stream (line %d, "
                   "HTTP 200): %s", c->lines, cJSON_IsString(e) ? e->valuestring : "(non-string error)");
        c->failed = 1;
        cJSON_Delete(j);
        return 1;
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "status");
    if (cJSON_IsString(s)) {
        if (strcmp(s->valuestring, "success") == 0) c->success = 1;
        if (c->status) {
            const cJSON *tot = cJSON_GetObjectItemCaseSensitive(j, "total");
            const cJSON *com = cJSON_GetObjectItemCaseSensitive(j, "completed");
            if (cJSON_IsNumber(tot) && cJSON_IsNumber(com) && tot->valuedouble > 0) {
                char b[512];
                snprintf(b, sizeof b, "%s (%.0f%%)", s->valuestring, 100.0 * com->valuedouble / tot->valuedouble);
                c->status(c->ud, b);
            } else {
                c->status(c->ud, s->valuestring);
            }
        }
    }
    cJSON_Delete(j);
    return 0;
}

sn_status sn_ollama_create(sn_http *h, const char *body, sn_ollama_status_fn status, void *ud,
                           sn_err *err) {
    create_ctx c = {.status = status, .ud = ud, .err = err};
    sn_http_req rq = {.method = "POST", .path = "/api/create", .json = body, .on_line = create_line,
                      .line_ud = &c, .stall_s = 1800};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    if (st != SN_OK) {
        if (st != SN_ENOMEM) st = explain_transport(h, &r, err);
    } else if (r.cls == SN_HTTP_ABORTED || c.failed) {
        st = SN_EIO;
    } else if (r.cls != SN_HTTP_OK) {
        char e[512];
        sn_http_json_error(r.body, e, sizeof e);
        if (strstr(e, "path or Modelfile are required"))
            st = sn_err_set_detail(err, SN_EIO, SN_OLLAMA_WANTS_LEGACY_BODY,
                            "POST /api/create: the server answered '%s': it is older than 0.5.5 "
                            "and does not understand the JSON create body (version probe said "
                            "otherwise?)", e);
        else if (strstr(e, "neither 'from' or 'files' was specified"))
            st = sn_err_set_detail(err, SN_EIO, SN_OLLAMA_WANTS_JSON_BODY,
                            "POST /api/create: the server answered '%s': it is 0.5.5 or newer and "
                            "ignores the legacy 'modelfile' body", e);
        else st = ollama_check(h, &r, "POST /api/create", err);
    } else if (!c.success) {
        st = sn_err_set(err, SN_EIO,
                        "POST /api/create: the stream ended after %d line(s) without {\"status\":"
                        "\"success\"}", c.lines);
    }
    sn_http_resp_free(&r);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Show / verify */

sn_status sn_ollama_show(sn_http *h, const char *name, cJSON **out, sn_err *err) {
    *out = NULL;
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", name);
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    sn_http_req rq = {.method = "POST", .path = "/api/show", .json = body, .timeout_s = 120};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    free(body);
    if (st != SN_OK) {
        if (st != SN_ENOMEM) st = explain_transport(h, &r, err);
    } else if (r.cls != SN_HTTP_OK) {
        st = ollama_check(h, &r, "POST /api/show", err);
    } else {
        *out = cJSON_Parse(r.body);
        if (!*out) st = sn_err_set(err, SN_EIO, "POST /api/show: the answer is not JSON");
    }
    sn_http_resp_free(&r);
    return st;
}

int sn_ollama_go_unquote(const char *s, size_t n, char *out, size_t cap) {
    if (n < 2 || s[0] != '"' || s[n - 1] != '"' || cap == 0) return 0;
    size_t o = 0;
    const char *p = s + 1, *e = s + n - 1;
#define PUT(c) do { if (o + 1 < cap) out[o++] = (char)(c); } while (0)
    while (p < e) {
        if (*p != '\\') { PUT(*p++); continue; }
        if (++p >= e) return 0;
        char c = *p++;
        switch (c) {
        case 'a': PUT('\a'); break;
        case 'b': PUT('\b'); break;
        case 'f': PUT('\f'); break;
        case 'n': PUT('\n'); break;
        case 'r': PUT('\r'); break;
        case 't': PUT('\t'); break;
        case 'v': PUT('\v'); break;
        case '\\': PUT('\\'); break;
        case '"': PUT('"'); break;
        case '\'': PUT('\''); break;
        case 'x': case 'u': case 'U': {
            int len = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            if (e - p < len) return 0;
            unsigned long cp = 0;
            for (int i = 0; i < len; i++) {
                int d = isdigit((unsigned char)p[i]) ? p[i] - '0' : (tolower((unsigned char)p[i]) >= 'a' && tolower((unsigned char)p[i]) <= 'f') ? tolower((unsigned char)p[i]) - 'a' + 10 : -1;
                if (d < 0) return 0;
                cp = cp * 16 + (unsigned long)d;
            }
            p += len;
            if (c == 'x') { PUT(cp); break; }
            /* UTF-8 encode the rune */
            if (cp < 0x80) PUT(cp);
            else if (cp < 0x800) { PUT(0xC0 | (cp >> 6)); PUT(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) { PUT(0xE0 | (cp >> 12)); PUT(0x80 | ((cp >> 6) & 0x3F)); PUT(0x80 | (cp & 0x3F)); }
            else { PUT(0xF0 | (cp >> 18)); PUT(0x80 | ((cp >> 12) & 0x3F)); PUT(0x80 | ((cp >> 6) & 0x3F)); PUT(0x80 | (cp & 0x3F)); }
            break;
        }
        default:
            if (c >= '0' && c <= '7') { /* \ooo */
                if (e - p < 2) return 0;
                PUT(((c - '0') << 6) | ((p[0] - '0') << 3) | (p[1] - '0'));
                p += 2;
            } else return 0;
        }
    }
#undef PUT
    out[o] = 0;
    return 1;
}

/* Parses the preformatted "parameters" string of /api/show (`stop    "<|im_end|>"` lines, each value
 * printed with Go's %#v, so control characters come back escaped) and returns 1 if stop value v is
 * listed. */
static int show_has_stop(const char *params, const char *v) {
    if (!params) return 0;
    const char *p = params;
    size_t vl = strlen(v);
    char *buf = malloc(strlen(params) + 1);
    if (!buf) return 0;
    int found = 0;
    while (*p && !found) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 4 && strncmp(p, "stop", 4) == 0 && (p[4] == ' ' || p[4] == '\t')) {
            const char *q = p + 4;
            while (q < p + n && (*q == ' ' || *q == '\t')) q++;
            size_t rest = (size_t)(p + n - q);
            if (sn_ollama_go_unquote(q, rest, buf, strlen(params) + 1)) found = strlen(buf) == vl && memcmp(buf, v, vl) == 0;
            else found = rest == vl && memcmp(q, v, vl) == 0; /* an unquoted value (old servers) */
        }
        p += n;
        if (*p == '\n') p++;
    }
    free(buf);
    return found;
}

sn_ollama_tmpl_sel sn_ollama_selected_template(const cJSON *show, const sn_ollama_model_spec *m) {
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(show, "template");
    const char *t = cJSON_IsString(tmpl) ? tmpl->valuestring : "";
    if (m->template_text && strcmp(t, m->template_text) == 0) return SN_OLLAMA_TMPL_GO;
    if (m->gguf_chat_template && m->gguf_chat_template[0] && strcmp(t, m->gguf_chat_template) == 0)
        return SN_OLLAMA_TMPL_JINJA;
    if (!m->template_text) return SN_OLLAMA_TMPL_SERVER;
    return SN_OLLAMA_TMPL_OTHER;
}

const char *sn_ollama_tmpl_sel_name(sn_ollama_tmpl_sel s) {
    switch (s) {
    case SN_OLLAMA_TMPL_GO: return "go_template";
    case SN_OLLAMA_TMPL_JINJA: return "gguf_chat_template";
    case SN_OLLAMA_TMPL_SERVER: return "server_default";
    default: return "other";
    }
}

sn_status sn_ollama_verify_show(const cJSON *show, const sn_ollama_model_spec *m, const char *arch,
                                char *note, size_t note_cap, sn_err *err) {
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(show, "details");
    const cJSON *family = details ? cJSON_GetObjectItemCaseSensitive(details, "family") : NULL;
    const cJSON *ql = details ? cJSON_GetObjectItemCaseSensitive(details, "quantization_level") : NULL;
    if (arch && cJSON_IsString(family) && strcmp(family->valuestring, arch) != 0)
        return sn_err_set(err, SN_EIO, "/api/show: family is '%s' but the GGUF's architecture is '%s'",
                          family->valuestring, arch);
    if (arch && !cJSON_IsString(family))
        return sn_err_set(err, SN_EIO, "/api/show: no details.family in the answer");
    sn_ollama_tmpl_sel sel = sn_ollama_selected_template(show, m);
    if (sel == SN_OLLAMA_TMPL_OTHER)
        return sn_err_set(err, SN_EIO,
                          "/api/show: the template the server reports is neither the one sent nor the GGUF's "
                          "own chat template");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(show, "parameters");
    const cJSON *stop = m->parameters ? cJSON_GetObjectItemCaseSensitive(m->parameters, "stop") : NULL;
    int n_stop = 0;
    if (cJSON_IsArray(stop)) {
        const cJSON *s;
        cJSON_ArrayForEach(s, stop) {
            if (!cJSON_IsString(s)) continue;
            if (!show_has_stop(cJSON_IsString(params) ? params->valuestring : NULL, s->valuestring))
                return sn_err_set(err, SN_EIO, "/api/show: stop parameter \"%s\" was not stored",
                                  s->valuestring);
            n_stop++;
        }
    }
    static const char *const what[] = {
        [SN_OLLAMA_TMPL_GO] = "the Go TEMPLATE sent",
        [SN_OLLAMA_TMPL_JINJA] = "the GGUF's own Jinja chat template",
        [SN_OLLAMA_TMPL_SERVER] = "the server's own",
        [SN_OLLAMA_TMPL_OTHER] = "?"};
    if (note)
        snprintf(note, note_cap, "family %s, quantization %s, %d stop value(s) stored; chat uses %s%s",
                 cJSON_IsString(family) ? family->valuestring : "?",
                 cJSON_IsString(ql) ? ql->valuestring : "?", n_stop, what[sel],
                 sel == SN_OLLAMA_TMPL_JINJA && m->template_text
                     ? " (Ollama >= 0.30 prefers the Jinja when it exposes more capabilities - tools, thinking - "
                       "than the Go TEMPLATE, or when the server runs with OLLAMA_GO_TEMPLATE=0; the TEMPLATE "
                       "sent is stored but unused)"
                     : "");
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Generate */

void sn_ollama_gen_free(sn_ollama_gen *g) {
    free(g->text);
    free(g->context);
    sn_smoke_tokens_free(g->toks, g->n_toks);
    memset(g, 0, sizeof *g);
}

/* "logprobs": [{"token","logprob","bytes","top_logprobs":[{"token","logprob","bytes"}]}] (api/types.go
 * Logprob). The text is taken from "bytes" when present (exact bytes), else from "token". */
static char *lp_text(const cJSON *o) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");
    if (cJSON_IsArray(b)) {
        int n = cJSON_GetArraySize(b);
        char *s = malloc((size_t)n + 1);
        if (!s) return NULL;
        int i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, b) s[i++] = (char)(unsigned char)(cJSON_IsNumber(it) ? it->valueint : '?');
        s[i] = 0;
        return s;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "token");
    return strdup(cJSON_IsString(t) ? t->valuestring : "");
}

static sn_status parse_logprobs(const cJSON *lps, sn_ollama_gen *out, sn_err *err) {
    size_t n = (size_t)cJSON_GetArraySize(lps);
    out->has_logprobs = 1;
    if (n == 0) return SN_OK;
    out->toks = calloc(n, sizeof *out->toks);
    if (!out->toks) return sn_err_set(err, SN_ENOMEM, "out of memory");
    const cJSON *e;
    cJSON_ArrayForEach(e, lps) {
        sn_smoke_token *t = &out->toks[out->n_toks++];
        t->text = lp_text(e);
        if (!t->text) return sn_err_set(err, SN_ENOMEM, "out of memory");
        const cJSON *lp = cJSON_GetObjectItemCaseSensitive(e, "logprob");
        t->logprob = cJSON_IsNumber(lp) ? lp->valuedouble : NAN;
        t->gap = NAN;
        const cJSON *top = cJSON_GetObjectItemCaseSensitive(e, "top_logprobs");
        if (cJSON_IsArray(top) && cJSON_GetArraySize(top) >= 2) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(top, 0), "logprob");
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(top, 1), "logprob");
            if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) t->gap = a->valuedouble - b->valuedouble;
        }
    }
    return SN_OK;
}

sn_status sn_ollama_generate(sn_http *h, const cJSON *body, sn_ollama_gen *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    out->eval_count = -1;
    out->prompt_eval_count = -1;
    char *js = cJSON_PrintUnformatted(body);
    if (!js) return sn_err_set(err, SN_ENOMEM, "out of memory");
    /* stream:false sends nothing until done; loading a big model may take minutes (OLLAMA_LOAD_TIMEOUT
     * defaults to 5 min), so allow a long silence. */
    sn_http_req rq = {.method = "POST", .path = "/api/generate", .json = js, .stall_s = 1800};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    free(js);
    if (st != SN_OK) {
        if (st != SN_ENOMEM) st = explain_transport(h, &r, err);
        sn_http_resp_free(&r);
        return st;
    }
    if (r.cls != SN_HTTP_OK) {
        st = ollama_check(h, &r, "POST /api/generate", err);
        sn_http_resp_free(&r);
        return st;
    }
    cJSON *j = cJSON_Parse(r.body);
    sn_http_resp_free(&r);
    if (!j) return sn_err_set(err, SN_EIO, "POST /api/generate: the answer is not JSON");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *resp = cJSON_GetObjectItemCaseSensitive(j, "response");
    if (e || !cJSON_IsString(resp)) {
        st = sn_err_set(err, SN_EIO, "POST /api/generate: %s",
                        cJSON_IsString(e) ? e->valuestring : "no \"response\" in the answer");
        cJSON_Delete(j);
        return st;
    }
    out->text = strdup(resp->valuestring);
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(j, "context");
    if (cJSON_IsArray(ctx) && cJSON_GetArraySize(ctx) > 0) {
        size_t n = (size_t)cJSON_GetArraySize(ctx);
        out->context = malloc(n * sizeof(int32_t));
        if (out->context) {
            const cJSON *it;
            cJSON_ArrayForEach(it, ctx) out->context[out->n_context++] = (int32_t)it->valuedouble;
        }
    }
    const cJSON *ec = cJSON_GetObjectItemCaseSensitive(j, "eval_count");
    if (cJSON_IsNumber(ec)) out->eval_count = (int64_t)ec->valuedouble;
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive(j, "prompt_eval_count");
    if (cJSON_IsNumber(pc)) out->prompt_eval_count = (int64_t)pc->valuedouble;
    out->done = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "done"));
    const cJSON *lps = cJSON_GetObjectItemCaseSensitive(j, "logprobs");
    if (cJSON_IsArray(lps) && (st = parse_logprobs(lps, out, err)) != SN_OK) {
        cJSON_Delete(j);
        sn_ollama_gen_free(out);
        return st;
    }
    const cJSON *dr = cJSON_GetObjectItemCaseSensitive(j, "done_reason");
    if (cJSON_IsString(dr)) snprintf(out->done_reason, sizeof out->done_reason, "%s", dr->valuestring);
    cJSON_Delete(j);
    if (strcmp(out->done_reason, "load") == 0) { /* GenerateHandler: an empty prompt only loads */
        sn_ollama_gen_free(out);
        return sn_err_set(err, SN_EINVAL,
                          "POST /api/generate: the server only loaded the model (done_reason \"load\"): Ollama "
                          "answers an empty prompt that way and generates nothing; give a non-empty prompt");
    }
    if (!out->text) return sn_err_set(err, SN_ENOMEM, "out of memory");
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Smoke */

static cJSON *gen_body(const char *name, const char *prompt, int raw, int n_predict, int64_t seed,
                       int num_ctx, int logprobs) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", name);
    cJSON_AddStringToObject(b, "prompt", prompt);
    if (raw) cJSON_AddBoolToObject(b, "raw", 1);
    else cJSON_AddStringToObject(b, "template", "{{ .Prompt }}");
    cJSON_AddBoolToObject(b, "stream", 0);
    if (logprobs) {
        cJSON_AddBoolToObject(b, "logprobs", 1);
        cJSON_AddNumberToObject(b, "top_logprobs", 2);
    }
    cJSON *o = cJSON_AddObjectToObject(b, "options");
    cJSON_AddNumberToObject(o, "temperature", 0);
    cJSON_AddNumberToObject(o, "top_k", 1);
    cJSON_AddNumberToObject(o, "top_p", 1.0);
    cJSON_AddNumberToObject(o, "min_p", 0.0);
    cJSON_AddNumberToObject(o, "repeat_penalty", 1.0); /* Ollama's default 1.1 would bend greedy */
    cJSON_AddNumberToObject(o, "seed", (double)seed);
    cJSON_AddNumberToObject(o, "num_predict", n_predict);
    cJSON_AddNumberToObject(o, "num_ctx", num_ctx);
    return b;
}

sn_status sn_ollama_smoke(sn_http *h, const sn_ollama_version *v, const char *name, const char *prompt,
                          int n_predict, int64_t seed, int num_ctx, const sn_smoke_local *ours,
                          sn_smoke_result *res, sn_err *err) {
    /* logprobs/top_logprobs exist since 0.12.11; older servers ignore the fields */
    int want_lp = !v || sn_ollama_version_cmp(v, 0, 12, 11) >= 0;
    cJSON *b = gen_body(name, prompt, 1, n_predict, seed, num_ctx, want_lp);
    sn_ollama_gen raw;
    sn_status st = sn_ollama_generate(h, b, &raw, err);
    cJSON_Delete(b);
    if (st) return sn_err_prefix(err, "smoke (raw generate)");
    int stopped = strcmp(raw.done_reason, "stop") == 0;
    /* llamaServerRunner.Completion's repetition abort ends the stream without a final chunk */
    int truncated = !raw.done && !raw.done_reason[0];
    if (raw.has_logprobs) {
        st = sn_smoke_compare_tokens(ours, raw.toks, raw.n_toks, stopped, truncated, res, err);
    } else {
        st = sn_smoke_compare(ours, raw.text, NULL, 0, stopped, res, err);
        if (st == SN_OK) {
            res->truncated = truncated;
            if (truncated && res->diverged) {
                /* the server said less than we did because it was cut short, not because it differs */
                size_t ol = strlen(res->ours_text), tl = strlen(raw.text);
                if (tl <= ol && memcmp(res->ours_text, raw.text, tl) == 0) {
                    res->diverged = 0;
                    res->tie = 0;
                    res->n_identical = res->n_compared = res->pos;
                }
            }
            snprintf(res->method, sizeof res->method, "text, byte for byte (%s)",
                     want_lp ? "the server sent no logprobs" : "Ollama < 0.12.11 has no logprobs");
        }
    }
    if (st == SN_OK && !truncated) sn_smoke_prompt_count_check(ours, raw.prompt_eval_count, res);
    /* The re-tokenized context: a non-raw call with the template "{{ .Prompt }}" (so the prompt is
     * rendered as is). Only checked when its answer is the raw one's (same computation). */
    if (st == SN_OK && !res->prompt_diff[0]) {
        b = gen_body(name, prompt, 0, n_predict, seed, num_ctx, 0);
        sn_ollama_gen ctx;
        sn_err e2 = {0};
        if (sn_ollama_generate(h, b, &ctx, &e2) != SN_OK)
            snprintf(res->context_note, sizeof res->context_note, "not checked (%s)", e2.msg);
        else if (!ctx.context)
            snprintf(res->context_note, sizeof res->context_note, "not checked (the server sent no context)");
        else if (strcmp(ctx.text, raw.text) != 0)
            snprintf(res->context_note, sizeof res->context_note,
                     "not checked (the non-raw answer differs from the raw one)");
        else
            st = sn_smoke_context_check(ours, prompt, ctx.text, ctx.context, ctx.n_context, res, err);
        sn_ollama_gen_free(&ctx);
        cJSON_Delete(b);
    }
    sn_ollama_gen_free(&raw);
    return st;
}
