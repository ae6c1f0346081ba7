/* sn_env.h - the environment variables sunny acts on, as values.
 *
 * Only cmd/ reads the process environment (sn_cli_read_env in cmd/env.c); libraries get these values
 * through their options and never call getenv, so what a library does is decided by its caller (and
 * a test can pass any environment without touching its own). NULL means unset. */
#ifndef SN_ENV_H
#define SN_ENV_H
#include "cpu.h"

typedef struct sn_env {
    const char *tmpdir;        /* TMPDIR: where convert/ inflates deflated PyTorch storages (else /tmp) */
    const char *home;          /* HOME: LM Studio's home, Ollama's default models dir */
    const char *xdg_cache_home; /* XDG_CACHE_HOME: sunny's conversion cache (else HOME/.cache) */
    const char *path;          /* PATH: where integrate/ looks for LM Studio's `lms` */
    const char *ollama_host;   /* OLLAMA_HOST: the Ollama server when --host is not given */
    const char *ollama_models; /* OLLAMA_MODELS: reported by doctor (only the server's matters) */
    const char *lm_api_token;  /* LM_API_TOKEN: LM Studio's bearer token */
    const char *http_stall_s;  /* SN_HTTP_STALL_S: seconds of silence that make a request stalled
                                * (default SN_HTTP_STALL_S, http.h); tests shorten it */
    /* The proxy variables. libcurl reads them itself; integrate/ reads these copies to name the
     * proxy in its messages and in doctor. */
    const char *http_proxy, *https_proxy, *HTTPS_PROXY, *all_proxy, *ALL_PROXY, *no_proxy, *NO_PROXY;
    const sn_tuning *tuning;   /* SN_CPU and the other SN_* knobs as a tuning for the models integrate/
                                * loads (its smoke test); NULL: CPUID's defaults */
} sn_env;
#endif
