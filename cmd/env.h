/* env.h - the process environment, read once: sn_cli_read_env is the one function of sunny that
 * calls getenv (the three programs in main, the unit tests in sn_test.h). Everything else takes the
 * sn_cli_env it fills: the libraries its sn_env part (runtime/base/sn_env.h), models an sn_tuning
 * made from its SN_* knobs, and the proxy rewrite its proxy variables. */
#ifndef SN_CLI_ENV_H
#define SN_CLI_ENV_H
#include "cpu.h"
#include "sn_env.h"

typedef struct sn_cli_env {
    sn_env lib;                 /* TMPDIR, HOME, PATH, OLLAMA_*, LM_API_TOKEN, the lowercase proxies */
    const char *HTTP_PROXY;     /* the Go-style proxy choice (sn_cli_proxy_env_like_go) */
    const char *request_method; /* REQUEST_METHOD: set in a CGI process */
    /* The SN_* tuning knobs (NULL: unset), applied by sn_cli_tuning:
     *   SN_CPU=scalar|avx2|avx512   cap on the instruction sets (avx512: none)
     *   SN_GGML_LANES=8|16          ggml's float-sum width to match
     *   SN_MV_QUARTERS=0|1          far_streams        SN_MV_PAGES=0|1   page_kick
     *   SN_MM_F16=convert|widen     mm_f16_convert
     *   SN_Q4_0_REPACK=0, SN_Q4_K_REPACK=0, SN_HUGE_WEIGHTS=0   turn the repacks / huge pages off
     *   SN_NO_PREFAULT (set)        prefault off */
    const char *cpu, *ggml_lanes, *mv_quarters, *mv_pages, *mm_f16, *q4_0_repack, *q4_K_repack, *huge_weights,
        *no_prefault;
    sn_tuning tuning; /* sn_tuning_default with the knobs above applied; lib.tuning points here */
} sn_cli_env;

/* Fills *e from the process environment (every variable once) and e->tuning from the knobs. */
void sn_cli_read_env(sn_cli_env *e);
/* Overrides the fields of *t the SN_* knobs of e set. */
void sn_cli_tuning(const sn_cli_env *e, sn_tuning *t);

#endif
