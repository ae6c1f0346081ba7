/* tok_dump.c - sunny's tokenizer on a GGUF, one input string per line, for parity tests.
 *
 *   tok_dump GGUF [--corpus|--json] [--no-parse-special] [--add-special] [--decode] [--bench N] [FILE]
 *   tok_dump GGUF --ids [--plain] [FILE]   lines are JSON id arrays; prints each detokenized as a
 *                            JSON string (special tokens rendered unless --plain)
 *   tok_dump GGUF --info     one JSON object: special ids, add_bos/add_eos, every token's attribute
 *                            bits and the end-of-generation ids (compared with llama.cpp's by
 *                            tok_oracle.mjs info)
 *
 * Reads lines from FILE (or stdin) and prints one JSON id array per string. Line formats: raw (the
 * line is the string), --corpus (tests/fixtures/tokenizer_corpus.txt: '#' comments and empty lines
 * skipped, escapes \n \t \r \\ \#), --json (each line a JSON string literal). --decode prints the
 * detokenized ids (special tokens rendered) as a JSON string instead. --bench N tokenizes the whole
 * input (joined with '\n') N times and prints MB/s on stderr. Defaults match node-llama-cpp's
 * model.tokenize(text, true): parse_special on, add_special off. */
#include "gguf.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int hex4(const char *s, unsigned *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        *v = *v * 16 + (unsigned)d;
    }
    return 0;
}

static size_t put_utf8(unsigned cp, char *o) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes a JSON string literal in place; returns the byte length or -1. */
static long json_unquote(char *s, size_t n) {
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') return -1;
    size_t w = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i] != '\\') { s[w++] = s[i]; continue; }
        if (++i + 1 >= n) return -1;
        switch (s[i]) {
            case 'n': s[w++] = '\n'; break;
            case 't': s[w++] = '\t'; break;
            case 'r': s[w++] = '\r'; break;
            case 'b': s[w++] = '\b'; break;
            case 'f': s[w++] = '\f'; break;
            case '/': case '\\': case '"': s[w++] = s[i]; break;
            case 'u': {
                unsigned cp, lo;
                if (i + 4 >= n || hex4(s + i + 1, &cp)) return -1;
                i += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && s[i + 1] == '\\' && s[i + 2] == 'u' &&
                    !hex4(s + i + 3, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
                w += put_utf8(cp, s + w);
                break;
            }
            default: return -1;
        }
    }
    return (long)w;
}

/* Corpus escapes: \n \t \r \\ \# ; a backslash before anything else stands for itself. */
static size_t corpus_unescape(char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            char c = s[i + 1], r = 0;
            if (c == 'n') r = '\n'; else if (c == 't') r = '\t'; else if (c == 'r') r = '\r';
            else if (c == '\\') r = '\\'; else if (c == '#') r = '#';
            if (r) { s[w++] = r; i++; continue; }
        }
        s[w++] = s[i];
    }
    return w;
}

static void print_json_str(const char *s, size_t n) {
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') fputs("\\n", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c == '\r') fputs("\\r", stdout);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static int usage(void) {
    fprintf(stderr, "usage: tok_dump GGUF [--corpus|--json] [--no-parse-special] [--add-special] [--decode] "
                    "[--bench N] [FILE]\n");
    return 2;
}

/* Parses "[1,2,3]" into ids; returns the count or -1. */
static long parse_ids(const char *s, int32_t **ids, size_t *cap) {
    size_t n = 0;
    while (*s == ' ') s++;
    if (*s++ != '[') return -1;
    for (;;) {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ']') return (long)n;
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) return -1;
        s = end;
        if (n == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            int32_t *p = realloc(*ids, *cap * sizeof **ids);
            if (!p) return -1;
            *ids = p;
        }
        (*ids)[n++] = (int32_t)v;
    }
}

int main(int argc, char **argv) {
    const char *path = NULL, *file = NULL;
    int mode = 0, parse_special = 1, add_special = 0, decode = 0, bench = 0, info = 0, plain = 0;
    /* mode 0 raw, 1 corpus, 2 json, 3 id arrays */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--corpus")) mode = 1;
        else if (!strcmp(argv[i], "--json")) mode = 2;
        else if (!strcmp(argv[i], "--no-parse-special")) parse_special = 0;
        else if (!strcmp(argv[i], "--add-special")) add_special = 1;
        else if (!strcmp(argv[i], "--decode")) decode = 1;
        else if (!strcmp(argv[i], "--info")) info = 1;
        else if (!strcmp(argv[i], "--ids")) mode = 3;
        else if (!strcmp(argv[i], "--plain")) plain = 1;
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc) bench = atoi(argv[++i]);
        else if (argv[i][0] == '-' && argv[i][1]) return usage();
        else if (!path) path = argv[i];
        else if (!file) file = argv[i];
        else return usage();
    }
    if (!path) return usage();
    sn_err err = {0};
    sn_gguf *g = NULL;
    sn_tokenizer *t = NULL;
    if (sn_gguf_open(path, SN_GGUF_NO_DATA, &g, &err) || sn_tok_load(g, &t, &err)) {
        fprintf(stderr, "tok_dump: %s: %s\n", path, err.msg);
        sn_gguf_close(g);
        return 1;
    }
    if (info) {
        int32_t nv = sn_tok_n_vocab(t);
        const sn_tok_special_ids sp = sn_tok_specials(t);
        printf("{\"n_vocab\":%d,\"bos\":%d,\"eos\":%d,\"eot\":%d,\"add_bos\":%s,\"add_eos\":%s,\"attrs\":[", nv,
               sp.bos, sp.eos, sp.eot, sp.add_bos ? "true" : "false", sp.add_eos ? "true" : "false");
        for (int32_t i = 0; i < nv; i++) printf(i ? ",%u" : "%u", sn_tok_attr(t, i));
        fputs("],\"eog\":[", stdout);
        int first = 1;
        for (int32_t i = 0; i < nv; i++)
            if (sn_tok_is_eog(t, i)) { printf(first ? "%d" : ",%d", i); first = 0; }
        fputs("]}\n", stdout);
        sn_tok_free(t);
        sn_gguf_close(g);
        return 0;
    }
    FILE *in = file ? fopen(file, "rb") : stdin;
    if (!in) { perror(file); return 1; }
    char *line = NULL, *all = NULL;
    size_t lcap = 0, alen = 0, icap = 0;
    int32_t *ids = NULL;
    char *dec = NULL;
    size_t dcap = 0;
    ssize_t got;
    int rc = 0;
    while ((got = getline(&line, &lcap, in)) >= 0) {
        size_t n = (size_t)got;
        if (n && line[n - 1] == '\n') n--;
        if (mode == 3) {
            line[n] = 0;
            long k = parse_ids(line, &ids, &icap);
            if (k < 0) { fprintf(stderr, "tok_dump: bad id array line\n"); rc = 1; break; }
            int64_t m = sn_tok_decode(t, ids, (size_t)k, !plain, dec, dcap);
            if (m >= 0 && (size_t)m > dcap) {
                dcap = (size_t)m + 16;
                dec = realloc(dec, dcap);
                if (!dec) { rc = 1; break; }
                m = sn_tok_decode(t, ids, (size_t)k, !plain, dec, dcap);
            }
            if (m < 0) { fprintf(stderr, "tok_dump: decode failed (%d)\n", (int)m); rc = 1; break; }
            print_json_str(dec, (size_t)m);
            putchar('\n');
            continue;
        }
        if (mode == 1) {
            if (n == 0 || line[0] == '#') continue;
            n = corpus_unescape(line, n);
        } else if (mode == 2) {
            if (n == 0) continue;
            long m = json_unquote(line, n);
            if (m < 0) { fprintf(stderr, "tok_dump: bad JSON string line\n"); rc = 1; break; }
            n = (size_t)m;
        }
        if (bench) {
            char *na = realloc(all, alen + n + 2);
            if (!na) { rc = 1; break; }
            all = na;
            memcpy(all + alen, line, n);
            alen += n;
            all[alen++] = '\n';
            continue;
        }
        int64_t k = sn_tok_encode(t, line, n, add_special, parse_special, ids, icap, &err);
        if (k >= 0 && (size_t)k > icap) {
            icap = (size_t)k + 16;
            ids = realloc(ids, icap * sizeof *ids);
            if (!ids) { rc = 1; break; }
            k = sn_tok_encode(t, line, n, add_special, parse_special, ids, icap, &err);
        }
        if (k < 0) { fprintf(stderr, "tok_dump: %s\n", err.msg); rc = 1; break; }
        if (decode) {
            int64_t m = sn_tok_decode(t, ids, (size_t)k, 1, dec, dcap);
            if (m >= 0 && (size_t)m > dcap) {
                dcap = (size_t)m + 16;
                dec = realloc(dec, dcap);
                if (!dec) { rc = 1; break; }
                m = sn_tok_decode(t, ids, (size_t)k, 1, dec, dcap);
            }
            if (m < 0) { fprintf(stderr, "tok_dump: decode failed (%d)\n", (int)m); rc = 1; break; }
            print_json_str(dec, (size_t)m);
            putchar('\n');
            continue;
        }
        putchar('[');
        for (int64_t j = 0; j < k; j++) printf(j ? ",%d" : "%d", ids[j]);
        fputs("]\n", stdout);
    }
    if (bench && rc == 0 && alen) {
        int64_t total = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int r = 0; r < bench; r++) {
            int64_t k = sn_tok_encode(t, all, alen, add_special, parse_special, NULL, 0, &err);
            if (k < 0) { fprintf(stderr, "tok_dump: %s\n", err.msg); rc = 1; break; }
            total += k;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        fprintf(stderr, "tok_dump: %zu bytes x %d in %.3f s = %.2f MB/s (%lld tokens per pass)\n", alen, bench, s,
                (double)alen * bench / s / 1e6, (long long)(total / (bench ? bench : 1)));
    }
    if (file) fclose(in);
    free(line); free(all); free(ids); free(dec);
    sn_tok_free(t);
    sn_gguf_close(g);
    return rc;
}
