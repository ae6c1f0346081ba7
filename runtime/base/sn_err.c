/* sn_err.c - filling sn_err records (see sn_err.h). */
#include "sn_err.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static sn_status vset(sn_err *err, sn_status code, int32_t detail, const char *fmt, va_list ap) {
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        err->code = code;
        err->detail = detail;
    }
    return code;
}

sn_status sn_err_set(sn_err *err, sn_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

sn_status sn_err_set_detail(sn_err *err, sn_status code, int32_t detail, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, detail, fmt, ap);
    va_end(ap);
    return code;
}

sn_status sn_err_prefix(sn_err *err, const char *fmt, ...) {
    if (!err) return SN_EINVAL;
    char pre[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t np = strlen(pre), no = strnlen(old, sizeof old - 1), cap = sizeof err->msg - 1;
    if (np > cap) np = cap;
    memcpy(err->msg, pre, np);
    size_t k = np;
    for (const char *sep = ": "; *sep && k < cap; sep++) err->msg[k++] = *sep;
    if (no > cap - k) no = cap - k;
    memcpy(err->msg + k, old, no);
    err->msg[k + no] = 0;
    return err->code;
}

const char *sn_status_str(sn_status code) {
    switch (code) {
    case SN_OK: return "ok";
    case SN_EINVAL: return "invalid argument";
    case SN_ENOMEM: return "out of memory";
    case SN_EIO: return "I/O error";
    case SN_EFORMAT: return "malformed input";
    case SN_EUNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}
