/* pmdmap.c - how much of a file a process that maps it gets in 2 MB pages (bench/lib.sh).
 *
 * llama.cpp (and sunny-run --mmap) read the weights through a read-only mapping of the file. The
 * page cache holds the file in folios whose size depends on how it was written and read back
 * (ext4 keeps large folios on recent kernels); a folio of 2 MB at an aligned file offset is mapped
 * with one page-table entry, the rest in 4 KB pages, each a TLB entry and a point where the hardware
 * prefetchers stop. The share moves from file to file and from hour to hour, and llama-bench's decode
 * speed on a file moves with it, so the bench rows print it. This maps FILE the way llama.cpp does
 * (PROT_READ, MAP_SHARED), faults every page in (MADV_POPULATE_READ) and prints the percentage of
 * the file that /proc/self/smaps reports as FilePmdMapped for that mapping ("nan" if unknown).
 * With --refold it first drops the file's clean pages from the page cache (POSIX_FADV_DONTNEED) and
 * reads it back through a MADV_HUGEPAGE mapping, so that the page cache holds it in 2 MB folios
 * where the kernel can (llama-bench's best case; pages another process has mapped stay as they are).
 *   usage: pmdmap [--refold] FILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

int main(int argc, char **argv) {
    const int refold = argc == 3 && strcmp(argv[1], "--refold") == 0;
    if (argc != 2 + refold) {
        fprintf(stderr, "usage: pmdmap [--refold] FILE\n");
        return 2;
    }
    const char *path = argv[1 + refold];
    const int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
        perror(path);
        return 1;
    }
    if (refold) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        char *q = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (q != MAP_FAILED) {
            madvise(q, (size_t)st.st_size, MADV_HUGEPAGE); /* readahead in PMD-sized folios */
            madvise(q, (size_t)st.st_size, MADV_POPULATE_READ);
            munmap(q, (size_t)st.st_size);
        }
    }
    char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (madvise(p, (size_t)st.st_size, MADV_POPULATE_READ) != 0) {
        volatile char sink = 0; /* older kernels: touch one byte per page */
        for (off_t o = 0; o < st.st_size; o += 4096) sink ^= p[o];
        (void)sink;
    }
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) {
        printf("nan\n");
        return 0;
    }
    char line[512];
    int in = 0;
    long long kb = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) in = lo == (unsigned long)(uintptr_t)p; /* a mapping's first line */
        else if (in && sscanf(line, "FilePmdMapped: %lld kB", &kb) == 1) break;
    }
    fclose(f);
    if (kb < 0) printf("nan\n");
    else printf("%.0f\n", 100.0 * (double)kb * 1024.0 / (double)st.st_size);
    return 0;
}
