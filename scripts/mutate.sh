#!/usr/bin/env bash
# mutate.sh - does the suite catch a wrong program? Applies small deliberate bugs one at a time (a
# rounding changed, a constant off, a check dropped), rebuilds, runs the tests meant to catch each
# one, and fails if any bug survives. Not part of `make test`; run it before resolving an issue and
# add a mutation for each new capability (docs/TESTING.md has the current score).
#
#   scripts/mutate.sh [-k] [ID-REGEX]      (-k: keep going after a survivor; default: all mutations)
#   SN_MUTATE_CHECK=1 scripts/mutate.sh    (only check that every search text is still there)
#
# Each mutation is (id, file, exact search text, replacement, ctest -R regex[, env]); `also FILE FROM
# TO` right after one adds a second edit to it (one bug made in two places at once, e.g. the same
# wrong newline in a Go template and in its Jinja reference). Each search text must occur exactly
# once in its file: if someone changed that line, the script stops and says so (fix the mutation,
# never drop it). It is CPU-heavy: on a shared machine run it as `nice -n 10 scripts/mutate.sh -k`. Work happens in a scratch copy of the tracked files
# (SN_MUTATE_DIR, default build-mutate/src) with its own incremental build (build-mutate/build);
# the working tree is never touched. The unmutated copy must pass every targeted test first.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=${SN_MUTATE_ROOT:-$PWD}
# bash reads a script as it runs it: run from a copy, so editing the list during a run is safe. The
# copy is per process (a second run, even SN_MUTATE_CHECK=1, once overwrote a running one's copy
# mid-run) and unlinked as soon as bash has it open.
if [[ -z ${SN_MUTATE_ROOT:-} ]]; then
  mkdir -p "${SN_MUTATE_DIR:-$ROOT/build-mutate}"
  copy=${SN_MUTATE_DIR:-$ROOT/build-mutate}/mutate.running.$$.sh
  cp "$ROOT/scripts/mutate.sh" "$copy"
  SN_MUTATE_ROOT=$ROOT exec bash "$copy" "$@"
fi
[[ $0 == */mutate.running.*.sh ]] && rm -f "$0"
cd "$ROOT"
KEEP=0
[[ ${1:-} == -k ]] && { KEEP=1; shift; }
ONLY=${1:-.}
S=${SN_MUTATE_DIR:-$ROOT/build-mutate}
SRC=$S/src B=$S/build
JOBS=$(nproc 2>/dev/null || echo 2)

# ---- the mutations ---------------------------------------------------------------------------------
# Targeted tests are narrowed with the tests' own knobs so each run takes seconds to a minute.
# SN_PARITY_STRICT=1: the final-step logits must match llama.cpp's to 1e-5 on an AVX2 machine too (always
# required on AVX-512, where CI runs); a RoPE or attention change of a few ulps rarely flips a token.
FAST_PARITY="SN_PARITY_STRICT=1 SN_PARITY_FAMILIES=llama3 SN_PARITY_TYPES=f32 SN_PARITY_SKIP_SCALING=1 SN_PARITY_SKIP_LONG=1 SN_PARITY_SKIP_KQUANTS=1"
IDS=() FILES=() FROMS=() TOS=() TESTS=() ENVS=()
AL_OF=() AL_FILE=() AL_FROM=() AL_TO=() # extra edits: AL_OF[k] = index of the mutation they belong to
mut() { IDS+=("$1"); FILES+=("$2"); FROMS+=("$3"); TOS+=("$4"); TESTS+=("$5"); ENVS+=("${6:-}"); }
also() { AL_OF+=($((${#IDS[@]} - 1))); AL_FILE+=("$1"); AL_FROM+=("$2"); AL_TO+=("$3"); }

# runtime: quantizers, kernels, forward pass, tokenizer, sampler, formats
mut q8_0-rounding runtime/quants/ggml_quant.c \
  'for (int j = 0; j < SN_QK8_0; j++) y[i].qs[j] = cast_i8(roundf(xb[j] * id));' \
  'for (int j = 0; j < SN_QK8_0; j++) y[i].qs[j] = cast_i8(truncf(xb[j] * id));' 'unit/test_ggml_types$'
mut q4_k-search-step runtime/quants/ggml_quant_k.c \
  'scales[j] = sn_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, 0);' \
  'scales[j] = sn_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &mins[j], Laux, rmin, 0.12f, nstep, 0);' 'unit/test_ggml_types$'
mut q4_k-search-step-x8 runtime/quants/ggml_quant_k.c \
  'qkx2_quants_x8(32, nmax, xt, wt, Lt, mins, scales, rmin, 0.1f, nstep);' \
  'qkx2_quants_x8(32, nmax, xt, wt, Lt, mins, scales, rmin, 0.12f, nstep);' 'unit/test_ggml_types$'
mut q2_k-abs-error runtime/quants/ggml_quant_k23.c \
  'Laux, -0.5f, 0.1f, 15, 1);' 'Laux, -0.5f, 0.1f, 15, 0);' 'unit/test_ggml_types$'
mut iq4-scale-trials runtime/quants/ggml_quant_legacy.c \
  'for (int itry = -7; itry <= 7; itry++) {' 'for (int itry = -6; itry <= 7; itry++) {' 'unit/test_ggml_types$'
mut quant-more-bits convert/quant_rules.c \
  'return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;' \
  'return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 1;' 'integration/test_convert_quant$'
mut rope-theta runtime/models/model_llama.c \
  's->theta_scale = powf(hp->rope_freq_base, -2.0f / n_dims);' \
  's->theta_scale = powf(hp->rope_freq_base * 1.01f, -2.0f / n_dims);' 'integration/test_run_parity$' "$FAST_PARITY"
mut attention-chunking runtime/models/model_llama_attn.c \
  'if (!single || n_kv < 512) {' 'if (!single || n_kv < 2048) {' 'integration/test_run_parity$' \
  "SN_PARITY_STRICT=1 SN_PARITY_FAMILIES=llama3 SN_PARITY_TYPES=f16 SN_PARITY_SKIP_SCALING=1 SN_PARITY_SKIP_KQUANTS=1"
mut pretok-starcoder runtime/tokenizers/tok_pretok.c \
  '{RXSET_STARCODER, 0, "starcoder ' '{RXSET_GPT2, 0, "starcoder ' 'integration/test_pretok_rows$' \
  "SN_PRETOK_ONLY=^(starcoder|gpt-2)$"
mut pretok-qwen2-flags runtime/tokenizers/tok_pretok.c \
  '{RXSET_QWEN2, SN_PRE_KEEP_SPACES, "qwen2 ' '{RXSET_GPT2, SN_PRE_KEEP_SPACES, "qwen2 ' 'integration/test_pretok_rows$' \
  "SN_PRETOK_ONLY=^qwen2$"
mut sampler-top-p runtime/sampler.c \
  'if (cum >= s->p.top_p && i + 1 >= 1) { size = i + 1; break; }' \
  'if (cum >= s->p.top_p && i + 1 >= 1) { size = i + 2; break; }' 'integration/test_sample_parity$'
mut sampler-min-p runtime/sampler.c \
  'const float thr = c[0].logit + logf(s->p.min_p);' 'const float thr = c[0].logit + logf(s->p.min_p * 0.5f);' \
  'integration/test_sample_parity$'
# greedy argmax: max with its operands swapped lets a NaN win; the order-free double
# sum trusted 10 binades past its bound; the variance tree's pairs crossed; relu^2 keeping negatives
mut argmax-nan runtime/sampler.c \
  'm0 = _mm_max_ps(_mm_loadu_ps(x + i), m0);' 'm0 = _mm_max_ps(m0, _mm_loadu_ps(x + i));' 'unit/test_model$'
mut sum-f64-bound runtime/models/ops.c \
  'const int span_max = 29 - ' 'const int span_max = 39 - ' 'unit/test_norm$'
mut layernorm-tree runtime/models/ops.c \
  '_mm_add_ps(_mm_add_ps(q[3], q[1]), _mm_add_ps(q[2], q[0]))' '_mm_add_ps(_mm_add_ps(q[3], q[2]), _mm_add_ps(q[1], q[0]))' \
  'unit/test_norm$'
mut rwkv7-relu-sq runtime/models/model_rwkv7.c \
  'const __m128 z = _mm_max_ps(_mm_loadu_ps(ff + i), _mm_setzero_ps());' 'const __m128 z = _mm_loadu_ps(ff + i);' \
  'integration/test_rwkv7$'
# the demo's proof (scripts/demo_check.sh against the recorded llama.cpp output) catches a skipped norm
mut rwkv7-skip-groupnorm runtime/models/model_rwkv7.c \
  'sn_ops_layernorm(y, y, NULL, NULL, N, 64e-5f, s->ops.lanes); /* group norm, one group per head */' '(void)0;' \
  'integration/test_demo_record$'
mut stream-prefetch-past-end runtime/kernels/kernels.h \
  '    if (e > s->lim) e = s->lim;' '    (void)0;' \
  'unit/test_prefetch_stream$'
mut scratch-keep tests/integration/lib.sh \
  'then rm -rf -- "${sn_scratch[@]}"; fi' 'then :; fi' \
  'integration/test_scratch$'
mut blob-header runtime/formats/blob.c \
  'if (reserved != 0) return sn_err_set(err, SN_EFORMAT, "%s: reserved field at offset 16 is not 0", what);' \
  '(void)reserved;' 'unit/test_blob$'
mut blob-magic runtime/formats/blob.c \
  'if (memcmp(p, SN_BLOB_MAGIC, 4) != 0)' 'if (memcmp(p, SN_BLOB_MAGIC, 3) != 0)' 'unit/test_blob$'

# convert: metadata values
mut rms-norm-eps-x100 convert/archs/arch_llama.c \
  'TRY(kv_f32(w, A, "attention.layer_norm_rms_epsilon", c->rms_norm_eps, err));' \
  'TRY(kv_f32(w, A, "attention.layer_norm_rms_epsilon", c->rms_norm_eps * 100, err));' 'integration/test_convert_metadata$' \
  "SN_META_TYPES=f16"

# integrate: Modelfile quoting, JSON text, tie rule, proxy, paths, host
mut modelfile-trailing-space integrate/ollama_modelfile.c \
  'while (n && MF_WS(s[n - 1])) n--;' '(void)0;' 'integration/test_integrate_text$'
mut modelfile-nonprintable integrate/ollama_modelfile.c \
  "if (cp != '\\t' && cp != '\\n' && cp != '\\r' && !sn_utf8_go_printable(cp))" "if (cp < 0x20 && cp != '\\t' && cp != '\\n' && cp != '\\r')" \
  'integration/test_integrate_text$'
mut json-utf8-cut integrate/utf8_fix.c \
  'if (truncated_tail(s + i, n - i)) break; /* cut at the last boundary */' \
  'if (truncated_tail(s + i, n - i)) { memcpy(o, s + i, n - i); o += n - i; break; }' 'unit/test_utf8$|integration/test_integrate_text$'
mut tie-rule-x30 integrate/smoke.c \
  'int sn_smoke_tied(float gap, float max_abs) { return gap < SN_SMOKE_TIE_REL * max_abs; }' \
  'int sn_smoke_tied(float gap, float max_abs) { return gap < 30 * SN_SMOKE_TIE_REL * max_abs; }' 'unit/test_integrate_smoke$'
mut proxy-bypass integrate/http.c \
  'if (h->loopback) curl_easy_setopt(c, CURLOPT_NOPROXY, "*");' '(void)c;' 'integration/test_ollama_install$'
mut lmstudio-leading-dot integrate/lmstudio_place.c \
  "if (n[0] == '.' || n[l - 1] == '.')" "if (n[l - 1] == '.')" 'integration/test_lmstudio_place$'

# templates: the text of a family template (a newline lost after the assistant header)
mut template-text templates/data/llama3-instruct.gotmpl \
  '{{- end }}<|start_header_id|>assistant<|end_header_id|>' '{{- end }}<|start_header_id|>assistant<|end_header_id|> ' \
  'unit/test_templates$'

# formats and hosts: a bounds check dropped, a default changed
mut gguf-string-bounds runtime/formats/gguf.c \
  'if (*len > c->size - c->pos)' 'if (*len > c->size)' 'unit/test_gguf_malformed$'
mut ollama-default-port integrate/ollama_host.c \
  'const char *default_port = "11434";' 'const char *default_port = "11435";' 'unit/test_integrate_ollama$'

# K-quant kernel: the AVX2 Q5_K dot's min sums (its scalar twin and libggml's vec_dot are the references)
mut kquant-q5k-avx2-mins runtime/kernels/kquants_avx2.c \
  'const __m128i m = sn_kq_q4k_mins(k->mn, bsums);' \
  'const __m128i m = sn_kq_q4k_mins(k->mn, bsums + 1);' 'unit/test_quants$'
# batched float tiles (mm_float.h, the AVX2 and AVX-512 instances): a tile forgets the accumulators
# of the row's earlier K chunks
mut mm-chunk-carry runtime/kernels/mm_float.h \
  'c[t][r] = (mode & FIRST) ? MM_ZERO() : MM_LOAD(acc + (t * ROW_BLOCK + r) * MM_LANES);' \
  'c[t][r] = (mode & FIRST) ? MM_ZERO() : MM_ZERO();' 'unit/test_kernels$'
# the widening driver (mm_float.h, AVX2 F16/BF16 batches): a weight chunk widened from the row's
# start instead of the chunk's (every chunk after the first multiplies the wrong weights)
mut mm-widen-chunk runtime/kernels/mm_float.h \
  'widen(w + (uint64_t)r * w_row + (uint64_t)k0 * elt_bytes, ww + (r - rb) * KW, kn);' \
  'widen(w + (uint64_t)r * w_row, ww + (r - rb) * KW, kn);' 'unit/test_kernels$'
# the AVX2 single-token F16 matmul (mv): its tail summed in float instead of dot_f16_8's double
mut mv-f16-tail-double runtime/kernels/x86_avx2.c \
  'for (int64_t i = np; i < n; i++) r += (double)(sc_f16(w, i) * x[i]);' \
  'for (int64_t i = np; i < n; i++) r = (float)r + sc_f16(w, i) * x[i];' 'unit/test_kernels$'
# the Q4_K batch kernels that rearrange rows per call: AVX-512 reads the third min pair from the
# wrong scale word; AVX2 forgets the s2 partial sum a row group parks between chunks of 8 blocks
mut q4k-mm-min-pair runtime/kernels/kquants_mm_avx512.c \
  '_mm512_store_si512(o + MN_OFF + 2 * 64, byte_pair(m_hi));' \
  '_mm512_store_si512(o + MN_OFF + 2 * 64, byte_pair(m_lo));' 'unit/test_kernels$'
mut q4k-mm-avx2-park runtime/kernels/kquants_mm_avx2.c \
  's2[t] = first ? _mm256_setzero_ps() : _mm256_load_ps(park + 8 * t);' \
  's2[t] = _mm256_setzero_ps();' 'unit/test_kernels$'
# the AVX-512 INT4 pair kernel scales the second group of a pair with the first group's scales
# (the unpack the pairs and quads share)
mut int4-x16-second-scales runtime/kernels/int4.c \
  '_mm_loadu_si128((const __m128i *)(const void *)(b1 + 128)), 1));' \
  '_mm_loadu_si128((const __m128i *)(const void *)(b0 + 128)), 1));' 'unit/test_int4$'
# the AVX-512 single-token F16 matmul (mv): its tail summed in float instead of dot_f16's double;
# the softmax exp of flash attention left off the last 16 keys of every 64-key tile
mut mv-f16-avx512-tail-float runtime/kernels/x86_avx512.c \
  'for (int64_t i = np; i < n; i++) r += (double)(sc_f16(w, i) * x[i]);' \
  'for (int64_t i = np; i < n; i++) r = (float)r + sc_f16(w, i) * x[i];' 'unit/test_kernels$'
# the AVX-512 single-token F16 matmul row by row with a page prefetch (SN_MV_PAGES=1): the last
# row of every matrix left unwritten
mut mv-f16-pages-last-row runtime/kernels/x86_avx512.c \
  'y[r] = row_f16_at(n, wr, xf, 0);' 'y[r] = r + 1 < R ? row_f16_at(n, wr, xf, 0) : 0.0f;' 'unit/test_kernels$' \
  "SN_MV_PAGES=1"
# a prompt's per-token steps split across the pool (model_llama.c, sn_ops_rows): the residual
# adds leave the last float of the first row of every range of two or more tokens out
mut llama-rows-ffn-resid runtime/models/model_llama.c \
  'for (int64_t i = 0; i < p->n; i++) x[i] = y[i] + x[i];' \
  'for (int64_t i = 0; i < p->n - (t == t0 && t1 - t0 > 1); i++) x[i] = y[i] + x[i];' \
  'integration/test_run_parity$' "$FAST_PARITY"
mut fa-exp-short runtime/models/model_llama_attn.c \
  's->ops.k->exp_sub(FA_TILE, kq, kq, Mnew);' 's->ops.k->exp_sub(FA_TILE - 16, kq, kq, Mnew);' 'integration/test_run_parity$' "$FAST_PARITY"
# the AVX-512 INT4 pair kernel pairs groups P and P + npairs: the second group's rows stored as if
# it were group P + 1
mut int4-x16-far-rows runtime/kernels/int4.c \
  'const int64_t hi0 = 8 * (P + npairs), hin' 'const int64_t hi0 = 8 * (P + 1), hin' 'unit/test_int4$'
# the repacked Q4_0 decode on AMD pairs group g with g + n_groups / 2: the second group's outputs
# stored next to the first's; a block chunk after the first resumes the second group from the
# first group's parked sums
mut q4_0x8-far-out runtime/kernels/q4_0_x8.c \
  'const int64_t yhi = farp ? half * SN_Q4_0X8_ROWS : SN_Q4_0X8_ROWS;' \
  'const int64_t yhi = SN_Q4_0X8_ROWS;' 'unit/test_q4_0_x8_mv1$'
mut q4_0x8-far-resume runtime/kernels/q4_0_x8.c \
  '_mm256_castps_pd(_mm256_loadu_ps(y + yhi)), 1));' \
  '_mm256_castps_pd(_mm256_loadu_ps(y)), 1));' 'unit/test_q4_0_x8_mv1$'
# its far quads (8 groups and more): the third and fourth groups read from the first two; a long
# row's second block chunk starting the second pair's sums from zero
mut q4_0x8-quads-streams runtime/kernels/q4_0_x8.c \
  'dw1 = unpack_pair(p0 + 2 * gstride, p0 + 3 * gstride, m4, lo[1], hi[1]);' \
  'dw1 = unpack_pair(p0, p0 + gstride, m4, lo[1], hi[1]);' 'unit/test_q4_0_x8_mv1$'
mut q4_0x8-quads-resume runtime/kernels/q4_0_x8.c \
  'for (int h = 0; h < 2; h++) acc[h] = b0 ? load_halves(y + 2 * h * yhi, yhi) : _mm512_setzero_ps();' \
  'for (int h = 0; h < 2; h++) acc[h] = b0 && !h ? load_halves(y + 2 * h * yhi, yhi) : _mm512_setzero_ps();' 'unit/test_q4_0_x8_mv1$'
# the repacked Q4_K decode (q4_K_x8.c): row 2k + 1 multiplied by row 2k's scales; row 2k + 1's min
# term from row 2k's mins; rows 2 and 3 swap their d; the repack drops each row's 4th scale byte
# of every 4; a batch read as one token
mut q4Kx8-scale-pick runtime/kernels/q4_K_x8.c \
  '2 * (j), Z, 2 * (j), Z, 8 + 2 * (j), Z, 8 + 2 * (j), Z, 2 * (j) + 1' \
  '2 * (j), Z, 2 * (j), Z, 2 * (j), Z, 2 * (j), Z, 2 * (j) + 1' 'unit/test_q4_K_x8$'
mut q4Kx8-mins-row runtime/kernels/q4_K_x8.c \
  '_mm512_madd_epi16(_mm512_unpackhi_epi8(m16, z), bs4)' '_mm512_madd_epi16(_mm512_unpacklo_epi8(m16, z), bs4)' 'unit/test_q4_K_x8$'
mut q4Kx8-d-order runtime/kernels/q4_K_x8.c \
  '_mm512_setr_epi32(0, 1, 8, 9, 2, 3, 10, 11,' '_mm512_setr_epi32(0, 1, 8, 9, 3, 2, 10, 11,' 'unit/test_q4_K_x8$'
mut q4Kx8-repack-scales runtime/kernels/q4_K_x8.c \
  'memcpy(blk + SC_OFF + 32 * k + 4 * r, row[b].scales + 4 * k, 4);' \
  'memcpy(blk + SC_OFF + 32 * k + 4 * r, row[b].scales + 4 * k, 3);' 'unit/test_q4_K_x8$'
mut q4Kx8-batch-as-token runtime/models/weights.c \
  '        if (T == 1) {' '        if (T >= 1) {' 'unit/test_q4_K_x8$'
# glibc-exact expf on 16 lanes (expf_avx512.h): the library's slow path never taken (infinities,
# nan and huge |x| through the reduction; moving the threshold from 88 to 96 is no mutation: the
# fast path gives the library's values up to its overflow and underflow bounds); RWKV-7's
# time-mix sigmoid without its negation; the token-shift lerp fused into one rounding
mut expf-slow-path runtime/kernels/expf_avx512.h \
  '_mm512_cmpge_epi32_mask(top, _mm512_set1_epi32(0x42b))' '_mm512_cmpge_epi32_mask(top, _mm512_set1_epi32(0x7ff + 1))' \
  'unit/test_recurrent$'
mut rwkv7-mix-sigmoid runtime/kernels/recurrent_avx512.c \
  'sn_expf16(_mm512_xor_ps(x, _mm512_set1_ps(-0.0f)))' 'sn_expf16(x)' 'unit/test_recurrent$'
mut rwkv7-lerp-fused runtime/kernels/recurrent_avx512.c \
  '_mm512_add_ps(_mm512_mul_ps(d, LD(mu + q * ldmu + i)), hv)' '_mm512_fmadd_ps(d, LD(mu + q * ldmu + i), hv)' \
  'unit/test_recurrent$'
# its four VPDPBUSD chains per block: the first seeded with the wrong correction
mut int4-x16-seed runtime/kernels/int4.c \
  '_mm512_dpbusd_epi32(_mm512_set1_epi32(-8 * sum), u[0]' '_mm512_dpbusd_epi32(_mm512_set1_epi32(-7 * sum), u[0]' 'unit/test_int4$'
# the AVX-512 Q4_K decode dot takes 4 blocks at once: block 1 multiplied by block 0's scales; the
# min terms' second halves never added
mut q4k-quad-scales runtime/kernels/kquants_avx512.c \
  'q4k_block_lanes_s16(&w[1], a[1].qs, _mm512_shuffle_i32x4(s16, s16, 0x55));' \
  'q4k_block_lanes_s16(&w[1], a[1].qs, _mm512_shuffle_i32x4(s16, s16, 0x00));' 'unit/test_kernels$'
mut q4k-quad-mins runtime/kernels/kquants_avx512.c \
  'ms = _mm512_add_epi32(ms, _mm512_shuffle_epi32(ms, _MM_PERM_BADC));' \
  'ms = _mm512_add_epi32(ms, _mm512_shuffle_epi32(ms, _MM_PERM_DCBA));' 'unit/test_kernels$'
# the AVX-512 Q6_K decode reads four rows a quarter apart: the second row of each four read as the
# first
mut q6k-quarters-rows runtime/kernels/kquants_avx512.c \
  'const sn_block_q6_K *w = (const sn_block_q6_K *)vw[r] + b;' \
  'const sn_block_q6_K *w = (const sn_block_q6_K *)vw[r & 2] + b;' 'unit/test_kernels_f16_convert_mv10$'
# the blob's INT4 decode in far quads: groups Q + 2 nq and Q + 3 nq read from the first pair's
# streams; the groups after the last whole quad never multiplied
mut int4-quads-streams runtime/kernels/int4.c \
  'ws1 = x16_unpack(g[2] + o, g[3] + o, m4, u[1]);' \
  'ws1 = x16_unpack(g[0] + o, g[1] + o, m4, u[1]);' 'unit/test_int4_mv1$'
mut int4-quads-rest runtime/kernels/int4.c \
  '        ng -= 4 * nq;' \
  '        ng = 0;' 'unit/test_int4_mv1$'
# short F32 / F16 rows reduced 16 at a time: the first halving pairs lanes i and i + 12 (mod 16)
# instead of i and i + 8; two rows' results swapped
mut rows16-pairing runtime/kernels/x86_avx512.c \
  'u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)),' \
  'u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], _MM_SHUFFLE(2, 3, 2, 3)),' 'unit/test_kernels$'
mut rows16-order runtime/kernels/x86_avx512.c \
  '_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)' \
  '_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 15, 11)' 'unit/test_kernels$'
# the AVX-512 F16 single-token matmul adds eight short rows side by side: rows 1, 3, 5, 7 of each
# eight read as their left neighbours
mut f16-short-rows runtime/kernels/x86_avx512.c \
  'acc[j] += (double)(sc_f16((const char *)w + (uint64_t)(r + j) * w_row, i) * x[i]);' \
  'acc[j] += (double)(sc_f16((const char *)w + (uint64_t)(r + (j & 6)) * w_row, i) * x[i]);' 'unit/test_kernels$'
# the tiled attention's V side keeps y in registers across a tile's rows: the last register of
# each 128-float chunk never stored back; its scores for two key tiles at once: the second tile's
# keys read from the first tile's columns
mut mad-rows-store runtime/kernels/x86_avx512.c \
  '_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) _mm512_storeu_ps(y + i + 16 * j, a[j]);' \
  '_Pragma("GCC unroll 8") for (int j = 0; j < 7; j++) _mm512_storeu_ps(y + i + 16 * j, a[j]);' 'unit/test_kernels$'
mut kq-tile128-second runtime/kernels/x86_avx512.c \
  'c[j] = _mm512_fmadd_ps(_mm512_loadu_ps(k + 16 * j), p, c[j]);' \
  'c[j] = _mm512_fmadd_ps(_mm512_loadu_ps(k + 16 * (j & 3)), p, c[j]);' 'unit/test_kernels$'
# several query rows (two heads of a kv head x two tokens) through a key tile together: the
# kernels' other rows read from the first row's query / weights; every row's output written over
# the first's; a row's keys past the rows' common count taken from the tile's start
mut kq-tilexg-rows runtime/kernels/x86_avx512.c \
  'for (int g = 0; g < G; g++) p[g] = _mm512_set1_ps(q[g][d]);' \
  'for (int g = 0; g < G; g++) p[g] = _mm512_set1_ps(q[0][d]);' 'unit/test_kernels$'
mut mad-rowsg-weights runtime/kernels/x86_avx512.c \
  'for (int g = 0; g < G; g++) w[g] = _mm512_set1_ps(v[g][t]);' \
  'for (int g = 0; g < G; g++) w[g] = _mm512_set1_ps(v[0][t]);' 'unit/test_kernels$'
mut fa-rows-out runtime/models/model_llama_attn.c \
  'for (int64_t d = 0; d < DV; d++) out[g][d] = acc[g][d] * S_inv;' \
  'for (int64_t d = 0; d < DV; d++) out[0][d] = acc[g][d] * S_inv;' 'integration/test_run_parity$' "$FAST_PARITY"
mut fa-rows-rest runtime/models/model_llama_attn.c \
  'v32 + (ic + lo) * DV, DV, w[g] + lo, nt[g] - lo);' \
  'v32 + (ic + lo) * DV, DV, w[g], nt[g] - lo);' 'integration/test_run_parity$' "$FAST_PARITY"
# the AVX-512 single-token matmuls over four rows a quarter apart (AMD): the F16 rows' tail summed in
# float; the Q8_0 kernel's second row of a pair summed from the first row's half
mut mv-quarters-f16-tail-float runtime/kernels/x86_avx512.c \
  'for (int64_t i = np; i < n; i++) d += (double)(sc_f16(w[r], i) * x[i]);' \
  'for (int64_t i = np; i < n; i++) d = (float)d + sc_f16(w[r], i) * x[i];' 'unit/test_kernels_f16_convert_mv10$'
mut mv-quarters-q8-half runtime/kernels/x86_avx512.c \
  'y[2 * p + 1] = sn_avx2_hsum8(_mm512_extractf32x8_ps(acc[p], 1));' \
  'y[2 * p + 1] = sn_avx2_hsum8(_mm512_castps512_ps256(acc[p]));' 'unit/test_kernels_f16_convert_mv10$'
# decode attention walks several heads' keys together: every head reads the first head's kv slice
mut att-kv-head runtime/models/model_llama_attn.c \
  'off += kv_bytes;' 'off += 0;' 'integration/test_run_parity$' "$FAST_PARITY"
# the AVX-512 Q8_0 batch kernel pairs the step accumulators differently from ggml's hsum_float_8
mut q8-mm-hsum-pairing runtime/kernels/q8_0_mm_avx512.c \
  'const __m512 r0 = _mm512_add_ps(acc[t][4], acc[t][0]), r1 = _mm512_add_ps(acc[t][5], acc[t][1]);' \
  'const __m512 r0 = _mm512_add_ps(acc[t][4], acc[t][1]), r1 = _mm512_add_ps(acc[t][5], acc[t][0]);' 'unit/test_kernels$'
# IQ4 kernels: IQ4_XS batches left on vec_dot's lane order instead of ggml's IQ panel gemm (the
# parity test's 14- and 45-token batches then round differently), IQ4_NL's per-block fma unfused
# (libggml's repacked gemv is the reference), an IQ4_XS sub-block scale's high bits misread
mut iq4-xs-panel-threshold runtime/kernels/kernels.h \
  'if (wtype == SN_GGML_IQ4_XS) return T >= 8 ? T : 0;' \
  'if (wtype == SN_GGML_IQ4_XS) return T >= 64 ? T : 0;' 'integration/test_iq4_parity$'
mut iq4-nl-unfused runtime/kernels/iq4_scalar.c \
  's = fmaf((float)isum, sn_k_h2f(w[b].d) * sn_k_h2f(a[b].d), s);' \
  's += (float)isum * (sn_k_h2f(w[b].d) * sn_k_h2f(a[b].d));' 'unit/test_quants$'
mut iq4-xs-scale-high-bits runtime/quants/quants.h \
  '(((x->scales_h >> (2 * j)) & 3) << 4)) - 32;' '(((x->scales_h >> j) & 3) << 4)) - 32;' 'unit/test_quants$'
# the Q5_K dequantizer's min of groups 4-7 (libggml's dequantize_row_q5_K is the reference)
mut kquant-dequant-min runtime/quants/dequant.c \
  '*m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));' \
  '*m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 4] >> 6) << 4));' 'unit/test_quants$'

# RWKV-7 and Mamba-2 runtimes: the decay's constant, the dt softplus replaced by a ReLU
mut rwkv7-decay runtime/kernels/recurrent.c \
  'w[i] = expf(sigmoid(w[i] + w0[i]) * -0.606531f);' 'w[i] = expf(sigmoid(w[i] + w0[i]) * -0.6f);' \
  'integration/test_rwkv7$'
also runtime/kernels/recurrent_avx512.c '_mm512_set1_ps(-0.606531f)' '_mm512_set1_ps(-0.6f)'
mut mamba2-dt-softplus runtime/models/model_mamba2.c \
  'static float softplusf_(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }' \
  'static float softplusf_(float x) { return x > 20.0f ? x : fmaxf(x, 0.0f); }' 'integration/test_mamba2$'

# the pickle reader: an allow-list entry widened to every name it begins (torch.FloatStorage.*)
mut pickle-allowlist-prefix convert/readers/pickle.c \
  'if (strcmp(k_globals[i].name, full) == 0) {' \
  'if (strncmp(k_globals[i].name, full, strlen(k_globals[i].name)) == 0) {' 'unit/test_torch_ckpt$'

# the Jinja interpreter: loop.last one element early (jinja2 renders the real corpus as reference)
mut jinja-loop-last templates/jinja_eval.c \
  'jd_set(c, lp, jv_cstr(c, "last"), jv_bool(i + 1 == n));' \
  'jd_set(c, lp, jv_cstr(c, "last"), jv_bool(i + 2 == n));' 'integration/test_jinja_oracle$'

# the same wrong newline in a family's Go template and in its published Jinja reference (the corpus
# file must still equal llama.cpp's models/templates copy)
mut template-pair-newline templates/data/phi-3.gotmpl \
  $'{{ .Content }}<|end|>\n{{ else if eq .Role "assistant" }}' \
  $'{{ .Content }}<|end|>\n\n{{ else if eq .Role "assistant" }}' 'integration/test_templates_render$'
also tests/fixtures/templates/llamacpp-microsoft-Phi-3.5-mini-instruct.jinja \
  $'\'<|end|>\n\'}}{% elif message[\'role\'] == \'assistant\' %}' \
  $'\'<|end|>\n\n\'}}{% elif message[\'role\'] == \'assistant\' %}'

# the smoke gate's server-token comparison: a server token that only begins with ours accepted; the
# first token id never compared
mut smoke-token-prefix integrate/smoke.c 'return j == bl;' 'return j <= bl;' 'unit/test_integrate_smoke$'
mut smoke-ids-skip-first integrate/smoke.c \
  'for (size_t i = 0; i < n && div_at < 0; i++)' 'for (size_t i = 1; i < n && div_at < 0; i++)' \
  'unit/test_integrate_smoke$'

# run parity's tie rule judged on sunny's logits only (llama.cpp's gap and the candidate pair ignored)
mut parity-tie-ours-only tests/tools/parity_judge.py \
  'return ours_gap < ours_thr and their_gap < their_thr and same_pair, v' 'return ours_gap < ours_thr, v' \
  'integration/test_parity_judge$'

# ---- machinery -------------------------------------------------------------------------------------
die() { echo "mutate: $*" >&2; exit 2; }

sync_tree() { # the tracked files of the working tree, as they are now, into $SRC
  # Only files whose bytes differ are copied, and they get a new mtime: a run that died mid-mutation
  # leaves a mutated copy newer than its object file, and restoring it with the original's older
  # mtime (cp -p) once left the incremental build running the mutant.
  mkdir -p "$SRC"
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | grep -zv '^tests/node_modules') |
    /usr/bin/python3 -c '
import os, shutil, sys
root, dst = sys.argv[1], sys.argv[2]
for rel in sys.stdin.buffer.read().decode().split("\0"):
    if not rel or not os.path.isfile(os.path.join(root, rel)): continue
    a, b = os.path.join(root, rel), os.path.join(dst, rel)
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            if fa.read() == fb.read(): continue
    except FileNotFoundError: pass
    os.makedirs(os.path.dirname(b), exist_ok=True)
    shutil.copy(a, b)' "$ROOT" "$SRC"
  ln -sfn "$(readlink -f "$ROOT/tests/node_modules")" "$SRC/tests/node_modules"
}

# apply FILE FROM [TO]: exact, single occurrence, or stop loudly; without TO only check
apply() {
  /usr/bin/python3 - "$SRC/$1" "$2" "${3-}" "$#" <<'EOF'
import sys
p, a, b, argc = sys.argv[1:5]
s = open(p, encoding="utf-8", newline="").read()
n = s.count(a)
if n != 1:
    sys.exit(f"search text found {n} times in {p} (expected exactly once): {a!r}")
if argc == "3":
    open(p, "w", encoding="utf-8", newline="").write(s.replace(a, b))
EOF
}
# edits_of I -> the indexes k of the extra edits of mutation I
edits_of() { local k; for k in "${!AL_OF[@]}"; do [[ ${AL_OF[$k]} == "$1" ]] && echo "$k"; done; return 0; }

build() { cmake --build "$B" -j "$JOBS" >"$S/build.log" 2>&1; }

# SN_KEEP_WORK=1: a passing baseline keeps its work dirs (tests/integration/lib.sh, scratch), so the
# mutant's run reuses the fixtures instead of making them again
run_tests() { # REGEX ENV -> 0 if every test passed
  local rx=$1 env=$2
  (cd "$B" && env SN_KEEP_WORK=1 $env ctest -R "$rx" --timeout 900 >"$S/ctest.log" 2>&1)
}

sync_tree
# every search text must still be there before anything is built
for i in "${!IDS[@]}"; do
  [[ ${IDS[$i]} =~ $ONLY ]] || continue
  [[ -f $SRC/${FILES[$i]} ]] || die "${IDS[$i]}: ${FILES[$i]} does not exist"
  apply "${FILES[$i]}" "${FROMS[$i]}" || die "${IDS[$i]}: fix its search text"
  for k in $(edits_of "$i"); do
    [[ -f $SRC/${AL_FILE[$k]} ]] || die "${IDS[$i]}: ${AL_FILE[$k]} does not exist"
    apply "${AL_FILE[$k]}" "${AL_FROM[$k]}" || die "${IDS[$i]}: fix its search text"
  done
done
if [[ -n ${SN_MUTATE_CHECK:-} ]]; then echo "mutate: every search text of ${#IDS[@]} mutations is present once"; exit 0; fi
cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DSN_WERROR=ON >"$S/configure.log" 2>&1 || die "configure failed ($S/configure.log)"
build || die "the unmutated tree does not build ($S/build.log)"

# baseline: each targeted test (with its env) must pass on the unmutated tree; checked on first use,
# just before the first mutation that relies on it (so results come in early)
declare -A seen
baseline() {
  local k="${TESTS[$1]}|${ENVS[$1]}" t0
  [[ -n ${seen[$k]:-} ]] && return 0
  seen[$k]=1
  build || die "the unmutated tree does not build ($S/build.log)"
  t0=$(date +%s)
  run_tests "${TESTS[$1]}" "${ENVS[$1]}" || { tail -30 "$S/ctest.log"; die "baseline: '${TESTS[$1]}' fails without any mutation"; }
  echo "baseline ok: ${TESTS[$1]} ${ENVS[$1]:+($(wc -w <<<"${ENVS[$1]}") knobs) }$(( $(date +%s) - t0 )) s"
}

caught=0 survived=0 total=0 survivors=()
for i in "${!IDS[@]}"; do
  id=${IDS[$i]}
  [[ $id =~ $ONLY ]] || continue
  baseline "$i"
  total=$((total + 1))
  f=${FILES[$i]}
  ks=$(edits_of "$i")
  touched=("$f")
  for k in $ks; do touched+=("${AL_FILE[$k]}"); done
  rm -rf "$S/pristine" && mkdir -p "$S/pristine"
  for t in "${touched[@]}"; do (cd "$SRC" && cp -p --parents "$t" "$S/pristine/"); done
  restore() { local t; for t in "${touched[@]}"; do cp -p "$S/pristine/$t" "$SRC/$t"; touch "$SRC/$t"; done; }
  apply "$f" "${FROMS[$i]}" "${TOS[$i]}" || { restore; die "$id: cannot apply"; }
  for k in $ks; do apply "${AL_FILE[$k]}" "${AL_FROM[$k]}" "${AL_TO[$k]}" || { restore; die "$id: cannot apply"; }; done
  t0=$(date +%s)
  if ! build; then
    restore
    tail -20 "$S/build.log"; die "$id: the mutated tree does not build (a mutation must compile)"
  fi
  if run_tests "${TESTS[$i]}" "${ENVS[$i]}"; then
    survived=$((survived + 1)); survivors+=("$id")
    echo "SURVIVED  $id ($f) - ${TESTS[$i]} still passes [$(( $(date +%s) - t0 )) s]"
  else
    caught=$((caught + 1))
    echo "caught    $id ($f) by $(grep -oE '[0-9]+ - [^ ]+ \((Failed|Timeout)' "$S/ctest.log" | sed 's/^[0-9]* - //' | tr '\n' ' ')[$(( $(date +%s) - t0 )) s]"
  fi
  restore
  ((survived && !KEEP)) && break
done
build >/dev/null 2>&1 # leave the scratch build unmutated
echo "mutation score: $caught/$total caught${survivors:+; survived: ${survivors[*]}}"
[[ $survived -eq 0 ]]
