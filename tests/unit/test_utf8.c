/* test_utf8.c - runtime/base/utf8.c, the one decoder, in both readings: strict = the well-formed
 * table of Unicode's Table 3-7 (overlongs, surrogates, past U+10FFFF refused; GGUF names add "no
 * NUL"), lax = llama.cpp's unicode.cpp (overlongs and surrogates decode, a bad lead or a missing
 * continuation byte is U+FFFD for one byte); and integrate/utf8_fix.c: text cut inside a character
 * cut back to the last boundary, other ill-formed bytes replaced by U+FFFD, a whole cJSON tree (keys
 * too) printed as valid UTF-8, and the Go strconv.IsPrint classes the Modelfile writer relies on. */
#include "gguf_internal.h"
#include "sn_test.h"
#include "utf8_fix.h"
#include <stdlib.h>
#include <string.h>

static size_t dec(const char *s, uint32_t *cp) { return sn_utf8_decode((const unsigned char *)s, strlen(s), cp); }

static void test_decode(void) {
    uint32_t cp = 0;
    CU_ASSERT_EQUAL(dec("A", &cp), 1); CU_ASSERT_EQUAL(cp, 0x41);
    CU_ASSERT_EQUAL(dec("\xC3\xA9", &cp), 2); CU_ASSERT_EQUAL(cp, 0xE9);
    CU_ASSERT_EQUAL(dec("\xE2\x82\xAC", &cp), 3); CU_ASSERT_EQUAL(cp, 0x20AC);
    CU_ASSERT_EQUAL(dec("\xF0\x9F\x98\x80", &cp), 4); CU_ASSERT_EQUAL(cp, 0x1F600);
    CU_ASSERT_EQUAL(dec("\xF4\x8F\xBF\xBF", &cp), 4); CU_ASSERT_EQUAL(cp, 0x10FFFF);
    CU_ASSERT_EQUAL(dec("\xC0\xAF", &cp), 0);         /* overlong '/' */
    CU_ASSERT_EQUAL(dec("\xC1\xBF", &cp), 0);
    CU_ASSERT_EQUAL(dec("\xE0\x9F\xBF", &cp), 0);     /* overlong 3-byte */
    CU_ASSERT_EQUAL(dec("\xED\xA0\x80", &cp), 0);     /* U+D800 */
    CU_ASSERT_EQUAL(dec("\xF0\x8F\xBF\xBF", &cp), 0); /* overlong 4-byte */
    CU_ASSERT_EQUAL(dec("\xF4\x90\x80\x80", &cp), 0); /* U+110000 */
    CU_ASSERT_EQUAL(dec("\xF5\x80\x80\x80", &cp), 0);
    CU_ASSERT_EQUAL(dec("\x80", &cp), 0);
    CU_ASSERT_EQUAL(dec("\xE2\x82", &cp), 0);         /* cut off */
    CU_ASSERT_EQUAL(dec("\xE2\x28\xA1", &cp), 0);     /* bad continuation */
}

/* lax reading: each code point and the bytes it took, as "cp/len cp/len ..." */
static void lax_is(const char *s, size_t n, const char *want) {
    char got[256] = "";
    size_t g = 0;
    for (size_t off = 0; off < n && g < sizeof got - 16;) {
        size_t at = off;
        uint32_t cp = sn_utf8_next((const unsigned char *)s, n, &off);
        g += (size_t)snprintf(got + g, sizeof got - g, "%s%X/%zu", g ? " " : "", (unsigned)cp, off - at);
    }
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want)) printf("\n    lax: got \"%s\", want \"%s\"\n", got, want);
}

static void test_lax(void) {
    lax_is("A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 10, "41/1 E9/2 20AC/3 1F600/4");
    lax_is("\xC0\xAF", 2, "2F/2");                       /* overlong decodes to its value */
    lax_is("\xED\xA0\x80", 3, "D800/3");                 /* surrogate too */
    lax_is("\xF4\x90\x80\x80", 4, "110000/4");           /* past U+10FFFF too */
    lax_is("\x80" "a", 2, "FFFD/1 61/1");                /* continuation byte as lead */
    lax_is("\xF8\x80\x80\x80", 4, "FFFD/1 FFFD/1 FFFD/1 FFFD/1");
    lax_is("\xE2\x28\xA1", 3, "FFFD/1 28/1 FFFD/1");      /* bad continuation: one byte */
    lax_is("\xE2\x82", 2, "FFFD/1 FFFD/1");               /* cut off by the end */
    lax_is("a\0b", 3, "61/1 0/1 62/1");
    CU_ASSERT_EQUAL(sn_utf8_seq_len(0x41), 1);
    CU_ASSERT_EQUAL(sn_utf8_seq_len(0x80), 1);
    CU_ASSERT_EQUAL(sn_utf8_seq_len(0xC3), 2);
    CU_ASSERT_EQUAL(sn_utf8_seq_len(0xE2), 3);
    CU_ASSERT_EQUAL(sn_utf8_seq_len(0xF0), 4);
}

static void test_put(void) {
    const uint32_t cps[] = {0x41, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF};
    const int lens[] = {1, 1, 2, 2, 3, 3, 4, 4};
    for (size_t i = 0; i < sizeof cps / sizeof *cps; i++) {
        char b[4];
        uint32_t cp = 0;
        CU_ASSERT_EQUAL(sn_utf8_put(cps[i], b), lens[i]);
        CU_ASSERT_EQUAL(sn_utf8_decode((const unsigned char *)b, (size_t)lens[i], &cp), (size_t)lens[i]);
        CU_ASSERT_EQUAL(cp, cps[i]);
    }
    char b[4];
    CU_ASSERT_EQUAL(sn_utf8_put(0x110000, b), 0);
}

/* where the first ill-formed byte is: the strict walk and GGUF's name rule (NUL refused too) */
static void test_bad_at(void) {
    CU_ASSERT_EQUAL(sn_utf8_bad_at((const unsigned char *)"ab\xC3\xA9", 4), 4);
    CU_ASSERT_EQUAL(sn_utf8_bad_at((const unsigned char *)"ab\xC3", 3), 2);
    CU_ASSERT_EQUAL(sn_utf8_bad_at((const unsigned char *)"a\xED\xA0\x80", 4), 1);
    CU_ASSERT_EQUAL(sn_utf8_bad_at((const unsigned char *)"a\0b", 3), 3);
    CU_ASSERT_EQUAL(sn_gguf_utf8_bad_at((const uint8_t *)"a\0b", 3), 1);
    CU_ASSERT_EQUAL(sn_gguf_utf8_bad_at((const uint8_t *)"blk.0.\xC3\xA9", 8), 8);
    CU_ASSERT_EQUAL(sn_gguf_utf8_bad_at((const uint8_t *)"x\xC0\xAF", 3), 1);
    CU_ASSERT_EQUAL(sn_gguf_utf8_bad_at((const uint8_t *)"x\xF0\x9F\x98", 4), 1);
}

static void fix_is(const char *in, const char *want) {
    char *f = sn_utf8_fix(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(f, want);
    if (strcmp(f, want)) printf("\n    fix(\"%s\") = \"%s\"\n", in, f);
    free(f);
}

static void test_fix(void) {
    fix_is("plain", "plain");
    fix_is("caf\xC3\xA9", "caf\xC3\xA9");
    fix_is("caf\xC3", "caf");                             /* 2-byte char cut after its lead */
    fix_is("euro \xE2\x82", "euro ");                     /* 3-byte cut after 2 */
    fix_is("smile \xF0\x9F\x98", "smile ");               /* 4-byte cut after 3 */
    fix_is("\xF0", "");
    fix_is("a\xE2\x82" "b", "a\xEF\xBF\xBD\xEF\xBF\xBD" "b"); /* cut inside, not at the end */
    fix_is("a\xFF", "a\xEF\xBF\xBD");                     /* never a lead byte: not a cut */
    fix_is("a\xED\xA0", "a\xEF\xBF\xBD\xEF\xBF\xBD");     /* surrogate prefix: no character starts so */
    fix_is("a\xE0\x80", "a\xEF\xBF\xBD\xEF\xBF\xBD");     /* overlong prefix */
    fix_is("x\xC0\xAFy", "x\xEF\xBF\xBD\xEF\xBF\xBDy");
}

static int valid(const char *s) {
    for (size_t i = 0, n = strlen(s); i < n;) {
        uint32_t cp;
        size_t l = sn_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!l) return 0;
        i += l;
    }
    return 1;
}

static void test_json(void) {
    cJSON *j = cJSON_CreateObject();
    cJSON *sm = cJSON_AddObjectToObject(j, "smoke");
    cJSON_AddStringToObject(sm, "sunny_text", "ends inside \xE4\xB8");
    cJSON_AddStringToObject(sm, "server_text", "bad \x80 byte");
    cJSON *a = cJSON_AddArrayToObject(j, "list");
    cJSON_AddItemToArray(a, cJSON_CreateString("\xF0\x9F\x98\x80 ok"));
    cJSON_AddStringToObject(j, "key\xC3", "v");
    CU_ASSERT_EQUAL(sn_utf8_fix_json(j), 0);
    char *s = cJSON_PrintUnformatted(j);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(valid(s));
    CU_ASSERT_STRING_EQUAL(s, "{\"smoke\":{\"sunny_text\":\"ends inside \",\"server_text\":\"bad \xEF\xBF\xBD byte\"},"
                              "\"list\":[\"\xF0\x9F\x98\x80 ok\"],\"key\":\"v\"}");
    free(s);
    cJSON_Delete(j);
}

static void test_printable(void) {
    /* Go: unicode.IsPrint = L, M, N, P, S and U+0020 only */
    const uint32_t yes[] = {0x20, 'a', '~', 0xE9, 0x301, 0x20AC, 0x4E2D, 0x1F600, 0xFFFD};
    const uint32_t no[] = {0x09, 0x0A, 0x7F, 0x85, 0xA0, 0xAD, 0x1680, 0x2000, 0x200B, 0x200D, 0x2028,
                           0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF, 0xE000, 0x10FFFF, 0xD800};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) CU_ASSERT(sn_utf8_go_printable(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        CU_ASSERT(!sn_utf8_go_printable(no[i]));
        if (sn_utf8_go_printable(no[i])) printf("\n    U+%04X printable?\n", (unsigned)no[i]);
    }
}

static const sn_test_case cases[] = {
    {"decode: Table 3-7", test_decode},
    {"next: llama.cpp's lax reading", test_lax},
    {"put: encode round trip", test_put},
    {"bad_at: strict walk, GGUF names", test_bad_at},
    {"fix: cut at a boundary, U+FFFD inside", test_fix},
    {"fix a cJSON tree", test_json},
    {"Go strconv.IsPrint classes", test_printable},
};
SN_TEST_MAIN("utf8", cases)
