/* convert.c - the sunny-convert driver: plan everything, write the header, stream the tensors.
 *
 * Order of work (each step can fail before anything is written):
 *   1. config.json, tokenizer presence, architecture lookup, safetensors headers;
 *   2. the plan: every tensor mapped to its GGUF name, shape checked against the config, output type
 *      chosen (llama.cpp's rules, see sn_conv_choose_type), byte sizes known;
 *   3. the GGUF header: general.*, {arch}.*, tokenizer.* and all tensor infos;
 *   4. tensor data, one tensor at a time, in chunks of rows converted by n threads into one buffer,
 *      written, and the source pages released so RSS stays flat whatever the model size.
 * Output goes to OUT.tmp, fsynced and renamed; any failure or cancellation unlinks the tmp.
 * Step 2 is convert_plan.c, step 4 convert_write.c, --verify convert_verify.c (convert_internal.h). */
#include "convert_internal.h"

#include "ggml_types.h"
#include "model.h"
#include "outfile.h"
#include "path.h"
#include "vocab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "Q4_K_M" for q4_k_m: the result's label. */
static void upper_label(sn_outtype ot, char *out, size_t n) {
    snprintf(out, n, "%s", sn_outtype_name(ot));
    for (char *c = out; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
}

/* ---- the driver ---- */

/* The input is an HF folder or one weight file (a .safetensors or a PyTorch .bin/.pt/.pth). Finds
 * config.json (--config, else the folder's / the file's folder's) and the folder holding the
 * tokenizer and README (the config's folder). */
static sn_status resolve_inputs(const sn_convert_opts *o, char **cfg_path, char **meta_dir, sn_err *err) {
    struct stat sb;
    const char *in = o->model_dir;
    if (stat(in, &sb) != 0) return sn_err_set(err, SN_EIO, "%s: cannot open: %s", in, strerror(errno));
    int is_dir = S_ISDIR(sb.st_mode);
    if (!is_dir && !S_ISREG(sb.st_mode)) return sn_err_set(err, SN_EIO, "%s: not a directory or a file", in);
    if (o->config_path) {
        *cfg_path = strdup(o->config_path);
    } else if (is_dir) {
        *cfg_path = sn_path_join(in, "config.json");
    } else {
        const char *sl = strrchr(in, '/');
        char *dir = sl ? strndup(in, (size_t)(sl - in)) : strdup(".");
        *cfg_path = dir ? sn_path_join(dir[0] ? dir : "/", "config.json") : NULL;
        free(dir);
        if (*cfg_path && stat(*cfg_path, &sb) != 0) { /* none: derived from the tensors (sn_convert) */
            free(*cfg_path);
            *cfg_path = NULL;
            *meta_dir = sl ? strndup(in, (size_t)(sl - in)) : strdup(".");
            if (*meta_dir && !(*meta_dir)[0]) { free(*meta_dir); *meta_dir = strdup("/"); }
            return *meta_dir ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
        }
    }
    if (!*cfg_path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (stat(*cfg_path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return sn_err_set(err, SN_EIO, "%s: missing (%s)", *cfg_path,
                          o->config_path ? "--config names no file" : "an HF model folder needs config.json");
    const char *sl = strrchr(*cfg_path, '/');
    *meta_dir = sl ? strndup(*cfg_path, (size_t)(sl - *cfg_path)) : strdup(".");
    if (!*meta_dir) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!(*meta_dir)[0]) {
        free(*meta_dir);
        *meta_dir = strdup("/");
        if (!*meta_dir) return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    return SN_OK; /* the tokenizer files the family needs: sn_arch_check_vocab_files */
}

/* -o naming a file the conversion reads (a weight shard, config.json, a tokenizer file) would
 * destroy the source with --force: refused whatever the spelling of the path. */
static sn_status check_out_not_source(const sn_convert_opts *o, const sn_st_model *m, const char *cfg_path,
                                      const char *meta_dir, sn_err *err) {
    static const char *const meta[] = {"tokenizer.json", "tokenizer.model", "tokenizer_config.json",
                                       "special_tokens_map.json", "generation_config.json", "README.md",
                                       "added_tokens.json", "rwkv_vocab_v20230424.txt"};
    const char *hit = NULL;
    for (size_t i = 0; !hit && m && i < sn_st_model_n_files(m); i++)
        if (sn_same_file(o->out_path, sn_st_model_file(m, i))) hit = sn_st_model_file(m, i);
    if (!hit && cfg_path && sn_same_file(o->out_path, cfg_path)) hit = cfg_path;
    if (!hit && o->vocab_path && sn_same_file(o->out_path, o->vocab_path)) hit = o->vocab_path;
    for (size_t i = 0; !hit && meta_dir && i < sizeof meta / sizeof *meta; i++) {
        char *p = sn_path_join(meta_dir, meta[i]);
        if (!p) return sn_err_set(err, SN_ENOMEM, "out of memory");
        if (sn_same_file(o->out_path, p)) hit = meta[i];
        free(p);
    }
    return hit ? sn_err_set(err, SN_EINVAL, "-o %s is a source file of this conversion (%s); choose another output",
                            o->out_path, hit)
               : SN_OK;
}

/* general.quantization_version and general.file_type as llama-quantize leaves them: re-set at the
 * end of the KV list (gguf_set_val removes and appends). */
sn_status sn_conv_move_to_end_u32(sn_gguf_writer *w, const char *key, uint32_t v, sn_err *err) {
    sn_gguf_writer_remove_key(w, key);
    sn_status st = sn_gguf_writer_set_u32(w, key, v);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}

/* The source: its config (config.json, or one a family derives from a lone checkpoint's shapes), the
 * architecture's row, the vocabulary files it needs, the family's config checks, the weights and
 * the tensor plan; -o must not name any of the files read. */
static sn_status load_source(const sn_convert_opts *o, const char *cfg_path, const char *meta_dir,
                             sn_hf_config *cfg, sn_st_model **m, const sn_arch **ap, plan_list *pl,
                             sn_convert_result *res, sn_err *err) {
    sn_status st;
    sn_st_open_opts so = {o->state_key, o->tmp_dir};
    if (!cfg_path) { /* one weight file and no config.json: the family derives it from the shapes */
        char *json = NULL;
        const sn_arch *fa = NULL;
        if ((st = sn_st_model_open_path(o->model_dir, &so, m, err)) != SN_OK) return st;
        if ((st = sn_arch_config_from_tensors(*m, &json, &fa, err)) != SN_OK) {
            sn_err_prefix(err, "%s", o->model_dir);
            return st;
        }
        snprintf(res->derived_config, sizeof res->derived_config, "%s", json);
        st = sn_hf_config_parse(json, "config derived from the tensor shapes", cfg, err);
        free(json);
        if (st != SN_OK) return st;
    } else if ((st = sn_hf_config_load(cfg_path, cfg, err)) != SN_OK) {
        return st;
    }
    const sn_arch *a = *ap = sn_arch_find(cfg->architecture);
    if (!a) {
        st = sn_err_set(err, SN_EUNSUPPORTED,
                        "%s: unsupported architecture '%s' (sunny-convert converts %s; docs/MODELS.md). A GGUF "
                        "of this model made with llama.cpp's convert_hf_to_gguf.py still installs: "
                        "sunny-integrate ollama|lmstudio MODEL.gguf (without --smoke, which needs sunny's runtime)",
                        cfg_path ? cfg_path : o->model_dir,
                        cfg->architecture[0] ? cfg->architecture : "(none)", sn_arch_supported_list());
        return st;
    }
    if (o->vocab_path && a->vocab != SN_ARCH_VOCAB_RWKV) {
        st = sn_err_set(err, SN_EINVAL, "--vocab %s: only RWKV models read a vocabulary file (the world "
                        "vocab); %s takes its tokenizer from %s", o->vocab_path, cfg->architecture, meta_dir);
        return st;
    }
    if (!o->vocab_path && (st = sn_arch_check_vocab_files(a, meta_dir, err)) != SN_OK) {
        if (a->vocab == SN_ARCH_VOCAB_RWKV) sn_err_prefix(err, "%s", "no world vocabulary beside the weights (give it with --vocab FILE)");
        return st;
    }
    if (a->prepare_config && (st = a->prepare_config(a, cfg, err)) != SN_OK) {
        sn_err_prefix(err, "%s", o->model_dir);
        return st;
    }
    if ((st = a->check_config(a, cfg, err)) != SN_OK) { sn_err_prefix(err, "%s", o->model_dir); return st; }
    if (!*m && (st = sn_st_model_open_path(o->model_dir, &so, m, err)) != SN_OK) return st;
    if ((st = sn_conv_build_plan(a, cfg, *m, pl, err)) != SN_OK) return st;
    if (o->out_path && (st = check_out_not_source(o, *m, cfg_path, meta_dir, err)) != SN_OK) return st;
    return SN_OK;
}

/* Every tensor of the plan through o->on_plan, before anything is written (what --dry-run lists). */
static void report_plan(const sn_convert_opts *o, const plan_list *pl) {
    if (!o->on_plan) return;
    for (size_t i = 0; i < pl->n; i++) {
        const plan_t *p = &pl->t[i];
        sn_convert_plan_entry e = {p->hf_name, p->gguf_name, p->n_dims, {p->ne[0], p->ne[1], p->ne[2], p->ne[3]},
                                   p->type, p->src ? sn_st_dtype_name(p->src->dtype) : "F32", p->bytes};
        o->on_plan(o->ud, &e);
    }
}

sn_status sn_convert(const sn_convert_opts *o, sn_convert_result *res, sn_err *err) {
    memset(res, 0, sizeof(*res));
    double t0 = sn_conv_now();
    sn_hf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    sn_st_model *m = NULL;
    sn_gguf_writer *w = NULL;
    plan_list pl = {0};
    char *cfg_path = NULL, *meta_dir = NULL;
    sn_status st;

    if (!o->model_dir || (!o->out_path && !o->dry_run))
        return sn_err_set(err, SN_EINVAL, "model directory and output path are required");
    if (sn_conv_is_gguf(o->model_dir)) return sn_conv_requantize(o, res, err);
    if ((st = resolve_inputs(o, &cfg_path, &meta_dir, err)) != SN_OK) goto done;
    if (!o->dry_run && !o->force && access(o->out_path, F_OK) == 0) {
        st = sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", o->out_path);
        goto done;
    }

    const sn_arch *a = NULL;
    if ((st = load_source(o, cfg_path, meta_dir, &cfg, &m, &a, &pl, res, err)) != SN_OK) goto done;

    /* outtype auto: the first >= 2-D f16/bf16 source tensor decides, else f16 */
    sn_outtype ot = o->outtype;
    if (ot == SN_OUTTYPE_AUTO) {
        ot = SN_OUTTYPE_F16;
        for (size_t i = 0; i < sn_st_model_n_tensors(m); i++) {
            const sn_st_tensor *t = sn_st_model_tensor(m, i);
            if (t->n_dims >= 2 && (t->dtype == SN_ST_F16 || t->dtype == SN_ST_BF16)) {
                ot = t->dtype == SN_ST_BF16 ? SN_OUTTYPE_BF16 : SN_OUTTYPE_F16;
                break;
            }
        }
    }
    const sn_outtype_info *oi = sn_outtype_info_of(ot);
    const int quantize = oi->recipe == SN_RECIPE_QUANTIZE && !o->sink;
    const int64_t n_expert = sn_arch_expert_count(&cfg);
    sn_quant_state qs;
    if (quantize) {
        qsort(pl.t, pl.n, sizeof(*pl.t), sn_conv_cmp_quantize_order);
        /* llama-quantize's writer records ggml_n_dims: trailing dimensions of size 1 are dropped
         * (Mamba-2's ssm_norm {d_inner, 1} with one group is 1-D there) */
        for (size_t i = 0; i < pl.n; i++)
            while (pl.t[i].n_dims > 1 && pl.t[i].ne[pl.t[i].n_dims - 1] == 1) pl.t[i].n_dims--;
        sn_quant_state_init(&qs, ot, a, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, n_expert);
        for (size_t i = 0; i < pl.n; i++) sn_quant_state_count(&qs, pl.t[i].gguf_name);
    }
    uint64_t n_params = 0, src_bytes = 0, expert_sum = 0, n_expert_tensors = 0;
    sn_param_count pc = {0, 0, 0, 0};
    for (size_t i = 0; i < pl.n; i++) {
        plan_t *p = &pl.t[i];
        if (strstr(p->gguf_name, "_exps.") && p->n_dims >= 3 && p->ne[2]) {
            pc.per_expert += p->n_elems / p->ne[2];
            expert_sum += p->ne[2];
            n_expert_tensors++;
        } else pc.shared += p->n_elems;
        /* the quantize recipe starts from the f32 conversion, where every tensor is F32 */
        p->type = o->sink     ? SN_GGML_F32
                  : quantize ? sn_quant_tensor_type(&qs, p->gguf_name, p->n_dims, p->ne, SN_GGML_F32)
                             : sn_conv_choose_type(a, ot, p);
        if (p->type < 0) {
            st = sn_err_set(err, SN_EFORMAT, "%s: tensor %s: no layer number in [0, %lld)", o->model_dir,
                            p->gguf_name, (long long)cfg.n_layers);
            goto done;
        }
        p->bytes = sn_ggml_row_size(p->type, p->ne[0]) * (p->n_elems / (p->ne[0] ? p->ne[0] : 1));
        n_params += p->n_elems;
        for (uint32_t k = 0; k < p->ts.n_parts; k++) src_bytes += p->ts.part[k]->nbytes;
    }
    uint32_t file_type = oi->ftype;

    /* header */
    w = sn_gguf_writer_new();
    if (!w) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
#define SETK(call, key) do { if ((st = (call)) != SN_OK) { sn_err_set(err, st, "cannot set %s", key); goto done; } } while (0)
    SETK(sn_gguf_writer_set_str(w, "general.architecture", a->gguf_arch), "general.architecture");
    if (a->write_early_kv && (st = a->write_early_kv(a, &cfg, w, err)) != SN_OK) goto done;
    SETK(sn_gguf_writer_set_str(w, "general.type", "model"), "general.type");
    pc.total = n_params;
    pc.expert_count = n_expert_tensors ? expert_sum / n_expert_tensors : 0;
    if ((st = sn_metadata_write(meta_dir, &cfg, o->name, &pc, w, err)) != SN_OK) goto done;
    if ((st = a->write_kv(a, &cfg, file_type, w, err)) != SN_OK) goto done;
    SETK(sn_gguf_writer_set_u32(w, "general.quantization_version", 2), "general.quantization_version");
    sn_vocab_opts vo = {o->pre_override, o->vocab_path};
    sn_vocab_report vr;
    memset(&vr, 0, sizeof vr);
    if ((st = sn_vocab_write_gguf(meta_dir, &cfg, w, &vo, &vr, err)) != SN_OK) goto done;
    snprintf(res->vocab_model, sizeof res->vocab_model, "%s", vr.model);
    snprintf(res->vocab_pre, sizeof res->vocab_pre, "%s", vr.pre);
    res->vocab_tokens = vr.n_tokens;
    if (quantize) {
        if ((st = sn_conv_move_to_end_u32(w, "general.quantization_version", 2, err)) != SN_OK) goto done;
        if ((st = sn_conv_move_to_end_u32(w, "general.file_type", file_type, err)) != SN_OK) goto done;
    }
    for (size_t i = 0; i < pl.n; i++) {
        plan_t *p = &pl.t[i];
        sn_status r = sn_gguf_writer_add_tensor(w, p->gguf_name, p->n_dims, p->ne, p->type, err);
        if (r < 0) { st = r; goto done; }
    }
    snprintf(res->arch, sizeof res->arch, "%s", a->gguf_arch);
    upper_label(ot, res->ftype, sizeof res->ftype);
    res->file_type = file_type;
    res->n_tensors = pl.n;
    res->n_skipped = pl.n_skipped;
    res->src_bytes = src_bytes;
    res->n_params = n_params;
    res->bytes = sn_gguf_writer_total_size(w);
    report_plan(o, &pl);
    if (o->dry_run) { st = SN_OK; goto done; }

    /* for a mixture-of-experts model, which sunny-run does not run yet, the file's structure only */
    if ((st = sn_conv_write_data(o, w, &pl, n_expert > 0 ? SN_VALIDATE_STRUCTURE : 0, t0, res, err)) != SN_OK ||
        o->sink)
        goto done;
    if (o->verify) {
        st = sn_conv_verify_file(o, &pl, res, err);
        if (st == SN_OK) st = sn_conv_verify_tokenizer(o, meta_dir, &cfg, res, err);
        if (st == SN_OK && (res->verify_failed || res->verify_keys_failed))
            st = sn_err_set(err, SN_EFORMAT, "%s: verify failed: %zu of %zu tensors and %zu of %zu tokenizer keys "
                            "differ from the source (first: %s)", o->out_path, res->verify_failed,
                            res->verify_checked, res->verify_keys_failed, res->verify_keys_checked,
                            res->verify_first_bad);
    }
done:
    if (!res->seconds) res->seconds = sn_conv_now() - t0;
    if (w) sn_gguf_writer_free(w);
    sn_conv_plan_free(&pl);
    sn_st_model_close(m);
    sn_hf_config_free(&cfg);
    free(cfg_path);
    free(meta_dir);
    return st;
}
