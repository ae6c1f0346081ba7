/* budget.h - what one untrusted input may cost sunny, in one place.
 *
 * Every reader of a file or a reply from a stranger stops with an error naming the budget and the
 * input when it would spend more than these, instead of growing until the machine swaps. Where a
 * budget can follow the input's own size it does (a compressed entry may inflate only so far; a
 * pickle's VM may use only so much memory per pickle byte); the absolute caps sit far above any
 * real model's files, so no real input meets them. */
#ifndef SN_BUDGET_H
#define SN_BUDGET_H
#include <stdint.h>

/* PyTorch checkpoints (convert/readers/torch_ckpt.c, pickle.c, torch_zip.c) */
/* data.pkl: a state dict's pickle costs ~100-150 bytes per tensor, so 64 MB is ~500k tensors. */
#define SN_BUDGET_PKL_BYTES (64ull << 20)
/* A deflated entry read into memory (data.pkl, byteorder) may state at most this multiple of its
 * compressed size plus SN_BUDGET_INFLATE_SLACK, checked before inflating: pickles compress 3-10x,
 * while a hostile entry of repeated opcodes reaches deflate's 1032x. */
#define SN_BUDGET_INFLATE_RATIO 16u
#define SN_BUDGET_INFLATE_SLACK (1ull << 20)
/* The pickle VM's memory (values, container items, strings): base + per pickle byte. A real state
 * dict costs ~20 bytes of VM memory per pickle byte; a stream of 1-byte opcodes that each create a
 * value or DUP a container into a list (DUP/APPENDS) would cost up to ~180. */
#define SN_BUDGET_PKL_MEM_BASE (32ull << 20)
#define SN_BUDGET_PKL_MEM_PER_BYTE 32u
/* The pickle VM's counts, each far above a state dict's (~10 values and memo entries per tensor,
 * nesting of 3-4 levels, one MARK open at a time, strings ~100 bytes per tensor). */
#define SN_BUDGET_PKL_MEMO (1ull << 20)
#define SN_BUDGET_PKL_STACK (1ull << 20)
#define SN_BUDGET_PKL_MARKS 4096ull
#define SN_BUDGET_PKL_DEPTH 256ull
#define SN_BUDGET_PKL_VALUES (1ull << 24)
#define SN_BUDGET_PKL_STRINGS (256ull << 20)

/* Text and JSON files of a model folder read whole (config.json, tokenizer_config.json, README.md,
 * a .jinja template): the largest real tokenizer_config.json files are a few MB. */
#define SN_BUDGET_TEXT_FILE (64ull << 20)
/* Small files of a few lines or one object (~/.lmstudio-home-pointer, LM Studio's
 * http-server.json): 1 MB is ~1000 times a real one. */
#define SN_BUDGET_SMALL_FILE (1ull << 20)
/* A vocabulary or tokenizer file read whole (tokenizer.json, rwkv_vocab_*.txt, vocab.json, a
 * tokenizer template file): the largest real tokenizer.json files are ~35 MB. */
#define SN_BUDGET_VOCAB_FILE (256ull << 20)
/* A safetensors header (JSON) and a shard index: a 1000-tensor header is ~100 KB. */
#define SN_BUDGET_ST_HEADER (100ull << 20)
/* GGUF strings and arrays: llama.cpp's own limits (gguf.cpp), so every file it reads, we read. */
#define SN_BUDGET_GGUF_STRING (UINT64_C(1) << 30)
#define SN_BUDGET_GGUF_ARRAY (UINT64_C(1) << 30)

/* Chat templates (templates/): the memory of one parse and of one render, and the text one render
 * may produce. Real templates are < 64 KB and render a conversation in well under 1 MB. */
#define SN_BUDGET_GOTMPL_PARSE (32u << 20)
#define SN_BUDGET_JINJA_PARSE (64u << 20)
#define SN_BUDGET_TMPL_RENDER (256u << 20)
#define SN_BUDGET_GOTMPL_OUTPUT (64u << 20)
#define SN_BUDGET_JINJA_OUTPUT (16u << 20)
/* Evaluation steps of one render (each expression, statement and loop turn): real renders take
 * thousands; a loop nest that would run for minutes stops here. */
#define SN_BUDGET_TMPL_STEPS 20000000ull

/* sunny-run -f FILE: a prompt (a pipe is allowed, so the size is only known by reading). */
#define SN_BUDGET_PROMPT_BYTES (64u << 20)

/* Replies of servers (integrate/http.c) */
/* One NDJSON line of a streamed reply (Ollama's /api/create, /api/pull progress objects are
 * ~100 bytes; a line carrying an error message is still small). */
#define SN_BUDGET_NDJSON_LINE (1u << 20)
/* A collected (non-streamed) JSON body: /api/show of a model with a large template is < 1 MB. */
#define SN_BUDGET_JSON_BODY (64u << 20)

#endif
