/* http.c - libcurl wrapper for integrate/ (see http.h): loopback never proxied, bodies streamed from
 * files, NDJSON delivered line by line, failures classified for actionable messages. */
#include "http.h"
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef SN_VERSION
#define SN_VERSION "0"
#endif

#include "budget.h"
#include "mapfile.h"

struct sn_http {
    char *base;      /* without trailing '/' */
    char host[256];  /* as in the URL, brackets removed */
    char scheme[16];
    int loopback;
    sn_env env;
    long stall_s; /* default stall limit of this handle's requests */
    long load_s;  /* first-byte limit of its loads_model requests */
};

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int sn_http_host_is_loopback(const char *host) {
    if (!host || !*host) return 0;
    char h[256];
    size_t n = strlen(host);
    if (n >= sizeof h) return 0;
    memcpy(h, host, n + 1);
    if (h[0] == '[' && n >= 2 && h[n - 1] == ']') { /* [::1] */
        memmove(h, h + 1, n - 2);
        h[n - 2] = 0;
        n -= 2;
    }
    while (n > 0 && h[n - 1] == '.') h[--n] = 0; /* "localhost." */
    if (strcasecmp(h, "localhost") == 0) return 1;
    if (n > 10 && strcasecmp(h + n - 10, ".localhost") == 0) return 1;
    struct in_addr a4;
    if (inet_pton(AF_INET, h, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    struct in6_addr a6;
    if (inet_pton(AF_INET6, h, &a6) == 1) {
        static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        if (memcmp(a6.s6_addr, lo, 16) == 0) return 1;
        static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a6.s6_addr, v4mapped, 12) == 0 && a6.s6_addr[12] == 127) return 1;
    }
    return 0;
}

sn_status sn_http_new(const char *base_url, const sn_env *env, sn_http **out, sn_err *err) {
    *out = NULL;
    pthread_once(&g_curl_once, curl_init_once);
    CURLU *u = curl_url();
    if (!u) return sn_err_set(err, SN_ENOMEM, "out of memory");
    char *host = NULL, *scheme = NULL;
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, base_url, 0);
    if (uc == CURLUE_OK) uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
    if (uc == CURLUE_OK) uc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    if (uc != CURLUE_OK) {
        curl_url_cleanup(u);
        curl_free(host);
        curl_free(scheme);
        return sn_err_set(err, SN_EINVAL, "invalid server URL '%s': %s", base_url,
                          curl_url_strerror(uc));
    }
    if (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0) {
        sn_status st = sn_err_set(err, SN_EINVAL, "server URL '%s': scheme '%s' is not http or https", base_url, scheme);
        curl_url_cleanup(u);
        curl_free(host);
        curl_free(scheme);
        return st;
    }
    sn_http *h = calloc(1, sizeof *h);
    size_t bl = strlen(base_url);
    while (bl > 0 && base_url[bl - 1] == '/') bl--;
    if (h) h->base = strndup(base_url, bl);
    if (!h || !h->base) {
        if (h) free(h->base);
        free(h);
        curl_url_cleanup(u);
        curl_free(host);
        curl_free(scheme);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    const char *hs = host;
    size_t hl = strlen(hs);
    if (hl >= 2 && hs[0] == '[' && hs[hl - 1] == ']') { hs++; hl -= 2; }
    if (hl >= sizeof h->host) hl = sizeof h->host - 1;
    memcpy(h->host, hs, hl);
    h->host[hl] = 0;
    snprintf(h->scheme, sizeof h->scheme, "%s", scheme);
    h->loopback = sn_http_host_is_loopback(h->host);
    if (env) h->env = *env;
    h->stall_s = SN_HTTP_STALL_S;
    if (env && env->http_stall_s) { /* a positive whole number of seconds, else ignored */
        char *end;
        long v = strtol(env->http_stall_s, &end, 10);
        if (end != env->http_stall_s && !*end && v > 0 && v <= 3600) h->stall_s = v;
    }
    h->load_s = SN_HTTP_LOAD_S;
    curl_free(host);
    curl_free(scheme);
    curl_url_cleanup(u);
    *out = h;
    return SN_OK;
}

void sn_http_free(sn_http *h) {
    if (!h) return;
    free(h->base);
    free(h);
}

void sn_http_set_stall(sn_http *h, long seconds) { h->stall_s = seconds > 0 ? seconds : SN_HTTP_STALL_S; }
void sn_http_set_load(sn_http *h, long seconds) { h->load_s = seconds > 0 ? seconds : SN_HTTP_LOAD_S; }

const char *sn_http_base(const sn_http *h) { return h->base; }
const char *sn_http_hostname(const sn_http *h) { return h->host; }
const sn_env *sn_http_env(const sn_http *h) { return &h->env; }

int sn_http_is_loopback(const sn_http *h) { return h->loopback; }

void sn_http_resp_free(sn_http_resp *resp) {
    if (!resp) return;
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
}

/* ---- transfer state ---- */
typedef struct xfer {
    CURL *c;
    const sn_http_req *req;
    sn_http_resp *resp;
    size_t cap;
    int mode;           /* 0 undecided, 1 collect, 2 lines */
    sn_ndjson nd;       /* line mode: the partial line; why it stopped */
    int oom;
    int body_too_long; /* a collected 2xx body passed SN_BUDGET_JSON_BODY */
    long stall_s;       /* seconds without a byte moving either way that count as a stall */
    long load_s;        /* the same before the answer's first byte (a model load), when longer */
    curl_off_t moved;   /* bytes up + down at the last change */
    double moved_at;    /* when they last changed */
    int stalled;        /* 1: nothing moved for stall_s; 2: no answer byte within load_s */
    FILE *upload;
} xfer;

static int append(char **buf, size_t *len, size_t *cap, const char *p, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap : 4096;
        while (nc < *len + n + 1) nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return -1;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = 0;
    return 0;
}

static int emit_line(sn_ndjson *s, sn_http_line_fn fn, void *ud) {
    size_t len = s->len;
    if (len > 0 && s->line[len - 1] == '\r') s->line[--len] = 0;
    if (len == 0) return 0;
    if (fn(ud, s->line, len)) {
        s->aborted = 1;
        return -1;
    }
    return 0;
}

int sn_ndjson_feed(sn_ndjson *s, const char *p, size_t n, sn_http_line_fn fn, void *ud) {
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(p + i, '\n', n - i);
        size_t take = nl ? (size_t)(nl - (p + i)) : n - i;
        if (s->len + take > SN_BUDGET_NDJSON_LINE) { s->too_long = 1; return -1; }
        if (append(&s->line, &s->len, &s->cap, p + i, take)) { s->oom = 1; return -1; }
        i += take;
        if (nl) {
            i++;
            if (emit_line(s, fn, ud)) return -1;
            s->len = 0;
            if (s->line) s->line[0] = 0;
        }
    }
    return 0;
}

int sn_ndjson_end(sn_ndjson *s, sn_http_line_fn fn, void *ud) {
    return s->aborted || s->len == 0 ? 0 : emit_line(s, fn, ud);
}

void sn_ndjson_free(sn_ndjson *s) {
    free(s->line);
    memset(s, 0, sizeof *s);
}

static size_t on_write(char *p, size_t sz, size_t nm, void *ud) {
    xfer *x = ud;
    size_t n = sz * nm;
    if (x->mode == 0) {
        long st = 0;
        curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &st);
        x->mode = (x->req->on_line && st >= 200 && st < 300) ? 2 : 1;
    }
    if (x->mode == 1) {
        if (x->resp->len + n > SN_BUDGET_JSON_BODY) {
            long st = 0;
            curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &st);
            if (st < 200 || st >= 300) return n; /* an error page: its head says enough */
            x->body_too_long = 1; /* an answer we would parse: stop, and say which budget */
            return 0;
        }
        if (append(&x->resp->body, &x->resp->len, &x->cap, p, n)) { x->oom = 1; return 0; }
        return n;
    }
    if (sn_ndjson_feed(&x->nd, p, n, x->req->on_line, x->req->line_ud)) {
        x->oom |= x->nd.oom;
        return 0;
    }
    return n;
}

static size_t on_read(char *p, size_t sz, size_t nm, void *ud) {
    xfer *x = ud;
    size_t n = fread(p, 1, sz * nm, x->upload);
    if (n == 0 && ferror(x->upload)) return CURL_READFUNC_ABORT;
    return n;
}

static double mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libcurl calls this at least once a second: upload progress for the caller, and the stall check —
 * no byte moved either way for stall_s seconds ends the transfer (a slow transfer that moves never
 * does; curl's LOW_SPEED_* averages over a window, so a few early bytes hide a stall for seconds). */
static int on_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    (void)dltotal;
    xfer *x = ud;
    if (x->req->on_progress && ultotal > 0)
        x->req->on_progress(x->req->progress_ud, (uint64_t)ulnow, (uint64_t)ultotal);
    double t = mono_now();
    if (dlnow + ulnow != x->moved || x->moved_at == 0) {
        x->moved = dlnow + ulnow;
        x->moved_at = t;
    } else if (t - x->moved_at >= (double)(dlnow == 0 && x->load_s > x->stall_s ? x->load_s : x->stall_s)) {
        x->stalled = dlnow == 0 && x->load_s > x->stall_s ? 2 : 1;
        return 1;
    }
    return 0;
}

static sn_http_class classify_status(long st, const char *ctype) {
    if (ctype && strncasecmp(ctype, "text/html", 9) == 0) return SN_HTTP_PROXY;
    if (st >= 200 && st < 300) return SN_HTTP_OK;
    if (st == 403) return SN_HTTP_FORBIDDEN;
    if (st == 502 || st == 503 || st == 504) return SN_HTTP_PROXY;
    return SN_HTTP_STATUS;
}

sn_status sn_http_do(sn_http *h, const sn_http_req *req, sn_http_resp *resp, sn_err *err) {
    memset(resp, 0, sizeof *resp);
    xfer x = {0};
    x.req = req;
    x.resp = resp;
    size_t pl = strlen(h->base) + strlen(req->path) + 1;
    char *url = malloc(pl);
    CURL *c = curl_easy_init();
    if (!url || !c) {
        free(url);
        if (c) curl_easy_cleanup(c);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    snprintf(url, pl, "%s%s", h->base, req->path);
    x.c = c;
    struct curl_slist *hdrs = NULL;
    hdrs = curl_slist_append(hdrs, "Expect:");
    if (req->bearer && *req->bearer) {
        char auth[1024];
        snprintf(auth, sizeof auth, "Authorization: Bearer %.990s", req->bearer);
        hdrs = curl_slist_append(hdrs, auth);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "sunny-integrate/" SN_VERSION);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    /* http(s) only, redirects included: a URL or a redirect must not make libcurl speak ftp, dict,
     * gopher, file, ... (CURLOPT_PROTOCOLS_STR is 7.85+; Debian 12 has 7.88) */
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    /* stalled = no byte moved either way for the stall time (on_xferinfo) */
    const long stall = req->stall_s > 0 ? req->stall_s : h->stall_s;
    x.stall_s = stall;
    x.load_s = req->loads_model ? h->load_s : 0;
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    if (req->timeout_s > 0) curl_easy_setopt(c, CURLOPT_TIMEOUT, req->timeout_s);
    /* The point of this file: a loopback server is never reached through a proxy. */
    if (h->loopback) curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);

    const char *m = req->method ? req->method : "GET";
    sn_status st = SN_OK;
    if (strcmp(m, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (strcmp(m, "GET") != 0 || req->json || req->upload_path) {
        if (strcmp(m, "POST") != 0) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m);
        if (req->upload_path) {
            int ufd = sn_open_regular(req->upload_path, err); /* a FIFO is refused, not waited on */
            if (ufd < 0) { st = SN_EIO; goto done; }
            x.upload = fdopen(ufd, "rb");
            struct stat sb;
            if (!x.upload || fstat(fileno(x.upload), &sb) != 0) {
                if (!x.upload) close(ufd);
                st = sn_err_set(err, SN_EIO, "%s: %s", req->upload_path, strerror(errno));
                goto done;
            }
            hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
            curl_easy_setopt(c, CURLOPT_POST, 1L);
            curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(c, CURLOPT_READDATA, &x);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)sb.st_size);
        } else {
            const char *b = req->json ? req->json : "";
            hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, b);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(b));
        }
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);

    CURLcode rc = curl_easy_perform(c);
    if (x.mode == 2 && rc == CURLE_OK) sn_ndjson_end(&x.nd, req->on_line, req->line_ud);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
    char *ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    if (ct) snprintf(resp->content_type, sizeof resp->content_type, "%s", ct);
    if (!resp->body) {
        resp->body = calloc(1, 1);
        if (!resp->body) x.oom = 1;
    }
    if (x.oom) {
        st = sn_err_set(err, SN_ENOMEM, "out of memory reading the answer of %s", url);
        goto done;
    }
    if (x.nd.too_long || x.body_too_long) {
        resp->cls = SN_HTTP_NETWORK;
        if (x.nd.too_long)
            snprintf(resp->transport_error, sizeof resp->transport_error, "%s %s: a line of the streamed reply is "
                     "longer than the %u KB budget (SN_BUDGET_NDJSON_LINE, budget.h); stopped reading", m, req->path,
                     SN_BUDGET_NDJSON_LINE >> 10);
        else
            snprintf(resp->transport_error, sizeof resp->transport_error, "%s %s: the reply is longer than the %u MB "
                     "budget for a JSON body (SN_BUDGET_JSON_BODY, budget.h); stopped reading", m, req->path,
                     SN_BUDGET_JSON_BODY >> 20);
        st = sn_err_set(err, SN_EIO, "%s", resp->transport_error);
        goto done;
    }
    if (x.nd.aborted) {
        resp->cls = SN_HTTP_ABORTED;
        goto done; /* the callback recorded why */
    }
    if (rc != CURLE_OK) {
        double secs = 0;
        curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &secs);
        if (x.stalled == 2) {
            rc = CURLE_OPERATION_TIMEDOUT;
            snprintf(resp->transport_error, sizeof resp->transport_error, "%s %s: no answer within %ld s, the limit "
                     "for a server that loads the model first (SN_HTTP_LOAD_S); the server stalled or the load "
                     "hangs (after %.0f s in all)", m, req->path, x.load_s, secs);
        } else if (x.stalled) {
            rc = CURLE_OPERATION_TIMEDOUT;
            snprintf(resp->transport_error, sizeof resp->transport_error, "%s %s: nothing moved for %ld s, the server "
                     "stalled (after %.0f s in all)", m, req->path, stall, secs);
        } else if (rc == CURLE_OPERATION_TIMEDOUT)
            snprintf(resp->transport_error, sizeof resp->transport_error, "%s %s: no complete answer within %ld s",
                     m, req->path, req->timeout_s);
        else
            snprintf(resp->transport_error, sizeof resp->transport_error, "%s %s: %s", m, req->path, curl_easy_strerror(rc));
        int answered = resp->status > 0 && !(resp->status >= 200 && resp->status < 300);
        if (answered) { /* e.g. the server sent 500 and closed while we were still uploading */
            resp->cls = classify_status(resp->status, resp->content_type);
            goto done;
        }
        switch (rc) {
        case CURLE_COULDNT_CONNECT: resp->cls = SN_HTTP_REFUSED; break;
        case CURLE_COULDNT_RESOLVE_HOST: resp->cls = SN_HTTP_RESOLVE; break;
        case CURLE_COULDNT_RESOLVE_PROXY: resp->cls = SN_HTTP_PROXY; break;
        case CURLE_OPERATION_TIMEDOUT: resp->cls = SN_HTTP_TIMEOUT; break;
        default: resp->cls = SN_HTTP_NETWORK; break;
        }
        /* Through a proxy, "could not connect" / "timed out" is about the proxy, not the server:
         * name it, so the user is not told to start a server that may well be running. */
        char pvar[32], pval[200];
        if (!h->loopback && resp->cls != SN_HTTP_RESOLVE &&
            sn_http_proxy_for(&h->env, h->scheme, h->host, pvar, sizeof pvar, pval, sizeof pval)) {
            resp->cls = SN_HTTP_PROXY;
            snprintf(resp->transport_error, sizeof resp->transport_error,
                     "%s %s: the proxy %s (from %s) did not answer: %s", m, req->path, pval, pvar, curl_easy_strerror(rc));
        }
        st = sn_err_set(err, SN_EIO, "%s (server %s)", resp->transport_error, h->base);
        goto done;
    }
    resp->cls = classify_status(resp->status, resp->content_type);
done:
    if (x.upload) fclose(x.upload);
    sn_ndjson_free(&x.nd);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    free(url);
    return st;
}

char *sn_http_json_streamed(const cJSON *body) {
    cJSON *b = cJSON_Duplicate(body, 1);
    if (!b) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(b, "stream");
    char *js = cJSON_AddBoolToObject(b, "stream", 1) ? cJSON_PrintUnformatted(b) : NULL;
    cJSON_Delete(b);
    return js;
}

void sn_http_json_error(const char *body, char *buf, size_t cap) {
    if (cap) buf[0] = 0;
    if (!body || !*body) return;
    cJSON *j = cJSON_Parse(body);
    if (!j) return;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(e)) snprintf(buf, cap, "%s", e->valuestring);
    else if (cJSON_IsObject(e)) { /* LM Studio: {"error":{"message":...}} */
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
        if (cJSON_IsString(msg)) snprintf(buf, cap, "%s", msg->valuestring);
    }
    cJSON_Delete(j);
}

sn_status sn_http_check(const sn_http *h, const sn_http_resp *resp, const char *server_name,
                        const char *what, sn_err *err) {
    if (resp->cls == SN_HTTP_OK) return SN_OK;
    char e[512];
    sn_http_json_error(resp->body, e, sizeof e);
    if (!e[0] && resp->body && resp->len) { /* show the start of a non-JSON body */
        size_t n = resp->len < 160 ? resp->len : 160;
        size_t j = 0;
        for (size_t i = 0; i < n && j + 1 < sizeof e; i++)
            e[j++] = (resp->body[i] == '\n' || resp->body[i] == '\r') ? ' ' : resp->body[i];
        e[j] = 0;
    }
    switch (resp->cls) {
    case SN_HTTP_PROXY:
        if (h->loopback)
            return sn_err_set(err, SN_EIO,
                              "%s: something other than %s answered at %s (HTTP %ld, %s%s%s); proxies are "
                              "bypassed for loopback, so another program owns that port",
                              what, server_name, h->base, resp->status,
                              resp->content_type[0] ? resp->content_type : "no content type",
                              e[0] ? ": " : "", e);
        return sn_err_set(err, SN_EIO,
                          "%s: something between you and %s answered (HTTP %ld, %s%s%s) — a proxy? Check "
                          "http_proxy/HTTPS_PROXY/ALL_PROXY and add the host to NO_PROXY",
                          what, server_name, resp->status,
                          resp->content_type[0] ? resp->content_type : "no content type",
                          e[0] ? ": " : "", e);
    case SN_HTTP_FORBIDDEN:
        return sn_err_set(err, SN_EIO,
                          "%s: %s at %s answered 403 Forbidden%s%s", what, server_name, h->base,
                          e[0] ? ": " : "", e);
    default:
        return sn_err_set(err, SN_EIO, "%s: %s answered HTTP %ld%s%s", what, server_name,
                          resp->status, e[0] ? ": " : "", e);
    }
}

/* A no_proxy entry "ADDR/BITS" (IPv4 or IPv6) against an IP literal host, as Go's httpproxy
 * (config.init: net.ParseCIDR entries become cidrMatch) and libcurl >= 7.86 treat it. */
static int cidr_matches(const char *s, size_t n, const char *host) {
    char e[64];
    const char *sl = memchr(s, '/', n);
    if (!sl || n >= sizeof e) return 0;
    memcpy(e, s, n);
    e[n] = 0;
    e[sl - s] = 0;
    char *end;
    long bits = strtol(e + (sl - s) + 1, &end, 10);
    unsigned char net[16], ip[16];
    int len = 0;
    if (inet_pton(AF_INET, e, net) == 1 && inet_pton(AF_INET, host, ip) == 1) len = 4;
    else if (inet_pton(AF_INET6, e, net) == 1 && inet_pton(AF_INET6, host, ip) == 1) len = 16;
    if (!len || *end || end == e + (sl - s) + 1 || bits < 0 || bits > 8 * len) return 0;
    for (int i = 0; i < len && bits > 0; i++, bits -= 8) {
        unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;
        if ((net[i] & mask) != (ip[i] & mask)) return 0;
    }
    return 1;
}

static int no_proxy_matches(const sn_env *env, const char *host) {
    const char *np = env->no_proxy;
    if (!np || !*np) np = env->NO_PROXY;
    if (!np || !*np) return 0;
    size_t hl = strlen(host);
    const char *p = np;
    while (*p) {
        while (*p == ',' || *p == ' ') p++;
        const char *s = p;
        while (*p && *p != ',' && *p != ' ') p++;
        size_t n = (size_t)(p - s);
        if (n == 0) continue;
        if (n == 1 && *s == '*') return 1;
        if (memchr(s, '/', n)) {
            if (cidr_matches(s, n, host)) return 1;
            continue;
        }
        if (*s == '.') { s++; n--; }
        if (n == hl && strncasecmp(s, host, n) == 0) return 1;
        if (hl > n && host[hl - n - 1] == '.' && strncasecmp(host + hl - n, s, n) == 0) return 1;
    }
    return 0;
}

int sn_http_proxy_for(const sn_env *env, const char *scheme, const char *host, char *var, size_t var_cap,
                      char *val, size_t val_cap) {
    /* libcurl: "http_proxy" only in lowercase for http; HTTPS_PROXY any case; ALL_PROXY any case. */
    const char *http_names[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    const char *http_vals[] = {env->http_proxy, env->all_proxy, env->ALL_PROXY};
    const char *https_names[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL};
    const char *https_vals[] = {env->https_proxy, env->HTTPS_PROXY, env->all_proxy, env->ALL_PROXY};
    int https = strcasecmp(scheme, "https") == 0;
    const char **names = https ? https_names : http_names, **vals = https ? https_vals : http_vals;
    if (no_proxy_matches(env, host)) return 0;
    for (int i = 0; names[i]; i++) {
        const char *v = vals[i];
        if (v && *v) {
            snprintf(var, var_cap, "%s", names[i]);
            snprintf(val, val_cap, "%s", v);
            return 1;
        }
    }
    return 0;
}
