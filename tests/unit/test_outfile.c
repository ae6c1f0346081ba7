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

static const sn_test_case cases[] = {
    {"temp names are unique and new", test_tmp_unique},
    {"a held lock refuses a second writer; a symlinked lock is not followed", test_lock},
    {"same file by device and inode", test_same_file},
};
SN_TEST_MAIN("outfile", cases)
