/* num.h - numbers from untrusted text (JSON) into C integers without undefined behaviour: a cast
 * of a double that is NaN, infinite or outside the target type is undefined in C (UBSan reports
 * it), so every JSON integer goes through here. */
#ifndef SN_NUM_H
#define SN_NUM_H
#include <stdint.h>

/* 1 and *out = d when d is a whole number in [lo, hi], else 0. */
static inline int sn_f64_to_i64(double d, int64_t lo, int64_t hi, int64_t *out) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return 0; /* NaN, inf, range */
    const int64_t i = (int64_t)d;
    if ((double)i != d || i < lo || i > hi) return 0;
    *out = i;
    return 1;
}

#endif
