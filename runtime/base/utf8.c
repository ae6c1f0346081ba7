/* utf8.c - UTF-8 decoding and encoding (see utf8.h for the two readings). */
#include "utf8.h"

/* The structure both readings share: a lead byte 110xxxxx, 1110xxxx or 11110xxx followed by that
 * many continuation bytes inside s[0..n). Returns the length and the assembled value (no range
 * checks), or 0. */
static size_t read_seq(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned c = s[0];
    size_t len;
    uint32_t v;
    if (c < 0x80) { *cp = c; return 1; }
    if ((c & 0xE0) == 0xC0) { len = 2; v = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; v = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; v = c & 0x07; }
    else return 0; /* a continuation byte or 0xF8..0xFF */
    if (n < len) return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[k] & 0x3F);
    }
    *cp = v;
    return len;
}

size_t sn_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    static const uint32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t v;
    size_t len = n ? read_seq(s, n, &v) : 0;
    if (!len || v < min_of_len[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

size_t sn_utf8_bad_at(const unsigned char *s, size_t n) {
    size_t i = 0;
    uint32_t cp;
    for (size_t l; i < n && (l = sn_utf8_decode(s + i, n - i, &cp)) != 0;) i += l;
    return i;
}

uint32_t sn_utf8_next(const unsigned char *s, size_t n, size_t *off) {
    uint32_t cp;
    size_t len = read_seq(s + *off, n - *off, &cp);
    if (!len) { *off += 1; return 0xFFFD; }
    *off += len;
    return cp;
}

int sn_utf8_put(uint32_t cp, char *o) {
    if (cp <= 0x7F) { o[0] = (char)cp; return 1; }
    if (cp <= 0x7FF) {
        o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp <= 0xFFFF) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}
