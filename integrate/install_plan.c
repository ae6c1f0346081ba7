/* install_plan.c - the step list of an install plan (see install_plan.h). */
#include "install_plan.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static char *vformat(const char *fmt, va_list ap) {
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

int sn_install_plan_add(sn_install_plan *p, const char *fmt, ...) {
    char **grown = realloc(p->steps, (p->n_steps + 1) * sizeof *p->steps);
    if (!grown) return -1;
    p->steps = grown;
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    if (!s) return -1;
    p->steps[p->n_steps++] = s;
    return 0;
}

int sn_install_plan_set(char **field, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    if (!s) return -1;
    free(*field);
    *field = s;
    return 0;
}

void sn_install_say(void (*fn)(void *ud, const char *text), void *ud, const char *fmt, ...) {
    if (!fn) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    if (s) fn(ud, s);
    free(s);
}

void sn_install_plan_free(sn_install_plan *p) {
    for (size_t i = 0; i < p->n_steps; i++) free(p->steps[i]);
    free(p->steps);
    free(p->preamble);
    free(p->heading);
    *p = (sn_install_plan){0};
}
