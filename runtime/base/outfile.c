/* outfile.c - unique temp files and output locks (see outfile.h). */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

/* The writer's pid if name is a temp name of base: base + one or more groups of an optional tag
 * ".<lowercase letters>" and ".<pid>-<8 lowercase hex>.tmp" (more than one: the temp file of a temp
 * file, as the blob writer's metadata), else 0. */
static long temp_pid(const char *name, const char *base) {
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0) return 0;
    const char *p = name + bl;
    long pid = 0;
    do {
        if (*p != '.') return 0;
        const char *q = p + 1;
        while (*q >= 'a' && *q <= 'z') q++;
        if (*q == '.' && q > p + 1) p = q; /* the tag */
        p++;
        int digits = 0;
        for (pid = 0; *p >= '0' && *p <= '9' && digits < 10; p++, digits++) pid = pid * 10 + (*p - '0');
        if (!digits || *p++ != '-') return 0;
        for (int i = 0; i < 8; i++, p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
        if (strncmp(p, ".tmp", 4) != 0) return 0;
        p += 4;
    } while (*p);
    return pid > 0 && pid <= INT32_MAX ? pid : 0;
}

int sn_tmp_sweep(const char *final) {
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == final) snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - final) < sizeof dir) snprintf(dir, sizeof dir, "%.*s", (int)(slash - final), final);
    else return 0;
    if (!*base) return 0;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return 0;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    int removed = 0;
    const time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid = temp_pid(e->d_name, base);
        if (!pid || pid == (long)getpid()) continue;
        struct stat sb;
        if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!(S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)) || sb.st_uid != geteuid()) continue;
        if (now - sb.st_mtime < SN_TMP_STALE_S) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        if (unlinkat(dfd, e->d_name, 0) == 0) removed++;
    }
    closedir(d);
    return removed;
}

int sn_tmp_create(const char *final, const char *tag, char **tmp_out, sn_err *err) {
    *tmp_out = NULL;
    sn_tmp_sweep(final);
    size_t cap = strlen(final) + strlen(tag) + 48;
    char *p = malloc(cap);
    if (!p) return sn_err_set(err, SN_ENOMEM, "out of memory"), -1;
    for (int tries = 0; tries < 16; tries++) {
        snprintf(p, cap, "%s%s.%ld-%08llx.tmp", final, tag, (long)getpid(), (unsigned long long)(unique_bits() & 0xffffffffu));
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
