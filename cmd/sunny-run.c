/* sunny-run.c - run a Llama-family GGUF (or a sunny runtime blob, docs/BLOB.md) with the bundled runtime: tokenize a prompt, evaluate it,
 * generate (greedy by default), print the text or a JSON record the parity tests read. Thin: flag
 * parsing and printing only; the work is in runtime/ (model.h, tokenizer.h, sampler.h). */
#include "cli.h"
#include "budget.h"
#include "gguf.h"
#include "run_chat.h"
#include "model.h"
#include "generate.h"
#include "sampler.h"
#include "tokenizer.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-run [-m] MODEL (-p PROMPT | --prompt-ids IDS | -f FILE | PROMPT) [options]\n"
            "       sunny-run [-m] MODEL [-cnv] [-sys TEXT] [options]   (chat: one user turn per stdin line)\n"
            "       sunny-run [-m] MODEL --tokenize (-p TEXT | -f FILE) [--json]\n"
            "Runs a GGUF or a sunny runtime blob (OUT.snb from sunny-convert --blob) with llama.cpp's\n"
            "numerics and prints the generated text. A Hugging Face model folder must be converted first\n"
            "with sunny-convert.\n"
            "  architectures: %s\n"
            "  tensor types:  %s\n"
            "\n"
            "Options:\n"
            "  -m, --model PATH        the model, or give it as the first argument (default: none, required)\n"
            "  -p, --prompt TEXT       prompt text (default: none; one of -p, --prompt-ids, -f is required)\n"
            "  --prompt-ids IDS        comma-separated token ids instead of text (default: none)\n"
            "  -f, --file FILE         read the prompt text from FILE (default: none)\n"
            "  PROMPT                  a second positional argument is the prompt, as llama-run takes it\n"
            "                          (default: none)\n"
            "  -n, --n-predict, --predict N\n"
            "                          tokens to generate (default: 32; -1: until an end-of-generation\n"
            "                          token or the context's end, -2: until the context is full)\n"
            "  -c, --ctx-size N        context size in tokens (default: prompt + -n; a value above the\n"
            "                          model's trained context is used with a warning)\n"
            "  -t, --threads N         threads (default: the physical cores, %d here)\n"
            "  --temp T                sampling temperature (default: 0 = greedy)\n"
            "  --top-k K               top-k sampling (default: 40; 0 = off; unused when greedy)\n"
            "  --top-p P               top-p sampling (default: 0.95; 1 = off)\n"
            "  --min-p M               min-p sampling (default: 0 = off)\n"
            "  --seed S                sampler seed (default: 0)\n"
            "  --repeat-penalty R      divide a positive logit (multiply a negative one) of each token among\n"
            "                          the last --repeat-last-n tokens, prompt included, by R, as llama.cpp\n"
            "                          does (default: 1 = off)\n"
            "  --repeat-last-n N       tokens the penalties look back over (default: 64; 0 = off)\n"
            "  --presence-penalty A    subtract A from the logit of each such token (default: 0 = off)\n"
            "  --frequency-penalty A   subtract A times its count among them (default: 0 = off)\n"
            "  --no-bos                do not add the BOS token (default: add it if the model asks for it)\n"
            "  --kv TYPE               KV cache type, f16 or f32 (default: f16)\n"
            "  --ignore-eos            keep generating past end-of-generation tokens (default: stop there)\n"
            "  --verify                blobs: check every tensor's CRC32 first (default: header and table only)\n"
            "  --mmap                  read the weights in place from the file mapping, shared with other\n"
            "                          processes (default: copy them into 2 MB huge pages at load, up to\n"
            "                          half of the available memory, for fewer TLB misses)\n"
            "  --warmup                evaluate the prompt once and forget it before the timed run, as\n"
            "                          llama-bench does before each test (benchmarks; default: off)\n"
            "  -cnv, --conversation    chat: each stdin line is a user turn, rendered with the conversation\n"
            "                          through the GGUF's chat template, the reply streamed to stdout; -n\n"
            "                          caps each reply (default: on when the GGUF has a chat template and no\n"
            "                          prompt is given, as llama-cli does; replies run to end-of-generation)\n"
            "  -no-cnv, --no-conversation  never chat, even with no prompt (default: off)\n"
            "  -sys, --system-prompt TEXT  chat: a system message first (default: none)\n"
            "  --tokenize              print the prompt's token ids and exit (default: off)\n"
            "  --json                  print one JSON record on stdout (default: off: text on stdout,\n"
            "                          timings on stderr). The record: {\"prompt_ids\":[...],\"ids\":[...],\n"
            "                          \"text\":\"...\",\"prefill_tok_s\":...,\"decode_tok_s\":...,\n"
            "                          \"top_logprobs\"/\"top_logits\":[[id,value],...] of the last step,\n"
            "                          \"expert_histogram\" (mixtures of experts: selections per expert), ...}\n"
            "  -ngl, --n-gpu-layers N  llama.cpp's GPU and memory flags (also --gpu-layers N, -mg/--main-gpu N,\n"
            "                          -ts/--tensor-split S, -sm/--split-mode M, --no-mmap, -fa, --flash-attn\n"
            "                          [on|off|auto]): accepted and ignored with a note, as sunny-run runs on\n"
            "                          the CPU and copies the weights at load unless --mmap (default: none)\n"
            "  -h, --help              print this help and exit\n"
            "  --version               print the version and exit\n"
            "\n"
            "Example:\n"
            "  sunny-run -m llama-3.2-1b-q8_0.gguf -p \"The capital of France is\" -n 16\n"
            "Exit status: 0 ok, 1 failure, 2 usage error.\n",
            sn_model_supported_archs(), sn_model_supported_types(), sn_cli_physical_cores());
}

typedef struct {
    const char *model, *prompt, *prompt_ids, *file;
    int64_t n_predict, threads, top_k, ctx;
    double temp, top_p, min_p;
    int64_t seed;
    int no_bos, json, tokenize, kv_f32, ignore_eos, verify, mmap_weights, warmup, n_given;
    int cnv;            /* 1 -cnv, -1 -no-cnv, 0 decided by the model */
    const char *system;
    int64_t repeat_last_n;
    double repeat_penalty, presence_penalty, frequency_penalty;
    char ignored[256]; /* the GPU flags given, for the one note */
    sn_cli_env env;    /* the environment, read once in main */
} opts;

/* The prompt file, at most SN_BUDGET_PROMPT_BYTES (a pipe may be read; /dev/zero stops there).
 * NULL with errno set, or with errno 0 when the budget was passed. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    int over = 0;
    while (b) {
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
        if (n > SN_BUDGET_PROMPT_BYTES) { over = 1; break; }
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f) || over || !b;
    int e = over ? 0 : ferror(f) ? errno : ENOMEM;
    fclose(f);
    if (bad) { free(b); errno = e; return NULL; }
    *len = n;
    return b;
}

/* "1,2,3" -> ids; returns count or -1. */
static int64_t parse_ids(const char *s, int32_t **out) {
    size_t cap = 16, n = 0;
    int32_t *ids = malloc(cap * sizeof(*ids));
    if (!ids) return -1;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0 || v > INT32_MAX || (*end && *end != ',')) { free(ids); return -1; }
        if (n == cap) {
            int32_t *ni = realloc(ids, cap * 2 * sizeof(*ids));
            if (!ni) { free(ids); return -1; }
            ids = ni;
            cap *= 2;
        }
        ids[n++] = (int32_t)v;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p) { free(ids); return -1; }
    }
    if (n == 0) { free(ids); return -1; }
    *out = ids;
    return (int64_t)n;
}

/* JSON string body: escapes, and replaces invalid UTF-8 with U+FFFD so the output always parses. */
static void json_str(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        const unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { fputc('\\', f); fputc(c, f); i++; continue; }
        if (c < 0x20) { fprintf(f, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\u%04x", c); i++; continue; }
        if (c < 0x80) { fputc(c, f); i++; continue; }
        uint32_t cp;
        size_t len = sn_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!len) { fputs("\xEF\xBF\xBD", f); i++; continue; }
        fwrite(s + i, 1, len, f);
        i += len;
    }
    fputc('"', f);
}

static int64_t sn_argmin(const float *x, int64_t n) {
    int64_t b = 0;
    for (int64_t i = 1; i < n; i++) b = x[i] < x[b] ? i : b;
    return b;
}

static void json_ids(FILE *f, const int32_t *ids, int64_t n) {
    fputc('[', f);
    for (int64_t i = 0; i < n; i++) fprintf(f, i ? ",%d" : "%d", ids[i]);
    fputc(']', f);
}

/* llama.cpp's GPU and memory-placement flags, which copied commands carry: sunny-run has no GPU path. */
static int is_gpu_flag(const char *a) {
    static const char *const f[] = {"-ngl", "--n-gpu-layers", "--gpu-layers", "-mg", "--main-gpu", "-ts",
                                    "--tensor-split", "-sm", "--split-mode", "--no-mmap", "-fa", "--flash-attn"};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!strcmp(a, f[i])) return 1;
    return 0;
}

static int is_fa_value(const char *v) { return !strcmp(v, "on") || !strcmp(v, "off") || !strcmp(v, "auto"); }

static int parse_args(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof(*o));
    o->n_predict = 32;
    o->threads = sn_cli_physical_cores();
    o->top_k = 40;
    o->top_p = 0.95;
    o->seed = 0;
    o->repeat_last_n = 64;
    o->repeat_penalty = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT()                                                              \
    do {                                                                    \
        if (i + 1 >= argc) return sn_cli_usage_error("%s needs a value", a); \
        i++;                                                                \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "--version")) { sn_cli_print_version(); exit(0); }
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) { NEXT(); o->prompt = argv[i]; }
        else if (!strcmp(a, "--prompt-ids")) { NEXT(); o->prompt_ids = argv[i]; }
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) { NEXT(); o->file = argv[i]; }
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            NEXT();
            if (o->model) return sn_cli_usage_error("two models given: '%s' and '%s'", o->model, argv[i]);
            o->model = argv[i];
        }
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict") || !strcmp(a, "--predict")) { NEXT(); o->n_given = 1; if (sn_cli_parse_i64(argv[i], -2, 1 << 24, &o->n_predict)) return sn_cli_usage_error("%s: expected a count, -1 (until the end of generation) or -2 (until the context is full), got '%s'", a, argv[i]); }
        else if (!strcmp(a, "--repeat-penalty")) { NEXT(); if (sn_cli_parse_f64(argv[i], &o->repeat_penalty) || !(o->repeat_penalty > 0 && isfinite(o->repeat_penalty) && isfinite(1.0 / o->repeat_penalty))) return sn_cli_usage_error("--repeat-penalty: expected a finite number > 0, got '%s'", argv[i]); }
        else if (!strcmp(a, "--repeat-last-n")) { NEXT(); if (sn_cli_parse_i64(argv[i], 0, INT32_MAX, &o->repeat_last_n)) return sn_cli_usage_error("--repeat-last-n: expected a count >= 0, got '%s'", argv[i]); }
        else if (!strcmp(a, "--presence-penalty") || !strcmp(a, "--frequency-penalty")) {
            NEXT();
            double *v = a[2] == 'p' ? &o->presence_penalty : &o->frequency_penalty;
            if (sn_cli_parse_f64(argv[i], v) || !isfinite(*v)) return sn_cli_usage_error("%s: expected a finite number, got '%s'", a, argv[i]);
        }
        else if (is_gpu_flag(a)) {
            const int takes = strcmp(a, "--no-mmap") != 0 && !((!strcmp(a, "-fa") || !strcmp(a, "--flash-attn")) &&
                                                             (i + 1 >= argc || !is_fa_value(argv[i + 1])));
            if (takes) NEXT();
            const size_t k = strlen(o->ignored);
            snprintf(o->ignored + k, sizeof o->ignored - k, "%s%s%s%s", k ? ", " : "", a, takes ? " " : "", takes ? argv[i] : "");
        }
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) { NEXT(); if (sn_cli_parse_i64(argv[i], 1, 1024, &o->threads)) return sn_cli_usage_error("%s: expected 1..1024, got '%s'", a, argv[i]); }
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size") || !strcmp(a, "--ctx")) { NEXT(); if (sn_cli_parse_i64(argv[i], 1, (int64_t)1 << 31, &o->ctx)) return sn_cli_usage_error("%s: expected a positive size, got '%s'", a, argv[i]); }
        else if (!strcmp(a, "--temp")) { NEXT(); if (sn_cli_parse_f64(argv[i], &o->temp) || !(o->temp >= 0)) return sn_cli_usage_error("--temp: expected a number >= 0, got '%s'", argv[i]); }
        else if (!strcmp(a, "--top-k")) { NEXT(); if (sn_cli_parse_i64(argv[i], 0, INT32_MAX, &o->top_k)) return sn_cli_usage_error("--top-k: expected an integer >= 0, got '%s'", argv[i]); }
        else if (!strcmp(a, "--min-p")) { NEXT(); if (sn_cli_parse_f64(argv[i], &o->min_p) || !(o->min_p >= 0 && o->min_p <= 1)) return sn_cli_usage_error("--min-p: expected 0 <= M <= 1, got '%s'", argv[i]); }
        else if (!strcmp(a, "--top-p")) { NEXT(); if (sn_cli_parse_f64(argv[i], &o->top_p) || !(o->top_p > 0 && o->top_p <= 1)) return sn_cli_usage_error("--top-p: expected 0 < P <= 1, got '%s'", argv[i]); }
        else if (!strcmp(a, "--seed")) { NEXT(); if (sn_cli_parse_i64(argv[i], 0, UINT32_MAX, &o->seed)) return sn_cli_usage_error("--seed: expected 0..4294967295, got '%s'", argv[i]); }
        else if (!strcmp(a, "--kv")) {
            NEXT();
            if (!strcmp(argv[i], "f16")) o->kv_f32 = 0;
            else if (!strcmp(argv[i], "f32")) o->kv_f32 = 1;
            else return sn_cli_usage_error("--kv: expected f16 or f32, got '%s'", argv[i]);
        }
        else if (!strcmp(a, "-cnv") || !strcmp(a, "--conversation")) o->cnv = 1;
        else if (!strcmp(a, "-no-cnv") || !strcmp(a, "--no-conversation")) o->cnv = -1;
        else if (!strcmp(a, "-sys") || !strcmp(a, "--system-prompt")) { NEXT(); o->system = argv[i]; }
        else if (!strcmp(a, "--no-bos")) o->no_bos = 1;
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--tokenize")) o->tokenize = 1;
        else if (!strcmp(a, "--ignore-eos")) o->ignore_eos = 1;
        else if (!strcmp(a, "--verify")) o->verify = 1;
        else if (!strcmp(a, "--mmap")) o->mmap_weights = 1;
        else if (!strcmp(a, "--warmup")) o->warmup = 1;
        else if (a[0] == '-' && a[1]) return sn_cli_usage_error("unknown option '%s'", a);
        else if (!o->model) o->model = a;
        else if (!o->prompt && !o->prompt_ids && !o->file) o->prompt = a; /* llama-run MODEL PROMPT */
        else return sn_cli_usage_error("unexpected argument '%s' (the model is '%s', the prompt already given)", a, o->model);
#undef NEXT
    }
    if (!o->model) return sn_cli_usage_error("no model given (MODEL.gguf or -m MODEL)");
    if (o->ignored[0] && !o->tokenize)
        fprintf(stderr, "%s: note: ignoring %s: sunny-run runs on the CPU\n", sn_cli_prog(), o->ignored);
    const int sources = !!o->prompt + !!o->prompt_ids + !!o->file;
    if (o->cnv == 1 && (sources || o->tokenize || o->json))
        return sn_cli_usage_error("-cnv reads the turns from stdin: it takes no -p, --prompt-ids, -f, --tokenize or --json");
    if (o->cnv == 1) return -1;
    if (sources == 0 && o->cnv == 0 && !o->tokenize && !o->json) return -1; /* chat if the model has a template */
    if (sources != 1) return sn_cli_usage_error("give exactly one of -p, --prompt-ids, -f%s", o->cnv < 0 ? "" : " (or -cnv)");
    if (o->tokenize && o->prompt_ids) return sn_cli_usage_error("--tokenize takes -p or -f");
    return -1;
}

/* The prompt text from -p or -f (NULL with --prompt-ids). */
static int prompt_text(const opts *o, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (o->prompt) {
        *len = strlen(o->prompt);
        *text = malloc(*len + 1);
        if (!*text) return -1;
        memcpy(*text, o->prompt, *len + 1);
    } else if (o->file) {
        *text = read_file(o->file, len);
        if (!*text && !errno)
            sn_cli_errorf("%s: longer than the %u MB budget for a prompt file (SN_BUDGET_PROMPT_BYTES)", o->file,
                          SN_BUDGET_PROMPT_BYTES >> 20);
        else if (!*text) sn_cli_errorf("%s: cannot read: %s", o->file, strerror(errno));
        if (!*text) return -1;
    }
    return 0;
}

static int64_t encode(const sn_tokenizer *tok, const char *text, size_t len, int add_special, int32_t **ids, sn_err *err) {
    size_t cap = len + 16;
    for (int attempt = 0; attempt < 2; attempt++) {
        *ids = malloc(cap * sizeof(int32_t));
        if (!*ids) { sn_err_set(err, SN_ENOMEM, "out of memory"); return -1; }
        const int64_t n = sn_tok_encode(tok, text, len, add_special, 1, *ids, cap, err);
        if (n < 0) { free(*ids); *ids = NULL; return -1; }
        if ((size_t)n <= cap) return n;
        free(*ids);
        cap = (size_t)n;
    }
    sn_err_set(err, SN_EINVAL, "tokenizer returned inconsistent counts");
    return -1;
}

static char *decode(const sn_tokenizer *tok, const int32_t *ids, int64_t n, size_t *len) {
    size_t cap = 64 + (size_t)n * 8;
    for (int attempt = 0; attempt < 2; attempt++) {
        char *b = malloc(cap + 1);
        if (!b) return NULL;
        const int64_t r = sn_tok_decode(tok, ids, (size_t)n, 0, b, cap);
        if (r < 0) { free(b); return NULL; }
        if ((size_t)r <= cap) { b[r] = 0; *len = (size_t)r; return b; }
        free(b);
        cap = (size_t)r;
    }
    return NULL;
}

/* A directory or a missing path gets a message that says what to do instead. */
static int check_model_path(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        sn_cli_errorf("%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(sb.st_mode)) {
        sn_cli_errorf("%s is a directory, not a model file; if it is a Hugging Face model folder, convert it "
                      "first with sunny-convert:\n  sunny-convert %s -o model.gguf", path, path);
        return -1;
    }
    /* Hugging Face / PyTorch weights: the exact command that makes a GGUF of them */
    static const char *const hf_ext[] = {".safetensors", ".bin", ".pt", ".pth"};
    const size_t n = strlen(path);
    for (size_t i = 0; i < sizeof hf_ext / sizeof hf_ext[0]; i++) {
        const size_t e = strlen(hf_ext[i]);
        if (n <= e || strcmp(path + n - e, hf_ext[i]) != 0) continue;
        const char *slash = strrchr(path, '/');
        const int dl = slash ? (int)(slash - path) : 1;
        sn_cli_errorf("%s holds Hugging Face / PyTorch weights, which sunny-run does not read; convert the "
                      "model folder first, then run the GGUF:\n  sunny-convert %.*s -o model.gguf\n"
                      "  sunny-run model.gguf -p \"...\"", path, dl, slash ? path : ".");
        return -1;
    }
    return 0;
}

/* {arch}.context_length, or 0. */
static int64_t trained_ctx(const sn_gguf *g) {
    char *arch = sn_gguf_str_dup(g, "general.architecture");
    if (!arch) return 0;
    char key[96];
    snprintf(key, sizeof key, "%s.context_length", arch);
    free(arch);
    const int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return 0;
    switch (sn_gguf_kv_type(g, i)) {
    case SN_GGUF_U32: return sn_gguf_get_u32(g, i);
    case SN_GGUF_I32: return sn_gguf_get_i32(g, i);
    case SN_GGUF_U64: return (int64_t)sn_gguf_get_u64(g, i);
    default: return 0;
    }
}

/* stdout went to a full disk or a closed pipe: say so once (stdout has no path to repeat). */
static int check_stdout(void) {
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    sn_cli_errorf("cannot write the output: %s", strerror(errno ? errno : EIO));
    return -1;
}

static int run_tokenize(const opts *o) {
    sn_err err = {0};
    sn_model_meta *g;
    if (check_model_path(o->model)) return SN_EXIT_FAIL;
    if (sn_model_meta_open(o->model, &g, &err)) return sn_cli_fail(&err);
    sn_tokenizer *tok;
    if (sn_tok_load(sn_model_meta_gguf(g), &tok, &err)) { sn_model_meta_close(g); return sn_cli_fail(&err); }
    char *text;
    size_t len;
    int rc = SN_EXIT_FAIL;
    if (prompt_text(o, &text, &len) == 0) {
        int32_t *ids;
        const int64_t n = encode(tok, text, len, !o->no_bos, &ids, &err);
        if (n < 0) {
            sn_cli_fail(&err);
        } else {
            if (o->json) { fputs("{\"ids\":", stdout); json_ids(stdout, ids, n); fputs("}\n", stdout); }
            else { for (int64_t i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]); putchar('\n'); }
            free(ids);
            rc = SN_EXIT_OK;
        }
        free(text);
    }
    sn_tok_free(tok);
    sn_model_meta_close(g);
    return rc;
}

/* Each generated token: streamed to stdout (its text, or its id without a tokenizer) unless --json;
 * the end-of-generation tokens stop the loop unless --ignore-eos or -n -2. */
typedef struct {
    const opts *o;
    const sn_tokenizer *tok;
    int32_t *ids;
    int64_t n;
    int stop_at_eog;
} gen_out;

static int on_token(void *ud, int32_t id, const float *logits, int64_t n_vocab) {
    gen_out *g = ud;
    (void)logits, (void)n_vocab;
    g->ids[g->n++] = id;
    if (!g->o->json) {
        if (g->tok) {
            char piece[256];
            const int64_t r = sn_tok_piece(g->tok, id, 0, piece, sizeof(piece));
            if (r > 0) fwrite(piece, 1, (size_t)(r < (int64_t)sizeof(piece) ? r : (int64_t)sizeof(piece)), stdout);
        } else {
            printf(g->n > 1 ? " %d" : "%d", id);
        }
        fflush(stdout);
    }
    return g->stop_at_eog && g->tok && sn_tok_is_eog(g->tok, id);
}

/* The sampler chain the flags describe (llama.cpp's order: penalties, then greedy or top-k ...). */
static void sampler_params(const opts *o, sn_sampler_params *sp) {
    sn_sampler_params_default(sp);
    sp->temp = (float)o->temp;
    sp->top_k = (int32_t)o->top_k;
    sp->top_p = (float)o->top_p;
    sp->min_p = (float)o->min_p;
    sp->seed = (uint32_t)o->seed;
    sp->penalty_last_n = (int32_t)o->repeat_last_n;
    sp->penalty_repeat = (float)o->repeat_penalty;
    sp->penalty_freq = (float)o->frequency_penalty;
    sp->penalty_present = (float)o->presence_penalty;
}

/* Threads, KV type, --verify, --mmap; the context size is the caller's. */
static void model_params(const opts *o, sn_model_params *mp) {
    sn_model_params_default(mp);
    mp->tuning = o->env.tuning; /* SN_CPU and the other SN_* knobs (env.h) */
    mp->n_threads = (int)o->threads;
    mp->kv_type = o->kv_f32 ? SN_KV_F32 : SN_KV_F16;
    mp->verify = o->verify;
    mp->mmap_weights = o->mmap_weights;
}

static int run_generate(const opts *o) {
    sn_err err = {0};
    int rc = SN_EXIT_FAIL;
    sn_model_meta *g = NULL;
    sn_tokenizer *tok = NULL;
    sn_model *m = NULL;
    sn_sampler *smp = NULL;
    int32_t *prompt = NULL, *out = NULL;
    float *logits = NULL;
    char *text = NULL, *gen_text = NULL;
    size_t text_len = 0;
    int64_t n_prompt;

    /* Tokenizer first (header-only open): the prompt length sizes the context. */
    if (check_model_path(o->model)) return SN_EXIT_FAIL;
    if (sn_model_meta_open(o->model, &g, &err)) return sn_cli_fail(&err);
    sn_err terr = {0};
    if (sn_tok_load(sn_model_meta_gguf(g), &tok, &terr)) tok = NULL;
    if (o->prompt_ids) {
        n_prompt = parse_ids(o->prompt_ids, &prompt);
        if (n_prompt < 0) { rc = sn_cli_usage_error("--prompt-ids: expected comma-separated ids, got '%s'", o->prompt_ids); goto done; }
    } else {
        if (!tok) { err = terr; sn_cli_fail(&err); goto done; }
        if (prompt_text(o, &text, &text_len)) goto done;
        n_prompt = encode(tok, text, text_len, !o->no_bos, &prompt, &err);
        if (n_prompt < 0) { sn_cli_fail(&err); goto done; }
        if (n_prompt == 0) { sn_cli_errorf("the prompt is empty after tokenization"); goto done; }
    }

    sn_model_params mp;
    model_params(o, &mp);
    const int64_t n_train = trained_ctx(sn_model_meta_gguf(g));
    /* -n -1 / -2 run to the context's end: without -c, the trained context, at most 4096 (llama.cpp's
     * usual -c), so a million-token RWKV context does not size a cache */
    const int64_t open_ctx = n_train > 0 && n_train < 4096 ? n_train : 4096;
    mp.n_ctx = o->ctx ? o->ctx : o->n_predict < 0 ? (n_prompt < open_ctx ? open_ctx : n_prompt + 1) : n_prompt + o->n_predict;
    if (o->ctx && n_train > 0 && o->ctx > n_train)
        sn_cli_warnf("-c %lld is above the context %s was trained for (%lld tokens); output past %lld "
                     "tokens may degrade", (long long)o->ctx, o->model, (long long)n_train, (long long)n_train);
    if (sn_model_load(o->model, &mp, &m, &err)) {
        sn_cli_moe_not_yet(sn_model_meta_gguf(g), o->model, &err);
        sn_cli_fail(&err);
        goto done;
    }
    const int64_t n_predict = o->n_predict >= 0 ? o->n_predict : sn_model_n_ctx(m) - n_prompt;
    const int stop_at_eog = !o->ignore_eos && o->n_predict != -2; /* -2: fill the context */
    if (n_predict < 0 || n_prompt + n_predict > sn_model_n_ctx(m)) {
        char nwhat[64];
        if (o->n_given) snprintf(nwhat, sizeof nwhat, "-n %lld", (long long)o->n_predict);
        else snprintf(nwhat, sizeof nwhat, "%lld tokens to generate (the default -n)", (long long)o->n_predict);
        sn_cli_errorf("%s: prompt (%lld tokens) + %s exceed the context size %lld%s", o->model,
                      (long long)n_prompt, nwhat, (long long)sn_model_n_ctx(m),
                      o->ctx ? " (-c)" : " (the model's trained context)");
        goto done;
    }
    const int64_t V = sn_model_n_vocab(m);
    sn_sampler_params sp;
    sampler_params(o, &sp);
    if (sn_sampler_new(&sp, &smp, &err)) { sn_cli_fail(&err); goto done; }
    for (int64_t i = 0; i < n_prompt; i++) sn_sampler_accept(smp, prompt[i]); /* as llama-cli does */
    logits = malloc((size_t)V * sizeof(float));
    out = malloc(((size_t)n_predict + 1) * sizeof(int32_t));
    if (!logits || !out) { sn_cli_errorf("out of memory"); goto done; }
    memset(logits, 0, (size_t)V * sizeof(float)); /* faulted in before the timed evals */

    if (o->warmup) { /* the same evaluation once, untimed, then an empty context */
        if (sn_model_eval(m, prompt, n_prompt, logits, &err)) { sn_cli_fail(&err); goto done; }
        sn_model_reset(m);
    }
    gen_out g_out = {o, tok, out, 0, stop_at_eog};
    sn_gen_times tm;
    if (sn_generate(m, smp, prompt, n_prompt, n_predict, logits, on_token, &g_out, NULL, &tm, &err)) {
        sn_cli_fail(&err);
        goto done;
    }
    const int64_t n_out = g_out.n;
    const double pf = tm.prefill_s > 0 ? (double)n_prompt / tm.prefill_s : 0;
    const double dc = tm.decode_s > 0 ? (double)tm.n_decode / tm.decode_s : 0;
    if (o->json) {
        size_t gl = 0;
        gen_text = tok ? decode(tok, out, n_out, &gl) : NULL;
        fputs("{\"prompt_ids\":", stdout);
        json_ids(stdout, prompt, n_prompt);
        fputs(",\"ids\":", stdout);
        json_ids(stdout, out, n_out);
        fputs(",\"text\":", stdout);
        json_str(stdout, gen_text ? gen_text : "", gen_text ? gl : 0);
        printf(",\"prefill_tok_s\":%.3f,\"decode_tok_s\":%.3f,\"format\":\"%s\"", pf, dc, sn_model_format(m));
        /* log-softmax of the logits that chose the last token: the oracle's top_logprobs */
        if (n_out > 0) {
            float mx = logits[0];
            for (int64_t i = 1; i < V; i++) mx = logits[i] > mx ? logits[i] : mx;
            double sum = 0;
            for (int64_t i = 0; i < V; i++) sum += exp((double)logits[i] - mx);
            const double lse = mx + log(sum);
            int32_t top[8];
            const int nt = sn_top_k(logits, V, 8, top);
            printf(",\"max_abs_logit\":%.6f", (double)fmaxf(fabsf(mx), fabsf(logits[sn_argmin(logits, V)])));
            fputs(",\"top_logprobs\":[", stdout);
            for (int k = 0; k < nt; k++) printf(k ? ",[%d,%.6f]" : "[%d,%.6f]", top[k], logits[top[k]] - lse);
            fputs("]", stdout);
            fputs(",\"top_logits\":[", stdout); /* the raw logits, as llama.cpp's get_logits gives them */
            for (int k = 0; k < nt; k++) printf(k ? ",[%d,%.6f]" : "[%d,%.6f]", top[k], (double)logits[top[k]]);
            fputs("]", stdout);
        }
        fputs(",\"kernels\":", stdout);
        json_str(stdout, sn_model_kernels_name(m), strlen(sn_model_kernels_name(m)));
        const uint64_t *hist;
        const int64_t n_exp = sn_model_expert_histogram(m, &hist);
        if (n_exp > 0) { /* how often each expert was chosen, over all layers (prompt and generation) */
            fputs(",\"expert_histogram\":[", stdout);
            for (int64_t e = 0; e < n_exp; e++) printf(e ? ",%llu" : "%llu", (unsigned long long)hist[e]);
            fputs("]", stdout);
        }
        fputs("}\n", stdout);
    } else {
        putchar('\n');
        fprintf(stderr, "%s: prompt %lld tokens, %.2f tok/s; generated %lld tokens, %.2f tok/s (%s kernels, %d thread%s)\n",
                sn_cli_prog(), (long long)n_prompt, pf, (long long)n_out, dc, sn_model_kernels_name(m), (int)o->threads,
                o->threads == 1 ? "" : "s");
    }
    rc = SN_EXIT_OK;
done:
    free(gen_text);
    free(text);
    free(prompt);
    free(out);
    free(logits);
    sn_sampler_free(smp);
    sn_model_free(m);
    sn_tok_free(tok);
    sn_model_meta_close(g);
    return rc;
}

int main(int argc, char **argv) {
    sn_cli_init("sunny-run");
    sn_cli_json_errors(argc, argv);
    opts o;
    const int r = parse_args(argc, argv, &o);
    if (r < 0) sn_cli_read_env(&o.env); /* parse_args set o; the SN_* knobs go into each model's tuning */
    if (r >= 0) return r;
    const int sources = !!o.prompt + !!o.prompt_ids + !!o.file;
    if (o.cnv == 0 && sources == 0) { /* llama-cli's default: chat when the model has a template */
        if (check_model_path(o.model)) return SN_EXIT_FAIL;
        if (!sn_chat_has_template(o.model))
            return sn_cli_usage_error("give exactly one of -p, --prompt-ids, -f (%s has no chat template for -cnv)", o.model);
        o.cnv = 1;
        fprintf(stderr, "%s: note: no prompt given and the GGUF has a chat template: chat mode (-no-cnv to refuse)\n",
                sn_cli_prog());
    }
    if (o.cnv == 1) {
        if (check_model_path(o.model)) return SN_EXIT_FAIL;
        sn_chat_opts co = {.model = o.model, .system = o.system, .n_predict = o.n_given ? o.n_predict : -1};
        model_params(&o, &co.mp);
        co.mp.n_ctx = o.ctx ? o.ctx : 4096;
        sampler_params(&o, &co.sp);
        const int crc = sn_chat_run(&co);
        return check_stdout() && crc == SN_EXIT_OK ? SN_EXIT_FAIL : crc;
    }
    int rc = o.tokenize ? run_tokenize(&o) : run_generate(&o);
    if (check_stdout() && rc == SN_EXIT_OK) rc = SN_EXIT_FAIL;
    return rc;
}
