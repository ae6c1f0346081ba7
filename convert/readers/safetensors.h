/* safetensors.h - mmap reader for Hugging Face safetensors checkpoints, single file or sharded.
 *
 * A .safetensors file is: u64 LE header length N | N bytes of JSON | raw tensor data. The JSON maps
 * each tensor name to {"dtype": "BF16", "shape": [rows, cols], "data_offsets": [begin, end]} with
 * offsets relative to the data area (byte 8 + N); an optional "__metadata__" object holds strings.
 * A sharded model adds model.safetensors.index.json whose "weight_map" names the shard of every
 * tensor. Everything read from a file is validated before it is trusted: header length (<= 100 MB)
 * and JSON, dtype (F32/F16/BF16, U8), shape, offsets inside the file, byte counts matching the
 * shape, no overlapping tensors, unique names. Tensors are listed in the order llama.cpp's converter
 * visits them (shards in sorted file-name order, names sorted within a shard) so output can be
 * byte-identical. Nothing is copied: tensor data points into the mapping. */
#ifndef SN_SAFETENSORS_H
#define SN_SAFETENSORS_H
#include "sn_err.h"
#include "budget.h"
#include <stddef.h>
#include <stdint.h>

#define SN_ST_MAX_DIMS 4
#define SN_ST_MAX_HEADER SN_BUDGET_ST_HEADER

/* U8: bytes that are not values by themselves (MXFP4 blocks and scales); only a family that maps
 * them as such reads them (the plan refuses any other U8 tensor). */
typedef enum sn_st_dtype { SN_ST_F32 = 0, SN_ST_F16 = 1, SN_ST_BF16 = 2, SN_ST_U8 = 3 } sn_st_dtype;

typedef struct sn_st_tensor {
    const char *name;                 /* NUL-terminated, owned by the file handle */
    sn_st_dtype dtype;
    uint32_t n_dims;                  /* 0 (scalar) .. SN_ST_MAX_DIMS */
    uint64_t shape[SN_ST_MAX_DIMS];   /* torch order: shape[n_dims-1] is contiguous */
    uint64_t n_elems;
    uint64_t nbytes;
    uint64_t file_offset;             /* absolute byte offset of the data in its file */
    const uint8_t *data;              /* into the mapping */
    const char *file;                 /* path of the file holding it */
    int mmapped;                      /* data is a file mapping (sn_st_release may drop it) */
    /* Element strides (torch order). Safetensors tensors are always contiguous (row-major strides,
     * contiguous = 1); PyTorch checkpoints (torch_ckpt.h) may hold views: element (i0, i1, ...)
     * is at data + (i0*stride[0] + i1*stride[1] + ...) * dtype size, inside the checked storage. */
    int64_t stride[SN_ST_MAX_DIMS];
    int contiguous;
    /* Non-NULL: why the converter cannot read this tensor ("dtype torch.int64", "5 dimensions");
     * data is NULL then. Only checkpoints list such tensors (safetensors refuses them at open). */
    const char *unsupported;
    /* Non-zero: data holds ggml blocks of this quantized type (a GGUF tensor being requantized,
     * rows of sn_ggml_row_size bytes); dtype is then unused. Zero for safetensors and checkpoints. */
    int ggml_type;
} sn_st_tensor;

typedef struct sn_st_file sn_st_file;
typedef struct sn_st_model sn_st_model;

const char *sn_st_dtype_name(sn_st_dtype t);
uint32_t sn_st_dtype_size(sn_st_dtype t);

/* One file. Tensors are sorted by name. */
sn_status sn_st_file_open(const char *path, sn_st_file **out, sn_err *err);
/* Parse a buffer (tests, fuzzing); buf must outlive the handle; `what` names it in errors. */
sn_status sn_st_file_open_mem(const void *buf, uint64_t size, const char *what, sn_st_file **out,
                              sn_err *err);
void sn_st_file_close(sn_st_file *f);
size_t sn_st_file_n_tensors(const sn_st_file *f);
const sn_st_tensor *sn_st_file_tensor(const sn_st_file *f, size_t i);
int64_t sn_st_file_find(const sn_st_file *f, const char *name); /* -1 if absent */

/* A model folder: model.safetensors.index.json if present (its shards, sorted), else every
 * model*.safetensors in sorted order; with no safetensors, the PyTorch checkpoints
 * (pytorch_model.bin.index.json's shards, else pytorch_model*.bin), read by torch_ckpt.h. Errors name the file (and tensor) at fault, e.g. a shard the
 * index names that does not exist, or a tensor the index places in a shard that lacks it. */
sn_status sn_st_model_open(const char *dir, sn_st_model **out, sn_err *err);
void sn_st_model_close(sn_st_model *m);

typedef struct sn_st_open_opts {
    const char *state_key; /* PyTorch checkpoints: the state dict's key (torch_ckpt.h), NULL = auto */
    const char *tmp_dir;   /* PyTorch checkpoints: where deflated storages are inflated, NULL = /tmp */
} sn_st_open_opts;
/* A folder (as sn_st_model_open) or one file: *.safetensors, or a PyTorch checkpoint (.bin, .pt,
 * .pth, recognised by content). o may be NULL. */
sn_status sn_st_model_open_path(const char *path, const sn_st_open_opts *o, sn_st_model **out, sn_err *err);
/* Reads element e (flat row-major index over t->shape) of t as f32; for non-contiguous tensors. */
float sn_st_elem_f32(const sn_st_tensor *t, uint64_t e);
/* Row r (shape[n_dims-1] elements, row-major over the leading dims) of t as f32 into out. */
void sn_st_row_f32(const sn_st_tensor *t, uint64_t r, float *out);
size_t sn_st_model_n_tensors(const sn_st_model *m);
const sn_st_tensor *sn_st_model_tensor(const sn_st_model *m, size_t i);
int64_t sn_st_model_find(const sn_st_model *m, const char *name);
size_t sn_st_model_n_files(const sn_st_model *m);
const char *sn_st_model_file(const sn_st_model *m, size_t i);
uint64_t sn_st_model_data_bytes(const sn_st_model *m); /* sum of tensor bytes */

/* Tells the kernel we are done with [off, off+len) of t's data for now (drops it from our RSS; the
 * page cache keeps it). Safe to read again afterwards. */
void sn_st_release(const sn_st_tensor *t, uint64_t off, uint64_t len);

#endif
