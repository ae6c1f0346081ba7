/* http.h - the one libcurl wrapper integrate/ uses to talk to Ollama and LM Studio.
 *
 * Why it exists: local model servers are reached through environments full of proxy variables. A
 * libcurl client honours http_proxy/HTTPS_PROXY/ALL_PROXY even for 127.0.0.1, and the user then sees
 * a proxy's 502 or an HTML page instead of the server. Here loopback targets (localhost, *.localhost,
 * 127.0.0.0/8, ::1) never use a proxy, remote hosts honour the proxy variables as libcurl does, and
 * every failure is classified (refused, timeout, proxy-looking answer, 403 Host rule, HTTP error) so
 * cmd/ can print an actionable message. Bodies can be streamed from a file (never loaded whole) and
 * NDJSON responses are delivered line by line. */
#ifndef SN_HTTP_H
#define SN_HTTP_H
#include "sn_env.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef enum sn_http_class {
    SN_HTTP_OK = 0,        /* a 2xx answer */
    SN_HTTP_REFUSED,       /* nothing listens there (connection refused / host unreachable) */
    SN_HTTP_RESOLVE,       /* host name does not resolve */
    SN_HTTP_TIMEOUT,
    SN_HTTP_PROXY,         /* 502/503 or an HTML body: something between us and the server answered */
    SN_HTTP_FORBIDDEN,     /* 403 (Ollama's Host-header rule, LM Studio auth) */
    SN_HTTP_STATUS,        /* any other non-2xx answer; resp.body usually has {"error":...} */
    SN_HTTP_NETWORK,       /* any other transport failure */
    SN_HTTP_ABORTED        /* the line callback asked to stop */
} sn_http_class;

typedef struct sn_http sn_http;

/* Called for each complete line of a 2xx response body when set (the trailing '\n' removed, the line
 * NUL-terminated). Return non-zero to abort the transfer. */
typedef int (*sn_http_line_fn)(void *ud, const char *line, size_t len);
/* NDJSON split into lines, as sn_http_do does for on_line (also alone, for the fuzz harness):
 * feed bytes as they come; each complete line (its "\n" and a "\r" before it removed, empty lines
 * skipped) goes to fn NUL-terminated. A line longer than SN_BUDGET_NDJSON_LINE (budget.h) stops it.
 * feed returns 0 to go on, -1 once stopped: too_long, oom, or aborted (fn returned non-zero). end
 * delivers a last line without "\n". Start from a zeroed struct; free releases the line buffer. */
typedef struct sn_ndjson {
    char *line;
    size_t len, cap;
    int too_long, oom, aborted;
} sn_ndjson;
int sn_ndjson_feed(sn_ndjson *s, const char *p, size_t n, sn_http_line_fn fn, void *ud);
int sn_ndjson_end(sn_ndjson *s, sn_http_line_fn fn, void *ud);
void sn_ndjson_free(sn_ndjson *s);
/* Upload progress (bytes sent so far, total). */
typedef void (*sn_http_progress_fn)(void *ud, uint64_t done, uint64_t total);

typedef struct sn_http_req {
    const char *method;        /* "GET", "HEAD", "POST", "DELETE" */
    const char *path;          /* appended to the base URL, starts with '/' */
    const char *json;          /* request body sent as application/json, or NULL */
    const char *upload_path;   /* stream this file as the raw body (POST), or NULL */
    sn_http_line_fn on_line;   /* NDJSON consumer, or NULL to collect the body */
    void *line_ud;
    sn_http_progress_fn on_progress;
    void *progress_ud;
    long timeout_s;            /* whole transfer; 0 = no limit (the stall limit still applies) */
    long stall_s;              /* abort after this long without a byte moving either way; 0 = the
                                * handle's (sn_http_set_stall, default SN_HTTP_STALL_S) */
    int loads_model;           /* the server may load a model before it answers: until the first
                                * byte of the answer the handle's load limit applies instead
                                * (sn_http_set_load, default SN_HTTP_LOAD_S), then the stall limit */
    const char *bearer;        /* "Authorization: Bearer <token>" when non-NULL (LM Studio auth) */
} sn_http_req;

typedef struct sn_http_resp {
    long status;               /* HTTP status, 0 when no answer arrived */
    sn_http_class cls;
    char *body;                /* NUL-terminated collected body (non-2xx bodies always collected) */
    size_t len;
    char content_type[128];
    char transport_error[512]; /* "METHOD /path: " + what failed, when cls is a transport failure */
} sn_http_resp;

/* Seconds without a byte moving (either way) after which a request is abandoned as stalled: a
 * stalled server is reported within this, a slow but moving transfer never is. The environment's
 * SN_HTTP_STALL_S (1-3600) replaces it for a handle (tests shorten it). */
#define SN_HTTP_STALL_S 60

/* Seconds a request that loads a model (loads_model) may wait for the first byte of its answer.
 * Ollama gives up on a load that makes no progress for 5 minutes (OLLAMA_LOAD_TIMEOUT); the double
 * leaves room for the prompt and, in a non-streamed answer, the few tokens a smoke test asks for. */
#define SN_HTTP_LOAD_S 600

/* base_url: http:// or https://host[:port][/prefix]. Fails on a URL libcurl cannot parse and on
 * any other scheme (libcurl could speak ftp, dict, gopher, file: ... to it). env: the caller's
 * environment (proxy variables, LM Studio's token), copied; NULL = nothing set. */
sn_status sn_http_new(const char *base_url, const sn_env *env, sn_http **out, sn_err *err);
/* The environment the handle was made with (never NULL). */
const sn_env *sn_http_env(const sn_http *h);
/* The stall limit of requests that do not set their own (tests shorten it). */
void sn_http_set_stall(sn_http *h, long seconds);
/* The first-byte limit of loads_model requests (tests shorten it). */
void sn_http_set_load(sn_http *h, long seconds);
void sn_http_free(sn_http *h);
const char *sn_http_base(const sn_http *h);
const char *sn_http_hostname(const sn_http *h);
int sn_http_is_loopback(const sn_http *h);

/* True for localhost, *.localhost, 127.0.0.0/8, ::1 (with or without brackets), ::ffff:127.x. */
int sn_http_host_is_loopback(const char *host);

/* Performs one request. Returns SN_OK when the exchange completed, whatever the status (check
 * resp->cls); SN_EIO with a classified message in err for transport failures (resp->cls tells which).
 * resp must be released with sn_http_resp_free. */
sn_status sn_http_do(sn_http *h, const sn_http_req *req, sn_http_resp *resp, sn_err *err);
void sn_http_resp_free(sn_http_resp *resp);

/* Turns a non-OK response into an error message: "<what>: <server> answered HTTP 400: <error field>"
 * with proxy/403 explanations. Returns SN_OK for a 2xx response. server_name is "Ollama" etc. */
sn_status sn_http_check(const sn_http *h, const sn_http_resp *resp, const char *server_name,
                        const char *what, sn_err *err);

/* body (a JSON object) printed with "stream": true in place of any "stream" it has, malloc'd; NULL
 * when out of memory. Both servers' generating requests are read as streams (a stall is then
 * silence between chunks, not the length of the whole answer). */
struct cJSON;
char *sn_http_json_streamed(const struct cJSON *body);

/* The value of a top-level "error" string in a JSON body, copied into buf (empty if none). */
void sn_http_json_error(const char *body, char *buf, size_t cap);

/* Which proxy variable of env, if any, libcurl would use for this URL's scheme (informational for
 * doctor): writes the variable name and value; returns 0 if none is set. Honours NO_PROXY/no_proxy
 * loosely (exact host or suffix match, "*"). */
int sn_http_proxy_for(const sn_env *env, const char *scheme, const char *host, char *var, size_t var_cap,
                      char *val, size_t val_cap);

#endif
