/* jinja.h - a Jinja2 interpreter for Hugging Face chat templates, so sunny can render a model's own
 * chat_template itself (no Python) and prove a Go template equal to it by comparing prompts.
 *
 * Semantics are jinja2 3.x as transformers' apply_chat_template configures it: a sandboxed,
 * immutable environment (list.append and friends raise), trim_blocks and lstrip_blocks on,
 * loop controls (break/continue), undefined values that are falsy and render empty, HF's own
 * tojson (json.dumps with ensure_ascii=False, optional indent/separators/sort_keys) and the
 * globals raise_exception(msg) and strftime_now(fmt). Variables come in as one cJSON object
 * (messages, tools, add_generation_prompt, bos_token, ...).
 *
 * Outcomes of sn_jinja_render:
 *   SN_OK            rendered; *out is malloc'd and NUL-terminated.
 *   SN_JINJA_RAISED  the template itself failed the way jinja2 would fail (raise_exception, an
 *                    undefined attribute, a type error); err->msg says what and where.
 *   SN_EUNSUPPORTED  "cannot render: <construct> at line:col" - something this interpreter does
 *                    not implement, or a step / recursion / output limit. Never a guess.
 * Nothing here prints, exits or aborts on any input. */
#ifndef SN_JINJA_H
#define SN_JINJA_H
#include "sn_err.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define SN_JINJA_RAISED SN_EFORMAT

typedef struct sn_jinja sn_jinja; /* a parsed template */

/* Parses SRC (LEN bytes). Syntax errors are SN_JINJA_RAISED (jinja2 would raise
 * TemplateSyntaxError); constructs we do not implement are SN_EUNSUPPORTED. */
sn_status sn_jinja_parse(const char *src, size_t len, sn_jinja **out, sn_err *err);
void sn_jinja_free(sn_jinja *t);

typedef struct sn_jinja_opts {
    int64_t now;         /* seconds since the epoch for strftime_now (local time); < 0: real clock */
    uint64_t max_steps;  /* 0: default (20 million evaluation steps) */
    size_t max_output;   /* 0: default (16 MiB) */
    size_t max_memory;   /* 0: default (256 MiB of values) */
} sn_jinja_opts;

/* Renders T with the variables of the JSON object VARS (may be NULL). opts may be NULL. */
sn_status sn_jinja_render(const sn_jinja *t, const cJSON *vars, const sn_jinja_opts *opts,
                          char **out, size_t *out_len, sn_err *err);

#endif
