// llama_eog.mjs - does llama.cpp treat token ID as end of generation in each GGUF's vocabulary?
//   node tests/tools/llama_eog.mjs ID A.gguf [B.gguf ...]  ->  "true false ..." (one per file)
// llama_vocab_is_eog after llama.cpp's own vocabulary load (its eos/eot/eom ids and built-in names).
import { getLlama } from "node-llama-cpp";
import { loadVocab } from "./llama_vocab.mjs";

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const out = [];
for (const p of process.argv.slice(3)) {
  const v = await loadVocab(llama, p);
  out.push(v._model.isEogToken(Number(process.argv[2])));
  await v.dispose();
}
console.log(out.join(" "));
