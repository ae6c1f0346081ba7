/* detect.h - decides which of sunny's template families a Hugging Face Jinja chat_template is.
 *
 * Matching is structural, not by edit distance (Ollama's template.Named uses Levenshtein < 100,
 * which misses any template with a tool block or a default system prompt). From the Jinja text we
 * read: the role/turn markers it writes (family "require"/"forbid" lists), where BOS goes
 * ("none" | "start" | "per-turn"), how a system message is handled ("turn": its own turn,
 * "first-user"/"last-user": folded into that user turn, "reject": raise_exception), and the
 * generation prompt literal, which our Go template must also produce. Every fact found becomes an
 * evidence line; things the Go template cannot express (|trim, tools, raised role errors, think
 * stripping) lower the confidence and are named. No match is an error naming the nearest family,
 * never a silent {{ .Prompt }}. */
#ifndef SN_TEMPLATES_DETECT_H
#define SN_TEMPLATES_DETECT_H
#include "templates.h"

typedef struct sn_tmpl_detection {
    const sn_tmpl_family *family;  /* NULL when not recognised */
    const sn_tmpl_family *nearest; /* best candidate (== family when recognised; may be NULL) */
    double confidence;             /* 0..1; 0 when not recognised */
    char **evidence;               /* human-readable lines, in the order found */
    size_t n_evidence;
    /* structural facts read from the Jinja */
    const char *bos;               /* "none" | "start" | "per-turn" */
    const char *system;            /* "turn" | "first-user" | "last-user" | "reject" */
    char *generation_prompt;       /* unescaped literal after add_generation_prompt, or NULL */
} sn_tmpl_detection;

/* Fills OUT (always, so callers can show the evidence) and returns SN_OK when a family matched.
 * Unrecognised: SN_EUNSUPPORTED with a message naming the nearest family and --template FILE. */
sn_status sn_tmpl_detect(const sn_tmpl_set *set, const char *jinja, sn_tmpl_detection *out,
                         sn_err *err);
void sn_tmpl_detection_free(sn_tmpl_detection *d);

#endif
