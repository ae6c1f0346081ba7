/* test_integrate_smoke.c - the parity gate's comparison rules on hand-made runs: ids and text paths,
 * a server that stops early on a stop string (not a divergence) or without saying so (a divergence),
 * bytes that are not valid UTF-8 on our side against the U+FFFD a server substitutes, numerical ties,
 * and a server that tokenized the prompt differently. */
#include "sn_test.h"
#include "smoke.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A run of n tokens with the given pieces; ids 100+i; gaps 5.0 unless set. */
static sn_smoke_local mk(const char *const *pieces, size_t n) {
    sn_smoke_local l;
    memset(&l, 0, sizeof l);
    l.n = n;
    l.ids = calloc(n, sizeof(int32_t));
    l.gap = calloc(n, sizeof(float));
    l.max_abs = calloc(n, sizeof(float));
    l.pieces = calloc(n, sizeof(char *));
    size_t tl = 0;
    for (size_t i = 0; i < n; i++) {
        l.ids[i] = (int32_t)(100 + i);
        l.gap[i] = 5.0f;
        l.max_abs[i] = 20.0f;
        l.pieces[i] = strdup(pieces[i]);
        tl += strlen(pieces[i]);
    }
    l.text = calloc(tl + 1, 1);
    for (size_t i = 0; i < n; i++) strcat(l.text, pieces[i]);
    l.n_prompt = 3;
    l.prompt_ids = calloc(3, sizeof(int32_t));
    l.prompt_ids[0] = 1; l.prompt_ids[1] = 50; l.prompt_ids[2] = 51;
    return l;
}

static const char *const P[] = {"The", " capital", " of", " France", " is", " Paris", "."};

static void test_text_ok(void) {
    sn_smoke_local l = mk(P, 7);
    sn_smoke_result r;
    sn_err e = {0};
    CU_ASSERT_EQUAL(sn_smoke_compare(&l, "The capital of France is Paris.", NULL, 0, 0, &r, &e), SN_OK);
    CU_ASSERT(!r.diverged && !r.tie);
    CU_ASSERT_EQUAL(r.n_compared, 7);
    CU_ASSERT_EQUAL(r.n_identical, 7);
    char buf[2048];
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "[smoke] OK: 7/7 tokens identical"));
    /* an informational context line after an OK verdict reads as a note, not a second verdict */
    snprintf(r.context_note, sizeof r.context_note, "the server's context equals sunny's tokenizer; the boundary "
             "re-tokenized differently (expected)");
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n[smoke] note: context: the server's context"));
    sn_smoke_result_free(&r);
    sn_smoke_local_free(&l);
}

static void test_text_divergence(void) {
    sn_smoke_local l = mk(P, 7);
    l.gap[5] = 0.75f;
    sn_smoke_result r;
    sn_err e = {0};
    sn_smoke_compare(&l, "The capital of France is Lyon.", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.diverged);
    CU_ASSERT_EQUAL(r.pos, 5);
    CU_ASSERT_EQUAL(r.n_identical, 5);
    CU_ASSERT(fabsf(r.gap - 0.75f) < 1e-6f);
    char buf[2048];
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "DIVERGED at token 5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Lyon"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "0.75"));
    /* where the texts part: byte 25 ("The capital of France is " is 24 bytes + the shared space), in
     * our token 5; the server's bytes from there (as many as our token, at least 8), ours quoted */
    CU_ASSERT_EQUAL(r.text_byte, 25);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "first differing byte: 25 of the text, in sunny's token 5: ollama \"Lyon.\", sunny \" Paris\""));
    sn_smoke_result_free(&r);
    /* a divergence inside a token's first bytes: " Par" vs " Pal" parts at byte 27, still token 5 */
    sn_smoke_compare(&l, "The capital of France is Palermo.", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 5 && r.text_byte == 27);
    sn_smoke_result_free(&r);
    /* the same place with a numerically tied pair is reported as a tie, not a failure */
    l.gap[5] = 1e-5f;
    sn_smoke_compare(&l, "The capital of France is Lyon.", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.tie && !r.diverged);
    sn_smoke_result_free(&r);
    /* the rule's edge: a gap of 0.9e-3 x max|logit| is a tie, 1.1e-3 x max|logit| is a divergence */
    l.gap[5] = 0.9e-3f * l.max_abs[5];
    sn_smoke_compare(&l, "The capital of France is Lyon.", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.tie && !r.diverged);
    sn_smoke_result_free(&r);
    l.gap[5] = 1.1e-3f * l.max_abs[5];
    sn_smoke_compare(&l, "The capital of France is Lyon.", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && !r.tie);
    sn_smoke_result_free(&r);
    sn_smoke_local_free(&l);
}

static void test_text_early_stop(void) {
    sn_smoke_local l = mk(P, 7);
    sn_smoke_result r;
    sn_err e = {0};
    /* stopped on a stop string at a token boundary: fine */
    sn_smoke_compare(&l, "The capital of France", NULL, 0, 1, &r, &e);
    CU_ASSERT(!r.diverged);
    CU_ASSERT_EQUAL(r.n_compared, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.server_stop, "4 tokens"));
    sn_smoke_result_free(&r);
    /* the same text without a stop: the server lost tokens */
    sn_smoke_compare(&l, "The capital of France", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.diverged);
    CU_ASSERT_EQUAL(r.pos, 4);
    sn_smoke_result_free(&r);
    /* the server said more than we generated */
    sn_smoke_compare(&l, "The capital of France is Paris. And", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.diverged);
    CU_ASSERT_EQUAL(r.pos, 7);
    sn_smoke_result_free(&r);
    sn_smoke_local_free(&l);
}

static void test_text_invalid_utf8(void) {
    /* "é" split over two tokens, then a lone continuation byte run; servers send U+FFFD */
    static const char *const Q[] = {"caf", "\xc3", "\xa9", " \xa9\xa9", "!"};
    sn_smoke_local l = mk(Q, 5);
    sn_smoke_result r;
    sn_err e = {0};
    sn_smoke_compare(&l, "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd!", NULL, 0, 0, &r, &e);
    CU_ASSERT(!r.diverged);
    CU_ASSERT_EQUAL(r.n_compared, 5);
    sn_smoke_result_free(&r);
    sn_smoke_compare(&l, "caf\xc3\xa9 X!", NULL, 0, 0, &r, &e);
    CU_ASSERT(r.diverged);
    CU_ASSERT_EQUAL(r.pos, 3);
    sn_smoke_result_free(&r);
    sn_smoke_local_free(&l);
}

static void test_ids(void) {
    sn_smoke_local l = mk(P, 7);
    sn_smoke_result r;
    sn_err e = {0};
    int32_t same[7] = {100, 101, 102, 103, 104, 105, 106};
    sn_smoke_compare(&l, "whatever the text", same, 7, 0, &r, &e);
    CU_ASSERT(!r.diverged && r.by_ids && r.n_compared == 7);
    sn_smoke_result_free(&r);
    int32_t other[7] = {100, 101, 102, 999, 104, 105, 106};
    sn_smoke_compare(&l, "", other, 7, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 3);
    sn_smoke_result_free(&r);
    int32_t first[7] = {999, 101, 102, 103, 104, 105, 106}; /* the very first token counts too */
    sn_smoke_compare(&l, "", first, 7, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 0);
    sn_smoke_result_free(&r);
    sn_smoke_compare(&l, "", same, 5, 1, &r, &e);
    CU_ASSERT(!r.diverged && r.n_compared == 5);
    sn_smoke_result_free(&r);
    sn_smoke_compare(&l, "", same, 5, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 5);
    sn_smoke_result_free(&r);
    sn_smoke_local_free(&l);
}

static void test_prompt_check(void) {
    sn_smoke_local l = mk(P, 7);
    sn_smoke_result r;
    sn_err e = {0};
    int32_t same[7] = {100, 101, 102, 103, 104, 105, 106};
    sn_smoke_compare(&l, "", same, 7, 0, &r, &e);
    int32_t sp_ok[3] = {1, 50, 51}, sp_nobos[2] = {50, 51};
    sn_smoke_prompt_check(&l, sp_ok, 3, &r);
    CU_ASSERT(!r.diverged && !r.prompt_diff[0]);
    sn_smoke_prompt_check(&l, sp_nobos, 2, &r);
    CU_ASSERT(r.diverged);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.prompt_diff, "BOS"));
    char buf[2048];
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "DIVERGED before generation"));
    sn_smoke_result_free(&r);
    sn_smoke_local_free(&l);
}

/* Server tokens (text, gap) for the logprobs path. */
static sn_smoke_token *toks_of(const char *const *texts, size_t n) {
    sn_smoke_token *t = calloc(n, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        t[i].text = strdup(texts[i]);
        t[i].logprob = -0.5;
        t[i].gap = 5.0;
    }
    return t;
}

static void test_tokens(void) {
    sn_smoke_local l = mk(P, 7);
    sn_smoke_result r;
    sn_err e = {0};
    sn_smoke_token *t = toks_of(P, 7);
    CU_ASSERT_EQUAL(sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e), SN_OK);
    CU_ASSERT(!r.diverged && !r.tie && r.n_identical == 7);
    char buf[4096];
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "OK: 7/7 tokens identical (compared logprobs"));
    sn_smoke_result_free(&r);
    /* a different token 4: a divergence that names both tokens */
    free(t[4].text);
    t[4].text = strdup(" was");
    sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 4 && r.n_identical == 4);
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "first differing token: ollama \" was\", sunny \" is\""));
    sn_smoke_result_free(&r);
    /* a server token whose text only begins with ours (" isn't" for " is") is another token */
    free(t[4].text);
    t[4].text = strdup(" isn't");
    sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 4);
    sn_smoke_result_free(&r);
    free(t[4].text);
    t[4].text = strdup(" was");
    /* our gap tied but the server's is not: still a divergence (both must be tied) */
    l.gap[4] = 1e-5f;
    sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && !r.tie);
    sn_smoke_result_free(&r);
    t[4].gap = 1e-5;
    sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e);
    CU_ASSERT(!r.diverged && r.tie);
    sn_smoke_result_free(&r);
    /* only the server tied: a divergence */
    l.gap[4] = 5.0f;
    sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && !r.tie);
    sn_smoke_result_free(&r);
    /* fewer tokens: fine after a stop or a truncation, a divergence otherwise */
    free(t[4].text);
    t[4].text = strdup(" is");
    sn_smoke_compare_tokens(&l, t, 5, 1, 0, &r, &e);
    CU_ASSERT(!r.diverged && r.n_compared == 5);
    sn_smoke_result_free(&r);
    sn_smoke_compare_tokens(&l, t, 5, 0, 1, &r, &e);
    CU_ASSERT(!r.diverged && r.truncated);
    sn_smoke_format(&r, "ollama", buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "TRUNCATED by the server after 5 of 7 tokens"));
    sn_smoke_result_free(&r);
    sn_smoke_compare_tokens(&l, t, 5, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 5);
    sn_smoke_result_free(&r);
    sn_smoke_tokens_free(t, 7);
    sn_smoke_local_free(&l);
}

static void test_tokens_invalid_utf8(void) {
    /* a character split over two tokens: the server reports U+FFFD or nothing for each half */
    const char *const ours[] = {"caf", "\xc3", "\xa9", "!"};
    sn_smoke_local l = mk(ours, 4);
    const char *const th1[] = {"caf", "\xef\xbf\xbd", "\xef\xbf\xbd", "!"};
    const char *const th2[] = {"caf", "", "\xef\xbf\xbd", "!"};
    const char *const th3[] = {"caf", "", "x", "!"};
    sn_smoke_result r;
    sn_err e = {0};
    sn_smoke_token *t = toks_of(th1, 4);
    sn_smoke_compare_tokens(&l, t, 4, 0, 0, &r, &e);
    CU_ASSERT(!r.diverged);
    sn_smoke_result_free(&r);
    sn_smoke_tokens_free(t, 4);
    t = toks_of(th2, 4);
    sn_smoke_compare_tokens(&l, t, 4, 0, 0, &r, &e);
    CU_ASSERT(!r.diverged);
    sn_smoke_result_free(&r);
    sn_smoke_tokens_free(t, 4);
    t = toks_of(th3, 4);
    sn_smoke_compare_tokens(&l, t, 4, 0, 0, &r, &e);
    CU_ASSERT(r.diverged && r.pos == 2);
    sn_smoke_result_free(&r);
    sn_smoke_tokens_free(t, 4);
    sn_smoke_local_free(&l);
}

static void test_prompt_count(void) {
    sn_smoke_local l = mk(P, 7);
    sn_smoke_result r;
    sn_err e = {0};
    sn_smoke_token *t = toks_of(P, 7);
    sn_smoke_compare_tokens(&l, t, 7, 0, 0, &r, &e);
    sn_smoke_prompt_count_check(&l, 3, &r);
    CU_ASSERT(!r.diverged);
    sn_smoke_prompt_count_check(&l, 2, &r);
    CU_ASSERT(r.diverged && strstr(r.prompt_diff, "BOS difference"));
    sn_smoke_result_free(&r);
    sn_smoke_tokens_free(t, 7);
    sn_smoke_local_free(&l);
}

static const sn_test_case cases[] = {
    {"server tokens (logprobs)", test_tokens},
    {"server tokens vs invalid UTF-8", test_tokens_invalid_utf8},
    {"prompt_eval_count", test_prompt_count},
    {"text identical", test_text_ok},
    {"text divergence and ties", test_text_divergence},
    {"server stops early", test_text_early_stop},
    {"invalid UTF-8 vs U+FFFD", test_text_invalid_utf8},
    {"token ids", test_ids},
    {"prompt ids", test_prompt_check},
};
SN_TEST_MAIN("integrate_smoke", cases)
