/* moe.c - the mixture-of-experts block (moe.h): routing, the (token, slot) pairs grouped by expert,
 * the expert matmuls as one work list per phase on the pool, and the weighted sum in slot order. */
#include "moe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One piece of a phase's work: rows [r0, r1) of expert e's matrices, for all of e's pairs. */
typedef struct {
    int32_t e;
    int64_t r0, r1;
} moe_task;

sn_status sn_moe_load_layer(sn_model *m, int il, const sn_moe_params *p, sn_moe_layer *L, sn_err *err) {
    sn_status st;
    const int64_t E = p->n_embd, F = p->n_ff_exp, X = p->n_expert;
    memset(L, 0, sizeof(*L));
    if ((st = sn_model_matrix(m, il, "ffn_gate_inp.weight", SN_NE(E, X), 1, &L->gate_inp, err))) return st;
    if ((st = sn_model_vector(m, il, "ffn_gate_inp.bias", SN_NE(X), 0, &L->gate_inp_b, err))) return st;
    if ((st = sn_model_matrix(m, il, "ffn_gate_exps.weight", SN_NE(E, F, X), 1, &L->gate_exps, err))) return st;
    if ((st = sn_model_matrix(m, il, "ffn_up_exps.weight", SN_NE(E, F, X), 1, &L->up_exps, err))) return st;
    if ((st = sn_model_matrix(m, il, "ffn_down_exps.weight", SN_NE(F, E, X), 1, &L->down_exps, err))) return st;
    if ((st = sn_model_vector(m, il, "ffn_gate_exps.bias", SN_NE(F, X), 0, &L->gate_exps_b, err)) ||
        (st = sn_model_vector(m, il, "ffn_up_exps.bias", SN_NE(F, X), 0, &L->up_exps_b, err)) ||
        (st = sn_model_vector(m, il, "ffn_down_exps.bias", SN_NE(E, X), 0, &L->down_exps_b, err)))
        return st;
    if (p->n_ff_shexp > 0) {
        const int64_t S = p->n_ff_shexp;
        if ((st = sn_model_matrix(m, il, "ffn_gate_shexp.weight", SN_NE(E, S), 1, &L->gate_shexp, err))) return st;
        if ((st = sn_model_matrix(m, il, "ffn_up_shexp.weight", SN_NE(E, S), 1, &L->up_shexp, err))) return st;
        if ((st = sn_model_matrix(m, il, "ffn_down_shexp.weight", SN_NE(S, E), 1, &L->down_shexp, err))) return st;
        if ((st = sn_model_vector(m, il, "ffn_gate_inp_shexp.weight", SN_NE(E), 0, &L->gate_inp_shexp, err)))
            return st;
    }
    return SN_OK;
}

sn_status sn_moe_init(sn_moe *mo, sn_model *m, const sn_moe_params *p, sn_err *err) {
    memset(mo, 0, sizeof(*mo));
    mo->m = m;
    mo->p = *p;
    if (p->n_expert < 1 || p->n_expert > 4096 || p->n_used < 1 || p->n_used > p->n_expert)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.expert_used_count %lld must be in 1..expert_count (%lld)", m->path,
                          m->hp.arch, (long long)p->n_used, (long long)p->n_expert);
    if (p->gating != SN_MOE_SOFTMAX && p->gating != SN_MOE_SOFTMAX_WEIGHT)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: expert gating function %d is not supported", m->path, p->gating);
    if (p->act != SN_MOE_ACT_SILU && p->act != SN_MOE_ACT_SWIGLU_OAI)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: expert activation %d is not supported", m->path, p->act);
    if (!m->expert_hist) {
        if (!(m->expert_hist = calloc((size_t)p->n_expert, sizeof(uint64_t))))
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        m->n_expert_hist = p->n_expert;
    }
    return SN_OK;
}

void sn_moe_free(sn_moe *mo) {
    free(mo->logits); free(mo->probs); free(mo->w); free(mo->sel);
    free(mo->count); free(mo->start); free(mo->order); free(mo->pos);
    free(mo->xg); free(mo->g); free(mo->u); free(mo->hg); free(mo->d);
    free(mo->sh_g); free(mo->sh_u); free(mo->sh_d); free(mo->tasks);
    memset(mo, 0, sizeof(*mo));
}

static void *grow(void *p, uint64_t bytes, int *fail) {
    free(p);
    void *q = bytes ? malloc((size_t)bytes) : NULL;
    if (bytes && !q) *fail = 1;
    return q;
}

/* Scratch for T tokens (the converted rows are sized per phase, in gather). */
static sn_status reserve(sn_moe *mo, int64_t T, sn_err *err) {
    if (T <= mo->cap_T) return SN_OK;
    const sn_moe_params *p = &mo->p;
    const uint64_t t = (uint64_t)T, pairs = t * (uint64_t)p->n_used, X = (uint64_t)p->n_expert;
    int fail = 0;
    mo->logits = grow(mo->logits, t * X * sizeof(float), &fail);
    mo->probs = grow(mo->probs, t * X * sizeof(float), &fail);
    mo->w = grow(mo->w, pairs * sizeof(float), &fail);
    mo->sel = grow(mo->sel, pairs * sizeof(int32_t), &fail);
    mo->order = grow(mo->order, pairs * sizeof(int32_t), &fail);
    mo->pos = grow(mo->pos, pairs * sizeof(int32_t), &fail);
    mo->g = grow(mo->g, pairs * (uint64_t)p->n_ff_exp * sizeof(float), &fail);
    mo->u = grow(mo->u, pairs * (uint64_t)p->n_ff_exp * sizeof(float), &fail);
    mo->d = grow(mo->d, pairs * (uint64_t)p->n_embd * sizeof(float), &fail);
    if (!mo->count) {
        mo->count = grow(NULL, X * sizeof(int64_t), &fail);
        mo->start = grow(NULL, X * sizeof(int64_t), &fail);
    }
    if (p->n_ff_shexp > 0) {
        mo->sh_g = grow(mo->sh_g, t * (uint64_t)p->n_ff_shexp * sizeof(float), &fail);
        mo->sh_u = grow(mo->sh_u, t * (uint64_t)p->n_ff_shexp * sizeof(float), &fail);
        mo->sh_d = grow(mo->sh_d, t * (uint64_t)p->n_embd * sizeof(float), &fail);
    }
    if (fail) {
        mo->cap_T = 0;
        return sn_err_set(err, SN_ENOMEM, "out of memory (mixture-of-experts scratch for %lld tokens)", (long long)T);
    }
    mo->cap_T = T;
    return SN_OK;
}

/* ---- routing ---- */

/* ggml_vec_soft_max_f32's block sum: AVX-512 reduce_add order for 16 lanes, the AVX2 tree for 8. */
static float block_sum(const float *v, int lanes) {
    if (lanes == 16) {
        float h[8], q[4];
        for (int i = 0; i < 8; i++) h[i] = v[i] + v[i + 8];
        for (int i = 0; i < 4; i++) q[i] = h[i] + h[i + 4];
        return (q[0] + q[2]) + (q[1] + q[3]);
    }
    float q[4];
    for (int i = 0; i < 4; i++) q[i] = v[i + 4] + v[i];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

void sn_moe_softmax(float *y, const float *x, int64_t n, int lanes) {
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    double sum = 0.0;
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        for (int l = 0; l < lanes; l++) y[i + l] = lanes == 16 ? sn_v_expf(x[i + l] - mx) : sn_v_expf8(x[i + l] - mx);
        sum += (double)block_sum(y + i, lanes);
    }
    for (; i < n; i++) {
        y[i] = expf(x[i] - mx);
        sum += (double)y[i];
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < n; j++) y[j] *= inv;
}

void sn_moe_top_k(const float *p, int64_t n, int64_t n_used, int32_t *sel) {
    for (int64_t s = 0; s < n_used; s++) {
        int32_t best = -1;
        for (int64_t e = 0; e < n; e++) {
            int taken = 0;
            for (int64_t j = 0; j < s && !taken; j++) taken = sel[j] == e;
            if (!taken && (best < 0 || p[e] > p[best])) best = (int32_t)e;
        }
        sel[s] = best;
    }
}

typedef struct {
    sn_moe *mo;
    const sn_moe_layer *L;
    int lanes;
} route_pass;

/* probabilities, selection and weights of tokens [t0, t1) */
static void pass_route(const void *arg, int64_t t0, int64_t t1) {
    const route_pass *r = arg;
    sn_moe *mo = r->mo;
    const sn_moe_params *p = &mo->p;
    const int64_t X = p->n_expert, K = p->n_used;
    for (int64_t t = t0; t < t1; t++) {
        float *lg = mo->logits + t * X, *pr = mo->probs + t * X, *w = mo->w + t * K;
        int32_t *sel = mo->sel + t * K;
        if (r->L->gate_inp_b)
            for (int64_t e = 0; e < X; e++) lg[e] = lg[e] + r->L->gate_inp_b[e];
        if (p->gating == SN_MOE_SOFTMAX) sn_moe_softmax(pr, lg, X, r->lanes);
        else memcpy(pr, lg, (size_t)X * sizeof(float));
        sn_moe_top_k(pr, X, K, sel);
        for (int64_t s = 0; s < K; s++) w[s] = pr[sel[s]];
        if (p->gating == SN_MOE_SOFTMAX_WEIGHT) sn_moe_softmax(w, w, K, r->lanes);
        if (p->norm_w) {
            double sum = 0.0; /* ggml_sum_rows: a double sum rounded to float, then clamped */
            for (int64_t s = 0; s < K; s++) sum += (double)w[s];
            float fs = (float)sum;
            if (fs < 6.103515625e-5f) fs = 6.103515625e-5f;
            for (int64_t s = 0; s < K; s++) w[s] = w[s] / fs;
        }
        if (p->w_scale != 0.0f && p->w_scale != 1.0f)
            for (int64_t s = 0; s < K; s++) w[s] = w[s] * p->w_scale;
    }
}

/* The pairs grouped by expert, in token order within each (as ggml's mul_mat_id lists them). */
static void group_pairs(sn_moe *mo, int64_t T) {
    const int64_t X = mo->p.n_expert, K = mo->p.n_used;
    memset(mo->count, 0, (size_t)X * sizeof(int64_t));
    for (int64_t i = 0; i < T * K; i++) mo->count[mo->sel[i]]++;
    int64_t at = 0;
    for (int64_t e = 0; e < X; e++) {
        mo->start[e] = at;
        at += mo->count[e];
        mo->m->expert_hist[e] += (uint64_t)mo->count[e];
    }
    int64_t *fill = mo->start; /* advanced while filling, then restored */
    for (int64_t i = 0; i < T * K; i++) {
        const int32_t e = mo->sel[i];
        mo->pos[i] = (int32_t)fill[e];
        mo->order[fill[e]++] = (int32_t)i;
    }
    for (int64_t e = 0; e < X; e++) fill[e] -= mo->count[e];
}

/* ---- the expert matmuls ---- */

typedef struct {
    sn_moe *mo;
    const sn_kernels *k;
    int nw;
    const sn_matrix *w[2];
    const void *x;    /* converted rows, one per pair in grouped order */
    uint64_t x_row;
    float *y[2];      /* outputs, one row of ldy per pair in grouped order */
    int64_t ldy;
    const moe_task *tasks;
} phase_job;

/* 1 when ggml multiplies this expert's c tokens in the batched order: its IQ panel gemm takes IQ4_XS
 * experts with 8+ tokens; a repacked Q4_0 / MXFP4 stack's kernel has the single-token order at any batch. */
static int batched(const sn_matrix *w, int64_t c) {
    if (w->type == SN_GGML_IQ4_XS) return c >= 8;
    return c > 1 && (w->layout == &sn_layout_q4_0x8 || w->layout == &sn_layout_mxfp4x8) && w->n_out % 8 == 0;
}

static void phase_worker(void *arg, int ith, int nth) {
    (void)nth;
    const phase_job *j = arg;
    const moe_task *tk = &j->tasks[ith];
    const int64_t c = j->mo->count[tk->e], s0 = j->mo->start[tk->e];
    for (int i = 0; i < j->nw; i++) {
        const sn_matrix ew = sn_matrix_expert(j->w[i], tk->e);
        const char *x = (const char *)j->x + (uint64_t)s0 * j->x_row;
        float *y = j->y[i] + s0 * j->ldy;
        if (batched(&ew, c)) {
            sn_matrix_mul(j->k, &ew, x, j->x_row, c, y, j->ldy, tk->r0, tk->r1);
            continue;
        }
        for (int64_t t = 0; t < c; t++)
            sn_matrix_mul(j->k, &ew, x + (uint64_t)t * j->x_row, j->x_row, 1, y + t * j->ldy, j->ldy, tk->r0, tk->r1);
    }
}

typedef struct {
    const sn_kernels *k;
    int at;
    const float *src;
    int64_t n, ld;
    const int32_t *row_of; /* pair -> source row (NULL: the pair itself) */
    int32_t K;
    void *dst;
    uint64_t row;
    int64_t rows;
} gather_job;

static void gather_worker(void *arg, int ith, int nth) {
    const gather_job *j = arg;
    for (int64_t p = ith; p < j->rows; p += nth) {
        const float *s = j->src + (j->row_of ? j->row_of[p] / j->K : p) * j->ld;
        void *d = (char *)j->dst + (uint64_t)p * j->row;
        if (j->at == SN_GGML_F32) memcpy(d, s, (size_t)j->n * sizeof(float));
        else j->k->quant[j->at](s, d, j->n);
    }
}

/* The rows the weight type w multiplies: the source rows (the token of each grouped pair, or the
 * pairs' own rows) converted to w's activation type into *buf. */
static sn_status gather(sn_moe *mo, const sn_matrix *w, const float *src, int64_t n, const int32_t *row_of,
                        int64_t rows, void **buf, uint64_t *cap, uint64_t *row, sn_err *err) {
    const int at = sn_kernel_act_type(w->type);
    *row = sn_kernel_act_row_size(w->type, n);
    if (at < 0 || *row == 0) return sn_err_set(err, SN_EUNSUPPORTED, "%s: no activation type", w->name);
    const uint64_t need = *row * (uint64_t)rows;
    if (need > *cap) {
        free(*buf);
        if (!(*buf = malloc((size_t)need))) {
            *cap = 0;
            return sn_err_set(err, SN_ENOMEM, "out of memory (mixture-of-experts activations)");
        }
        *cap = need;
    }
    gather_job g = {mo->m->k, at, src, n, n, row_of, (int32_t)mo->p.n_used, *buf, *row, rows};
    if (rows == 1) gather_worker(&g, 0, 1);
    else sn_pool_run(mo->m->pool, gather_worker, &g);
    return SN_OK;
}

/* Cuts the active experts' rows [0, R) into tasks of whole layout groups, about 4 per thread. */
static sn_status plan_tasks(sn_moe *mo, int64_t R, int unit, int *n_tasks, sn_err *err) {
    const int64_t X = mo->p.n_expert;
    int64_t active = 0;
    for (int64_t e = 0; e < X; e++) active += mo->count[e] > 0;
    const int nth = sn_pool_size(mo->m->pool);
    const int64_t want = nth > 1 ? 4 * (int64_t)nth : 1;
    int64_t per_e = (want + active - 1) / (active ? active : 1);
    if (per_e < 1) per_e = 1;
    if (unit < 16) unit = 16;
    int64_t rows = (R + per_e - 1) / per_e;
    rows = (rows + unit - 1) / unit * unit;
    const int64_t chunks = (R + rows - 1) / rows, n = active * chunks;
    if (n > mo->task_cap) {
        free(mo->tasks);
        if (!(mo->tasks = malloc((size_t)n * sizeof(moe_task)))) {
            mo->task_cap = 0;
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        }
        mo->task_cap = n;
    }
    moe_task *tk = mo->tasks;
    int64_t i = 0;
    for (int64_t e = 0; e < X; e++) {
        if (!mo->count[e]) continue;
        for (int64_t r = 0; r < R; r += rows) tk[i++] = (moe_task){(int32_t)e, r, r + rows < R ? r + rows : R};
    }
    *n_tasks = (int)i;
    return SN_OK;
}

static sn_status run_phase(sn_moe *mo, int nw, const sn_matrix *const *w, const void *x, uint64_t x_row,
                           float *const *y, int64_t ldy, sn_err *err) {
    int unit = w[0]->layout->group_rows;
    if (nw > 1 && w[1]->layout->group_rows > unit) unit = w[1]->layout->group_rows;
    int n_tasks = 0;
    sn_status st = plan_tasks(mo, w[0]->n_out, unit, &n_tasks, err);
    if (st) return st;
    phase_job j = {mo, mo->m->k, nw, {w[0], nw > 1 ? w[1] : NULL}, x, x_row, {y[0], nw > 1 ? y[1] : NULL}, ldy,
                   mo->tasks};
    if (n_tasks == 1) phase_worker(&j, 0, 1);
    else sn_pool_run_n(mo->m->pool, phase_worker, &j, n_tasks);
    return SN_OK;
}

/* ---- elementwise passes ---- */

typedef struct {
    sn_moe *mo;
    float *g;
    float *u;
    int64_t n;
    float *out;
    const sn_moe_layer *L;
    const float *x;
    int64_t T;
} elt_pass;

/* y = bias row of the pair's expert added to y (ggml_add_id), for pair r in grouped order */
static void add_expert_bias(const sn_moe *mo, float *y, const float *bias, int64_t n, int64_t r) {
    const float *b = bias + (int64_t)mo->sel[mo->order[r]] * n;
    for (int64_t i = 0; i < n; i++) y[i] = y[i] + b[i];
}

/* ggml_swiglu_oai (alpha 1.702, limit 7), element by element with libm's expf as ggml's loop */
static void swiglu_oai(int64_t n, float *y, const float *g, const float *u) {
    const float alpha = 1.702f, limit = 7.0f;
    for (int64_t i = 0; i < n; i++) {
        const float x = limit < g[i] ? limit : g[i];                                 /* std::min */
        const float v = u[i] < -limit ? -limit : limit < u[i] ? limit : u[i];        /* std::clamp */
        const float glu = x / (1.f + expf(alpha * (-x)));
        y[i] = glu * (v + 1.f);
    }
}

static void pass_swiglu(const void *arg, int64_t r0, int64_t r1) {
    const elt_pass *p = arg;
    const sn_moe *mo = p->mo;
    const sn_moe_layer *L = p->L;
    for (int64_t r = r0; r < r1; r++) {
        float *g = p->g + r * p->n, *u = p->u + r * p->n;
        if (L->up_exps_b) add_expert_bias(mo, u, L->up_exps_b, p->n, r);
        if (L->gate_exps_b) add_expert_bias(mo, g, L->gate_exps_b, p->n, r);
        if (mo->p.act == SN_MOE_ACT_SWIGLU_OAI) swiglu_oai(p->n, g, g, u);
        else mo->m->k->swiglu(p->n, g, g, u);
    }
}

static void pass_down_bias(const void *arg, int64_t r0, int64_t r1) {
    const elt_pass *p = arg;
    const int64_t E = p->mo->p.n_embd;
    for (int64_t r = r0; r < r1; r++) add_expert_bias(p->mo, p->mo->d + r * E, p->L->down_exps_b, E, r);
}

/* out[t] = d(t, 0) * w0 + d(t, 1) * w1 + ...: each product rounded (ggml_mul), added in slot order
 * (ggml_add) */
static void pass_combine(const void *arg, int64_t t0, int64_t t1) {
    const elt_pass *p = arg;
    const sn_moe *mo = p->mo;
    const int64_t E = mo->p.n_embd, K = mo->p.n_used;
    for (int64_t t = t0; t < t1; t++) {
        float *o = p->out + t * E;
        for (int64_t s = 0; s < K; s++) {
            const float *d = mo->d + (int64_t)mo->pos[t * K + s] * E;
            const float w = mo->w[t * K + s];
            if (s == 0) for (int64_t i = 0; i < E; i++) o[i] = d[i] * w;
            else for (int64_t i = 0; i < E; i++) o[i] = o[i] + d[i] * w;
        }
    }
}

/* the shared expert: out[t] += down(silu(gate x) * up x) (* sigmoid(gate_inp_shexp . x)) */
static void pass_shared_gate(const void *arg, int64_t t0, int64_t t1) {
    const elt_pass *p = arg;
    const sn_moe *mo = p->mo;
    const int64_t E = mo->p.n_embd;
    for (int64_t t = t0; t < t1; t++) {
        float *sd = mo->sh_d + t * E, *o = p->out + t * E;
        if (p->L->gate_inp_shexp) {
            /* a one-row F32 matmul: vec_dot's order for a batch too (tinyBLAS declines a row count
             * that is not a multiple of 4, and ggml falls back to vec_dot) */
            const float dot = mo->m->k->type[SN_GGML_F32].dot(E, p->L->gate_inp_shexp, p->x + t * E);
            const float gs = 1.0f / (1.0f + expf(-dot));
            for (int64_t i = 0; i < E; i++) sd[i] = sd[i] * gs;
        }
        for (int64_t i = 0; i < E; i++) o[i] = o[i] + sd[i];
    }
}

static void pass_shared_swiglu(const void *arg, int64_t t0, int64_t t1) {
    const elt_pass *p = arg;
    const int64_t S = p->mo->p.n_ff_shexp;
    for (int64_t t = t0; t < t1; t++) p->mo->m->k->swiglu(S, p->mo->sh_g + t * S, p->mo->sh_g + t * S, p->mo->sh_u + t * S);
}

sn_status sn_moe_forward(sn_moe *mo, const sn_moe_layer *L, const float *x, int64_t T, float *out, sn_err *err) {
    sn_model *m = mo->m;
    const sn_moe_params *p = &mo->p;
    const int64_t E = p->n_embd, F = p->n_ff_exp, K = p->n_used, pairs = T * K;
    sn_status st;
    if ((st = reserve(mo, T, err))) return st;
    /* router logits (an F32 matrix in every file llama.cpp writes: its batched order for 2+ tokens) */
    if ((st = sn_ops_project1(m->ops, x, T, &L->gate_inp, mo->logits, err))) return st;
    route_pass rp = {mo, L, m->ops->lanes};
    sn_ops_rows(m->pool, T, pass_route, &rp);
    group_pairs(mo, T);

    /* gate and up: the token of each pair, converted once per activation type */
    uint64_t xr = 0;
    if ((st = gather(mo, &L->gate_exps, x, E, mo->order, pairs, &mo->xg, &mo->xg_cap, &xr, err))) return st;
    if (sn_kernel_act_type(L->up_exps.type) == sn_kernel_act_type(L->gate_exps.type)) {
        const sn_matrix *gu[2] = {&L->gate_exps, &L->up_exps};
        float *y[2] = {mo->g, mo->u};
        if ((st = run_phase(mo, 2, gu, mo->xg, xr, y, F, err))) return st;
    } else {
        const sn_matrix *g1[1] = {&L->gate_exps}, *u1[1] = {&L->up_exps};
        float *yg[1] = {mo->g}, *yu[1] = {mo->u};
        if ((st = run_phase(mo, 1, g1, mo->xg, xr, yg, F, err))) return st;
        if ((st = gather(mo, &L->up_exps, x, E, mo->order, pairs, &mo->xg, &mo->xg_cap, &xr, err))) return st;
        if ((st = run_phase(mo, 1, u1, mo->xg, xr, yu, F, err))) return st;
    }
    elt_pass ep = {mo, mo->g, mo->u, F, out, L, x, T};
    sn_ops_rows(m->pool, pairs, pass_swiglu, &ep);

    /* down, on the pairs' own rows */
    uint64_t hr = 0;
    if ((st = gather(mo, &L->down_exps, mo->g, F, NULL, pairs, &mo->hg, &mo->hg_cap, &hr, err))) return st;
    const sn_matrix *dn[1] = {&L->down_exps};
    float *yd[1] = {mo->d};
    if ((st = run_phase(mo, 1, dn, mo->hg, hr, yd, E, err))) return st;
    if (L->down_exps_b) sn_ops_rows(m->pool, pairs, pass_down_bias, &ep);
    sn_ops_rows(m->pool, T, pass_combine, &ep);

    if (!L->gate_shexp.data) return SN_OK;
    const sn_matrix *sgu[2] = {&L->gate_shexp, &L->up_shexp};
    float *ysgu[2] = {mo->sh_g, mo->sh_u};
    if ((st = sn_ops_project(m->ops, x, T, 2, sgu, ysgu, err))) return st;
    sn_ops_rows(m->pool, T, pass_shared_swiglu, &ep);
    if ((st = sn_ops_project1(m->ops, mo->sh_g, T, &L->down_shexp, mo->sh_d, err))) return st;
    sn_ops_rows(m->pool, T, pass_shared_gate, &ep);
    return SN_OK;
}
