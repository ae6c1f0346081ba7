/* test_http.c - integrate/http.c against a socket server in a thread that misbehaves on purpose:
 * a stalled server is abandoned after the handle's stall limit with the request named, a slow but
 * moving reply is not, an endless NDJSON line stops at its budget, and only http(s) URLs are taken. */
#include "http.h"
#include "lmstudio.h"
#include "lmstudio_reply.h"
#include "ollama.h"
#include "sn_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { STALL, TRICKLE, ENDLESS_LINE, HUGE_BODY, CHUNK_THEN_STALL, SSE_THEN_STALL, SSE_TRICKLE };
typedef struct { int lfd, mode; } server;

static void *serve(void *ud) {
    server *s = ud;
    int c = accept(s->lfd, NULL, NULL);
    if (c < 0) return NULL;
    char req[4096] = {0};
    size_t got = 0;
    for (;;) { /* the request (small): its headers and Content-Length bytes of body */
        ssize_t k = read(c, req + got, sizeof req - 1 - got);
        if (k <= 0) break;
        got += (size_t)k;
        const char *end = strstr(req, "\r\n\r\n"), *cl = strcasestr(req, "Content-Length:");
        if (end && (!cl || cl > end || got >= (size_t)(end + 4 - req) + strtoul(cl + 15, NULL, 10))) break;
        if (got >= sizeof req - 1) break;
    }
    /* a completion that does not ask to stream is answered whole at the end, as LM Studio does:
     * silence until then */
    if ((s->mode == SSE_THEN_STALL || s->mode == SSE_TRICKLE) && !strstr(req, "\"stream\":true")) s->mode = STALL;
    if (s->mode == STALL) { /* says nothing, holds the connection until the client gives up (6 s at most) */
        struct timeval tv = {6, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char b;
        (void)!read(c, &b, 1);
    } else if (s->mode == TRICKLE) {
        const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n";
        (void)!write(c, h, strlen(h));
        for (int i = 0; i < 8; i++) { /* 1 byte per 0.35 s: 2.8 s in all, never 1 s silent */
            usleep(350000);
            (void)!write(c, i == 0 ? "{" : i == 7 ? "}" : " ", 1);
        }
    } else if (s->mode == CHUNK_THEN_STALL) { /* one generate chunk, then nothing for 6 s */
        const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n"
                        "{\"response\":\"Hi\",\"done\":false}\n";
        (void)!write(c, h, strlen(h));
        struct timeval tv = {6, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char b;
        (void)!read(c, &b, 1);
    } else if (s->mode == SSE_THEN_STALL || s->mode == SSE_TRICKLE) {
        /* LM Studio's streamed completion: one event per token, [DONE] at the end. SSE_THEN_STALL
         * sends one and then nothing for 6 s; SSE_TRICKLE one every 0.35 s (2.8 s in all, never
         * 1 s silent) */
        const char *h = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
        (void)!write(c, h, strlen(h));
        static const char *ev[] = {
            "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"Hi\",\"logprobs\":null,"
            "\"finish_reason\":null}]}\n\n",
            "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" there\",\"finish_reason\":null}]}\n\n",
            ": keep-alive\n\n",
            "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"};
        static const int order[] = {0, 1, 2, 1, 1, 1, 1, 3};
        for (int i = 0; i < (s->mode == SSE_TRICKLE ? 8 : 1); i++) {
            const char *e = ev[order[i]];
            if (i > 0) usleep(350000);
            (void)!write(c, e, strlen(e));
        }
        if (s->mode == SSE_TRICKLE) (void)!write(c, ev[4], strlen(ev[4]));
        else {
            struct timeval tv = {6, 0};
            setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            char b;
            (void)!read(c, &b, 1);
        }
    } else if (s->mode == HUGE_BODY) { /* 65 MB of JSON, one byte past the body budget and more */
        const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
        (void)!write(c, h, strlen(h));
        static char a[1 << 16];
        memset(a, ' ', sizeof a);
        for (int i = 0; i < 1040; i++)
            if (write(c, a, sizeof a) <= 0) break;
    } else {
        const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n";
        (void)!write(c, h, strlen(h));
        static char a[1 << 16];
        memset(a, 'a', sizeof a);
        for (int i = 0; i < 48; i++) /* 3 MB without a newline */
            if (write(c, a, sizeof a) <= 0) break;
    }
    close(c);
    return NULL;
}

static sn_http *start(server *s, int mode, pthread_t *t) {
    s->mode = mode;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CU_ASSERT_FATAL(bind(s->lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(s->lfd, 1) == 0 &&
                    getsockname(s->lfd, (struct sockaddr *)&a, &al) == 0);
    pthread_create(t, NULL, serve, s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    sn_http *h = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_http_new(url, NULL, &h, &err), SN_OK);
    sn_http_set_stall(h, 1);
    return h;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void ignore_status(void *ud, const char *line) { (void)ud; (void)line; }

static void test_stalled_create(void) {
    server s;
    pthread_t t;
    sn_http *h = start(&s, STALL, &t);
    sn_err err = {0};
    double t0 = now();
    CU_ASSERT_NOT_EQUAL(sn_ollama_create(h, "{\"model\":\"x\"}", ignore_status, NULL, &err), SN_OK);
    double dt = now() - t0;
    CU_ASSERT(dt < 4.0); /* the stall limit (1 s), not the server's 6 s */
    if (dt >= 4.0 || !strstr(err.msg, "stalled")) fprintf(stderr, "%.1f s: %s\n", dt, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "POST /api/create"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stalled"));
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
}

static void test_slow_but_moving(void) {
    server s;
    pthread_t t;
    sn_http *h = start(&s, TRICKLE, &t);
    sn_http_req rq = {.method = "GET", .path = "/slow"};
    sn_http_resp r;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_http_do(h, &rq, &r, &err), SN_OK);
    CU_ASSERT_EQUAL(r.cls, SN_HTTP_OK);
    CU_ASSERT_EQUAL(r.len, 8);
    sn_http_resp_free(&r);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
}

static int count_line(void *ud, const char *line, size_t len) {
    (void)line;
    *(size_t *)ud += len;
    return 0;
}

static void test_endless_line(void) {
    server s;
    pthread_t t;
    sn_http *h = start(&s, ENDLESS_LINE, &t);
    size_t got = 0;
    sn_http_req rq = {.method = "POST", .path = "/api/create", .json = "{}", .on_line = count_line, .line_ud = &got};
    sn_http_resp r;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_http_do(h, &rq, &r, &err), SN_EIO);
    CU_ASSERT_EQUAL(got, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "SN_BUDGET_NDJSON_LINE"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "POST /api/create"));
    sn_http_resp_free(&r);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
}


static void test_huge_body(void) {
    server s;
    pthread_t t;
    sn_http *h = start(&s, HUGE_BODY, &t);
    sn_http_req rq = {.method = "POST", .path = "/api/show", .json = "{}"};
    sn_http_resp r;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_http_do(h, &rq, &r, &err), SN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "SN_BUDGET_JSON_BODY"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "POST /api/show"));
    sn_http_resp_free(&r);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
}

static void test_schemes(void) {
    const char *bad[] = {"dict://127.0.0.1:11434", "gopher://127.0.0.1:70", "ftp://127.0.0.1", "file:///etc/passwd"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sn_http *h = NULL;
        sn_err err = {0};
        CU_ASSERT_EQUAL(sn_http_new(bad[i], NULL, &h, &err), SN_EINVAL);
        if (i < 3) CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not http or https"));
        sn_http_free(h);
    }
    sn_http *h = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_http_new("HTTPS://example.com:8443/x", NULL, &h, &err), SN_OK);
    sn_http_free(h);
}


/* no_proxy CIDR entries, as Go's httpproxy and libcurl (>= 7.86) match them: a host inside is
 * reached directly, so a failure there must not be blamed on the proxy */
static void test_no_proxy_cidr(void) {
    char var[32], val[200];
    sn_env env = {.http_proxy = "http://127.0.0.1:9", .no_proxy = "example.org, 10.0.0.0/8,fd00::/8, 192.168.1.0/33"};
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "10.1.2.3", var, sizeof var, val, sizeof val), 0);
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "fd12::1", var, sizeof var, val, sizeof val), 0);
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "a.example.org", var, sizeof var, val, sizeof val), 0);
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "11.1.2.3", var, sizeof var, val, sizeof val), 1);
    CU_ASSERT_STRING_EQUAL(var, "http_proxy");
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "fe80::1", var, sizeof var, val, sizeof val), 1);
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "192.168.1.7", var, sizeof var, val, sizeof val), 1); /* /33: ignored */
    env.no_proxy = "10.0.0.0/0";
    CU_ASSERT_EQUAL(sn_http_proxy_for(&env, "http", "203.0.113.5", var, sizeof var, val, sizeof val), 0);
}

/* Requests that may load a model: silence before the first byte is bounded by the load limit (here
 * 2 s, not the 1 s stall limit), silence after a chunk by the stall limit, and the error names the
 * request. Before, /api/generate (stream:false) and LM Studio's JIT completion waited 30 minutes. */
static void test_generate_stalls(void) {
    server s;
    pthread_t t;
    sn_http *h = start(&s, CHUNK_THEN_STALL, &t);
    sn_http_set_load(h, 30);
    cJSON *b = cJSON_Parse("{\"model\":\"m\",\"prompt\":\"x\",\"stream\":false}");
    sn_ollama_gen g;
    sn_err err = {0};
    double t0 = now();
    CU_ASSERT_EQUAL(sn_ollama_generate(h, b, &g, &err), SN_EIO);
    double dt = now() - t0;
    CU_ASSERT(dt < 4.0); /* the stall limit after the first chunk, not the 30 s load limit */
    CU_ASSERT(strstr(err.msg, "POST /api/generate") && strstr(err.msg, "stalled"));
    if (dt >= 4.0 || !strstr(err.msg, "stalled")) fprintf(stderr, "%.1f s: %s\n", dt, err.msg);
    CU_ASSERT_PTR_NULL(g.text);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);

    h = start(&s, STALL, &t);
    sn_http_set_load(h, 2);
    t0 = now();
    CU_ASSERT_EQUAL(sn_ollama_generate(h, b, &g, &err), SN_EIO);
    dt = now() - t0;
    CU_ASSERT(dt >= 1.8 && dt < 5.0); /* the load limit, longer than the stall limit */
    CU_ASSERT(strstr(err.msg, "POST /api/generate") && strstr(err.msg, "no answer within 2 s"));
    if (dt < 1.8 || dt >= 5.0 || !strstr(err.msg, "no answer")) fprintf(stderr, "%.1f s: %s\n", dt, err.msg);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
    cJSON_Delete(b);

    h = start(&s, STALL, &t);
    sn_http_set_load(h, 2);
    sn_smoke_result res = {0};
    t0 = now();
    CU_ASSERT_NOT_EQUAL(sn_lms_smoke(h, "m", "llama", "x", 4, 1, NULL, &res, NULL, NULL, &err), SN_OK);
    dt = now() - t0;
    CU_ASSERT(dt < 5.0);
    CU_ASSERT(strstr(err.msg, "/api/v0/completions") && strstr(err.msg, "no answer within 2 s"));
    if (dt >= 5.0 || !strstr(err.msg, "no answer")) fprintf(stderr, "%.1f s: %s\n", dt, err.msg);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
}

/* LM Studio's completion is streamed (server-sent events): an event then silence is a stall within
 * the stall limit (not the 30 s load limit), naming the request; events every 0.35 s with a 1 s
 * stall limit are a slow but moving answer, read whole. */
static void test_lms_stream(void) {
    server s;
    pthread_t t;
    sn_http *h = start(&s, SSE_THEN_STALL, &t);
    sn_http_set_load(h, 30);
    sn_lms_completion c;
    const char *used = NULL;
    sn_err err = {0};
    double t0 = now();
    CU_ASSERT_EQUAL(sn_lms_complete(h, "{\"model\":\"m\",\"prompt\":\"x\",\"stream\":false}", &c, &used, NULL, NULL, &err),
                    SN_EIO);
    double dt = now() - t0;
    CU_ASSERT(dt < 4.0);
    CU_ASSERT(strstr(err.msg, "POST /api/v0/completions") && strstr(err.msg, "stalled"));
    if (dt >= 4.0 || !strstr(err.msg, "stalled")) fprintf(stderr, "%.1f s: %s\n", dt, err.msg);
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);

    h = start(&s, SSE_TRICKLE, &t);
    t0 = now();
    sn_status st = sn_lms_complete(h, "{\"model\":\"m\",\"prompt\":\"x\"}", &c, &used, NULL, NULL, &err);
    dt = now() - t0;
    CU_ASSERT_EQUAL(st, SN_OK);
    if (st != SN_OK) fprintf(stderr, "%.1f s: %s\n", dt, err.msg);
    else {
        CU_ASSERT(dt > 2.0); /* it did take the server's time */
        CU_ASSERT_STRING_EQUAL(c.text, "Hi there there there there there");
        CU_ASSERT_STRING_EQUAL(c.finish, "stop");
        CU_ASSERT(c.done);
        sn_lms_completion_free(&c);
    }
    sn_http_free(h);
    pthread_join(t, NULL);
    close(s.lfd);
}

static const sn_test_case cases[] = {
    {"LM Studio streamed completion: a stall after an event is caught, a slow stream is read", test_lms_stream},
    {"generate / LM Studio completion: load limit before the first byte, stall limit after", test_generate_stalls},
    {"a stalled /api/create is abandoned after the stall limit, naming the request", test_stalled_create},
    {"a slow but moving reply is not a stall", test_slow_but_moving},
    {"an endless NDJSON line stops at its budget", test_endless_line},
    {"a JSON body past its budget is refused, naming the budget", test_huge_body},
    {"only http and https URLs", test_schemes},
    {"no_proxy CIDR entries", test_no_proxy_cidr},
};
SN_TEST_MAIN("http", cases)
