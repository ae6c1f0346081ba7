/* lmstudio_doctor.c - doctor --lmstudio PATH [--fix [--dry-run]] (see lmstudio.h).
 *
 * LM Studio takes a model's chat template from the GGUF's tokenizer.chat_template and ends generation
 * at llama.cpp's end-of-generation tokens; its per-model overrides live in the app's internal files,
 * which sunny never writes. So --fix repairs the GGUF itself: a chat template from the model's HF
 * folder (--from) or a file (--jinja), and tokenizer.ggml.eot_token_id when the template's end of turn
 * is not an end-of-generation token. The new file is renamed over PATH and proven on the server: the
 * smoke gate plus one chat turn rendered by the server against sunny's rendering of the same Jinja. */
#include "lmstudio_install.h"
#include "lmstudio_internal.h"

#include "gguf.h"
#include "jinja.h"
#include "modelinfo.h"
#include "outfile.h"
#include "template_cmd.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define dnote(o, ...) sn_lms_notef((o)->note, (o)->ud, __VA_ARGS__)

/* llama.cpp's end-of-generation tokens by text (llama-vocab.cpp, vocabulary load), besides the
 * tokens named by tokenizer.ggml.eos/eot/eom_token_id */
static const char *const EOG_TEXT[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>", "[e~["};
static const char *const EOG_KEYS[] = {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                       "tokenizer.ggml.eom_token_id"};

typedef struct {
    const sn_gguf *g;
    int64_t tok, type; /* KV indices: tokenizer.ggml.tokens, tokenizer.ggml.token_type (-1: none) */
    uint64_t n;
} vocab;

static int vocab_open(const sn_gguf *g, vocab *v) {
    v->g = g;
    v->tok = sn_gguf_find_key(g, "tokenizer.ggml.tokens");
    v->type = sn_gguf_find_key(g, "tokenizer.ggml.token_type");
    if (v->tok < 0 || sn_gguf_kv_type(g, v->tok) != SN_GGUF_ARR || sn_gguf_arr_type(g, v->tok) != SN_GGUF_STR) return 0;
    v->n = sn_gguf_arr_n(g, v->tok);
    if (v->type >= 0 && (sn_gguf_kv_type(g, v->type) != SN_GGUF_ARR || sn_gguf_arr_type(g, v->type) != SN_GGUF_I32 ||
                         sn_gguf_arr_n(g, v->type) != v->n))
        v->type = -1;
    return 1;
}

static int tok_type(const vocab *v, uint64_t id) {
    if (v->type < 0) return 0;
    int32_t t;
    memcpy(&t, (const char *)sn_gguf_arr_data(v->g, v->type) + 4 * id, 4);
    return t;
}

static int64_t id_of_kv(const sn_gguf *g, const char *key) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return -1;
    if (sn_gguf_kv_type(g, i) == SN_GGUF_U32) return sn_gguf_get_u32(g, i);
    if (sn_gguf_kv_type(g, i) == SN_GGUF_I32) return sn_gguf_get_i32(g, i);
    return -1;
}

static char *tok_text(const vocab *v, int64_t id) {
    if (id < 0 || (uint64_t)id >= v->n) return NULL;
    sn_gguf_str s = sn_gguf_arr_str(v->g, v->tok, (uint64_t)id);
    return strndup(s.ptr, s.len);
}

static int is_eog(const vocab *v, uint64_t id) {
    for (size_t k = 0; k < sizeof EOG_KEYS / sizeof EOG_KEYS[0]; k++)
        if (id_of_kv(v->g, EOG_KEYS[k]) == (int64_t)id) return 1;
    sn_gguf_str s = sn_gguf_arr_str(v->g, v->tok, id);
    for (size_t k = 0; k < sizeof EOG_TEXT / sizeof EOG_TEXT[0]; k++)
        if (s.len == strlen(EOG_TEXT[k]) && memcmp(s.ptr, EOG_TEXT[k], s.len) == 0) return 1;
    return 0;
}

/* What follows an assistant reply in the rendered template. */
enum { END_UNKNOWN = -1, END_TEXT = 0, END_EOG = 1, END_NOT_EOG = 2, END_FOREIGN = 3 };
typedef struct {
    int kind;
    uint64_t id;     /* END_EOG / END_NOT_EOG: the token */
    char text[128];  /* the token or marker text, the plain text, or why it was not rendered */
} turn_end;

#define REPLY_MARK "SunnyDoctorReply"

static void turn_end_of(const vocab *v, const char *jinja, turn_end *te) {
    memset(te, 0, sizeof *te);
    te->kind = END_UNKNOWN;
    char *bos = tok_text(v, id_of_kv(v->g, "tokenizer.ggml.bos_token_id"));
    char *eos = tok_text(v, id_of_kv(v->g, "tokenizer.ggml.eos_token_id"));
    sn_jinja *t = NULL;
    sn_err e = {0};
    char *out = NULL;
    cJSON *vars = cJSON_CreateObject();
    cJSON *msgs = cJSON_AddArrayToObject(vars, "messages");
    const char *role[2] = {"user", "assistant"}, *content[2] = {"Hello", REPLY_MARK};
    for (int i = 0; i < 2; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", role[i]);
        cJSON_AddStringToObject(m, "content", content[i]);
        cJSON_AddItemToArray(msgs, m);
    }
    cJSON_AddFalseToObject(vars, "add_generation_prompt");
    cJSON_AddStringToObject(vars, "bos_token", bos ? bos : "");
    cJSON_AddStringToObject(vars, "eos_token", eos ? eos : "");
    if (sn_jinja_parse(jinja, strlen(jinja), &t, &e) || sn_jinja_render(t, vars, NULL, &out, NULL, &e)) {
        snprintf(te->text, sizeof te->text, "%s", e.msg);
        goto done;
    }
    const char *s = strstr(out, REPLY_MARK);
    if (!s) {
        snprintf(te->text, sizeof te->text, "the assistant's reply does not appear in the rendering");
        goto done;
    }
    s += strlen(REPLY_MARK);
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
    /* the longest special token the rest starts with (control or user-defined; any token when the
     * GGUF has no token types) */
    uint64_t best = 0, best_len = 0;
    for (uint64_t i = 0; i < v->n; i++) {
        int ty = tok_type(v, i);
        if (v->type >= 0 && ty != 3 && ty != 4) continue;
        sn_gguf_str ts = sn_gguf_arr_str(v->g, v->tok, i);
        if (ts.len > best_len && ts.len >= 2 && strncmp(s, ts.ptr, ts.len) == 0) best = i, best_len = ts.len;
    }
    if (best_len) {
        te->kind = is_eog(v, best) ? END_EOG : END_NOT_EOG;
        te->id = best;
        snprintf(te->text, sizeof te->text, "%.*s", (int)(best_len < 100 ? best_len : 100), s);
    } else if ((*s == '<' || *s == '[') && strcspn(s, ">]") < 48 && s[strcspn(s, ">]")]) {
        te->kind = END_FOREIGN;
        snprintf(te->text, sizeof te->text, "%.*s", (int)strcspn(s, ">]") + 1, s);
    } else {
        te->kind = END_TEXT;
        size_t k = 0;
        for (const char *c = s; *c && k + 4 < sizeof te->text && c < s + 24; c++) {
            if (*c == '\n') te->text[k++] = '\\', te->text[k++] = 'n';
            else te->text[k++] = *c;
        }
        te->text[k] = 0;
    }
done:
    cJSON_Delete(vars);
    sn_jinja_free(t);
    free(out);
    free(bos);
    free(eos);
}

typedef struct {
    int problems;
    int unfixable;   /* problems --fix does not touch (architecture, kind of file, place, unreadable) */
    int need_jinja;  /* no template, one LM Studio rejects, or another family's */
    int64_t eot_fix; /* >= 0: tokenizer.ggml.eot_token_id should name this token */
    char eot_text[128];
} lms_diag;

/* The template's end of turn against the vocabulary (the GGUF at path). */
static void check_turn_end(const sn_lms_doctor_opts *o, const char *path, const char *jinja, lms_diag *d) {
    sn_gguf *g = NULL;
    sn_err e = {0};
    vocab v;
    if (sn_gguf_open(path, SN_GGUF_NO_DATA, &g, &e) || !vocab_open(g, &v)) {
        dnote(o, "note: no vocabulary to check the template's end of turn against%s%s", e.msg[0] ? ": " : "", e.msg);
        sn_gguf_close(g);
        return;
    }
    turn_end te;
    turn_end_of(&v, jinja, &te);
    switch (te.kind) {
    case END_UNKNOWN:
        dnote(o, "note: sunny cannot render the chat template to find its end of turn: %s", te.text);
        break;
    case END_TEXT:
        dnote(o, "note: an assistant turn ends with plain text (\"%s\"), no special token: LM Studio stops there only "
             "at the model's end of generation or at stop strings set in My Models", te.text);
        break;
    case END_EOG:
        dnote(o, "note: an assistant turn ends with %s (token %llu), an end-of-generation token for llama.cpp",
             te.text, (unsigned long long)te.id);
        break;
    case END_NOT_EOG:
        dnote(o, "problem: the chat template ends an assistant turn with %s (token %llu), which llama.cpp does not "
             "treat as end of generation (not tokenizer.ggml.eos/eot/eom_token_id, not one of its built-in names): "
             "in LM Studio answers never stop at the end of the turn", te.text, (unsigned long long)te.id);
        dnote(o, "  fix: sunny-integrate doctor --lmstudio PATH --fix (tokenizer.ggml.eot_token_id = %llu)",
             (unsigned long long)te.id);
        d->problems++;
        d->eot_fix = (int64_t)te.id;
        snprintf(d->eot_text, sizeof d->eot_text, "%s", te.text);
        break;
    case END_FOREIGN:
        dnote(o, "problem: the chat template writes %s after an assistant turn, which is not a token of this model: "
             "a template of another family (the marker reaches the model as plain text, no turn ever ends)", te.text);
        dnote(o, "  fix: sunny-integrate doctor --lmstudio PATH --fix --from MODEL_DIR (the model's own "
             "tokenizer_config.json or chat_template.jinja) or --jinja FILE");
        d->problems++;
        d->need_jinja = 1;
        break;
    }
    sn_gguf_close(g);
}

static void diagnose(const sn_lms_doctor_opts *o, const char *path, lms_diag *d) {
    memset(d, 0, sizeof *d);
    d->eot_fix = -1;
    sn_modelinfo mi;
    sn_err err = {0};
    if (sn_modelinfo_read(path, &mi, &err) != SN_OK) {
        dnote(o, "problem: %s", err.msg);
        dnote(o, "  fix: re-create the file (sunny-convert, or download it again); LM Studio cannot load it either");
        d->problems = d->unfixable = 1;
        return;
    }
    if (!sn_modelinfo_arch_known(mi.arch)) {
        dnote(o, "problem: architecture '%s' is unknown to llama.cpp (\"unknown model architecture\")", mi.arch);
        dnote(o, "  fix: an LM Studio runtime (llama.cpp engine) new enough to know it");
        d->problems++, d->unfixable++;
    }
    if (!strcmp(mi.general_type, "mmproj") || !strcmp(mi.general_type, "adapter")) {
        dnote(o, "problem: a %s GGUF, not a model: LM Studio lists it but cannot chat with it", mi.general_type);
        dnote(o, "  fix: place it beside its model (sunny-integrate lmstudio MODEL --mmproj FILE)");
        d->problems++, d->unfixable++;
    }
    if (!mi.chat_template) {
        dnote(o, "problem: no tokenizer.chat_template: LM Studio falls back to a generic Instruct:/Human:/AI: format, "
             "chat will be poor (raw completions are unaffected)");
        dnote(o, "  fix: sunny-integrate doctor --lmstudio PATH --fix --from MODEL_DIR (the instruct model's "
             "tokenizer_config.json or chat_template.jinja) or --jinja FILE");
        d->problems++;
        d->need_jinja = 1;
    } else {
        int k = sn_lms_check_jinja(mi.chat_template, o->note, o->ud);
        if (k) {
            dnote(o, "  fix: sunny-integrate doctor --lmstudio PATH --fix --jinja FILE with a template LM Studio renders "
                 "(or override it in My Models)");
            d->need_jinja = 1;
        }
        d->problems += k;
        if (!k) check_turn_end(o, path, mi.chat_template, d);
        /* gpt-oss's harmony Jinja raises on a tool-call turn that carries both reply and reasoning */
        if (strstr(mi.chat_template, "Cannot pass both content and thinking"))
            dnote(o, "note: a harmony (gpt-oss) template: it raises \"Cannot pass both content and thinking in an "
                 "assistant message with tool calls!\" when a conversation sends back an assistant tool-call turn "
                 "with both its text and its reasoning, which LM Studio shows as \"Error rendering prompt with jinja "
                 "template\" after some turns with tools (lmstudio-bug-tracker #842). The file is fine: the client "
                 "must keep one of the two in such turns (or start a new chat)");
    }
    if (o->models_dir) { /* My Models lists <models>/<publisher>/<repo>/<file>.gguf */
        char rm[PATH_MAX], rp[PATH_MAX], dir[PATH_MAX];
        const char *sl = strrchr(path, '/'); /* the folder resolved, not the file: a symlinked placement counts */
        snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - path) : 1, sl ? path : ".");
        if (realpath(o->models_dir, rm) && realpath(dir, rp) && strlen(rp) + strlen(sl ? sl : path) + 2 < sizeof rp) {
            strcat(rp, "/");
            strcat(rp, sl ? sl + 1 : path);
            size_t l = strlen(rm);
            const char *rel = strncmp(rp, rm, l) == 0 && rp[l] == '/' ? rp + l + 1 : NULL;
            int depth = 0;
            for (const char *c = rel; c && *c; c++) depth += *c == '/';
            if (!rel || depth != 2) {
                dnote(o, "problem: %s is not at <models>/<publisher>/<repo>/<file>.gguf under %s, so My Models does "
                     "not list it", path, rm);
                dnote(o, "  fix: sunny-integrate lmstudio %s (places it there)", path);
                d->problems++, d->unfixable++;
            }
        }
    }
    if (d->problems == 0)
        dnote(o, "clean: %s (%s, %s): a GGUF llama.cpp knows, with a chat template LM Studio can render and an end "
             "of turn that ends generation%s", path, mi.arch, mi.quant, o->models_dir ? ", listed under the models dir" : "");
    sn_modelinfo_free(&mi);
}

/* The GGUF at path rewritten with the new template and/or end-of-turn id into a temp file beside it,
 * renamed over it. */
static sn_status rewrite(const sn_lms_doctor_opts *o, const char *jinja, int64_t eot, sn_err *err) {
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(o->path, 0, &g, err);
    if (st) return st;
    char *tmp = NULL;
    sn_gguf_writer *w = sn_gguf_writer_new();
    if (!w) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    else if (sn_gguf_find_key(g, "split.count") >= 0) /* guard: the caller refuses split models first */
        st = sn_err_set(err, SN_EUNSUPPORTED, "%s: a split model", o->path);
    for (int64_t i = 0; st == SN_OK && i < sn_gguf_n_kv(g); i++) st = sn_gguf_writer_copy_kv(w, g, i);
    if (st == SN_OK && jinja) st = sn_gguf_writer_set_str(w, "tokenizer.chat_template", jinja);
    if (st == SN_OK && eot >= 0) st = sn_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", (uint32_t)eot);
    if (st && !err->msg[0]) sn_err_set(err, st, "%s: cannot set the metadata", o->path);
    for (int64_t i = 0; st == SN_OK && i < sn_gguf_n_tensors(g); i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        sn_status r = sn_gguf_writer_add_tensor(w, t->name, t->n_dims, t->ne, t->type, err);
        if (r < 0) st = r;
    }
    int fd = st == SN_OK ? sn_tmp_create(o->path, "", &tmp, err) : -1;
    if (st == SN_OK && fd < 0) st = SN_EIO;
    if (st == SN_OK) st = sn_gguf_writer_begin_fd(w, fd, tmp, err);
    for (int64_t i = 0; st == SN_OK && i < sn_gguf_n_tensors(g); i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        st = sn_gguf_writer_write(w, t->data, t->size, err);
        if (st == SN_OK) st = sn_gguf_writer_end_tensor(w, err);
    }
    if (st == SN_OK) st = sn_gguf_writer_finish(w, err);
    struct stat sb;
    if (st == SN_OK && stat(o->path, &sb) == 0 && sb.st_nlink > 1)
        dnote(o, "note: %s has %ju names (a hard-linked placement): the repaired file takes this name only, the "
             "others keep the old bytes", o->path, (uintmax_t)sb.st_nlink);
    if (st == SN_OK && rename(tmp, o->path) != 0)
        st = sn_err_set(err, SN_EIO, "%s: cannot rename to %s: %s", tmp, o->path, strerror(errno));
    if (st && tmp) unlink(tmp);
    free(tmp);
    sn_gguf_writer_free(w);
    sn_gguf_close(g);
    return st;
}

/* The template --fix writes: from --jinja FILE or the --from folder, refused when LM Studio cannot
 * render it or it does not fit the model's vocabulary. */
static sn_status new_template(const sn_lms_doctor_opts *o, char **jinja, int64_t *eot, sn_err *err) {
    *jinja = NULL;
    sn_template_result r = {0};
    sn_status st = sn_template_resolve(o->from_dir, o->jinja_file, &r, err);
    if ((st == SN_OK || st == SN_EUNSUPPORTED) && r.jinja) {
        st = SN_OK;
        dnote(o, "template: %s (%s)", r.source_path ? r.source_path : "?", r.source ? r.source : "?");
        *jinja = strdup(r.jinja);
        if (!*jinja) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    sn_template_result_free(&r);
    if (st) return st;
    if (sn_lms_check_jinja(*jinja, o->note, o->ud))
        return sn_err_set(err, SN_EINVAL, "the template from %s uses constructs LM Studio rejects (above)",
                          o->jinja_file ? o->jinja_file : o->from_dir);
    sn_gguf *g = NULL;
    vocab v;
    if ((st = sn_gguf_open(o->path, SN_GGUF_NO_DATA, &g, err))) return st;
    if (vocab_open(g, &v)) {
        turn_end te;
        turn_end_of(&v, *jinja, &te);
        if (te.kind == END_FOREIGN || te.kind == END_UNKNOWN)
            st = sn_err_set(err, SN_EINVAL, "the template from %s does not fit this model either: %s%s",
                            o->jinja_file ? o->jinja_file : o->from_dir, te.text,
                            te.kind == END_FOREIGN ? " after an assistant turn is not one of its tokens" : "");
        else if (te.kind == END_NOT_EOG) *eot = (int64_t)te.id;
    }
    sn_gguf_close(g);
    return st;
}

/* The placement LM Studio indexes (publisher/repo/file under the models dir), for loading it. */
static int placed_of(const sn_lms_doctor_opts *o, sn_lms_placed *pl) {
    memset(pl, 0, sizeof *pl);
    char rm[PATH_MAX], rp[PATH_MAX];
    if (!o->models_dir || !realpath(o->models_dir, rm) || !realpath(o->path, rp)) return 0;
    size_t l = strlen(rm);
    if (strncmp(rp, rm, l) != 0 || rp[l] != '/') return 0;
    snprintf(pl->rel_path, sizeof pl->rel_path, "%s", rp + l + 1);
    if (sscanf(pl->rel_path, "%127[^/]/%127[^/]/", pl->publisher, pl->repo) != 2) return 0;
    snprintf(pl->target, sizeof pl->target, "%s", o->path);
    sn_modelinfo mi;
    sn_err e = {0};
    if (sn_modelinfo_read(o->path, &mi, &e) != SN_OK) return 0;
    snprintf(pl->arch, sizeof pl->arch, "%s", mi.arch);
    snprintf(pl->quant, sizeof pl->quant, "%s", mi.quant);
    sn_modelinfo_free(&mi);
    pl->n_files = 1;
    return 1;
}

static void say_note(void *ud, const char *text) {
    const sn_lms_doctor_opts *o = ud;
    if (o->note) o->note(o->ud, text);
}

int sn_lms_doctor(const sn_lms_doctor_opts *o, int *found) {
    lms_diag d;
    diagnose(o, o->path, &d);
    *found = d.problems;
    if (!o->fix || d.problems == 0) return d.problems;
    if (d.problems == d.unfixable) {
        dnote(o, "fix: nothing --fix can repair (each fix above is a step of its own)");
        return d.problems;
    }
    char *jinja = NULL;
    int64_t eot = d.eot_fix;
    sn_err err = {0};
    sn_status st = SN_OK;
    sn_modelinfo mi;
    if (sn_modelinfo_read(o->path, &mi, &err) == SN_OK) {
        if (mi.split_count > 1)
            st = sn_err_set(&err, SN_EUNSUPPORTED, "%s is part 1 of a split model: --fix rewrites one file; convert "
                            "the model again with the template (sunny-convert MODEL_DIR --split-max-size ...)", o->path);
        sn_modelinfo_free(&mi);
    }
    if (st == SN_OK && d.need_jinja && !o->jinja_file && !o->from_dir)
        st = sn_err_set(&err, SN_EINVAL, "the chat template needs a source: --from MODEL_DIR (tokenizer_config.json "
                        "or chat_template.jinja) or --jinja FILE");
    else if (st == SN_OK && (d.need_jinja || o->jinja_file || o->from_dir))
        st = new_template(o, &jinja, &eot, &err);
    if (st == SN_OK && !jinja && eot < 0) st = sn_err_set(&err, SN_EINVAL, "no change would repair it");
    if (st) {
        dnote(o, "fix: not applied: %s", err.msg);
        free(jinja);
        return d.problems;
    }
    if (o->dry_run) {
        if (jinja) dnote(o, "would set: tokenizer.chat_template (%zu bytes)", strlen(jinja));
        for (const char *l = jinja; l && *l;) { /* the template itself, as --dry-run shows a Modelfile */
            size_t n = strcspn(l, "\n");
            dnote(o, "  | %.*s", (int)n, l);
            l += n + (l[n] == '\n');
        }
        if (eot >= 0) dnote(o, "would set: tokenizer.ggml.eot_token_id = %lld", (long long)eot);
        dnote(o, "would write: a new %s (temp file beside it, renamed over it); nothing written (--dry-run)", o->path);
        free(jinja);
        return d.problems;
    }
    st = rewrite(o, jinja, eot, &err);
    if (st) {
        dnote(o, "fix: failed: %s", err.msg);
        free(jinja);
        return d.problems;
    }
    if (jinja) dnote(o, "set: tokenizer.chat_template (%zu bytes)", strlen(jinja));
    if (eot >= 0) dnote(o, "set: tokenizer.ggml.eot_token_id = %lld", (long long)eot);
    free(jinja);
    dnote(o, "wrote: %s; checking it again", o->path);
    diagnose(o, o->path, &d);
    int left = d.problems;
    if (!o->smoke) return left;
    sn_lms_placed pl;
    if (!placed_of(o, &pl)) {
        dnote(o, "smoke gate: not run: %s is not under the models dir, LM Studio cannot load it", o->path);
        return left + 1;
    }
    sn_lms_gate_opts g = {.host = o->host, .dirs = o->dirs, .env = o->env, .prompt = o->prompt,
                          .n_predict = o->n_predict, .seed = o->seed, .ctx = o->ctx, .chat = o->chat};
    sn_lms_install_cb cb = {.ud = (void *)o, .line = say_note, .note = say_note};
    cJSON *out = cJSON_CreateObject();
    int diverged = 0;
    st = sn_lms_smoke_gate(&g, &pl, &cb, out, &diverged, &err);
    cJSON_Delete(out);
    if (st) dnote(o, "smoke gate: %s", err.msg);
    return left + (st || diverged);
}
