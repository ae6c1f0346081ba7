/* utf8.h - UTF-8 checks for text that leaves sunny-integrate: JSON output and Modelfiles.
 *
 * Generated text is decoded token by token, so it can end inside a multi-byte character (a byte
 * token), and server text can hold anything. JSON must be valid UTF-8 (RFC 8259 section 8.1), and
 * Ollama's Modelfile reader decodes UTF-8 and drops whatever Go's strconv.IsPrint rejects, so both
 * writers look at every code point here first. */
#ifndef SN_UTF8_H
#define SN_UTF8_H
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the well-formed sequence at s[0..n) and its code point in *cp; 0 when the bytes
 * are not well-formed UTF-8 (overlong, surrogate, past U+10FFFF, bad continuation) or stop early. */
size_t sn_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

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
