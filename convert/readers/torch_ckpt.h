/* torch_ckpt.h - PyTorch checkpoints (torch.save, torch >= 1.6 zip format) as a tensor source.
 *
 * A .bin / .pt / .pth written by torch.save is a zip archive (torch_zip.h) holding <name>/data.pkl,
 * a pickle (pickle.h) of the saved object, and one entry <name>/data/<key> per storage with its raw
 * little-endian bytes. A tensor in the pickle is (storage key, storage_offset, sizes, strides), so
 * several tensors may share one storage (tied weights) and a tensor may be a non-contiguous view
 * (a transposed matrix). This reader maps the file, runs the pickle through the data-only VM, picks
 * the state dict (the saved object itself when it is a dict of tensors, else the unique value that
 * is - {"model": ...}, {"state_dict": ...} - or the one named by state_key) and presents every tensor
 * exactly as safetensors.h presents its tensors: an sn_st_tensor whose data points into the mapped
 * archive (nothing copied), with its element strides. Deflated storages (re-packed archives) are
 * inflated once into an unlinked temporary file and mapped, so memory stays bounded either way.
 *
 * Checked before a tensor is handed out: its storage entry exists, the pickle's numel agrees with
 * the entry size, sizes and strides are non-negative and their products do not overflow, and the
 * furthest element (storage_offset + sum((size-1) * stride)) lies inside the storage. Tensors of a
 * dtype the converter cannot read (int64 buffers, float64, ...) or with more than SN_ST_MAX_DIMS
 * dimensions are listed with `unsupported` set and data NULL, so the pipeline can skip them when the
 * architecture drops them and refuse them by name otherwise. The legacy (pre-1.6) pickle-stream and
 * tar formats are refused with how to re-save. byteorder "big" is refused.
 *
 * Tensors are sorted by name (the order safetensors.h uses), so a model converts to the same GGUF
 * whichever format holds it. */
#ifndef SN_TORCH_CKPT_H
#define SN_TORCH_CKPT_H
#include "safetensors.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sn_tc_opts {
    const char *state_key; /* NULL: automatic; else a key of the saved dict ("model", "a.b" nests) */
    const char *tmp_dir;   /* where deflated storages are inflated (NULL or "": /tmp) */
} sn_tc_opts;

typedef struct sn_tc_file sn_tc_file;

/* 1 if the file at path starts like a torch.save output (zip 'PK\3\4' or the legacy pickle magic). */
int sn_tc_sniff(const char *path);

sn_status sn_tc_open(const char *path, const sn_tc_opts *o, sn_tc_file **out, sn_err *err);
/* Same over a caller buffer (tests, fuzzing; deflated storages are then inflated to the heap, at
 * most 64 MB each); buf must outlive
 * the handle. */
sn_status sn_tc_open_mem(const void *buf, uint64_t size, const char *what, const sn_tc_opts *o,
                         sn_tc_file **out, sn_err *err);
void sn_tc_close(sn_tc_file *f);

size_t sn_tc_n_tensors(const sn_tc_file *f);
const sn_st_tensor *sn_tc_tensor(const sn_tc_file *f, size_t i); /* sorted by name */
int64_t sn_tc_find(const sn_tc_file *f, const char *name);       /* -1 if absent */
const char *sn_tc_path(const sn_tc_file *f);
/* Where the state dict was found: "" (the saved object), "model", "state_dict", ... */
const char *sn_tc_state_key(const sn_tc_file *f);

#endif
