/* sizefmt.c - sizes for people (see sizefmt.h). */
#include "sizefmt.h"
#include <stdio.h>

char *sn_size_short(uint64_t bytes, char *buf, size_t cap) {
    static const char *units[] = {"kB", "MB", "GB", "TB", "PB"};
    if (bytes < 1000) {
        snprintf(buf, cap, "%llu bytes", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes / 1000.0;
    int u = 0;
    while (v >= 999.95 && u < 4) { v /= 1000.0; u++; }
    snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

char *sn_size_str(uint64_t bytes, char *buf, size_t cap) {
    if (bytes < 1000) return sn_size_short(bytes, buf, cap);
    char digits[32], grouped[40];
    const int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)bytes);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) grouped[k++] = ',';
        grouped[k++] = digits[i];
    }
    grouped[k] = 0;
    char s[24];
    snprintf(buf, cap, "%s (%s bytes)", sn_size_short(bytes, s, sizeof s), grouped);
    return buf;
}
