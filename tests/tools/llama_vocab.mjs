// llama_vocab.mjs - llama.cpp's tokenizer from a GGUF, loaded vocab-only, for the tokenizer oracles.
//
// node-llama-cpp's loadModel({vocabOnly: true}) first parses the whole GGUF header in JavaScript
// (every token and merge string) and sizes GPU layers from it, then has libllama load the vocab:
// ~1.4-1.9 s of CPU per 128k-vocab file, of which libllama's own load is ~0.6 s. The tokenizer
// oracles use none of that JavaScript view, so loadVocab() asks the addon's model class for the
// vocab-only load directly (the call loadModel ends in) and tokenizes through it exactly as
// LlamaModel.tokenize / detokenize do on their default path (llama_tokenize / llama_detokenize).
// If a node-llama-cpp version no longer has that class, it falls back to loadModel.
//
//   const v = await loadVocab(llama, "x.gguf");
//   v.tokenize(text, parseSpecial) -> number[]; v.detokenize(ids, renderSpecial) -> string;
//   v._model: the addon model (token attributes, EOG, special ids); await v.dispose()
export async function loadVocab(llama, path) {
  const Addon = llama._bindings?.AddonModel;
  if (typeof Addon !== "function") return await llama.loadModel({ modelPath: path, vocabOnly: true });
  const am = new Addon(path, { addonExports: llama._bindings, vocabOnly: true, useMmap: true, checkTensors: false });
  if (!(await am.init())) throw new Error(`llama.cpp cannot load the vocabulary of ${path}`);
  return {
    _model: am,
    tokenize: (text, special = false) => (text === "" ? [] : Array.from(am.tokenize(text, Boolean(special)))),
    detokenize: (ids, special = false) => (ids.length === 0 ? "" : am.detokenize(Uint32Array.from(ids), Boolean(special))),
    dispose: async () => { await am.dispose(); },
  };
}
