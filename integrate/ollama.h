/* ollama.h - install a GGUF into Ollama through its HTTP API, without the ollama CLI.
 *
 * Follows shared/reference/ollama.md: OLLAMA_HOST parsed exactly like Ollama's envconfig.Host() (and
 * mapped like ConnectableHost()), GET /api/version first, SHA-256 of the whole file as
 * "sha256:<64 lowercase hex>", HEAD then POST /api/blobs/<digest> streamed from disk (retry once on a
 * transient failure), POST /api/create with files/template/system/parameters/license (servers
 * < 0.5.5 get the legacy {"model","modelfile"} body), NDJSON progress where any {"error":...} line is
 * a failure even under HTTP 200, then POST /api/show to verify what the server stored. Nothing here
 * prints: status lines go through a callback so cmd/ decides how they look. */
#ifndef SN_OLLAMA_H
#define SN_OLLAMA_H
#include "http.h"
#include "sn_err.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* ---- OLLAMA_HOST ---- */
typedef struct sn_ollama_host {
    char scheme[16];
    char host[256];        /* as Host() renders it: canonical IP or name, no brackets; may be "" */
    char port[16];
    char path[256];        /* prefix without the leading '/', may be "" */
    char url[640];         /* Host().String(), e.g. "http://[::1]:11434" */
    char connect_url[640]; /* what we connect to: 0.0.0.0 -> 127.0.0.1, [::] -> [::1], "" -> 127.0.0.1 */
    int bad_port;          /* the port was invalid and the default was used (Ollama logs a warning) */
} sn_ollama_host;

/* value: the raw OLLAMA_HOST (or --host) text; NULL means unset. Never fails: like Ollama, anything
 * unparseable falls back to defaults. */
void sn_ollama_parse_host(const char *value, sn_ollama_host *out);

/* ---- version ---- */
typedef struct sn_ollama_version {
    char raw[64];
    int major, minor, patch;
    int dev; /* "0.0.0" or unparseable: a development build, assume newest */
} sn_ollama_version;

void sn_ollama_version_parse(const char *s, sn_ollama_version *v);
/* <0, 0, >0 like strcmp against maj.min.pat; a dev build compares as newer than anything. */
int sn_ollama_version_cmp(const sn_ollama_version *v, int maj, int min, int pat);

/* GET /api/version with actionable errors (no server, proxy, 403 Host rule, not Ollama). */
sn_status sn_ollama_probe(sn_http *h, sn_ollama_version *v, sn_err *err);

/* ---- digest ---- */
/* SHA-256 of the whole file streamed from disk (OpenSSL EVP). hex gets 64 lowercase hex digits. */
sn_status sn_ollama_sha256_file(const char *path, char hex[65], uint64_t *size, double *seconds,
                                sn_err *err);

/* ---- parameters (typed like Ollama's api.Options) ---- */
/* Adds KEY=VALUE to a JSON object with the type Ollama expects: integers as integers, floats as
 * numbers, booleans as booleans, "stop" appended to an array of strings. Unknown or deprecated keys
 * are errors (Ollama's Modelfile parser rejects them too). */
sn_status sn_ollama_param_add(cJSON *params, const char *key, const char *value, sn_err *err);

/* ---- install ---- */
typedef void (*sn_ollama_status_fn)(void *ud, const char *line);

typedef struct sn_ollama_model_spec {
    const char *name;          /* NAME[:TAG] */
    const char *gguf_path;
    const char *template_text; /* Go template, or NULL to rely on the server (GGUF Jinja at >= 0.30) */
    const char *system;        /* or NULL */
    const cJSON *parameters;   /* object or NULL */
    const char *license;       /* or NULL */
} sn_ollama_model_spec;

/* Validates NAME[:TAG] against Ollama's name grammar ([host/][namespace/]model[:tag]). */
sn_status sn_ollama_check_name(const char *name, sn_err *err);

/* The JSON body of POST /api/create (>= 0.5.5). digest is "sha256:<hex>". Caller frees. */
char *sn_ollama_create_body(const sn_ollama_model_spec *m, const char *digest);
/* The legacy body {"model","modelfile":"FROM @sha256:<hex>\n..."} for servers < 0.5.5. */
char *sn_ollama_create_body_legacy(const sn_ollama_model_spec *m, const char *digest, sn_err *err);

/* A Modelfile `ollama create -f` accepts, with values quoted exactly as Ollama's parser reads them
 * (bare, "...", or """..."""). from is the FROM argument. Errors when a value cannot be represented
 * (contains """ where quoting is needed, or non-printable characters the parser drops). */
char *sn_ollama_modelfile(const sn_ollama_model_spec *m, const char *from, sn_err *err);

/* HEAD /api/blobs/<digest>: *exists = 1 on 200, 0 on 404. */
sn_status sn_ollama_blob_exists(sn_http *h, const char *digest, int *exists, sn_err *err);
/* POST the file; retries once on a transport failure or 5xx. 200/201 ok; 400 digest mismatch is an
 * error that says so. */
sn_status sn_ollama_blob_upload(sn_http *h, const char *path, const char *digest,
                                sn_http_progress_fn progress, void *progress_ud,
                                sn_ollama_status_fn status, void *status_ud, sn_err *err);
/* POST /api/create with body; each NDJSON status goes to status(); any error line fails. */
sn_status sn_ollama_create(sn_http *h, const char *body, sn_ollama_status_fn status, void *ud,
                           sn_err *err);
/* POST /api/show; *out is the parsed answer (cJSON_Delete it). */
sn_status sn_ollama_show(sn_http *h, const char *name, cJSON **out, sn_err *err);
/* Checks what /api/show reports against what was sent: family (= GGUF arch), template, stop list.
 * Appends a human summary to note (may be NULL). */
sn_status sn_ollama_verify_show(const cJSON *show, const sn_ollama_model_spec *m, const char *arch,
                                char *note, size_t note_cap, sn_err *err);

/* ---- generate (smoke / --run) ---- */
typedef struct sn_ollama_gen {
    char *text;           /* response text (malloc'd) */
    int32_t *context;     /* "context" ids if the server sent them (malloc'd), else NULL */
    size_t n_context;
    int64_t eval_count;   /* -1 if absent */
    char done_reason[32];
} sn_ollama_gen;

/* POST /api/generate with "stream":false and the given JSON body (object, consumed by reference). */
sn_status sn_ollama_generate(sn_http *h, const cJSON *body, sn_ollama_gen *out, sn_err *err);
void sn_ollama_gen_free(sn_ollama_gen *g);

/* ---- smoke ---- */
struct sn_smoke_local;
struct sn_smoke_result;
/* Asks the server for the same greedy continuation sunny computed in ours: a raw call
 * (raw:true, temperature 0, top_k 1, seed, num_predict, num_ctx) for the text, then a non-raw call
 * with template "{{ .Prompt }}" whose "context" (when the server still returns it) gives token ids;
 * compares with sn_smoke_compare. */
sn_status sn_ollama_smoke(sn_http *h, const char *name, const char *prompt, int n_predict,
                          int64_t seed, int num_ctx, const struct sn_smoke_local *ours,
                          struct sn_smoke_result *res, sn_err *err);

#endif
