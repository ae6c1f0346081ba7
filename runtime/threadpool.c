/* threadpool.c - persistent workers with spin-then-sleep hand-off (see threadpool.h). */
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

enum { SPIN_ITERS = 20000 };

struct sn_pool {
    int n;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* job state */
    sn_pool_fn fn;
    void *arg;
    unsigned gen;      /* bumped for each job (and for shutdown) */
    int pending;       /* workers still running the current job */
    int sleeping;      /* workers blocked on cv */
    int quit;
};

typedef struct { sn_pool *p; int ith; } worker_arg;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker_main(void *v) {
    worker_arg *wa = v;
    sn_pool *p = wa->p;
    const int ith = wa->ith;
    free(wa);
    unsigned seen = 0;
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) == seen && spins < SPIN_ITERS) {
            cpu_relax();
            spins++;
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            p->sleeping++;
            while ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) == seen)
                pthread_cond_wait(&p->cv, &p->mu);
            p->sleeping--;
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) return NULL;
        p->fn(p->arg, ith, p->n);
        __atomic_sub_fetch(&p->pending, 1, __ATOMIC_ACQ_REL);
    }
}

sn_status sn_pool_new(int n_threads, sn_pool **out, sn_err *err) {
    *out = NULL;
    if (n_threads < 1 || n_threads > 1024)
        return sn_err_set(err, SN_EINVAL, "thread count %d out of range 1..1024", n_threads);
    sn_pool *p = calloc(1, sizeof(*p));
    if (!p) return sn_err_set(err, SN_ENOMEM, "out of memory (thread pool)");
    p->n = n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (n_threads > 1) {
        p->threads = calloc((size_t)n_threads - 1, sizeof(pthread_t));
        if (!p->threads) { sn_pool_free(p); return sn_err_set(err, SN_ENOMEM, "out of memory (thread pool)"); }
        for (int i = 1; i < n_threads; i++) {
            worker_arg *wa = malloc(sizeof(*wa));
            if (wa) { wa->p = p; wa->ith = i; }
            if (!wa || pthread_create(&p->threads[i - 1], NULL, worker_main, wa) != 0) {
                free(wa);
                p->n = i; /* threads 1..i-1 exist */
                sn_pool_free(p);
                return sn_err_set(err, SN_ENOMEM, "cannot create worker thread %d", i);
            }
        }
    }
    *out = p;
    return SN_OK;
}

int sn_pool_size(const sn_pool *p) { return p->n; }

static void publish(sn_pool *p) {
    pthread_mutex_lock(&p->mu);
    __atomic_add_fetch(&p->gen, 1, __ATOMIC_ACQ_REL);
    if (p->sleeping) pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void sn_pool_run(sn_pool *p, sn_pool_fn fn, void *arg) {
    if (p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    __atomic_store_n(&p->pending, p->n - 1, __ATOMIC_RELEASE);
    publish(p);
    fn(arg, 0, p->n);
    int spins = 0;
    while (__atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) > 0) {
        if (++spins < SPIN_ITERS) cpu_relax();
        else sched_yield();
    }
}

void sn_pool_free(sn_pool *p) {
    if (!p) return;
    if (p->threads) {
        __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
        publish(p);
        for (int i = 1; i < p->n; i++) pthread_join(p->threads[i - 1], NULL);
        free(p->threads);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
