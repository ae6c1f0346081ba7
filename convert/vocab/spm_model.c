/* spm_model.c - minimal protobuf wire-format reader for SentencePiece tokenizer.model files.
 *
 * We need pieces, scores and types (and add_dummy_prefix) to write GGUF tokenizer metadata; pulling
 * in libprotobuf and the sentencepiece schema for that would be heavier than these 150 lines. The
 * reader walks tag/value pairs, descends into the two messages we care about and skips the rest by
 * wire type, refusing anything that runs past its enclosing length. */
#include "spm_model.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *base; /* start of the whole buffer, for offsets in errors */
    const uint8_t *p;
    const uint8_t *end;
    const char *what;
} pb_cur;

static sn_status pb_bad(const pb_cur *c, sn_err *err, const char *msg) {
    return sn_err_set(err, SN_EFORMAT, "%s: malformed SentencePiece model at byte %zu: %s", c->what,
                      (size_t)(c->p - c->base), msg);
}

static sn_status pb_varint(pb_cur *c, uint64_t *v, sn_err *err) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) return pb_bad(c, err, "truncated varint");
        uint8_t b = *c->p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return SN_OK;
        }
    }
    return pb_bad(c, err, "varint longer than 10 bytes");
}

/* Reads a length prefix and returns the sub-range [*sub, *sub_end). */
static sn_status pb_len(pb_cur *c, const uint8_t **sub, const uint8_t **sub_end, sn_err *err) {
    uint64_t n;
    sn_status st = pb_varint(c, &n, err);
    if (st) return st;
    if (n > (uint64_t)(c->end - c->p)) return pb_bad(c, err, "length runs past the end of its message");
    *sub = c->p;
    *sub_end = c->p + n;
    c->p += n;
    return SN_OK;
}

static sn_status pb_skip(pb_cur *c, unsigned wire, sn_err *err) {
    uint64_t v;
    const uint8_t *a, *b;
    switch (wire) {
    case 0: return pb_varint(c, &v, err);
    case 1:
        if (c->end - c->p < 8) return pb_bad(c, err, "truncated fixed64");
        c->p += 8;
        return SN_OK;
    case 2: return pb_len(c, &a, &b, err);
    case 5:
        if (c->end - c->p < 4) return pb_bad(c, err, "truncated fixed32");
        c->p += 4;
        return SN_OK;
    default: return pb_bad(c, err, "unsupported wire type (groups are not used by SentencePiece)");
    }
}

static sn_status parse_piece(pb_cur *c, sn_spm_piece *out, sn_err *err) {
    out->piece = "";
    out->len = 0;
    out->score = 0.0f;
    out->type = SN_SPM_NORMAL;
    int have_piece = 0;
    while (c->p < c->end) {
        uint64_t tag;
        sn_status st = pb_varint(c, &tag, err);
        if (st) return st;
        unsigned field = (unsigned)(tag >> 3), wire = (unsigned)(tag & 7);
        if (field == 1 && wire == 2) {
            const uint8_t *a, *b;
            if ((st = pb_len(c, &a, &b, err))) return st;
            if (b - a > (ptrdiff_t)UINT32_MAX) return pb_bad(c, err, "piece too long");
            out->piece = (const char *)a;
            out->len = (uint32_t)(b - a);
            have_piece = 1;
        } else if (field == 2 && wire == 5) {
            if (c->end - c->p < 4) return pb_bad(c, err, "truncated score");
            uint32_t u = (uint32_t)c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 |
                         (uint32_t)c->p[3] << 24;
            memcpy(&out->score, &u, 4);
            c->p += 4;
        } else if (field == 3 && wire == 0) {
            uint64_t t;
            if ((st = pb_varint(c, &t, err))) return st;
            if (t < SN_SPM_NORMAL || t > SN_SPM_BYTE) return pb_bad(c, err, "piece type out of range 1..6");
            out->type = (int)t;
        } else if (field <= 3) {
            return pb_bad(c, err, "piece field has the wrong wire type");
        } else if ((st = pb_skip(c, wire, err))) {
            return st;
        }
    }
    if (!have_piece) return pb_bad(c, err, "piece without its text (field 1)");
    return SN_OK;
}

static sn_status parse_normalizer(pb_cur *c, sn_spm_model *m, sn_err *err) {
    while (c->p < c->end) {
        uint64_t tag, v;
        sn_status st = pb_varint(c, &tag, err);
        if (st) return st;
        unsigned field = (unsigned)(tag >> 3), wire = (unsigned)(tag & 7);
        if (field == 3 && wire == 0) {
            if ((st = pb_varint(c, &v, err))) return st;
            m->add_dummy_prefix = v != 0;
        } else if ((st = pb_skip(c, wire, err))) {
            return st;
        }
    }
    return SN_OK;
}

sn_status sn_spm_parse(const uint8_t *buf, size_t size, const char *what, sn_spm_model *out,
                       sn_err *err) {
    memset(out, 0, sizeof *out);
    out->add_dummy_prefix = -1;
    pb_cur c = {buf, buf, buf + size, what ? what : "tokenizer.model"};
    size_t cap = 0;
    sn_status st = SN_OK;
    while (c.p < c.end) {
        uint64_t tag;
        if ((st = pb_varint(&c, &tag, err))) goto fail;
        unsigned field = (unsigned)(tag >> 3), wire = (unsigned)(tag & 7);
        if (field == 0) {
            st = pb_bad(&c, err, "field number 0");
            goto fail;
        }
        if ((field == 1 || field == 3) && wire == 2) {
            const uint8_t *a, *b;
            if ((st = pb_len(&c, &a, &b, err))) goto fail;
            pb_cur sub = {buf, a, b, c.what};
            if (field == 3) {
                if ((st = parse_normalizer(&sub, out, err))) goto fail;
                continue;
            }
            if (out->n == cap) {
                size_t ncap = cap ? cap * 2 : 1024;
                sn_spm_piece *np = realloc(out->pieces, ncap * sizeof *np);
                if (!np) {
                    st = sn_err_set(err, SN_ENOMEM, "%s: out of memory for %zu pieces", c.what, ncap);
                    goto fail;
                }
                out->pieces = np;
                cap = ncap;
            }
            if ((st = parse_piece(&sub, &out->pieces[out->n], err))) goto fail;
            out->n++;
        } else if (field == 1 || field == 3) {
            st = pb_bad(&c, err, "ModelProto field has the wrong wire type");
            goto fail;
        } else if ((st = pb_skip(&c, wire, err))) {
            goto fail;
        }
    }
    if (out->n == 0) {
        st = sn_err_set(err, SN_EFORMAT, "%s: SentencePiece model has no pieces", c.what);
        goto fail;
    }
    return SN_OK;
fail:
    sn_spm_free(out);
    return st;
}

void sn_spm_free(sn_spm_model *m) {
    if (!m) return;
    free(m->pieces);
    memset(m, 0, sizeof *m);
}
