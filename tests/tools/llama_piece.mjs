// llama_piece.mjs - a token's bytes as llama.cpp's token_to_piece gives them, for node-llama-cpp,
// which only exposes llama_detokenize (shared by tests/fake-ollama/worker.mjs and llama_oracle.mjs).
// A token's bytes as llama.cpp's token_to_piece gives them (what llama-server streams and reports in
// its probabilities), not llama_detokenize: detokenize also cleans up spaces before punctuation on
// BPE vocabularies (" ." -> ".") and strips an SPM first token's leading space, which a server never
// does to a generated token. Exact for BPE and SPM from the vocabulary text and attributes; null for
// other vocabularies (RWKV: no clean-up there, detokenize of the ids is used).
const ATTR_UNKNOWN = 1, ATTR_NORMAL = 4, ATTR_CONTROL = 8, ATTR_USER_DEFINED = 16, ATTR_BYTE = 32;
const VOCAB_SPM = 1, VOCAB_BPE = 2;
const utf8 = new TextEncoder();
let byteOfChar = null; // GPT-2 byte-level BPE: the inverse of bytes_to_unicode
function gpt2Bytes() {
  if (byteOfChar) return byteOfChar;
  byteOfChar = new Map();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const direct = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    byteOfChar.set(direct ? b : 256 + n++, b);
  }
  return byteOfChar;
}
export function rawPiece(model, id, special) {
  const m = model._model, vt = m.getVocabularyType();
  if (vt !== VOCAB_BPE && vt !== VOCAB_SPM) return null;
  const attr = m.getTokenAttributes(id), text = m.getTokenString(id) ?? "";
  if (attr & (ATTR_UNKNOWN | ATTR_CONTROL)) return special ? utf8.encode(text) : new Uint8Array(0);
  if (attr & ATTR_USER_DEFINED) return utf8.encode(text);
  if (attr & ATTR_BYTE) return Uint8Array.of(parseInt(text.slice(3, 5), 16)); // "<0xNN>"
  if (!(attr & ATTR_NORMAL)) return new Uint8Array(0);
  if (vt === VOCAB_SPM || text.includes("\u2581")) return utf8.encode(text.replaceAll("\u2581", " "));
  const map = gpt2Bytes(), out = [];
  for (const ch of text) {
    const b = map.get(ch.codePointAt(0));
    if (b === undefined) return utf8.encode(model.detokenize([id], special)); // not byte-level after all
    out.push(b);
  }
  return Uint8Array.from(out);
}

