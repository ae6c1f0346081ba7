/* outfile.h - how every sunny output reaches its final name safely.
 *
 * A writer creates a temp file of its own, NAME.<unique>.tmp, with O_CREAT|O_EXCL|O_NOFOLLOW: a
 * symlink planted at that name or a temp file of another run is never opened, so renaming the temp
 * file publishes only bytes this process wrote. Two runs that target the same NAME at once are kept
 * apart by a lock file, .NAME.lock beside NAME (flock LOCK_EX|LOCK_NB): the second run is refused
 * with a clear message instead of both renaming onto NAME. The lock file is removed on release; a
 * run killed with -9 leaves it behind, unlocked, and the next run takes it over.
 *
 * A run killed with -9 also leaves its temp file. The temp name carries the writer's pid
 * (NAME<tag>.<pid>-<8 hex>.tmp), so the next writer of NAME removes the temp files of NAME whose
 * writer is gone (sn_tmp_sweep): only names of exactly that pattern, only files and symlinks this
 * user owns (the entry itself is removed, a symlink is never followed), only when kill(pid, 0) says
 * no such process, and only when untouched for SN_TMP_STALE_S (a writer in another pid namespace
 * sharing the folder is invisible to kill(), but its file keeps changing). */
#ifndef SN_OUTFILE_H
#define SN_OUTFILE_H
#include "sn_err.h"

/* Creates a new empty file "<final><tag>.<pid>-<unique>.tmp" (tag may be "" or "." and lowercase
 * letters, e.g. ".part"), mode 0644 less the umask, after sweeping final's stale temp files
 * (sn_tmp_sweep). Returns its open O_RDWR descriptor and the malloc'd path in *tmp_out, or -1 with
 * err set (SN_EIO, naming the path). */
int sn_tmp_create(const char *final, const char *tag, char **tmp_out, sn_err *err);

/* Seconds a dead writer's temp file must be untouched before sn_tmp_sweep removes it. */
#define SN_TMP_STALE_S 600
/* Removes the temp files of final (any tag) left by writers that no longer run (see above); returns
 * how many. Never fails: what cannot be checked or removed is left alone. */
int sn_tmp_sweep(const char *final);

typedef struct {
    int fd;     /* -1 when not held */
    char *path; /* the lock file */
} sn_out_lock;

/* Takes the lock of `final`. SN_EIO "another process is writing FINAL" when it is held elsewhere. */
sn_status sn_out_lock_take(const char *final, sn_out_lock *l, sn_err *err);
/* Removes the lock file and releases it; safe on a lock never taken (fd -1, path NULL). */
void sn_out_lock_drop(sn_out_lock *l);

/* 1 when a and b name the same existing file (device + inode), else 0. */
int sn_same_file(const char *a, const char *b);

#endif
