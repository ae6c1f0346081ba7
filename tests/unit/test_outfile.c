/* test_outfile.c - unique temp files and output locks (runtime/base/outfile.h): a temp name is never
 * reused or reached through a symlink, a second lock of one output is refused, a lock file planted
 * as a symlink is not followed, and a released lock leaves nothing behind. */
#include "outfile.h"
#include "sn_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[64];

static void mk(void) {
    snprintf(g_dir, sizeof g_dir, "outfile_test_%d", (int)getpid());
    mkdir(g_dir, 0755);
}

static void test_tmp_unique(void) {
    mk();
    char out[128], *a = NULL, *b = NULL;
    snprintf(out, sizeof out, "%s/o.gguf", g_dir);
    sn_err err = {0};
    int fa = sn_tmp_create(out, "", &a, &err), fb = sn_tmp_create(out, ".part", &b, &err);
    CU_ASSERT_FATAL(fa >= 0 && fb >= 0);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    CU_ASSERT(strncmp(a, out, strlen(out)) == 0 && strstr(a, ".tmp") != NULL);
    CU_ASSERT(strstr(b, "o.gguf.part.") != NULL);
    struct stat sb;
    CU_ASSERT(lstat(a, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0);
    close(fa);
    close(fb);
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}

static void test_lock(void) {
    char out[128], victim[128];
    snprintf(out, sizeof out, "%s/o.gguf", g_dir);
    snprintf(victim, sizeof victim, "%s/victim", g_dir);
    sn_out_lock l1, l2;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_out_lock_take(out, &l1, &err), SN_OK);
    CU_ASSERT_STRING_EQUAL(strrchr(l1.path, '/'), "/.o.gguf.lock");
    CU_ASSERT_EQUAL(sn_out_lock_take(out, &l2, &err), SN_EIO); /* held: refused, not waited for */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "another process is writing it"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, out));
    sn_out_lock_drop(&l1);
    CU_ASSERT(access(l1.path ? l1.path : "x", F_OK) != 0);
    char lp[160];
    snprintf(lp, sizeof lp, "%s/.o.gguf.lock", g_dir);
    CU_ASSERT(access(lp, F_OK) != 0); /* released: removed */
    CU_ASSERT_EQUAL(sn_out_lock_take(out, &l2, &err), SN_OK);
    sn_out_lock_drop(&l2);
    sn_out_lock_drop(&l2); /* twice is harmless */

    /* a symlink planted at the lock name is not followed */
    int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(write(fd, "keep", 4) == 4);
    close(fd);
    CU_ASSERT_FATAL(symlink("victim", lp) == 0);
    CU_ASSERT_EQUAL(sn_out_lock_take(out, &l1, &err), SN_EIO);
    struct stat sb;
    CU_ASSERT(stat(victim, &sb) == 0 && sb.st_size == 4);
    unlink(lp);
    unlink(victim);
    rmdir(g_dir);
}

static void test_same_file(void) {
    mk();
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a", g_dir);
    snprintf(b, sizeof b, "%s/./a", g_dir);
    close(open(a, O_WRONLY | O_CREAT, 0644));
    CU_ASSERT(sn_same_file(a, b));
    CU_ASSERT(!sn_same_file(a, g_dir));
    CU_ASSERT(!sn_same_file(a, "no/such/file"));
    unlink(a);
    rmdir(g_dir);
}

/* name in g_dir, written with text, its mtime age seconds ago; symlink_to: a symlink instead */
static void put(const char *name, const char *symlink_to, long age) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    if (symlink_to) {
        CU_ASSERT_FATAL(symlink(symlink_to, p) == 0);
    } else {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CU_ASSERT_FATAL(fd >= 0 && write(fd, "x", 1) == 1);
        close(fd);
    }
    struct timespec t[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
    CU_ASSERT(utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW) == 0);
}

static int there(const char *name) {
    char p[256];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    return lstat(p, &sb) == 0;
}

/* A temp file left by a writer killed with -9 is removed by the next writer of the same output -
 * only when its pid is gone and it is older than SN_TMP_STALE_S, only names of our own pattern,
 * never a directory, and a symlink is removed itself, never followed. */
static void test_sweep(void) {
    mk();
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    CU_ASSERT_FATAL(dead > 0 && waitpid(dead, NULL, 0) == dead); /* reaped: no such process now */
    const long old = SN_TMP_STALE_S + 60;
    char n[20][96];
    int k = 0;
    snprintf(n[k++], 96, "o.gguf.%d-0123abcd.tmp", (int)dead);             /* 0 stale: removed */
    snprintf(n[k++], 96, "o.gguf.part.%d-0123abcd.tmp", (int)dead);        /* 1 stale with a tag: removed */
    snprintf(n[k++], 96, "o.gguf.link.%d-00000000.tmp", (int)dead);        /* 2 stale symlink: removed, not followed */
    snprintf(n[k++], 96, "o.gguf.%d-0123abcd.tmp.meta.%d-0123abcd.tmp", (int)dead, (int)dead); /* 3 a temp's temp: removed */
    snprintf(n[k++], 96, "o.gguf.%d-0123abce.tmp", (int)dead);             /* 4 dead but fresh: kept */
    snprintf(n[k++], 96, "o.gguf.%d-0123abcf.tmp", (int)getppid());        /* 5 writer alive: kept */
    snprintf(n[k++], 96, "other.gguf.%d-0123abcd.tmp", (int)dead);         /* 6 another output's: kept */
    snprintf(n[k++], 96, "o.gguf.%d-0123ABCD.tmp", (int)dead);             /* 7 not our pattern: kept */
    snprintf(n[k++], 96, "o.gguf.%d-0123abcd.tmp.bak", (int)dead);         /* 8 not our pattern: kept */
    snprintf(n[k++], 96, "o.gguf.0123abcd.tmp");                           /* 9 no pid: kept */
    snprintf(n[k++], 96, "o.gguf.%d-0123abcd.tmp", (int)dead + 1000000);   /* 10 directory (made below): kept */
    put("victim", NULL, 0);
    for (int i = 0; i < k; i++) {
        if (i == 10) {
            char p[256];
            snprintf(p, sizeof p, "%s/%s", g_dir, n[i]);
            CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
            continue;
        }
        put(n[i], i == 2 ? "victim" : NULL, i == 4 ? 5 : old);
    }
    char out[128], *t = NULL;
    snprintf(out, sizeof out, "%s/o.gguf", g_dir);
    sn_err err = {0};
    int fd = sn_tmp_create(out, "", &t, &err); /* the next writer: sweeps first */
    CU_ASSERT_FATAL(fd >= 0);
    char want[64];
    snprintf(want, sizeof want, ".%d-", (int)getpid());
    CU_ASSERT_PTR_NOT_NULL(strstr(t, want)); /* its own pid in the name */
    for (int i = 0; i < k; i++) {
        const int gone = i <= 3;
        CU_ASSERT_EQUAL(!there(n[i]), gone);
        if ((!there(n[i])) != gone) fprintf(stderr, "%s: %s\n", n[i], gone ? "kept" : "removed");
    }
    struct stat sb;
    char vp[160];
    snprintf(vp, sizeof vp, "%s/victim", g_dir);
    CU_ASSERT(stat(vp, &sb) == 0 && sb.st_size == 1); /* the symlink's target untouched */
    CU_ASSERT_EQUAL(sn_tmp_sweep(out), 0);           /* the live writer's own temp stays */
    close(fd);
    unlink(t);
    free(t);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    CU_ASSERT(system(cmd) == 0);
}

static const sn_test_case cases[] = {
    {"stale temps of dead writers are swept, nothing else", test_sweep},
    {"temp names are unique and new", test_tmp_unique},
    {"a held lock refuses a second writer; a symlinked lock is not followed", test_lock},
    {"same file by device and inode", test_same_file},
};
SN_TEST_MAIN("outfile", cases)
