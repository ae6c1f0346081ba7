/* sn_err.h - status codes and the error record every library function fills.
 *
 * Libraries never print and never exit: they return an sn_status (0 ok, negative error) and describe
 * the failure in a caller-provided sn_err, naming the file, the field and the byte offset when the
 * cause is bad input. Only cmd/ turns these into messages and exit codes. */
#ifndef SN_ERR_H
#define SN_ERR_H
#include <stdint.h>

typedef int32_t sn_status;
enum {
    SN_OK = 0,
    SN_EINVAL = -1,      /* bad argument from the caller */
    SN_ENOMEM = -2,
    SN_EIO = -3,         /* open/read/write/mmap/network failure */
    SN_EFORMAT = -4,     /* malformed input file */
    SN_EUNSUPPORTED = -5 /* valid input we do not implement (arch, dtype, tensor type) */
};

typedef struct sn_err {
    sn_status code;
    int32_t detail; /* a machine-readable sub-code the module that failed defines (0: none), for
                     * callers that act on a particular failure: never match msg's words */
    char msg[1024];
} sn_err;

/* Sets err (if non-NULL; detail = 0) and returns code, so callers can write `return sn_err_set(err, ...)`. */
sn_status sn_err_set(sn_err *err, sn_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "context: " to an existing message (e.g. the file name) and returns err->code. */
sn_status sn_err_prefix(sn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* sn_err_set with a module's sub-code in err->detail. */
sn_status sn_err_set_detail(sn_err *err, sn_status code, int32_t detail, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *sn_status_str(sn_status code);

#endif
