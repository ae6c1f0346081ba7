// worker.mjs - llama.cpp (via node-llama-cpp) generation for the fake Ollama and LM Studio servers.
//
// Reads one JSON request per line on stdin, answers one JSON line on stdout:
//   {"id":1,"model":"/path.gguf","prompt":"text","n_predict":32,"temperature":0,"top_k":1,"top_p":1,
//    "min_p":0,"seed":42,"num_ctx":512,"repeat_penalty":1.0,"repeat_last_n":64[,"add_bos":false]}
//   -> {"id":1,"prompt_ids":[...],"ids":[...],"pieces":["..",..],"text":"...","stop_reason":"eog"|"length"}
// The prompt is tokenized like llama-server does (special tokens parsed, BOS added when the GGUF says
// so). Generation stops at an end-of-generation token (not included in ids/text) or after n_predict.
// Sampling is node-llama-cpp's (llama.cpp's sampler chain): temperature 0 = greedy. A greedy request
// (temperature 0) is run through llama.cpp's full next-token distribution instead, so each step also
// reports its log-probability and the top_logprobs (N, default 0) most likely tokens the way
// llama-server's n_probs does (log-softmax of the raw logits, not of the sampled distribution):
//   -> ...,"logprobs":[{"id":5,"token":"..","logprob":-0.1,"top":[{"id":5,"token":"..","logprob":-0.1},..]},..]
// Other ops ({"op":...}):
//   "tokenize"     {"model","text"} -> {"ids":[...]}  (llama-server /tokenize: no BOS, special tokens parsed)
//   "render_jinja" {"template","messages","bos_token","eos_token"} -> {"text"}  (add_generation_prompt)
//   "load"         {"model"} -> {"ok":true} or an error: llama.cpp must be able to read the file
// llama.cpp runs on 1 thread: with 2, ~60 % of its CPU went to ggml_barrier whenever another ctest job held
// the second core; the short smoke prompts give byte-identical answers at 1 and 2 threads.
import { getLlama } from "node-llama-cpp";
import { Template } from "@huggingface/jinja";
import { createInterface } from "node:readline";
import { rawPiece } from "../tools/llama_piece.mjs";

// llama.cpp's error lines during a load, for its failure: Ollama's runner reports them the same way
// (llm/server.go: the runner's stderr error, e.g. "unknown model architecture: 'x'")
let loadErrors = [];
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error", maxThreads: 1,
  logger: (level, message) => { if (String(level) === "error") loadErrors.push(String(message).trim()); } });
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
    m.ctx = await m.model.createContext({ contextSize: numCtx, threads: 1, sequences: 1 });
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
  if ((req.temperature ?? 0) === 0 && (req.repeat_penalty ?? 1.0) === 1.0)
    return await generateGreedyWithLogprobs(req, m, seq, prompt, nPredict, numCtx);
  const opts = { temperature: req.temperature ?? 0, yieldEogToken: true }; // so an EOG ends as "eog", not "length"
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
  const pieces = piecesOf(model, ids);
  return { prompt_ids: prompt, ids, pieces, text: pieces.join(""), stop_reason: stop };
}

// One token's text for the logprobs: its bytes, a partial UTF-8 character as U+FFFD (JSON encoders
// replace bytes that are not UTF-8).
function tokenText(model, id) {
  const b = rawPiece(model, id, true);
  return b ? new TextDecoder().decode(b) : model.detokenize([id], true);
}

// Length of the longest prefix of b that does not end inside an incomplete UTF-8 character.
function completeUtf8(b) {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const c = b[b.length - back];
    if ((c & 0xc0) === 0x80) continue; // continuation byte: look further back for the lead byte
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > back ? b.length - back : b.length;
  }
  return b.length;
}

// Greedy decoding from the full distribution: argmax (lowest id on a tie, like llama.cpp's greedy
// sampler) is fed back as the next token; its log-probability and the top-N alternatives are recorded.
async function generateGreedyWithLogprobs(req, m, seq, prompt, nPredict, numCtx) {
  const model = m.model;
  const topN = Math.max(0, Math.min(20, req.top_logprobs ?? 0));
  const ids = [], logprobs = [];
  let stop = "length";
  try {
    // The generator samples a token of its own (temperature 1) before each yield; the one fed back is
    // ours. Without yieldEogToken it ends by itself whenever that random sample is an end-of-generation
    // token, which cut a greedy answer short at a random step (seen in CI: 20 of 32 tokens, "length").
    const gen = seq.evaluateWithMetadata(prompt, { probabilities: true },
      { temperature: 1, topK: 0, topP: 1, minP: 0, yieldEogToken: true });
    let r = await gen.next();
    while (!r.done) {
      const probs = r.value.probabilities; // Map token -> probability (softmax of the raw logits)
      const better = (t, p, u, q) => p > q || (p === q && t < u);
      const top = []; // the topN best [token, p], best first (a linear scan: vocabularies are large)
      let best = -1, bp = -1;
      for (const [t, p] of probs) {
        if (best < 0 || better(t, p, best, bp)) { best = t; bp = p; }
        if (top.length < topN || (topN > 0 && better(t, p, ...top[top.length - 1]))) {
          let i = top.length < topN ? top.length : top.length - 1;
          top[i] = [t, p];
          while (i > 0 && better(top[i][0], top[i][1], ...top[i - 1])) { [top[i], top[i - 1]] = [top[i - 1], top[i]]; i--; }
        }
      }
      if (model.isEogToken(best)) { stop = "eog"; await gen.return(); break; }
      const topOut = top.map(([t, p]) => ({ id: t, token: tokenText(model, t), logprob: Math.log(p) }));
      logprobs.push({ id: best, token: tokenText(model, best), logprob: Math.log(bp), top: topOut });
      ids.push(best);
      if (ids.length >= nPredict || prompt.length + ids.length >= numCtx) { await gen.return(); break; }
      r = await gen.next(best);
      if (r.done) throw new Error(`llama.cpp's evaluator ended after ${ids.length} tokens without being asked to`);
    }
  } finally {
    seq.dispose();
  }
  const pieces = piecesOf(model, ids);
  return { prompt_ids: prompt, ids, pieces, text: pieces.join(""), stop_reason: stop, logprobs };
}

// The text chunk each generated token adds, as llama-server streams it: the tokens' bytes
// (token_to_piece, special tokens as nothing) with an incomplete trailing UTF-8 character held back
// until it completes; what never completes comes out as U+FFFD at the end.
function piecesOf(model, ids) {
  const pieces = [];
  if (ids.length && rawPiece(model, ids[0], false) === null) { // RWKV etc.: detokenize has no clean-up
    let prev = "";
    for (let i = 0; i < ids.length; i++) {
      const s = model.detokenize(ids.slice(0, i + 1), false);
      pieces.push(s.startsWith(prev) ? s.slice(prev.length) : s);
      prev = s;
    }
    return pieces;
  }
  let pending = new Uint8Array(0);
  for (let i = 0; i < ids.length; i++) {
    const b = rawPiece(model, ids[i], false), all = new Uint8Array(pending.length + b.length);
    all.set(pending);
    all.set(b, pending.length);
    const k = i + 1 === ids.length ? all.length : completeUtf8(all);
    pieces.push(new TextDecoder().decode(all.subarray(0, k)));
    pending = all.slice(k);
  }
  return pieces;
}

async function handle(req) {
  switch (req.op ?? "generate") {
  case "generate": return await generate(req);
  case "tokenize": {
    const m = await getModel(req.model, req.num_ctx > 0 ? req.num_ctx : 2048);
    return { ids: Array.from(m.model.tokenize(req.text, true)) };
  }
  case "render_jinja": {
    const t = new Template(req.template);
    return { text: t.render({ messages: req.messages, add_generation_prompt: true,
      bos_token: req.bos_token ?? "", eos_token: req.eos_token ?? "" }) };
  }
  case "load": {
    loadErrors = [];
    try {
      await llama.loadModel({ modelPath: req.model }).then((mm) => mm.dispose());
    } catch (e) {
      throw new Error([e.message, ...loadErrors].join(": "));
    }
    return { ok: true };
  }
  default: throw new Error(`unknown op ${req.op}`);
  }
}

const rl = createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on("line", (line) => {
  chain = chain.then(async () => {
    let req;
    try {
      req = JSON.parse(line);
      const res = await handle(req);
      process.stdout.write(JSON.stringify({ id: req.id, ...res }) + "\n");
    } catch (e) {
      process.stdout.write(JSON.stringify({ id: req?.id ?? 0, error: String(e?.message ?? e) }) + "\n");
    }
  });
});
rl.on("close", () => { chain.then(() => process.exit(0)); });
