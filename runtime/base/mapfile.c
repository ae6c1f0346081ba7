/* mapfile.c - see mapfile.h. */
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int sn_open_regular(const char *path, sn_err *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO with no writer would block here */
    if (fd < 0) return sn_err_set(err, SN_EIO, "%s: cannot open: %s", path, strerror(errno)), -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return sn_err_set(err, SN_EIO, "%s: cannot stat: %s", path, strerror(e)), -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return sn_err_set(err, SN_EIO, "%s: not a regular file (%s)", path,
                          S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ? "a directory" : "a device or socket"), -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

sn_status sn_map_file(const char *path, sn_mapped_file *m, sn_err *err) {
    static const uint8_t empty[1];
    memset(m, 0, sizeof *m);
    int fd = sn_open_regular(path, err);
    if (fd < 0) return SN_EIO;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return sn_err_set(err, SN_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return sn_err_set(err, SN_EIO, "%s: too large to map on this system", path);
    }
    m->data = empty;
    if (sb.st_size > 0) {
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            memset(m, 0, sizeof *m);
            return sn_err_set(err, SN_EIO, "%s: cannot mmap: %s", path, strerror(e));
        }
        m->map = p;
        m->data = p;
        m->size = (uint64_t)sb.st_size;
    }
    close(fd);
    return SN_OK;
}

sn_status sn_input_borrow(sn_input *in, const void *buf, uint64_t size, const char *what, sn_err *err) {
    memset(in, 0, sizeof *in);
    if (!(in->path = strdup(what))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    in->base = buf;
    in->size = size;
    return SN_OK;
}

sn_status sn_input_map(sn_input *in, const char *path, sn_err *err) {
    memset(in, 0, sizeof *in);
    sn_status st = sn_map_file(path, &in->map, err);
    if (st != SN_OK) return st;
    if (!(in->path = strdup(path))) {
        sn_unmap_file(&in->map);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    in->base = in->map.data;
    in->size = in->map.size;
    in->mapped = 1;
    return SN_OK;
}

void sn_input_close(sn_input *in) {
    if (in->mapped) sn_unmap_file(&in->map);
    free(in->path);
    memset(in, 0, sizeof *in);
}

sn_status sn_read_file(const char *path, uint64_t max, const char *max_name, char **out, uint64_t *len, sn_err *err) {
    *out = NULL;
    sn_mapped_file m;
    sn_status st = sn_map_file(path, &m, err);
    if (st != SN_OK) return st;
    if (m.size > max) {
        const unsigned long long size = (unsigned long long)m.size;
        sn_unmap_file(&m);
        return sn_err_set(err, SN_EFORMAT, "%s: %llu bytes, larger than the %llu MB budget (%s, budget.h)", path, size,
                          (unsigned long long)(max >> 20), max_name ? max_name : "a budget");
    }
    char *s = malloc((size_t)m.size + 1);
    if (!s) {
        sn_unmap_file(&m);
        return sn_err_set(err, SN_ENOMEM, "%s: out of memory", path);
    }
    memcpy(s, m.data, (size_t)m.size);
    s[m.size] = 0;
    if (len) *len = m.size;
    sn_unmap_file(&m);
    *out = s;
    return SN_OK;
}

void sn_unmap_file(sn_mapped_file *m) {
    if (m->map) munmap(m->map, (size_t)m->size);
    memset(m, 0, sizeof *m);
}
