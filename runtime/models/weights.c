/* weights.c - where a model's matrices live after load, and how each is multiplied: the placement
 * pass (sn_model_place) gives every matrix a family declared its layout once (Q4_0 and Q4_K
 * repacked into 8-row groups, other matrices copied into 2 MB huge-page arenas or left in the file
 * mapping), and each layout record carries the multiply that reads it, so sn_matrix_mul is one
 * indirect call. Split from model.c, which keeps loading and the family table. */
#include "family.h"
#include "blob.h"
#include "kernels/int4.h"
#include "kernels/q4_0_x8.h"
#include "kernels/q4_K_x8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Releases the whole pages of the mapping inside [lo, hi): they were read once for repacking and
 * will not be read by the matmuls again (a row lookup may fault a page back in from the file). */
static void drop_pages(const void *lo, const void *hi) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = ((uintptr_t)lo + page - 1) & ~(page - 1), b = (uintptr_t)hi & ~(page - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Repacked matrices are packed back to back into blocks of >= 64 MB, 2 MB-aligned and marked for
 * transparent huge pages: decode streams them from DRAM faster in 2 MB pages (fewer TLB misses,
 * docs/PERFORMANCE.md), and single matrices are mostly smaller than one huge page. Untouched space is
 * not resident; at most one partly used huge page per block is. */
enum { ARENA_ALIGN = 2u << 20, ARENA_MIN = 64u << 20 };

static void *arena_take(sn_model *m, uint64_t size) {
    size = (size + 63) & ~(uint64_t)63;
    if (m->n_arenas && m->arena_used + size <= m->arena_cap) {
        void *p = (char *)m->arenas[m->n_arenas - 1] + m->arena_used;
        m->arena_used += size;
        return p;
    }
    const uint64_t cap = size > ARENA_MIN ? (size + ARENA_ALIGN - 1) & ~(uint64_t)(ARENA_ALIGN - 1) : ARENA_MIN;
    if (cap > SIZE_MAX) return NULL;
    void **list = realloc(m->arenas, (size_t)(m->n_arenas + 1) * sizeof(*list));
    if (!list) return NULL;
    m->arenas = list;
    void *p = aligned_alloc(ARENA_ALIGN, (size_t)cap);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, (size_t)cap, MADV_HUGEPAGE); /* a hint; without THP it fails harmlessly */
#endif
    m->arenas[m->n_arenas++] = p;
    m->arena_used = size;
    m->arena_cap = cap;
    return p;
}

/* Records dst as the arena copy made from the mapped data src (tied matrices look it up). */
static sn_status note_moved(sn_model *m, const void *src, void *dst, const char *name, sn_err *err) {
    void **bufs = realloc(m->repacked, (size_t)(m->n_repacked + 1) * sizeof(*bufs));
    if (!bufs) return sn_err_set(err, SN_ENOMEM, "out of memory moving %s", name);
    m->repacked = bufs;
    const void **srcs = realloc(m->repacked_src, (size_t)(m->n_repacked + 1) * sizeof(*srcs));
    if (!srcs) return sn_err_set(err, SN_ENOMEM, "out of memory moving %s", name);
    m->repacked_src = srcs;
    m->repacked[m->n_repacked] = dst;
    m->repacked_src[m->n_repacked++] = src;
    return SN_OK;
}

/* 1 unless transparent huge pages are off ("[never]"): then a copy would only cost load time. */
static int thp_enabled(void) {
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return 0;
    char line[128] = "";
    const int ok = fgets(line, sizeof line, f) != NULL && strstr(line, "[never]") == NULL;
    fclose(f);
    return ok;
}

/* Half of what the kernel says is available now (MemAvailable), so that copying a model that is
 * large for this machine's memory never turns into swapping or the OOM killer: past the budget a
 * matrix stays mapped (read from the page cache, as llama.cpp's mmap does). 0 if unknown. */
static int64_t mem_available_half(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[128];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
    fclose(f);
    return kb > 0 ? (int64_t)(kb / 2) * 1024 : 0;
}

/* Repacks a Q4_0, MXFP4 or Q4_K matrix's full 8-row groups into an arena where the kernel object reads
 * that layout (the last n_out % 8 rows stay mapped; a stack of experts only when whole groups never
 * straddle two experts). Returns 0 when the matrix keeps the rows layout. */
static sn_status repack(sn_model *m, sn_matrix *w, int *done, sn_err *err) {
    *done = 0;
    const int q4_0 = w->type == SN_GGML_Q4_0 && m->k->mm_q4_0x8 && m->params.tuning.repack_q4_0;
    const int mx = w->type == SN_GGML_MXFP4 && m->k->mm_mxfp4x8 && m->params.tuning.repack_q4_0;
    const int q4_K = w->type == SN_GGML_Q4_K && m->k->mv_q4_Kx8 && m->params.tuning.repack_q4_K;
    const uint64_t one = q4_0 ? sn_q4_0x8_size(w->n_in, w->n_out)
                         : mx ? sn_mxfp4x8_size(w->n_in, w->n_out)
                         : q4_K ? sn_q4_Kx8_size(w->n_in, w->n_out) : 0;
    if (m->blob || one == 0 || (w->n_expert > 1 && w->n_out % SN_Q4_0X8_ROWS)) return SN_OK;
    if (w->n_expert > 1 && one > UINT64_MAX / (uint64_t)w->n_expert) return SN_OK;
    *done = 1;
    w->layout = q4_0 ? &sn_layout_q4_0x8 : mx ? &sn_layout_mxfp4x8 : &sn_layout_q4_Kx8;
    w->expert_x8_bytes = one;
    for (int i = 0; i < m->n_repacked; i++)
        if (m->repacked_src[i] == w->data) { /* tied: the same mapped matrix was packed already */
            w->x8 = m->repacked[i];
            return SN_OK;
        }
    const uint64_t size = one * (uint64_t)w->n_expert;
    void *dst = arena_take(m, size);
    if (!dst)
        return sn_err_set(err, SN_ENOMEM, "out of memory repacking %s (%llu MB)", w->name,
                          (unsigned long long)(size >> 20));
    sn_status st = note_moved(m, w->data, dst, w->name, err);
    if (st) return st;
    /* ~1 MB of source rows at a time, releasing what has been read so peak RSS grows by a chunk */
    const int64_t groups = w->n_out / SN_Q4_0X8_ROWS * w->n_expert; /* 8-row groups either way */
    const uint64_t gsrc = w->row_bytes * SN_Q4_0X8_ROWS;
    const int64_t step = gsrc >= ((uint64_t)1 << 20) ? 1 : (int64_t)(((uint64_t)1 << 20) / gsrc);
    const char *src = w->data;
    for (int64_t g = 0; g < groups; g += step) {
        const int64_t ge = g + step < groups ? g + step : groups;
        if (q4_0) sn_q4_0x8_repack(src, w->row_bytes, w->n_in, g, ge, dst);
        else if (mx) sn_mxfp4x8_repack(src, w->row_bytes, w->n_in, g, ge, dst);
        else sn_q4_Kx8_repack(src, w->row_bytes, w->n_in, g, ge, dst);
        drop_pages(src, src + (uint64_t)ge * gsrc);
    }
    w->x8 = dst;
    return SN_OK;
}

/* Copies a matrix (rows, or a blob's INT4 8-row groups) unchanged into the huge-page arenas and
 * points it there; a tied matrix is copied once, and one that does not fit the budget (or an
 * allocation that fails) stays mapped: an optimisation only. */
static sn_status to_huge_pages(sn_model *m, sn_matrix *w, sn_err *err) {
    const int grouped = w->layout == &sn_layout_int4x8;
    if (!w->data || m->params.mmap_weights || !m->params.tuning.huge_pages || !thp_enabled()) return SN_OK;
    const char *src = grouped ? w->x8 : w->data;
    for (int i = 0; i < m->n_repacked; i++) {
        if (m->repacked[i] == src) return SN_OK; /* in an arena already */
        if (m->repacked_src[i] == src) {         /* tied: the same mapped matrix was moved already */
            if (grouped) w->x8 = m->repacked[i];
            w->data = m->repacked[i];
            return SN_OK;
        }
    }
    const uint64_t size = (grouped ? w->expert_x8_bytes : w->expert_bytes) * (uint64_t)w->n_expert;
    if (m->huge_budget < 0) m->huge_budget = mem_available_half();
    if (size > (uint64_t)m->huge_budget) return SN_OK; /* stays mapped */
    char *dst = arena_take(m, size);
    if (!dst) return SN_OK;
    m->huge_budget -= (int64_t)size;
    for (uint64_t o = 0; o < size; o += (uint64_t)1 << 20) { /* 1 MB at a time, releasing what was read */
        const uint64_t n = size - o < ((uint64_t)1 << 20) ? size - o : ((uint64_t)1 << 20);
        memcpy(dst + o, src + o, (size_t)n);
        drop_pages(src + (o ? o - 4096 : 0), src + o + n); /* (the page across the last boundary too) */
    }
    sn_status st = note_moved(m, src, dst, w->name, err);
    if (st) return st;
    if (grouped) w->x8 = dst;
    w->data = dst;
    return SN_OK;
}

sn_status sn_model_place(sn_model *m, sn_err *err) {
    sn_status st;
    if (m->params.validate_only) return SN_OK; /* no weight copied, repacked or touched */
    for (int i = 0; i < m->n_mats; i++) {
        sn_matrix *w = m->mats[i].w;
        if (m->mats[i].embd || !w->data) continue;
        int repacked;
        if ((st = repack(m, w, &repacked, err))) return st;
        if (!repacked && (st = to_huge_pages(m, w, err))) return st;
        /* a matrix ggml does not repack (rows not a multiple of 8, per expert): its vec_dot order */
        if (w->layout == &sn_layout_rows && m->k->type[w->type].dot_unpacked && w->n_out % 8)
            w->layout = &sn_layout_unpacked;
    }
    for (int i = 0; i < m->n_mats; i++) { /* the embedding last */
        sn_matrix *e = m->mats[i].w;
        if (!m->mats[i].embd || !e->data) continue;
        int grouped_tie = 0; /* tied to a head in 8-row groups: the lookups read the mapped rows */
        for (int j = 0; j < m->n_mats && !grouped_tie; j++)
            grouped_tie = !m->mats[j].embd && m->mats[j].w->x8 && m->mats[j].w->data == e->data;
        if (!grouped_tie && (st = to_huge_pages(m, e, err))) return st;
    }
    return SN_OK;
}

sn_matrix sn_matrix_expert(const sn_matrix *w, int64_t e) {
    sn_matrix v = *w;
    v.data = (const char *)w->data + (uint64_t)e * w->expert_bytes;
    if (w->x8) v.x8 = (const char *)w->x8 + (uint64_t)e * w->expert_x8_bytes;
    v.n_expert = 1;
    return v;
}

void sn_matrix_split(const sn_matrix *w, int ith, int nth, int64_t *r0, int64_t *r1) {
    const int64_t unit = w->layout->group_rows, units = (w->n_out + unit - 1) / unit;
    const int64_t per = (units + nth - 1) / nth * unit;
    *r0 = per * ith < w->n_out ? per * ith : w->n_out;
    *r1 = *r0 + per < w->n_out ? *r0 + per : w->n_out;
}

static void rows_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                     int64_t ldy, int64_t r0, int64_t r1) {
    sn_matmul(k, w->type, w->data, w->row_bytes, w->n_in, x, x_row, T, y, ldy, r0, r1);
}

/* A repacked Q4_0 or MXFP4 matrix (kernels/q4_0_x8.h), rows [r0, r1), r0 % 8 == 0, any T. */
static void q4_0x8_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                       int64_t ldy, int64_t r0, int64_t r1) {
    const int mx = w->type == SN_GGML_MXFP4;
    const uint64_t gbytes = (uint64_t)(w->n_in / SN_QK4_0) * (mx ? SN_MXFP4X8_BLOCK_BYTES : SN_Q4_0X8_BLOCK_BYTES);
    const int64_t n8 = w->n_out / SN_Q4_0X8_ROWS * SN_Q4_0X8_ROWS, e = r1 < n8 ? r1 : n8;
    if (r0 < e)
        (mx ? k->mm_mxfp4x8 : k->mm_q4_0x8)(w->n_in, (const char *)w->x8 + (uint64_t)(r0 / SN_Q4_0X8_ROWS) * gbytes,
                                            (e - r0) / SN_Q4_0X8_ROWS, x, x_row, T, y + r0, ldy);
    if (r1 > n8) /* the last n_out % 8 rows stay in the mapped layout */
        sn_matmul(k, w->type, w->data, w->row_bytes, w->n_in, x, x_row, T, y, ldy, r0 > n8 ? r0 : n8, r1);
}

/* A repacked Q4_K matrix (kernels/q4_K_x8.h), rows [r0, r1), r0 % 8 == 0. One token: the 8-row
 * kernel. A batch: the row kernels (their batched order, dot_mm, for whole groups of 4 tokens) on
 * an unpacked copy of 64 rows at a time; the copy costs a pass over rows the batch reads anyway. */
static void q4_Kx8_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                       int64_t ldy, int64_t r0, int64_t r1) {
    const uint64_t gbytes = (uint64_t)(w->n_in / SN_QK_K) * SN_Q4_KX8_BLOCK_BYTES;
    const int64_t n8 = w->n_out / SN_Q4_KX8_ROWS * SN_Q4_KX8_ROWS, e = r1 < n8 ? r1 : n8;
    enum { CHUNK_ROWS = 64 };
    void *rows = T > 1 && r0 < e ? malloc((size_t)w->row_bytes * CHUNK_ROWS) : NULL;
    for (int64_t r = r0; r < e; r += CHUNK_ROWS) {
        const int64_t re = r + CHUNK_ROWS < e ? r + CHUNK_ROWS : e;
        const char *grp = (const char *)w->x8 + (uint64_t)(r / SN_Q4_KX8_ROWS) * gbytes;
        if (T == 1) {
            k->mv_q4_Kx8(w->n_in, grp, (re - r) / SN_Q4_KX8_ROWS, x, y + r);
        } else if (rows) {
            sn_q4_Kx8_unpack(grp, w->n_in, (re - r) / SN_Q4_KX8_ROWS, rows);
            sn_matmul(k, w->type, rows, w->row_bytes, w->n_in, x, x_row, T, y + r, ldy, 0, re - r);
        } else { /* out of memory for the copy: the mapped rows (released after repacking, read again) */
            sn_matmul(k, w->type, w->data, w->row_bytes, w->n_in, x, x_row, T, y, ldy, r, re);
        }
    }
    free(rows);
    if (r1 > n8) /* the last n_out % 8 rows stay in the mapped layout */
        sn_matmul(k, w->type, w->data, w->row_bytes, w->n_in, x, x_row, T, y, ldy, r0 > n8 ? r0 : n8, r1);
}

/* A blob's INT4 matrix in 8-row groups (kernels/int4.h), rows [r0, r1), r0 % 8 == 0. */
static void int4x8_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                       int64_t ldy, int64_t r0, int64_t r1) {
    k->mm_int4x8(w->n_in, (const char *)w->x8 + (uint64_t)(r0 / SN_INT4X8_ROWS) * sn_int4x8_group_bytes(w->n_in),
                 r1 - r0, x, x_row, T, y + r0, ldy);
}

/* Rows as they are, every token in the table's dot_unpacked order (sn_model_place picks this). */
static void unpacked_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                         int64_t ldy, int64_t r0, int64_t r1) {
    const sn_dot_fn dot = k->type[w->type].dot_unpacked;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t t = 0; t < T; t++)
            y[t * ldy + r] = dot(w->n_in, (const char *)w->data + (uint64_t)r * w->row_bytes, (const char *)x + (uint64_t)t * x_row);
}

const sn_layout sn_layout_rows = {"rows", 1, rows_mul};
const sn_layout sn_layout_unpacked = {"unpacked", 1, unpacked_mul};
const sn_layout sn_layout_q4_0x8 = {"q4_0x8", SN_Q4_0X8_ROWS, q4_0x8_mul};
const sn_layout sn_layout_mxfp4x8 = {"mxfp4x8", SN_Q4_0X8_ROWS, q4_0x8_mul};
const sn_layout sn_layout_q4_Kx8 = {"q4_Kx8", SN_Q4_KX8_ROWS, q4_Kx8_mul};
const sn_layout sn_layout_int4x8 = {"int4x8", SN_INT4X8_ROWS, int4x8_mul};
