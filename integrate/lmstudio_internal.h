/* lmstudio_internal.h - what the LM Studio files share (internal to integrate/, not an API).
 *
 * lmstudio_home.c finds the models folder, lmstudio_place.c places the GGUF; lmstudio.c talks to the server
 * and the lms CLI. Both report through the caller's note callback. */
#ifndef SN_LMSTUDIO_INTERNAL_H
#define SN_LMSTUDIO_INTERNAL_H
#include "install_plan.h"
#include "lmstudio.h"
#include <limits.h>

/* Where sn_lms_place_plan decided each file goes (source -> target, under dir). */
typedef struct sn_lms_placement {
    int total;
    char (*srcs)[PATH_MAX], (*dsts)[PATH_MAX];
    unsigned char *present; /* per file: the target already holds it (same inode or bytes) */
    char dir[PATH_MAX]; /* <models>/<publisher>/<repo> */
} sn_lms_placement;
/* Validates the GGUF(s), derives names and targets, refuses existing targets with other bytes (unless
 * force); without force a target already holding the file (same inode or bytes, or the file itself)
 * is marked present and skipped. Adds one plan line per file. Changes nothing. */
sn_status sn_lms_place_plan(const sn_lms_place_opts *o, sn_lms_placement *pl, sn_install_plan *plan,
                            sn_lms_placed *out, sn_err *err);
/* Places the files the plan listed (creating the folders); nothing partial is left on failure. */
sn_status sn_lms_place_run(const sn_lms_place_opts *o, const sn_lms_placement *pl, sn_lms_placed *out,
                           sn_err *err);
void sn_lms_placement_free(sn_lms_placement *pl);

/* Warns (through note) about each construct in chat template t that LM Studio's JS Jinja renderer
 * rejects at request time; returns how many; lmstudio_place.c. */
int sn_lms_check_jinja(const char *t, sn_lms_note_fn note, void *ud);

/* snprintf that reports truncation (-1) instead of silently cutting a path; lmstudio_home.c. */
int sn_lms_fmt(char *dst, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
/* 1 if p exists (a dangling symlink counts); lmstudio_home.c. */
int sn_lms_exists(const char *p);

/* printf-style note through fn (nothing when fn is NULL); lmstudio_reply.c. */
void sn_lms_notef(sn_lms_note_fn fn, void *ud, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
