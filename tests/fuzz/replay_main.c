/* replay_main.c - the fuzz harnesses of tests/fuzz/ in CI, without clang or libFuzzer: every harness
 * linked into one program (each LLVMFuzzerTestOneInput renamed sn_fuzz_NAME by tests/CMakeLists.txt)
 * and run in the ASan/UBSan build. Per harness: its seed corpus (tests/fuzz/corpus/NAME) and the
 * inputs that once crashed it (tests/fuzz/regress/NAME-*) are replayed, then deterministic mutants
 * of them (bit flips, special bytes, truncation, chunk copies and deletions, digit runs, splices)
 * are run until its share of the time is used. Coverage-guided fuzzing is `make fuzz`; this keeps
 * every parser under the sanitizers in `make test` for a few seconds each.
 *
 * A sanitizer report, a crash or an input that runs for 10 s (SIGALRM) fails the run; the input is
 * written to fuzz-replay-NAME.failing in the working directory (give it to run_fuzz.sh's binary, or
 * copy it into tests/fuzz/regress/NAME-WHAT once fixed).
 * usage: sn_fuzz_replay SRC_DIR SECONDS_PER_HARNESS [NAME...] (no NAME: all) */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HARNESSES(X)                                                                                          \
    X(torch_zip) X(pickle) X(gguf) X(safetensors) X(hf_config) X(blob) X(spm) X(ollama_host) X(tokenizer_json) \
    X(shard_index) X(rwkv_vocab) X(ollama_reply) X(lmstudio_files) X(tok_encode) X(lmstudio_reply)
#define DECL(n) int sn_fuzz_##n(const uint8_t *data, size_t size);
HARNESSES(DECL)
#define ROW(n) {#n, sn_fuzz_##n},
static const struct { const char *name; int (*fn)(const uint8_t *, size_t); } TABLE[] = {HARNESSES(ROW)};

enum { MAX_LEN = 1 << 16, MAX_SEEDS = 256 };

/* the input being run, for the failure dump (async-signal-safe: plain writes of static data) */
static const char *cur_name;
static const uint8_t *cur_data;
static size_t cur_size;

static void dump(void) {
    char path[128];
    snprintf(path, sizeof path, "fuzz-replay-%s.failing", cur_name ? cur_name : "unknown");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (cur_data && write(fd, cur_data, cur_size) < 0) { /* nothing more to do in a dying process */
        }
        close(fd);
    }
    static const char msg[] = "sn_fuzz_replay: the failing input is in fuzz-replay-<harness>.failing\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
}

static void on_signal(int sig) {
    dump();
    if (sig == SIGALRM) {
        static const char msg[] = "sn_fuzz_replay: one input ran for 10 s (a hang)\n";
        if (write(2, msg, sizeof msg - 1) < 0) {
        }
    }
    signal(sig, SIG_DFL);
    raise(sig == SIGALRM ? SIGABRT : sig);
}

#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define HAVE_DEATH_CALLBACK 1
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#define HAVE_DEATH_CALLBACK 1
#endif
#endif
#ifdef HAVE_DEATH_CALLBACK
#include <sanitizer/common_interface_defs.h>
#endif

typedef struct { uint8_t *data; size_t size; } blob;

static int load(const char *path, blob *b) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    b->data = malloc(MAX_LEN);
    b->size = b->data ? fread(b->data, 1, MAX_LEN, f) : 0;
    fclose(f);
    return b->data != NULL;
}

/* the files of dir whose names start with prefix ("" = all), appended to seeds */
static size_t load_dir(const char *dir, const char *prefix, blob *seeds, size_t n) {
    DIR *d = opendir(dir);
    if (!d) return n;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_SEEDS) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (load(p, &seeds[n])) n++;
    }
    closedir(d);
    return n;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) { /* xorshift64: the same mutants on every run */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* one to four random edits of m (at most MAX_LEN bytes) */
static size_t mutate(uint8_t *m, size_t n, const blob *seeds, size_t n_seeds) {
    static const uint8_t special[] = {0, 1, 0x7f, 0x80, 0xff, '"', '\\', '\n', '{', '}', '[', ']', ',', ':', '-',
                                      '0', '9', 'e', ' ', '\'', 'x', '<', '>', 0xc3, 0xe2, 0xf0};
    for (int k = 1 + (int)(next() % 4); k > 0; k--) {
        const size_t at = n ? next() % n : 0;
        switch (next() % 8) {
        case 0: if (n) m[at] ^= (uint8_t)(1u << (next() % 8)); break;
        case 1: if (n) m[at] = special[next() % sizeof special]; break;
        case 2: n = at; break; /* truncate */
        case 3: { /* copy a chunk somewhere else, growing the input */
            if (!n) break;
            size_t len = 1 + next() % (n - at < 64 ? n - at : 64), to = next() % (n + 1);
            if (n + len > MAX_LEN) break;
            uint8_t tmp[64];
            memcpy(tmp, m + at, len);
            memmove(m + to + len, m + to, n - to);
            memcpy(m + to, tmp, len);
            n += len;
            break;
        }
        case 4: { /* delete a chunk */
            size_t len = n - at < 16 ? n - at : 1 + next() % 16;
            memmove(m + at, m + at + len, n - at - len);
            n -= len;
            break;
        }
        case 5: { /* a long digit run: integer and float overflows */
            static const char run[] = "99999999999999999999999";
            const size_t len = 1 + next() % (sizeof run - 1);
            if (n + len > MAX_LEN) break;
            memmove(m + at + len, m + at, n - at);
            memcpy(m + at, run, len);
            n += len;
            break;
        }
        case 6: { /* splice: the tail of another seed from here on */
            const blob *o = &seeds[next() % n_seeds];
            if (at < o->size) {
                memcpy(m + at, o->data + at, o->size - at);
                n = o->size;
            }
            break;
        }
        default: if (n) m[at] = (uint8_t)next(); break;
        }
    }
    return n;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run_one(int (*fn)(const uint8_t *, size_t), const uint8_t *d, size_t n) {
    /* a private copy of exactly n bytes, so a read past the end is caught as with libFuzzer */
    uint8_t *c = malloc(n ? n : 1);
    if (!c) abort();
    memcpy(c, d, n);
    cur_data = c;
    cur_size = n;
    alarm(10);
    fn(c, n);
    alarm(0);
    cur_data = NULL;
    free(c);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: sn_fuzz_replay SRC_DIR SECONDS_PER_HARNESS [NAME...]\n");
        return 2;
    }
    const char *src = argv[1];
    const double secs = atof(argv[2]);
    signal(SIGALRM, on_signal);
    signal(SIGSEGV, on_signal);
    signal(SIGABRT, on_signal);
#ifdef HAVE_DEATH_CALLBACK
    __sanitizer_set_death_callback(dump);
#endif
    int ran = 0;
    for (size_t h = 0; h < sizeof TABLE / sizeof *TABLE; h++) {
        int wanted = argc == 3;
        for (int i = 3; i < argc; i++) wanted |= strcmp(argv[i], TABLE[h].name) == 0;
        if (!wanted) continue;
        cur_name = TABLE[h].name;
        static blob seeds[MAX_SEEDS];
        char dir[4096], prefix[128];
        snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src, TABLE[h].name);
        size_t n = load_dir(dir, "", seeds, 0);
        snprintf(dir, sizeof dir, "%s/tests/fuzz/regress", src);
        snprintf(prefix, sizeof prefix, "%s-", TABLE[h].name);
        n = load_dir(dir, prefix, seeds, n);
        if (!n) {
            fprintf(stderr, "sn_fuzz_replay: %s: no seed corpus in %s/tests/fuzz/corpus/%s\n", TABLE[h].name, src,
                    TABLE[h].name);
            return 1;
        }
        const double t0 = now();
        for (size_t i = 0; i < n; i++) run_one(TABLE[h].fn, seeds[i].data, seeds[i].size);
        static uint8_t m[MAX_LEN];
        long mutants = 0;
        rng = 0x9E3779B97F4A7C15ull + h; /* each harness its own fixed sequence */
        while (now() - t0 < secs) {
            const blob *s = &seeds[(size_t)mutants % n];
            memcpy(m, s->data, s->size);
            size_t len = mutate(m, s->size, seeds, n);
            run_one(TABLE[h].fn, m, len);
            mutants++;
        }
        printf("%-15s %3zu seeds replayed, %7ld mutants in %.1f s\n", TABLE[h].name, n, mutants, now() - t0);
        fflush(stdout);
        for (size_t i = 0; i < n; i++) free(seeds[i].data);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "sn_fuzz_replay: no harness of that name\n");
        return 2;
    }
    return 0;
}
