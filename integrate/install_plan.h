/* install_plan.h - an install as a plan and a run, for both targets (ollama_install.h,
 * lmstudio_install.h).
 *
 * The plan step decides everything and changes nothing on the server or in the models folder (it
 * may read: probe the server's version, hash the file). It returns the steps the run would take, one
 * line each; that list is what `--dry-run` prints, and cmd/ renders it. The run step then carries
 * the plan out, or for a dry run only finishes what a dry run promises (--modelfile-out). */
#ifndef SN_INSTALL_PLAN_H
#define SN_INSTALL_PLAN_H
#include <stddef.h>

typedef struct sn_install_plan {
    char *preamble; /* shown before the steps (Ollama: the equivalent Modelfile), or NULL */
    char *heading;  /* the line introducing the steps, or NULL */
    char **steps;   /* what the run would do, one line each */
    size_t n_steps;
} sn_install_plan;

/* Appends one formatted step (preamble/heading: sn_install_plan_set). 0, or -1 out of memory. */
int sn_install_plan_add(sn_install_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replaces *field (p->preamble or p->heading) with the formatted text. 0, or -1 out of memory. */
int sn_install_plan_set(char **field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sn_install_plan_free(sn_install_plan *p);

/* A status line of an install job: formatted (at any length) and handed to fn; nothing when fn is
 * NULL or out of memory. */
void sn_install_say(void (*fn)(void *ud, const char *text), void *ud, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
