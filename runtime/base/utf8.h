/* utf8.h - the one UTF-8 decoder, in the two readings sunny needs.
 *
 * Strict (sn_utf8_decode): Unicode's well-formed table (Table 3-7): no overlongs, no surrogates,
 * nothing past U+10FFFF, no sequence cut off by the end. GGUF names, JSON output, Modelfile values
 * and the smoke gate's text comparison use it.
 * Lax (sn_utf8_next): llama.cpp's reading (unicode.cpp): only the lead byte's length and the
 * continuation bytes are checked, so overlongs and surrogates decode to their value; a bad lead byte
 * or a missing continuation byte gives U+FFFD and consumes one byte. The tokenizers and the Jinja
 * string methods use it, so text splits exactly as llama.cpp (and Python, on valid text) splits it. */
#ifndef SN_UTF8_H
#define SN_UTF8_H
#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the well-formed sequence at s[0..n) and its code point in *cp; 0 when the bytes
 * are not well-formed UTF-8 (overlong, surrogate, past U+10FFFF, bad continuation) or stop early. */
size_t sn_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Offset of the first byte of s[0..n) that does not start a well-formed sequence, or n. */
size_t sn_utf8_bad_at(const unsigned char *s, size_t n);

/* Lax decode of the code point at s[*off] (*off < n), advancing *off past it. */
uint32_t sn_utf8_next(const unsigned char *s, size_t n, size_t *off);

/* Length of the sequence a lead byte announces (1 for continuation and invalid bytes), unchecked. */
static inline size_t sn_utf8_seq_len(unsigned char c) {
    static const uint8_t lut[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lut[c >> 4];
}

/* Encodes cp into out[0..4) (no surrogate check); returns 1..4, or 0 past U+10FFFF. */
int sn_utf8_put(uint32_t cp, char *out);
#endif
