/* outfile.h - how every sunny output reaches its final name safely.
 *
 * A writer creates a temp file of its own, NAME.<unique>.tmp, with O_CREAT|O_EXCL|O_NOFOLLOW: a
 * symlink planted at that name or a temp file of another run is never opened, so renaming the temp
 * file publishes only bytes this process wrote. Two runs that target the same NAME at once are kept
 * apart by a lock file, .NAME.lock beside NAME (flock LOCK_EX|LOCK_NB): the second run is refused
 * with a clear message instead of both renaming onto NAME. The lock file is removed on release; a
 * run killed with -9 leaves it behind, unlocked, and the next run takes it over. */
#ifndef SN_OUTFILE_H
#define SN_OUTFILE_H
#include "sn_err.h"

/* Creates a new empty file "<final><tag>.<unique>.tmp" (tag may be "", e.g. ".part"), mode 0644
 * less the umask. Returns its open O_RDWR descriptor and the malloc'd path in *tmp_out, or -1 with
 * err set (SN_EIO, naming the path). */
int sn_tmp_create(const char *final, const char *tag, char **tmp_out, sn_err *err);

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
