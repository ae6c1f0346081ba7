/* utf8_fix.h - UTF-8 repair for text that leaves sunny-integrate: JSON output and Modelfiles.
 *
 * Generated text is decoded token by token, so it can end inside a multi-byte character (a byte
 * token), and server text can hold anything. JSON must be valid UTF-8 (RFC 8259 section 8.1), and
 * Ollama's Modelfile reader decodes UTF-8 and drops whatever Go's strconv.IsPrint rejects, so both
 * writers look at every code point here first (decoding: runtime/base/utf8.h). */
#ifndef SN_UTF8_FIX_H
#define SN_UTF8_FIX_H
#include "utf8.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* A copy of s made valid: a sequence cut off by the end of the string is dropped (cut at the last
 * character boundary), any other ill-formed byte becomes U+FFFD. NULL on out of memory. */
char *sn_utf8_fix(const char *s);

/* Rewrites every string value, raw JSON value and object key under item with sn_utf8_fix, so cJSON_Print gives valid
 * UTF-8. Returns 0, or -1 on out of memory (the tree is then partly fixed). */
int sn_utf8_fix_json(cJSON *item);

/* Would Go's strconv.IsPrint accept cp (letters, marks, numbers, punctuation, symbols, U+0020)?
 * Control, format, private-use, surrogate and unassigned code points and every separator but the
 * ASCII space are not printable (Unicode 15.1 classes from the runtime's table). */
int sn_utf8_go_printable(uint32_t cp);
#endif
