// worker.mjs - llama.cpp (via node-llama-cpp) generation for the fake Ollama and LM Studio servers.
//
// Reads one JSON request per line on stdin, answers one JSON line on stdout:
//   {"id":1,"model":"/path.gguf","prompt":"text","n_predict":32,"temperature":0,"top_k":1,"top_p":1,
//    "min_p":0,"seed":42,"num_ctx":512,"repeat_penalty":1.0,"repeat_last_n":64[,"add_bos":false]}
//   -> {"id":1,"prompt_ids":[...],"ids":[...],"pieces":["..",..],"text":"...","stop_reason":"eog"|"length"}
// The prompt is tokenized like llama-server does (special tokens parsed, BOS added when the GGUF says
// so). Generation stops at an end-of-generation token (not included in ids/text) or after n_predict.
// Sampling is node-llama-cpp's (llama.cpp's sampler chain): temperature 0 = greedy.
import { getLlama } from "node-llama-cpp";
import { createInterface } from "node:readline";

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error", maxThreads: 2 });
const models = new Map(); // path -> {model, ctx, ctxSize}

async function getModel(path, numCtx) {
  let m = models.get(path);
  if (!m) {
    const model = await llama.loadModel({ modelPath: path });
    m = { model, ctx: null, ctxSize: 0 };
    models.set(path, m);
  }
  if (!m.ctx || m.ctxSize !== numCtx) {
    if (m.ctx) await m.ctx.dispose();
    m.ctx = await m.model.createContext({ contextSize: numCtx, threads: 2, sequences: 1 });
    m.ctxSize = numCtx;
  }
  return m;
}

async function generate(req) {
  const numCtx = req.num_ctx > 0 ? req.num_ctx : 2048;
  const m = await getModel(req.model, numCtx);
  const model = m.model;
  let prompt = Array.from(model.tokenize(req.prompt, true));
  const addBos = model.fileInfo.metadata?.tokenizer?.ggml?.add_bos_token;
  if (req.add_bos !== false && model.tokens.bos != null && addBos !== false && (addBos === true || model.tokens.shouldPrependBosToken))
    prompt = [model.tokens.bos, ...prompt];
  if (prompt.length >= numCtx) throw new Error(`prompt (${prompt.length} tokens) does not fit num_ctx ${numCtx}`);
  const nPredict = req.n_predict > 0 ? req.n_predict : 128;
  const seq = m.ctx.getSequence();
  const ids = [];
  let stop = "length";
  const opts = { temperature: req.temperature ?? 0 };
  if (req.top_k != null) opts.topK = req.top_k;
  if (req.top_p != null) opts.topP = req.top_p;
  if (req.min_p != null) opts.minP = req.min_p;
  if (req.seed != null && req.seed >= 0) opts.seed = req.seed;
  const rp = req.repeat_penalty ?? 1.0;
  if (rp !== 1.0) {
    const lastN = req.repeat_last_n ?? 64;
    opts.repeatPenalty = { penalty: rp, punishTokens: () => [...prompt, ...ids].slice(-lastN) };
  }
  try {
    for await (const t of seq.evaluate(prompt, opts)) {
      if (model.isEogToken(t)) { stop = "eog"; break; }
      ids.push(t);
      if (ids.length >= nPredict || prompt.length + ids.length >= numCtx) break;
    }
  } finally {
    seq.dispose();
  }
  const pieces = [];
  let prev = "";
  for (let i = 0; i < ids.length; i++) {
    const s = model.detokenize(ids.slice(0, i + 1), false);
    pieces.push(s.startsWith(prev) ? s.slice(prev.length) : s);
    prev = s;
  }
  return { prompt_ids: prompt, ids, pieces, text: model.detokenize(ids, false), stop_reason: stop };
}

const rl = createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on("line", (line) => {
  chain = chain.then(async () => {
    let req;
    try {
      req = JSON.parse(line);
      const res = await generate(req);
      process.stdout.write(JSON.stringify({ id: req.id, ...res }) + "\n");
    } catch (e) {
      process.stdout.write(JSON.stringify({ id: req?.id ?? 0, error: String(e?.message ?? e) }) + "\n");
    }
  });
});
rl.on("close", () => { chain.then(() => process.exit(0)); });
