/* gguf_cache.c - the conversion cache of one-command installs (see gguf_cache.h). */
#include "gguf_cache.h"
#include "outfile.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_SCHEMA "sunny-gguf-cache 1"

int sn_gguf_cache_is_gguf(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    char m[4] = {0};
    int ok = f && fread(m, 1, 4, f) == 4 && memcmp(m, "GGUF", 4) == 0;
    if (f) fclose(f);
    return ok;
}

int sn_same_content(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) return 1;
    if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) || sa.st_size != sb.st_size) return 0;
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    static char ba[1 << 16], bb[1 << 16];
    while (same) {
        size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
        if (na != nb || memcmp(ba, bb, na) != 0) same = 0;
        if (na < sizeof ba) break;
    }
    if (same && (ferror(fa) || ferror(fb))) same = 0;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static int mkdir_p(const char *path) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ends_with(const char *s, const char *sfx) {
    size_t a = strlen(s), b = strlen(sfx);
    return a >= b && strcmp(s + a - b, sfx) == 0;
}

/* One source file into the key: absolute path, device, inode, size, mtime (ns). */
static sn_status hash_file(EVP_MD_CTX *h, const char *path, sn_err *err) {
    char abs[PATH_MAX], line[PATH_MAX + 160];
    struct stat st;
    if (!realpath(path, abs) || stat(abs, &st) != 0) return sn_err_set(err, SN_EIO, "%s: %s", path, strerror(errno));
    int n = snprintf(line, sizeof line, "%s\n%llu %llu %lld %lld.%09ld\n", abs, (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
    EVP_DigestUpdate(h, line, (size_t)n);
    return SN_OK;
}

/* Every regular file of the folder except hidden ones and GGUFs (outputs the user may have put
 * there do not change the conversion), in name order. */
static sn_status hash_dir(EVP_MD_CTX *h, const char *dir, sn_err *err) {
    DIR *d = opendir(dir);
    if (!d) return sn_err_set(err, SN_EIO, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    sn_status st = SN_OK;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || ends_with(e->d_name, ".gguf")) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); break; }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); break; }
        n++;
    }
    closedir(d);
    if (st == SN_OK) qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (st == SN_OK && stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) st = hash_file(h, p, err);
        free(names[i]);
    }
    free(names);
    return st;
}

static sn_status make_key(const sn_gguf_cache_opts *o, char hex[65], sn_err *err) {
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    if (!h || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(h);
        return sn_err_set(err, SN_ENOMEM, "sha256 unavailable");
    }
    char opts[512];
    int n = snprintf(opts, sizeof opts, CACHE_SCHEMA "\n%s\n%s\nouttype=%s\n", SN_VERSION,
                     o->tool_id ? o->tool_id : "", sn_outtype_name(o->outtype));
    EVP_DigestUpdate(h, opts, (size_t)n);
    struct stat st;
    sn_status s;
    if (stat(o->src, &st) != 0) s = sn_err_set(err, SN_EIO, "%s: %s", o->src, strerror(errno));
    else if (S_ISDIR(st.st_mode)) s = hash_dir(h, o->src, err);
    else {
        s = hash_file(h, o->src, err);
        if (s == SN_OK && o->config_path) s = hash_file(h, o->config_path, err);
        if (s == SN_OK && !o->config_path && !sn_gguf_cache_is_gguf(o->src)) { /* config.json beside it */
            char dir[PATH_MAX];
            const char *b = strrchr(o->src, '/');
            snprintf(dir, sizeof dir, "%.*s", b ? (int)(b - o->src) : 1, b ? o->src : ".");
            s = hash_dir(h, dir, err);
        }
    }
    unsigned char md[32];
    unsigned int mdl = 0;
    EVP_DigestFinal_ex(h, md, &mdl);
    EVP_MD_CTX_free(h);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return s;
}

/* "complete": line 1 the GGUF's file name, line 2 its size. Trusted only when both still hold. */
static int entry_complete(const char *entry, char *gguf, size_t cap) {
    char p[PATH_MAX], name[1024];
    long long size = -1;
    snprintf(p, sizeof p, "%s/complete", entry);
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    int ok = fgets(name, sizeof name, f) && fscanf(f, "%lld", &size) == 1;
    fclose(f);
    if (!ok) return 0;
    name[strcspn(name, "\n")] = 0;
    if (!name[0] || strchr(name, '/')) return 0;
    struct stat st;
    snprintf(gguf, cap, "%s/%s", entry, name);
    return stat(gguf, &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_size == size;
}

static sn_status write_marker(const char *entry, const char *gguf, sn_err *err) {
    char final[PATH_MAX], *tmp = NULL;
    struct stat st;
    if (stat(gguf, &st) != 0) return sn_err_set(err, SN_EIO, "%s: %s", gguf, strerror(errno));
    snprintf(final, sizeof final, "%s/complete", entry);
    int fd = sn_tmp_create(final, "", &tmp, err);
    if (fd < 0) return SN_EIO;
    const char *b = strrchr(gguf, '/');
    char buf[1200];
    int n = snprintf(buf, sizeof buf, "%s\n%lld\n", b ? b + 1 : gguf, (long long)st.st_size);
    sn_status s = SN_OK;
    if (write(fd, buf, (size_t)n) != n || fsync(fd) != 0) s = sn_err_set(err, SN_EIO, "%s: %s", tmp, strerror(errno));
    close(fd);
    if (s == SN_OK && rename(tmp, final) != 0) s = sn_err_set(err, SN_EIO, "%s: %s", final, strerror(errno));
    if (s != SN_OK) unlink(tmp);
    free(tmp);
    int dfd = open(entry, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) { fsync(dfd); close(dfd); }
    return s;
}

typedef struct { const sn_gguf_cache_opts *o; } progress_ud;
static void on_conv_progress(void *ud, const sn_convert_progress *p) {
    const sn_gguf_cache_opts *o = ((progress_ud *)ud)->o;
    if (o->on_progress) o->on_progress(o->ud, p->bytes_done, p->bytes_total);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

sn_status sn_gguf_cache_get(const sn_gguf_cache_opts *o, sn_gguf_cache_result *r, sn_err *err) {
    memset(r, 0, sizeof *r);
    char root[PATH_MAX], hex[65];
    const sn_env *env = o->env;
    if (env && env->xdg_cache_home && env->xdg_cache_home[0] == '/')
        snprintf(root, sizeof root, "%s/sunny/gguf", env->xdg_cache_home);
    else if (env && env->home && env->home[0])
        snprintf(root, sizeof root, "%s/.cache/sunny/gguf", env->home);
    else
        return sn_err_set(err, SN_EINVAL, "no cache folder: neither XDG_CACHE_HOME nor HOME is set");
    sn_status st = make_key(o, hex, err);
    if (st) return st;
    snprintf(r->key, sizeof r->key, "%.16s", hex);
    if (mkdir_p(root) != 0) return sn_err_set(err, SN_EIO, "cannot create the cache folder %s: %s", root, strerror(errno));
    snprintf(r->entry, sizeof r->entry, "%s/%.32s", root, hex);
    sn_out_lock lock = {.fd = -1};
    if ((st = sn_out_lock_take(r->entry, &lock, err)) != SN_OK) return st;
    if (entry_complete(r->entry, r->gguf, sizeof r->gguf)) {
        r->hit = 1;
        sn_out_lock_drop(&lock);
        return SN_OK;
    }
    char marker[PATH_MAX];
    snprintf(marker, sizeof marker, "%s/complete", r->entry);
    unlink(marker); /* a stale marker (its GGUF gone or changed) is not trusted again */
    if (mkdir(r->entry, 0755) != 0 && errno != EEXIST) {
        st = sn_err_set(err, SN_EIO, "cannot create %s: %s", r->entry, strerror(errno));
        goto done;
    }
    progress_ud pu = {o};
    sn_convert_opts co = {.model_dir = o->src, .config_path = o->config_path, .out_path = r->entry,
                          .outtype = o->outtype, .n_threads = o->n_threads, .force = 1, .cancel = o->cancel,
                          .on_progress = on_conv_progress, .ud = &pu, .tmp_dir = env ? env->tmpdir : NULL};
    sn_convert_result cr;
    double t0 = now_s();
    if ((st = sn_convert(&co, &cr, err)) != SN_OK) {
        sn_err_prefix(err, "converting %s", o->src);
        goto done;
    }
    r->seconds = now_s() - t0;
    snprintf(r->gguf, sizeof r->gguf, "%s", cr.out_path);
    snprintf(r->arch, sizeof r->arch, "%s", cr.arch);
    snprintf(r->ftype, sizeof r->ftype, "%s", cr.ftype);
    if (o->cancel && *o->cancel) st = sn_err_set(err, SN_EIO, "interrupted");
    else st = write_marker(r->entry, r->gguf, err);
done:
    sn_out_lock_drop(&lock);
    return st;
}

sn_status sn_gguf_cache_keep(const char *gguf, const char *dst, sn_err *err) {
    struct stat st;
    if (lstat(dst, &st) == 0) {
        if (sn_same_content(gguf, dst)) return SN_OK;
        return sn_err_set(err, SN_EIO, "--keep-gguf %s: already exists with other bytes (remove it or choose "
                          "another path)", dst);
    }
    if (link(gguf, dst) == 0) return SN_OK;
    if (errno != EXDEV && errno != EPERM && errno != EMLINK)
        return sn_err_set(err, SN_EIO, "--keep-gguf %s: %s", dst, strerror(errno));
    char *tmp = NULL;
    int out = sn_tmp_create(dst, "", &tmp, err);
    if (out < 0) return SN_EIO;
    int in = open(gguf, O_RDONLY);
    sn_status s = in < 0 ? sn_err_set(err, SN_EIO, "%s: %s", gguf, strerror(errno)) : SN_OK;
    if (s == SN_OK && fstat(in, &st) != 0) s = sn_err_set(err, SN_EIO, "%s: %s", gguf, strerror(errno));
    for (off_t left = s == SN_OK ? st.st_size : 0; left > 0;) {
        ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)(left > (1 << 30) ? (1 << 30) : left), 0);
        if (k <= 0) { s = sn_err_set(err, SN_EIO, "--keep-gguf %s: copy: %s", dst, k ? strerror(errno) : "short"); break; }
        left -= k;
    }
    if (s == SN_OK && fsync(out) != 0) s = sn_err_set(err, SN_EIO, "%s: %s", tmp, strerror(errno));
    if (in >= 0) close(in);
    close(out);
    if (s == SN_OK && rename(tmp, dst) != 0) s = sn_err_set(err, SN_EIO, "%s: %s", dst, strerror(errno));
    if (s != SN_OK) unlink(tmp);
    free(tmp);
    return s;
}
