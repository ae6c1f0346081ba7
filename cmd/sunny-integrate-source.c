/* sunny-integrate-source.c - what the ollama and lmstudio subcommands install: a GGUF as it is, or an
 * HF folder / checkpoint (or a GGUF with --outtype) converted once into the cache (integrate/
 * gguf_cache.h) with a progress bar; --keep-gguf leaves a copy where the user wants it. */
#include "cli.h"
#include "gguf_cache.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sunny-integrate.h"

int resolve_source(const install_source *s, char *gguf, size_t cap, cJSON **info) {
    *info = NULL;
    struct stat st;
    if (stat(s->src, &st) != 0) {
        sn_cli_errorf("%s: no such file or folder", s->src);
        return SN_EXIT_FAIL;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) { /* a FIFO or a device would block the key's hashing */
        sn_cli_errorf("%s: not a regular file or a folder", s->src);
        return SN_EXIT_FAIL;
    }
    const int is_gguf = sn_gguf_cache_is_gguf(s->src);
    if (is_gguf && !s->outtype) {
        if (s->keep) return sn_cli_usage_error("--keep-gguf: %s is a GGUF already; it is installed as it is", s->src);
        snprintf(gguf, cap, "%s", s->src);
        return 0;
    }
    sn_gguf_cache_opts o = {.src = s->src, .config_path = s->config, .env = &g_env, .cancel = sn_cli_catch_signals(),
                            .on_progress = progress_bar, .ud = (void *)"converting"};
    if (s->outtype) {
        int t = sn_outtype_parse(s->outtype);
        if (t < 0) return sn_cli_usage_error("unknown --outtype '%s'", s->outtype);
        o.outtype = (sn_outtype)t;
    }
    if (is_gguf && o.outtype == SN_OUTTYPE_AUTO)
        return sn_cli_usage_error("--outtype auto: %s is a GGUF already; name the type to requantize to", s->src);
    /* the converter is this program: a rebuilt sunny-integrate keys new entries */
    char tool[96] = "";
    struct stat self;
    if (stat("/proc/self/exe", &self) == 0)
        snprintf(tool, sizeof tool, "%lld:%lld.%09ld", (long long)self.st_size, (long long)self.st_mtim.tv_sec,
                 self.st_mtim.tv_nsec);
    o.tool_id = tool;
    sn_gguf_cache_result r;
    sn_err err = {0};
    fprintf(out_stream(), "source %s: %s\n", s->src,
            is_gguf ? "a GGUF, requantized through the cache" : "an HF model, converted through the cache");
    sn_status stt = sn_gguf_cache_get(&o, &r, &err);
    if (stt) return sn_cli_fail(&err);
    if (r.hit)
        fprintf(out_stream(), "cache hit %s: %s (converted nothing)\n", r.key, r.gguf);
    else
        fprintf(out_stream(), "converted into the cache (%s, %s %s) in %.2f s: %s\n", r.key, r.arch, r.ftype,
                r.seconds, r.gguf);
    if (s->keep) {
        if ((stt = sn_gguf_cache_keep(r.gguf, s->keep, &err)) != SN_OK) return sn_cli_fail(&err);
        fprintf(out_stream(), "kept a copy at %s\n", s->keep);
    }
    cJSON *j = cJSON_CreateObject();
    if (j) {
        cJSON_AddStringToObject(j, "source", s->src);
        cJSON_AddStringToObject(j, "gguf", r.gguf);
        cJSON_AddStringToObject(j, "key", r.key);
        cJSON_AddBoolToObject(j, "hit", r.hit);
        cJSON_AddNumberToObject(j, "convert_seconds", r.seconds);
        if (s->keep) cJSON_AddStringToObject(j, "kept", s->keep);
    }
    *info = j;
    snprintf(gguf, cap, "%s", r.gguf);
    return 0;
}
