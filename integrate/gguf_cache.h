/* gguf_cache.h - an HF folder or checkpoint becomes an installable GGUF once: converted through
 * convert/ (sn_convert) into a cache entry, $XDG_CACHE_HOME/sunny/gguf/<key>/ (else
 * ~/.cache/sunny/gguf/<key>/), and found there again by the next install of the same source.
 *
 * Key: SHA-256 over the cache schema, the converter's identity (tool_id, from the caller), the
 * options (outtype) and, per source file (every regular file of the folder, or the one file; with
 * the config.json of a single checkpoint), its absolute path, device, inode, size and mtime in
 * nanoseconds. Metadata, not content: hashing a 60 GB model would cost minutes on every install;
 * like make, an edit that keeps size and mtime and inode is not seen.
 * Entry: the converter writes NAME.gguf through its own temp file and rename, then "complete" (the
 * GGUF's name and size, written to a temp file and renamed) marks the entry usable. An entry without
 * the marker, or whose GGUF is missing or has another size, is never trusted: it is converted again. */
#ifndef SN_GGUF_CACHE_H
#define SN_GGUF_CACHE_H
#include "convert.h"
#include "sn_env.h"
#include <signal.h>
#include <stdint.h>

typedef struct sn_gguf_cache_opts {
    const char *src;         /* HF folder, one weight file, or a GGUF (requantized, outtype required) */
    sn_outtype outtype;
    const char *config_path; /* --config for a single checkpoint, or NULL */
    const char *tool_id;     /* identifies the converter build (part of the key), or NULL */
    const sn_env *env;       /* XDG_CACHE_HOME, HOME */
    int n_threads;
    volatile sig_atomic_t *cancel;
    void (*on_progress)(void *ud, uint64_t done, uint64_t total); /* conversion bytes */
    void *ud;
} sn_gguf_cache_opts;

typedef struct sn_gguf_cache_result {
    char gguf[4096];  /* the cached GGUF */
    char entry[4096]; /* its entry folder */
    char key[17];     /* first 16 hex digits of the key */
    int hit;          /* 1: found complete, nothing converted */
    double seconds;   /* conversion time (0 on a hit) */
    char arch[32], ftype[16];
} sn_gguf_cache_result;

/* 1 when a and b are one file (device + inode) or regular files with the same bytes. */
int sn_same_content(const char *a, const char *b);
/* 1 when path is a regular file that starts with the GGUF magic. */
int sn_gguf_cache_is_gguf(const char *path);
/* Finds or makes the entry for o->src; r->gguf is the file to install. */
sn_status sn_gguf_cache_get(const sn_gguf_cache_opts *o, sn_gguf_cache_result *r, sn_err *err);
/* --keep-gguf: gguf also at dst (a hard link, else a copy through a temp file and rename). An
 * existing dst is refused unless it already is that file (same inode or bytes). */
sn_status sn_gguf_cache_keep(const char *gguf, const char *dst, sn_err *err);

#endif
