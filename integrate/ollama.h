/* ollama.h - install a GGUF into Ollama through its HTTP API, without the ollama CLI.
 *
 * Follows Ollama's source (v0.33): OLLAMA_HOST parsed exactly like Ollama's envconfig.Host() (and
 * mapped like ConnectableHost()), GET /api/version first, SHA-256 of the whole file as
 * "sha256:<64 lowercase hex>", HEAD then POST /api/blobs/<digest> streamed from disk (retry once on a
 * transient failure), POST /api/create with files/template/system/parameters/license (servers
 * < 0.5.5 get the legacy {"model","modelfile"} body), NDJSON progress where any {"error":...} line is
 * a failure even under HTTP 200, then POST /api/show to verify what the server stored. Nothing here
 * prints: status lines go through a callback so cmd/ decides how they look. */
#ifndef SN_OLLAMA_H
#define SN_OLLAMA_H
#include "http.h"
#include "smoke.h"
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
/* GET /api/version's answer (len bytes) into v; an answer without {"version":"..."} is an error
 * naming base (the server's URL) and the answer's start. */
sn_status sn_ollama_version_answer(const char *body, size_t len, const char *base, sn_ollama_version *v,
                                   sn_err *err);

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
    size_t n_parts;            /* a split GGUF: its shards (n_parts > 1), each sent in "files" under its
                                * own -NNNNN-of-NNNNN.gguf name with its digest ("sha256:<hex>") */
    const char *const *part_paths;
    const char *const *part_digests;
    const char *gguf_chat_template; /* the GGUF's tokenizer.chat_template (or NULL): what /api/show
                                     * returns as "template" when Ollama >= 0.30 selects it */
} sn_ollama_model_spec;

/* A GGUF without tokenizer.chat_template (a base model): the TEMPLATE is an explicit raw completion
 * "{{ .Prompt }}" - what Ollama <= 0.24 runs anyway, and what >= 0.30 falls back to with a warning -
 * so the install states it instead of leaving it to the server. *tmpl gets a malloc'd copy; src says
 * so for the user. (The one place this decision is made.) */
sn_status sn_ollama_base_model_template(char **tmpl, char *src, size_t src_cap, sn_err *err);

/* Validates NAME[:TAG] against Ollama's name grammar ([host/][namespace/]model[:tag]). */
sn_status sn_ollama_check_name(const char *name, sn_err *err);
/* The name to create when the user gave none: the model's naming stem in lower case (characters
 * Ollama refuses as '-') and its type as the tag, "qwen3-0.6b-instruct:q8_0". */
void sn_ollama_default_name(const char *stem, const char *quant, char *out, size_t cap);

/* The JSON body of POST /api/create (>= 0.5.5). digest is "sha256:<hex>". Caller frees. */
char *sn_ollama_create_body(const sn_ollama_model_spec *m, const char *digest);
/* The legacy body {"model","modelfile":"FROM @sha256:<hex>\n..."} for servers < 0.5.5. */
char *sn_ollama_create_body_legacy(const sn_ollama_model_spec *m, const char *digest, sn_err *err);

/* A Modelfile `ollama create -f` accepts, with values quoted exactly as Ollama's parser reads them
 * (bare, "...", or """..."""). from is the FROM argument. Errors when a value cannot be represented
 * (contains """ where quoting is needed, or non-printable characters the parser drops). */
char *sn_ollama_modelfile(const sn_ollama_model_spec *m, const char *from, sn_err *err);

/* The shards of a split GGUF named like llama.cpp's gguf-split ("<stem>-00001-of-0000N.gguf"), given
 * the first one and split.count from its header: *parts gets n malloc'd paths (free with
 * sn_ollama_parts_free). A path that is not part 1, a name that disagrees with split.count, or a
 * missing shard is an error naming the file. Ollama >= 0.30 imports all shards in one create
 * (server/create.go mergeSplitGGUFLayers: "has 1 shards, expected N" otherwise). */
/* 1 if path is named like a gguf-split shard, with *part (1-based) and *count filled. */
int sn_ollama_split_name(const char *path, int *part, int *count);
sn_status sn_ollama_split_parts(const char *first, int split_count, char ***parts, size_t *n, sn_err *err);
void sn_ollama_parts_free(char **parts, size_t n);

/* HEAD /api/blobs/<digest>: *exists = 1 on 200, 0 on 404. */
sn_status sn_ollama_blob_exists(sn_http *h, const char *digest, int *exists, sn_err *err);
/* POST the file; retries once on a transport failure or 5xx. 200/201 ok; 400 digest mismatch is an
 * error that says so. */
sn_status sn_ollama_blob_upload(sn_http *h, const char *path, const char *digest,
                                sn_http_progress_fn progress, void *progress_ud,
                                sn_ollama_status_fn status, void *status_ud, sn_err *err);
/* err->detail values of a failed sn_ollama_create that say which create body the server wants
 * (its own words are the only sign; the version it reports can be wrong: a dev build says 0.0.0). */
enum { SN_OLLAMA_WANTS_LEGACY_BODY = 1, SN_OLLAMA_WANTS_JSON_BODY = 2,
       SN_OLLAMA_BAD_OPTIONS = 3 /* sn_ollama_install: the options themselves are wrong (a usage error) */ };
/* POST /api/create with body; each NDJSON status goes to status(); any error line fails. */
sn_status sn_ollama_create(sn_http *h, const char *body, sn_ollama_status_fn status, void *ud,
                           sn_err *err);
/* One NDJSON line (len bytes, not NUL-terminated) of POST /api/create's progress, as http.h's
 * on_line with ud = the context: an {"error":...} line sets failed (and err) and returns 1 to stop
 * the transfer, even under HTTP 200; {"status":"success"} sets success; status lines go to status. */
typedef struct sn_ollama_create_ctx {
    sn_ollama_status_fn status;
    void *ud;
    sn_err *err;
    int failed, success, lines;
} sn_ollama_create_ctx;
int sn_ollama_create_line(void *ud, const char *line, size_t len);
/* GET /api/tags: {"models":[{"name",...}]}; *out is the parsed answer (caller frees). */
sn_status sn_ollama_tags(sn_http *h, cJSON **out, sn_err *err);
/* POST /api/show; *out is the parsed answer (cJSON_Delete it). */
sn_status sn_ollama_show(sn_http *h, const char *name, cJSON **out, sn_err *err);
/* Which template the server says it will use (/api/show "template", Ollama >= 0.30
 * selectedModelTemplate): SN_OLLAMA_TMPL_GO = the Go TEMPLATE sent; SN_OLLAMA_TMPL_JINJA = the GGUF's
 * Jinja (no TEMPLATE sent, or GetModel's PreferChatTemplate because the Jinja exposes more
 * capabilities - tools, thinking - than the Go one, or OLLAMA_GO_TEMPLATE=0 on the server);
 * SN_OLLAMA_TMPL_SERVER = none sent and the server shows its own (auto-detected or {{ .Prompt }});
 * SN_OLLAMA_TMPL_OTHER = something else (an error). */
typedef enum { SN_OLLAMA_TMPL_GO, SN_OLLAMA_TMPL_JINJA, SN_OLLAMA_TMPL_SERVER, SN_OLLAMA_TMPL_OTHER } sn_ollama_tmpl_sel;
sn_ollama_tmpl_sel sn_ollama_selected_template(const cJSON *show, const sn_ollama_model_spec *m);
const char *sn_ollama_tmpl_sel_name(sn_ollama_tmpl_sel s);

/* The value of a Go %#v-printed string ("\"a\\nb\"" -> a<LF>b), as /api/show prints parameters
 * (ShowHandler). s..s+n is the quoted text; out gets at most cap-1 bytes. Returns 0 if not quoted. */
int sn_ollama_go_unquote(const char *s, size_t n, char *out, size_t cap);

/* Checks what /api/show reports against what was sent: family (= GGUF arch), template (the one sent
 * or, at >= 0.30, the GGUF's Jinja the server selected), stop list (values unescaped from %#v).
 * Appends a human summary to note (may be NULL). */
sn_status sn_ollama_verify_show(const cJSON *show, const sn_ollama_model_spec *m, const char *arch,
                                char *note, size_t note_cap, sn_err *err);

/* ---- generate (smoke / --run) ---- */
typedef struct sn_ollama_gen {
    char *text;           /* response text (malloc'd) */
    int32_t *context;     /* "context" ids if the server sent them (malloc'd), else NULL */
    size_t n_context;
    int64_t eval_count;   /* -1 if absent */
    int64_t prompt_eval_count; /* -1 if absent */
    int done;             /* "done": false with no done_reason = the server cut the reply short */
    char done_reason[32];
    sn_smoke_token *toks; /* "logprobs" (>= 0.12.11, when asked): one per generated token, else NULL */
    size_t n_toks;
    int has_logprobs;
} sn_ollama_gen;

/* POST /api/generate with the given JSON body (object, not changed), sent with "stream":true so a
 * server that stops generating is caught by the stall limit; only the model load before the first
 * chunk may take longer (SN_HTTP_LOAD_S). */
sn_status sn_ollama_generate(sn_http *h, const cJSON *body, sn_ollama_gen *out, sn_err *err);
/* Its answer, streamed ("stream":true: one NDJSON chunk per token, the last one "done" with the
 * counts and context) or whole (one object), read chunk by chunk: begin, then gen_line per line (an
 * http.h on_line; non-zero = stop: an {"error"} chunk or bad JSON), then end for the status. On
 * failure out may hold parts: sn_ollama_gen_free it either way. gen_parse does all three on one body. */
typedef struct sn_ollama_gen_ctx {
    sn_ollama_gen *out;
    sn_err *err;
    sn_status st; /* the first failure */
    int lines;
    size_t text_len;
} sn_ollama_gen_ctx;
void sn_ollama_gen_begin(sn_ollama_gen_ctx *c, sn_ollama_gen *out, sn_err *err);
int sn_ollama_gen_line(void *ud, const char *line, size_t len);
sn_status sn_ollama_gen_end(sn_ollama_gen_ctx *c);
sn_status sn_ollama_gen_parse(const char *body, size_t len, sn_ollama_gen *out, sn_err *err);
void sn_ollama_gen_free(sn_ollama_gen *g);

/* ---- smoke ---- */
/* Asks the server for the same greedy continuation sunny computed in ours with a raw call (raw:true,
 * temperature 0, top_k 1, seed, num_predict, num_ctx). Ollama >= 0.12.11 is asked for
 * "logprobs":true,"top_logprobs":2 and compared token by token (sn_smoke_compare_tokens, with the
 * server's own top-2 gap for the tie rule); older servers (or one that sends no logprobs) by text.
 * prompt_eval_count must equal our prompt length. A reply without done/done_reason (the repetition
 * abort) is reported as truncated. Then a non-raw call with template "{{ .Prompt }}" returns
 * "context" = Tokenize(prompt + answer), which is checked against sunny's tokenizer on the same text
 * (sn_smoke_context_check); it is never taken for the generated ids. */
sn_status sn_ollama_smoke(sn_http *h, const sn_ollama_version *v, const char *name, const char *prompt,
                          int n_predict, int64_t seed, int num_ctx, const sn_smoke_local *ours,
                          sn_smoke_result *res, sn_err *err);
/* The chat path of the gate: /api/generate without raw or a request template, so the server renders
 * user as a user turn through the template it selected for the model, greedy as above. ours must be
 * sunny's run on the prompt the model's own template renders for that turn (the GGUF's Jinja, by
 * sunny): a server template that renders differently (e.g. Ollama's default {{ .Prompt }} when no
 * TEMPLATE was stored) shows up as a prompt-length difference or diverging tokens. */
sn_status sn_ollama_smoke_chat(sn_http *h, const sn_ollama_version *v, const char *name, const char *user,
                               int n_predict, int64_t seed, int num_ctx, const sn_smoke_local *ours,
                               sn_smoke_result *res, sn_err *err);

#endif
