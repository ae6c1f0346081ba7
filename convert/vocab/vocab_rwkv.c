/* vocab_rwkv.c - the RWKV "world" vocabulary (rwkv_vocab_v20230424.txt) -> GGUF tokenizer.*,
 * as llama.cpp's converter writes it (_set_vocab_rwkv_world).
 *
 * Each line of the file is `ID LITERAL LEN`: LITERAL is a Python str or bytes literal ('..', "..",
 * b'..', b".."; escapes \\ \' \" \n \r \t \xNN, and \uNNNN / \UNNNNNNNN in str), which the reference
 * evaluates, encodes to UTF-8 and checks against LEN; ids must run 1, 2, 3, ... Token 0 is "<s>"
 * (CONTROL); each entry is stored as Python's repr of its bytes without the b'' (printable ASCII
 * as is, \\, the quote repr chose, \t \n \r, every other byte \xNN); the list is padded to
 * vocab_size with "[PADi]" (UNUSED). Keys: model "rwkv", tokens, token_type, then the special ids
 * gguf-py's SpecialVocab finds in config.json, with bos = eos = 0 and eot = 261 ("\n\n") forced,
 * add_bos/add_eos and the chat template from tokenizer_config.json when it has them. When it has
 * no template the reference writes one of llama.cpp's own files; sunny writes none (docs/TOKENIZER.md,
 * "RWKV world"). */
#include "vocab.h"
#include "vocab_internal.h"
#include "budget.h"
#include "num.h"
#include "templates.h"
#include "path.h"
#include "mapfile.h"
#include "utf8.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TOKEN = 4096 };

static int hexv(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The one-character escapes of a Python literal and the bytes they stand for. */
static const char ESCAPES[] = "\\'\"nrtabfv", ESCAPED[] = "\\'\"\n\r\t\a\b\f\v";

/* Evaluates the literal s[0..n) into out (at most MAX_TOKEN bytes); returns the length or -1. */
static long eval_literal(const char *s, size_t n, unsigned char *out) {
    size_t i = 0, o = 0;
    int bytes = 0;
    if (i < n && (s[i] == 'b' || s[i] == 'B')) bytes = 1, i++;
    if (i >= n || (s[i] != '\'' && s[i] != '"') || n < i + 2 || s[n - 1] != s[i]) return -1;
    const char q = s[i++];
    const size_t end = n - 1;
    while (i < end) {
        if (o + 4 > MAX_TOKEN) return -1;
        unsigned char c = (unsigned char)s[i++];
        if (c == (unsigned char)q) return -1; /* an unescaped quote inside */
        if (c != '\\') {
            if (bytes && c >= 0x80) return -1; /* bytes literals are ASCII */
            out[o++] = c;
            continue;
        }
        if (i >= end) return -1;
        c = (unsigned char)s[i++];
        const char *simple = strchr(ESCAPES, c);
        if (c && simple) {
            out[o++] = (unsigned char)ESCAPED[simple - ESCAPES];
            continue;
        }
        /* \xHH; \uHHHH and \UHHHHHHHH in str literals only; anything else is refused */
        const int digits = c == 'x' ? 2 : bytes ? 0 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
        if (!digits) return -1;
        uint32_t v = 0;
        for (int k = 0; k < digits; k++, i++) {
            const int h = i < end ? hexv(s[i]) : -1;
            if (h < 0) return -1;
            v = v * 16 + (uint32_t)h;
        }
        if (bytes) out[o++] = (unsigned char)v;
        else if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return -1;
        else o += (size_t)sn_utf8_put(v, (char *)out + o);
    }
    return (long)o;
}

/* Python's repr(bytes)[2:-1]. */
static size_t py_repr(const unsigned char *b, size_t n, char *out) {
    int has_sq = 0, has_dq = 0;
    for (size_t i = 0; i < n; i++) has_sq |= b[i] == '\'', has_dq |= b[i] == '"';
    const char q = has_sq && !has_dq ? '"' : '\'';
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = b[i];
        if (c == (unsigned char)q || c == '\\') out[o++] = '\\', out[o++] = (char)c;
        else if (c == '\t') out[o++] = '\\', out[o++] = 't';
        else if (c == '\n') out[o++] = '\\', out[o++] = 'n';
        else if (c == '\r') out[o++] = '\\', out[o++] = 'r';
        else if (c < 0x20 || c >= 0x7f) o += (size_t)sprintf(out + o, "\\x%02x", c);
        else out[o++] = (char)c;
    }
    out[o] = 0;
    return o;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static int int_key(const cJSON *o, const char *k, int64_t *v) {
    const cJSON *x = get(o, k);
    return cJSON_IsNumber(x) && sn_f64_to_i64(x->valuedouble, 0, INT64_MAX, v);
}

sn_status sn_vocab_rwkv_write(const char *dir, const char *vocab_file, const cJSON *config, int64_t vocab_size,
                              sn_gguf_writer *w, sn_vocab_report *rep, sn_err *err) {
    char *path = vocab_file ? strdup(vocab_file) : sn_path_join(dir, "rwkv_vocab_v20230424.txt"), *text = NULL,
         *arena = NULL;
    char **tok = NULL;
    uint64_t *lens = NULL;
    int32_t *types = NULL;
    cJSON *tcfg = NULL;
    uint64_t len = 0;
    sn_status st = SN_OK;
    const int64_t V = vocab_size > 0 ? vocab_size : 65536;
    if (!path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (V > (int64_t)1 << 24) { st = sn_err_set(err, SN_EFORMAT, "config.json: vocab_size %lld is too large", (long long)V); goto out; }
    if ((st = SN_READ_FILE(path, SN_BUDGET_VOCAB_FILE, &text, &len, err))) goto out;
    tok = calloc((size_t)V, sizeof *tok);
    lens = calloc((size_t)V, sizeof *lens);
    types = calloc((size_t)V, sizeof *types);
    arena = malloc(len * 4 + (size_t)V * 16 + 64); /* repr grows a byte to at most 4 */
    if (!tok || !lens || !types || !arena) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto out; }
    size_t ap = 0;
    tok[0] = strcpy(arena, "<s>");
    lens[0] = 3;
    types[0] = 3; /* CONTROL */
    ap = 4;
    int64_t n = 1;
    unsigned char bytes[MAX_TOKEN];
    size_t line = 0;
    for (char *p = text; *p; line++) {
        char *nl = strchr(p, '\n');
        char *e = nl ? nl : p + strlen(p);
        if (e > p && e[-1] == '\r') e--; /* the reference reads text mode: \r\n is a newline */
        if (e == p && !nl) break;
        /* ID LITERAL LEN: split at the first and the last space */
        char *s1 = memchr(p, ' ', (size_t)(e - p)), *s2 = NULL;
        for (char *q = e; q > p; q--)
            if (q[-1] == ' ') { s2 = q - 1; break; }
        if (!s1 || s2 <= s1) { st = sn_err_set(err, SN_EFORMAT, "%s: line %zu: expected 'ID LITERAL LEN'", path, line + 1); goto out; }
        char *endp;
        const long id = strtol(p, &endp, 10), tl = strtol(s2 + 1, NULL, 10);
        if (endp != s1 || id != n) {
            st = sn_err_set(err, SN_EFORMAT, "%s: line %zu: id %.*s, expected %lld (ids must count up from 1)", path,
                            line + 1, (int)(s1 - p), p, (long long)n);
            goto out;
        }
        const long bl = eval_literal(s1 + 1, (size_t)(s2 - s1 - 1), bytes);
        if (bl < 0) { st = sn_err_set(err, SN_EFORMAT, "%s: line %zu: cannot read the token literal", path, line + 1); goto out; }
        if (bl != tl) {
            st = sn_err_set(err, SN_EFORMAT, "%s: line %zu: token is %ld bytes but the line says %ld", path, line + 1, bl, tl);
            goto out;
        }
        if (n >= V) { st = sn_err_set(err, SN_EFORMAT, "%s: more than vocab_size %lld tokens", path, (long long)V); goto out; }
        tok[n] = arena + ap;
        lens[n] = py_repr(bytes, (size_t)bl, arena + ap);
        ap += lens[n] + 1;
        types[n] = 1; /* NORMAL */
        n++;
        p = nl ? nl + 1 : e;
    }
    for (int64_t i = n; i < V; i++) {
        tok[i] = arena + ap;
        lens[i] = (uint64_t)sprintf(arena + ap, "[PAD%lld]", (long long)i);
        ap += lens[i] + 1;
        types[i] = 5; /* UNUSED */
    }
    {
        char *tp = sn_path_join(dir, "tokenizer_config.json");
        char *tt = NULL;
        if (tp && sn_vocab_file_exists(tp) && (st = SN_READ_FILE(tp, SN_BUDGET_TEXT_FILE, &tt, NULL, err))) { free(tp); goto out; }
        free(tp);
        if (tt) {
            tcfg = cJSON_Parse(tt);
            free(tt);
            if (!tcfg || !cJSON_IsObject(tcfg)) { st = sn_err_set(err, SN_EFORMAT, "%s/tokenizer_config.json: not a JSON object", dir); goto out; }
        }
    }
#define TRY(x) do { if ((st = (x))) { sn_err_set(err, st, "writing tokenizer metadata"); goto out; } } while (0)
    TRY(sn_gguf_writer_set_str(w, "tokenizer.ggml.model", "rwkv"));
    TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)tok, lens, (uint64_t)V));
    TRY(sn_gguf_writer_set_arr(w, "tokenizer.ggml.token_type", SN_GGUF_I32, types, (uint64_t)V));
    {
        /* SpecialVocab: <typ>_token_id of config.json in its type order; bos/eos forced to 0, eot 261 */
        static const struct { const char *cfg, *key; } ids[] = {
            {"bos_token_id", "tokenizer.ggml.bos_token_id"}, {"eos_token_id", "tokenizer.ggml.eos_token_id"},
            {"unk_token_id", "tokenizer.ggml.unknown_token_id"}, {"sep_token_id", "tokenizer.ggml.seperator_token_id"},
            {"pad_token_id", "tokenizer.ggml.padding_token_id"}, {"mask_token_id", "tokenizer.ggml.mask_token_id"}};
        const cJSON *root = config;
        int64_t v;
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            if (i < 2) {
                TRY(sn_gguf_writer_set_u32(w, ids[i].key, 0));
                continue;
            }
            if (int_key(root, ids[i].cfg, &v) && v < UINT32_MAX) TRY(sn_gguf_writer_set_u32(w, ids[i].key, (uint32_t)v));
        }
        TRY(sn_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", 261));
    }
    {
        const cJSON *b = get(tcfg, "add_bos_token"), *e = get(tcfg, "add_eos_token");
        if (cJSON_IsBool(b)) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", cJSON_IsTrue(b)));
        if (cJSON_IsBool(e)) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_eos_token", cJSON_IsTrue(e)));
        const cJSON *ct = get(tcfg, "chat_template");
        if (cJSON_IsString(ct)) TRY(sn_gguf_writer_set_str(w, "tokenizer.chat_template", ct->valuestring));
        else { /* none of the model's own: the world chat format, as llama.cpp's converter also adds one */
            const char *world = sn_tmpl_embedded("rwkv-world-default.jinja", NULL);
            if (!world) { st = sn_err_set(err, SN_EFORMAT, "templates: rwkv-world-default.jinja is not embedded"); goto out; }
            TRY(sn_gguf_writer_set_str(w, "tokenizer.chat_template", world));
        }
    }
#undef TRY
    if (rep) {
        memset(rep, 0, sizeof *rep);
        snprintf(rep->model, sizeof rep->model, "rwkv");
        rep->n_tokens = (int)V;
    }
out:
    cJSON_Delete(tcfg);
    free(path);
    free(text);
    free(arena);
    free(tok);
    free(lens);
    free(types);
    return st;
}
