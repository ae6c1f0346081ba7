/* sampler.c - repetition penalties, then greedy or top-k/top-p/min-p/temperature/dist sampling
 * (see sampler.h). */
#include "sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct { int32_t id; float logit, p; } cand;

struct sn_sampler {
    sn_sampler_params p;
    uint32_t mt[624];
    int mti;
    cand *buf;
    int64_t cap;
    /* penalties: the last penalty_last_n accepted tokens (a ring) and each id's count among them */
    int32_t *hist;
    int32_t hist_n, hist_head;
    int32_t *count;
    int64_t count_cap;
    float *pen;     /* the penalized copy of the logits */
    int64_t pen_cap;
};

/* ---- mt19937 ---- */
static void mt_seed(sn_sampler *s, uint32_t seed) {
    s->mt[0] = seed;
    for (int i = 1; i < 624; i++) s->mt[i] = 1812433253u * (s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) + (uint32_t)i;
    s->mti = 624;
}

static uint32_t mt_next(sn_sampler *s) {
    if (s->mti >= 624) {
        for (int i = 0; i < 624; i++) {
            const uint32_t y = (s->mt[i] & 0x80000000u) | (s->mt[(i + 1) % 624] & 0x7fffffffu);
            s->mt[i] = s->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
        }
        s->mti = 0;
    }
    uint32_t y = s->mt[s->mti++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* libstdc++ generate_canonical<double, 53> with a 32-bit engine: two draws. */
static double uniform01(sn_sampler *s) {
    const double a = (double)mt_next(s);
    const double b = (double)mt_next(s);
    double r = (a + b * 4294967296.0) / 18446744073709551616.0;
    if (r >= 1.0) r = nextafter(1.0, 0.0);
    return r;
}

void sn_sampler_params_default(sn_sampler_params *p) {
    memset(p, 0, sizeof(*p));
    p->top_p = 1.0f;
    p->penalty_repeat = 1.0f;
}

static int penalties_on(const sn_sampler_params *p) {
    return p->penalty_last_n > 0 && (p->penalty_repeat != 1.0f || p->penalty_freq != 0.0f || p->penalty_present != 0.0f);
}

/* Grows count[] to hold id; 0 on success. */
static int count_fit(sn_sampler *s, int64_t id) {
    if (id < s->count_cap) return 0;
    int64_t cap = s->count_cap ? s->count_cap : 1024;
    while (cap <= id) cap *= 2;
    int32_t *c = realloc(s->count, (size_t)cap * sizeof(*c));
    if (!c) return -1;
    memset(c + s->count_cap, 0, (size_t)(cap - s->count_cap) * sizeof(*c));
    s->count = c;
    s->count_cap = cap;
    return 0;
}

void sn_sampler_accept(sn_sampler *s, int32_t id) {
    if (!penalties_on(&s->p) || id < 0 || count_fit(s, id)) return;
    const int32_t cap = s->p.penalty_last_n;
    if (s->hist_n == cap) { /* full: the oldest leaves the window */
        s->count[s->hist[s->hist_head]]--;
        s->hist[s->hist_head] = id;
        s->hist_head = (s->hist_head + 1) % cap;
    } else {
        s->hist[(s->hist_head + s->hist_n) % cap] = id;
        s->hist_n++;
    }
    s->count[id]++;
}

void sn_sampler_apply_penalties(const sn_sampler *s, float *logits, int64_t n) {
    if (!penalties_on(&s->p) || s->hist_n == 0) return;
    const int64_t lim = n < s->count_cap ? n : s->count_cap;
    for (int64_t i = 0; i < lim; i++) {
        const int32_t c = s->count[i];
        if (c <= 0) continue;
        float l = logits[i];
        l = l <= 0 ? l * s->p.penalty_repeat : l / s->p.penalty_repeat;
        logits[i] = l - ((float)c * s->p.penalty_freq + s->p.penalty_present);
    }
}

/* The logits with the penalties applied (a copy), or the input when there are none to apply. */
static const float *penalize(sn_sampler *s, const float *logits, int64_t n) {
    if (!penalties_on(&s->p) || s->hist_n == 0) return logits;
    if (s->pen_cap < n) {
        float *b = realloc(s->pen, (size_t)n * sizeof(*b));
        if (!b) return logits;
        s->pen = b;
        s->pen_cap = n;
    }
    memcpy(s->pen, logits, (size_t)n * sizeof(float));
    sn_sampler_apply_penalties(s, s->pen, n);
    return s->pen;
}

sn_status sn_sampler_new(const sn_sampler_params *p, sn_sampler **out, sn_err *err) {
    *out = NULL;
    if (!(p->temp == p->temp) || !(p->top_p == p->top_p) || !(p->min_p == p->min_p))
        return sn_err_set(err, SN_EINVAL, "sampler parameters must not be NaN");
    if (!isfinite(p->penalty_repeat) || p->penalty_repeat <= 0 || !isfinite(1.0f / p->penalty_repeat) ||
        !isfinite(p->penalty_freq) || !isfinite(p->penalty_present) || p->penalty_last_n < 0)
        return sn_err_set(err, SN_EINVAL, "repeat penalty must be finite and > 0, frequency and presence penalties "
                                          "finite, and the penalty window >= 0");
    sn_sampler *s = calloc(1, sizeof(*s));
    if (!s) return sn_err_set(err, SN_ENOMEM, "out of memory");
    s->p = *p;
    if (penalties_on(p) && !(s->hist = malloc((size_t)p->penalty_last_n * sizeof(*s->hist)))) {
        free(s);
        return sn_err_set(err, SN_ENOMEM, "out of memory for the penalty window");
    }
    uint32_t seed = p->seed;
    if (seed == SN_SAMPLER_SEED_RANDOM) { /* llama.cpp's get_rng_seed: the clock when no true RNG */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        const uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        seed = (uint32_t)(ns ^ (ns >> 32));
    }
    mt_seed(s, seed);
    *out = s;
    return SN_OK;
}

void sn_sampler_free(sn_sampler *s) {
    if (!s) return;
    free(s->buf);
    free(s->hist);
    free(s->count);
    free(s->pen);
    free(s);
}

/* What a scan keeping the first i with logits[i] > logits[best] returns, in two passes without a
 * dependent load per element: the largest value, then the first index holding it. maxps(x, m) is
 * x > m ? x : m, so a NaN never wins, as it never compares greater in the scan (and a NaN at index
 * 0 wins, as there); -0 == +0 in the second pass, as the scan's > treats them. SSE2 is in every
 * x86-64. Two passes because the one-pass scan was a visible share of a decode token over a large
 * vocabulary (docs/PERFORMANCE.md, "Greedy argmax"). */
int32_t sn_argmax(const float *x, int64_t n) {
    if (n <= 1 || x[0] != x[0]) return 0;
    float best = x[0];
    int64_t i = 0, k = 0;
#if defined(__SSE2__)
    if (n >= 16) {
        __m128 m0 = _mm_set1_ps(x[0]), m1 = m0, m2 = m0, m3 = m0;
        for (; i + 16 <= n; i += 16) {
            m0 = _mm_max_ps(_mm_loadu_ps(x + i), m0);
            m1 = _mm_max_ps(_mm_loadu_ps(x + i + 4), m1);
            m2 = _mm_max_ps(_mm_loadu_ps(x + i + 8), m2);
            m3 = _mm_max_ps(_mm_loadu_ps(x + i + 12), m3);
        }
        float t[4];
        _mm_storeu_ps(t, _mm_max_ps(_mm_max_ps(m0, m1), _mm_max_ps(m2, m3)));
        for (int j = 0; j < 4; j++) best = t[j] > best ? t[j] : best;
    }
#endif
    for (; i < n; i++) best = x[i] > best ? x[i] : best;
#if defined(__SSE2__)
    const __m128 b = _mm_set1_ps(best);
    for (; k + 16 <= n; k += 16) {
        const __m128 e01 = _mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + k), b), _mm_cmpeq_ps(_mm_loadu_ps(x + k + 4), b));
        const __m128 e23 = _mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + k + 8), b), _mm_cmpeq_ps(_mm_loadu_ps(x + k + 12), b));
        if (_mm_movemask_ps(_mm_or_ps(e01, e23))) break;
    }
#endif
    for (; k < n; k++)
        if (x[k] == best) return (int32_t)k;
    return 0; /* not reached: best is one of the logits */
}

static int by_logit_desc(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->logit > y->logit) return -1;
    if (x->logit < y->logit) return 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int32_t sn_sampler_sample(sn_sampler *s, const float *logits_in, int64_t n) {
    const float *logits = penalize(s, logits_in, n);
    if (s->p.temp <= 0.0f || n <= 1) return sn_argmax(logits, n);
    if (s->cap < n) {
        cand *b = realloc(s->buf, (size_t)n * sizeof(*b));
        if (!b) return sn_argmax(logits, n);
        s->buf = b;
        s->cap = n;
    }
    cand *c = s->buf;
    for (int64_t i = 0; i < n; i++) c[i] = (cand){(int32_t)i, logits[i], 0.0f};
    int64_t size = n;
    /* Sorted descending once; every later step keeps a prefix. */
    qsort(c, (size_t)size, sizeof(*c), by_logit_desc);
    if (s->p.top_k > 0 && s->p.top_k < size) size = s->p.top_k;
    if (s->p.top_p < 1.0f) {
        const float max_l = c[0].logit;
        float sum = 0.0f;
        for (int64_t i = 0; i < size; i++) { c[i].p = expf(c[i].logit - max_l); sum += c[i].p; }
        float cum = 0.0f;
        for (int64_t i = 0; i < size; i++) {
            cum += c[i].p / sum;
            if (cum >= s->p.top_p && i + 1 >= 1) { size = i + 1; break; }
        }
    }
    if (s->p.min_p > 0.0f) { /* keep logits >= max + log(min_p) */
        const float thr = c[0].logit + logf(s->p.min_p);
        int64_t keep = 1;
        while (keep < size && c[keep].logit >= thr) keep++;
        size = keep;
    }
    for (int64_t i = 0; i < size; i++) c[i].logit /= s->p.temp;
    if (size == 1) {
        (void)uniform01(s); /* llama.cpp draws once per output even then */
        return c[0].id;
    }
    const float max_l = c[0].logit;
    double sum = 0.0;
    for (int64_t i = 0; i < size; i++) { c[i].p = expf(c[i].logit - max_l); sum += c[i].p; }
    const double target = sum * uniform01(s);
    double run = 0.0;
    for (int64_t i = 0; i < size; i++) {
        run += c[i].p;
        if (run >= target) return c[i].id;
    }
    return c[size - 1].id;
}
