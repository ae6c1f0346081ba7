/* smoke.c - the parity gate (see smoke.h): our greedy run on the GGUF, compared with a server's. */
#include "smoke.h"
#include "generate.h"
#include "model.h"
#include "strv.h"
#include "tokenizer.h"
#include "utf8.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sn_smoke_local_free(sn_smoke_local *l) {
    if (!l) return;
    free(l->prompt_ids);
    free(l->ids);
    free(l->gap);
    free(l->max_abs);
    free(l->text);
    sn_strv_free(l->pieces, l->n); /* the tokenizer's pieces of ids, then the tokenizer */
    if (l->tok) sn_tok_free(l->tok);
    memset(l, 0, sizeof *l);
}

static char *piece_of(const sn_tokenizer *t, int32_t id) {
    char small[64];
    int64_t n = sn_tok_piece(t, id, 0, small, sizeof small);
    if (n < 0) return NULL;
    char *p = malloc((size_t)n + 1);
    if (!p) return NULL;
    if ((size_t)n < sizeof small) memcpy(p, small, (size_t)n);
    else sn_tok_piece(t, id, 0, p, (size_t)n + 1);
    p[n] = 0;
    return p;
}

/* Each greedy token of the local run: its id, its lead over the runner-up, the largest |logit| and
 * its text; an end-of-generation token stops the run. */
typedef struct {
    sn_smoke_local *out;
    const sn_tokenizer *tok;
    sn_err *err;
    size_t text_len;
} smoke_gen;

static int on_greedy_token(void *ud, int32_t best, const float *logits, int64_t nv) {
    smoke_gen *g = ud;
    sn_smoke_local *out = g->out;
    int32_t top[2];
    int32_t second = sn_top_k(logits, nv, 2, top) > 1 ? top[1] : -1;
    float mx = fabsf(logits[0]);
    for (int64_t i = 1; i < nv; i++) mx = fabsf(logits[i]) > mx ? fabsf(logits[i]) : mx;
    size_t k = out->n++;
    out->ids[k] = best;
    out->gap[k] = second >= 0 ? logits[best] - logits[second] : INFINITY;
    out->max_abs[k] = mx;
    out->pieces[k] = piece_of(g->tok, best); /* special tokens render as "" like servers do */
    if (!out->pieces[k]) return sn_err_set(g->err, SN_ENOMEM, "out of memory");
    g->text_len += strlen(out->pieces[k]);
    return sn_tok_is_eog(g->tok, best);
}

sn_status sn_smoke_run_local(const sn_smoke_opts *o, sn_smoke_local *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    sn_model_params mp;
    sn_model_params_default(&mp);
    if (o->tuning) mp.tuning = *o->tuning;
    mp.n_threads = o->n_threads > 0 ? o->n_threads : 2;
    mp.n_ctx = o->n_ctx;
    sn_model *m = NULL;
    sn_status st = sn_model_load(o->gguf_path, &mp, &m, err);
    if (st) return sn_err_prefix(err, "sunny runtime");
    sn_tokenizer *tok = NULL;
    if ((st = sn_tok_load(sn_model_gguf(m), &tok, err)) != SN_OK) {
        sn_model_free(m);
        return sn_err_prefix(err, "sunny tokenizer");
    }
    out->tok = tok;
    size_t plen = strlen(o->prompt);
    size_t cap = plen + 16;
    out->prompt_ids = malloc(cap * sizeof(int32_t));
    int64_t np = out->prompt_ids ? sn_tok_encode(tok, o->prompt, plen, 1, 1, out->prompt_ids, cap, err) : -1;
    if (np >= 0 && (size_t)np > cap) {
        cap = (size_t)np;
        int32_t *r = realloc(out->prompt_ids, cap * sizeof(int32_t));
        if (r) out->prompt_ids = r;
        np = r ? sn_tok_encode(tok, o->prompt, plen, 1, 1, out->prompt_ids, cap, err) : -1;
    }
    if (np <= 0) {
        sn_model_free(m);
        sn_smoke_local_free(out);
        return np == 0 ? sn_err_set(err, SN_EINVAL, "the prompt tokenizes to nothing") : SN_EINVAL;
    }
    out->n_prompt = (size_t)np;
    int64_t nv = sn_model_n_vocab(m);
    size_t N = (size_t)(o->n_predict > 0 ? o->n_predict : 32);
    float *logits = malloc((size_t)nv * sizeof(float));
    out->ids = calloc(N, sizeof(int32_t));
    out->gap = calloc(N, sizeof(float));
    out->max_abs = calloc(N, sizeof(float));
    out->pieces = calloc(N, sizeof(char *));
    if (!logits || !out->ids || !out->gap || !out->max_abs || !out->pieces) {
        free(logits);
        sn_model_free(m);
        sn_smoke_local_free(out);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    smoke_gen g = {out, tok, err, 0};
    st = sn_generate(m, NULL, out->prompt_ids, (int64_t)out->n_prompt, (int64_t)N, logits, on_greedy_token, &g,
                     NULL, NULL, err);
    size_t text_len = g.text_len;
    free(logits);
    sn_model_free(m);
    if (st == SN_OK) {
        out->text = malloc(text_len + 1);
        if (!out->text) st = sn_err_set(err, SN_ENOMEM, "out of memory");
        else {
            size_t p = 0;
            for (size_t i = 0; i < out->n; i++) {
                size_t l = strlen(out->pieces[i]);
                memcpy(out->text + p, out->pieces[i], l);
                p += l;
            }
            out->text[p] = 0;
        }
    }
    if (st) {
        sn_smoke_local_free(out);
        return sn_err_prefix(err, "sunny runtime");
    }
    return SN_OK;
}

/* Length of the well-formed UTF-8 character at p (1..4), 0 if the bytes there are not one. */
static size_t utf8_valid_len(const unsigned char *p, size_t n) {
    uint32_t cp;
    return sn_utf8_decode(p, n, &cp);
}

static int is_eog(const sn_smoke_local *l, int32_t id) { return l->tok ? sn_tok_is_eog(l->tok, id) : 0; }

static void quote_token(char *dst, size_t cap, const char *s);

int sn_smoke_tied(float gap, float max_abs) { return gap < SN_SMOKE_TIE_REL * max_abs; }

void sn_smoke_tokens_free(sn_smoke_token *t, size_t n) {
    if (!t) return;
    for (size_t i = 0; i < n; i++) free(t[i].text);
    free(t);
}

void sn_smoke_result_free(sn_smoke_result *r) {
    free(r->ours_text);
    free(r->theirs_text);
    r->ours_text = r->theirs_text = NULL;
}

sn_status sn_smoke_compare(const sn_smoke_local *ours, const char *server_text,
                           const int32_t *server_ids, size_t n_server_ids, int server_stopped,
                           sn_smoke_result *res, sn_err *err) {
    memset(res, 0, sizeof *res);
    res->server_gap = NAN;
    res->text_byte = -1;
    res->n_expected = (int)ours->n;
    res->ours_text = strdup(ours->text ? ours->text : "");
    res->theirs_text = strdup(server_text ? server_text : "");
    if (!res->ours_text || !res->theirs_text) return sn_err_set(err, SN_ENOMEM, "out of memory");
    snprintf(res->method, sizeof res->method, "%s", server_ids ? "token ids" : "text, byte for byte");
    int div_at = -1;
    if (server_ids) {
        res->by_ids = 1;
        size_t n = ours->n < n_server_ids ? ours->n : n_server_ids;
        for (size_t i = 0; i < n && div_at < 0; i++)
            if (ours->ids[i] != server_ids[i]) div_at = (int)i;
        res->n_compared = div_at >= 0 ? div_at + 1 : (int)n;
        if (div_at < 0 && n_server_ids < ours->n) {
            /* the server stopped early: fine if it says it hit a stop (string or EOG) */
            if (!server_stopped) div_at = (int)n_server_ids;
            else snprintf(res->server_stop, sizeof res->server_stop, "stopped after %zu tokens", n_server_ids);
        }
    } else {
        /* Text: walk our bytes and the server's. Valid UTF-8 must match byte for byte; a run of bytes
         * that is not valid UTF-8 on our side (a token boundary inside a character, random models do
         * that) matches one or more U+FFFD the server substituted. The server omits a matched stop
         * string and the EOG token, so ending early with a stop is not a divergence. */
        size_t n_tok = ours->n;
        if (n_tok > 0 && is_eog(ours, ours->ids[n_tok - 1])) n_tok--;
        size_t *end_off = calloc(n_tok + 1, sizeof(size_t));
        size_t bl = 0;
        for (size_t i = 0; i < n_tok; i++) { bl += strlen(ours->pieces[i]); end_off[i] = bl; }
        char *B = malloc(bl + 1);
        if (!end_off || !B) { free(end_off); free(B); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
        size_t p = 0;
        for (size_t i = 0; i < n_tok; i++) { size_t l = strlen(ours->pieces[i]); memcpy(B + p, ours->pieces[i], l); p += l; }
        B[bl] = 0;
        const unsigned char *T = (const unsigned char *)res->theirs_text;
        size_t tl = strlen(res->theirs_text), bo = 0, to = 0;
        while (bo < bl && to < tl) {
            size_t vl = utf8_valid_len((const unsigned char *)B + bo, bl - bo);
            if (vl > 0) {
                if (to + vl <= tl && memcmp(B + bo, T + to, vl) == 0) { bo += vl; to += vl; continue; }
                break;
            }
            size_t ib = bo; /* invalid run on our side */
            while (ib < bl && utf8_valid_len((const unsigned char *)B + ib, bl - ib) == 0) ib++;
            if (!(to + 3 <= tl && T[to] == 0xEF && T[to + 1] == 0xBF && T[to + 2] == 0xBD)) {
                if (ib == bl && to == tl) { bo = ib; break; } /* trailing partial char withheld */
                break;
            }
            while (to + 3 <= tl && T[to] == 0xEF && T[to + 1] == 0xBF && T[to + 2] == 0xBD) to += 3;
            bo = ib;
        }
        size_t k = 0; /* tokens fully matched */
        while (k < n_tok && end_off[k] <= bo) k++;
        if (bo == bl && to == tl) {
            res->n_compared = (int)ours->n;
        } else if (to == tl && server_stopped) {
            res->n_compared = (int)k;
            snprintf(res->server_stop, sizeof res->server_stop, "stopped after %zu tokens", k);
        } else if (bo == bl) {
            res->n_compared = (int)n_tok + 1;
            div_at = (int)n_tok; /* the server said more than we did */
        } else {
            res->n_compared = (int)k + 1;
            div_at = (int)k;
        }
        if (div_at >= 0) {
            /* where the texts part: sunny's token there, and as many of the server's bytes from that
             * point as that token has (at least 8, ending on a UTF-8 boundary) */
            res->text_byte = (long)bo;
            size_t from = div_at > 0 && (size_t)div_at <= n_tok ? end_off[div_at - 1] : 0, want = 8;
            if ((size_t)div_at < n_tok && end_off[div_at] - from > want) want = end_off[div_at] - from;
            size_t e = to + want < tl ? to + want : tl;
            while (e > to && e < tl && (T[e] & 0xC0) == 0x80) e--;
            char *tail = malloc(e - to + 1);
            if (tail) {
                memcpy(tail, T + to, e - to);
                tail[e - to] = 0;
                quote_token(res->theirs_tok, sizeof res->theirs_tok, e > to ? tail : "(nothing: it stopped)");
                free(tail);
            }
            quote_token(res->ours_tok, sizeof res->ours_tok,
                        (size_t)div_at < n_tok ? ours->pieces[div_at] : "(nothing: sunny stopped)");
        }
        free(end_off);
        free(B);
    }
    if (div_at >= 0) {
        res->pos = div_at;
        res->n_identical = div_at;
        if ((size_t)div_at < ours->n) {
            res->gap = ours->gap[div_at];
            res->tie = sn_smoke_tied(ours->gap[div_at], ours->max_abs[div_at]);
        }
        res->diverged = !res->tie;
    } else {
        res->n_identical = res->n_compared;
    }
    return SN_OK;
}

/* Does the server's token text stand for our token's bytes? Valid UTF-8 must match byte for byte; a
 * run that is not valid UTF-8 on our side (a token boundary inside a character) may come back as any
 * number of U+FFFD (JSON encoders replace such bytes) or as nothing (llama-server drops an incomplete
 * trailing character from a token's text). */
static int piece_matches(const char *ours, const char *theirs) {
    const unsigned char *a = (const unsigned char *)ours, *b = (const unsigned char *)theirs;
    size_t al = strlen(ours), bl = strlen(theirs), i = 0, j = 0;
    while (i < al) {
        size_t vl = utf8_valid_len(a + i, al - i);
        if (vl > 0) {
            if (j + vl > bl || memcmp(a + i, b + j, vl) != 0) return 0;
            i += vl;
            j += vl;
            continue;
        }
        while (i < al && utf8_valid_len(a + i, al - i) == 0) i++;
        while (j + 3 <= bl && b[j] == 0xEF && b[j + 1] == 0xBF && b[j + 2] == 0xBD) j += 3;
    }
    return j == bl;
}

sn_status sn_smoke_compare_tokens(const sn_smoke_local *ours, const sn_smoke_token *toks, size_t n,
                                  int server_stopped, int truncated, sn_smoke_result *res, sn_err *err) {
    memset(res, 0, sizeof *res);
    res->server_gap = NAN;
    res->text_byte = -1;
    res->n_expected = (int)ours->n;
    res->truncated = truncated;
    snprintf(res->method, sizeof res->method, "logprobs, token by token");
    size_t tl = 0;
    for (size_t i = 0; i < n; i++) tl += strlen(toks[i].text ? toks[i].text : "");
    res->ours_text = strdup(ours->text ? ours->text : "");
    res->theirs_text = malloc(tl + 1);
    if (!res->ours_text || !res->theirs_text) return sn_err_set(err, SN_ENOMEM, "out of memory");
    res->theirs_text[0] = 0;
    for (size_t i = 0, p = 0; i < n; i++) {
        size_t l = strlen(toks[i].text ? toks[i].text : "");
        memcpy(res->theirs_text + p, toks[i].text ? toks[i].text : "", l + 1);
        p += l;
    }
    size_t n_ours = ours->n; /* the server never reports the end-of-generation token itself */
    if (n_ours > 0 && is_eog(ours, ours->ids[n_ours - 1])) n_ours--;
    size_t m = n < n_ours ? n : n_ours, i = 0;
    int div_at = -1;
    for (; i < m; i++) {
        const char *t = toks[i].text ? toks[i].text : "";
        if (piece_matches(ours->pieces[i], t)) continue;
        /* a stop string cuts the server's last token short: its text is a prefix of ours */
        if (server_stopped && i + 1 == n && strncmp(ours->pieces[i], t, strlen(t)) == 0) continue;
        div_at = (int)i;
        break;
    }
    res->n_compared = div_at >= 0 ? div_at + 1 : (int)m;
    if (div_at < 0) {
        if (n > n_ours) {
            div_at = (int)n_ours; /* the server went on where we stopped (or ended) */
            res->n_compared = div_at + 1;
        } else if (n < n_ours && !truncated) {
            if (server_stopped) snprintf(res->server_stop, sizeof res->server_stop, "stopped after %zu tokens", n);
            else { div_at = (int)n; res->n_compared = div_at + 1; }
        }
    }
    if (div_at >= 0) {
        res->pos = div_at;
        res->n_identical = div_at;
        quote_token(res->theirs_tok, sizeof res->theirs_tok,
                    (size_t)div_at < n ? (toks[div_at].text ? toks[div_at].text : "") : "(nothing: it stopped)");
        quote_token(res->ours_tok, sizeof res->ours_tok,
                    (size_t)div_at < ours->n ? ours->pieces[div_at] : "(nothing: sunny stopped)");
        if ((size_t)div_at < ours->n && (size_t)div_at < n) {
            res->gap = ours->gap[div_at];
            res->server_gap = (float)toks[div_at].gap;
            int ours_tied = sn_smoke_tied(ours->gap[div_at], ours->max_abs[div_at]);
            int theirs_tied = isnan(toks[div_at].gap) || sn_smoke_tied((float)toks[div_at].gap, ours->max_abs[div_at]);
            res->tie = ours_tied && theirs_tied;
        }
        res->diverged = !res->tie;
    } else {
        res->n_identical = res->n_compared;
    }
    return SN_OK;
}

sn_status sn_smoke_context_check(const sn_smoke_local *ours, const char *rendered_prompt,
                                 const char *server_text, const int32_t *ctx, size_t n,
                                 sn_smoke_result *r, sn_err *err) {
    if (!ours->tok) return SN_OK;
    size_t pl = strlen(rendered_prompt), tl = strlen(server_text);
    char *all = malloc(pl + tl + 1);
    size_t cap = pl + tl + 16;
    int32_t *ids = malloc(cap * sizeof(int32_t));
    if (!all || !ids) { free(all); free(ids); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
    memcpy(all, rendered_prompt, pl);
    memcpy(all + pl, server_text, tl + 1);
    int64_t k = sn_tok_encode(ours->tok, all, pl + tl, 0, 1, ids, cap, err);
    if (k > (int64_t)cap) {
        cap = (size_t)k;
        int32_t *nr = realloc(ids, cap * sizeof(int32_t));
        if (!nr) { free(all); free(ids); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
        ids = nr;
        k = sn_tok_encode(ours->tok, all, pl + tl, 0, 1, ids, cap, err);
    }
    free(all);
    if (k < 0) { free(ids); return sn_err_prefix(err, "re-tokenizing prompt + answer"); }
    size_t m = (size_t)k < n ? (size_t)k : n, i = 0;
    while (i < m && ids[i] == ctx[i]) i++;
    if (i == m && (size_t)k == n) {
        /* Is it also the ids that were computed (prompt ids without BOS, then the generated ones)? */
        size_t p0 = ours->n_prompt > 0 && ours->tok && sn_tok_specials(ours->tok).bos == ours->prompt_ids[0] ? 1 : 0;
        size_t np = ours->n_prompt - p0, ng = ours->n;
        if (ng > 0 && is_eog(ours, ours->ids[ng - 1])) ng--;
        int same = np + ng == n && memcmp(ctx, ours->prompt_ids + p0, np * sizeof(int32_t)) == 0 &&
                   memcmp(ctx + np, ours->ids, (n - np) * sizeof(int32_t)) == 0;
        snprintf(r->context_note, sizeof r->context_note,
                 "the server's context (prompt + answer re-tokenized, %zu ids) equals sunny's tokenizer on the "
                 "same text%s", n,
                 same ? "" : "; the prompt/answer boundary re-tokenized differently from the ids generated "
                             "(expected: Ollama's context is not the generated ids)");
    } else {
        snprintf(r->prompt_diff, sizeof r->prompt_diff,
                 "the server's tokenizer differs: its context (prompt + answer re-tokenized without BOS) has "
                 "%zu ids, sunny's tokenizer gives %lld on the same text; first difference at index %zu "
                 "(server %d, sunny %d)",
                 n, (long long)k, i, i < n ? ctx[i] : -1, i < (size_t)k ? ids[i] : -1);
        r->diverged = 1;
        r->tie = 0;
    }
    free(ids);
    return SN_OK;
}

void sn_smoke_prompt_count_check(const sn_smoke_local *ours, int64_t n, sn_smoke_result *r) {
    if (n < 0 || (size_t)n == ours->n_prompt) return;
    snprintf(r->prompt_diff, sizeof r->prompt_diff,
             "prompt tokenized differently: the server evaluated %lld prompt tokens, sunny %zu%s",
             (long long)n, ours->n_prompt,
             ((size_t)n + 1 == ours->n_prompt || (size_t)n == ours->n_prompt + 1) ? " - a BOS difference" : "");
    r->diverged = 1;
    r->tie = 0;
}

void sn_smoke_prompt_check(const sn_smoke_local *ours, const int32_t *sp, size_t n,
                           sn_smoke_result *r) {
    size_t m = n < ours->n_prompt ? n : ours->n_prompt, i = 0;
    while (i < m && sp[i] == ours->prompt_ids[i]) i++;
    if (i == m && n == ours->n_prompt) return;
    snprintf(r->prompt_diff, sizeof r->prompt_diff,
             "prompt tokenized differently: %zu ids from the server, %zu from sunny, first difference at "
             "index %zu (server %d, sunny %d)%s",
             n, ours->n_prompt, i, i < n ? sp[i] : -1, i < ours->n_prompt ? ours->prompt_ids[i] : -1,
             (i == 0 && (n == ours->n_prompt + 1 || n + 1 == ours->n_prompt)) ? " - a BOS difference" : "");
    r->diverged = 1;
    r->tie = 0;
}

static void show_text(char *dst, size_t cap, const char *s) {
    size_t j = 0;
    if (cap < 8) { if (cap) dst[0] = 0; return; }
    dst[j++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p && j + 6 < cap; p++) {
        if (*p == '\n') { dst[j++] = '\\'; dst[j++] = 'n'; }
        else if (*p == '"') { dst[j++] = '\\'; dst[j++] = '"'; }
        else if (*p < 0x20) j += (size_t)snprintf(dst + j, cap - j, "\\x%02x", *p);
        else dst[j++] = (char)*p;
    }
    dst[j++] = '"';
    dst[j] = 0;
}

static void quote_token(char *dst, size_t cap, const char *s) { show_text(dst, cap, s); }

void sn_smoke_format(const sn_smoke_result *r, const char *server_name, char *buf, size_t cap) {
    char o[1200], t[1200];
    show_text(o, sizeof o, r->ours_text ? r->ours_text : "");
    show_text(t, sizeof t, r->theirs_text ? r->theirs_text : "");
    const char *method = r->method[0] ? r->method : (r->by_ids ? "token ids" : "text");
    char ctx[400] = "";
    if (r->context_note[0]) snprintf(ctx, sizeof ctx, "\n[smoke] note: context: %s", r->context_note); /* informational */
    if (r->prompt_diff[0]) {
        snprintf(buf, cap, "[smoke] %sDIVERGED before generation: %s\n[smoke]   %-6s: %s\n[smoke]   sunny : %s",
                 r->scope, r->prompt_diff, server_name, t, o);
        return;
    }
    if (!r->diverged && !r->tie) {
        if (r->truncated)
            snprintf(buf, cap,
                     "[smoke] %sTRUNCATED by the server after %d of %d tokens: %d/%d identical (compared %s)\n"
                     "[smoke]   the reply ended without done/done_reason: Ollama aborts a prediction after "
                     "more than 30 chunks that trim to the same text (a repetitive model); the rest is "
                     "unproven - try another prompt (-p) or a shorter -n%s",
                     r->scope, r->n_compared, r->n_expected, r->n_identical, r->n_compared, method, ctx);
        else
            snprintf(buf, cap, "[smoke] %sOK: %d/%d tokens identical%s%s%s (compared %s)%s", r->scope, r->n_identical,
                     r->n_compared, r->server_stop[0] ? " (" : "", r->server_stop,
                     r->server_stop[0] ? ")" : "", method, ctx);
        return;
    }
    char first[300] = "", sgap[200] = "";
    if (r->ours_tok[0] && r->text_byte >= 0)
        snprintf(first, sizeof first, "\n[smoke]   first differing byte: %ld of the text, in sunny's token %d: "
                 "%s %s, sunny %s", r->text_byte, r->pos, server_name, r->theirs_tok, r->ours_tok);
    else if (r->ours_tok[0])
        snprintf(first, sizeof first, "\n[smoke]   first differing token: %s %s, sunny %s", server_name,
                 r->theirs_tok, r->ours_tok);
    if (!isnan(r->server_gap))
        snprintf(sgap, sizeof sgap, "; the server's own top-2 logprob gap: %.6g", (double)r->server_gap);
    snprintf(buf, cap,
             "[smoke] %s%s at token %d of %d (%d identical before it, compared %s)%s%s\n"
             "[smoke]   %-6s: %s\n[smoke]   sunny : %s\n"
             "[smoke]   our top-2 logit gap at that step: %.6g%s%s%s",
             r->scope, r->tie ? "TIE (not a real divergence)" : "DIVERGED", r->pos, r->n_expected, r->n_identical,
             method, r->truncated ? " (the server's reply was truncated)" : "", first, server_name, t, o,
             (double)r->gap, sgap,
             r->tie ? " (every known gap < 1e-3 x max|logit|: the two candidates are numerically tied)" : "",
             ctx);
}

int sn_smoke_result_json(const sn_smoke_result *res, cJSON *out) {
    cJSON *sj = cJSON_AddObjectToObject(out, res->scope[0] ? "smoke_chat" : "smoke");
    cJSON_AddBoolToObject(sj, "ok", !res->diverged);
    cJSON_AddNumberToObject(sj, "identical", res->n_identical);
    cJSON_AddNumberToObject(sj, "compared", res->n_compared);
    cJSON_AddNumberToObject(sj, "expected", res->n_expected);
    cJSON_AddBoolToObject(sj, "by_ids", res->by_ids);
    cJSON_AddStringToObject(sj, "method", res->method);
    cJSON_AddBoolToObject(sj, "truncated", res->truncated);
    if (res->context_note[0]) cJSON_AddStringToObject(sj, "context", res->context_note);
    if (res->diverged || res->tie) {
        cJSON_AddNumberToObject(sj, "position", res->pos);
        cJSON_AddNumberToObject(sj, "gap", res->gap);
    }
    cJSON_AddStringToObject(sj, "server_text", res->theirs_text);
    cJSON_AddStringToObject(sj, "sunny_text", res->ours_text);
    return res->diverged != 0;
}
