/* ollama.c - the Ollama HTTP API client of the install flow (see ollama.h and docs/OLLAMA.md).
 *
 * GET /api/version, SHA-256 of the GGUF, split-GGUF parts, HEAD/POST /api/blobs (streamed from
 * disk), POST /api/create (NDJSON progress, an error line fails even under HTTP 200), POST
 * /api/show, /api/generate with logprobs, and the smoke gate against sunny's runtime. Which server
 * (OLLAMA_HOST, versions) is ollama_host.c; the request bodies, Modelfile and the show check are
 * ollama_modelfile.c. */
#include "ollama.h"
#include "num.h"
#include "mapfile.h"
#include "smoke.h"
#include "strv.h"
#include "utf8_fix.h"
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
 * Server answers: transport failures and HTTP errors in words */

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

/* Sends rq; a transport failure or an HTTP error answer becomes err in words (what names the
 * request, e.g. "GET /api/version"). SN_OK leaves a 2xx answer in r; the caller frees r either way. */
static sn_status request(sn_http *h, const sn_http_req *rq, sn_http_resp *r, const char *what, sn_err *err) {
    sn_status st = sn_http_do(h, rq, r, err);
    if (st != SN_OK) return st == SN_ENOMEM ? st : explain_transport(h, r, err);
    return r->cls == SN_HTTP_OK ? SN_OK : ollama_check(h, r, what, err);
}

sn_status sn_ollama_probe(sn_http *h, sn_ollama_version *v, sn_err *err) {
    sn_http_req rq = {.method = "GET", .path = "/api/version", .timeout_s = 30};
    sn_http_resp r;
    sn_status st = request(h, &rq, &r, "GET /api/version", err);
    if (st != SN_OK && r.cls != SN_HTTP_OK && r.status == 404) /* answered, but not as Ollama would */
        st = sn_err_set(err, SN_EIO,
                        "%s answered 404 to GET /api/version: this is not an Ollama server (LM "
                        "Studio listens on 1234, Ollama on 11434)",
                        sn_http_base(h));
    if (st != SN_OK) {
        sn_http_resp_free(&r);
        return st;
    }
    st = sn_ollama_version_answer(r.body, r.len, sn_http_base(h), v, err);
    sn_http_resp_free(&r);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * SHA-256 */

sn_status sn_ollama_sha256_file(const char *path, char hex[65], uint64_t *size, double *seconds,
                                sn_err *err) {
    int fd = sn_open_regular(path, err);
    if (fd < 0) return SN_EIO;
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
 * Split GGUFs */

void sn_ollama_parts_free(char **parts, size_t n) { sn_strv_free(parts, n); }

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

sn_status sn_ollama_create(sn_http *h, const char *body, sn_ollama_status_fn status, void *ud,
                           sn_err *err) {
    sn_ollama_create_ctx c = {.status = status, .ud = ud, .err = err};
    sn_http_req rq = {.method = "POST", .path = "/api/create", .json = body, .on_line = sn_ollama_create_line,
                      .line_ud = &c}; /* progress lines keep coming; silence is a stall */
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
    sn_status st = request(h, &rq, &r, "POST /api/show", err);
    free(body);
    if (st == SN_OK) {
        *out = cJSON_Parse(r.body);
        if (!*out) st = sn_err_set(err, SN_EIO, "POST /api/show: the answer is not JSON");
    }
    sn_http_resp_free(&r);
    return st;
}

sn_status sn_ollama_tags(sn_http *h, cJSON **out, sn_err *err) {
    *out = NULL;
    sn_http_req rq = {.method = "GET", .path = "/api/tags", .timeout_s = 60};
    sn_http_resp r;
    sn_status st = request(h, &rq, &r, "GET /api/tags", err);
    if (st == SN_OK) {
        *out = cJSON_Parse(r.body);
        if (!*out) st = sn_err_set(err, SN_EIO, "GET /api/tags: the answer is not JSON");
    }
    sn_http_resp_free(&r);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Generate */

void sn_ollama_gen_free(sn_ollama_gen *g) {
    free(g->text);
    free(g->context);
    sn_smoke_tokens_free(g->toks, g->n_toks);
    memset(g, 0, sizeof *g);
}

sn_status sn_ollama_generate(sn_http *h, const cJSON *body, sn_ollama_gen *out, sn_err *err) {
    sn_ollama_gen_ctx c;
    sn_ollama_gen_begin(&c, out, err);
    char *js = sn_http_json_streamed(body);
    if (!js) return sn_err_set(err, SN_ENOMEM, "out of memory");
    /* chunks arrive per token, so silence while generating is a stall (SN_HTTP_STALL_S); before the
     * first one the server may be loading the model (bounded by SN_HTTP_LOAD_S) */
    sn_http_req rq = {.method = "POST", .path = "/api/generate", .json = js, .on_line = sn_ollama_gen_line,
                      .line_ud = &c, .loads_model = 1};
    sn_http_resp r;
    sn_status st = sn_http_do(h, &rq, &r, err);
    free(js);
    if (st != SN_OK) {
        if (st != SN_ENOMEM) st = explain_transport(h, &r, err);
    } else if (r.cls == SN_HTTP_ABORTED || c.st) {
        st = c.st ? c.st : SN_EIO;
    } else if (r.cls != SN_HTTP_OK) {
        st = ollama_check(h, &r, "POST /api/generate", err);
    } else {
        st = sn_ollama_gen_end(&c);
    }
    sn_http_resp_free(&r);
    if (st != SN_OK) sn_ollama_gen_free(out);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Smoke */

/* raw: 1 = raw (the prompt as is), 0 = the request template "{{ .Prompt }}" (rendered as is, but the
 * answer carries a context), 2 = chat (the model's own template renders the prompt as a user turn) */
static cJSON *gen_body(const char *name, const char *prompt, int raw, int n_predict, int64_t seed,
                       int num_ctx, int logprobs) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "model", name);
    cJSON_AddStringToObject(b, "prompt", prompt);
    if (raw == 1) cJSON_AddBoolToObject(b, "raw", 1);
    else if (raw == 0) cJSON_AddStringToObject(b, "template", "{{ .Prompt }}");
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

/* One greedy generate (mode as gen_body's raw) compared with our run: token for token where the server
 * sends logprobs (>= 0.12.11), else text byte for byte, then its prompt token count. The answer is
 * kept in *keep for the caller to free (zeroed when the request failed), or freed here when keep is
 * NULL. forgive_cut: a text answer cut short by the server's repetition abort that is a prefix of
 * ours is not a divergence. */
static sn_status smoke_generate(sn_http *h, const sn_ollama_version *v, const char *name, const char *prompt,
                                int mode, int forgive_cut, int n_predict, int64_t seed, int num_ctx,
                                const sn_smoke_local *ours, sn_ollama_gen *keep, sn_smoke_result *res, sn_err *err) {
    sn_ollama_gen own, *g = keep ? keep : &own;
    /* logprobs/top_logprobs exist since 0.12.11; older servers ignore the fields */
    int want_lp = !v || sn_ollama_version_cmp(v, 0, 12, 11) >= 0;
    cJSON *b = gen_body(name, prompt, mode, n_predict, seed, num_ctx, want_lp);
    sn_status st = sn_ollama_generate(h, b, g, err);
    cJSON_Delete(b);
    if (st) return sn_err_prefix(err, mode == 2 ? "smoke (chat generate)" : "smoke (raw generate)");
    int stopped = strcmp(g->done_reason, "stop") == 0;
    /* llamaServerRunner.Completion's repetition abort ends the stream without a final chunk */
    int truncated = !g->done && !g->done_reason[0];
    if (g->has_logprobs) {
        st = sn_smoke_compare_tokens(ours, g->toks, g->n_toks, stopped, truncated, res, err);
    } else {
        st = sn_smoke_compare(ours, g->text, NULL, 0, stopped, res, err);
        if (st == SN_OK) {
            res->truncated = truncated;
            if (forgive_cut && truncated && res->diverged) {
                /* the server said less than we did because it was cut short, not because it differs */
                size_t ol = strlen(res->ours_text), tl = strlen(g->text);
                if (tl <= ol && memcmp(res->ours_text, g->text, tl) == 0) {
                    res->diverged = 0;
                    res->tie = 0;
                    res->n_identical = res->n_compared = res->pos;
                }
            }
            snprintf(res->method, sizeof res->method, "text, byte for byte (%s)",
                     want_lp ? "the server sent no logprobs" : "Ollama < 0.12.11 has no logprobs");
        }
    }
    if (st == SN_OK && !truncated) sn_smoke_prompt_count_check(ours, g->prompt_eval_count, res);
    if (!keep) sn_ollama_gen_free(g);
    return st;
}

sn_status sn_ollama_smoke(sn_http *h, const sn_ollama_version *v, const char *name, const char *prompt,
                          int n_predict, int64_t seed, int num_ctx, const sn_smoke_local *ours,
                          sn_smoke_result *res, sn_err *err) {
    sn_ollama_gen raw;
    sn_status st = smoke_generate(h, v, name, prompt, 1, 1, n_predict, seed, num_ctx, ours, &raw, res, err);
    /* The re-tokenized context: a non-raw call with the template "{{ .Prompt }}" (so the prompt is
     * rendered as is). Only checked when its answer is the raw one's (same computation). */
    if (st == SN_OK && !res->prompt_diff[0]) {
        cJSON *b = gen_body(name, prompt, 0, n_predict, seed, num_ctx, 0);
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

sn_status sn_ollama_smoke_chat(sn_http *h, const sn_ollama_version *v, const char *name, const char *user,
                               int n_predict, int64_t seed, int num_ctx, const sn_smoke_local *ours,
                               sn_smoke_result *res, sn_err *err) {
    return smoke_generate(h, v, name, user, 2, 0, n_predict, seed, num_ctx, ours, NULL, res, err);
}
