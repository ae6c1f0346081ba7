/* utf8_fix.c - UTF-8 repair for JSON output and Modelfile values (see utf8_fix.h). */
#include "utf8_fix.h"
#include "unicode_data.h" /* sn_tok_cp_flags: the Unicode class table the tokenizers use */
#include <stdlib.h>
#include <string.h>

/* Is s[0..n) the start of a well-formed sequence that the end of the string cut off? */
static int truncated_tail(const unsigned char *s, size_t n) {
    static const unsigned char tail[] = {0x80, 0xBF};
    unsigned char buf[4];
    if (n == 0 || n >= 4) return 0;
    memcpy(buf, s, n);
    /* complete it with the smallest and the largest continuation bytes: well-formed once = a prefix */
    uint32_t cp;
    for (int t = 0; t < 2; t++) {
        for (size_t k = n; k < 4; k++) buf[k] = tail[t];
        size_t l = sn_utf8_decode(buf, 4, &cp);
        if (l > n) return 1;
    }
    return 0;
}

char *sn_utf8_fix(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str);
    if (n > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(3 * n + 1), *o = out; /* U+FFFD is 3 bytes for each 1-byte error */
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = sn_utf8_decode(s + i, n - i, &cp);
        if (l) { memcpy(o, s + i, l); o += l; i += l; continue; }
        if (truncated_tail(s + i, n - i)) break; /* cut at the last boundary */
        memcpy(o, "\xEF\xBF\xBD", 3);
        o += 3;
        i++;
    }
    *o = 0;
    return out;
}

static int fix_one(char **p) {
    if (!*p) return 0;
    const unsigned char *s = (const unsigned char *)*p;
    size_t n = strlen(*p);
    if (sn_utf8_bad_at(s, n) == n) return 0;
    char *f = sn_utf8_fix(*p);
    if (!f) return -1;
    /* cJSON frees its strings with cJSON_free = free unless hooks were installed (we install none) */
    free(*p);
    *p = f;
    return 0;
}

int sn_utf8_fix_json(cJSON *item) {
    for (; item; item = item->next) {
        if (!(item->type & cJSON_StringIsConst) && fix_one(&item->string)) return -1;
        /* raw items (pre-printed JSON, e.g. the create body) carry text too */
        if ((cJSON_IsString(item) || cJSON_IsRaw(item)) && fix_one(&item->valuestring)) return -1;
        if (item->child && sn_utf8_fix_json(item->child)) return -1;
    }
    return 0;
}

int sn_utf8_go_printable(uint32_t cp) {
    if (cp == 0x20) return 1;
    uint16_t f = sn_tok_cp_flags(cp);
    return !(f & (SN_UCD_UNDEF | SN_UCD_CONTROL | SN_UCD_SEP));
}
