/* sunny-convert.c - the command line of the HF -> GGUF converter.
 *
 * Parses flags, installs the SIGINT/SIGTERM handlers of cli.h that ask the library to stop (it
 * then removes its tmp file), and prints: the plan (--dry-run), progress on a TTY, the verify report,
 * the one-line summary on stderr (always, as llama.cpp's converter says what it wrote) and the --json
 * summary. All conversion logic lives in convert/convert.c; --blob hands the input (an HF folder or a
 * GGUF) to convert/blob_convert.c, which writes a runtime blob (docs/BLOB.md) instead. */
#include "cli.h"
#include "arch.h"
#include "blob_convert.h"
#include "convert.h"
#include "ggml_types.h"
#include "gguf.h"
#include "sizefmt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* One line per output type, from the outtype table. */
static void usage_outtypes(FILE *f) {
    for (int t = 0; t < SN_OUTTYPE_COUNT; t++) {
        const sn_outtype_info *i = sn_outtype_info_of((sn_outtype)t);
        fprintf(f, "                       %-7s %s%s\n", i->name, i->desc,
                i->recipe == SN_RECIPE_QUANTIZE ? " (llama-quantize's recipe)" : "");
    }
}

static void usage(FILE *f) {
    fprintf(f,
            "Usage: sunny-convert MODEL_DIR -o OUT.gguf [options]\n"
            "       sunny-convert WEIGHTS.{bin,pt,pth,safetensors} --config config.json -o OUT.gguf [options]\n"
            "       sunny-convert MODEL.gguf -o OUT.gguf --outtype TYPE [--allow-requantize] [options]\n"
            "       sunny-convert (MODEL_DIR | MODEL.gguf) --blob -o OUT.snb --dtype fp32|fp16|int4\n"
            "                     [--head fp16|int4] [-t N] [--verify] [--force] [--json]\n"
            "Convert a Hugging Face model folder (config.json, tokenizer files and *.safetensors, or, when it has\n"
            "no safetensors, PyTorch pytorch_model.bin / pytorch_model-0000N-of-0000M.bin + index) to GGUF.\n"
            "A single PyTorch checkpoint (torch.save, torch >= 1.6) is read without Python: its pickle runs in a\n"
            "data-only VM that refuses every global outside torch.load(weights_only=True)'s allow-list.\n"
            "Supported architectures: %s.\n\n"
            "Options:\n"
            "  -o, --outfile PATH   output GGUF file, or a folder to write the default name in; {ftype}\n"
            "                       ({outtype}, {FTYPE}, {OUTTYPE}) is replaced by the output type (default: in\n"
            "                       the model's folder, named like convert_hf_to_gguf.py: NAME-SIZE-FINETUNE-\n"
            "                       VERSION-TYPE.gguf, e.g. Qwen3-0.6B-Q8_0.gguf; a GGUF input: ggml-model-TYPE.gguf)\n"
            "  --outtype TYPE       output type, any case (default auto); the quantized ones write exactly\n"
            "                       what llama-quantize writes for that file type from the f32 conversion:\n",
            sn_arch_supported_list());
    usage_outtypes(f);
    fprintf(f,
            "  --allow-requantize   a GGUF input whose matrices are already quantized: quantize them again\n"
            "                       (quality suffers; default: refuse)\n"
            "  --name NAME          general.name (default: from README.md, config.json or the folder name)\n"
            "  --config PATH        config.json for a single weight file (default: the one next to it); the\n"
            "                       tokenizer files and README.md are read from its folder\n"
            "  --state-key KEY      PyTorch checkpoints: the state dict's key in the saved dict (\"model\",\n"
            "                       \"a.b\" nests); default: the saved dict itself or its unique dict of tensors\n"
            "  --vocab FILE         RWKV: the world vocabulary (rwkv_vocab_v20230424.txt) when it is not beside\n"
            "                       the weights, e.g. for a BlinkDL .pth (default: the one in the folder)\n"
            "  -t, --threads N      conversion threads (default: all CPUs)\n"
            "  --verify             re-read the written file and check every tensor against the source (default: off)\n"
            "  --dry-run            print every tensor (HF name -> GGUF name, source dtype, shape, type, bytes);\n"
            "                       write nothing (default: off)\n"
            "  --force              overwrite the output if it exists (default: off)\n"
            "  --split-max-tensors N  write shards of at most N tensors, named OUT-00001-of-0000K.gguf with\n"
            "                       split.no/split.count/split.tensors.count, as convert_hf_to_gguf.py does\n"
            "                       (default: 0, one file)\n"
            "  --split-max-size S   shards of at most S tensor bytes (S: a number, K, M or G = 1000^n)\n"
            "                       (default: 0, one file)\n"
            "  --json               print a JSON summary on stdout (default: off)\n"
            "  --pre NAME           force tokenizer.ggml.pre when the pre-tokenizer is not recognised\n"
            "                       (default: none: detected from tokenizer.json)\n"
            "  --blob               write a sunny runtime blob (.snb, docs/BLOB.md) for sunny-run instead; an HF\n"
            "                       folder is streamed, no intermediate GGUF (default: off)\n"
            "  --dtype TYPE         blob weight type: fp32, fp16 or int4 (INT4G32 matrices) (default: none,\n"
            "                       required with --blob)\n"
            "  --head TYPE          int4 blobs: the output head as q6_k (Q8_0/fp16 if rows do not fit), fp16\n"
            "                       or int4 (default: q6_k; a tied model then shares the embedding's rows)\n"
            "  -h, --help           print this help and exit\n"
            "  --version            print the version and exit\n\n"
            "Example:\n"
            "  sunny-convert ./Llama-3.2-1B-Instruct -o llama-3.2-1b-q4_k_m.gguf --outtype q4_k_m\n"
            "  sunny-convert llama-3.2-1b-f16.gguf -o llama-3.2-1b-q6_k.gguf --outtype Q6_K\n");
}

typedef struct {
    int tty, json, dry_run, verify;
    int bar_open; /* a progress line is on the terminal without its newline */
    double last;
    double rate;            /* bytes/s over the last few seconds (0 until the second tick) */
    double prev_t;
    uint64_t prev_done;
    int n_rates;            /* rate samples taken */
} ui_t;

static void on_plan(void *ud, const sn_convert_plan_entry *e) {
    ui_t *u = ud;
    if (!u->dry_run || u->json) return;
    char shape[96];
    size_t k = 0;
    for (uint32_t d = 0; d < e->n_dims; d++)
        k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%llu", d ? " x " : "", (unsigned long long)e->ne[d]);
    char hf[1024];
    printf("%-48s -> %-28s %-6s -> %-5s [%s] %llu bytes\n", sn_cli_clean(e->hf_name, hf, sizeof hf), e->gguf_name, e->src_dtype,
           sn_ggml_type_name(e->type), shape, (unsigned long long)e->bytes);
}

/* Ends the progress line, so what follows starts on a line of its own. */
static void end_bar(ui_t *u) {
    if (!u->bar_open) return;
    fputc('\n', stderr);
    u->bar_open = 0;
}

/* The remaining time at the recent rate (bytes/s averaged over the last ~1.5 s: the tensors differ in cost per
 * byte, e.g. a quantized output head, so the rate since the start runs fast), once that rate means
 * something: after two seconds, three rate samples and 2% of the data; "--" before (a first small
 * tensor written in a millisecond would give an ETA of days, and a first sample taken across a
 * stall, e.g. a quantized head, one 3x too short). */
static void eta_str(const ui_t *u, const sn_convert_progress *p, char *buf, size_t cap) {
    if (p->bytes_done >= p->bytes_total) snprintf(buf, cap, "0s");
    else if (p->seconds < 2.0 || u->n_rates < 3 || p->bytes_done * 50 < p->bytes_total || u->rate <= 0)
        snprintf(buf, cap, "--");
    else snprintf(buf, cap, "%.0fs", (double)(p->bytes_total - p->bytes_done) / u->rate);
}

static void on_progress(void *ud, const sn_convert_progress *p) {
    ui_t *u = ud;
    if (!u->tty) return;
    if (p->seconds - u->last < 0.2 && p->bytes_done < p->bytes_total) return;
    const double dt = p->seconds - u->prev_t;
    if (dt > 0 && p->bytes_done >= u->prev_done) {
        const double inst = (double)(p->bytes_done - u->prev_done) / dt, a = dt / 1.5 < 1.0 ? dt / 1.5 : 1.0;
        u->rate = u->rate > 0 ? u->rate + a * (inst - u->rate) : inst;
        u->n_rates++;
    }
    u->prev_t = p->seconds;
    u->prev_done = p->bytes_done;
    u->last = p->seconds;
    char done[24], total[24], eta[24];
    sn_size_short(p->bytes_done, done, sizeof done);
    sn_size_short(p->bytes_total, total, sizeof total);
    eta_str(u, p, eta, sizeof eta);
    fprintf(stderr, "\r[%zu/%zu] %-28s %10s / %-10s %7.1f MB/s  ETA %-6s\033[K", p->i_tensor + 1, p->n_tensors,
            p->gguf_name, done, total, u->rate / 1e6, eta);
    u->bar_open = 1;
    fflush(stderr);
}

static void on_verify(void *ud, const char *name, int ok, double max_err, double bound) {
    ui_t *u = ud;
    char clean[1024];
    end_bar(u);
    if (!ok || !u->json)
        fprintf(u->json ? stderr : stdout, "verify %-32s %s  max_err %.3g%s\n", sn_cli_clean(name, clean, sizeof clean),
                ok ? "ok  " : "FAIL",
                max_err, bound > 0 ? "" : " (exact)");
}

/* --blob: everything after flag parsing for the runtime-blob path. */
static int run_blob(const sn_blob_convert_opts *bo, int json) {
    sn_blob_convert_result r;
    sn_err err;
    memset(&err, 0, sizeof err);
    sn_status st = sn_blob_convert(bo, &r, &err);
    if (bo->on_progress) end_bar(bo->ud);
    if (st != SN_OK) {
        sn_cli_fail(&err);
        return sn_cli_exit_code(SN_EXIT_FAIL);
    }
    if (json) {
        printf("{\"output\": \"");
        for (const char *s = bo->out_path; *s; s++) {
            unsigned char c = (unsigned char)*s;
            if (c == '"' || c == '\\') printf("\\%c", c);
            else if (c < 0x20) printf("\\u%04x", c);
            else putchar(c);
        }
        printf("\", \"dtype\": \"%s\", \"n_tensors\": %llu, \"n_int4\": %llu, \"n_fp16\": %llu, \"n_fp32\": %llu, "
               "\"bytes\": %llu, \"seconds\": %.3f, \"int4_max_rel_err\": %.6g, \"verified\": %s}\n",
               bo->dtype == SN_BLOBTYPE_FP32 ? "fp32" : bo->dtype == SN_BLOBTYPE_FP16 ? "fp16" : "int4",
               (unsigned long long)r.n_tensors, (unsigned long long)r.n_int4, (unsigned long long)r.n_fp16,
               (unsigned long long)r.n_fp32, (unsigned long long)r.bytes, r.seconds, r.verify_max_rel_err,
               bo->verify ? "true" : "false");
    } else if (bo->verify) {
        printf("verify: %s reopened with every CRC32 checked (%llu tensors)\n", bo->out_path,
               (unsigned long long)r.n_tensors);
    }
    char size[SN_SIZE_STR_MAX];
    fprintf(stderr, "%s: wrote %s: sunny blob %s, %llu tensors (%llu int4, %llu fp16, %llu fp32), %s in %.1fs\n",
            sn_cli_prog(), bo->out_path,
            bo->dtype == SN_BLOBTYPE_FP32 ? "fp32" : bo->dtype == SN_BLOBTYPE_FP16 ? "fp16" : "int4",
            (unsigned long long)r.n_tensors, (unsigned long long)r.n_int4, (unsigned long long)r.n_fp16,
            (unsigned long long)r.n_fp32, sn_size_str(r.bytes, size, sizeof size), r.seconds);
    return SN_EXIT_OK;
}

/* A GGUF without tokenizer.chat_template is a base model to Ollama and LM Studio: say so now, with
 * the fix, rather than at install time. */
static void warn_no_template(const sn_convert_opts *o, const char *out_path) {
    sn_gguf *g;
    sn_err err = {0};
    if (sn_gguf_open(out_path, SN_GGUF_NO_DATA, &g, &err) != SN_OK) return;
    const int has = sn_gguf_find_key(g, "tokenizer.chat_template") >= 0;
    sn_gguf_close(g);
    if (has) return;
    sn_cli_warnf("%s has no chat template (no tokenizer_config.json \"chat_template\", chat_template.jinja or "
                 "chat_template.json in %s), so %s has none: Ollama and LM Studio will run it as a base model "
                 "(plain text completion, no chat turns). If it is a chat/instruct model, copy the instruct "
                 "model's tokenizer_config.json (or chat_template.jinja) into the folder and convert again, or "
                 "give the template when installing: sunny-integrate ollama %s --template FILE",
                 o->model_dir, o->model_dir, out_path, out_path);
}

static long peak_rss_mb(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    return ru.ru_maxrss / 1024;
}

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    sn_cli_init("sunny-convert");
    sn_cli_json_errors(argc, argv);
    sn_convert_opts o;
    memset(&o, 0, sizeof o);
    sn_cli_env env;
    sn_cli_read_env(&env);
    o.tmp_dir = env.lib.tmpdir;
    ui_t ui;
    memset(&ui, 0, sizeof ui);
    int json = 0, blob = 0, dtype = -1, head = -1;
    const char *outtype_flag = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return SN_EXIT_OK; }
        if (!strcmp(a, "--version")) { sn_cli_print_version(); return SN_EXIT_OK; }
        if (!strcmp(a, "-o") || !strcmp(a, "--outfile") || !strcmp(a, "--outtype") || !strcmp(a, "--name") ||
            !strcmp(a, "-t") || !strcmp(a, "--threads") || !strcmp(a, "--pre") || !strcmp(a, "--dtype") ||
            !strcmp(a, "--head") || !strcmp(a, "--config") || !strcmp(a, "--state-key") || !strcmp(a, "--vocab") ||
            !strcmp(a, "--split-max-tensors") || !strcmp(a, "--split-max-size")) {
            if (i + 1 >= argc) return sn_cli_usage_error("%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "-o") || !strcmp(a, "--outfile")) o.out_path = v;
            else if (!strcmp(a, "--name")) o.name = v;
            else if (!strcmp(a, "--pre")) o.pre_override = v;
            else if (!strcmp(a, "--config")) o.config_path = v;
            else if (!strcmp(a, "--state-key")) o.state_key = v;
            else if (!strcmp(a, "--vocab")) o.vocab_path = v;
            else if (!strcmp(a, "--split-max-tensors")) {
                int64_t n;
                if (sn_cli_parse_i64(v, 0, INT32_MAX, &n) != 0)
                    return sn_cli_usage_error("--split-max-tensors wants a count, got '%s'", v);
                o.split_max_tensors = n;
            } else if (!strcmp(a, "--split-max-size")) {
                /* convert_hf_to_gguf.py split_str_to_n_bytes: digits, optionally K, M or G (powers of 1000) */
                size_t l = strlen(v);
                uint64_t mul = l && v[l - 1] == 'K' ? 1000ull : l && v[l - 1] == 'M' ? 1000000ull
                             : l && v[l - 1] == 'G' ? 1000000000ull : 1;
                char num[32];
                snprintf(num, sizeof num, "%.*s", (int)(mul > 1 ? l - 1 : l), v);
                int64_t n;
                if (!num[0] || strspn(num, "0123456789") != strlen(num) || sn_cli_parse_i64(num, 0, INT64_MAX / 1000000000, &n))
                    return sn_cli_usage_error("--split-max-size wants a number, optionally followed by K, M or G, got '%s'", v);
                o.split_max_bytes = (uint64_t)n * mul;
            }
            else if (!strcmp(a, "--dtype")) {
                dtype = sn_blobtype_parse(v);
                if (dtype < 0) return sn_cli_usage_error("unknown --dtype '%s' (fp32, fp16, int4)", v);
            } else if (!strcmp(a, "--head")) {
                if (strcmp(v, "fp16") != 0 && strcmp(v, "int4") != 0 && strcmp(v, "q6_k") != 0)
                    return sn_cli_usage_error("unknown --head '%s' (q6_k, fp16, int4)", v);
                head = !strcmp(v, "fp16") ? 1 : !strcmp(v, "int4") ? 2 : 0;
            }
            else if (!strcmp(a, "--outtype")) {
                int t = sn_outtype_parse(v);
                if (t < 0) {
                    char names[512];
                    sn_outtype_list(names, sizeof names);
                    return sn_cli_usage_error("unknown --outtype '%s' (any case of: %s)", v, names);
                }
                o.outtype = (sn_outtype)t;
                outtype_flag = a;
            } else {
                int64_t n;
                if (sn_cli_parse_i64(v, 1, 64, &n) != 0) return sn_cli_usage_error("%s wants 1..64, got '%s'", a, v);
                o.n_threads = (int)n;
            }
        } else if (!strcmp(a, "--verify")) o.verify = 1;
        else if (!strcmp(a, "--blob")) blob = 1;
        else if (!strcmp(a, "--dry-run")) o.dry_run = 1;
        else if (!strcmp(a, "--force")) o.force = 1;
        else if (!strcmp(a, "--allow-requantize")) o.allow_requantize = 1;
        else if (!strcmp(a, "--json")) json = 1;
        else if (a[0] == '-' && a[1]) return sn_cli_usage_error("unknown option '%s'", a);
        else if (!o.model_dir) o.model_dir = a;
        else return sn_cli_usage_error("unexpected argument '%s' (one MODEL_DIR only)", a);
    }
    if (!o.model_dir) return sn_cli_usage_error("missing MODEL_DIR");
    if (!blob && (dtype >= 0 || head >= 0)) return sn_cli_usage_error("--dtype and --head need --blob");
    if (blob) {
        if (dtype < 0) return sn_cli_usage_error("--blob needs --dtype fp32|fp16|int4");
        if (head >= 0 && dtype != SN_BLOBTYPE_INT4) return sn_cli_usage_error("--head applies to --dtype int4 only");
        if (!o.out_path) return sn_cli_usage_error("missing -o OUT.snb");
        if (o.dry_run || outtype_flag || o.name || o.pre_override || o.config_path || o.state_key || o.vocab_path)
            return sn_cli_usage_error("--blob cannot be combined with --dry-run, --outtype, --name, --pre, --config, "
                                      "--state-key or --vocab");
        sn_blob_convert_opts bo;
        memset(&bo, 0, sizeof bo);
        bo.in_path = o.model_dir;
        bo.out_path = o.out_path;
        bo.dtype = (sn_blobtype)dtype;
        bo.head_fp16 = head == 1;
        bo.head_int4 = head == 2;
        bo.n_threads = o.n_threads;
        bo.tmp_dir = o.tmp_dir;
        bo.force = o.force;
        bo.verify = o.verify;
        bo.cancel = sn_cli_catch_signals();
        ui.tty = sn_cli_isatty_stderr() && !json;
        if (ui.tty) { bo.on_progress = on_progress; bo.ud = &ui; }
        return run_blob(&bo, json);
    }
    if (o.out_path && o.dry_run && !o.force) {
        /* a dry run writes nothing, so an existing output is not an error */
        o.force = 1;
    }

    o.cancel = sn_cli_catch_signals();

    ui.tty = sn_cli_isatty_stderr() && !json;
    ui.json = json;
    ui.dry_run = o.dry_run;
    o.on_plan = on_plan;
    o.on_progress = on_progress;
    o.on_verify = on_verify;
    o.ud = &ui;

    sn_convert_result r;
    sn_err err;
    memset(&err, 0, sizeof err);
    sn_status st = sn_convert(&o, &r, &err);
    end_bar(&ui);
    if (st != SN_OK) {
        sn_cli_fail(&err);
        return sn_cli_exit_code(SN_EXIT_FAIL);
    }
    if (r.requantized)
        fprintf(stderr, "warning: %zu tensors were already quantized and were quantized again: expect lower quality "
                "than quantizing from the F32/F16/BF16 original\n", r.requantized);
    if (r.derived_config[0] && !json)
        printf("config (no config.json; derived from tensor shapes): %s\n", r.derived_config);
    if (o.verify && !json)
        printf("verify: %zu tensors and %zu tokenizer keys checked, all match the source\n", r.verify_checked,
               r.verify_keys_checked);
    if (json) {
        printf("{\"arch\": ");
        json_str(r.arch);
        printf(", \"ftype\": ");
        json_str(r.ftype);
        printf(", \"n_tensors\": %zu, \"bytes\": %llu, \"src_bytes\": %llu, \"n_params\": %llu, "
               "\"seconds\": %.3f, \"data_seconds\": %.3f, \"sync_seconds\": %.3f, \"peak_rss_mb\": %ld, \"output\": ",
               r.n_tensors, (unsigned long long)r.bytes, (unsigned long long)r.src_bytes,
               (unsigned long long)r.n_params, r.seconds, r.data_seconds, r.sync_seconds, peak_rss_mb());
        if (o.dry_run) printf("null");
        else json_str(r.out_path);
        printf(", \"dry_run\": %s, \"tokenizer\": ", o.dry_run ? "true" : "false");
        json_str(r.vocab_model);
        printf(", \"pre\": ");
        json_str(r.vocab_pre);
        printf(", \"n_vocab\": %d", r.vocab_tokens);
        if (o.verify)
            printf(", \"verify\": {\"checked\": %zu, \"failed\": %zu, \"keys_checked\": %zu, \"keys_failed\": %zu}",
                   r.verify_checked, r.verify_failed, r.verify_keys_checked, r.verify_keys_failed);
        printf("}\n");
    } else if (o.dry_run) {
        char size[SN_SIZE_STR_MAX];
        printf("%zu tensors, %s of GGUF (%s, %s); nothing written%s%s%s\n", r.n_tensors,
               sn_size_str(r.bytes, size, sizeof size), r.arch, r.ftype, r.out_path[0] ? " (would be " : "",
               r.out_path, r.out_path[0] ? ")" : "");
    }
    if (!o.dry_run) {
        char size[SN_SIZE_STR_MAX];
        fprintf(stderr, "%s: wrote %s: GGUF %s %s, %zu tensors, %s in %.1fs", sn_cli_prog(), r.out_path, r.arch,
                r.ftype, r.n_tensors, sn_size_str(r.bytes, size, sizeof size), r.seconds);
        if (r.n_shards > 1) fprintf(stderr, " (the first of %zu shards)", r.n_shards);
        fputc('\n', stderr);
        if (r.n_skipped)
            fprintf(stderr, "%s: note: %zu source tensors not converted: not part of the %s text model (a vision "
                    "tower or projector, which llama.cpp converts separately with --mmproj)\n", sn_cli_prog(),
                    r.n_skipped, r.arch);
        warn_no_template(&o, r.out_path);
    }
    return SN_EXIT_OK;
}
