/* outfile.c - unique temp files and output locks (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* a name part no other run picks: pid, clock and a counter, mixed */
static uint64_t unique_bits(void) {
    static uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                 (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 29);
}

int sn_tmp_create(const char *final, const char *tag, char **tmp_out, sn_err *err) {
    *tmp_out = NULL;
    size_t cap = strlen(final) + strlen(tag) + 32;
    char *p = malloc(cap);
    if (!p) return sn_err_set(err, SN_ENOMEM, "out of memory"), -1;
    for (int tries = 0; tries < 16; tries++) {
        snprintf(p, cap, "%s%s.%08llx.tmp", final, tag, (unsigned long long)(unique_bits() & 0xffffffffu));
        int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            *tmp_out = p;
            return fd;
        }
        if (errno != EEXIST) break;
    }
    sn_err_set(err, SN_EIO, "%s: cannot create: %s", p, strerror(errno));
    free(p);
    return -1;
}

sn_status sn_out_lock_take(const char *final, sn_out_lock *l, sn_err *err) {
    l->fd = -1;
    const char *slash = strrchr(final, '/');
    size_t dl = slash ? (size_t)(slash - final + 1) : 0;
    size_t cap = strlen(final) + 8;
    if (!(l->path = malloc(cap))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    snprintf(l->path, cap, "%.*s.%s.lock", (int)dl, final, final + dl);
    /* the file may be unlinked by its holder between our open and flock: retry on a stale inode */
    for (int tries = 0; tries < 8; tries++) {
        int fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            sn_status st = sn_err_set(err, SN_EIO, "%s: cannot create the lock file: %s", l->path, strerror(errno));
            sn_out_lock_drop(l);
            return st;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            sn_status st = e == EWOULDBLOCK
                               ? sn_err_set(err, SN_EIO, "%s: another process is writing it (lock %s held); "
                                            "refusing to write the same output twice at once", final, l->path)
                               : sn_err_set(err, SN_EIO, "%s: cannot lock: %s", l->path, strerror(e));
            free(l->path);
            l->path = NULL;
            return st;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && lstat(l->path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            l->fd = fd;
            return SN_OK;
        }
        close(fd);
    }
    sn_status st = sn_err_set(err, SN_EIO, "%s: lock file keeps changing", l->path);
    free(l->path);
    l->path = NULL;
    return st;
}

void sn_out_lock_drop(sn_out_lock *l) {
    if (l->fd >= 0) {
        unlink(l->path); /* while held, so no other run holds a lock on this inode */
        close(l->fd);
    }
    l->fd = -1;
    free(l->path);
    l->path = NULL;
}

int sn_same_file(const char *a, const char *b) {
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}
