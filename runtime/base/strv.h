/* strv.h - freeing a heap array of heap strings (char **v with n entries), which metadata, the
 * template results, the smoke pieces and the Ollama part lists all hold. */
#ifndef SN_STRV_H
#define SN_STRV_H
#include <stddef.h>
#include <stdlib.h>

/* Frees v[0..n) and v itself; v may be NULL. */
static inline void sn_strv_free(char **v, size_t n) {
    if (!v) return;
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

#endif
