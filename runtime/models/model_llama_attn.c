/* model_llama_attn.c - attention for the Llama family (model_llama.h): each query over the KV
 * cache as ggml's flash-attention kernel computes it. Batches under 64 tokens: one pass per query,
 * f16 scores and an f16 V accumulator, a single token over 512+ cells split into one chunk of keys
 * per thread and combined in order. Batches of 64+: the tiled f32 kernel over copies of the layer's
 * K (transposed) and V, several query rows per key tile. */
#include "model_llama.h"

#include <math.h>
#include <string.h>

/* Keys seg[0]..seg[1]-1, then seg[2]..seg[3]-1 (positions), for the G query rows q[0..G) of heads h0..h0+G-1 of one token, each the way
 * ggml's one_chunk kernel walks them for its row: returns the running max M[g] and sum S[g] and
 * leaves the weighted V sums (f32) in sc->vkq32 (DV each). The rows' computations are independent;
 * walking them key by key together only changes how the cache is read: each key's row is read
 * once, front to back, for all the heads (a head's slice alone is a quarter or less of a row, and
 * walking one slice down 4,096 rows ran at a third of the machine's read bandwidth). */
static void attend_keys(const sn_model *m, const llama_state *s, attn_scratch *sc, int il, const float *q,
                        int64_t h0, int64_t G, const int64_t seg[4], float *M, float *S) {
    const sn_kernels *k = m->k;
    const llama_hparams *hp = LHP(m);
    const int64_t D = hp->head_dim_k, DV = hp->head_dim_v, group = hp->n_head / hp->n_head_kv;
    const int f16 = s->kv_elt == 2;
    const int64_t kv0 = h0 / group, kv1 = (h0 + G - 1) / group + 1; /* the kv heads read */
    const uint64_t off0 = (uint64_t)(kv0 * D) * s->kv_elt, span = (uint64_t)((kv1 - kv0) * D) * s->kv_elt;
    for (int64_t g = 0; g < G; g++) {
        S[g] = 0.0f;
        M[g] = -INFINITY;
        if (f16) {
            k->quant[SN_GGML_F16](q + g * D, sc->q16 + g * D, D);
            memset(sc->vkq16 + g * DV, 0, (size_t)DV * 2);
        } else {
            memset(sc->vkq32 + g * DV, 0, (size_t)DV * 4);
        }
    }
    for (int64_t ic = seg[0], k1 = seg[1], r2 = 0;; ic++) {
        if (ic >= k1) { /* the next range, if any */
            if (r2++ || seg[2] >= seg[3]) break;
            ic = seg[2];
            k1 = seg[3];
        }
        const char *krow = (const char *)kv_row(s, s->kcache, m->n_ctx, il, ic);
        const char *vrow = (const char *)kv_row(s, s->vcache, m->n_ctx, il, ic);
        if (ic + ATT_PF < k1) {
            const char *kp = (const char *)kv_row(s, s->kcache, m->n_ctx, il, ic + ATT_PF) + off0;
            const char *vp = (const char *)kv_row(s, s->vcache, m->n_ctx, il, ic + ATT_PF) + off0;
            for (uint64_t b = 0; b < span; b += 64) {
                __builtin_prefetch(kp + b);
                __builtin_prefetch(vp + b);
            }
        }
        const uint64_t kv_bytes = (uint64_t)D * s->kv_elt; /* one kv head's slice of a row */
        uint64_t off = off0;                                /* kv head (h0 + g) / group, no division */
        for (int64_t g = 0, r = h0 % group; g < G; g++) {
            const char *kr = krow + off, *vr = vrow + off;
            if (++r == group) {
                r = 0;
                off += kv_bytes;
            }
            float sc_ = f16 ? k->type[SN_GGML_F16].dot(D, kr, sc->q16 + g * D) : k->type[SN_GGML_F32].dot(D, kr, q + g * D);
            sc_ = sc_ * s->kq_scale;
            sc_ += 0.0f; /* causal mask value for visible keys */
            const float Mold = M[g];
            float ms = 1.0f, vs = 1.0f;
            if (sc_ > M[g]) {
                M[g] = sc_;
                ms = expf(Mold - sc_);
                if (f16) k->scale_f16(DV, sc->vkq16 + g * DV, ms);
                else for (int64_t d = 0; d < DV; d++) sc->vkq32[g * DV + d] *= ms;
            } else {
                vs = expf(sc_ - M[g]);
            }
            if (f16) k->mad_f16(DV, sc->vkq16 + g * DV, (const uint16_t *)vr, vs);
            else k->mad_f32(DV, sc->vkq32 + g * DV, (const float *)vr, vs);
            S[g] = S[g] * ms + vs;
        }
    }
    if (f16)
        for (int64_t i = 0; i < G * DV; i++) sc->vkq32[i] = sn_k_h2f(sc->vkq16[i]);
}

/* ggml's attention sink for one query row after its keys: the logit joins the running max M and
 * sum S as a key whose value is zero, rescaling the f32 accumulator acc (DV floats) when it is the
 * new max. */
static void add_sink(float sink, float *M, float *S, float *acc, int64_t DV) {
    float ms = 1.0f, vs = 1.0f;
    if (sink > *M) {
        ms = expf(*M - sink);
        *M = sink;
        for (int64_t d = 0; d < DV; d++) acc[d] *= ms;
    } else {
        vs = expf(sink - *M);
    }
    *S = *S * ms + vs;
}

/* The first key a query at position `last` of layer il sees: 0, or on a sliding-window layer the
 * oldest of the n_swa positions ending at its own (llama.cpp masks p0 when p1 - p0 >= n_swa). */
static int64_t first_key(const llama_state *s, int il, int64_t last) {
    return s->swa && s->swa[il] && last - s->n_swa + 1 > 0 ? last - s->n_swa + 1 : 0;
}

/* Layer il's KV cells in llama.cpp, padded to 256: the context, or on a sliding-window layer its
 * own cache of n_swa + n_ubatch cells (llama.cpp's iSWA cache). Position p sits in cell p % cells:
 * past the end the sliding cache wraps, reusing the cells of positions out of the window. */
static int64_t llama_cells(const sn_model *m, const llama_state *s, int il) {
    int64_t size = m->n_ctx;
    if (s->swa && s->swa[il] && s->n_swa + SN_UBATCH < size) size = s->n_swa + SN_UBATCH;
    return (size + 255) / 256 * 256;
}

/* KV cells llama.cpp's graph spans for layer il when positions 0..last are filled: a multiple of
 * 256 (at least 256), at most the layer's cells (llama_kv_cache::get_n_kv). */
static int64_t llama_n_kv(const sn_model *m, const llama_state *s, int il, int64_t last) {
    const int64_t used = (last + 1 + 255) / 256 * 256, cells = llama_cells(m, s, il);
    return used < cells ? used : cells;
}

/* The keys first..last that cells [a, b) of layer il hold, in cell order, as two position ranges
 * seg[0..1) and seg[2..3): cells below last's own hold this lap of the ring, the cells above it the
 * previous lap (empty until the cache wraps). */
static void cell_keys(const sn_model *m, const llama_state *s, int il, int64_t first, int64_t last, int64_t a,
                      int64_t b, int64_t seg[4]) {
    const int64_t cells = llama_cells(m, s, il), lap = last / cells * cells, top = last - lap + 1;
    seg[0] = lap + a > first ? lap + a : first;
    seg[1] = lap + (b < top ? b : top);
    seg[2] = lap - cells + (a > top ? a : top);
    seg[2] = seg[2] > first ? seg[2] : first;
    seg[3] = lap - cells + b;
    for (int r = 0; r < 4; r += 2) seg[r + 1] = seg[r + 1] > seg[r] ? seg[r + 1] : seg[r];
}

/* Query rows q[0..G) (heads h0.., one token; out likewise, head_dim_v apart), keys 0..last. A
 * single query over 512+ cells is what ggml splits across its nth threads (use_split_kv_path):
 * each thread runs one_chunk over ceil(cells / nth) cells and the partial (M, S, V sum) triples are
 * combined in chunk order. We split the same way with our thread count (llama.cpp run with the same
 * -t), computing the chunks one after another in this task, so decode beyond 256 positions rounds
 * as it does. */
static void attend_rows(const sn_model *m, const llama_state *s, attn_scratch *sc, int il, const float *q,
                        int64_t h0, int64_t G, int64_t last, int single, float *out) {
    const int64_t DV = LHP(m)->head_dim_v, n_kv = llama_n_kv(m, s, il, last), first = first_key(s, il, last);
    const float *sink = s->sinks ? s->sinks[il] + h0 : NULL;
    float *M = sc->ms, *S = M + G, *Mf = S + G, *Sf = Mf + G;
    if (!single || n_kv < 512) { /* ggml skips masked cells: only the visible ones, in order */
        int64_t seg[4];
        cell_keys(m, s, il, first, last, 0, n_kv, seg);
        attend_keys(m, s, sc, il, q, h0, G, seg, M, S);
        for (int64_t g = 0; g < G && sink; g++) add_sink(sink[g], &M[g], &S[g], sc->vkq32 + g * DV, DV);
        for (int64_t g = 0; g < G; g++) {
            const float S_inv = S[g] == 0.0f ? 0.0f : 1.0f / S[g];
            for (int64_t d = 0; d < DV; d++) out[g * DV + d] = sc->vkq32[g * DV + d] * S_inv;
        }
        return;
    }
    const int64_t nth = sn_pool_size(m->pool), chunk = (n_kv + nth - 1) / nth;
    for (int64_t g = 0; g < G; g++) {
        Mf[g] = -INFINITY;
        Sf[g] = 0.0f;
    }
    memset(sc->vkqf, 0, (size_t)(G * DV) * 4);
    for (int64_t c = 0; c < nth; c++) {
        int64_t seg[4];
        cell_keys(m, s, il, first, last, c * chunk, c * chunk + chunk < n_kv ? c * chunk + chunk : n_kv, seg);
        /* only masked cells: S = 0, which the combine skips; but the sinks join the first chunk */
        if (seg[0] == seg[1] && seg[2] == seg[3] && !(sink && c == 0)) continue;
        attend_keys(m, s, sc, il, q, h0, G, seg, M, S);
        for (int64_t g = 0; g < G && sink && c == 0; g++) add_sink(sink[g], &M[g], &S[g], sc->vkq32 + g * DV, DV);
        for (int64_t g = 0; g < G; g++) {
            if (S[g] == 0.0f) continue;
            const float Mn = fmaxf(Mf[g], M[g]), so = expf(Mf[g] - Mn), sn = expf(M[g] - Mn);
            float *acc = sc->vkqf + g * DV;
            const float *part = sc->vkq32 + g * DV;
            /* ggml's combine, FMA-contracted like model_llama.c's rope_pair (checked on the zen4 build) */
            for (int64_t d = 0; d < DV; d++) acc[d] = fmaf(acc[d], so, part[d] * sn);
            Sf[g] = fmaf(Sf[g], so, S[g] * sn);
            Mf[g] = Mn;
        }
    }
    for (int64_t g = 0; g < G; g++) {
        const float S_inv = Sf[g] == 0.0f ? 0.0f : 1.0f / Sf[g];
        for (int64_t d = 0; d < DV; d++) out[g * DV + d] = sc->vkqf[g * DV + d] * S_inv;
    }
}

/* ggml's tiled softmax step for one query and one 64-key tile: kq holds the tile's raw scores
 * (nt of them visible); they become the tile's exp weights, and the query's running max M, sum S
 * and accumulator acc (DV floats) are rescaled when the max grows. Softmax chunk sums in double of
 * ggml_v_expf values, as ggml's tiled kernel. */
static void tile_softmax(const llama_state *s, float *kq, int64_t t0, int64_t nt, float *M, float *S, float *acc,
                         int64_t DV) {
    float tmax = -INFINITY; /* no NaN reaches here, so a compare is fmaxf (and inlines; fmaxf was a libm call) */
    for (int64_t t = 0; t < FA_TILE; t++) { /* keys before t0: outside a sliding window */
        kq[t] = t >= t0 && t < nt ? kq[t] * s->kq_scale + 0.0f : -INFINITY;
        tmax = kq[t] > tmax ? kq[t] : tmax;
    }
    const float Mnew = tmax > *M ? tmax : *M;
    if (Mnew > *M) {
        const float ms = expf(*M - Mnew);
        for (int64_t d = 0; d < DV; d++) acc[d] *= ms;
        *S *= ms;
    }
    *M = Mnew;
    double sum = 0.0;
    s->ops.k->exp_sub(FA_TILE, kq, kq, Mnew); /* ggml_v_expf of the lanes' flavour, vectorised */
    if (s->ops.lanes == 8) { /* llama.cpp's haswell build: AVX2 expf, hsum of 8 */
        for (int64_t c = 0; c < FA_TILE; c += 8) {
            const float *e = kq + c;
            const float r0 = e[4] + e[0], r1 = e[5] + e[1], r2 = e[6] + e[2], r3 = e[7] + e[3];
            sum += (double)((r0 + r2) + (r1 + r3));
        }
    } else {
        for (int64_t c = 0; c < FA_TILE; c += 16) {
            const float *e = kq + c;
            float t3[8], t6[4];
            for (int j = 0; j < 8; j++) t3[j] = e[8 + j] + e[j];
            for (int j = 0; j < 4; j++) t6[j] = t3[4 + j] + t3[j];
            sum += (double)((t6[0] + t6[2]) + (t6[1] + t6[3]));
        }
    }
    *S = (float)((double)*S + sum); /* S[tq] += ggml_float: the add happens in double */
}

/* G (1, 2 or 4) query rows sharing kv head kvh through ggml's tiled f32 kernel (used when the
 * batch has >= 64 queries): row g is q[g] (one head of one token), sees keys 0..last[g] and writes
 * out[g]. Scores for 64 keys at a time from the f32 copies made by prep_worker, tile_softmax, f32
 * accumulation of V. Several rows (two heads of the kv head, two neighbouring tokens) go through a
 * tile together, its keys and values read once for all (kq_tile64xg / mad_rowsg_f32); each row's
 * operations are those it has alone: a row skips the tiles past its last key (and, on a sliding-
 * window layer, those before its first, whose weights are zero as ggml's skipped rows), and where the rows
 * see different numbers of a tile's keys, the common ones are accumulated together and each row's
 * rest after them, so every output element's fma chain is unchanged. */
static void attend_rows_tiled(const sn_model *m, const llama_state *s, attn_scratch *sc, const float *const *q,
                              float *const *out, const int64_t *last, const int64_t *first, const float *sink, int G,
                              int64_t kvh) {
    const int64_t D = LHP(m)->head_dim_k, DV = LHP(m)->head_dim_v, ld = s->kt_ld;
    const float *kt = s->kt32 + (uint64_t)kvh * (uint64_t)(D * ld);
    const float *v32 = s->v32 + (uint64_t)kvh * (uint64_t)(ld * DV);
    const sn_kernels *k = m->k;
    float S[4], M[4], *acc[4];
    const float *w[4];
    int64_t lmax = 0, fmin = first[0];
    for (int g = 0; g < G; g++) {
        S[g] = 0.0f;
        M[g] = -INFINITY;
        acc[g] = sc->vkq32 + g * DV;
        w[g] = sc->kq + g * FA_TILE;
        lmax = last[g] > lmax ? last[g] : lmax;
        fmin = first[g] < fmin ? first[g] : fmin;
    }
    memset(sc->vkq32, 0, (size_t)(G * DV) * 4);
    int64_t next = -1; /* one query: the key tile whose scores wait in sc->kq + FA_TILE */
    for (int64_t ic = fmin / FA_TILE * FA_TILE; ic <= lmax; ic += FA_TILE) {
        int64_t nt[4], lo = FA_TILE, hi = 0;
        for (int g = 0; g < G; g++) {
            nt[g] = last[g] + 1 - ic < FA_TILE ? last[g] + 1 - ic : FA_TILE;
            if (nt[g] < 0) nt[g] = 0;
            lo = nt[g] < lo ? nt[g] : lo;
            hi = nt[g] > hi ? nt[g] : hi;
        }
        float *kq = sc->kq;
        if (G > 1) k->kq_tile64xg(D, q, G, kt + ic, ld, kq);
        else if (ic == next) kq += FA_TILE;
        else if (ic + FA_TILE <= lmax && k->kq_tile128) {
            k->kq_tile128(D, q[0], kt + ic, ld, kq);
            next = ic + FA_TILE;
        } else
            k->kq_tile64(D, q[0], kt + ic, ld, kq);
        for (int g = 0; g < G; g++) {
            const int64_t t0 = first[g] > ic ? first[g] - ic : 0;
            if (nt[g] > t0) tile_softmax(s, kq + g * FA_TILE, t0, nt[g], &M[g], &S[g], acc[g], DV);
            else if (nt[g] > 0) memset(kq + g * FA_TILE, 0, FA_TILE * sizeof(float)); /* all masked: weight 0 */
        }
        if (G == 1) {
            k->mad_rows_f32(DV, acc[0], v32 + ic * DV, DV, kq, nt[0]);
            continue;
        }
        if (lo > 0) k->mad_rowsg_f32(DV, acc, G, v32 + ic * DV, DV, w, lo);
        if (hi > lo)
            for (int g = 0; g < G; g++)
                if (nt[g] > lo) k->mad_rows_f32(DV, acc[g], v32 + (ic + lo) * DV, DV, w[g] + lo, nt[g] - lo);
    }
    for (int g = 0; g < G; g++) {
        if (sink) add_sink(sink[g], &M[g], &S[g], acc[g], DV);
        const float S_inv = S[g] == 0.0f ? 0.0f : 1.0f / S[g];
        for (int64_t d = 0; d < DV; d++) out[g][d] = acc[g][d] * S_inv;
    }
}

/* f32 copies of the visible keys (transposed, for kq_tile64) and values, per kv head. */
void sn_llama_prep_worker(void *arg, int ith, int nth) {
    const attn_job *j = arg;
    const sn_model *m = j->m;
    const llama_state *s = j->s;
    const int64_t D = LHP(m)->head_dim_k, ld = s->kt_ld, nk = j->pos0 + j->T;
    for (int64_t h = ith; h < LHP(m)->n_head_kv; h += nth) {
        float *kt = s->kt32 + (uint64_t)h * (uint64_t)(D * ld), *v32 = s->v32 + (uint64_t)h * (uint64_t)(ld * D);
        for (int64_t p = 0; p < nk; p++) {
            const char *kr = (const char *)kv_row(s, s->kcache, m->n_ctx, j->il, p) + (uint64_t)(h * D) * s->kv_elt;
            const char *vr = (const char *)kv_row(s, s->vcache, m->n_ctx, j->il, p) + (uint64_t)(h * D) * s->kv_elt;
            for (int64_t d = 0; d < D; d++) {
                kt[d * ld + p] = s->kv_elt == 2 ? sn_k_h2f(((const uint16_t *)kr)[d]) : ((const float *)kr)[d];
                v32[p * D + d] = s->kv_elt == 2 ? sn_k_h2f(((const uint16_t *)vr)[d]) : ((const float *)vr)[d];
            }
        }
        for (int64_t p = nk; p < ld; p++) /* pad to a whole tile */
            for (int64_t d = 0; d < D; d++) kt[d * ld + p] = 0.0f;
    }
}

void sn_llama_attn_worker(void *arg, int ith, int nth) {
    const attn_job *j = arg;
    const sn_model *m = j->m;
    const llama_state *s = j->s;
    const llama_hparams *hp = &((const llama_state *)m->impl)->hp;
    const int64_t group = hp->n_head / hp->n_head_kv;
    attn_scratch *sc = &s->scratch[ith];
    if (j->T >= FA_TILE) { /* units: two heads of one kv head (one where the group is odd) x two tokens */
        const int grouped = m->k->kq_tile64xg && m->k->mad_rowsg_f32;
        const int hs = grouped && group >= 2 ? 2 : 1, ts = grouped ? 2 : 1;
        const int64_t per = (group + hs - 1) / hs, tu = (j->T + ts - 1) / ts, units = hp->n_head_kv * per * tu;
        /* kv head outermost: a thread's rows walk one kv head's copies (K and V of 512 positions
         * are 0.5 MB at head size 128) while they stay in its L2 */
        for (int64_t r = ith; r < units; r += nth) {
            const int64_t t0 = r % tu * ts, u = r / tu, kvh = u / per, h0 = kvh * group + hs * (u % per);
            const float *q[4];
            float *out[4];
            int64_t last[4], first[4];
            float sink[4];
            int G = 0;
            for (int64_t t = t0; t < t0 + ts && t < j->T; t++)
                for (int64_t h = h0; h < h0 + hs && h < (kvh + 1) * group; h++, G++) {
                    q[G] = s->q + t * s->n_q + h * hp->head_dim_k;
                    out[G] = s->att + t * (hp->n_head * hp->head_dim_v) + h * hp->head_dim_v;
                    last[G] = j->pos0 + t;
                    first[G] = first_key(s, j->il, last[G]);
                    sink[G] = s->sinks ? s->sinks[j->il][h] : 0.0f;
                }
            /* G: 4, or 2 / 1 at an odd edge */
            attend_rows_tiled(m, s, sc, q, out, last, first, s->sinks ? sink : NULL, G, kvh);
        }
        return;
    }
    /* Each token's heads in nth contiguous ranges, whole kv heads where there are enough of them,
     * so that a thread reads its part of each cache row once and in order. */
    const int64_t per = hp->n_head_kv >= nth ? group : 1, blocks = hp->n_head / per;
    for (int64_t t = 0; t < j->T; t++) {
        const int64_t h0 = blocks * ith / nth * per, h1 = blocks * (ith + 1) / nth * per;
        if (h0 >= h1) continue;
        attend_rows(m, s, sc, j->il, s->q + t * s->n_q + h0 * hp->head_dim_k, h0, h1 - h0, j->pos0 + t, j->T == 1,
                    s->att + t * (hp->n_head * hp->head_dim_v) + h0 * hp->head_dim_v);
    }
}

