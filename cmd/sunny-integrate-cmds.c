/* sunny-integrate-cmds.c - the lmstudio, doctor, template and digest subcommands of
 * sunny-integrate: parse their flags, call integrate/, print. (ollama and main() are in
 * sunny-integrate.c.) */
#include "cli.h"
#include "doctor.h"
#include "http.h"
#include "lmstudio.h"
#include "lmstudio_install.h"
#include "modelinfo.h"
#include "ollama_doctor.h"
#include "ollama.h"
#include "sizefmt.h"
#include "smoke.h"
#include "utf8_fix.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "template_cmd.h"

#include "sunny-integrate.h"

/* ================================================================================================
 * lmstudio */


static void note_line(void *ud, const char *line) {
    (void)ud;
    if (strncmp(line, "warning: ", 9) == 0) sn_cli_warnf("%s", line + 9);
    else fprintf(out_stream(), "  %s\n", line);
}

void lms_usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate lmstudio (MODEL.gguf | MODEL_DIR | WEIGHTS) [options]\n"
            "Places MODEL.gguf at <models>/<publisher>/<repo>/<name>-<QUANT>.gguf where LM Studio indexes it\n"
            "(the models dir resolved like `lms import`), then optionally proves the server token-exact. An\n"
            "HF folder or checkpoint is converted first, once, into the cache ($XDG_CACHE_HOME/sunny, else\n"
            "~/.cache/sunny); a second install converts nothing. Placing a file already there (same inode\n"
            "or same bytes) is a success.\n"
            "\n"
            "Options:\n"
            "  MODEL, --gguf F       the model; split parts -00001-of-N are placed together (default: none,\n"
            "                        required)\n"
            "  --outtype TYPE        convert (or requantize a GGUF) to TYPE, as sunny-convert --outtype\n"
            "                        (default: a GGUF as it is; an HF model auto)\n"
            "  --config FILE         a single checkpoint's config.json (default: beside it)\n"
            "  --keep-gguf PATH      also leave the converted GGUF at PATH (default: only in the cache)\n"
            "  --models-dir DIR      LM Studio's models dir (default: resolved like lms: ~/.lmstudio-home-pointer,\n"
            "                        then ~/.cache/lm-studio, then ~/.lmstudio; settings.json downloadsFolder)\n"
            "  --user-repo PUB/REPO  both folder levels at once, as lms names them (default: sunny-local/\n"
            "                        <general.name>-GGUF)\n"
            "  --publisher P         folder level 1 (default: sunny-local)\n"
            "  --repo R              folder level 2 (default: <general.name>-GGUF)\n"
            "  --mmproj FILE         vision projector, placed beside the model (default: none)\n"
            "  -L, --hard-link       place as a hard link; a copy across filesystems (default: on)\n"
            "  -c, --copy            place as a copy (default: off)\n"
            "  -l, --symbolic-link   place as a symbolic link to the absolute path (default: off)\n"
            "  --mode M              the same as one word: hardlink, copy, symlink or move (default: hardlink)\n"
            "  --force               replace an existing target (default: off)\n"
            "  --dry-run             print the plan, change nothing (default: off)\n"
            "  --smoke               load in LM Studio and compare its greedy tokens with sunny's (default: off)\n"
            "  -n N                  smoke: tokens to compare (default: 32)\n"
            "  -p, --prompt TEXT     smoke: the prompt (default: \"The capital of France is\")\n"
            "  --seed S              smoke: seed (default: 42)\n"
            "  --ctx C               smoke: context length (default: 512)\n"
            "  --host URL            LM Studio server for --smoke (default: the one lms would use,\n"
            "                        else http://127.0.0.1:1234)\n"
            "  --json                machine-readable result on stdout (default: off)\n"
            "  -h, --help            print this help and exit\n"
            "\n"
            "Example:\n"
            "  sunny-integrate lmstudio llama3-q4_0.gguf --user-repo me/Llama3-GGUF --smoke\n");
}

void doctor_usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate doctor [--model NAME | --all] [--fix [--dry-run]] [options]\n"
            "Diagnoses the connection to Ollama: host, bind address, proxy variables, version. With --model\n"
            "or --all, diagnoses models already in Ollama (installed by anyone): no TEMPLATE and what Ollama\n"
            "falls back to, a TEMPLATE rendering differently from the GGUF's Jinja (first differing bytes),\n"
            "no stop or one missing the end of turn, parameters of the wrong type, an architecture the\n"
            "server cannot load; each problem with its fix. Exit 1 when there are problems.\n"
            "\n"
            "Options:\n"
            "  --host URL            server URL (default: $OLLAMA_HOST, else http://127.0.0.1:11434)\n"
            "  --model NAME          diagnose one model, with a load probe (default: none)\n"
            "  --lmstudio PATH       diagnose a GGUF in LM Studio's models dir instead: loadable, architecture\n"
            "                        known, chat template LM Studio renders, placed where My Models lists it\n"
            "                        (--models-dir DIR: the folder; default: resolved like lms), an end of turn\n"
            "                        that ends generation; with --fix, repairs the chat template and end of turn\n"
            "                        in the GGUF (a new file renamed over PATH), then runs the smoke gate and a\n"
            "                        chat turn on the LM Studio server (--host, default: the one lms uses)\n"
            "                        (default: none)\n"
            "  --from MODEL_DIR      --lmstudio --fix: the chat template from the model's HF folder\n"
            "                        (chat_template.jinja or tokenizer_config.json) (default: none)\n"
            "  --jinja FILE          --lmstudio --fix: the chat template from a file (default: none)\n"
            "  --no-smoke            --lmstudio --fix: skip the smoke gate (default: off)\n"
            "  --all                 every model /api/tags lists, one line each (default: off)\n"
            "  --fix                 re-create each model with problems from its existing blob (no upload)\n"
            "                        with the proven TEMPLATE and stops and retyped parameters, then run the\n"
            "                        smoke gate (default: off)\n"
            "  --dry-run             with --fix: print the new Modelfile and requests, change nothing\n"
            "                        (default: off)\n"
            "  -n N                  smoke after --fix: tokens to compare (default: 16)\n"
            "  --json                machine-readable result on stdout (default: off)\n"
            "  -h, --help            print this help and exit\n");
}

void template_usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate template (MODEL.gguf | MODEL_DIR | --jinja FILE) [options]\n"
            "Finds the family whose Ollama Go template renders byte-identical to the model's Jinja on\n"
            "sunny's probe conversations and prints it with its stop list (and the default SYSTEM it\n"
            "needs); with none proven, prints the first difference and exits 1.\n"
            "\n"
            "Options:\n"
            "  --jinja FILE          prove against this Jinja template instead of the model's (default: none)\n"
            "  --json                machine-readable result on stdout (default: off)\n"
            "  -h, --help            print this help and exit\n");
}

void digest_usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-integrate digest FILE\n"
            "Prints sha256:<hex>, the name Ollama gives FILE as a blob, and the hashing speed.\n"
            "\n"
            "Options:\n"
            "  -h, --help            print this help and exit\n");
}

int cmd_lmstudio(int argc, char **argv) {
    const char *gguf = NULL, *dir = NULL, *pub = NULL, *repo = NULL, *mmproj = NULL, *host = NULL, *user_repo = NULL;
    install_source src = {0};
    const char *prompt = "The capital of France is";
    int smoke = 0, n = 32, force = 0, dry = 0;
    int64_t seed = 42, ctx = 512;
    sn_lms_mode mode = SN_LMS_HARDLINK;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) { lms_usage(stdout); return 0; }
        else if (!strcmp(s, "--gguf")) {
            if (gguf) return sn_cli_usage_error("lmstudio: two models given ('%s' and --gguf)", gguf);
            dst = &gguf;
        }
        else if (!strcmp(s, "--user-repo")) dst = &user_repo;
        else if (!strcmp(s, "--outtype")) dst = &src.outtype;
        else if (!strcmp(s, "--keep-gguf")) dst = &src.keep;
        else if (!strcmp(s, "--config")) dst = &src.config;
        else if (!strcmp(s, "-L") || !strcmp(s, "--hard-link")) { mode = SN_LMS_HARDLINK; continue; }
        else if (!strcmp(s, "-c") || !strcmp(s, "--copy")) { mode = SN_LMS_COPY; continue; }
        else if (!strcmp(s, "-l") || !strcmp(s, "--symbolic-link")) { mode = SN_LMS_SYMLINK; continue; }
        else if (!strcmp(s, "--models-dir")) dst = &dir;
        else if (!strcmp(s, "--publisher")) dst = &pub;
        else if (!strcmp(s, "--repo")) dst = &repo;
        else if (!strcmp(s, "--mmproj")) dst = &mmproj;
        else if (!strcmp(s, "--host")) dst = &host;
        else if (!strcmp(s, "-p") || !strcmp(s, "--prompt")) dst = &prompt;
        else if (!strcmp(s, "--smoke")) { smoke = 1; continue; }
        else if (!strcmp(s, "--force")) { force = 1; continue; }
        else if (!strcmp(s, "--dry-run")) { dry = 1; continue; }
        else if (!strcmp(s, "--json")) { g_json = 1; continue; }
        else if (!strcmp(s, "--mode")) {
            if (i + 1 >= argc) return sn_cli_usage_error("lmstudio: --mode needs a value");
            const char *m = argv[++i];
            if (!strcmp(m, "hardlink")) mode = SN_LMS_HARDLINK;
            else if (!strcmp(m, "copy")) mode = SN_LMS_COPY;
            else if (!strcmp(m, "symlink")) mode = SN_LMS_SYMLINK;
            else if (!strcmp(m, "move")) mode = SN_LMS_MOVE;
            else return sn_cli_usage_error("lmstudio: --mode must be hardlink, copy, symlink or move, not '%s'", m);
            continue;
        } else if (!strcmp(s, "-n") || !strcmp(s, "--seed") || !strcmp(s, "--ctx")) {
            int64_t x;
            if (i + 1 >= argc || sn_cli_parse_i64(argv[i + 1], s[1] == 'n' ? 1 : 0, s[1] == 'n' ? 4096 : (s[2] == 'c' ? 1 << 20 : INT32_MAX), &x))
                return sn_cli_usage_error("lmstudio: %s needs a number in range", s);
            i++;
            if (s[1] == 'n') n = (int)x;
            else if (s[2] == 's') seed = x;
            else ctx = x;
            continue;
        } else if (s[0] == '-') return sn_cli_usage_error("lmstudio: unknown option '%s'", s);
        else if (!gguf) { gguf = s; continue; } /* positional, like `lms import FILE` */
        else return sn_cli_usage_error("lmstudio: unexpected argument '%s' (the model is '%s')", s, gguf);
        if (i + 1 >= argc) return sn_cli_usage_error("lmstudio: %s needs a value", s);
        *dst = argv[++i];
    }
    if (!gguf) return sn_cli_usage_error("lmstudio: MODEL.gguf is required");
    char ur_pub[256], ur_repo[256];
    if (user_repo) { /* lms: exactly one '/' */
        const char *sl = strchr(user_repo, '/');
        if (!sl || sl == user_repo || !sl[1] || strchr(sl + 1, '/') || (size_t)(sl - user_repo) >= sizeof ur_pub)
            return sn_cli_usage_error("lmstudio: --user-repo wants PUBLISHER/REPO, got '%s'", user_repo);
        if (pub || repo) return sn_cli_usage_error("lmstudio: --user-repo replaces --publisher and --repo; give one or the other");
        snprintf(ur_pub, sizeof ur_pub, "%.*s", (int)(sl - user_repo), user_repo);
        snprintf(ur_repo, sizeof ur_repo, "%s", sl + 1);
        pub = ur_pub;
        repo = ur_repo;
    }
    sn_err err = {0};
    if (pub && sn_lms_check_name("--publisher", pub, &err)) return sn_cli_usage_error("%s", err.msg);
    if (repo && sn_lms_check_name("--repo", repo, &err)) return sn_cli_usage_error("%s", err.msg);
    char cached[4096];
    cJSON *cache = NULL;
    src.src = gguf;
    int src_rc = resolve_source(&src, cached, sizeof cached, &cache);
    if (src_rc) return src_rc;
    gguf = cached;
    sn_lms_install_opts lo = {.gguf = gguf, .mmproj = mmproj, .models_dir = dir, .publisher = pub, .repo = repo,
                              .mode = mode, .force = force, .dry_run = dry, .smoke = smoke, .host = host,
                              .prompt = prompt, .n_predict = n, .seed = seed, .ctx = ctx, .env = &g_env,
                              .cancel = sn_cli_catch_signals()};
    sn_lms_install_cb cb = {.line = say_line, .note = note_line, .progress = progress_bar};
    sn_lms_install_result res;
    sn_lms_job *job = NULL;
    sn_status st = sn_lms_install_plan(&lo, &cb, &job, &res, &err);
    if (st == SN_OK && dry) print_plan(sn_lms_job_plan(job));
    if (st == SN_OK) st = sn_lms_install_run(job, &cb, &res, &err);
    sn_lms_job_free(job);
    int rc = 0;
    if (res.json && cache) cJSON_AddItemToObject(res.json, "cache", cache);
    else cJSON_Delete(cache);
    if (st) rc = sn_cli_exit_code(res.json ? fail_json(&err, res.json) : sn_cli_fail(&err));
    else if (res.diverged) rc = SN_EXIT_FAIL;
    if (res.json) print_json(res.json);
    cJSON_Delete(res.json);
    return rc;
}

/* ================================================================================================
 * doctor */

int cmd_doctor(int argc, char **argv) {
    const char *host = NULL, *model = NULL, *lms = NULL, *mdir = NULL, *from = NULL, *jinja = NULL;
    int all = 0, fix = 0, dry = 0, n = 16, smoke = 1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--host") && i + 1 < argc) host = argv[++i];
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) model = argv[++i];
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (!strcmp(argv[i], "--lmstudio") && i + 1 < argc) lms = argv[++i];
        else if (!strcmp(argv[i], "--models-dir") && i + 1 < argc) mdir = argv[++i];
        else if (!strcmp(argv[i], "--fix")) fix = 1;
        else if (!strcmp(argv[i], "--from") && i + 1 < argc) from = argv[++i];
        else if (!strcmp(argv[i], "--jinja") && i + 1 < argc) jinja = argv[++i];
        else if (!strcmp(argv[i], "--no-smoke")) smoke = 0;
        else if (!strcmp(argv[i], "--dry-run")) dry = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            int64_t x;
            if (sn_cli_parse_i64(argv[++i], 1, 4096, &x)) return sn_cli_usage_error("doctor: -n wants 1..4096");
            n = (int)x;
        }
        else if (!strcmp(argv[i], "--json")) g_json = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            doctor_usage(stdout);
            return 0;
        } else return sn_cli_usage_error("doctor: unknown argument '%s'", argv[i]);
    }
    if (model && all) return sn_cli_usage_error("doctor: --model and --all exclude each other");
    if ((from || jinja || !smoke) && !(lms && fix))
        return sn_cli_usage_error("doctor: --from, --jinja and --no-smoke go with --lmstudio PATH --fix");
    if (from && jinja) return sn_cli_usage_error("doctor: --from and --jinja exclude each other");
    if (lms) { /* an LM Studio model file: checked here, repaired in the file, proven on the server */
        if (model || all) return sn_cli_usage_error("doctor: --lmstudio takes no --model or --all");
        if (dry && !fix) return sn_cli_usage_error("doctor: --dry-run shows what --fix would do; give --fix too");
        sn_lms_dirs d;
        sn_err e = {0};
        int have = sn_lms_resolve_models_dir(mdir, g_env.home, &d, &e) == SN_OK;
        sn_lms_doctor_opts o = {.path = lms, .models_dir = have ? d.models : NULL, .fix = fix, .dry_run = dry,
                                .smoke = smoke, .jinja_file = jinja, .from_dir = from, .host = host,
                                .dirs = have ? &d : NULL, .env = &g_env, .prompt = "The capital of France is",
                                .chat = "Hello! Who are you?", .n_predict = n, .seed = 42, .ctx = 2048,
                                .note = note_line};
        int found = 0, left = sn_lms_doctor(&o, &found);
        if (!found) fprintf(out_stream(), "doctor: no problems (exit 0)\n");
        else if (left) fprintf(out_stream(), "doctor: %d problem(s)%s (exit 1)\n", left, fix && !dry ? " left" : "");
        else fprintf(out_stream(), "doctor: %d problem(s) fixed%s (exit 0)\n", found, smoke ? ", smoke gate and chat OK" : "");
        return left ? SN_EXIT_FAIL : 0;
    }
    if ((fix || dry) && !model && !all) return sn_cli_usage_error("doctor: --fix and --dry-run need --model or --all");
    if (dry && !fix) return sn_cli_usage_error("doctor: --dry-run shows what --fix would do; give --fix too");
    if (model || all) {
        sn_ollama_doctor_opts o = {.host = host, .env = &g_env, .model = model, .all = all, .fix = fix,
                                   .dry_run = dry, .n_predict = n, .seed = 42, .ctx = 512, .n_threads = 2};
        sn_ollama_install_cb cb = {.line = say_line, .warn = say_warn, .progress = progress_bar};
        cJSON *rep = NULL;
        int found = 0, left = 0;
        sn_err err = {0};
        sn_status st = sn_ollama_doctor_models(&o, &cb, &rep, &found, &left, &err);
        int rc = st ? fail_json(&err, rep) : left ? SN_EXIT_FAIL : 0;
        if (!st) {
            cJSON_AddNumberToObject(rep, "problems", found);
            cJSON_AddNumberToObject(rep, "unfixed", left);
            if (!found) fprintf(out_stream(), "doctor: no problems (exit 0)\n");
            else if (left) fprintf(out_stream(), "doctor: %d problem(s)%s (exit 1)\n", left, fix ? " left" : "");
            else fprintf(out_stream(), "doctor: %d problem(s) fixed (exit 0)\n", found);
        }
        print_json(rep);
        cJSON_Delete(rep);
        return rc;
    }
    cJSON *r = sn_doctor_ollama(host, &g_env);
    if (!r) { sn_cli_errorf("out of memory"); return SN_EXIT_FAIL; }
    int failed = sn_doctor_failed(r);
    if (g_json) {
        char *s = sn_utf8_fix_json(r) ? NULL : cJSON_Print(r);
        printf("%s\n", s ? s : "{}");
        free(s);
    } else {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "checks")) {
            printf("[%-4s] %-14s %s\n", cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring,
                   cJSON_GetObjectItemCaseSensitive(c, "check")->valuestring,
                   cJSON_GetObjectItemCaseSensitive(c, "detail")->valuestring);
        }
    }
    cJSON_Delete(r);
    return failed ? SN_EXIT_FAIL : 0;
}

/* ================================================================================================
 * template */

int cmd_template(int argc, char **argv) {
    const char *model = NULL, *jinja = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) g_json = 1;
        else if (!strcmp(argv[i], "--jinja")) {
            if (i + 1 >= argc) return sn_cli_usage_error("template: --jinja needs a FILE");
            jinja = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            template_usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') return sn_cli_usage_error("template: unknown option '%s'", argv[i]);
        else if (!model) model = argv[i];
        else return sn_cli_usage_error("template: unexpected argument '%s'", argv[i]);
    }
    if (!model && !jinja) return sn_cli_usage_error("template: MODEL.gguf, MODEL_DIR or --jinja FILE is required");
    sn_template_result r;
    sn_err err = {0};
    sn_status st = sn_template_resolve(model, jinja, &r, &err);
    int rc = 0;
    if (g_json && (st == SN_OK || st == SN_EUNSUPPORTED)) {
        char *js = sn_template_result_json(&r);
        cJSON *o = js ? cJSON_Parse(js) : NULL;
        if (o && st != SN_OK) { /* the refusal's evidence, with the error in the same record */
            cJSON *e = cJSON_AddObjectToObject(o, "error");
            if (e) {
                cJSON_AddStringToObject(e, "message", err.msg);
                cJSON_AddNumberToObject(e, "exit_code", SN_EXIT_FAIL);
            }
            print_json(o);
            sn_cli_json_error_done();
        } else if (js) {
            printf("%s\n", js);
        }
        cJSON_Delete(o);
        free(js);
    }
    if (st != SN_OK) {
        if (!g_json && st == SN_EUNSUPPORTED)
            for (size_t i = 0; i < r.n_evidence; i++) fprintf(stderr, "  evidence: %s\n", r.evidence[i]);
        rc = sn_cli_fail(&err);
    } else if (!g_json) {
        if (r.caveat)
            printf("family    : %s (proven: byte-identical to the Jinja on every probe conversation, for %s: the "
                   "Jinja strips it, Ollama's Go templates cannot)\n", r.family, r.caveat);
        else printf("family    : %s (proven: byte-identical to the Jinja on every probe conversation)\n", r.family);
        if (r.system) printf("system    : %s\n", r.system);
        printf("source    : %s%s%s\n", r.source, r.source_path ? " " : "", r.source_path ? r.source_path : "");
        for (size_t i = 0; i < r.n_evidence; i++) printf("evidence  : %s\n", r.evidence[i]);
        printf("stop      :");
        for (size_t i = 0; i < r.n_stop; i++) printf(" \"%s\"", r.stop[i]);
        printf("\nparams    : %s\ntemplate  :\n%s\n", r.params_json ? r.params_json : "{}", r.template);
    }
    sn_template_result_free(&r);
    return rc;
}

/* ================================================================================================
 * digest: the blob digest Ollama will compute, and how fast we hash */

int cmd_digest(int argc, char **argv) {
    if (argc != 1 || argv[0][0] == '-') {
        if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
            digest_usage(stdout);
            return 0;
        }
        return sn_cli_usage_error("digest: exactly one FILE");
    }
    char hex[65];
    uint64_t size = 0;
    double secs = 0;
    sn_err err = {0};
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (sn_ollama_sha256_file(argv[0], hex, &size, &secs, &err)) return sn_cli_fail(&err);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("sha256:%s\n", hex);
    char sz[SN_SIZE_STR_MAX];
    fprintf(stderr, "%s: %.2f GB/s wall (%.3f s), %.2f GB/s per CPU-second (%.3f s CPU); OpenSSL EVP "
            "SHA-256 over mmap\n", sn_size_str(size, sz, sizeof sz), secs > 0 ? (double)size / secs / 1e9 : 0.0, secs,
            cpu > 0 ? (double)size / cpu / 1e9 : 0.0, cpu);
    return 0;
}
