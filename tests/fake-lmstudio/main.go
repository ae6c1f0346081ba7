// fake-lmstudio - an LM Studio server stand-in for sunny's tests (LM Studio 0.3/0.4 server and lms behaviour).
//
// It indexes a models dir the way LM Studio does (only files exactly at <publisher>/<repo>/<file>.gguf;
// key = repo folder lowercased without "-GGUF", "@<quant>" added when a folder holds several quants;
// clip/mmproj files are not LLMs), answers /lmstudio-greeting, /v1/models, /api/v0/models,
// /api/v0/models/{model}, /api/v1/models/load, /v1/completions and /api/v0/completions (v0 adds
// model_info.arch; "stream": true answers server-sent events as LM Studio does),
// /v1/chat/completions (the GGUF's Jinja rendered by @huggingface/jinja, LM Studio's JS engine), and
// generates with llama.cpp through tests/fake-ollama/worker.mjs. Sampling defaults are LM Studio's
// (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, repeat_penalty 1.1) unless the request says
// otherwise, so a client that forgets a field diverges. Failure injection: -serve-gguf PATH (answer
// with another GGUF), -no-v0 (pre-0.3.6: no /api/v0), -no-load (pre-0.4: no /api/v1/models/load),
// -runtime-error MSG (every completion fails with MSG). -log FILE records "METHOD PATH".
//
// Behaviours of the real server mirrored here (LM Studio 0.3.x/0.4.x):
//   - a route it does not serve (or a method it does not accept there) answers HTTP 200 with
//     {"error":"Unexpected endpoint or method. (METHOD PATH)"}, not a 404 - so a client must read the
//     body to know the endpoint is missing (older servers without /api/v0 or /api/v1/models/load);
//   - completions choices carry "logprobs": null: LM Studio accepts logprobs/top_logprobs on its
//     OpenAI-compatible endpoints but does not return them (lmstudio-ai/lms#60, still open);
//   - -info-file PATH writes the running server's {"port"} like the app's .internal/http-server.json,
//     which lms reads before the configured port (lms src/localAPIServer.ts readLocalAPIServerPort);
//   - -api-token T: "Require Authentication" (0.4.0+): every endpoint but /lmstudio-greeting wants
//     "Authorization: Bearer T", else 401.
package main

import (
	"sunny/ggufinfo"

	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	flagModels   = flag.String("models", "", "models dir")
	flagPortFile = flag.String("port-file", "", "write the port here")
	flagWorker   = flag.String("worker", "", "worker.mjs")
	flagNode     = flag.String("node", "node", "node binary")
	flagServe    = flag.String("serve-gguf", "", "generate with this GGUF instead")
	flagNoV0     = flag.Bool("no-v0", false, "no /api/v0 endpoints")
	flagNoLoad   = flag.Bool("no-load", false, "no /api/v1/models/load")
	flagRtErr    = flag.String("runtime-error", "", "fail every completion with this message")
	flagLog      = flag.String("log", "", "request log")
	flagInfo     = flag.String("info-file", "", "write {\"port\":N} here (the app's .internal/http-server.json)")
	flagToken    = flag.String("api-token", "", "require Authorization: Bearer TOKEN")
	flagDelay    = flag.Duration("stream-delay", 0, "sleep between the events of a streamed completion")
	flagStall    = flag.Duration("stream-stall", 0, "sleep this long after the first event of a streamed completion")
)

type entry struct {
	Key, Publisher, Path, Abs, Arch, Quant string
	MaxCtx                                 int64
}

var (
	logf  *os.File
	logMu sync.Mutex
)

func logLine(format string, a ...interface{}) {
	if logf != nil {
		logMu.Lock()
		fmt.Fprintf(logf, format, a...)
		logMu.Unlock()
	}
}

type server struct {
	mu     sync.Mutex
	loaded map[string]*entry // identifier -> entry
	wk     *worker
}

func index() []*entry {
	var out []*entry
	pubs, _ := os.ReadDir(*flagModels)
	for _, p := range pubs {
		if !p.IsDir() {
			continue // files at the top level are ignored, as LM Studio does
		}
		repos, _ := os.ReadDir(filepath.Join(*flagModels, p.Name()))
		for _, r := range repos {
			if !r.IsDir() {
				continue // one level down: ignored too
			}
			dir := filepath.Join(*flagModels, p.Name(), r.Name())
			files, _ := os.ReadDir(dir)
			var group []*entry
			for _, f := range files {
				if !strings.HasSuffix(f.Name(), ".gguf") || strings.HasPrefix(f.Name(), "mmproj-") {
					continue
				}
				if strings.Contains(f.Name(), "-of-") && !strings.Contains(f.Name(), "-00001-of-") {
					continue // later shards belong to the first part
				}
				abs := filepath.Join(dir, f.Name())
				info, err := ggufinfo.Read(abs)
				if err != nil || info.Arch == "clip" {
					continue
				}
				ctx, _ := info.KV[info.Arch+".context_length"].(int64)
				group = append(group, &entry{Publisher: p.Name(), Path: p.Name() + "/" + r.Name() + "/" + f.Name(),
					Abs: abs, Arch: info.Arch, Quant: info.Quant(), MaxCtx: ctx})
			}
			base := strings.ToLower(r.Name())
			base = strings.TrimSuffix(base, "-gguf")
			for _, e := range group {
				e.Key = base
				if len(group) > 1 {
					e.Key = base + "@" + strings.ToLower(e.Quant)
				}
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func lmErr(w http.ResponseWriter, code int, msg, ecode string) {
	writeJSON(w, code, map[string]interface{}{"error": map[string]interface{}{"message": msg,
		"type": "invalid_request_error", "param": "model", "code": ecode}})
}

func (s *server) resolve(id string) *entry {
	s.mu.Lock()
	if e := s.loaded[id]; e != nil {
		s.mu.Unlock()
		return e
	}
	s.mu.Unlock()
	for _, e := range index() {
		if e.Key == id || e.Path == id {
			return e
		}
	}
	return nil
}

func (s *server) greeting(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]interface{}{"lmstudio": true, "version": "0.4.4"})
}

func (s *server) v1models(w http.ResponseWriter, r *http.Request) {
	var data []map[string]interface{}
	for _, e := range index() {
		data = append(data, map[string]interface{}{"id": e.Key, "object": "model", "owned_by": e.Publisher})
	}
	writeJSON(w, 200, map[string]interface{}{"object": "list", "data": data})
}

func (s *server) v0models(w http.ResponseWriter, r *http.Request) {
	var data []map[string]interface{}
	s.mu.Lock()
	loadedPaths := map[string]bool{}
	for _, e := range s.loaded {
		loadedPaths[e.Path] = true
	}
	s.mu.Unlock()
	for _, e := range index() {
		state := "not-loaded"
		if loadedPaths[e.Path] {
			state = "loaded"
		}
		data = append(data, map[string]interface{}{"id": e.Key, "object": "model", "type": "llm",
			"publisher": e.Publisher, "arch": e.Arch, "compatibility_type": "gguf", "quantization": e.Quant,
			"state": state, "max_context_length": e.MaxCtx})
	}
	writeJSON(w, 200, map[string]interface{}{"object": "list", "data": data})
}

// v0model answers GET /api/v0/models/{model}: the entry of a model key, path or loaded identifier.
func (s *server) v0model(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/api/v0/models/")
	e := s.resolve(id)
	if e == nil {
		lmErr(w, 404, fmt.Sprintf("Model \"%s\" not found", id), "model_not_found")
		return
	}
	writeJSON(w, 200, map[string]interface{}{"id": id, "object": "model", "type": "llm", "publisher": e.Publisher,
		"arch": e.Arch, "compatibility_type": "gguf", "quantization": e.Quant, "state": "loaded", "max_context_length": e.MaxCtx})
}

func (s *server) load(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string `json:"model"`
		Identifier string `json:"identifier"`
		Path       string `json:"path"` // used by tests' fake `lms` to emulate --exact
	}
	json.NewDecoder(r.Body).Decode(&req)
	var e *entry
	for _, x := range index() {
		if (req.Path != "" && x.Path == req.Path) || (req.Path == "" && x.Key == req.Model) {
			e = x
		}
	}
	if e == nil {
		lmErr(w, 404, fmt.Sprintf("Invalid model identifier \"%s\". Please specify a valid downloaded model.", req.Model), "model_not_found")
		return
	}
	id := req.Identifier
	if id == "" {
		id = e.Key
	}
	s.mu.Lock()
	s.loaded[id] = e
	s.mu.Unlock()
	writeJSON(w, 200, map[string]interface{}{"type": "llm", "instance_id": id, "status": "loaded", "load_time_seconds": 0.1})
}

func num(m map[string]interface{}, k string, d float64) float64 {
	if v, ok := m[k].(float64); ok {
		return v
	}
	return d
}

// generate runs prompt greedily or sampled as req says, with LM Studio's sampling defaults, and applies
// the request's stop strings: the text and the finish reason.
func (s *server) generate(e *entry, req map[string]interface{}, prompt string) (*workerRes, string, string, error) {
	gguf := e.Abs
	if *flagServe != "" {
		gguf = *flagServe
	}
	maxTok := int(num(req, "max_tokens", -1))
	if maxTok <= 0 {
		maxTok = 128
	}
	res, err := s.wk.call(map[string]interface{}{"model": gguf, "prompt": prompt, "n_predict": maxTok,
		"temperature": num(req, "temperature", 0.8), "top_k": num(req, "top_k", 40), "top_p": num(req, "top_p", 0.95),
		"min_p": num(req, "min_p", 0.05), "repeat_penalty": num(req, "repeat_penalty", 1.1), "seed": num(req, "seed", -1),
		"num_ctx": 2048, "repeat_last_n": 64})
	if err != nil {
		return nil, "", "", err
	}
	text := res.Text
	finish := "length"
	if res.StopReason == "eog" {
		finish = "stop"
	}
	if stops, ok := req["stop"].([]interface{}); ok {
		for _, x := range stops {
			if st, ok := x.(string); ok && st != "" {
				if i := strings.Index(text, st); i >= 0 {
					text, finish = text[:i], "stop"
				}
			}
		}
	}
	return res, text, finish, nil
}

// request decodes a completion request and finds its model (the answer is written on failure).
func (s *server) request(w http.ResponseWriter, r *http.Request) (map[string]interface{}, *entry, string) {
	var req map[string]interface{}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		lmErr(w, 400, err.Error(), "invalid_json")
		return nil, nil, ""
	}
	id, _ := req["model"].(string)
	e := s.resolve(id)
	if e == nil {
		lmErr(w, 404, fmt.Sprintf("Invalid model identifier \"%s\". Please specify a valid downloaded model (e.g., %s).", id, "sunny-local/x"), "model_not_found")
		return nil, nil, ""
	}
	if *flagRtErr != "" {
		lmErr(w, 500, *flagRtErr, "runtime_error")
		return nil, nil, ""
	}
	return req, e, id
}

func (s *server) completions(v0 bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, e, id := s.request(w, r)
		if e == nil {
			return
		}
		prompt, _ := req["prompt"].(string)
		t0 := time.Now()
		res, text, finish, err := s.generate(e, req, prompt)
		if err != nil {
			lmErr(w, 500, err.Error(), "runtime_error")
			return
		}
		if stream, _ := req["stream"].(bool); stream {
			s.streamEvents(w, id, false, res.Pieces, text, finish)
			return
		}
		out := map[string]interface{}{"id": "cmpl-fake", "object": "text_completion", "created": time.Now().Unix(),
			"model": id, "choices": []map[string]interface{}{{"index": 0, "text": text, "logprobs": nil /* never returned */, "finish_reason": finish}},
			"usage": map[string]int{"prompt_tokens": len(res.PromptIDs), "completion_tokens": len(res.IDs),
				"total_tokens": len(res.PromptIDs) + len(res.IDs)}}
		if v0 {
			out["model_info"] = map[string]interface{}{"arch": e.Arch, "quant": e.Quant, "format": "gguf", "context_length": 2048}
			out["runtime"] = map[string]interface{}{"name": "llama.cpp-linux-x86_64-avx2", "version": "fake", "supported_formats": []string{"gguf"}}
			out["stats"] = map[string]interface{}{"tokens_per_second": float64(len(res.IDs)) / time.Since(t0).Seconds(),
				"time_to_first_token": 0.01, "generation_time": time.Since(t0).Seconds(), "stop_reason": "eosFound"}
		}
		writeJSON(w, 200, out)
	}
}

// chat renders the messages with the GGUF's tokenizer.chat_template through @huggingface/jinja (the JS
// engine whose error texts LM Studio's show), or, without a template, LM Studio's built-in
// Instruct:/Human:/AI: fallback, and generates from that prompt.
func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	req, e, id := s.request(w, r)
	if e == nil {
		return
	}
	msgs, _ := req["messages"].([]interface{})
	info, err := ggufinfo.Read(e.Abs)
	if err != nil {
		lmErr(w, 500, err.Error(), "runtime_error")
		return
	}
	var prompt string
	if info.ChatTemplate == "" {
		prefix := map[string]string{"system": "Instruct: ", "user": "Human: ", "assistant": "AI: "}
		for _, x := range msgs {
			m, _ := x.(map[string]interface{})
			role, _ := m["role"].(string)
			content, _ := m["content"].(string)
			prompt += prefix[role] + content + "\n"
		}
		prompt += "AI: "
	} else {
		res, err := s.wk.call(map[string]interface{}{"op": "render_jinja", "template": info.ChatTemplate, "messages": msgs,
			"bos_token": info.TokenText("tokenizer.ggml.bos_token_id"), "eos_token": info.TokenText("tokenizer.ggml.eos_token_id")})
		if err != nil {
			writeJSON(w, 400, map[string]interface{}{"error": "Error rendering prompt with jinja template: " + err.Error()})
			return
		}
		prompt = res.Text
	}
	res, text, finish, err := s.generate(e, req, prompt)
	if err != nil {
		lmErr(w, 500, err.Error(), "runtime_error")
		return
	}
	if stream, _ := req["stream"].(bool); stream {
		s.streamEvents(w, id, true, res.Pieces, text, finish)
		return
	}
	writeJSON(w, 200, map[string]interface{}{"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(),
		"model": id, "choices": []map[string]interface{}{{"index": 0, "logprobs": nil, "finish_reason": finish,
			"message": map[string]interface{}{"role": "assistant", "content": text}}},
		"usage": map[string]int{"prompt_tokens": len(res.PromptIDs), "completion_tokens": len(res.IDs),
			"total_tokens": len(res.PromptIDs) + len(res.IDs)}})
}

// streamEvents answers "stream": true the way LM Studio does (lmstudio-ai/lmstudio-js#320,
// lmstudio-bug-tracker#676 and #713 show its streams): text/event-stream, one "data: {chunk}" event
// per token whose choices[0] carries that token's text ("text"; a chat chunk: "delta" {"role",
// "content"}, object "chat.completion.chunk") and "finish_reason": null, a last chunk with empty
// text (an empty delta) and the finish_reason, no usage, stats or model_info, then "data: [DONE]".
// Pieces are cut where the (stop-string-cut) text ends. -stream-delay sleeps between events (a slow
// but moving server); -stream-stall sleeps that long after the first event (a stalled one).
func (s *server) streamEvents(w http.ResponseWriter, id string, chat bool, pieces []string, text, finish string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	created := time.Now().Unix()
	logLine("SSE stream to %s\n", id)
	event := func(piece string, fr interface{}) {
		choice := map[string]interface{}{"index": 0, "text": piece, "logprobs": nil, "finish_reason": fr}
		obj, cid := "text_completion", "cmpl-fake"
		if chat {
			delta := map[string]interface{}{}
			if fr == nil {
				delta = map[string]interface{}{"role": "assistant", "content": piece}
			}
			choice = map[string]interface{}{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": fr}
			obj, cid = "chat.completion.chunk", "chatcmpl-fake"
		}
		b, _ := json.Marshal(map[string]interface{}{"id": cid, "object": obj, "created": created, "model": id,
			"choices": []map[string]interface{}{choice}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f != nil {
			f.Flush()
		}
	}
	left := text
	for i, p := range pieces {
		if len(p) > len(left) {
			p = left
		}
		if p == "" && left == "" {
			break
		}
		event(p, nil)
		left = left[len(p):]
		if i == 0 && *flagStall > 0 {
			time.Sleep(*flagStall)
		}
		if *flagDelay > 0 {
			time.Sleep(*flagDelay)
		}
	}
	event("", finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f != nil {
		f.Flush()
	}
}

type workerRes struct {
	PromptIDs  []int    `json:"prompt_ids"`
	IDs        []int    `json:"ids"`
	Pieces     []string `json:"pieces"`
	Text       string   `json:"text"`
	StopReason string   `json:"stop_reason"`
	Error      string   `json:"error"`
}

type worker struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func (wk *worker) call(req map[string]interface{}) (*workerRes, error) {
	if wk == nil {
		return nil, errors.New("no -worker configured")
	}
	wk.mu.Lock()
	defer wk.mu.Unlock()
	wk.id++
	req["id"] = wk.id
	b, _ := json.Marshal(req)
	if _, err := wk.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	line, err := wk.out.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	var res workerRes
	if err := json.Unmarshal(line, &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, errors.New(res.Error)
	}
	return &res, nil
}

func main() {
	flag.Parse()
	if *flagModels == "" {
		fmt.Fprintln(os.Stderr, "-models DIR is required")
		os.Exit(2)
	}
	s := &server{loaded: map[string]*entry{}}
	if *flagWorker != "" {
		cmd := exec.Command(*flagNode, *flagWorker)
		cmd.Stderr = os.Stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.wk = &worker{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	}
	if *flagLog != "" {
		logf, _ = os.OpenFile(*flagLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/lmstudio-greeting", s.greeting)
	mux.HandleFunc("/v1/models", s.v1models)
	mux.HandleFunc("/v1/completions", s.completions(false))
	mux.HandleFunc("/v1/chat/completions", s.chat)
	if !*flagNoV0 {
		mux.HandleFunc("/api/v0/models", s.v0models)
		mux.HandleFunc("/api/v0/models/", s.v0model)
		mux.HandleFunc("/api/v0/completions", s.completions(true))
	}
	if !*flagNoLoad {
		mux.HandleFunc("/api/v1/models/load", s.load)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// LM Studio answers an unknown route with 200 and an error body
		writeJSON(w, 200, map[string]string{"error": fmt.Sprintf("Unexpected endpoint or method. (%s %s)", r.Method, r.URL.Path)})
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logLine("%s %s\n", r.Method, r.URL.Path)
		if *flagToken != "" && r.URL.Path != "/lmstudio-greeting" && r.Header.Get("Authorization") != "Bearer "+*flagToken {
			writeJSON(w, 401, map[string]interface{}{"error": map[string]interface{}{
				"message": "Unauthorized: a valid API token is required (Authorization: Bearer <token>)",
				"type":    "invalid_request_error", "code": "unauthorized"}})
			return
		}
		mux.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *flagPortFile != "" {
		os.WriteFile(*flagPortFile+".tmp", []byte(strconv.Itoa(port)), 0o644)
		os.Rename(*flagPortFile+".tmp", *flagPortFile)
	}
	if *flagInfo != "" {
		os.MkdirAll(filepath.Dir(*flagInfo), 0o755)
		os.WriteFile(*flagInfo, []byte(fmt.Sprintf(`{"port":%d,"pid":%d}`, port, os.Getpid())), 0o644)
	}
	fmt.Fprintf(os.Stderr, "fake-lmstudio listening on 127.0.0.1:%d\n", port)
	http.Serve(ln, h)
}
