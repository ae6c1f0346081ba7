/* jinja_lex.c - template text -> tokens, applying jinja2's whitespace rules as transformers
 * configures them: newlines normalised to \n and one trailing newline dropped
 * (keep_trailing_newline=False); "{%-"/"-%}" strip all whitespace on that side; lstrip_blocks
 * removes spaces/tabs before "{%" / "{#" when only they precede the tag on its line ("{%+"
 * opts out); trim_blocks removes the first newline after "%}" / "#}" ("+%}" opts out). Like
 * jinja2, a "}}" or "%}" only closes a tag when brackets inside it are balanced. */
#include "jinja_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    jarena *a;
    const char *s;  /* normalised source */
    size_t n, pos;
    jtok *t;
    size_t nt, cap;
    sn_err *err;
    size_t lc_off; /* position cache for line_col_at: tokens are pushed in source order */
    uint32_t lc_line, lc_col;
} lexer;

static void line_col(const char *s, size_t off, uint32_t *line, uint32_t *col) {
    uint32_t l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n') { l++; c = 1; } else c++;
    }
    *line = l;
    *col = c;
}

static void line_col_at(lexer *L, size_t off, uint32_t *line, uint32_t *col) {
    if (off < L->lc_off || L->lc_line == 0) { L->lc_off = 0; L->lc_line = 1; L->lc_col = 1; }
    for (size_t i = L->lc_off; i < off; i++) {
        if (L->s[i] == '\n') { L->lc_line++; L->lc_col = 1; } else L->lc_col++;
    }
    L->lc_off = off;
    *line = L->lc_line;
    *col = L->lc_col;
}

static sn_status lex_fail(lexer *L, sn_status code, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static sn_status lex_fail(lexer *L, sn_status code, size_t off, const char *fmt, ...) {
    uint32_t l, c;
    line_col(L->s, off, &l, &c);
    char where[32];
    snprintf(where, sizeof where, " at %u:%u", l, c);
    va_list ap;
    va_start(ap, fmt);
    ja_verr(L->err, code, "", where, fmt, ap);
    va_end(ap);
    return code;
}

static jtok *push(lexer *L, jtok_type t, size_t off, size_t len) {
    if (L->nt == L->cap) {
        size_t nc = L->cap ? L->cap * 2 : 256;
        jtok *nt = ja_alloc(L->a, nc * sizeof *nt);
        if (!nt) return NULL;
        if (L->nt) memcpy(nt, L->t, L->nt * sizeof *nt);
        L->t = nt;
        L->cap = nc;
    }
    jtok *k = &L->t[L->nt++];
    memset(k, 0, sizeof *k);
    k->t = t;
    k->p = L->s + off;
    k->len = len;
    line_col_at(L, off, &k->line, &k->col);
    return k;
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int is_name0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static void put_utf8(char *o, size_t *n, uint32_t cp) {
    if (cp < 0x80) o[(*n)++] = (char)cp;
    else if (cp < 0x800) { o[(*n)++] = (char)(0xc0 | cp >> 6); o[(*n)++] = (char)(0x80 | (cp & 63)); }
    else if (cp < 0x10000) {
        o[(*n)++] = (char)(0xe0 | cp >> 12); o[(*n)++] = (char)(0x80 | ((cp >> 6) & 63));
        o[(*n)++] = (char)(0x80 | (cp & 63));
    } else {
        o[(*n)++] = (char)(0xf0 | cp >> 18); o[(*n)++] = (char)(0x80 | ((cp >> 12) & 63));
        o[(*n)++] = (char)(0x80 | ((cp >> 6) & 63)); o[(*n)++] = (char)(0x80 | (cp & 63));
    }
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string literal at L->pos (Python "unicode-escape" decoding, as jinja2 does). */
static sn_status lex_string(lexer *L) {
    size_t start = L->pos;
    char q = L->s[L->pos++];
    char *o = ja_alloc(L->a, L->n - start + 8);
    if (!o) return sn_err_set(L->err, SN_ENOMEM, "template: out of memory");
    size_t n = 0;
    while (L->pos < L->n && L->s[L->pos] != q) {
        char c = L->s[L->pos++];
        if (c != '\\') { o[n++] = c; continue; }
        if (L->pos >= L->n) break;
        char e = L->s[L->pos++];
        switch (e) {
        case 'n': o[n++] = '\n'; break;
        case 't': o[n++] = '\t'; break;
        case 'r': o[n++] = '\r'; break;
        case 'a': o[n++] = '\a'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'v': o[n++] = '\v'; break;
        case '\\': case '\'': case '"': o[n++] = e; break;
        case '\n': break;
        case 'x': case 'u': case 'U': {
            int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int i = 0; i < digits; i++) {
                int h = L->pos < L->n ? hexval(L->s[L->pos]) : -1;
                if (h < 0) return lex_fail(L, SN_JINJA_RAISED, start, "truncated \\%c escape in a string", e);
                cp = cp * 16 + (uint32_t)h;
                L->pos++;
            }
            if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
                return lex_fail(L, SN_EUNSUPPORTED, start, "escape \\%c%X in a string", e, cp);
            put_utf8(o, &n, cp);
            break;
        }
        case 'N': return lex_fail(L, SN_EUNSUPPORTED, start, "\\N{...} escape in a string");
        default:
            if (e >= '0' && e <= '7') {
                uint32_t cp = (uint32_t)(e - '0');
                for (int i = 0; i < 2 && L->pos < L->n && L->s[L->pos] >= '0' && L->s[L->pos] <= '7'; i++)
                    cp = cp * 8 + (uint32_t)(L->s[L->pos++] - '0');
                put_utf8(o, &n, cp);
            } else { o[n++] = '\\'; o[n++] = e; }
        }
    }
    if (L->pos >= L->n) return lex_fail(L, SN_JINJA_RAISED, start, "unterminated string");
    L->pos++;
    jtok *k = push(L, TK_STRING, start, L->pos - start);
    if (!k || !(k->str = js_new(L->a, o, n))) return sn_err_set(L->err, SN_ENOMEM, "template: out of memory");
    return SN_OK;
}

static sn_status lex_number(lexer *L) {
    size_t start = L->pos;
    char buf[64];
    size_t bn = 0;
    int is_float = 0;
#define TAKE_DIGITS() while (L->pos < L->n && (is_digit(L->s[L->pos]) || (L->s[L->pos] == '_' && L->pos + 1 < L->n && is_digit(L->s[L->pos + 1])))) { if (L->s[L->pos] != '_' && bn < 60) buf[bn++] = L->s[L->pos]; L->pos++; }
    TAKE_DIGITS();
    if (L->pos + 1 < L->n && L->s[L->pos] == '.' && is_digit(L->s[L->pos + 1])) {
        is_float = 1;
        buf[bn++] = '.';
        L->pos++;
        TAKE_DIGITS();
    }
    if (L->pos < L->n && (L->s[L->pos] == 'e' || L->s[L->pos] == 'E')) {
        size_t save = L->pos, sb = bn;
        buf[bn++] = 'e';
        L->pos++;
        if (L->pos < L->n && (L->s[L->pos] == '+' || L->s[L->pos] == '-')) buf[bn++] = L->s[L->pos++];
        if (L->pos < L->n && is_digit(L->s[L->pos])) { is_float = 1; TAKE_DIGITS(); }
        else { L->pos = save; bn = sb; }
    }
#undef TAKE_DIGITS
    buf[bn] = 0;
    jtok *k = push(L, is_float ? TK_FLOAT : TK_INT, start, L->pos - start);
    if (!k) return sn_err_set(L->err, SN_ENOMEM, "template: out of memory");
    if (is_float) k->f = strtod(buf, NULL);
    else {
        if (bn > 18) return lex_fail(L, SN_EUNSUPPORTED, start, "integer literal wider than 64 bits");
        k->i = strtoll(buf, NULL, 10);
    }
    return SN_OK;
}

/* Tokens of one {{ }} / {% %} tag starting after its opening delimiter. *close_at is where the
 * closing delimiter (with its - or +) begins, *close_end just after it. */
static sn_status lex_tag(lexer *L, int block, size_t open_off, size_t *close_at, size_t *close_end,
                         char *mod) {
    static const char *ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~",
                                "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", ";"};
    int depth = 0;
    for (;;) {
        while (L->pos < L->n && is_ws(L->s[L->pos])) L->pos++;
        if (L->pos >= L->n)
            return lex_fail(L, SN_JINJA_RAISED, open_off, "unexpected end of template, expected '%s'",
                            block ? "%}" : "}}");
        const char *p = L->s + L->pos;
        size_t left = L->n - L->pos;
        if (depth == 0) {
            char e0 = block ? '%' : '}';
            size_t k = (p[0] == '-' || p[0] == '+') ? 1 : 0;
            if (left >= k + 2 && p[k] == e0 && p[k + 1] == '}' && (k == 0 || p[0] == '-' || block)) {
                *mod = k ? p[0] : 0;
                *close_at = L->pos;
                *close_end = L->pos + k + 2;
                return SN_OK;
            }
        }
        if (is_name0(p[0])) {
            size_t s = L->pos;
            while (L->pos < L->n && (is_name0(L->s[L->pos]) || is_digit(L->s[L->pos]))) L->pos++;
            if (!push(L, TK_NAME, s, L->pos - s)) return sn_err_set(L->err, SN_ENOMEM, "template: out of memory");
            continue;
        }
        if (is_digit(p[0])) { sn_status st = lex_number(L); if (st) return st; continue; }
        if (p[0] == '\'' || p[0] == '"') { sn_status st = lex_string(L); if (st) return st; continue; }
        size_t i;
        for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            size_t ol = strlen(ops[i]);
            if (left >= ol && memcmp(p, ops[i], ol) == 0) break;
        }
        if (i == sizeof ops / sizeof ops[0])
            return lex_fail(L, SN_JINJA_RAISED, L->pos, "unexpected character '%c'", p[0]);
        size_t ol = strlen(ops[i]);
        if (ol == 1 && strchr("([{", p[0])) depth++;
        if (ol == 1 && strchr(")]}", p[0])) {
            if (depth == 0) return lex_fail(L, SN_JINJA_RAISED, L->pos, "unexpected '%c'", p[0]);
            depth--;
        }
        if (!push(L, TK_OP, L->pos, ol)) return sn_err_set(L->err, SN_ENOMEM, "template: out of memory");
        L->pos += ol;
    }
}

static sn_status push_data(lexer *L, size_t off, const char *s, size_t n) {
    if (n == 0) return SN_OK;
    jtok *k = push(L, TK_DATA, off, n);
    if (!k || !(k->str = js_new(L->a, s, n))) return sn_err_set(L->err, SN_ENOMEM, "template: out of memory");
    return SN_OK;
}

/* Is the {% tag at OFF (after "{%" and its modifier) the keyword KW? */
static int tag_is(const lexer *L, size_t off, const char *kw) {
    while (off < L->n && is_ws(L->s[off])) off++;
    size_t kl = strlen(kw);
    return off + kl <= L->n && memcmp(L->s + off, kw, kl) == 0 &&
           (off + kl == L->n || !(is_name0(L->s[off + kl]) || is_digit(L->s[off + kl])));
}

sn_status jinja_lex(jarena *a, const char *src, size_t len, jlex_out *out, sn_err *err) {
    lexer L = {.a = a, .err = err};
    char *s = ja_alloc(a, len + 1);
    if (!s) return sn_err_set(err, SN_ENOMEM, "template: out of memory");
    size_t n = 0;
    for (size_t i = 0; i < len; i++) { /* \r\n and \r -> \n */
        if (src[i] == '\r') { s[n++] = '\n'; if (i + 1 < len && src[i + 1] == '\n') i++; }
        else s[n++] = src[i];
    }
    if (n && s[n - 1] == '\n') n--;
    s[n] = 0;
    L.s = s;
    L.n = n;
    int line_starting = 1;
    sn_status st;
    while (L.pos < L.n) {
        const char *tag = NULL;
        for (const char *p = strchr(L.s + L.pos, '{'); p && p + 1 < L.s + L.n; p = strchr(p + 1, '{'))
            if (p[1] == '{' || p[1] == '%' || p[1] == '#') { tag = p; break; }
        size_t text_end = tag ? (size_t)(tag - L.s) : L.n;
        size_t tstart = L.pos, tlen = text_end - L.pos;
        if (!tag) { st = push_data(&L, tstart, L.s + tstart, tlen); if (st) return st; break; }
        char kind = tag[1];
        char mod = text_end + 2 < L.n && (L.s[text_end + 2] == '-' || L.s[text_end + 2] == '+') ? L.s[text_end + 2] : 0;
        if (mod == '-') {
            while (tlen && is_ws(L.s[tstart + tlen - 1])) tlen--;
        } else if (kind != '{' && mod != '+') { /* lstrip_blocks */
            size_t lp = tlen;
            while (lp > 0 && L.s[tstart + lp - 1] != '\n') lp--;
            int only_ws = 1;
            for (size_t i = lp; i < tlen; i++)
                if (L.s[tstart + i] != ' ' && L.s[tstart + i] != '\t') only_ws = 0;
            if ((lp > 0 || line_starting) && only_ws) tlen = lp;
        }
        if ((st = push_data(&L, tstart, L.s + tstart, tlen))) return st;
        size_t body = text_end + 2 + (mod ? 1 : 0);
        size_t end;
        if (kind == '#') {
            const char *e = strstr(L.s + body, "#}");
            if (!e) return lex_fail(&L, SN_JINJA_RAISED, text_end, "unterminated comment");
            end = (size_t)(e - L.s) + 2;
            if (e > L.s + body && e[-1] == '-') { while (end < L.n && is_ws(L.s[end])) end++; }
            else if (end < L.n && L.s[end] == '\n') end++;
            line_starting = end > 0 && L.s[end - 1] == '\n';
            L.pos = end;
            continue;
        }
        if (kind == '%' && tag_is(&L, body, "raw")) {
            const char *e = strstr(L.s + body, "%}");
            if (!e) return lex_fail(&L, SN_JINJA_RAISED, text_end, "unterminated raw tag");
            size_t cs = (size_t)(e - L.s) + 2, ce = cs;
            if (e[-1] == '-') while (cs < L.n && is_ws(L.s[cs])) cs++;
            else if (cs < L.n && L.s[cs] == '\n') cs++;
            for (ce = cs; ce < L.n; ce++) {
                if (L.s[ce] == '{' && ce + 1 < L.n && L.s[ce + 1] == '%') {
                    size_t k = ce + 2 + (L.s[ce + 2] == '-' || L.s[ce + 2] == '+');
                    if (tag_is(&L, k, "endraw")) break;
                }
            }
            if (ce >= L.n) return lex_fail(&L, SN_JINJA_RAISED, text_end, "missing endraw");
            size_t cl = ce - cs;
            if (L.s[ce + 2] == '-') while (cl && is_ws(L.s[cs + cl - 1])) cl--;
            if ((st = push_data(&L, cs, L.s + cs, cl))) return st;
            const char *e2 = strstr(L.s + ce, "%}");
            if (!e2) return lex_fail(&L, SN_JINJA_RAISED, ce, "unterminated endraw tag");
            end = (size_t)(e2 - L.s) + 2;
            if (e2[-1] == '-') while (end < L.n && is_ws(L.s[end])) end++;
            else if (e2[-1] != '+' && end < L.n && L.s[end] == '\n') end++;
            line_starting = L.s[end - 1] == '\n';
            L.pos = end;
            continue;
        }
        if (!push(&L, kind == '{' ? TK_VAR_BEGIN : TK_BLOCK_BEGIN, text_end, 2))
            return sn_err_set(err, SN_ENOMEM, "template: out of memory");
        L.pos = body;
        size_t close_at = 0, close_end = 0;
        char cmod = 0;
        if ((st = lex_tag(&L, kind == '%', text_end, &close_at, &close_end, &cmod))) return st;
        if (!push(&L, kind == '{' ? TK_VAR_END : TK_BLOCK_END, close_at, close_end - close_at))
            return sn_err_set(err, SN_ENOMEM, "template: out of memory");
        end = close_end;
        if (cmod == '-') while (end < L.n && is_ws(L.s[end])) end++;
        else if (kind == '%' && cmod != '+' && end < L.n && L.s[end] == '\n') end++; /* trim_blocks */
        line_starting = end > 0 && L.s[end - 1] == '\n';
        L.pos = end;
    }
    if (!push(&L, TK_EOF, L.n, 0)) return sn_err_set(err, SN_ENOMEM, "template: out of memory");
    out->t = L.t;
    out->n = L.nt;
    return SN_OK;
}
