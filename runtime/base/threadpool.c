/* threadpool.c - persistent workers with spin-then-sleep hand-off and claimed tasks (see threadpool.h).
 *
 * A job is n_tasks task indices. Every participating thread (the caller first) claims one with a
 * compare-and-swap on a word holding (job generation << 32 | tasks not yet claimed) and runs task
 * n_tasks - remaining, until none is left; the caller then waits only for tasks already claimed. So
 * a worker the OS has not scheduled yet (2 threads on a busy 2-core machine) costs nothing: the
 * caller takes its share instead of waiting a whole time slice for it, as a fixed ith -> share split
 * would. A claim depends on that word alone: a late worker still holding an old generation sees
 * either 0 remaining (the old job is fully claimed while the caller writes the next job's fields) or
 * a new generation, so it never runs a task twice or touches a finished job's (caller-owned,
 * possibly gone) arguments. */
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

enum { SPIN_ITERS = 20000 };

struct sn_pool {
    int n;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* job state, written by the caller before the generation is published */
    sn_pool_fn fn;
    void *arg;
    int n_tasks;
    int done;          /* tasks finished in the current job */
    uint64_t state;    /* generation << 32 | tasks not yet claimed */
    int sleeping;      /* workers blocked on cv */
    int quit;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline uint32_t gen_of(uint64_t s) { return (uint32_t)(s >> 32); }

/* Claims and runs tasks of job generation gen until none is left (or that job is over). */
static void run_tasks(sn_pool *p, uint32_t gen) {
    uint64_t s = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
    for (;;) {
        const uint32_t left = (uint32_t)s;
        if (gen_of(s) != gen || left == 0) return;
        if (!__atomic_compare_exchange_n(&p->state, &s, s - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
        /* the job cannot finish before this task does, so its fields are stable */
        const int n = p->n_tasks;
        p->fn(p->arg, n - (int)left, n);
        __atomic_add_fetch(&p->done, 1, __ATOMIC_RELEASE);
        s = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
    }
}

static void *worker_main(void *v) {
    sn_pool *p = v;
    uint32_t seen = 0;
    for (;;) {
        uint32_t g;
        int spins = 0;
        while ((g = gen_of(__atomic_load_n(&p->state, __ATOMIC_ACQUIRE))) == seen && spins < SPIN_ITERS) {
            cpu_relax();
            spins++;
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            p->sleeping++;
            while ((g = gen_of(__atomic_load_n(&p->state, __ATOMIC_ACQUIRE))) == seen) pthread_cond_wait(&p->cv, &p->mu);
            p->sleeping--;
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) return NULL;
        run_tasks(p, g);
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
            if (pthread_create(&p->threads[i - 1], NULL, worker_main, p) != 0) {
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

/* Starts a new generation with n_tasks unclaimed tasks and wakes sleeping workers; returns it. */
static uint32_t publish(sn_pool *p, int n_tasks) {
    pthread_mutex_lock(&p->mu);
    const uint32_t g = gen_of(__atomic_load_n(&p->state, __ATOMIC_RELAXED)) + 1;
    __atomic_store_n(&p->state, (uint64_t)g << 32 | (uint32_t)n_tasks, __ATOMIC_RELEASE);
    if (p->sleeping) pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return g;
}

void sn_pool_run_n(sn_pool *p, sn_pool_fn fn, void *arg, int n_tasks) {
    if (n_tasks < 1) return;
    if (p->n == 1 || n_tasks == 1) {
        for (int i = 0; i < n_tasks; i++) fn(arg, i, n_tasks);
        return;
    }
    /* the previous job is fully claimed and finished, so no thread reads these until publish */
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n_tasks;
    __atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
    run_tasks(p, publish(p, n_tasks));
    int spins = 0;
    while (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE) < n_tasks) {
        if (++spins < SPIN_ITERS) cpu_relax();
        else sched_yield();
    }
}

void sn_pool_run(sn_pool *p, sn_pool_fn fn, void *arg) { sn_pool_run_n(p, fn, arg, p->n); }

void sn_pool_free(sn_pool *p) {
    if (!p) return;
    if (p->threads) {
        __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
        publish(p, 0);
        for (int i = 1; i < p->n; i++) pthread_join(p->threads[i - 1], NULL);
        free(p->threads);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
