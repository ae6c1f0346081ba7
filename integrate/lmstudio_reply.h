/* lmstudio_reply.h - what LM Studio's answers say, read from their bytes alone (internal to
 * integrate/; lmstudio.c sends the requests and runs lms, these read what comes back, and the fuzz
 * harness tests/fuzz/fuzz_lmstudio_reply.c reaches every line of them). */
#ifndef SN_LMSTUDIO_REPLY_H
#define SN_LMSTUDIO_REPLY_H
#include "lmstudio.h"
#include "smoke.h"
#include <stddef.h>

/* GET /lmstudio-greeting: {"lmstudio":true,"version":"0.4.4"}. version gets the version when
 * reported; an error naming base when the answer is not LM Studio's. */
sn_status sn_lms_greeting_answer(const char *body, size_t len, const char *base, char *version, size_t cap,
                                 sn_err *err);

/* GET /api/v0/models: the key of p's file - the publisher matches and the id is the repo folder
 * (lowercase, -GGUF stripped), possibly with @quant. 1 found (key written), 0 not listed. */
int sn_lms_models_key(const char *body, size_t len, const sn_lms_placed *p, char *key, size_t cap);

/* GET /api/v0/models/{id}: the entry's "arch" into arch ("" when not reported). */
void sn_lms_model_arch(const char *body, size_t len, char *arch, size_t cap);

/* POST /api/v1/models/load's answer: the instance_id to use, else key. */
void sn_lms_load_answer(const char *body, size_t len, const char *key, char *model_id, size_t cap);

/* `lms ls --json`: the entry whose path is p->rel_path, its architecture and format checked against
 * the GGUF. *found: 1 listed (and a note says how), 0 not listed (a warning note), -1 not a model list
 * (nothing noted: the caller says why). Errors only for a listed entry that contradicts the GGUF. */
sn_status sn_lms_ls_answer(const char *json, size_t len, const sn_lms_placed *p, int *found, sn_lms_note_fn note,
                           void *ud, sn_err *err);

/* A completion answer (POST /api/v0/completions or /v1/completions; /v1/chat/completions alike, its
 * text in choices[0].message or, streamed, .delta "content"), streamed as server-sent events -
 * "data: {chunk}" lines, each chunk carrying its piece of choices[0].text (finish_reason null
 * until the last), then "data: [DONE]" - or, from a server that ignores "stream", one JSON body.
 * Feed each line to sn_lms_completion_line (an sn_http_line_fn), then call sn_lms_completion_end.
 * What it collects is bounded by SN_BUDGET_JSON_BODY (budget.h). */
typedef struct sn_lms_completion {
    const char *what;        /* the request, for errors: "POST /api/v0/completions" */
    sn_err *err;
    sn_status st;            /* the first failure */
    char *text;              /* choices[0].text (or content), all chunks (malloc'd, NUL-terminated) */
    size_t text_len;
    int has_text;            /* some chunk had a choices[0].text */
    char finish[32];         /* the last finish_reason given */
    char arch[64];           /* model_info.arch when reported */
    char server_error[512];  /* {"error":...} instead of an answer (LM Studio says so under HTTP 200) */
    sn_smoke_token *toks;    /* OpenAI logprobs.tokens, when a server returns them */
    size_t n_toks;
    int events, done;        /* "data:" events seen; "data: [DONE]" seen */
    char *raw;               /* lines that are no SSE field: a whole JSON body */
    size_t raw_len, raw_cap;
    size_t spent;            /* bytes collected, against the budget */
} sn_lms_completion;
void sn_lms_completion_begin(sn_lms_completion *c, const char *what, sn_err *err);
/* One line of the answer. Returns non-zero to stop reading: a failure (c->st) or a server error. */
int sn_lms_completion_line(void *ud, const char *line, size_t len);
/* After the last line: reads a non-streamed body, then fails unless there was an answer text or a
 * server error (c->server_error, left to the caller: "Unexpected endpoint" means another path). */
sn_status sn_lms_completion_end(sn_lms_completion *c);
void sn_lms_completion_free(sn_lms_completion *c);

/* Sends the completion request body (its "stream" set to true here) to /api/v0/completions, or to
 * /v1/completions on a server without /api/v0. Chunks arrive per token, so silence while generating
 * is a stall (SN_HTTP_STALL_S); before the first one the server may load the model (SN_HTTP_LOAD_S).
 * *used gets the path that answered. On SN_OK c holds the answer (c->server_error may be set). */
sn_status sn_lms_complete(sn_http *h, const char *body, sn_lms_completion *c, const char **used,
                          sn_lms_note_fn note, void *ud, sn_err *err);

#endif
