/* ollama_doctor.h - `sunny-integrate doctor --model NAME | --all`: what is wrong with a model already
 * in Ollama, installed by anyone, read from /api/show (and /api/tags for --all), each problem with
 * its fix:
 *   template   no TEMPLATE, so the server falls back to "{{ .Prompt }}" (<= 0.24, or a GGUF without a
 *              chat template): raw text, no chat turns - gibberish, no end;
 *   render     a TEMPLATE that renders differently from the GGUF's own Jinja on sunny's probe
 *              conversations (templates/prove.h), with the probe and the first differing bytes;
 *   stop       no stop, or one missing the template's end of turn (the proven family's stops);
 *   param      a PARAMETER of the wrong type (a string where Ollama's api.Options wants a number,
 *              bool or list), which makes every request fail;
 *   arch       an architecture the server's llama.cpp cannot load (load probe: an empty-prompt
 *              generate, which only loads; --model only - loading every model of --all is costly).
 * The GGUF is read from the blob path /api/show's Modelfile names (FROM), when it is readable here;
 * otherwise the template/render/stop checks say they were not run.
 * --fix re-creates the model from that blob (sn_ollama_install: the blob is already on the server,
 * so nothing is uploaded; the create names it by digest) with the proven TEMPLATE and stops, the
 * parameters retyped, SYSTEM and LICENSE kept, and proves it with the smoke gate; a dry run prints
 * the new Modelfile and sends nothing that changes the server. */
#ifndef SN_OLLAMA_DOCTOR_H
#define SN_OLLAMA_DOCTOR_H
#include "ollama_install.h"
#include "sn_env.h"
#include "sn_err.h"
#include <cjson/cJSON.h>

typedef struct sn_ollama_doctor_opts {
    const char *host;  /* or NULL: env's OLLAMA_HOST, else Ollama's default */
    const sn_env *env;
    const char *model; /* one model, or NULL with all */
    int all;           /* every model /api/tags lists, one line each (no load probe) */
    int fix, dry_run;  /* --fix: re-create what has problems; with dry_run only show the Modelfile */
    int n_predict;     /* smoke gate after --fix */
    int64_t seed, ctx;
    const char *prompt;
    int n_threads;
} sn_ollama_doctor_opts;

/* Diagnoses (and with fix, repairs) the models. *report: {"host","version","models":[{"model",
 * "blob","arch","problems":[{"check","problem","fix"}],"notes":[...],"clean_reason",
 * "fixed"?}]}; *n_problems the problems found before any fix; *n_unfixed those a fix left (or all
 * of them without fix). Errors only when the server cannot be asked at all. */
sn_status sn_ollama_doctor_models(const sn_ollama_doctor_opts *o, const sn_ollama_install_cb *cb, cJSON **report,
                                  int *n_problems, int *n_unfixed, sn_err *err);

#endif
