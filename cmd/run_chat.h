/* run_chat.h - sunny-run's conversation mode (-cnv, and the default when the GGUF has a chat
 * template and no prompt is given, as llama-cli does): each line read from stdin is a user turn,
 * rendered with the other turns through the model's own chat template (templates/ Jinja) and
 * answered by the model. */
#ifndef SN_RUN_CHAT_H
#define SN_RUN_CHAT_H
#include "model.h"
#include "sampler.h"
#include <stdint.h>

typedef struct {
    const char *model;
    const char *system;    /* -sys: a system message first, or NULL */
    int64_t n_predict;     /* per reply; < 0: until end-of-generation or the context's end */
    sn_model_params mp;    /* with the context size */
    sn_sampler_params sp;  /* with the penalties */
} sn_chat_opts;

/* 1 if the model file carries tokenizer.chat_template (0 also when it cannot be read). */
int sn_chat_has_template(const char *model);
/* Runs the conversation until stdin ends; returns the exit code. */
int sn_chat_run(const sn_chat_opts *o);

#endif
