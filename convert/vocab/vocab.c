/* vocab.c - HF tokenizer files -> GGUF tokenizer.* metadata, the way llama.cpp's converter writes them.
 *
 * Three vocab paths, chosen as convert_hf_to_gguf.py chooses them: tokenizer.model (SentencePiece,
 * model "llama"), a tokenizer.json BPE with byte_fallback (Mistral/Llama-2 HF format, model "llama",
 * scores from merge ranks - sunny's one deliberate difference, see docs/TOKENIZER.md), and byte-level
 * BPE (model "gpt2", pre-tokenizer fingerprinted). Then gguf-py's SpecialVocab logic: special ids,
 * add_bos/add_eos/add_sep, chat templates, normalizer flags, in its key order. Everything is computed
 * into a plan first and written to the GGUF writer only when nothing can fail any more.
 *
 * This file loads the inputs, picks the path and emits the plan; the paths are vocab_spm.c and
 * vocab_bpe.c, SpecialVocab is vocab_special.c, the token table vocab_table.c (vocab_internal.h). */
#include "vocab_internal.h"

#include "arch.h"
#include "hf_config.h"
#include "mapfile.h"
#include "path.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------------
 * files */

int sn_vocab_file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A tokenizer.json is big (Llama 3: 9 MB, ~1M JSON values). cJSON allocates every value and
 * string separately, and the first touch of that much fresh heap (page faults) plus the frees cost
 * more than the parsing itself (docs/PERFORMANCE.md, Conversion). So it can be parsed into one private
 * mapping instead: cJSON's allocation hooks point at a bump allocator for the length of the parse
 * (transparent huge pages requested), and the whole tree goes with one munmap. No node of such a
 * tree may be cJSON_Delete'd. The hooks are process-wide, so the vocab code must not run
 * concurrently with other cJSON use in the process (the converter runs it on one thread, before
 * any worker starts). */
static json_arena *g_json_arena; /* the arena cJSON allocates from during sn_vocab_json_load */

static void *json_arena_malloc(size_t n) {
    json_arena *a = g_json_arena;
    n = (n + 15) & ~(size_t)15;
    if (!a || n > a->cap - a->used) return NULL; /* the parse fails and is redone with malloc */
    void *p = a->base + a->used;
    a->used += n;
    return p;
}

static void json_arena_free(void *p) { (void)p; }

static void json_arena_release(json_arena *a) {
    if (a->base) munmap(a->base, a->cap);
    memset(a, 0, sizeof *a);
}

/* Parses DIR/NAME as JSON into *out; *out stays NULL (and SN_OK) when the file does not exist.
 * With ARENA, the tree lives in ARENA (release it with json_arena_release, never cJSON_Delete);
 * ARENA stays empty when the arena parse was not possible and the tree came from malloc. */
sn_status sn_vocab_json_load(const char *dir, const char *name, cJSON **out, json_arena *arena, sn_err *err) {
    *out = NULL;
    char *path = sn_path_join(dir, name);
    if (!path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!sn_vocab_file_exists(path)) {
        free(path);
        return SN_OK;
    }
    sn_mapped_file b;
    sn_status st = sn_map_file(path, &b, err);
    if (st) {
        free(path);
        return st;
    }
    const char *data = (const char *)b.data;
    size_t len = (size_t)b.size;
    const char *end = NULL;
    cJSON *j = NULL;
    if (arena && len > 0 && len < (SIZE_MAX - (16u << 20)) / 8) {
        /* cJSON needs ~4x the text for typical tokenizer files; 8x + 16 MiB of address space,
         * touched only as used */
        memset(arena, 0, sizeof *arena);
        arena->cap = len * 8 + (16u << 20);
        void *m = mmap(NULL, arena->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
            arena->base = m;
#ifdef MADV_HUGEPAGE
            madvise(m, arena->cap, MADV_HUGEPAGE);
#endif
            cJSON_Hooks h = {json_arena_malloc, json_arena_free};
            g_json_arena = arena;
            cJSON_InitHooks(&h);
            j = cJSON_ParseWithLengthOpts(data, len, &end, 0);
            cJSON_InitHooks(NULL);
            g_json_arena = NULL;
            if (!j) json_arena_release(arena); /* invalid JSON or arena full: malloc path decides */
        } else {
            arena->cap = 0;
        }
    }
    if (!j) j = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!j) {
        size_t off = end && end >= data ? (size_t)(end - data) : 0;
        const char *e = cJSON_GetErrorPtr();
        if (e && e >= data && e <= data + len) off = (size_t)(e - data);
        st = sn_err_set(err, SN_EFORMAT, "%s: invalid JSON near byte %zu", path, off);
    }
    sn_unmap_file(&b);
    free(path);
    *out = j;
    return st;
}

static void plan_free(plan *p) {
    sn_vocab_table_free(&p->t);
    for (int i = 0; i < p->n_tmpl; i++) {
        free(p->tmpl[i].name);
        free(p->tmpl[i].text);
    }
    free(p->tmpl_default);
}


/* ------------------------------------------------------------------------------------------------
 * writing */

static const char *id_key(const char *typ) {
    if (!strcmp(typ, "bos")) return "tokenizer.ggml.bos_token_id";
    if (!strcmp(typ, "eos")) return "tokenizer.ggml.eos_token_id";
    if (!strcmp(typ, "unk")) return "tokenizer.ggml.unknown_token_id";
    if (!strcmp(typ, "sep")) return "tokenizer.ggml.seperator_token_id";
    if (!strcmp(typ, "pad")) return "tokenizer.ggml.padding_token_id";
    if (!strcmp(typ, "mask")) return "tokenizer.ggml.mask_token_id";
    if (!strcmp(typ, "eot")) return "tokenizer.ggml.eot_token_id";
    if (!strcmp(typ, "eom")) return "tokenizer.ggml.eom_token_id";
    return NULL; /* cls: no GGUF key */
}

static const char *add_key(const char *typ) {
    if (!strcmp(typ, "bos")) return "tokenizer.ggml.add_bos_token";
    if (!strcmp(typ, "eos")) return "tokenizer.ggml.add_eos_token";
    if (!strcmp(typ, "sep")) return "tokenizer.ggml.add_sep_token";
    return NULL;
}

static sn_status emit(const plan *p, sn_gguf_writer *w, sn_err *err) {
    sn_status st = SN_OK;
#define TRY(x)                                                                                    \
    do {                                                                                          \
        if ((st = (x))) return sn_err_set(err, st, "writing tokenizer metadata: %s", sn_status_str(st)); \
    } while (0)
    if (p->space_prefix >= 0) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", p->space_prefix));
    TRY(sn_gguf_writer_set_str(w, "tokenizer.ggml.model", p->model));
    TRY(sn_gguf_writer_set_str(w, "tokenizer.ggml.pre", p->pre));
    TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)p->t.tok, p->t.len, p->t.n));
    if (p->t.scores) TRY(sn_gguf_writer_set_arr(w, "tokenizer.ggml.scores", SN_GGUF_F32, p->t.scores, p->t.n));
    TRY(sn_gguf_writer_set_arr(w, "tokenizer.ggml.token_type", SN_GGUF_I32, p->t.types, p->t.n));
    if (p->t.n_merges)
        TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.merges", (const char *const *)p->t.merges, NULL,
                                       p->t.n_merges));
    for (int i = 0; i < p->n_ids; i++) {
        const char *k = id_key(p->ids[i].typ);
        if (k) TRY(sn_gguf_writer_set_u32(w, k, (uint32_t)p->ids[i].id));
    }
    for (int i = 0; i < p->n_adds; i++) {
        const char *k = add_key(p->adds[i].typ);
        if (k) TRY(sn_gguf_writer_set_bool(w, k, p->adds[i].v));
    }
    if (p->n_tmpl) {
        const char *names[MAX_TEMPLATES];
        for (int i = 0; i < p->n_tmpl; i++) {
            char key[300];
            snprintf(key, sizeof key, "tokenizer.chat_template.%s", p->tmpl[i].name);
            TRY(sn_gguf_writer_set_strn(w, key, p->tmpl[i].text, p->tmpl[i].len));
            names[i] = p->tmpl[i].name;
        }
        TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.chat_templates", names, NULL, (uint64_t)p->n_tmpl));
    }
    if (p->tmpl_default) TRY(sn_gguf_writer_set_strn(w, "tokenizer.chat_template", p->tmpl_default, p->tmpl_default_len));
    if (p->norm_lowercase >= 0) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.normalizer.lowercase", p->norm_lowercase));
    if (p->norm_strip_accents >= 0)
        TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.normalizer.strip_accents", p->norm_strip_accents));
    if (p->codellama_eot) TRY(sn_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", 32010));
    if (p->granite_no_bos) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", 0));
    if (p->space_prefix_last >= 0) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", p->space_prefix_last));
#undef TRY
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------ */

static int is_llama_family(const char *arch) {
    /* the architecture table says which set_vocab the family follows; a folder of an architecture
     * we do not convert (vocab-only use) is read as LlamaModel.set_vocab reads it */
    const sn_arch *a = sn_arch_find(arch);
    return !a || a->vocab == SN_ARCH_VOCAB_LLAMA;
}

sn_status sn_vocab_write_gguf(const char *model_dir, const struct sn_hf_config *cfg,
                              sn_gguf_writer *w, const sn_vocab_opts *opts, sn_vocab_report *rep,
                              sn_err *err) {
    if (!model_dir || !w) return sn_err_set(err, SN_EINVAL, "sn_vocab_write_gguf: missing argument");
    plan p;
    memset(&p, 0, sizeof p);
    p.space_prefix = p.space_prefix_last = p.norm_lowercase = p.norm_strip_accents = -1;
    inputs in = {.dir = model_dir, .vocab_size = -1};
    json_arena tok_arena = {0};
    char *spm_path = NULL, *tj_path = NULL;
    int spm_only = 0;
    const char *json_class = NULL;
    sn_status st;

    if ((st = sn_vocab_json_load(model_dir, "tokenizer.json", &in.tok_json, &tok_arena, err))) goto out;
    if ((st = sn_vocab_json_load(model_dir, "tokenizer_config.json", &in.tok_config, NULL, err))) goto out;
    /* with a parsed config (the converter's), its tree is used: it already has the family's
     * completions (Mamba-2's padded vocab_size) and Python json's Infinity/NaN */
    if (cfg && cfg->root) in.config = cfg->root;
    else if ((st = sn_vocab_json_load(model_dir, "config.json", &in.config, NULL, err))) goto out;
    {
        int64_t vs;
        if (cfg && cfg->vocab_size > 0) in.vocab_size = cfg->vocab_size;
        else if (jint(jget(in.config, "vocab_size"), &vs) && vs > 0) in.vocab_size = vs;
        if (in.vocab_size > SN_VOCAB_MAX) {
            st = sn_err_set(err, SN_EFORMAT, "config.json: vocab_size %" PRId64 " is larger than %d",
                            in.vocab_size, SN_VOCAB_MAX);
            goto out;
        }
        const cJSON *archs = jget(in.config, "architectures");
        const cJSON *a0 = cJSON_GetArrayItem(archs, 0);
        const char *arch = cJSON_IsString(a0) ? a0->valuestring : (cfg ? cfg->architecture : NULL);
        in.llama_family = is_llama_family(arch);
        const sn_arch *fam = sn_arch_find(arch);
        spm_only = fam && fam->vocab == SN_ARCH_VOCAB_SPM_NO_PREFIX;
        in.added_literal = fam && fam->vocab_added_literal;
        json_class = fam ? fam->vocab_json_class : NULL;
        if (fam && fam->vocab == SN_ARCH_VOCAB_RWKV) { /* a vocabulary file of its own */
            st = sn_vocab_rwkv_write(model_dir, opts ? opts->rwkv_vocab : NULL, in.config, in.vocab_size, w, rep, err);
            goto out;
        }
    }
    if (in.tok_config && !cJSON_IsObject(in.tok_config)) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer_config.json: not a JSON object");
        goto out;
    }
    if (in.tok_json && !cJSON_IsObject(in.tok_json)) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer.json: not a JSON object");
        goto out;
    }

    if (in.llama_family) {
        const cJSON *aps = jget(in.tok_config, "add_prefix_space");
        if (cJSON_IsBool(aps)) p.space_prefix = cJSON_IsTrue(aps);
    }
    spm_path = sn_path_join(model_dir, "tokenizer.model");
    tj_path = sn_path_join(model_dir, "tokenizer.json");
    if (!spm_path || !tj_path) {
        st = sn_err_set(err, SN_ENOMEM, "out of memory");
        goto out;
    }
    /* the family's tokenizer_class read from tokenizer.json even beside a tokenizer.model */
    const char *tclass = jstr(in.tok_config, "tokenizer_class");
    if (sn_vocab_file_exists(spm_path) && !(json_class && tclass && !strcmp(tclass, json_class))) {
        st = sn_vocab_spm(&p, &in, spm_path, err);
        if (spm_only) p.space_prefix_last = 0;
    } else if (spm_only) {
        st = sn_err_set(err, SN_EUNSUPPORTED, "%s: missing: this family's vocabulary is read from tokenizer.model "
                        "(llama.cpp's converter takes tokenizer.json through its GPT-2 path, which has no "
                        "pre-tokenizer for it)", spm_path);
    } else if (!in.tok_json) {
        st = sn_err_set(err, SN_EFORMAT, "%s: no tokenizer: neither tokenizer.model nor tokenizer.json exists",
                        model_dir);
    } else {
        const cJSON *m = jget(in.tok_json, "model");
        const char *mtype = jstr(m, "type");
        const cJSON *bf = jget(m, "byte_fallback");
        int is_bpe = mtype && !strcmp(mtype, "BPE");
        int is_llama3 = is_bpe && cJSON_IsTrue(jget(m, "ignore_merges")) && cJSON_IsFalse(bf);
        const char *dec = jstr(jget(in.tok_json, "decoder"), "type");
        if (in.llama_family && !is_llama3 && is_bpe && cJSON_IsTrue(bf) && dec && !strcmp(dec, "Sequence"))
            st = sn_vocab_llama_hf(&p, &in, err);
        else
            st = sn_vocab_gpt2(&p, &in, opts, err);
    }
    if (st) goto out;
    if ((st = sn_vocab_special(&p, &in, err))) goto out;
    if (in.llama_family) {
        p.codellama_eot = in.vocab_size == 32016;
        p.granite_no_bos = in.vocab_size == 49152;
    }
    if ((st = emit(&p, w, err))) goto out;
    if (rep) {
        memset(rep, 0, sizeof *rep);
        snprintf(rep->model, sizeof rep->model, "%s", p.model);
        snprintf(rep->pre, sizeof rep->pre, "%s", p.pre);
        rep->n_tokens = (int)p.t.n;
    }
out:
    /* name the folder once, unless the message already carries a full path */
    if (st && err && strncmp(err->msg, model_dir, strlen(model_dir)) != 0) sn_err_prefix(err, "%s", model_dir);
    free(spm_path);
    free(tj_path);
    if (tok_arena.base) json_arena_release(&tok_arena); /* the tree of tokenizer.json */
    else cJSON_Delete(in.tok_json);
    cJSON_Delete(in.tok_config);
    if (!cfg || in.config != cfg->root) cJSON_Delete(in.config);
    plan_free(&p);
    return st;
}
