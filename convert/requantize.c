/* requantize.c - a GGUF file as sunny-convert's input: llama-quantize's job, streamed.
 *
 * The output is what llama-quantize writes for the file type: every KV copied in the input's order,
 * general.quantization_version and general.file_type set again at the end, split keys dropped; the
 * tensors in its order (layer, then name), each of the type its rules pick (quant_rules.c) from the
 * tensor's type in the input. A tensor whose type does not change is copied byte for byte; the
 * others are read as f32 rows (F32/F16/BF16, or dequantized) and quantized on n threads, with the
 * input mapped and its pages released behind the writer, as for a safetensors source. A tensor
 * that is already quantized is only converted again with allow_requantize (quality suffers). */
#include "convert_internal.h"

#include "ggml_types.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sn_conv_is_gguf(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(m, "GGUF", 4) == 0;
}

static uint32_t arch_u32(const sn_gguf *g, const char *arch, const char *key, uint32_t dflt) {
    char k[160];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    return sn_gguf_u32_or(g, k, dflt);
}

static int is_float(int type) { return type == SN_GGML_F32 || type == SN_GGML_F16 || type == SN_GGML_BF16; }

/* One plan entry reading GGUF tensor t through a safetensors-like source view st. */
static sn_status plan_tensor(const sn_gguf_tensor *t, sn_st_tensor *st, plan_t *p, const char *in, sn_err *err) {
    memset(st, 0, sizeof *st);
    memset(p, 0, sizeof *p);
    uint8_t probe_in[1] = {0};
    float probe_out[1];
    if (!sn_ggml_blck_size(t->type) || sn_dequantize_row(t->type, probe_in, probe_out, 0) != 0) /* a reader for it */
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s: type %s cannot be read", in, t->name,
                          sn_ggml_type_name(t->type) ? sn_ggml_type_name(t->type) : "(unknown)");
    snprintf(p->gguf_name, sizeof p->gguf_name, "%s", t->name);
    snprintf(p->hf_name, sizeof p->hf_name, "%s", t->name);
    p->n_dims = t->n_dims;
    while (p->n_dims > 1 && t->ne[p->n_dims - 1] == 1) p->n_dims--; /* llama-quantize records ggml_n_dims */
    p->n_elems = 1;
    for (uint32_t d = 0; d < SN_GGUF_MAX_DIMS; d++) {
        p->ne[d] = d < t->n_dims ? t->ne[d] : 1;
        p->n_elems *= p->ne[d]; /* the reader checked the size against the file */
    }
    st->name = t->name;
    st->dtype = t->type == SN_GGML_F16 ? SN_ST_F16 : t->type == SN_GGML_BF16 ? SN_ST_BF16 : SN_ST_F32;
    st->ggml_type = is_float(t->type) ? 0 : t->type;
    st->n_dims = 1;
    st->shape[0] = p->n_elems;
    st->stride[0] = 1;
    st->n_elems = p->n_elems;
    st->nbytes = t->size;
    st->data = t->data;
    st->file = in;
    st->mmapped = 1;
    st->contiguous = 1;
    p->src = st;
    p->ts.part = malloc(sizeof *p->ts.part);
    if (!p->ts.part) return sn_err_set(err, SN_ENOMEM, "out of memory");
    p->ts.part[0] = st;
    p->ts.n_parts = 1;
    p->ts.row_len = p->ne[0];
    p->ts.n_rows = p->ne[0] ? p->n_elems / p->ne[0] : 0;
    return SN_OK;
}

sn_status sn_conv_requantize(const sn_convert_opts *o, sn_convert_result *res, sn_err *err) {
    memset(res, 0, sizeof *res);
    double t0 = sn_conv_now();
    const char *in = o->model_dir;
    sn_gguf *g = NULL;
    sn_gguf_writer *w = NULL;
    plan_list pl = {0};
    sn_st_tensor *views = NULL;
    sn_status st;
    char names[512];
    sn_outtype_list(names, sizeof names);
    if (o->outtype == SN_OUTTYPE_AUTO)
        return sn_err_set(err, SN_EINVAL, "%s: a GGUF input needs --outtype (one of %s)", in, names + 6);
    if (o->sink) return sn_err_set(err, SN_EINVAL, "%s: a GGUF input cannot stream to a sink", in);
    if (!o->dry_run && !o->force && access(o->out_path, F_OK) == 0)
        return sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", o->out_path);
    struct stat si, so;
    if (o->out_path && stat(in, &si) == 0 && stat(o->out_path, &so) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino)
        return sn_err_set(err, SN_EINVAL, "%s: -o names the input itself", o->out_path);
    if ((st = sn_gguf_open(in, 0, &g, err)) != SN_OK) return st;
    char *arch = sn_gguf_str_dup(g, "general.architecture");
    if (!arch) { st = sn_err_set(err, SN_EFORMAT, "%s: no general.architecture", in); goto done; }
    int64_t nt = sn_gguf_n_tensors(g);
    views = calloc(nt ? (size_t)nt : 1, sizeof *views);
    pl.t = calloc(nt ? (size_t)nt : 1, sizeof *pl.t);
    if (!views || !pl.t) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
    pl.cap = (size_t)nt;
    for (int64_t i = 0; i < nt; i++) {
        pl.n++; /* counted first: sn_conv_plan_free frees what plan_tensor allocated */
        if ((st = plan_tensor(sn_gguf_tensor_at(g, i), &views[i], &pl.t[i], in, err)) != SN_OK) goto done;
    }
    qsort(pl.t, pl.n, sizeof *pl.t, sn_conv_cmp_quantize_order);

    const sn_outtype_info *oi = sn_outtype_info_of(o->outtype);
    uint32_t n_head = arch_u32(g, arch, "attention.head_count", 0);
    sn_quant_state qs;
    sn_quant_state_init(&qs, o->outtype, sn_arch_find_gguf(arch), arch_u32(g, arch, "block_count", 0), n_head,
                        arch_u32(g, arch, "attention.head_count_kv", n_head), arch_u32(g, arch, "expert_count", 0));
    for (size_t i = 0; i < pl.n; i++) sn_quant_state_count(&qs, pl.t[i].gguf_name);
    for (size_t i = 0; i < pl.n; i++) {
        plan_t *p = &pl.t[i];
        int cur = p->src->ggml_type ? p->src->ggml_type
                  : p->src->dtype == SN_ST_F16 ? SN_GGML_F16 : p->src->dtype == SN_ST_BF16 ? SN_GGML_BF16 : SN_GGML_F32;
        p->type = sn_quant_tensor_type(&qs, p->gguf_name, p->n_dims, p->ne, cur);
        if (p->type < 0) {
            st = sn_err_set(err, SN_EFORMAT, "%s: tensor %s: no layer number in [0, %d)", in, p->gguf_name, qs.n_layer);
            goto done;
        }
        if (p->type != cur && !is_float(cur)) {
            if (!o->allow_requantize) {
                st = sn_err_set(err, SN_EINVAL, "%s: tensor %s is already %s; requantizing it to %s loses quality "
                                "(start from an F32/F16/BF16 file, or pass --allow-requantize)", in, p->gguf_name,
                                sn_ggml_type_name(cur), sn_ggml_type_name(p->type));
                goto done;
            }
            res->requantized++;
        }
        p->bytes = sn_ggml_row_size(p->type, p->ne[0]) * p->ts.n_rows;
        res->n_params += p->n_elems;
        res->src_bytes += p->src->nbytes;
    }

    w = sn_gguf_writer_new();
    if (!w) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
    for (int64_t i = 0; i < sn_gguf_n_kv(g); i++)
        if ((st = sn_gguf_writer_copy_kv(w, g, i)) != SN_OK) {
            sn_err_set(err, st, "%s: cannot copy key %s", in, sn_gguf_key(g, i));
            goto done;
        }
    if ((st = sn_conv_move_to_end_u32(w, "general.quantization_version", 2, err)) != SN_OK) goto done;
    if ((st = sn_conv_move_to_end_u32(w, "general.file_type", oi->ftype, err)) != SN_OK) goto done;
    sn_gguf_writer_remove_key(w, "split.no");
    sn_gguf_writer_remove_key(w, "split.count");
    sn_gguf_writer_remove_key(w, "split.tensors.count");
    for (size_t i = 0; i < pl.n; i++) {
        plan_t *p = &pl.t[i];
        if ((st = sn_gguf_writer_add_tensor(w, p->gguf_name, p->n_dims, p->ne, p->type, err)) < 0) goto done;
    }
    snprintf(res->arch, sizeof res->arch, "%s", arch);
    sn_ftype_label(oi->ftype, res->ftype, sizeof res->ftype);
    res->file_type = oi->ftype;
    res->n_tensors = pl.n;
    res->bytes = sn_gguf_writer_total_size(w);
    if (o->on_plan)
        for (size_t i = 0; i < pl.n; i++) {
            const plan_t *p = &pl.t[i];
            int cur = p->src->ggml_type ? p->src->ggml_type : p->src->dtype == SN_ST_F16 ? SN_GGML_F16
                      : p->src->dtype == SN_ST_BF16 ? SN_GGML_BF16 : SN_GGML_F32;
            sn_convert_plan_entry e = {p->hf_name, p->gguf_name, p->n_dims, {p->ne[0], p->ne[1], p->ne[2], p->ne[3]},
                                       p->type, sn_ggml_type_name(cur), p->bytes};
            o->on_plan(o->ud, &e);
        }
    if (o->dry_run) { st = SN_OK; goto done; }
    if ((st = sn_conv_write_data(o, w, &pl, qs.n_expert > 0 ? SN_VALIDATE_STRUCTURE : 0, t0, res, err)) != SN_OK)
        goto done;
    if (o->verify) {
        st = sn_conv_verify_file(o, &pl, res, err);
        if (st == SN_OK && res->verify_failed)
            st = sn_err_set(err, SN_EFORMAT, "%s: verify failed: %zu of %zu tensors differ from the input (first: %s)",
                            o->out_path, res->verify_failed, res->verify_checked, res->verify_first_bad);
    }
done:
    if (!res->seconds) res->seconds = sn_conv_now() - t0;
    if (w) sn_gguf_writer_free(w);
    sn_conv_plan_free(&pl);
    free(views);
    free(arch);
    sn_gguf_close(g);
    return st;
}
