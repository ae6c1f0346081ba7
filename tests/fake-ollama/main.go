// fake-ollama - an Ollama HTTP API stand-in for sunny's tests (no real Ollama exists in CI).
//
// It follows Ollama's source (v0.33): blob digests "sha256:<64 hex>" validated by regex and compared
// literally, HEAD/POST /api/blobs with 200/201/404/400, /api/create with the >= 0.5.5 JSON body (and the
// "neither 'from' or 'files' was specified" answer to a legacy body) or, with -version < 0.5.5, only
// the legacy {"modelfile"} body ("path or Modelfile are required" otherwise), NDJSON streams where
// errors can arrive mid-stream under HTTP 200, parameters stored verbatim and typed only at generate
// time like api.Options.FromMap (wrong type -> 500), raw+template -> 400, _debug_render_only,
// /api/show, /api/tags, /api/delete. Templates are rendered with Go's text/template. Generation is
// delegated to llama.cpp through a node-llama-cpp worker process (worker.mjs).
//
// Failure injection: -fail-upload N (first N uploads get a 500 after part of the body), -digest-mismatch,
// -create-error MSG (error line mid-create-stream), -serve-gguf PATH (generate with another GGUF),
// -no-context (omit "context" ids), -no-bos (tokenize without BOS), -forbid (403 everything). -log FILE records "METHOD PATH" per request.
// -parse-modelfile FILE: parse a Modelfile like Ollama's parser and print its commands as JSON.
//
// Behaviours of the real server (v0.33 source unless a version is named), each next to its code:
//   - generate "context" = Tokenize(prompt + response), the whole text re-tokenized without BOS
//     (server/routes.go GenerateHandler), so the prompt/answer boundary may tokenize differently;
//   - generate "logprobs" (>= 0.12.11): api/types.go Logprob {token, logprob, bytes, top_logprobs},
//     bytes = the token text's bytes (server/logprob.go toAPILogprobs), computed by llama.cpp; older
//     versions ignore the request fields (-version 0.12.10 acts as such a server);
//   - empty prompt: only loads the model, done_reason "load" (GenerateHandler);
//   - repetition abort: more than 30 consecutive chunks that trim to the same text end the
//     prediction without a final chunk (llm/llama_server.go llamaServerRunner.Completion), so a
//     stream:false reply has partial text, done:false and no done_reason/eval_count;
//   - template selection >= 0.30 (server/images.go GetModel shouldPreferChatTemplate, routes.go
//     shouldUseGoTemplate, selectedModelTemplate): the GGUF's Jinja renders chat/non-raw generate
//     and is what /api/show returns as "template" when it exposes more capabilities than the Go
//     TEMPLATE, or always with -go-template 0 (OLLAMA_GO_TEMPLATE=0); -go-template 1 forces Go;
//   - gpt-oss with a TEMPLATE holding <|start|> and <|end|> (routes.go shouldUseHarmony): rendered
//     with that TEMPLATE even where the Jinja would be preferred (usesOllamaRenderedChat);
//   - split GGUFs >= 0.30: shards grouped by split.count/split.no and the -NNNNN-of-NNNNN.gguf name
//     (server/create.go splitGGUFGroupKey, mergeSplitGGUFLayers);
//   - create >= 0.30 rewrites the model with llama-quantize COPY; here llama.cpp (the worker) must
//     load the file, else "failed to validate GGUF with llama-quantize ..." (copyLayerWithLlamaQuantize);
//     that error, template errors ("template error: ..."), missing blobs arrive as NDJSON error
//     lines after "parsing GGUF" under HTTP 200 (CreateHandler + streamResponse);
//   - names with a :local, :cloud or -cloud tag are source suffixes for show/generate
//     (internal/modelref parseSourceSuffix): create stores the literal name, lookups strip it;
//   - /api/show "parameters" printed with %#v per value, in map order (ShowHandler);
//   - Host check only on a loopback listener (allowedHostsMiddleware); -forbid makes every Host fail.
package main

import (
	"sunny/ggufinfo"

	"bufio"
	"crypto/sha256"
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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	flagAddr       = flag.String("addr", "127.0.0.1:0", "listen address")
	flagPortFile   = flag.String("port-file", "", "write the chosen port here")
	flagModels     = flag.String("models", "", "models dir (blobs/ and manifests/)")
	flagVersion    = flag.String("version", "0.33.0", "version to report")
	flagWorker     = flag.String("worker", "", "path of worker.mjs")
	flagNode       = flag.String("node", "node", "node binary")
	flagFailUpload = flag.Int("fail-upload", 0, "answer 500 mid-body to the first N blob uploads")
	flagMismatch   = flag.Bool("digest-mismatch", false, "corrupt every received blob")
	flagCreateErr  = flag.String("create-error", "", "emit this error line mid-create-stream")
	flagServeGGUF  = flag.String("serve-gguf", "", "generate with this GGUF instead of the model's")
	flagNoContext  = flag.Bool("no-context", false, "omit context ids from generate answers")
	flagLog        = flag.String("log", "", "append METHOD PATH per request to this file")
	flagParseMF    = flag.String("parse-modelfile", "", "parse this Modelfile, print JSON, exit")
	flagForbid     = flag.Bool("forbid", false, "answer a bare 403 to every request (Host-header rule)")
	flagNoBOS      = flag.Bool("no-bos", false, "tokenize prompts without BOS (a server with a tokenizer bug)")
	flagLegacy     = flag.Bool("legacy-create", false, "only the pre-0.5.5 create body, whatever -version says")
	flagGoTemplate = flag.String("go-template", "", "OLLAMA_GO_TEMPLATE of the server: \"\" unset, 0 or 1")
)

var digestRe = regexp.MustCompile(`^sha256[:-][0-9a-fA-F]{64}$`)

type model struct {
	Name       string                 `json:"name"`
	Digest     string                 `json:"digest"` // blob digest of the GGUF
	Template   string                 `json:"template"`
	System     string                 `json:"system"`
	Params     map[string]interface{} `json:"params"`
	License    []string               `json:"license"`
	Arch       string                 `json:"arch"`
	Quant      string                 `json:"quant"`
	Size       int64                  `json:"size"`
	ModifiedAt time.Time              `json:"modified_at"`
	// what GetModel derives (server/images.go)
	HasGoTemplate bool   `json:"has_go_template"`
	ChatTemplate  string `json:"chat_template"` // GGUF tokenizer.chat_template
	Bos           string `json:"bos"`
	Eos           string `json:"eos"`
	Path          string `json:"path"` // the file llama.cpp loads (first shard of a split model)
}

type server struct {
	mu          sync.Mutex
	models      map[string]*model
	uploads     int
	worker      *worker
	legacyOnly  bool
	newEngine   bool // >= 0.30: "validating GGUF model" step
	requestsLog *os.File
}

func versionLess(v string, maj, min, pat int) bool {
	var a, b, c int
	fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d.%d", &a, &b, &c)
	if a == 0 && b == 0 && c == 0 {
		return false
	}
	if a != maj {
		return a < maj
	}
	if b != min {
		return b < min
	}
	return c < pat
}

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func errJSON(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func blobPath(digest string) string {
	return filepath.Join(*flagModels, "blobs", strings.Replace(digest, ":", "-", 1))
}

// ---- names (types/model/name.go, simplified) ----
var namePartRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,79}$`)

func normName(n string) (string, bool) {
	if n == "" {
		return "", false
	}
	tag := "latest"
	base := n
	if i := strings.LastIndex(n, ":"); i > strings.LastIndex(n, "/") {
		base, tag = n[:i], n[i+1:]
	}
	parts := strings.Split(base, "/")
	if len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if !namePartRe.MatchString(p) {
			return "", false
		}
	}
	if !namePartRe.MatchString(tag) {
		return "", false
	}
	return strings.ToLower(base + ":" + tag), true
}

// ---- handlers ----
func (s *server) root(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		errJSON(w, 404, "404 page not found")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "Ollama is running")
}

func (s *server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]string{"version": *flagVersion})
}

func (s *server) blobs(w http.ResponseWriter, r *http.Request) {
	digest := strings.TrimPrefix(r.URL.Path, "/api/blobs/")
	if !digestRe.MatchString(digest) {
		errJSON(w, 400, "invalid digest format")
		return
	}
	switch r.Method {
	case http.MethodHead:
		if _, err := os.Stat(blobPath(digest)); err != nil {
			errJSON(w, 404, fmt.Sprintf("blob %q not found", digest))
			return
		}
		w.WriteHeader(200)
	case http.MethodPost:
		if _, err := os.Stat(blobPath(digest)); err == nil {
			w.WriteHeader(200) // already present: answer without reading the body
			return
		}
		s.mu.Lock()
		s.uploads++
		n := s.uploads
		s.mu.Unlock()
		if n <= *flagFailUpload {
			// read part of the body, then fail like a full disk would
			io.CopyN(io.Discard, r.Body, 64<<10)
			w.Header().Set("Connection", "close")
			errJSON(w, 500, "write /models/blobs/sha256-tmp: no space left on device")
			return
		}
		os.MkdirAll(filepath.Join(*flagModels, "blobs"), 0o755)
		tmp, err := os.CreateTemp(filepath.Join(*flagModels, "blobs"), "sha256-")
		if err != nil {
			errJSON(w, 500, err.Error())
			return
		}
		h := sha256.New()
		_, err = io.Copy(io.MultiWriter(tmp, h), r.Body)
		tmp.Close()
		if err != nil {
			os.Remove(tmp.Name())
			errJSON(w, 500, err.Error())
			return
		}
		if *flagMismatch {
			h.Write([]byte{0})
		}
		got := fmt.Sprintf("sha256:%x", h.Sum(nil))
		if got != digest { // literal comparison, as the real server does
			os.Remove(tmp.Name())
			errJSON(w, 400, fmt.Sprintf("digest mismatch, expected %q, got %q", digest, got))
			return
		}
		if err := os.Rename(tmp.Name(), blobPath(digest)); err != nil {
			errJSON(w, 500, err.Error())
			return
		}
		w.WriteHeader(201)
	default:
		errJSON(w, 405, "method not allowed")
	}
}

type ndjson struct {
	w http.ResponseWriter
	f http.Flusher
}

func (n *ndjson) send(v interface{}) {
	b, _ := json.Marshal(v)
	n.w.Write(append(b, '\n'))
	if n.f != nil {
		n.f.Flush()
	}
}

type createReq struct {
	Model      string                 `json:"model"`
	Name       string                 `json:"name"`
	From       string                 `json:"from"`
	Files      map[string]string      `json:"files"`
	Template   string                 `json:"template"`
	System     string                 `json:"system"`
	Parameters map[string]interface{} `json:"parameters"`
	License    interface{}            `json:"license"`
	Stream     *bool                  `json:"stream"`
	Modelfile  string                 `json:"modelfile"` // only understood in legacy mode
	Path       string                 `json:"path"`
}

func (s *server) create(w http.ResponseWriter, r *http.Request) {
	var req createReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		errJSON(w, 400, err.Error())
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	full, ok := normName(name)
	if !ok {
		errJSON(w, 400, "invalid model name")
		return
	}
	m := &model{Name: full, Params: map[string]interface{}{}, ModifiedAt: time.Now()}
	var fileName, digest string
	if s.legacyOnly {
		if req.Modelfile == "" && req.Path == "" {
			errJSON(w, 400, "path or Modelfile are required")
			return
		}
		cmds, err := parseModelfile(req.Modelfile)
		if err != nil {
			errJSON(w, 400, err.Error())
			return
		}
		for _, c := range cmds {
			switch c.Name {
			case "model":
				digest = strings.TrimPrefix(c.Args, "@")
				fileName = c.Args
			case "template":
				m.Template = c.Args
			case "system":
				m.System = c.Args
			case "license":
				m.License = append(m.License, c.Args)
			default:
				v, err := formatParam(c.Name, c.Args)
				if err != nil {
					errJSON(w, 400, err.Error())
					return
				}
				if arr, ok := v.([]string); ok {
					old, _ := m.Params[c.Name].([]string)
					m.Params[c.Name] = append(old, arr...)
				} else {
					m.Params[c.Name] = v
				}
			}
		}
		if !digestRe.MatchString(digest) {
			errJSON(w, 400, fmt.Sprintf("pull model manifest: file does not exist (FROM %s)", fileName))
			return
		}
	} else {
		if req.From == "" && len(req.Files) == 0 {
			errJSON(w, 400, "neither 'from' or 'files' was specified")
			return
		}
		if req.From != "" {
			errJSON(w, 400, "fake-ollama: 'from' is not supported")
			return
		}
		for k := range req.Files {
			if filepath.IsAbs(k) || strings.Contains(k, "..") || k == "" {
				errJSON(w, 400, "file path must be relative")
				return
			}
		}
		m.Template = req.Template
		m.System = req.System
		if req.Parameters != nil {
			m.Params = req.Parameters // stored verbatim; typed at generate time
		}
		switch l := req.License.(type) {
		case string:
			m.License = []string{l}
		case []interface{}:
			for _, x := range l {
				if s, ok := x.(string); ok {
					m.License = append(m.License, s)
				}
			}
		}
	}
	files := req.Files
	if s.legacyOnly {
		files = map[string]string{fileName: strings.Replace(digest, "-", ":", 1)}
	}
	// From here on the answer is a 200 NDJSON stream: every error is a {"error"} line
	// (CreateHandler sends them through the channel that streamResponse writes).
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	out := &ndjson{w, f}
	fail := func(msg string) { out.send(map[string]string{"error": msg}) }
	type layer struct {
		name, digest, path string
		info               *ggufinfo.Info
		size               int64
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names) // convertFromFiles walks the file names sorted
	var models []*layer
	splits := map[string][]*layer{}
	var splitKeys []string
	for _, name := range names {
		// ggufLayersWithMediaType: "parsing GGUF" per file, then open, sniff, decode
		out.send(map[string]string{"status": "parsing GGUF"})
		d := files[name]
		bp := blobPath(strings.Replace(d, "-", ":", 1))
		st, err := os.Stat(bp)
		if err != nil {
			fail(fmt.Sprintf("open %s: no such file or directory", bp))
			return
		}
		if !ggufinfo.IsGGUF(bp) {
			fail("supplied file was not in GGUF format")
			return
		}
		info, err := ggufinfo.Read(bp)
		if err != nil {
			fail(err.Error())
			return
		}
		l := &layer{name: name, digest: d, path: bp, info: info, size: st.Size()}
		count, _ := info.KV["split.count"].(int64)
		if count <= 1 {
			models = append(models, l)
			continue
		}
		if !s.newEngine {
			// <= 0.24 has no split import: each shard would become its own model layer and the
			// runner would load only the first file's tensors
			fail(fmt.Sprintf("fake-ollama %s: split GGUF %q needs Ollama >= 0.30 (merge it with llama-gguf-split --merge)", *flagVersion, name))
			return
		}
		// splitGGUFGroupKey
		mm := splitNameRe.FindStringSubmatch(filepath.Base(name))
		if mm == nil {
			fail(fmt.Sprintf("split GGUF %q must use llama.cpp split filename pattern", name))
			return
		}
		idx, _ := strconv.Atoi(mm[2])
		n, _ := strconv.Atoi(mm[3])
		if int64(n) != count {
			fail(fmt.Sprintf("split GGUF %q filename count %d does not match metadata count %d", name, n, count))
			return
		}
		no, ok := info.KV["split.no"].(int64)
		if !ok {
			fail(fmt.Sprintf("split GGUF %q is missing split.no metadata", name))
			return
		}
		if no != int64(idx-1) {
			fail(fmt.Sprintf("split GGUF %q filename index %d does not match metadata index %d", name, idx-1, no))
			return
		}
		key := fmt.Sprintf("%s:%d", mm[1], count)
		if _, ok := splits[key]; !ok {
			splitKeys = append(splitKeys, key)
		}
		splits[key] = append(splits[key], l)
	}
	for _, key := range splitKeys {
		// mergeSplitGGUFLayers: all shards present, each index once; the first shard is the model
		g := splits[key]
		count, _ := g[0].info.KV["split.count"].(int64)
		if int64(len(g)) != count {
			fail(fmt.Sprintf("split GGUF %q has %d shards, expected %d", g[0].name, len(g), count))
			return
		}
		byIdx := make([]*layer, count)
		for _, l := range g {
			no := l.info.KV["split.no"].(int64)
			if byIdx[no] != nil {
				fail(fmt.Sprintf("split GGUF has duplicate shard index %d", no))
				return
			}
			byIdx[no] = l
		}
		// llama.cpp finds the other shards next to the first by name: lay them out that way
		dir := filepath.Join(*flagModels, "split", strings.TrimPrefix(byIdx[0].digest, "sha256:"))
		os.MkdirAll(dir, 0o755)
		var total int64
		for _, l := range byIdx {
			link := filepath.Join(dir, filepath.Base(l.name))
			os.Remove(link)
			os.Symlink(l.path, link)
			total += l.size
		}
		primary := *byIdx[0]
		primary.path = filepath.Join(dir, filepath.Base(byIdx[0].name))
		primary.size = total
		models = append(models, &primary)
	}
	if len(models) != 1 {
		fail(fmt.Sprintf("fake-ollama: exactly one model file expected, got %d", len(models)))
		return
	}
	ml := models[0]
	if *flagCreateErr != "" {
		fail(*flagCreateErr)
		return
	}
	if m.Template != "" {
		// setTemplate after the layers: a parse failure is errBadTemplate, streamed as a line
		if _, err := parseTemplate(m.Template); err != nil {
			fail("template error: " + err.Error())
			return
		}
	}
	if s.newEngine {
		// copyLayerWithLlamaQuantize: llama-quantize --allow-requantize in out COPY must read the file
		out.send(map[string]interface{}{"status": "validating GGUF model", "digest": "0000000000000000000", "total": ml.size, "completed": 0})
		if s.worker != nil {
			if _, err := s.worker.call(map[string]interface{}{"op": "load", "model": ml.path}); err != nil {
				fmt.Fprintln(os.Stderr, "fake-ollama: llama.cpp cannot load the model:", err)
				fail("failed to validate GGUF with llama-quantize without compatibility patches: llama-quantize failed: exit status 1")
				return
			}
		}
		out.send(map[string]interface{}{"status": "validating GGUF model", "digest": "0000000000000000000", "total": ml.size, "completed": ml.size})
		out.send(map[string]string{"status": "verifying conversion"})
		out.send(map[string]string{"status": fmt.Sprintf("creating new layer sha256:%x", sha256.Sum256([]byte("copy"+ml.digest)))})
	} else {
		out.send(map[string]string{"status": "using existing layer " + ml.digest})
	}
	info := ml.info
	m.Digest = ml.digest
	m.Path = ml.path
	m.Arch = info.Arch
	m.Quant = info.Quant()
	m.Size = ml.size
	m.HasGoTemplate = m.Template != ""
	m.ChatTemplate = info.ChatTemplate
	m.Bos = info.TokenText("tokenizer.ggml.bos_token_id")
	m.Eos = info.TokenText("tokenizer.ggml.eos_token_id")
	for _, what := range []string{"template", "system", "params", "license"} {
		out.send(map[string]string{"status": fmt.Sprintf("creating new layer sha256:%x", sha256.Sum256([]byte(what+m.Name)))})
	}
	out.send(map[string]string{"status": "writing manifest"})
	s.mu.Lock()
	s.models[full] = m
	s.mu.Unlock()
	os.MkdirAll(filepath.Join(*flagModels, "manifests"), 0o755)
	if b, err := json.Marshal(m); err == nil {
		os.WriteFile(filepath.Join(*flagModels, "manifests", strings.NewReplacer("/", "_", ":", "_").Replace(full)+".json"), b, 0o644)
	}
	out.send(map[string]string{"status": "success"})
}

var splitNameRe = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// selected: which template GetModel/chatModeForModel pick for m. native = the GGUF's Jinja renders
// chat and non-raw generate (through llama-server), and /api/show returns it (selectedModelTemplate).
func (s *server) selected(m *model) (native bool, goTmpl *ollamaTemplate) {
	src := m.Template
	if src == "" {
		src = "{{ .Prompt }}" // template.DefaultTemplate
	}
	goTmpl, _ = parseTemplate(src)
	if !s.newEngine || m.ChatTemplate == "" {
		return false, goTmpl // <= 0.24 never renders the Jinja
	}
	if shouldUseHarmony(m) { // usesOllamaRenderedChat: harmony renders with the Go TEMPLATE, never the Jinja
		return false, goTmpl
	}
	if !m.HasGoTemplate {
		return true, goTmpl
	}
	switch *flagGoTemplate { // goTemplateEnvSet: an explicit OLLAMA_GO_TEMPLATE decides
	case "0", "false":
		return true, goTmpl
	case "1", "true":
		return false, goTmpl
	}
	return shouldPreferChatTemplate(m.ChatTemplate, goTmpl), goTmpl
}

// shouldUseHarmony (server/routes.go): a gpt-oss model whose TEMPLATE holds the harmony tags
// <|start|> and <|end|>. Ollama then renders prompts with that TEMPLATE (renderPrompt, server/prompt.go),
// starts llama-server without Jinja (usesOllamaRenderedChat -> DisableJinja) and parses non-raw replies
// with its harmony parser (thinking / content / tool calls; not mirrored here: the fake returns the text).
// Without such a TEMPLATE the model runs native: llama-server renders the GGUF's Jinja.
func shouldUseHarmony(m *model) bool {
	if m.Arch != "gptoss" && m.Arch != "gpt-oss" { // model.Config.ModelFamily
		return false
	}
	return strings.Contains(m.Template, "<|start|>") && strings.Contains(m.Template, "<|end|>")
}

// parseSourceSuffix (internal/modelref): a ":local" or ":cloud" tag, or a tag ending in "-cloud",
// selects where the model comes from and is stripped before the name is resolved. Returns the name
// to resolve and "local", "cloud" or "".
func parseSourceSuffix(raw string) (string, string) {
	i := strings.LastIndex(raw, ":")
	if i < 0 {
		return raw, ""
	}
	tagRaw := strings.TrimSpace(raw[i+1:])
	tag := strings.ToLower(tagRaw)
	switch tag {
	case "cloud":
		return raw[:i], "cloud"
	case "local":
		return raw[:i], "local"
	}
	if !strings.Contains(tagRaw, "/") && strings.HasSuffix(tag, "-cloud") {
		return raw[:i+1] + tagRaw[:len(tagRaw)-len("-cloud")], "cloud"
	}
	return raw, ""
}

// lookup resolves a name for show/generate; a cloud source is proxied to ollama.com, which the
// fake cannot reach (errCloud).
var errCloud = errors.New("cloud models are proxied to ollama.com: fake-ollama has no network")

func (s *server) lookupSource(name string) (*model, error) {
	base, src := parseSourceSuffix(name)
	if src == "cloud" {
		return nil, errCloud
	}
	return s.lookup(base), nil
}

func (s *server) lookup(name string) *model {
	full, ok := normName(name)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.models[full]
}

// ShowHandler: one line per value, `fmt.Sprintf("%-*s %#v", 30, k, v)`, in Go map order (not
// sorted); %#v prints a string Go-quoted, so "\n\n" comes back as "\"\\n\\n\"".
func formatParams(p map[string]interface{}) string {
	var params []string
	for k, v := range p {
		switch val := v.(type) {
		case []interface{}:
			for _, x := range val {
				params = append(params, fmt.Sprintf("%-*s %#v", 30, k, x))
			}
		case []string:
			for _, x := range val {
				params = append(params, fmt.Sprintf("%-*s %#v", 30, k, x))
			}
		default:
			params = append(params, fmt.Sprintf("%-*s %#v", 30, k, v))
		}
	}
	return strings.Join(params, "\n")
}

func (s *server) show(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	n := req.Model
	if n == "" {
		n = req.Name
	}
	m, err := s.lookupSource(n)
	if err != nil {
		errJSON(w, 502, err.Error())
		return
	}
	if m == nil {
		errJSON(w, 404, fmt.Sprintf("model '%s' not found", n))
		return
	}
	mf := fmt.Sprintf("# Modelfile generated by \"ollama show\"\nFROM %s\n", blobPath(m.Digest))
	if m.Template != "" {
		mf += fmt.Sprintf("TEMPLATE \"\"\"%s\"\"\"\n", m.Template)
	}
	// selectedModelTemplate: the Jinja when the model runs in native-Jinja mode, else the Go one
	native, goTmpl := s.selected(m)
	selTemplate := goTmpl.raw
	if native {
		selTemplate = m.ChatTemplate
	}
	writeJSON(w, 200, map[string]interface{}{
		"license":    strings.Join(m.License, "\n"),
		"modelfile":  mf,
		"parameters": formatParams(m.Params),
		"template":   selTemplate,
		"system":     m.System,
		"details": map[string]interface{}{"parent_model": "", "format": "gguf", "family": m.Arch,
			"families": []string{m.Arch}, "parameter_size": "", "quantization_level": m.Quant},
		"model_info":  map[string]interface{}{"general.architecture": m.Arch},
		"modified_at": m.ModifiedAt,
	})
}

func (s *server) tags(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []map[string]interface{}{}
	for _, m := range s.models {
		list = append(list, map[string]interface{}{"name": m.Name, "model": m.Name, "modified_at": m.ModifiedAt,
			"size": m.Size, "digest": fmt.Sprintf("%x", sha256.Sum256([]byte(m.Name+m.Digest))),
			"details": map[string]interface{}{"format": "gguf", "family": m.Arch, "families": []string{m.Arch},
				"quantization_level": m.Quant}})
	}
	writeJSON(w, 200, map[string]interface{}{"models": list})
}

func (s *server) del(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodDelete {
		errJSON(w, 405, "method not allowed")
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	full, ok := normName(req.Model)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || s.models[full] == nil {
		errJSON(w, 404, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	delete(s.models, full)
	w.WriteHeader(200)
}

// ---- options typing: api.Options.FromMap ----
type optKind int

const (
	kInt optKind = iota
	kFloat
	kBool
	kStrings
)

var optKinds = map[string]optKind{
	"num_ctx": kInt, "num_batch": kInt, "num_gpu": kInt, "main_gpu": kInt, "use_mmap": kBool, "num_thread": kInt,
	"num_keep": kInt, "seed": kInt, "num_predict": kInt, "top_k": kInt, "top_p": kFloat, "min_p": kFloat,
	"typical_p": kFloat, "repeat_last_n": kInt, "temperature": kFloat, "repeat_penalty": kFloat,
	"presence_penalty": kFloat, "frequency_penalty": kFloat, "stop": kStrings,
}

type options struct {
	NumCtx, Seed, NumPredict, TopK, RepeatLastN int
	Temperature, TopP, MinP, RepeatPenalty      float64
	Stop                                        []string
}

func defaultOptions() options {
	return options{NumCtx: 4096, Seed: -1, NumPredict: -1, TopK: 40, RepeatLastN: 64, Temperature: 0.8,
		TopP: 0.9, MinP: 0.0, RepeatPenalty: 1.1}
}

func (o *options) fromMap(m map[string]interface{}) error {
	for k, v := range m {
		kind, ok := optKinds[k]
		if !ok || v == nil {
			continue // unknown options are logged and ignored
		}
		switch kind {
		case kInt:
			f, ok := v.(float64)
			if !ok {
				return fmt.Errorf("option %q must be of type integer", k)
			}
			n := int(f)
			switch k {
			case "num_ctx":
				o.NumCtx = n
			case "seed":
				o.Seed = n
			case "num_predict":
				o.NumPredict = n
			case "top_k":
				o.TopK = n
			case "repeat_last_n":
				o.RepeatLastN = n
			}
		case kFloat:
			f, ok := v.(float64)
			if !ok {
				return fmt.Errorf("option %q must be of type float32", k)
			}
			switch k {
			case "temperature":
				o.Temperature = f
			case "top_p":
				o.TopP = f
			case "min_p":
				o.MinP = f
			case "repeat_penalty":
				o.RepeatPenalty = f
			}
		case kBool:
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("option %q must be of type boolean", k)
			}
		case kStrings:
			arr, ok := v.([]interface{})
			if !ok {
				return fmt.Errorf("option %q must be of type array", k)
			}
			o.Stop = nil
			for _, x := range arr {
				s, ok := x.(string)
				if !ok {
					return fmt.Errorf("option %q must be of an array of strings", k)
				}
				o.Stop = append(o.Stop, s)
			}
		}
	}
	return nil
}

type genReq struct {
	Model       string                 `json:"model"`
	Prompt      string                 `json:"prompt"`
	System      string                 `json:"system"`
	Template    string                 `json:"template"`
	Context     []int                  `json:"context"`
	Raw         bool                   `json:"raw"`
	Stream      *bool                  `json:"stream"`
	Options     map[string]interface{} `json:"options"`
	DebugRender bool                   `json:"_debug_render_only"`
	Logprobs    bool                   `json:"logprobs"`
	TopLogprobs int                    `json:"top_logprobs"`
}

// tokenLogprob / logprob: api/types.go TokenLogprob and Logprob.
type tokenLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes,omitempty"`
}
type logprob struct {
	tokenLogprob
	TopLogprobs []tokenLogprob `json:"top_logprobs,omitempty"`
}

// stringToByteInts (server/logprob.go): the bytes of the token text, nil for "".
func byteInts(s string) []int {
	if s == "" {
		return nil
	}
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}

// renderPrompt: GenerateHandler's non-raw prompt. A request template runs the direct
// tmpl.Execute flow; otherwise the chat-like flow: the GGUF's Jinja through llama-server when the
// model runs native (>= 0.30), else chatPrompt with the model's Go template.
func (s *server) renderPrompt(m *model, req *genReq) (string, error) {
	var msgs []tmplMessage
	if req.System != "" {
		msgs = append(msgs, tmplMessage{Role: "system", Content: req.System})
	} else if m.System != "" {
		msgs = append(msgs, tmplMessage{Role: "system", Content: m.System})
	}
	msgs = append(msgs, tmplMessage{Role: "user", Content: req.Prompt})
	if req.Template != "" {
		t, err := parseTemplate(req.Template)
		if err != nil {
			return "", err
		}
		return t.execute(msgs)
	}
	native, goTmpl := s.selected(m)
	if native {
		if s.worker == nil {
			return "", errors.New("fake-ollama: no -worker for Jinja rendering")
		}
		jm := make([]map[string]string, len(msgs))
		for i, x := range msgs {
			jm[i] = map[string]string{"role": x.Role, "content": x.Content}
		}
		res, err := s.worker.call(map[string]interface{}{"op": "render_jinja", "template": m.ChatTemplate,
			"messages": jm, "bos_token": m.Bos, "eos_token": m.Eos})
		if err != nil {
			return "", fmt.Errorf("chat template: %v", err)
		}
		return res.Text, nil
	}
	return goTmpl.execute(msgs)
}

func (s *server) generate(w http.ResponseWriter, r *http.Request) {
	var req genReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		errJSON(w, 400, err.Error())
		return
	}
	hasLogprobs := !versionLess(*flagVersion, 0, 12, 11)
	if !hasLogprobs { // older servers do not know the fields (unknown JSON fields are ignored)
		req.Logprobs, req.TopLogprobs = false, 0
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > 20 {
		errJSON(w, 400, "top_logprobs must be between 0 and 20")
		return
	}
	m, err := s.lookupSource(req.Model)
	if err != nil {
		errJSON(w, 502, err.Error())
		return
	}
	if m == nil {
		errJSON(w, 404, fmt.Sprintf("model %q not found, try pulling it first", req.Model))
		return
	}
	if req.Raw && (req.Template != "" || req.System != "" || len(req.Context) > 0) {
		errJSON(w, 400, "raw mode does not support template, system, or context")
		return
	}
	opts := defaultOptions()
	if err := opts.fromMap(m.Params); err != nil {
		errJSON(w, 500, err.Error())
		return
	}
	if err := opts.fromMap(req.Options); err != nil {
		errJSON(w, 500, err.Error())
		return
	}
	if req.Prompt == "" { // GenerateHandler: an empty prompt only loads the model
		// scheduleRunner loads it first: a file the runner's llama.cpp cannot read (an unknown
		// architecture: llama_model_load "unknown model architecture") fails here, as
		// llm/server.go reports it ("llama runner process has terminated: ...")
		if s.worker != nil && *flagServeGGUF == "" {
			path := m.Path
			if path == "" {
				path = blobPath(m.Digest)
			}
			if _, err := s.worker.call(map[string]interface{}{"op": "load", "model": path}); err != nil {
				errJSON(w, 500, "llama runner process has terminated: error loading model: "+err.Error())
				return
			}
		}
		writeJSON(w, 200, map[string]interface{}{"model": req.Model, "created_at": time.Now().UTC(),
			"response": "", "done": true, "done_reason": "load"})
		return
	}
	prompt := req.Prompt
	if !req.Raw {
		if prompt, err = s.renderPrompt(m, &req); err != nil {
			errJSON(w, 500, err.Error())
			return
		}
	}
	if req.DebugRender {
		writeJSON(w, 200, map[string]interface{}{"model": req.Model, "created_at": time.Now().UTC(), "response": "",
			"done": false, "_debug_info": map[string]interface{}{"rendered_template": prompt, "image_count": 0}})
		return
	}
	gguf := m.Path
	if gguf == "" {
		gguf = blobPath(m.Digest)
	}
	if *flagServeGGUF != "" {
		gguf = *flagServeGGUF
	}
	if s.worker == nil {
		errJSON(w, 500, "fake-ollama: no -worker configured")
		return
	}
	nPredict := opts.NumPredict
	if nPredict < 0 {
		nPredict = 128
	}
	res, err := s.worker.call(map[string]interface{}{"model": gguf, "prompt": prompt, "n_predict": nPredict,
		"temperature": opts.Temperature, "top_k": opts.TopK, "top_p": opts.TopP, "min_p": opts.MinP,
		"seed": opts.Seed, "num_ctx": opts.NumCtx, "repeat_penalty": opts.RepeatPenalty,
		"repeat_last_n": opts.RepeatLastN, "add_bos": !*flagNoBOS, "top_logprobs": req.TopLogprobs})
	if err != nil {
		errJSON(w, 500, "llama runner process has terminated: "+err.Error())
		return
	}
	// The runner streams one chunk per token. Stop strings cut the text at the earliest match and
	// end the prediction (done_reason "stop"); an EOG token ends it too.
	reason := "length"
	if res.StopReason == "eog" {
		reason = "stop"
	}
	full := strings.Join(res.Pieces, "")
	cut := -1
	for _, st := range opts.Stop {
		if st == "" {
			continue
		}
		if i := strings.Index(full, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	n := len(res.Pieces)
	var chunks []string
	if cut >= 0 {
		reason = "stop"
		off := 0
		n = 0
		for _, p := range res.Pieces {
			if off+len(p) > cut {
				if off < cut {
					chunks = append(chunks, p[:cut-off]) // the text before the stop string
				}
				break
			}
			off += len(p)
			chunks = append(chunks, p)
			n++
		}
	} else {
		chunks = res.Pieces
	}
	// llamaServerRunner.Completion: more than 30 consecutive chunks trimming to the same text abort
	// the prediction; no final (done) chunk is sent then.
	aborted := false
	last, repeat := "", 0
	for i, c := range chunks {
		if strings.TrimSpace(c) == last {
			repeat++
		} else {
			last, repeat = strings.TrimSpace(c), 0
		}
		if repeat > 30 {
			chunks, aborted = chunks[:i], true
			break
		}
	}
	var lps []logprob
	if req.Logprobs {
		for i := range chunks {
			if i >= len(res.Logprobs) {
				break
			}
			wl := res.Logprobs[i]
			lp := logprob{tokenLogprob: tokenLogprob{Token: wl.Token, Logprob: wl.Logprob, Bytes: byteInts(wl.Token)}}
			if req.TopLogprobs > 0 {
				for _, t := range wl.Top {
					lp.TopLogprobs = append(lp.TopLogprobs, tokenLogprob{Token: t.Token, Logprob: t.Logprob, Bytes: byteInts(t.Token)})
				}
			}
			lps = append(lps, lp)
		}
	}
	text := strings.Join(chunks, "")
	resp := map[string]interface{}{"model": req.Model, "created_at": time.Now().UTC(), "response": text, "done": !aborted}
	if !aborted {
		resp["done_reason"] = reason
		resp["eval_count"] = n
		resp["prompt_eval_count"] = len(res.PromptIDs)
		if !req.Raw && !*flagNoContext {
			// GenerateHandler: res.Context = Tokenize(prompt + response) - the whole text again
			tk, err := s.worker.call(map[string]interface{}{"op": "tokenize", "model": gguf, "text": prompt + text, "num_ctx": opts.NumCtx})
			if err != nil {
				errJSON(w, 500, err.Error())
				return
			}
			resp["context"] = tk.IDs
		}
	}
	if len(lps) > 0 {
		resp["logprobs"] = lps
	}
	if req.Stream == nil || *req.Stream {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		f, _ := w.(http.Flusher)
		out := &ndjson{w, f}
		for i, p := range chunks {
			c := map[string]interface{}{"model": req.Model, "created_at": time.Now().UTC(), "response": p, "done": false}
			if i < len(lps) {
				c["logprobs"] = lps[i : i+1]
			}
			out.send(c)
		}
		if !aborted {
			delete(resp, "logprobs")
			resp["response"] = ""
			out.send(resp)
		}
		return
	}
	writeJSON(w, 200, resp)
}

// ---- the node worker ----
type workerRes struct {
	ID         int      `json:"id"`
	PromptIDs  []int    `json:"prompt_ids"`
	IDs        []int    `json:"ids"`
	Pieces     []string `json:"pieces"`
	Text       string   `json:"text"`
	StopReason string   `json:"stop_reason"`
	Logprobs   []struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		Top     []struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
		} `json:"top"`
	} `json:"logprobs"`
	Error string `json:"error"`
}

type worker struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
	id  int
}

func startWorker(node, script string) (*worker, error) {
	cmd := exec.Command(node, script)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &worker{in: in, out: bufio.NewReaderSize(out, 1<<20), cmd: cmd}, nil
}

func (wk *worker) call(req map[string]interface{}) (*workerRes, error) {
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
		return nil, fmt.Errorf("worker: %v", err)
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

// ---- Modelfile parsing (same observable rules as parser/parser.go) ----
type command struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

func unquote(s string) (string, bool) {
	if len(s) >= 3 && s[:3] == `"""` {
		if len(s) >= 6 && s[len(s)-3:] == `"""` {
			return s[3 : len(s)-3], true
		}
		return "", false
	}
	if len(s) >= 1 && s[0] == '"' {
		if len(s) >= 2 && s[len(s)-1] == '"' {
			return s[1 : len(s)-1], true
		}
		return "", false
	}
	return s, true
}

func parseModelfile(text string) ([]command, error) {
	var cmds []command
	rs := []rune(text)
	i := 0
	isSpace := func(r rune) bool { return r == ' ' || r == '\t' }
	isNL := func(r rune) bool { return r == '\n' || r == '\r' }
	for i < len(rs) {
		for i < len(rs) && (isSpace(rs[i]) || isNL(rs[i])) {
			i++
		}
		if i >= len(rs) {
			break
		}
		if rs[i] == '#' {
			for i < len(rs) && !isNL(rs[i]) {
				i++
			}
			continue
		}
		st := i
		for i < len(rs) && ((rs[i] >= 'a' && rs[i] <= 'z') || (rs[i] >= 'A' && rs[i] <= 'Z')) {
			i++
		}
		word := strings.ToLower(string(rs[st:i]))
		if i >= len(rs) || !isSpace(rs[i]) {
			return nil, fmt.Errorf("command must be one of \"from\", \"license\", \"template\", \"system\", \"adapter\", \"parameter\", or \"message\"")
		}
		i++
		name := word
		switch word {
		case "from":
			name = "model"
		case "parameter":
			st = i
			for i < len(rs) && (rs[i] == '_' || (rs[i] >= '0' && rs[i] <= '9') || (rs[i] >= 'a' && rs[i] <= 'z') || (rs[i] >= 'A' && rs[i] <= 'Z')) {
				i++
			}
			name = string(rs[st:i])
			if i >= len(rs) || !isSpace(rs[i]) {
				return nil, io.ErrUnexpectedEOF
			}
			i++
		case "license", "template", "system", "adapter", "message":
		default:
			return nil, fmt.Errorf("command must be one of \"from\", \"license\", \"template\", \"system\", \"adapter\", \"parameter\", or \"message\"")
		}
		var b strings.Builder
		done := false
		for i < len(rs) {
			r := rs[i]
			i++
			if isNL(r) || isSpace(r) {
				if v, ok := unquote(strings.TrimSpace(b.String())); ok && !isSpace(r) {
					cmds = append(cmds, command{name, v})
					done = true
					break
				}
				b.WriteRune(r)
				continue
			}
			if strconv.IsPrint(r) {
				b.WriteRune(r)
			}
		}
		if !done {
			v, ok := unquote(strings.TrimSpace(b.String()))
			if !ok {
				return nil, io.ErrUnexpectedEOF
			}
			cmds = append(cmds, command{name, v})
		}
	}
	hasFrom := false
	for _, c := range cmds {
		if c.Name == "model" {
			hasFrom = true
		}
	}
	if !hasFrom {
		return nil, errors.New("no FROM line")
	}
	return cmds, nil
}

// api.FormatParams for the legacy path: typed by the Options field.
func formatParam(k, v string) (interface{}, error) {
	kind, ok := optKinds[k]
	if !ok {
		return nil, fmt.Errorf("unknown parameter '%s'", k)
	}
	switch kind {
	case kInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid int value [%s]", v)
		}
		return float64(n), nil
	case kFloat:
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return nil, fmt.Errorf("invalid float value [%s]", v)
		}
		return f, nil
	case kBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("invalid bool value [%s]", v)
		}
		return b, nil
	default:
		return []interface{}{v}, nil
	}
}

// allowedHostsMiddleware (server/routes.go): on a loopback listener (the fake's only kind) the Host
// header must be a loopback/private/unspecified IP, localhost, this machine's name, or end in
// .localhost/.local/.internal; the Origin header is a separate check (OLLAMA_ORIGINS).
func hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified()
	}
	if hn, err := os.Hostname(); err == nil && strings.ToLower(hn) == host {
		return true
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") ||
		strings.HasSuffix(host, ".internal")
}

func main() {
	flag.Parse()
	if *flagParseMF != "" {
		b, err := os.ReadFile(*flagParseMF)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cmds, err := parseModelfile(string(b))
		if err != nil {
			fmt.Fprintln(os.Stderr, "parse error:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(cmds)
		return
	}
	if *flagModels == "" {
		fmt.Fprintln(os.Stderr, "-models DIR is required")
		os.Exit(2)
	}
	s := &server{models: map[string]*model{}}
	s.legacyOnly = versionLess(*flagVersion, 0, 5, 5) || *flagLegacy
	s.newEngine = !versionLess(*flagVersion, 0, 30, 0)
	if *flagWorker != "" {
		wk, err := startWorker(*flagNode, *flagWorker)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		s.worker = wk
	}
	if *flagLog != "" {
		f, err := os.OpenFile(*flagLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			s.requestsLog = f
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.root)
	mux.HandleFunc("/api/version", s.version)
	mux.HandleFunc("/api/blobs/", s.blobs)
	mux.HandleFunc("/api/create", s.create)
	mux.HandleFunc("/api/show", s.show)
	mux.HandleFunc("/api/tags", s.tags)
	mux.HandleFunc("/api/delete", s.del)
	mux.HandleFunc("/api/generate", s.generate)
	var logMu sync.Mutex
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.requestsLog != nil {
			logMu.Lock()
			fmt.Fprintf(s.requestsLog, "%s %s\n", r.Method, r.URL.Path)
			logMu.Unlock()
		}
		if *flagForbid || !hostAllowed(r.Host) {
			w.WriteHeader(http.StatusForbidden) // allowedHostsMiddleware: a bare 403
			return
		}
		mux.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", *flagAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *flagPortFile != "" {
		os.WriteFile(*flagPortFile+".tmp", []byte(strconv.Itoa(port)), 0o644)
		os.Rename(*flagPortFile+".tmp", *flagPortFile)
	}
	fmt.Fprintf(os.Stderr, "fake-ollama %s listening on 127.0.0.1:%d\n", *flagVersion, port)
	http.Serve(ln, handler)
}
