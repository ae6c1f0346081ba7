#!/usr/bin/env bash
# test_iq4_parity.sh - sunny-run on llama-quantize's IQ4_NL and IQ4_XS files (the two IQ types that
# need no imatrix) gives llama.cpp's greedy tokens.
#
# test_quant_parity.sh's machinery (libllama's own llama_model_quantize, node-llama-cpp as the oracle,
# parity_judge.py: exact tokens or a proven tie; final-step logits within 1e-5 also on AVX2, as
# SN_PARITY_STRICT=1 asks) on two
# fixtures: llama3 tiny (hidden 128, ffn 384: no row is a multiple of 256, so IQ4_XS falls back to
# IQ4_NL for every matrix and its file equals the IQ4_NL one but for general.file_type - run once)
# and llama3 small (hidden 256, ffn 768: IQ4_XS as written). The recipes also write Q5_K / Q5_1
# (attn_v with GQA >= 4) and Q6_K / Q8_0 heads. The files must contain both IQ types, or the test
# fails (a recipe change that stops writing them would otherwise pass on other types).
source "$(dirname "$0")/lib.sh"
log=$SN_WORK/iq4_parity.log
mkdir -p "$SN_WORK"
SN_PARITY_STRICT=1 SN_QPARITY_FTYPES="iq4_nl iq4_xs" SN_QPARITY_FIXTURES="llama3/tiny/bf16 llama3/small/f16" SN_QPARITY_WORK=iq4_parity \
  bash "$(dirname "$0")/test_quant_parity.sh" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
((rc == 0)) || bad "IQ4 parity run (exit $rc)"
for t in IQ4_NL IQ4_XS; do
  grep -q "tensor types in the llama-quantize files:.* $t x" "$log" && ok "the files contain $t tensors" || bad "no $t tensor in the files"
done
finish
