/* gotmpl.h - renders an Ollama TEMPLATE (Go text/template) the way Ollama's server does, so sunny
 * can compare it with the model's Jinja without Go. Covers what sunny's own family templates
 * (templates/data/ *.gotmpl) use: text and {{- -}} trimming, comments, if / else if / else, range
 * (with $i, $m :=), with, variables (:= and =), $ and field chains, string / number / bool
 * literals, parenthesised pipelines and |, and the functions eq ne lt le gt ge and or not len
 * slice index. Anything else is SN_EUNSUPPORTED "cannot render: ..." (the caller then makes no
 * claim), never a guess. tests/tools/render_go (Go's own text/template) is the oracle.
 *
 * Ollama's semantics on top (template/template.go Execute): consecutive messages of one role are
 * merged with "\n\n" and every system content joined into .System; a template that mentions
 * .Messages is executed once with .Messages/.System/.Tools/.Think/.IsThinkSet; otherwise it runs
 * once per (system, prompt, response) turn and the last turn stops at the first .Response; a
 * template that mentions neither .Messages nor .Response gets {{ .Response }} appended; a default
 * system prompt (Modelfile SYSTEM) is prepended when the conversation does not start with one. */
#ifndef SN_GOTMPL_H
#define SN_GOTMPL_H
#include "sn_err.h"
#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct sn_gotmpl sn_gotmpl;

sn_status sn_gotmpl_parse(const char *src, size_t len, sn_gotmpl **out, sn_err *err);
void sn_gotmpl_free(sn_gotmpl *t);

/* messages: JSON array of {"role","content"}; tools: array or NULL; think: -1 not set, 0, 1;
 * default_system: Modelfile SYSTEM or NULL. *out is malloc'd. */
sn_status sn_gotmpl_render_chat(const sn_gotmpl *t, const cJSON *messages, const cJSON *tools,
                                int think, const char *default_system, char **out, sn_err *err);

#endif
