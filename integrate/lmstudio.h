/* lmstudio.h - place a GGUF where LM Studio indexes it, and prove the server computes what sunny does.
 *
 * Follows lms/lmstudio-js (their source) and LM Studio's server. The models dir is resolved exactly like lms/lmstudio-js
 * (~/.lmstudio-home-pointer, else ~/.cache/lm-studio, else ~/.lmstudio; then settings.json
 * "downloadsFolder" when it is a string, else <home>/models) and nothing there is ever created or
 * modified. Files go exactly two levels deep, <models>/<publisher>/<repo>/<file>.gguf, with names that
 * pass lms's folder-name rules so nothing can escape the models dir. Placement is a hard link by
 * default (copy on EXDEV, via <target>.part + rename), or copy/symlink/move on request. The smoke test
 * probes /lmstudio-greeting, loads the exact file (lms CLI if on PATH, else REST), runs a greedy
 * completion and compares it with sunny's runtime (smoke.h). Nothing here prints: notes go through a
 * callback. */
#ifndef SN_LMSTUDIO_H
#define SN_LMSTUDIO_H
#include "http.h"
#include "sn_err.h"
#include <signal.h>
#include <stdint.h>

typedef void (*sn_lms_note_fn)(void *ud, const char *line);

typedef struct sn_lms_dirs {
    char home[4096];    /* LM Studio home, "" when resolved from --models-dir */
    char models[4096];  /* the models dir */
    char why[2048];     /* how it was resolved, for the user */
} sn_lms_dirs;

/* flag_dir: --models-dir or NULL. user_home: $HOME (NULL: unset). Fails when no LM
 * Studio home exists and no --models-dir was given. */
sn_status sn_lms_resolve_models_dir(const char *flag_dir, const char *user_home, sn_lms_dirs *out,
                                    sn_err *err);

/* The server URL lms would use, on 127.0.0.1: the running server's port from
 * <home>/.internal/http-server.json {"port"} (lms readLocalAPIServerPort), else the configured one from
 * <home>/.internal/http-server-config.json, else 1234. why says which. */
void sn_lms_default_host(const sn_lms_dirs *d, char *url, size_t cap, char *why, size_t why_cap);

/* lms's folder-name rules plus ours (no "..", no control characters). what names the field. */
sn_status sn_lms_check_name(const char *what, const char *name, sn_err *err);

typedef enum { SN_LMS_HARDLINK = 0, SN_LMS_COPY, SN_LMS_SYMLINK, SN_LMS_MOVE } sn_lms_mode;

typedef struct sn_lms_place_opts {
    const char *gguf;          /* the model (first part when split) */
    const char *mmproj;        /* or NULL */
    const char *models_dir;
    int models_dir_explicit;   /* --models-dir: it must exist; a resolved one is created like `lms import`
                                * does (mkdir -p in resolveModelsFolderPath) */
    const char *publisher;     /* NULL -> "sunny-local" */
    const char *repo;          /* NULL -> "<general.name>-GGUF" */
    sn_lms_mode mode;
    int force;
    int dry_run;
    sn_lms_note_fn note;       /* plan, fallbacks, warnings */
    void *note_ud;
    sn_http_progress_fn progress; /* copy progress */
    void *progress_ud;
    volatile sig_atomic_t *cancel; /* non-zero (set by a signal handler) -> stop, remove what was placed */
} sn_lms_place_opts;

typedef struct sn_lms_placed {
    char publisher[128], repo[128];
    char rel_path[1024];       /* publisher/repo/file.gguf (what `lms load --exact` wants) */
    char target[4096];         /* absolute path of the placed model (first part) */
    char arch[64], quant[16];
    int n_files;
    int n_present; /* files already in place (same inode or bytes): not placed again */
    int fell_back_to_copy;
    int warnings;
} sn_lms_placed;

/* Placement itself is a plan and a run (lmstudio_install.h drives both). */

/* ---- server ---- */
/* GET /lmstudio-greeting; *version gets the version when reported. */
sn_status sn_lms_probe(sn_http *h, char *version, size_t cap, sn_err *err);

/* Loads rel_path under identifier: `lms load --exact` when lms is on the PATH of h's environment, else POST /api/v1/models/load with the key found in /api/v0/models, else JIT. On success
 * model_id gets the id to use in completions. */
sn_status sn_lms_load(sn_http *h, const sn_lms_placed *p, const char *identifier, int ctx,
                      char *model_id, size_t cap, sn_lms_note_fn note, void *ud, sn_err *err);

struct sn_smoke_local;
struct sn_smoke_result;
/* Greedy completion (temperature 0, top_k 1, repeat_penalty 1, seed, max_tokens) on /api/v0/completions
 * (or /v1/completions), model_info.arch checked against arch, compared with ours. */
sn_status sn_lms_smoke(sn_http *h, const char *model_id, const char *arch, const char *prompt,
                       int n_predict, int64_t seed, const struct sn_smoke_local *ours,
                       struct sn_smoke_result *res, sn_lms_note_fn note, void *ud, sn_err *err);

/* The chat template as LM Studio applies it: one user turn greedily through /v1/chat/completions (the
 * server renders the GGUF's Jinja) and the same turn rendered by sunny from the GGUF's Jinja through
 * /v1/completions (no template applied). *same = 1 when both answers are equal; a rendering error
 * of the server is an error naming it. */
sn_status sn_lms_chat_check(sn_http *h, const char *model_id, const char *gguf, const char *user, int n_predict,
                            int64_t seed, sn_lms_note_fn note, void *ud, int *same, sn_err *err);

/* When `lms` is on env's PATH: `lms ls --json`, find the entry whose path is p->rel_path and check its
 * architecture, format and quantization. *found: 1 listed and consistent, 0 not listed (yet), -1 lms
 * unavailable or failed. Errors only for a listed entry that contradicts the GGUF. */
sn_status sn_lms_verify_listed(const sn_lms_placed *p, const sn_env *env, int *found, sn_lms_note_fn note,
                               void *ud, sn_err *err);

/* doctor --lmstudio: a GGUF in (or meant for) LM Studio checked as LM Studio will see it: readable
 * and loadable (sunny's checks), an architecture llama.cpp knows, a model rather than a projector, a
 * chat template LM Studio's Jinja renders whose end of an assistant turn is a token of the model
 * that llama.cpp treats as end of generation, and (models_dir non-NULL) the
 * <models>/<publisher>/<repo>/<file>.gguf place My Models lists. Each problem and its fix go to note
 * ("problem: ..." / "  fix: ..."). With fix, what LM Studio reads from the GGUF is repaired: the chat
 * template (from jinja_file or from_dir when the GGUF's is missing, rejected or of another family) and
 * tokenizer.ggml.eot_token_id (the template's end-of-turn token), written to a new file renamed over
 * path; then checked again and, with smoke, proven on the server (sn_lms_smoke_gate with a chat turn).
 * dry_run: says what would change, writes nothing. *found = problems found; returns the problems left
 * (+1 when the gate did not pass), so 0 means clean or repaired and proven. */
typedef struct sn_lms_doctor_opts {
    const char *path;
    const char *models_dir;       /* or NULL */
    int fix, dry_run, smoke;
    const char *jinja_file;       /* --jinja FILE */
    const char *from_dir;         /* --from MODEL_DIR */
    const char *host;             /* NULL: the server lms would use */
    const sn_lms_dirs *dirs;      /* for that server (may be NULL with host) */
    const sn_env *env;
    const char *prompt, *chat;    /* the smoke prompt; the chat turn's user text */
    int n_predict;
    int64_t seed, ctx;
    sn_lms_note_fn note;
    void *ud;
} sn_lms_doctor_opts;
int sn_lms_doctor(const sn_lms_doctor_opts *o, int *found);

/* Known LM Studio error texts -> an actionable sentence ("" when unknown). */
const char *sn_lms_explain(const char *server_error);

#endif
