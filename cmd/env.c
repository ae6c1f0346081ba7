/* env.c - the process environment, read once (see env.h). */
#include "env.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Every variable sunny acts on and where sn_cli_read_env puts it. */
#define V(name, field) {name, offsetof(sn_cli_env, field)}
static const struct { const char *name; size_t off; } k_vars[] = {
    V("TMPDIR", lib.tmpdir), V("HOME", lib.home), V("XDG_CACHE_HOME", lib.xdg_cache_home), V("PATH", lib.path),
    V("OLLAMA_HOST", lib.ollama_host),
    V("OLLAMA_MODELS", lib.ollama_models), V("LM_API_TOKEN", lib.lm_api_token),
    V("SN_HTTP_STALL_S", lib.http_stall_s), V("http_proxy", lib.http_proxy),
    V("https_proxy", lib.https_proxy), V("HTTPS_PROXY", lib.HTTPS_PROXY), V("all_proxy", lib.all_proxy),
    V("ALL_PROXY", lib.ALL_PROXY), V("no_proxy", lib.no_proxy), V("NO_PROXY", lib.NO_PROXY),
    V("HTTP_PROXY", HTTP_PROXY), V("REQUEST_METHOD", request_method), V("SN_CPU", cpu),
    V("SN_GGML_LANES", ggml_lanes), V("SN_MV_QUARTERS", mv_quarters), V("SN_MV_PAGES", mv_pages),
    V("SN_MM_F16", mm_f16), V("SN_Q4_0_REPACK", q4_0_repack), V("SN_Q4_K_REPACK", q4_K_repack),
    V("SN_HUGE_WEIGHTS", huge_weights), V("SN_NO_PREFAULT", no_prefault),
};
#undef V

void sn_cli_read_env(sn_cli_env *e) {
    memset(e, 0, sizeof *e);
    for (size_t i = 0; i < sizeof k_vars / sizeof *k_vars; i++)
        *(const char **)(void *)((char *)e + k_vars[i].off) = getenv(k_vars[i].name);
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
