/* grow.h - the one step every growable heap array takes: room for one more element.
 *
 * Callers keep their own (items, count, capacity) triple; sn_grow doubles the capacity when the
 * array is full (FIRST elements to begin with) and leaves the array as it was when memory runs out,
 * so the caller's error path still owns everything it had. */
#ifndef SN_GROW_H
#define SN_GROW_H
#include <stdint.h>
#include <stdlib.h>

/* Room for element N of ITEMS (capacity *CAP elements of SIZE bytes): returns ITEMS itself when
 * N < *CAP, else the array realloc'd to twice the capacity (FIRST when *CAP is 0) with *CAP
 * updated; NULL when out of memory or the size overflows (ITEMS is still valid, *CAP unchanged). */
static inline void *sn_grow(void *items, uint64_t n, uint64_t *cap, size_t size, uint64_t first) {
    if (n < *cap) return items;
    uint64_t nc = *cap ? *cap * 2 : first;
    if (nc < *cap || nc > SIZE_MAX / size) return NULL;
    void *p = realloc(items, (size_t)nc * size);
    if (p) *cap = nc;
    return p;
}

#endif
