/* tuning_env.c - the SN_* environment knobs into an sn_tuning (see tuning_env.h). */
#include "tuning_env.h"

#include <stdlib.h>
#include <string.h>

/* the off switches: "0" turns the feature off */
static int zero(const char *name) {
    const char *e = getenv(name);
    return e && !strcmp(e, "0");
}

void sn_tuning_from_env(sn_tuning *t) {
    const char *e = getenv("SN_CPU");
    if (e && !strcmp(e, "scalar")) t->isa &= SN_CPU_AMD;
    else if (e && !strcmp(e, "avx2")) t->isa &= SN_CPU_AVX2 | SN_CPU_AMD;
    if ((e = getenv("SN_GGML_LANES")) && (!strcmp(e, "8") || !strcmp(e, "16"))) t->lanes = atoi(e);
    /* the stream choices: "1" on, any other non-empty value off (as they always read) */
    if ((e = getenv("SN_MV_QUARTERS")) && *e) t->far_streams = !strcmp(e, "1");
    if ((e = getenv("SN_MV_PAGES")) && *e) t->page_kick = !strcmp(e, "1");
    if ((e = getenv("SN_MM_F16")) && *e) t->mm_f16_convert = !strcmp(e, "convert");
    if (zero("SN_Q4_0_REPACK")) t->repack_q4_0 = 0;
    if (zero("SN_Q4_K_REPACK")) t->repack_q4_K = 0;
    if (zero("SN_HUGE_WEIGHTS")) t->huge_pages = 0;
    if (getenv("SN_NO_PREFAULT")) t->prefault = 0;
}

void sn_tuning_apply_env(void) {
    sn_tuning t;
    sn_tuning_get(&t);
    sn_tuning_from_env(&t);
    (void)sn_tuning_apply(&t); /* at start-up: nothing has fixed the kernels yet */
}
