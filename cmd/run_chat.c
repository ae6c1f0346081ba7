/* run_chat.c - sunny-run's conversation mode (see run_chat.h). A turn is rendered the way
 * llama-cli's common_chat_format_single does it: the conversation so far without a generation
 * prompt, then with the new user message and the generation prompt; the model is fed only the text
 * the second adds to the first, so its state (KV cache or recurrent state) carries the turns
 * before. The reply's end-of-generation token is evaluated too, as llama-cli does, so the next turn
 * continues after it. */
#include "run_chat.h"
#include "cli.h"
#include "generate.h"
#include "gguf.h"
#include "jinja.h"
#include "model.h"
#include "tokenizer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *template_of(const sn_gguf *g) {
    return sn_gguf_str_dup(g, "tokenizer.chat_template");
}

int sn_chat_has_template(const char *model) {
    sn_model_meta *mm;
    sn_err err = {0};
    if (sn_model_meta_open(model, &mm, &err)) return 0;
    char *t = template_of(sn_model_meta_gguf(mm));
    sn_model_meta_close(mm);
    free(t);
    return t != NULL;
}

/* The template rendered over messages; NULL (message printed) on failure. */
static char *render(const sn_jinja *t, const cJSON *msgs, int add_gen, const char *bos, const char *eos) {
    cJSON *vars = cJSON_CreateObject();
    char *out = NULL;
    sn_err err = {0};
    if (vars && cJSON_AddItemToObject(vars, "messages", cJSON_Duplicate(msgs, 1)) &&
        cJSON_AddBoolToObject(vars, "add_generation_prompt", add_gen) && cJSON_AddStringToObject(vars, "bos_token", bos) &&
        cJSON_AddStringToObject(vars, "eos_token", eos)) {
        if (sn_jinja_render(t, vars, NULL, &out, NULL, &err) != SN_OK) {
            sn_cli_errorf("the model's chat template failed to render: %s", err.msg);
            out = NULL;
        }
    } else {
        sn_cli_errorf("out of memory");
    }
    cJSON_Delete(vars);
    return out;
}

static int add_msg(cJSON *msgs, const char *role, const char *content) {
    cJSON *m = cJSON_CreateObject();
    if (!m || !cJSON_AddStringToObject(m, "role", role) || !cJSON_AddStringToObject(m, "content", content)) {
        cJSON_Delete(m);
        return -1;
    }
    return cJSON_AddItemToArray(msgs, m) ? 0 : -1;
}

static const char *token_text(const sn_tokenizer *tok, int32_t id) {
    const char *s = id >= 0 ? sn_tok_text(tok, id, NULL) : NULL;
    return s ? s : "";
}

/* Feeds text (parsed for special tokens) to the model; the logits of its last token in logits. */
static int feed(sn_model *m, const sn_tokenizer *tok, sn_sampler *smp, const char *text, int add_special,
                float *logits, int64_t *n_past) {
    sn_err err = {0};
    const size_t len = strlen(text);
    int32_t *ids = malloc((len + 16) * sizeof *ids);
    if (!ids) { sn_cli_errorf("out of memory"); return -1; }
    const int64_t n = sn_tok_encode(tok, text, len, add_special, 1, ids, len + 16, &err);
    int rc = -1;
    if (n < 0 || n > (int64_t)len + 16) sn_cli_errorf("cannot tokenize the turn: %s", n < 0 ? err.msg : "too many tokens");
    else if (*n_past + n >= sn_model_n_ctx(m)) sn_cli_errorf("the conversation is past the context size %lld (-c)", (long long)sn_model_n_ctx(m));
    else if (n > 0 && sn_model_eval(m, ids, n, logits, &err)) sn_cli_fail(&err);
    else {
        for (int64_t i = 0; i < n; i++) sn_sampler_accept(smp, ids[i]);
        *n_past += n;
        rc = 0;
    }
    free(ids);
    return rc;
}

/* The reply so far: each token's text streamed to stdout and kept; an end-of-generation token
 * (not shown) stops the reply. */
typedef struct {
    const sn_tokenizer *tok;
    char *text;
    size_t len, cap;
} reply_text;

static int on_reply_token(void *ud, int32_t id, const float *logits, int64_t n_vocab) {
    reply_text *rt = ud;
    (void)logits, (void)n_vocab;
    if (sn_tok_is_eog(rt->tok, id)) return 1;
    char piece[256];
    int64_t r = sn_tok_piece(rt->tok, id, 0, piece, sizeof piece);
    if (r > (int64_t)sizeof piece) r = sizeof piece;
    if (r <= 0) return 0;
    fwrite(piece, 1, (size_t)r, stdout);
    fflush(stdout);
    if (rt->len + (size_t)r + 1 > rt->cap) {
        char *nt = realloc(rt->text, (rt->cap = 2 * (rt->len + (size_t)r + 1)));
        if (!nt) return SN_ENOMEM;
        rt->text = nt;
    }
    memcpy(rt->text + rt->len, piece, (size_t)r);
    rt->text[rt->len += (size_t)r] = 0;
    return 0;
}

/* One reply: sampled until end-of-generation, -n or the context's end, streamed to stdout; the
 * reply's text (without the end token) in *reply. Every chosen token, the end token too, goes into
 * the cache, so the next turn continues after it. */
static int reply(sn_model *m, const sn_tokenizer *tok, sn_sampler *smp, int64_t n_predict, float *logits,
                 int64_t *n_past, char **reply_out) {
    reply_text rt = {tok, malloc(256), 0, 256};
    if (!rt.text) { sn_cli_errorf("out of memory"); return -1; }
    rt.text[0] = 0;
    sn_err err = {0};
    const sn_gen_opts go = {.feed_stop = 1, .ctx_left = sn_model_n_ctx(m) - *n_past};
    sn_gen_times tm;
    sn_status st = sn_generate(m, smp, NULL, 0, n_predict, logits, on_reply_token, &rt, &go, &tm, &err);
    *n_past += tm.n_decode;
    if (st == SN_ENOMEM && !err.msg[0]) { free(rt.text); sn_cli_errorf("out of memory"); return -1; }
    if (st) { free(rt.text); return sn_cli_fail(&err), -1; }
    if (tm.ctx_full) {
        fputs("\n", stdout);
        sn_cli_warnf("the context is full (-c %lld)", (long long)sn_model_n_ctx(m));
    }
    fputc('\n', stdout);
    fflush(stdout);
    *reply_out = rt.text;
    return 0;
}

int sn_chat_run(const sn_chat_opts *o) {
    sn_err err = {0};
    int rc = SN_EXIT_FAIL;
    sn_model_meta *mm = NULL;
    sn_tokenizer *tok = NULL;
    sn_model *m = NULL;
    sn_sampler *smp = NULL;
    sn_jinja *tmpl = NULL;
    cJSON *msgs = cJSON_CreateArray();
    char *src = NULL, *past = NULL, *line = NULL;
    float *logits = NULL;
    if (!msgs) return SN_EXIT_FAIL;
    if (sn_model_meta_open(o->model, &mm, &err)) { sn_cli_fail(&err); goto done; }
    if (!(src = template_of(sn_model_meta_gguf(mm)))) {
        sn_cli_errorf("%s has no chat template (tokenizer.chat_template), so -cnv cannot render turns; give the "
                      "prompt with -p, or convert from a folder with the instruct model's tokenizer_config.json",
                      o->model);
        goto done;
    }
    if (sn_jinja_parse(src, strlen(src), &tmpl, &err)) {
        sn_cli_errorf("%s: the chat template cannot be rendered here: %s", o->model, err.msg);
        goto done;
    }
    if (sn_tok_load(sn_model_meta_gguf(mm), &tok, &err)) { sn_cli_fail(&err); goto done; }
    const sn_tok_special_ids sp = sn_tok_specials(tok);
    const char *bos = token_text(tok, sp.bos), *eos = token_text(tok, sp.eos);

    if (sn_model_load(o->model, &o->mp, &m, &err)) {
        sn_cli_moe_not_yet(sn_model_meta_gguf(mm), o->model, &err);
        sn_cli_fail(&err);
        goto done;
    }
    if (sn_sampler_new(&o->sp, &smp, &err)) { sn_cli_fail(&err); goto done; }
    if (!(logits = malloc((size_t)sn_model_n_vocab(m) * sizeof *logits))) { sn_cli_errorf("out of memory"); goto done; }
    if (o->system && add_msg(msgs, "system", o->system)) goto done;

    const int tty = isatty(0);
    if (tty) fprintf(stderr, "%s: chat with %s through its chat template; an empty line is skipped, Ctrl-D ends\n",
                     sn_cli_prog(), o->model);
    int64_t n_past = 0;
    size_t cap = 0;
    past = strdup("");
    for (;;) {
        if (tty) { fputs("> ", stderr); fflush(stderr); }
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0) break;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (n == 0) continue;
        if (!past || add_msg(msgs, "user", line)) { sn_cli_errorf("out of memory"); goto done; }
        char *now = render(tmpl, msgs, 1, bos, eos);
        if (!now) goto done;
        /* the text this turn adds; a template that rewrites earlier turns is fed whole once more */
        const size_t pl = strlen(past);
        const char *delta = strncmp(now, past, pl) == 0 ? now + pl : now;
        /* BOS: the template writes it (as text) or the tokenizer adds it, once, at the start */
        const int add_special = n_past == 0 && !(bos[0] && strncmp(now, bos, strlen(bos)) == 0);
        int fr = feed(m, tok, smp, delta, add_special, logits, &n_past);
        free(now);
        if (fr) goto done;
        char *answer = NULL;
        if (reply(m, tok, smp, o->n_predict, logits, &n_past, &answer)) goto done;
        int am = add_msg(msgs, "assistant", answer);
        free(answer);
        if (am) { sn_cli_errorf("out of memory"); goto done; }
        free(past);
        if (!(past = render(tmpl, msgs, 0, bos, eos))) goto done;
    }
    rc = SN_EXIT_OK;
done:
    free(line);
    free(past);
    free(src);
    free(logits);
    cJSON_Delete(msgs);
    sn_jinja_free(tmpl);
    sn_sampler_free(smp);
    sn_model_free(m);
    sn_tok_free(tok);
    sn_model_meta_close(mm);
    return rc;
}
