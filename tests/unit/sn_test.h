/* sn_test.h - the tiny harness every CUnit test file uses.
 *
 * A test file lists its cases and ends with SN_TEST_MAIN("suite", cases). The program runs the suite
 * with CUnit's basic interface (verbose), prints CUnit's summary and exits non-zero on any failure so
 * ctest sees it. SN_SRC (set by ctest) points at the source tree for fixtures. The SN_* tuning knobs of
 * the environment (cmd/env.h) make sn_test_tuning(), the tuning the tests build kernels and models
 * with, as the programs do. */
#ifndef SN_TEST_H
#define SN_TEST_H
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "env.h"
#include "kernels.h"

typedef struct { const char *name; void (*fn)(void); } sn_test_case;

/* xorshift64 (13, 7, 17): the reproducible random source of the unit tests; each file keeps its
 * own state and takes the bits it wants from the result. */
static inline uint64_t sn_test_xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline const char *sn_test_src(void) {
    const char *s = getenv("SN_SRC");
    return s ? s : "..";
}

/* The environment's tuning (SN_CPU, SN_GGML_LANES, ...), read once. */
static inline const sn_tuning *sn_test_tuning(void) {
    static sn_cli_env env;
    static int read;
    if (!read) {
        sn_cli_read_env(&env);
        sn_tuning_settle(&env.tuning);
        read = 1;
    }
    return &env.tuning;
}
/* The kernel object of that tuning at a level (0 scalar, 1 AVX2, 2 AVX-512; NULL where this CPU
 * cannot), or at the best level it allows (-1). */
static inline const sn_kernels *sn_test_kernels(int level) {
    return level < 0 ? sn_kernels_for(sn_test_tuning()) : sn_kernels_at(sn_test_tuning(), level);
}

static inline int sn_test_run(const char *suite_name, const sn_test_case *cases, size_t n) {
    (void)sn_test_tuning();
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    CU_pSuite s = CU_add_suite(suite_name, NULL, NULL);
    for (size_t i = 0; i < n; i++) CU_add_test(s, cases[i].name, cases[i].fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures() ? 1u : 0u;
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

#define SN_TEST_MAIN(suite, cases) \
    int main(void) { return sn_test_run(suite, cases, sizeof(cases) / sizeof(cases[0])); }

#endif
