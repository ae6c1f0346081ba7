/* modelinfo.h - the few GGUF facts integrate/ needs about a model file: architecture, name, file
 * type (quantization), chat template, license, context length, and whether llama.cpp knows the
 * architecture. Read once through runtime/formats/gguf.h (header only) so Ollama and LM Studio installs,
 * Modelfiles and the smoke test describe the same file the same way. */
#ifndef SN_MODELINFO_H
#define SN_MODELINFO_H
#include "sn_err.h"
#include <stdint.h>

typedef struct sn_modelinfo {
    char arch[64];           /* general.architecture */
    char name[128];          /* general.name, else the file's stem */
    char stem[256];          /* gguf.naming_convention's start from general.basename (else name),
                              * size_label, finetune, version: "Qwen3-0.6B-Instruct" */
    char quant[16];          /* from general.file_type ("Q8_0", "F16", ...) or "unknown" */
    int file_type;           /* -1 if absent */
    char *chat_template;     /* tokenizer.chat_template or NULL (malloc'd) */
    char *license;           /* general.license or NULL (malloc'd) */
    uint32_t context_length; /* <arch>.context_length, 0 if absent */
    uint64_t file_size;
    int split_no, split_count; /* split.no / split.count, 0/0 when not split */
    char general_type[32];   /* general.type ("model", "adapter", "mmproj", ...) or "" */
} sn_modelinfo;

sn_status sn_modelinfo_read(const char *path, sn_modelinfo *mi, sn_err *err);
void sn_modelinfo_free(sn_modelinfo *mi);

/* 1 if llama.cpp (the version the oracle runs) has this architecture. */
int sn_modelinfo_arch_known(const char *arch);

#endif
