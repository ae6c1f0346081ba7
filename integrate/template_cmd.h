/* template_cmd.h - the library side of `sunny-integrate template`: find a model's Jinja
 * chat_template, pick a family only when rendering proves it (templates/prove.h: the Jinja and
 * the family's Go template give byte-identical prompts on every probe conversation; the
 * structural matcher templates/detect.h only orders the candidates) and return the Ollama Go
 * template, the stop list, the default SYSTEM it may need and the evidence, for cmd/ to print
 * and for the Modelfile writer to use.
 *
 * For cmd/sunny-integrate.c (`template (MODEL.gguf | MODEL_DIR | --jinja FILE) [--json]`):
 *     sn_template_result r;
 *     sn_err err = {0};
 *     sn_status st = sn_template_resolve(model_or_null, jinja_file_or_null, &r, &err);
 *     // st == SN_OK: print r.family, r.confidence, r.evidence[], r.template, r.stop[]
 *     //   or, with --json, puts(json = sn_template_result_json(&r)); free(json);
 *     // st == SN_EUNSUPPORTED with r.jinja set: no family is proven; err.msg and r.refusal say
 *     //   why (the first rendering difference against the nearest family, or that sunny cannot
 *     //   render the Jinja); r.evidence/r.nearest are still filled (exit 1).
 *     // other st: bad input (no such file, no chat_template, malformed JSON); err.msg says which.
 *     sn_template_result_free(&r);   // always, also after errors
 * Sources, in order: --jinja FILE ("file"); MODEL.gguf key tokenizer.chat_template ("gguf");
 * MODEL_DIR/chat_template.jinja ("chat_template.jinja"); MODEL_DIR/tokenizer_config.json
 * chat_template ("tokenizer_config"). With both a model and --jinja, the Jinja comes from the
 * file and the vocabulary (EOS/EOT/BOS, stop-token check) from the model. */
#ifndef SN_TEMPLATE_CMD_H
#define SN_TEMPLATE_CMD_H
#include "sn_err.h"
#include <stddef.h>

typedef struct sn_template_result {
    char *family;         /* detected family, NULL when not recognised */
    char *nearest;        /* nearest family (== family when recognised), may be NULL */
    double confidence;    /* 0..1 */
    char **evidence;      /* human-readable detection facts and warnings */
    size_t n_evidence;
    char *template;       /* the Ollama Go TEMPLATE text, NULL when not recognised */
    char **stop;          /* family stop strings + the model's EOS/EOT token text from its vocab */
    size_t n_stop;
    char *params_json;    /* extra Modelfile PARAMETERs as a JSON object ("{}" when none) */
    const char *source;   /* "gguf" | "tokenizer_config" | "chat_template.jinja" | "file" */
    char *source_path;    /* the file the Jinja was read from */
    char *jinja;          /* the Jinja text that was analysed */
    char *bos_token;      /* token texts from the model when known, else NULL */
    char *eos_token;
    char *eot_token;
    int add_bos;          /* the model's tokenizer adds BOS: 1, 0, or -1 unknown */
    int proved;           /* 1: family renders byte-identical to the Jinja on every probe */
    char *system;         /* default system prompt (Modelfile SYSTEM) the family needs, or NULL */
    char *refusal;        /* why no family is claimed (first difference or the Jinja's problem) */
    char *caveat;         /* a claim proven only for content without surrounding white space (the
                           * Jinja strips it, a Go template cannot): "user and assistant content
                           * without surrounding white space"; NULL for an exact claim */
} sn_template_result;

/* path_or_dir: MODEL.gguf or an HF model directory (may be NULL when jinja_file is given).
 * jinja_file: a Jinja text file overriding the model's template (may be NULL). */
sn_status sn_template_resolve(const char *path_or_dir, const char *jinja_file,
                              sn_template_result *out, sn_err *err);

/* {"family","nearest","confidence","evidence":[],"template","stop":[],"params":{},"source",
 *  "source_path","bos_token","eos_token","eot_token","add_bos"}; malloc'd, NULL on OOM. */
char *sn_template_result_json(const sn_template_result *r);

/* The GGUF's own Jinja rendered by sunny for [system (if non-NULL), user] with a generation
 * prompt: what the server's rendering of the same conversation must equal. A Go TEMPLATE leaves
 * the BOS to the tokenizer, so with keep_bos = 0 one leading BOS is removed when the tokenizer adds
 * it; a server that renders the Jinja itself keeps the BOS text the Jinja writes (keep_bos = 1).
 * *out is malloc'd. */
sn_status sn_template_render_jinja(const char *gguf, const char *system, const char *user, int keep_bos, char **out,
                                   sn_err *err);

/* After SN_EUNSUPPORTED (no family proven): fills r->family/template/stop from r->nearest anyway,
 * for an explicit --template-accept-diff. The difference stays in r->refusal. */
sn_status sn_template_use_nearest(sn_template_result *r, sn_err *err);

void sn_template_result_free(sn_template_result *r);

#endif
