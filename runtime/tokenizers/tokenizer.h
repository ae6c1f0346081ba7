/* tokenizer.h - llama.cpp-compatible tokenizers built from a GGUF's tokenizer.* metadata.
 *
 * Models: "llama" (SentencePiece: score-driven merges, <0xNN> byte fallback, add_space_prefix) and
 * "gpt2" (byte-level BPE: PCRE2 pre-tokenizer regex chosen by tokenizer.ggml.pre, rank-ordered
 * merges, ignore_merges for the llama3 family). Special/control tokens in the text are recognised
 * when parse_special is set, as llama_tokenize does. Output must equal llama.cpp's for the same
 * GGUF; docs/TOKENIZER.md lists where llama.cpp itself differs from HF. */
#ifndef SN_TOKENIZER_H
#define SN_TOKENIZER_H
#include "gguf.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sn_tokenizer sn_tokenizer;

enum { /* llama_token_type */
    SN_TOKEN_UNDEFINED = 0, SN_TOKEN_NORMAL = 1, SN_TOKEN_UNKNOWN = 2, SN_TOKEN_CONTROL = 3,
    SN_TOKEN_USER_DEFINED = 4, SN_TOKEN_UNUSED = 5, SN_TOKEN_BYTE = 6
};

sn_status sn_tok_load(const sn_gguf *g, sn_tokenizer **out, sn_err *err);
void sn_tok_free(sn_tokenizer *t);

int32_t sn_tok_n_vocab(const sn_tokenizer *t);
/* The special token ids (-1 if none) and whether encoding adds BOS / EOS. */
typedef struct sn_tok_special_ids {
    int32_t bos, eos, eot;
    int add_bos, add_eos;
} sn_tok_special_ids;
sn_tok_special_ids sn_tok_specials(const sn_tokenizer *t);
/* True for tokens that end generation (eos, eot, eom, and control tokens llama.cpp treats as EOG). */
int sn_tok_is_eog(const sn_tokenizer *t, int32_t id);
/* llama_token_attr bits of id after llama.cpp's load-time fix-ups (SN_TOKEN_ATTR_*); 0 if id is invalid. */
enum {
    SN_TOKEN_ATTR_UNKNOWN = 1 << 0, SN_TOKEN_ATTR_UNUSED = 1 << 1, SN_TOKEN_ATTR_NORMAL = 1 << 2,
    SN_TOKEN_ATTR_CONTROL = 1 << 3, SN_TOKEN_ATTR_USER_DEFINED = 1 << 4, SN_TOKEN_ATTR_BYTE = 1 << 5,
    SN_TOKEN_ATTR_LSTRIP = 1 << 7, SN_TOKEN_ATTR_RSTRIP = 1 << 8
};
uint32_t sn_tok_attr(const sn_tokenizer *t, int32_t id);
/* The token's text as stored in the GGUF (GPT-2 byte-encoded for gpt2 vocabs; "[EMPTY_i]" for an
 * empty one, as llama.cpp names it), NUL-terminated; *len (if not NULL) gets the length, which
 * counts any NUL bytes inside. NULL if id is invalid. */
const char *sn_tok_text(const sn_tokenizer *t, int32_t id, size_t *len);

/* Tokenize len bytes of UTF-8. add_special: add BOS/EOS as the GGUF says. parse_special: recognise
 * control/user-defined token texts in the input. Writes up to cap ids; returns the number of ids
 * (which may exceed cap: call again with a larger buffer) or a negative status. */
int64_t sn_tok_encode(const sn_tokenizer *t, const char *text, size_t len, int add_special,
                      int parse_special, int32_t *ids, size_t cap, sn_err *err);
/* The bytes one token stands for when detokenized (byte-level decoded, ▁ -> space, <0xNN> -> byte).
 * special: render control tokens' text. Returns the byte count written (may exceed cap) or < 0. */
int64_t sn_tok_piece(const sn_tokenizer *t, int32_t id, int special, char *buf, size_t cap);
/* Detokenize a sequence (handles the leading-space rule of SPM). Returns bytes (may exceed cap). */
int64_t sn_tok_decode(const sn_tokenizer *t, const int32_t *ids, size_t n, int special, char *buf,
                      size_t cap);

#endif
