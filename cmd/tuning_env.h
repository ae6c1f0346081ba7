/* tuning_env.h - the SN_* environment knobs into an sn_tuning: the one place that reads them (the
 * three programs through sn_cli_init, and the unit tests), so they keep working for users, tests
 * and bench/ scripts while the libraries read no environment. */
#ifndef SN_TUNING_ENV_H
#define SN_TUNING_ENV_H
#include "cpu.h"

/* Overrides the fields of *t the environment sets:
 *   SN_CPU=scalar|avx2|avx512   cap on the instruction sets (avx512: none)
 *   SN_GGML_LANES=8|16          ggml's float-sum width to match
 *   SN_MV_QUARTERS=0|1          far_streams        SN_MV_PAGES=0|1   page_kick
 *   SN_MM_F16=convert|widen     mm_f16_convert
 *   SN_Q4_0_REPACK=0, SN_Q4_K_REPACK=0, SN_HUGE_WEIGHTS=0   turn the repacks / huge pages off
 *   SN_NO_PREFAULT (set)        prefault off */
void sn_tuning_from_env(sn_tuning *t);
/* sn_tuning_get, sn_tuning_from_env, then sn_tuning_apply: the process's kernels follow the env. */
void sn_tuning_apply_env(void);

#endif
