/* ollama_host.c - which Ollama server: OLLAMA_HOST as Ollama parses it, and its version string.
 *
 * Pure text handling, no I/O: envconfig.Host() and ConnectableHost() (see ollama.h for the rules)
 * and the /api/version answer as major.minor.patch (a development build counts as newest). */
#include "ollama.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
