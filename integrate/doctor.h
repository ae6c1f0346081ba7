/* doctor.h - explains why talking to Ollama might fail before the user hits it: which host the
 * client will use (OLLAMA_HOST forms), whether a proxy variable would capture it, whether the server
 * answers and what its version can and cannot do, that OLLAMA_MODELS is the server's setting (and
 * what a systemd `ollama` service implies), and free disk where blobs land. Returns findings as data;
 * cmd/ prints them. */
#ifndef SN_DOCTOR_H
#define SN_DOCTOR_H
#include "sn_env.h"
#include <cjson/cJSON.h>

/* {"host":..., "checks":[{"check":name,"status":"ok"|"warn"|"fail","detail":text}, ...]}.
 * host_flag: --host value or NULL (then env's OLLAMA_HOST); env: the user's environment (OLLAMA_HOST,
 * OLLAMA_MODELS, HOME, proxies). NULL only when out of memory. */
cJSON *sn_doctor_ollama(const char *host_flag, const sn_env *env);
/* 1 if any check failed. */
int sn_doctor_failed(const cJSON *report);

#endif
