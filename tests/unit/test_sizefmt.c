/* test_sizefmt.c - runtime/base/sizefmt.c: the one size format of every message ("29.3 MB
 * (29,318,752 bytes)"), its unit steps and digit grouping. */
#include "sizefmt.h"
#include "sn_test.h"
#include <string.h>

static void is(uint64_t b, const char *want) {
    char buf[SN_SIZE_STR_MAX];
    sn_size_str(b, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, want);
    if (strcmp(buf, want)) printf("\n    %llu: \"%s\", want \"%s\"\n", (unsigned long long)b, buf, want);
}

static void test_sizes(void) {
    is(0, "0 bytes");
    is(1, "1 bytes");
    is(999, "999 bytes");
    is(1000, "1.0 kB (1,000 bytes)");
    is(29318752, "29.3 MB (29,318,752 bytes)");
    is(999949999, "999.9 MB (999,949,999 bytes)");
    is(999950000, "1.0 GB (999,950,000 bytes)"); /* rounds into the next unit, never "1000.0 MB" */
    is(4920739232ull, "4.9 GB (4,920,739,232 bytes)");
    is(UINT64_MAX, "18446.7 PB (18,446,744,073,709,551,615 bytes)");
    char s[24];
    CU_ASSERT_STRING_EQUAL(sn_size_short(29318752, s, sizeof s), "29.3 MB");
}

static const sn_test_case cases[] = {{"sizes: decimal unit, one decimal, grouped byte count", test_sizes}};
SN_TEST_MAIN("sizefmt", cases)
