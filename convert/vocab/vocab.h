/* vocab.h - HF tokenizer files -> GGUF tokenizer.* metadata.
 *
 * sn_vocab_write_gguf() reads the tokenizer of an HF model folder (tokenizer.json,
 * tokenizer_config.json, tokenizer.model, added_tokens.json, chat_template.jinja/.json, config.json)
 * and appends to a GGUF writer, in the order llama.cpp's converter writes them:
 *   tokenizer.ggml.model, .pre, .tokens, .scores (SPM only), .token_type, .merges (BPE),
 *   special token ids (u32), add_bos/add_eos (bool), add_space_prefix, tokenizer.chat_template[.*].
 * Byte-level BPE -> model "gpt2" with the pre-tokenizer named by fingerprinting pre_tokenizer;
 * tokenizer.model -> model "llama"; a tokenizer.json BPE with byte_fallback -> model "llama" with
 * scores derived from merge ranks (see docs/TOKENIZER.md, "Conversion"). Nothing is written to the
 * writer when an error is returned. */
#ifndef SN_VOCAB_H
#define SN_VOCAB_H
#include "gguf.h"
#include "sn_err.h"
#include <stddef.h>

typedef struct {
    const char *pre_override; /* --pre NAME or NULL */
    const char *rwkv_vocab;   /* --vocab FILE: the RWKV world vocabulary; NULL = rwkv_vocab_v20230424.txt
                               * in model_dir */
} sn_vocab_opts;

typedef struct {
    char model[16]; /* "gpt2" or "llama" */
    char pre[32];   /* tokenizer.ggml.pre written */
    int n_tokens;   /* length of tokenizer.ggml.tokens */
} sn_vocab_report;

struct sn_hf_config; /* convert/readers/hf_config.h; may be NULL. config.json is read raw from model_dir (as
                     * gguf-py's SpecialVocab does); cfg only supplies vocab_size / architecture
                     * when the raw file lacks them (transformers' class defaults). */

/* Not thread-safe with other cJSON users: while it parses tokenizer.json it points cJSON's
 * process-wide allocation hooks at a private arena and then resets them to malloc/free (vocab.c).
 * Call it where no other thread uses cJSON, and re-install your own hooks afterwards if you had any. */
sn_status sn_vocab_write_gguf(const char *model_dir, const struct sn_hf_config *cfg,
                              sn_gguf_writer *w, const sn_vocab_opts *opts, sn_vocab_report *rep,
                              sn_err *err);

/* The RWKV world vocabulary of model_dir (convert/vocab/vocab_rwkv.c); sn_vocab_write_gguf calls it for
 * families whose sn_arch says SN_ARCH_VOCAB_RWKV. */
struct cJSON;
/* config: the parsed config.json (special ids); vocab_size <= 0: 65536. vocab_file: the vocabulary
 * to read; NULL = model_dir/rwkv_vocab_v20230424.txt (tokenizer_config.json is read from model_dir). */
sn_status sn_vocab_rwkv_write(const char *model_dir, const char *vocab_file, const struct cJSON *config,
                              int64_t vocab_size, sn_gguf_writer *w, sn_vocab_report *rep, sn_err *err);

/* The pre-tokenizer names sunny can recognise, NULL-terminated (for --pre help and errors). */
const char *const *sn_vocab_pre_names(void);

/* ---- internals shared with tests (convert/vocab/pretok_fingerprint.c) ---- */
struct cJSON;
/* Names llama.cpp's pre-tokenizer for a parsed tokenizer.json (+ tokenizer_config.json, may be NULL)
 * into NAME. Unknown layouts -> SN_EUNSUPPORTED with the regex found and a hint to use --pre. */
sn_status sn_pretok_fingerprint(const struct cJSON *tokenizer_json,
                                const struct cJSON *tokenizer_config, const char *what, char *name,
                                size_t name_size, sn_err *err);
/* 1 if llama.cpp accepts NAME as tokenizer.ggml.pre. */
int sn_pretok_known_name(const char *name);

#endif
