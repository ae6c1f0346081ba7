/* populate.h - fault in a fresh buffer's pages now, on the calling thread.
 *
 * A new malloc/calloc buffer is backed by the shared zero page (or by nothing) until written. When
 * the first writes come from the pool's threads, each page costs a copy-on-write fault with a
 * cross-CPU TLB flush in the middle of a parallel pass; faulting the pages in where the buffer is
 * allocated moves that cost to load time, on one thread. */
#ifndef SN_POPULATE_H
#define SN_POPULATE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* Makes the 4 KB pages holding p + k*4096 (k < ceil(len / 4096)) resident and writable:
 * madvise(MADV_POPULATE_WRITE) where the kernel has it (contents unchanged), else a zero byte
 * written at each of those offsets (so only for buffers whose contents are not yet meaningful). */
static inline void sn_populate(void *p, size_t len) {
    if (!p || len == 0) return;
#ifdef MADV_POPULATE_WRITE
    const uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
    const size_t pages = len / 4096 + (len % 4096 != 0);
    if (pages <= (SIZE_MAX - 4095) / 4096 && madvise((void *)a, pages * 4096, MADV_POPULATE_WRITE) == 0) return;
#endif
    for (size_t o = 0; o < len; o += 4096) ((volatile char *)p)[o] = 0;
}

#endif
