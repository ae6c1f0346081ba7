/* spm_model.h - the vocabulary inside a SentencePiece tokenizer.model, read without libprotobuf.
 *
 * A tokenizer.model is a serialized sentencepiece.ModelProto. Only field 1 (repeated SentencePiece
 * pieces) matters to GGUF conversion: each piece has field 1 (string piece), 2 (float score, default
 * 0) and 3 (enum type, default NORMAL). Everything else (trainer/normalizer specs, unknown fields) is
 * skipped by wire type. The parser validates every varint, length and field against the buffer and
 * reports the byte offset of the first problem. Piece strings point into the caller's buffer. */
#ifndef SN_SPM_MODEL_H
#define SN_SPM_MODEL_H
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

/* sentencepiece.ModelProto.SentencePiece.Type (same numbering as GGUF token types). */
enum {
    SN_SPM_NORMAL = 1, SN_SPM_UNKNOWN = 2, SN_SPM_CONTROL = 3,
    SN_SPM_USER_DEFINED = 4, SN_SPM_UNUSED = 5, SN_SPM_BYTE = 6
};

typedef struct {
    const char *piece; /* not NUL-terminated; points into the parsed buffer */
    uint32_t len;
    float score;
    int type;          /* SN_SPM_* */
} sn_spm_piece;

typedef struct {
    sn_spm_piece *pieces;
    size_t n;
    /* normalizer_spec.add_dummy_prefix (field 3.3), -1 when absent */
    int add_dummy_prefix;
} sn_spm_model;

/* Parses BUF (kept alive by the caller while the model is used). WHAT names the file in errors. */
sn_status sn_spm_parse(const uint8_t *buf, size_t size, const char *what, sn_spm_model *out,
                       sn_err *err);
void sn_spm_free(sn_spm_model *m);

#endif
