/* convert.c - the sunny-convert driver: plan everything, write the header, stream the tensors.
 *
 * sn_convert runs four phases (each of the first two can fail before anything is written):
 *   plan:   config.json, tokenizer presence, architecture lookup, safetensors headers; every tensor
 *           mapped to its GGUF name, shape checked against the config, output type chosen (llama.cpp's
 *           rules, see sn_conv_choose_type), byte sizes known;
 *   open:   the GGUF header in memory: general.*, {arch}.*, tokenizer.* and all tensor infos
 *           (--dry-run stops here);
 *   write:  tensor data, one tensor at a time, in chunks of rows converted by n threads into one
 *           buffer, written, and the source pages released so RSS stays flat whatever the model size;
 *   verify: (--verify) the file read back against the source.
 * Output goes to OUT.tmp, fsynced and renamed; any failure or cancellation unlinks the tmp.
 * The tensor map is convert_plan.c, write convert_write.c, verify convert_verify.c (convert_internal.h). */
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

/* "Q4_K_M" for q4_k_m: an outtype's name in upper case (output file names). */
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
    if (a->prepare_from_tensors) {
        if (!*m && (st = sn_st_model_open_path(o->model_dir, &so, m, err)) != SN_OK) return st;
        if ((st = a->prepare_from_tensors(a, cfg, *m, err)) != SN_OK) {
            sn_err_prefix(err, "%s", o->model_dir);
            return st;
        }
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

/* One conversion's state across its phases (sn_convert frees it). */
typedef struct {
    const sn_convert_opts *o;
    sn_convert_result *res;
    double t0;
    char *cfg_path, *meta_dir;
    sn_hf_config cfg;
    sn_st_model *m;
    const sn_arch *a;
    plan_list pl;
    sn_outtype ot;
    int quantize;
    int64_t n_expert;
    sn_param_count pc;
    uint64_t n_params, src_bytes;
    sn_gguf_writer *w;
    int derive;                 /* the output name is derived once the metadata is known */
    const char *spec;           /* -o as given (NULL, a folder, or a name with {ftype}) */
    sn_convert_opts *oo;        /* o with the resolved output name (j->o points to it) */
} conv_job;

/* outtype auto: the first >= 2-D f16/bf16 source tensor decides, else f16 */
static sn_outtype resolve_outtype(const sn_convert_opts *o, const sn_st_model *m) {
    if (o->outtype != SN_OUTTYPE_AUTO) return o->outtype;
    for (size_t i = 0; i < sn_st_model_n_tensors(m); i++) {
        const sn_st_tensor *t = sn_st_model_tensor(m, i);
        if (t->n_dims >= 2 && (t->dtype == SN_ST_F16 || t->dtype == SN_ST_BF16))
            return t->dtype == SN_ST_BF16 ? SN_OUTTYPE_BF16 : SN_OUTTYPE_F16;
    }
    return SN_OUTTYPE_F16;
}

/* Phase 1, plan: the source read, every tensor's GGUF type and bytes chosen, parameters counted. */
static sn_status plan(conv_job *j, sn_err *err) {
    const sn_convert_opts *o = j->o;
    sn_status st;
    if ((st = resolve_inputs(o, &j->cfg_path, &j->meta_dir, err)) != SN_OK) return st;
    if (o->out_path && !o->dry_run && !o->force && access(o->out_path, F_OK) == 0)
        return sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", o->out_path);
    if ((st = load_source(o, j->cfg_path, j->meta_dir, &j->cfg, &j->m, &j->a, &j->pl, j->res, err)) != SN_OK) return st;
    plan_list *pl = &j->pl;
    j->ot = resolve_outtype(o, j->m);
    j->quantize = sn_outtype_info_of(j->ot)->recipe == SN_RECIPE_QUANTIZE && !o->sink;
    j->n_expert = sn_arch_expert_count(&j->cfg);
    sn_quant_state qs;
    if (j->quantize) {
        qsort(pl->t, pl->n, sizeof(*pl->t), sn_conv_cmp_quantize_order);
        /* llama-quantize's writer records ggml_n_dims: trailing dimensions of size 1 are dropped
         * (Mamba-2's ssm_norm {d_inner, 1} with one group is 1-D there) */
        for (size_t i = 0; i < pl->n; i++)
            while (pl->t[i].n_dims > 1 && pl->t[i].ne[pl->t[i].n_dims - 1] == 1) pl->t[i].n_dims--;
        sn_quant_state_init(&qs, j->ot, j->a, j->cfg.n_layers, j->cfg.n_heads, j->cfg.n_kv_heads, j->n_expert);
        for (size_t i = 0; i < pl->n; i++) sn_quant_state_count(&qs, pl->t[i].gguf_name);
    }
    uint64_t expert_sum = 0, n_expert_tensors = 0;
    for (size_t i = 0; i < pl->n; i++) {
        plan_t *p = &pl->t[i];
        if (strstr(p->gguf_name, "_exps.") && p->n_dims >= 3 && p->ne[2]) {
            j->pc.per_expert += p->n_elems / p->ne[2];
            expert_sum += p->ne[2];
            n_expert_tensors++;
        } else j->pc.shared += p->n_elems;
        /* the quantize recipe starts from the f32 conversion, where every tensor is F32 */
        p->type = o->sink       ? SN_GGML_F32
                  : j->quantize ? sn_quant_tensor_type(&qs, p->gguf_name, p->n_dims, p->ne, SN_GGML_F32)
                                : sn_conv_choose_type(j->a, j->ot, p);
        if (p->type < 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor %s: no layer number in [0, %lld)", o->model_dir,
                              p->gguf_name, (long long)j->cfg.n_layers);
        /* MXFP4 in the checkpoint is quantized already: llama-quantize refuses to requantize it */
        if (p->ts.mx_scales && p->type != SN_CONV_MXFP4 && !o->sink && !o->allow_requantize)
            return sn_err_set(err, SN_EINVAL, "%s: tensor %s is MXFP4 in the checkpoint (%s); requantizing it to %s "
                              "loses quality, and llama-quantize refuses it (use --outtype f32/f16/bf16/q8_0, which "
                              "keep the experts MXFP4, or pass --allow-requantize)", o->model_dir, p->gguf_name,
                              p->hf_name, sn_ggml_type_name(p->type));
        p->bytes = sn_ggml_row_size(p->type, p->ne[0]) * (p->n_elems / (p->ne[0] ? p->ne[0] : 1));
        j->n_params += p->n_elems;
        for (uint32_t k = 0; k < p->ts.n_parts; k++) j->src_bytes += p->ts.part[k]->nbytes;
    }
    j->pc.total = j->n_params;
    j->pc.expert_count = n_expert_tensors ? expert_sum / n_expert_tensors : 0;
    return SN_OK;
}

#define SETK(call, key) do { if ((st = (call)) != SN_OK) return sn_err_set(err, st, "cannot set %s", key); } while (0)
/* Phase 2, open: the GGUF header in memory (general.*, {arch}.*, tokenizer.*, every tensor info)
 * and the result's summary; --dry-run stops after it. */
static sn_status open_header(conv_job *j, sn_err *err) {
    const sn_convert_opts *o = j->o;
    sn_convert_result *res = j->res;
    const uint32_t file_type = sn_outtype_info_of(j->ot)->ftype;
    sn_status st;
    sn_gguf_writer *w = j->w = sn_gguf_writer_new();
    if (!w) return sn_err_set(err, SN_ENOMEM, "out of memory");
    SETK(sn_gguf_writer_set_str(w, "general.architecture", j->a->gguf_arch), "general.architecture");
    if (j->a->write_early_kv && (st = j->a->write_early_kv(j->a, &j->cfg, w, err)) != SN_OK) return st;
    SETK(sn_gguf_writer_set_str(w, "general.type", "model"), "general.type");
    char stem[512];
    if ((st = sn_metadata_write(j->meta_dir, &j->cfg, o->name, &j->pc, w, stem, sizeof stem, err)) != SN_OK) return st;
    if (j->derive) { /* the default name: known now, before any tensor is converted */
        char ft[32], dn[600], path[sizeof res->out_path];
        upper_label(j->ot, ft, sizeof ft);
        snprintf(dn, sizeof dn, "%s-%s", stem, ft);
        if ((st = sn_convert_out_path(j->spec, o->model_dir, dn, ft, path, sizeof path, err)) != SN_OK) return st;
        snprintf(res->out_path, sizeof res->out_path, "%s", path);
        j->oo->out_path = res->out_path;
        if (!o->dry_run && !o->force && access(res->out_path, F_OK) == 0)
            return sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", res->out_path);
    }
    if ((st = j->a->write_kv(j->a, &j->cfg, file_type, w, err)) != SN_OK) return st;
    SETK(sn_gguf_writer_set_u32(w, "general.quantization_version", 2), "general.quantization_version");
    sn_vocab_opts vo = {o->pre_override, o->vocab_path};
    sn_vocab_report vr;
    memset(&vr, 0, sizeof vr);
    if ((st = sn_vocab_write_gguf(j->meta_dir, &j->cfg, w, &vo, &vr, err)) != SN_OK) return st;
    snprintf(res->vocab_model, sizeof res->vocab_model, "%s", vr.model);
    snprintf(res->vocab_pre, sizeof res->vocab_pre, "%s", vr.pre);
    res->vocab_tokens = vr.n_tokens;
    if (j->quantize) {
        if ((st = sn_conv_move_to_end_u32(w, "general.quantization_version", 2, err)) != SN_OK) return st;
        if ((st = sn_conv_move_to_end_u32(w, "general.file_type", file_type, err)) != SN_OK) return st;
    }
    for (size_t i = 0; i < j->pl.n; i++) {
        const plan_t *p = &j->pl.t[i];
        sn_status r = sn_gguf_writer_add_tensor(w, p->gguf_name, p->n_dims, p->ne, p->type, err);
        if (r < 0) return r;
    }
    snprintf(res->arch, sizeof res->arch, "%s", j->a->gguf_arch);
    sn_ftype_label(file_type, res->ftype, sizeof res->ftype);
    res->file_type = file_type;
    res->n_tensors = j->pl.n;
    res->n_skipped = j->pl.n_skipped;
    res->src_bytes = j->src_bytes;
    res->n_params = j->n_params;
    res->bytes = sn_gguf_writer_total_size(w);
    report_plan(o, &j->pl);
    return SN_OK;
}
#undef SETK

/* Phase 3, write: the tensor data into OUT.tmp, renamed into place (convert_write.c); for a
 * mixture-of-experts model, which sunny-run does not run yet, the file's structure is checked only. */
static sn_status write_file(conv_job *j, sn_err *err) {
    return sn_conv_write_data(j->o, j->w, &j->pl, j->n_expert > 0 ? SN_VALIDATE_STRUCTURE : 0, j->t0, j->res, err);
}

/* Phase 4, verify (--verify): the written tensors and tokenizer keys read back against the source. */
static sn_status verify(conv_job *j, sn_err *err) {
    const sn_convert_opts *o = j->o;
    sn_convert_result *res = j->res;
    sn_status st = sn_conv_verify_file(o, &j->pl, res, err);
    if (st == SN_OK) st = sn_conv_verify_tokenizer(o, j->meta_dir, &j->cfg, res, err);
    if (st == SN_OK && (res->verify_failed || res->verify_keys_failed))
        st = sn_err_set(err, SN_EFORMAT, "%s: verify failed: %zu of %zu tensors and %zu of %zu tokenizer keys "
                        "differ from the source (first: %s)", o->out_path, res->verify_failed,
                        res->verify_checked, res->verify_keys_failed, res->verify_keys_checked,
                        res->verify_first_bad);
    return st;
}

sn_status sn_convert(const sn_convert_opts *o, sn_convert_result *res, sn_err *err) {
    memset(res, 0, sizeof(*res));
    if (!o->model_dir || (!o->out_path && o->sink))
        return sn_err_set(err, SN_EINVAL, "model directory and output path are required");
    if ((o->split_max_tensors > 0 || o->split_max_bytes > 0) && (o->verify || o->sink))
        return sn_err_set(err, SN_EINVAL, "a split output cannot be combined with --verify or a blob");
    const int derive = !o->sink && sn_convert_out_needs_name(o->out_path);
    sn_convert_opts oo = *o; /* o with the resolved output name */
    sn_status st;
    if (sn_conv_is_gguf(o->model_dir)) {
        if (derive && o->outtype != SN_OUTTYPE_AUTO) { /* llama-quantize: [input folder]/ggml-model-FTYPE.gguf */
            char ft[32], dn[64];
            upper_label(o->outtype, ft, sizeof ft);
            snprintf(dn, sizeof dn, "ggml-model-%s", ft);
            if ((st = sn_convert_out_path(o->out_path, o->model_dir, dn, ft, res->out_path, sizeof res->out_path, err)))
                return st;
            oo.out_path = res->out_path;
        }
        char keep[sizeof res->out_path];
        snprintf(keep, sizeof keep, "%s", oo.out_path ? oo.out_path : "");
        st = sn_conv_requantize(&oo, res, err);
        if (res->n_shards <= 1) snprintf(res->out_path, sizeof res->out_path, "%s", keep);
        return st;
    }
    if (o->out_path) snprintf(res->out_path, sizeof res->out_path, "%s", o->out_path);
    conv_job j;
    memset(&j, 0, sizeof j);
    j.derive = derive;
    j.spec = o->out_path;
    j.oo = &oo;
    if (derive) oo.out_path = NULL; /* checked once the name is known */
    o = &oo;
    j.o = o;
    j.res = res;
    j.t0 = sn_conv_now();
    st = plan(&j, err);
    if (st == SN_OK) st = open_header(&j, err);
    if (st == SN_OK && !o->dry_run) st = write_file(&j, err);
    if (st == SN_OK && !o->dry_run && !o->sink && o->verify) st = verify(&j, err);
    if (!res->seconds) res->seconds = sn_conv_now() - j.t0;
    if (j.w) sn_gguf_writer_free(j.w);
    sn_conv_plan_free(&j.pl);
    sn_st_model_close(j.m);
    sn_hf_config_free(&j.cfg);
    free(j.cfg_path);
    free(j.meta_dir);
    return st;
}
