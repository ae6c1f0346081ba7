/* weights.c - where a model's matrices live after load, and the one matmul entry the families call:
 * Q4_0 and Q4_K matrices repacked into 8-row groups (kernels/q4_0_x8.h, kernels/q4_K_x8.h), other
 * matrices copied into 2 MB huge-page arenas (or left in the file mapping), the thread split in
 * whole groups, and sn_matrix_mul dispatching to the kernel that reads each layout. Split from
 * model.c, which keeps loading and the family table. */
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
 * transparent huge pages: decode streams them from DRAM ~20% faster with 2 MB pages (measured on
 * the 75 MB head), and single matrices are mostly smaller than one huge page. Untouched space is
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

static int env_off(const char *name) {
    const char *e = getenv(name);
    return e && strcmp(e, "0") == 0;
}

sn_status sn_model_output_head(sn_model *m, sn_matrix *embd, int required, sn_matrix *head, sn_err *err) {
    sn_status st = sn_model_matrix(m, "output.weight", embd->n_in, embd->n_out, required, head, err);
    if (st) return st;
    const int tied = !head->data;
    if (tied) *head = *embd;
    if ((st = sn_model_repack(m, head, err))) return st;
    if (tied) embd->data = head->data;
    return SN_OK;
}

sn_status sn_model_repack(sn_model *m, sn_matrix *w, sn_err *err) {
    if (w->x8 && w->type == SN_KTYPE_INT4G32) return sn_model_to_huge_pages(m, w, err); /* a blob's 8-row groups */
    if (w->x8 || !w->data || m->params.validate_only) return SN_OK;
    const int q4_0 = w->type == SN_GGML_Q4_0 && m->k->mm_q4_0x8 && !env_off("SN_Q4_0_REPACK");
    const int q4_K = w->type == SN_GGML_Q4_K && m->k->mv_q4_Kx8 && !env_off("SN_Q4_K_REPACK");
    const uint64_t size = q4_0 ? sn_q4_0x8_size(w->n_in, w->n_out) : q4_K ? sn_q4_Kx8_size(w->n_in, w->n_out) : 0;
    if (m->blob || size == 0) /* another type, or fewer than 8 rows: the row kernels handle it */
        return sn_model_to_huge_pages(m, w, err);
    for (int i = 0; i < m->n_repacked; i++)
        if (m->repacked_src[i] == w->data) { /* tied: the same mapped matrix was packed already */
            w->x8 = m->repacked[i];
            return SN_OK;
        }
    void **bufs = realloc(m->repacked, (size_t)(m->n_repacked + 1) * sizeof(*bufs));
    if (!bufs) return sn_err_set(err, SN_ENOMEM, "out of memory repacking %s", w->name);
    m->repacked = bufs;
    const void **srcs = realloc(m->repacked_src, (size_t)(m->n_repacked + 1) * sizeof(*srcs));
    if (!srcs) return sn_err_set(err, SN_ENOMEM, "out of memory repacking %s", w->name);
    m->repacked_src = srcs;
    void *dst = arena_take(m, size);
    if (!dst)
        return sn_err_set(err, SN_ENOMEM, "out of memory repacking %s (%llu MB)", w->name,
                          (unsigned long long)(size >> 20));
    /* ~1 MB of source rows at a time, releasing what has been read so peak RSS grows by a chunk */
    const int64_t groups = w->n_out / SN_Q4_0X8_ROWS; /* 8-row groups either way */
    const uint64_t gsrc = w->row_bytes * SN_Q4_0X8_ROWS;
    const int64_t step = gsrc >= ((uint64_t)1 << 20) ? 1 : (int64_t)(((uint64_t)1 << 20) / gsrc);
    const char *src = w->data;
    for (int64_t g = 0; g < groups; g += step) {
        const int64_t ge = g + step < groups ? g + step : groups;
        if (q4_0) sn_q4_0x8_repack(src, w->row_bytes, w->n_in, g, ge, dst);
        else sn_q4_Kx8_repack(src, w->row_bytes, w->n_in, g, ge, dst);
        drop_pages(src, src + (uint64_t)ge * gsrc);
    }
    m->repacked[m->n_repacked] = dst;
    m->repacked_src[m->n_repacked++] = w->data;
    w->x8 = dst;
    return SN_OK;
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

/* Decode streams every matrix once per token and the page cache mostly maps a file in 4 KB pages
 * (a fresh 168 MB blob: 8 MB PMD-mapped): in 2 MB pages the TLB covers a matrix and the
 * prefetchers are not stopped at every 4 KB boundary (docs/PERFORMANCE.md, "Huge pages for mapped
 * weights"). The bytes are copied unchanged: a GGUF's rows, a blob's rows or INT4 8-row groups. */
sn_status sn_model_to_huge_pages(sn_model *m, sn_matrix *w, sn_err *err) {
    const int blob_x8 = w->x8 && w->type == SN_KTYPE_INT4G32;
    if ((w->x8 && !blob_x8) || !w->data) return SN_OK;
    if (m->params.mmap_weights || env_off("SN_HUGE_WEIGHTS") || !thp_enabled()) return SN_OK; /* read in place */
    const char *src = blob_x8 ? w->x8 : w->data;
    for (int i = 0; i < m->n_repacked; i++) {
        if (m->repacked[i] == src) return SN_OK; /* in an arena already (sn_model_repack moved it) */
        if (m->repacked_src[i] == src) {         /* tied: the same mapped matrix was moved already */
            if (blob_x8) w->x8 = m->repacked[i];
            w->data = m->repacked[i];
            return SN_OK;
        }
    }
    const uint64_t units = blob_x8 ? (uint64_t)(w->n_out + SN_INT4X8_ROWS - 1) / SN_INT4X8_ROWS : (uint64_t)w->n_out;
    const uint64_t unit_bytes = blob_x8 ? sn_int4x8_group_bytes(w->n_in) : w->row_bytes;
    if (w->n_out < 0 || (unit_bytes && units > UINT64_MAX / unit_bytes)) return SN_OK;
    const uint64_t size = unit_bytes * units;
    if (m->huge_budget < 0) m->huge_budget = mem_available_half();
    if (size > (uint64_t)m->huge_budget) return SN_OK; /* stays mapped */
    char *dst = arena_take(m, size);
    if (!dst) return SN_OK; /* an optimisation only: the matrix stays mapped */
    m->huge_budget -= (int64_t)size;
    for (uint64_t o = 0; o < size; o += (uint64_t)1 << 20) { /* 1 MB at a time, releasing what was read */
        const uint64_t n = size - o < ((uint64_t)1 << 20) ? size - o : ((uint64_t)1 << 20);
        memcpy(dst + o, src + o, (size_t)n);
        drop_pages(src + (o ? o - 4096 : 0), src + o + n); /* (the page across the last boundary too) */
    }
    sn_status st = note_moved(m, src, dst, w->name, err);
    if (st) return st;
    if (blob_x8) w->x8 = dst;
    w->data = dst; /* a tied embedding keeps its own sn_matrix, which still points at the mapping */
    return SN_OK;
}

sn_status sn_model_embedding_to_huge_pages(sn_model *m, sn_matrix *embd, const sn_matrix *head, sn_err *err) {
    if (head->x8 && head->data == embd->data) return SN_OK;
    return sn_model_to_huge_pages(m, embd, err);
}

void sn_matrix_split(const sn_matrix *w, int ith, int nth, int64_t *r0, int64_t *r1) {
    const int64_t unit = w->x8 ? SN_Q4_0X8_ROWS : 1, units = (w->n_out + unit - 1) / unit;
    const int64_t per = (units + nth - 1) / nth * unit;
    *r0 = per * ith < w->n_out ? per * ith : w->n_out;
    *r1 = *r0 + per < w->n_out ? *r0 + per : w->n_out;
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

void sn_matrix_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                   int64_t ldy, int64_t r0, int64_t r1) {
    if (r0 >= r1) return;
    if (w->x8 && w->type == SN_KTYPE_INT4G32) { /* a blob's INT4 matrix in 8-row groups; r0 % 8 == 0 */
        /* the 8-row kernel of the table's ISA (the same one its INT4 dot is) */
        const sn_int4x8_mm_fn mm = k->dot[SN_KTYPE_INT4G32] == sn_int4_dot_avx512vnni ? sn_int4x8_mm_avx512vnni
                                 : k->dot[SN_KTYPE_INT4G32] == sn_int4_dot_avx2       ? sn_int4x8_mm_avx2
                                                                                      : sn_int4x8_mm_scalar;
        mm(w->n_in, (const char *)w->x8 + (uint64_t)(r0 / SN_INT4X8_ROWS) * sn_int4x8_group_bytes(w->n_in), r1 - r0, x,
           x_row, T, y + r0, ldy);
        return;
    }
    if (w->x8 && w->type == SN_GGML_Q4_K) {
        q4_Kx8_mul(k, w, x, x_row, T, y, ldy, r0, r1);
        return;
    }
    if (w->x8 && k->mm_q4_0x8) {
        const uint64_t gbytes = (uint64_t)(w->n_in / SN_QK4_0) * SN_Q4_0X8_BLOCK_BYTES;
        const int64_t n8 = w->n_out / SN_Q4_0X8_ROWS * SN_Q4_0X8_ROWS, e = r1 < n8 ? r1 : n8;
        if (r0 < e)
            k->mm_q4_0x8(w->n_in, (const char *)w->x8 + (uint64_t)(r0 / SN_Q4_0X8_ROWS) * gbytes,
                         (e - r0) / SN_Q4_0X8_ROWS, x, x_row, T, y + r0, ldy);
        if (r1 > n8) /* the last n_out % 8 rows stay in the mapped layout */
            sn_matmul(k, w->type, w->data, w->row_bytes, w->n_in, x, x_row, T, y, ldy, r0 > n8 ? r0 : n8, r1);
        return;
    }
    sn_matmul(k, w->type, w->data, w->row_bytes, w->n_in, x, x_row, T, y, ldy, r0, r1);
}
