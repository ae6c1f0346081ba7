/* lmstudio_install.c - the `sunny-integrate lmstudio` job as a plan and a run (see
 * lmstudio_install.h). Each step is a call into lmstudio.h / smoke.h; this file orders them. */
#include "lmstudio_install.h"
#include "lmstudio_internal.h"
#include "smoke.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sn_lms_job {
    const sn_lms_install_opts *o;
    cJSON *out;
    sn_lms_dirs dirs;
    sn_lms_place_opts po;
    sn_lms_placement placement;
    sn_lms_placed placed;
    sn_install_plan plan;
};

#define say(cb, ...) sn_install_say((cb)->line, (cb)->ud, __VA_ARGS__)

sn_status sn_lms_install_plan(const sn_lms_install_opts *o, const sn_lms_install_cb *cb, sn_lms_job **job,
                              sn_lms_install_result *res, sn_err *err) {
    memset(res, 0, sizeof *res);
    *job = NULL;
    sn_lms_job *j = calloc(1, sizeof *j);
    if (j) res->json = j->out = cJSON_CreateObject();
    if (!j || !j->out) { free(j); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
    j->o = o;
    sn_status st = sn_lms_resolve_models_dir(o->models_dir, o->env ? o->env->home : NULL, &j->dirs, err);
    if (st == SN_OK) {
        say(cb, "models dir: %s (%s)", j->dirs.models, j->dirs.why);
        cJSON_AddStringToObject(j->out, "models_dir", j->dirs.models);
        cJSON_AddStringToObject(j->out, "models_dir_reason", j->dirs.why);
        j->po = (sn_lms_place_opts){.gguf = o->gguf, .mmproj = o->mmproj, .models_dir = j->dirs.models,
                                    .models_dir_explicit = o->models_dir != NULL, .publisher = o->publisher,
                                    .repo = o->repo, .mode = o->mode, .force = o->force, .dry_run = o->dry_run,
                                    .note = cb->note, .note_ud = cb->ud, .progress = cb->progress,
                                    .progress_ud = cb->ud, .cancel = o->cancel};
        st = sn_lms_place_plan(&j->po, &j->placement, &j->plan, &j->placed, err);
    }
    if (st) {
        sn_lms_job_free(j);
        return st;
    }
    *job = j;
    return SN_OK;
}

const sn_install_plan *sn_lms_job_plan(const sn_lms_job *j) { return &j->plan; }

void sn_lms_job_free(sn_lms_job *j) {
    if (!j) return;
    sn_lms_placement_free(&j->placement);
    sn_install_plan_free(&j->plan);
    free(j);
}

sn_status sn_lms_smoke_gate(const sn_lms_gate_opts *g, const sn_lms_placed *pl, const sn_lms_install_cb *cb,
                            cJSON *out, int *diverged, sn_err *err) {
    char url[256], why[1024];
    *diverged = 0;
    if (g->host) {
        snprintf(url, sizeof url, "%.255s", g->host);
        snprintf(why, sizeof why, "--host");
    } else {
        sn_lms_default_host(g->dirs, url, sizeof url, why, sizeof why);
    }
    say(cb, "host    : %s (%s)", url, why);
    sn_http *h = NULL;
    if (sn_http_new(url, g->env, &h, err)) return err->code;
    char ver[64];
    sn_status st = sn_lms_probe(h, ver, sizeof ver, err);
    if (st == SN_OK) {
        say(cb, "server  : %s (LM Studio%s%s)", url, ver[0] ? " " : "", ver);
        sn_smoke_opts so = {.gguf_path = pl->target, .prompt = g->prompt, .n_predict = g->n_predict,
                            .n_ctx = (int)g->ctx, .n_threads = 2, .tuning = g->env ? g->env->tuning : NULL};
        sn_smoke_local ours;
        st = sn_smoke_run_local(&so, &ours, err);
        if (st == SN_OK) {
            char id[256];
            sn_smoke_result sr;
            st = sn_lms_load(h, pl, "sunny-smoke", (int)g->ctx, id, sizeof id, cb->note, cb->ud, err);
            if (st == SN_OK)
                st = sn_lms_smoke(h, id, pl->arch, g->prompt, g->n_predict, g->seed, &ours, &sr, cb->note, cb->ud, err);
            sn_smoke_local_free(&ours);
            if (st == SN_OK) {
                char line[4096];
                sn_smoke_format(&sr, "lmstud", line, sizeof line);
                say(cb, "%s", line);
                if (sn_smoke_result_json(&sr, out)) *diverged = 1;
                sn_smoke_result_free(&sr);
            }
            int same = 1;
            if (st == SN_OK && g->chat && (st = sn_lms_chat_check(h, id, pl->target, g->chat, g->n_predict, g->seed,
                                                                 cb->note, cb->ud, &same, err)) == SN_OK) {
                say(cb, "[chat] %s", same ? "OK: LM Studio applies the GGUF's chat template as its Jinja renders"
                                          : "DIFFERS: LM Studio renders the chat template differently (notes above)");
                cJSON_AddBoolToObject(out, "chat_ok", same);
                if (!same) *diverged = 1;
            }
        }
    }
    sn_http_free(h);
    return st;
}

sn_status sn_lms_install_run(sn_lms_job *j, const sn_lms_install_cb *cb, sn_lms_install_result *res, sn_err *err) {
    const sn_lms_install_opts *o = j->o;
    sn_lms_placed *pl = &j->placed;
    sn_status st = o->dry_run ? SN_OK : sn_lms_place_run(&j->po, &j->placement, pl, err);
    if (st) return st;
    say(cb, "%s: %s (%s, %s%s)", o->dry_run ? "would place" : "placed", pl->target, pl->arch, pl->quant,
        pl->fell_back_to_copy ? ", copied: other filesystem" : "");
    cJSON_AddStringToObject(j->out, "path", pl->target);
    cJSON_AddStringToObject(j->out, "model_path", pl->rel_path);
    cJSON_AddStringToObject(j->out, "architecture", pl->arch);
    cJSON_AddStringToObject(j->out, "quantization", pl->quant);
    cJSON_AddBoolToObject(j->out, "dry_run", o->dry_run);
    cJSON_AddBoolToObject(j->out, "copied_instead_of_link", pl->fell_back_to_copy);
    if (o->dry_run) return SN_OK;
    int listed = -1;
    if ((st = sn_lms_verify_listed(pl, o->env, &listed, cb->note, cb->ud, err))) return st;
    if (listed >= 0) cJSON_AddBoolToObject(j->out, "listed_by_lms", listed);
    if (!o->smoke) return SN_OK;
    sn_lms_gate_opts g = {.host = o->host, .dirs = &j->dirs, .env = o->env, .prompt = o->prompt,
                          .n_predict = o->n_predict, .seed = o->seed, .ctx = o->ctx};
    return sn_lms_smoke_gate(&g, pl, cb, j->out, &res->diverged, err);
}
