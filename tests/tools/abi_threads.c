/* abi_threads.c - two models loaded and run from two threads at once through the stable ABI.
 *
 * The race this looks for is in what a process builds once (kernel tables, the CPU feature cache,
 * lane order, tokenizer tables) and in anything two model objects might share. So the concurrent
 * phase runs first, in a fresh process: two threads wait at a barrier, then each loads its model
 * and generates N greedy tokens. Afterwards the same two runs are repeated one after the other in
 * the same process; both phases must give the same ids. The test script also compares them with
 * sunny-run (a separate, single-threaded process) and runs this program under ASan and TSan.
 *   abi_threads MODEL_A MODEL_B PROMPT_IDS N THREADS_PER_MODEL
 *   -> {"a":[ids],"b":[ids]} of the concurrent phase; exit 1 if the phases differ or anything fails */
#include "sn_abi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_IDS = 256 };

typedef struct {
    const char *path;
    const int32_t *prompt;
    size_t n_prompt;
    int steps, threads;
    pthread_barrier_t *start; /* NULL: run at once */
    int32_t out[MAX_IDS];
    int n_out;
    char err[512];
} job;

static void *run(void *arg) {
    job *j = arg;
    if (j->start) pthread_barrier_wait(j->start);
    sn_abi_load_params p = {sizeof(p), j->threads, 0, 0, 0, NULL};
    sn_abi_model *m = NULL;
    int32_t st = sn_abi_model_load(j->path, &p, &m, j->err, sizeof j->err);
    if (st) return NULL;
    const int32_t nv = sn_abi_n_vocab(m);
    float *logits = malloc((size_t)nv * sizeof(float));
    sn_abi_sampler *smp = NULL;
    if (!logits || sn_abi_sampler_new(0.0f, 0, 1.0f, 0, &smp)) {
        snprintf(j->err, sizeof j->err, "setup failed");
        goto out;
    }
    if ((st = sn_abi_eval(m, j->prompt, j->n_prompt, logits))) {
        snprintf(j->err, sizeof j->err, "eval: %s", sn_abi_last_error(m));
        goto out;
    }
    for (int i = 0; i < j->steps && i < MAX_IDS; i++) {
        int32_t id;
        if (sn_abi_sample(smp, logits, nv, &id)) {
            snprintf(j->err, sizeof j->err, "sample failed");
            goto out;
        }
        j->out[j->n_out++] = id;
        if (i + 1 < j->steps && (st = sn_abi_eval(m, &id, 1, logits))) {
            snprintf(j->err, sizeof j->err, "eval: %s", sn_abi_last_error(m));
            goto out;
        }
    }
out:
    sn_abi_sampler_free(smp);
    sn_abi_model_free(m);
    free(logits);
    return NULL;
}

static int same(const job *x, const job *y) {
    return x->n_out == y->n_out && memcmp(x->out, y->out, (size_t)x->n_out * sizeof(int32_t)) == 0;
}

static void print_ids(const char *key, const job *j) {
    printf("\"%s\":[", key);
    for (int i = 0; i < j->n_out; i++) printf(i ? ",%d" : "%d", j->out[i]);
    printf("]");
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: abi_threads MODEL_A MODEL_B 1,2,3 N THREADS_PER_MODEL\n");
        return 2;
    }
    int32_t prompt[MAX_IDS];
    size_t n = 0;
    for (char *s = argv[3]; *s && n < MAX_IDS;) {
        prompt[n++] = (int32_t)strtol(s, &s, 10);
        if (*s == ',') s++;
    }
    static job jobs[4];
    for (int i = 0; i < 4; i++)
        jobs[i] = (job){.path = argv[1 + (i & 1)], .prompt = prompt, .n_prompt = n, .steps = atoi(argv[4]),
                        .threads = atoi(argv[5])};
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        jobs[i].start = &start;
        if (pthread_create(&t[i], NULL, run, &jobs[i]) != 0) return fprintf(stderr, "pthread_create failed\n"), 1;
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    run(&jobs[2]); /* the same two runs, one after the other */
    run(&jobs[3]);
    int rc = 0;
    for (int i = 0; i < 4; i++)
        if (jobs[i].err[0] || jobs[i].n_out != jobs[i].steps) {
            fprintf(stderr, "abi_threads: %s (%s): %s\n", jobs[i].path, i < 2 ? "concurrent" : "sequential",
                    jobs[i].err[0] ? jobs[i].err : "too few tokens");
            rc = 1;
        }
    for (int i = 0; i < 2 && !rc; i++)
        if (!same(&jobs[i], &jobs[i + 2])) {
            fprintf(stderr, "abi_threads: %s: ids differ between the concurrent and the sequential run\n", jobs[i].path);
            rc = 1;
        }
    printf("{");
    print_ids("a", &jobs[0]);
    printf(",");
    print_ids("b", &jobs[1]);
    printf("}\n");
    return rc;
}
