/* lmstudio_internal.h - what the LM Studio files share (internal to integrate/, not an API).
 *
 * lmstudio_place.c finds the models folder and places the GGUF; lmstudio.c talks to the server
 * and the lms CLI. Both report through the caller's note callback. */
#ifndef SN_LMSTUDIO_INTERNAL_H
#define SN_LMSTUDIO_INTERNAL_H
#include "lmstudio.h"

/* printf-style note through fn (nothing when fn is NULL); lmstudio.c. */
void sn_lms_notef(sn_lms_note_fn fn, void *ud, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
