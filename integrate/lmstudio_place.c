/* lmstudio_place.c - LM Studio's models folder and the placement of a GGUF in it (see lmstudio.h
 * and docs/LMSTUDIO.md).
 *
 * The folder as LM Studio resolves it (findLMStudioHome + resolveModelsFolderPath, read-only), the
 * publisher/repo/file names it lists, the chat template check, and the placement itself: a hard
 * link, a symlink or a copy (NAME.tmp then rename), split GGUFs part by part, nothing left behind
 * on failure. No server is contacted; that is lmstudio.c. */
#include "lmstudio_internal.h"

#include "gguf_cache.h"
#include "mapfile.h"
#include "modelinfo.h"
#include "outfile.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}


/* ------------------------------------------------------------------------------------------------
 * Names */

sn_status sn_lms_check_name(const char *what, const char *n, sn_err *err) {
    size_t l = strlen(n);
    if (l == 0) return sn_err_set(err, SN_EINVAL, "%s is empty", what);
    if (l > 100) return sn_err_set(err, SN_EINVAL, "%s '%s' is longer than 100 characters", what, n);
    /* lms's import validator: with '/' and '\\' refused below, a leading '.' also keeps "." and ".."
     * (the only names that could leave the models dir) out, so "a..b" is allowed, as in lms. */
    if (n[0] == '.' || n[l - 1] == '.')
        return sn_err_set(err, SN_EINVAL, "%s '%s' starts or ends with '.'", what, n);
    if (n[0] == ' ' || n[l - 1] == ' ')
        return sn_err_set(err, SN_EINVAL, "%s '%s' starts or ends with a space", what, n);
    for (size_t i = 0; i < l; i++) {
        unsigned char c = (unsigned char)n[i];
        if (c < 0x20 || c == 0x7f)
            return sn_err_set(err, SN_EINVAL, "%s contains a control character at byte %zu", what, i);
        if (strchr("/<>:\"\\|?*", c))
            return sn_err_set(err, SN_EINVAL, "%s '%s' contains '%c' (not allowed: / < > : \" \\ | ? *)",
                              what, n, c);
    }
    return SN_OK;
}

/* [A-Za-z0-9_-] only (dots break LM Studio's shard grouping), runs of '-' collapsed. */
static void sanitize(const char *in, char *out, size_t cap) {
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && j + 1 < cap; p++) {
        char c = (isalnum(*p) || *p == '_') ? (char)*p : '-';
        if (c == '-' && (j == 0 || out[j - 1] == '-')) continue;
        out[j++] = c;
    }
    while (j > 0 && out[j - 1] == '-') j--;
    out[j] = 0;
    if (j == 0) snprintf(out, cap, "model");
}

/* ------------------------------------------------------------------------------------------------
 * Checks on the GGUF */

int sn_lms_check_jinja(const char *t, sn_lms_note_fn note, void *ud) {
    static const struct { const char *pat, *what; } k[] = {
        {"|safe", "the 'safe' filter (\"Unknown StringValue filter: safe\")"},
        {"| safe", "the 'safe' filter (\"Unknown StringValue filter: safe\")"},
        {"is sequence", "the 'sequence' test (\"Unknown test: sequence\")"},
        {"is not sequence", "the 'sequence' test (\"Unknown test: sequence\")"},
        {"{% generation %}", "the HF-only {% generation %} tag"},
        {"{%- generation", "the HF-only {% generation %} tag"},
        {".strftime(", "Python's strftime"},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strstr(t, k[i].pat)) {
            sn_lms_notef(note, ud, "warning: the chat template uses %s, which LM Studio's JS Jinja renderer "
                  "rejects at request time; chat will fail until you override the template in My Models "
                  "(raw completions still work)", k[i].what);
            n++;
        }
    return n;
}

/* "<stem>-00001-of-00003.gguf" -> part 1 of 3, stem length. */
static int split_parts(const char *base, int *part, int *count, size_t *stem_len) {
    size_t l = strlen(base);
    if (l < 21 || strcmp(base + l - 5, ".gguf") != 0) return 0;
    const char *s = base + l - 5 - 15; /* "-00001-of-00003" */
    if (s[0] != '-' || strncmp(s + 6, "-of-", 4) != 0) return 0;
    for (int i = 1; i < 6; i++) if (!isdigit((unsigned char)s[i])) return 0;
    for (int i = 10; i < 15; i++) if (!isdigit((unsigned char)s[i])) return 0;
    *part = atoi(s + 1);
    *count = atoi(s + 10);
    *stem_len = (size_t)(s - base);
    return *count >= 1;
}

/* ------------------------------------------------------------------------------------------------
 * Placement */

static int cancelled(const sn_lms_place_opts *o) { return o->cancel && *o->cancel; }

/* Copies src to a temp file of our own beside dst (sn_tmp_create: never a planted symlink, never
 * another run's .part), then renames it onto dst. */
static sn_status copy_file(const sn_lms_place_opts *o, const char *src, const char *dst, sn_err *err) {
    int in = sn_open_regular(src, err);
    if (in < 0) return SN_EIO;
    struct stat st;
    fstat(in, &st);
    char *part = NULL;
    int out = sn_tmp_create(dst, ".part", &part, err);
    if (out < 0) {
        close(in);
        return SN_EIO;
    }
    const size_t bs = 4u << 20;
    char *buf = malloc(bs);
    uint64_t done = 0, total = (uint64_t)st.st_size;
    sn_status rc = buf ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
    while (rc == SN_OK) {
        if (cancelled(o)) { rc = sn_err_set(err, SN_EIO, "%s: interrupted", dst); break; }
        ssize_t n = read(in, buf, bs);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { rc = sn_err_set(err, SN_EIO, "%s: read at %llu: %s", src, (unsigned long long)done, strerror(errno)); break; }
        if (n == 0) break;
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(out, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) { rc = sn_err_set(err, SN_EIO, "%s: write at %llu: %s", part, (unsigned long long)(done + (uint64_t)w), strerror(errno)); break; }
            w += k;
        }
        done += (uint64_t)n;
        if (o->progress) o->progress(o->progress_ud, done, total);
    }
    free(buf);
    close(in);
    if (rc == SN_OK && fsync(out) != 0) rc = sn_err_set(err, SN_EIO, "%s: fsync: %s", part, strerror(errno));
    if (close(out) != 0 && rc == SN_OK) rc = sn_err_set(err, SN_EIO, "%s: close: %s", part, strerror(errno));
    if (rc == SN_OK && cancelled(o)) rc = sn_err_set(err, SN_EIO, "%s: interrupted", dst);
    if (rc == SN_OK && rename(part, dst) != 0) rc = sn_err_set(err, SN_EIO, "%s: rename: %s", dst, strerror(errno));
    if (rc != SN_OK) unlink(part);
    free(part);
    return rc;
}

/* link(2) / symlink(2) to a fresh name beside dst: both refuse an existing name, so a planted file
 * or another run's link is never reused. make: 0 hard link, 1 symlink. */
static int link_tmp(int make, const char *target, const char *dst, char *tmp, size_t cap) {
    for (int tries = 0; tries < 8; tries++) {
        char *name = NULL;
        int fd = sn_tmp_create(dst, ".link", &name, NULL); /* reserve a unique name, then free it */
        if (fd < 0) return -1;
        close(fd);
        unlink(name);
        int r = snprintf(tmp, cap, "%s", name);
        free(name);
        if (r < 0 || (size_t)r >= cap) { errno = ENAMETOOLONG; return -1; }
        if ((make ? symlink(target, tmp) : link(target, tmp)) == 0) return 0;
        if (errno != EEXIST) return -1;
    }
    return -1;
}

static const char *mode_name(sn_lms_mode m) {
    switch (m) {
    case SN_LMS_HARDLINK: return "hard link";
    case SN_LMS_COPY: return "copy";
    case SN_LMS_SYMLINK: return "symbolic link";
    default: return "move";
    }
}

/* Places one file; replaces dst atomically when force (the caller checked existence). */
static sn_status place_one(const sn_lms_place_opts *o, const char *src, const char *dst,
                           sn_lms_placed *out, sn_err *err) {
    char tmp[PATH_MAX + 64];
    switch (o->mode) {
    case SN_LMS_HARDLINK:
        if (link_tmp(0, src, dst, tmp, sizeof tmp) == 0) {
            if (rename(tmp, dst) != 0) {
                unlink(tmp);
                return sn_err_set(err, SN_EIO, "%s: rename: %s", dst, strerror(errno));
            }
            /* rename() between two links of one inode (--force re-placing the same file) succeeds
             * without doing anything, so tmp would stay behind */
            unlink(tmp);
            return SN_OK;
        }
        if (errno != EXDEV && errno != EPERM && errno != EMLINK)
            return sn_err_set(err, SN_EIO, "hard link %s -> %s: %s", src, dst, strerror(errno));
        sn_lms_notef(o->note, o->note_ud, "note: cannot hard-link across filesystems (%s); copying instead",
              strerror(errno));
        out->fell_back_to_copy = 1;
        return copy_file(o, src, dst, err);
    case SN_LMS_COPY:
        return copy_file(o, src, dst, err);
    case SN_LMS_SYMLINK: {
        char abs[PATH_MAX];
        if (!realpath(src, abs)) return sn_err_set(err, SN_EIO, "%s: %s", src, strerror(errno));
        if (link_tmp(1, abs, dst, tmp, sizeof tmp) != 0) return sn_err_set(err, SN_EIO, "symlink %s: %s", dst, strerror(errno));
        if (rename(tmp, dst) != 0) {
            unlink(tmp);
            return sn_err_set(err, SN_EIO, "%s: rename: %s", dst, strerror(errno));
        }
        return SN_OK;
    }
    case SN_LMS_MOVE:
        if (rename(src, dst) == 0) return SN_OK;
        if (errno != EXDEV) return sn_err_set(err, SN_EIO, "move %s -> %s: %s", src, dst, strerror(errno));
        sn_lms_notef(o->note, o->note_ud, "note: %s is on another filesystem; copying, then removing the source", src);
        out->fell_back_to_copy = 1;
        sn_status st = copy_file(o, src, dst, err);
        if (st == SN_OK && unlink(src) != 0)
            sn_lms_notef(o->note, o->note_ud, "warning: copied, but could not remove %s: %s", src, strerror(errno));
        return st;
    }
    return sn_err_set(err, SN_EINVAL, "unknown placement mode");
}

/* The directories one mkdir_p created, deepest last, so a failed placement can remove them again. */
typedef struct made_dirs { char path[8][PATH_MAX]; int n; } made_dirs;

static sn_status mkdir_p(const char *dir, made_dirs *made, sn_err *err) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/') continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) == 0) {
            if (made && made->n < 8) snprintf(made->path[made->n++], PATH_MAX, "%s", p);
        } else if (errno != EEXIST) {
            return sn_err_set(err, SN_EIO, "mkdir %s: %s", p, strerror(errno));
        }
        *s = c;
        if (!c) break;
    }
    if (!is_dir(p)) return sn_err_set(err, SN_EIO, "%s exists and is not a directory", p);
    return SN_OK;
}

/* Removes what mkdir_p created (only if still empty), deepest first. */
static void unmake_dirs(const made_dirs *made) {
    for (int i = made->n - 1; i >= 0; i--) rmdir(made->path[i]);
}

void sn_lms_placement_free(sn_lms_placement *pl) {
    free(pl->srcs);
    free(pl->dsts);
    free(pl->present);
    memset(pl, 0, sizeof *pl);
}

sn_status sn_lms_place_plan(const sn_lms_place_opts *o, sn_lms_placement *pl, sn_install_plan *plan,
                            sn_lms_placed *out, sn_err *err) {
    memset(out, 0, sizeof *out);
    memset(pl, 0, sizeof *pl);
    sn_modelinfo mi;
    sn_status st = sn_modelinfo_read(o->gguf, &mi, err);
    if (st) return st;
    int rc = SN_OK;
    if (!sn_modelinfo_arch_known(mi.arch)) {
        rc = sn_err_set(err, SN_EUNSUPPORTED,
                        "%s: architecture '%s' is unknown to llama.cpp, so LM Studio cannot load it "
                        "(\"unknown model architecture\")", o->gguf, mi.arch);
        goto done;
    }
    if (strcmp(mi.general_type, "mmproj") == 0 || strcmp(mi.general_type, "adapter") == 0) {
        rc = sn_err_set(err, SN_EINVAL, "%s is a %s GGUF, not a model; pass it with --mmproj next to the model",
                        o->gguf, mi.general_type);
        goto done;
    }
    snprintf(out->arch, sizeof out->arch, "%s", mi.arch);
    snprintf(out->quant, sizeof out->quant, "%s", mi.quant);
    if (!mi.chat_template) {
        sn_lms_notef(o->note, o->note_ud, "warning: %s has no tokenizer.chat_template: LM Studio falls back to a generic "
              "Instruct:/Human:/AI: format, chat will be poor (raw completions are unaffected)", o->gguf);
        out->warnings++;
    } else {
        out->warnings += sn_lms_check_jinja(mi.chat_template, o->note, o->note_ud);
    }

    /* names */
    char stem[128];
    sanitize(mi.name, stem, sizeof stem);
    snprintf(out->publisher, sizeof out->publisher, "%s", o->publisher ? o->publisher : "sunny-local");
    if (o->repo) snprintf(out->repo, sizeof out->repo, "%s", o->repo);
    else snprintf(out->repo, sizeof out->repo, "%.120s-GGUF", stem);
    if ((rc = sn_lms_check_name("--publisher", out->publisher, err)) ||
        (rc = sn_lms_check_name("--repo", out->repo, err)))
        goto done;

    /* the files: split parts together, mmproj beside */
    const char *base = strrchr(o->gguf, '/');
    base = base ? base + 1 : o->gguf;
    int part = 0, count = 0;
    size_t stem_len = 0;
    int split = split_parts(base, &part, &count, &stem_len);
    if (split && part != 1) {
        rc = sn_err_set(err, SN_EINVAL, "%s is part %d of %d; pass the first part (-00001-of-%05d)", o->gguf,
                        part, count, count);
        goto done;
    }
    int n_files = split ? count : 1;
    int total = n_files + (o->mmproj ? 1 : 0);
    char (*srcs)[PATH_MAX] = pl->srcs = calloc((size_t)total, PATH_MAX);
    char (*dsts)[PATH_MAX] = pl->dsts = calloc((size_t)total, PATH_MAX);
    pl->present = calloc((size_t)total, 1);
    pl->total = total;
    if (!srcs || !dsts || !pl->present) {
        rc = sn_err_set(err, SN_ENOMEM, "out of memory");
        goto done;
    }
    char *dir = pl->dir;
    if (sn_lms_fmt(dir, sizeof pl->dir, "%s/%s/%s", o->models_dir, out->publisher, out->repo)) {
        rc = sn_err_set(err, SN_EINVAL, "models dir path too long: %s", o->models_dir);
        goto done;
    }
    for (int i = 0; i < n_files; i++) {
        if (split) {
            if (sn_lms_fmt(srcs[i], PATH_MAX, "%.*s%.*s-%05d-of-%05d.gguf", (int)(base - o->gguf), o->gguf,
                    (int)stem_len, base, i + 1, count) ||
                sn_lms_fmt(dsts[i], PATH_MAX, "%s/%s-%s-%05d-of-%05d.gguf", dir, stem, mi.quant, i + 1, count))
                rc = sn_err_set(err, SN_EINVAL, "path too long under %s", dir);
        } else {
            if (sn_lms_fmt(srcs[i], PATH_MAX, "%s", o->gguf) || sn_lms_fmt(dsts[i], PATH_MAX, "%s/%s-%s.gguf", dir, stem, mi.quant))
                rc = sn_err_set(err, SN_EINVAL, "path too long under %s", dir);
        }
        if (rc) break;
        if (!sn_lms_exists(srcs[i])) {
            rc = sn_err_set(err, SN_EIO, "split part %s is missing", srcs[i]);
            break;
        }
    }
    if (rc == SN_OK && o->mmproj) {
        sn_modelinfo pm;
        if ((rc = sn_modelinfo_read(o->mmproj, &pm, err)) == SN_OK) {
            if (sn_lms_fmt(srcs[n_files], PATH_MAX, "%s", o->mmproj) ||
                sn_lms_fmt(dsts[n_files], PATH_MAX, "%s/mmproj-%s-%s.gguf", dir, stem, pm.quant))
                rc = sn_err_set(err, SN_EINVAL, "path too long under %s", dir);
            if (strcmp(pm.arch, "clip") != 0 && strcmp(pm.general_type, "mmproj") != 0)
                sn_lms_notef(o->note, o->note_ud, "warning: %s does not look like a projector (architecture %s)",
                      o->mmproj, pm.arch);
            sn_modelinfo_free(&pm);
        }
    }
    if (rc == SN_OK) {
        const char *fbase = strrchr(dsts[0], '/');
        fbase = fbase ? fbase + 1 : dsts[0];
        if (sn_lms_fmt(out->rel_path, sizeof out->rel_path, "%s/%s/%s", out->publisher, out->repo, fbase) ||
            sn_lms_fmt(out->target, sizeof out->target, "%s", dsts[0]))
            rc = sn_err_set(err, SN_EINVAL, "path too long: %s", dsts[0]);
    }
    out->n_files = total;
    for (int i = 0; rc == SN_OK && i < total; i++) {
        /* the file passed as its own target stays itself even under --force (a copy onto itself
         * would destroy it) */
        char rs[PATH_MAX], rd[PATH_MAX], dd[PATH_MAX];
        snprintf(dd, sizeof dd, "%s", dsts[i]);
        char *sl = strrchr(dd, '/');
        int itself = 0;
        if (sl && realpath(srcs[i], rs)) {
            *sl = 0;
            if (realpath(dd, rd)) {
                size_t l = strlen(rd);
                snprintf(rd + l, sizeof rd - l, "/%s", sl + 1);
                itself = strcmp(rs, rd) == 0;
            }
        }
        if (itself || (!o->force && sn_same_content(srcs[i], dsts[i]))) {
            pl->present[i] = 1;
            out->n_present++;
        } else if (sn_lms_exists(dsts[i]) && !o->force)
            rc = sn_err_set(err, SN_EIO, "Target file already exists: %s (different bytes; use --force to replace "
                            "it)", dsts[i]);
    }
    for (int i = 0; rc == SN_OK && i < total; i++)
        if (pl->present[i] ? sn_install_plan_add(plan, "%s is already in place (same file)", dsts[i])
                           : sn_install_plan_add(plan, "would %s %s -> %s", mode_name(o->mode), srcs[i], dsts[i]))
            rc = sn_err_set(err, SN_ENOMEM, "out of memory");
done:
    sn_modelinfo_free(&mi);
    if (rc) sn_lms_placement_free(pl);
    return rc;
}

sn_status sn_lms_place_run(const sn_lms_place_opts *o, const sn_lms_placement *pl, sn_lms_placed *out,
                           sn_err *err) {
    const int total = pl->total;
    const char(*srcs)[PATH_MAX] = (const char(*)[PATH_MAX])pl->srcs, (*dsts)[PATH_MAX] = (const char(*)[PATH_MAX])pl->dsts;
    const char *dir = pl->dir;
    int rc = SN_OK;
    for (int i = 0; i < total; i++)
        if (pl->present[i])
            sn_lms_notef(o->note, o->note_ud, "%s is already in place (same %s): nothing to do", dsts[i],
                         o->mode == SN_LMS_MOVE ? "bytes; the source stays" : "file");
        else
            sn_lms_notef(o->note, o->note_ud, "will %s %s -> %s", mode_name(o->mode), srcs[i], dsts[i]);
    {
        made_dirs made = {.n = 0};
        if (!is_dir(o->models_dir)) {
            if (o->models_dir_explicit)
                rc = sn_err_set(err, SN_EIO, "--models-dir %s does not exist (LM Studio's models dir is the "
                                "folder it shows in My Models; create it or fix the path)", o->models_dir);
            else { /* lms import: mkdir(modelsFolderPath, {recursive: true}) */
                sn_lms_notef(o->note, o->note_ud, "creating the models dir %s (it did not exist; lms import does the same)",
                      o->models_dir);
                rc = mkdir_p(o->models_dir, NULL, err);
            }
        }
        if (rc == SN_OK) rc = mkdir_p(dir, &made, err);
        /* each target under its lock: a second install of the same entry is refused, and one that
         * finished first is seen as "already exists" below instead of being replaced or removed */
        sn_out_lock *locks = calloc((size_t)total, sizeof *locks);
        if (rc == SN_OK && !locks) rc = sn_err_set(err, SN_ENOMEM, "out of memory");
        for (int i = 0; locks && i < total; i++) locks[i].fd = -1;
        for (int i = 0; rc == SN_OK && i < total; i++) {
            rc = sn_out_lock_take(dsts[i], &locks[i], err);
            if (rc == SN_OK && !o->force && sn_lms_exists(dsts[i]) && !sn_same_content(srcs[i], dsts[i]))
                rc = sn_err_set(err, SN_EIO, "Target file already exists: %s (use --force to replace it)", dsts[i]);
        }
        int placed = 0; /* files this run put in place, in order */
        unsigned char *mine = calloc((size_t)total, 1); /* which of them this run placed */
        if (rc == SN_OK && !mine) rc = sn_err_set(err, SN_ENOMEM, "out of memory");
        for (int i = 0; rc == SN_OK && i < total; i++) {
            if (pl->present[i] || (!o->force && sn_same_content(srcs[i], dsts[i]))) continue; /* nothing to do */
            rc = place_one(o, srcs[i], dsts[i], out, err);
            if (rc == SN_OK) placed++, mine[i] = 1;
            if (rc == SN_OK && cancelled(o)) rc = sn_err_set(err, SN_EIO, "%s: interrupted", dsts[i]);
        }
        if (rc != SN_OK) { /* nothing partial: placed files and the folders made for them go again */
            for (int i = 0; mine && placed && i < total; i++)
                if (mine[i] && o->mode != SN_LMS_MOVE && !o->force) unlink(dsts[i]); /* --force may have replaced a file */
        }
        free(mine);
        for (int i = 0; locks && i < total; i++) sn_out_lock_drop(&locks[i]);
        free(locks);
        if (rc != SN_OK) unmake_dirs(&made);
    }
    return rc;
}
