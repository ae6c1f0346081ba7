/* test_utf8.c - integrate/utf8.c: the well-formed table of Unicode's Table 3-7 (overlongs,
 * surrogates, past U+10FFFF refused), text cut inside a character cut back to the last boundary,
 * other ill-formed bytes replaced by U+FFFD, a whole cJSON tree (keys too) printed as valid UTF-8,
 * and the Go strconv.IsPrint classes the Modelfile writer relies on. */
#include "sn_test.h"
#include "utf8.h"
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
    {"fix: cut at a boundary, U+FFFD inside", test_fix},
    {"fix a cJSON tree", test_json},
    {"Go strconv.IsPrint classes", test_printable},
};
SN_TEST_MAIN("utf8", cases)
