/* templates.h - sunny's chat-template families as data.
 *
 * Each family is a pair of files in templates/data/, embedded into the library at build time
 * (templates/embed.cmake) so the programs work without the source tree:
 *   <family>.gotmpl  an Ollama TEMPLATE (Go text/template, Ollama's .Messages/.System/.Prompt/
 *                    .Response semantics) proven equal to the family's Jinja by
 *                    tests/integration/test_templates_render.sh;
 *   <family>.json    {"family", "description", "stop": [...], "params": {...}, "add_bos": bool,
 *                     "detect": {"require": [...], "forbid": [...], "bos": [...], "system": [...],
 *                     "system_any": [...], "raw": bool}} - stop strings as
 *                    they appear in the model's vocab, extra Modelfile PARAMETERs, whether the
 *                    tokenizer (not the template) supplies BOS, and the markers detect.c matches.
 * Adding a family means adding the two files (and a Jinja + a row in the render test). */
#ifndef SN_TEMPLATES_H
#define SN_TEMPLATES_H
#include "sn_err.h"
#include <stddef.h>

/* One embedded file; the table ends with {0}. data is NUL-terminated, len excludes the NUL. */
struct sn_embedded_file { const char *name; const char *data; size_t len; };
extern const struct sn_embedded_file sn_templates_files[];

/* Returns the embedded file NAME (e.g. "chatml.gotmpl") or NULL. */
const char *sn_tmpl_embedded(const char *name, size_t *len);

typedef struct sn_tmpl_family {
    char *name;
    char *description;
    const char *gotmpl;  /* embedded, NUL-terminated */
    char **stop;
    size_t n_stop;
    char *params_json;   /* the "params" object, serialised ("{}" when empty) */
    int add_bos;         /* the tokenizer adds BOS; the template must not emit it */
    char **require;      /* detection: all must occur in the Jinja */
    size_t n_require;
    char **forbid;       /* detection: none may occur */
    size_t n_forbid;
    char **bos;          /* detection: allowed BOS placements: "none" | "start" | "per-turn" */
    size_t n_bos;
    char **system;       /* detection: allowed system handling: "turn" | "first-user" |
                          * "last-user" | "reject" (see detect.h) */
    size_t n_system;
    char **system_any;   /* detection: when system is "turn", one of these must occur ("ROLE" = a
                          * role written generically, e.g. "<|im_start|>ROLE") */
    size_t n_system_any;
    int raw;             /* detection: plain concatenation of contents */
} sn_tmpl_family;

typedef struct sn_tmpl_set sn_tmpl_set;

/* Parses every embedded <family>.json/.gotmpl pair. Families are ordered by name. */
sn_status sn_tmpl_load(sn_tmpl_set **out, sn_err *err);
void sn_tmpl_set_free(sn_tmpl_set *s);
size_t sn_tmpl_count(const sn_tmpl_set *s);
const sn_tmpl_family *sn_tmpl_at(const sn_tmpl_set *s, size_t i);
const sn_tmpl_family *sn_tmpl_find(const sn_tmpl_set *s, const char *name); /* NULL if absent */

#endif
