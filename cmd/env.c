/* env.c - the process environment, read once (see env.h). */
#include "env.h"

#include <stdlib.h>
#include <string.h>

void sn_cli_read_env(sn_cli_env *e) {
    memset(e, 0, sizeof *e);
    e->lib = (sn_env){
        .tmpdir = getenv("TMPDIR"),
        .home = getenv("HOME"),
        .xdg_cache_home = getenv("XDG_CACHE_HOME"),
        .path = getenv("PATH"),
        .ollama_host = getenv("OLLAMA_HOST"),
        .ollama_models = getenv("OLLAMA_MODELS"),
        .lm_api_token = getenv("LM_API_TOKEN"),
        .http_proxy = getenv("http_proxy"),
        .https_proxy = getenv("https_proxy"),
        .HTTPS_PROXY = getenv("HTTPS_PROXY"),
        .all_proxy = getenv("all_proxy"),
        .ALL_PROXY = getenv("ALL_PROXY"),
        .no_proxy = getenv("no_proxy"),
        .NO_PROXY = getenv("NO_PROXY"),
    };
    e->HTTP_PROXY = getenv("HTTP_PROXY");
    e->request_method = getenv("REQUEST_METHOD");
    e->cpu = getenv("SN_CPU");
    e->ggml_lanes = getenv("SN_GGML_LANES");
    e->mv_quarters = getenv("SN_MV_QUARTERS");
    e->mv_pages = getenv("SN_MV_PAGES");
    e->mm_f16 = getenv("SN_MM_F16");
    e->q4_0_repack = getenv("SN_Q4_0_REPACK");
    e->q4_K_repack = getenv("SN_Q4_K_REPACK");
    e->huge_weights = getenv("SN_HUGE_WEIGHTS");
    e->no_prefault = getenv("SN_NO_PREFAULT");
    sn_tuning_default(&e->tuning);
    sn_cli_tuning(e, &e->tuning);
    e->lib.tuning = &e->tuning;
}

/* the off switches: "0" turns the feature off */
static int zero(const char *v) { return v && !strcmp(v, "0"); }

void sn_cli_tuning(const sn_cli_env *e, sn_tuning *t) {
    const char *v = e->cpu;
    if (v && !strcmp(v, "scalar")) t->isa &= SN_CPU_AMD;
    else if (v && !strcmp(v, "avx2")) t->isa &= SN_CPU_AVX2 | SN_CPU_AMD;
    if ((v = e->ggml_lanes) && (!strcmp(v, "8") || !strcmp(v, "16"))) t->lanes = atoi(v);
    /* the stream choices: "1" on, any other non-empty value off (as they always read) */
    if ((v = e->mv_quarters) && *v) t->far_streams = !strcmp(v, "1");
    if ((v = e->mv_pages) && *v) t->page_kick = !strcmp(v, "1");
    if ((v = e->mm_f16) && *v) t->mm_f16_convert = !strcmp(v, "convert");
    if (zero(e->q4_0_repack)) t->repack_q4_0 = 0;
    if (zero(e->q4_K_repack)) t->repack_q4_K = 0;
    if (zero(e->huge_weights)) t->huge_pages = 0;
    if (e->no_prefault) t->prefault = 0;
}
