// render_go renders one of sunny's Go chat templates (templates/data/*.gotmpl) the way Ollama's
// template package executes a Modelfile TEMPLATE, so tests can compare it byte for byte with the
// model's own Jinja rendered by tests/tools/render_jinja.py. Standard library only.
//
// Semantics reproduced (Ollama's template package, see docs/TEMPLATES.md), written from that description:
//   - text/template with missingkey=zero and the extra funcs json, currentDate, yesterdayDate;
//   - a template that references neither .Messages nor .Response gets {{ .Response }} appended;
//   - messages mode (template mentions .Messages): one execution; consecutive messages of the same
//     role are merged with "\n\n"; all system contents joined with "\n\n" become .System;
//   - legacy mode: one execution per (system, prompt, response) turn, system only on the first,
//     and the last turn executed with everything after the first .Response node cut away;
//   - a default system prompt (-system, the Modelfile SYSTEM) is prepended as a message when the
//     conversation does not start with a system message.
//
// Usage: render_go -template FILE -conversations conversations.json -out DIR [-system TEXT]
// Writes DIR/NAME.txt per conversation (DIR/NAME.err when execution fails).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

type toolFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	Thinking   string `json:"thinking,omitempty"`
	Images     []string
	ToolCalls  []any
	ToolName   string
	ToolCallID string
}

type conversation struct {
	Name     string                     `json:"name"`
	Messages []message                  `json:"messages"`
	Kwargs   map[string]json.RawMessage `json:"kwargs"`
}

var funcs = template.FuncMap{
	"json": func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	},
	"currentDate": func(args ...string) string {
		return time.Now().Format("2006-01-02")
	},
	"yesterdayDate": func(args ...string) string {
		return time.Now().AddDate(0, 0, -1).Format("2006-01-02")
	},
}

// identifiers collects every field/variable name the template mentions, lower-cased.
func identifiers(n parse.Node, out map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			identifiers(c, out)
		}
	case *parse.ActionNode:
		identifiers(n.Pipe, out)
	case *parse.TemplateNode:
		if n.Pipe != nil {
			identifiers(n.Pipe, out)
		}
	case *parse.IfNode:
		identifiers(&n.BranchNode, out)
	case *parse.RangeNode:
		identifiers(&n.BranchNode, out)
	case *parse.WithNode:
		identifiers(&n.BranchNode, out)
	case *parse.BranchNode:
		identifiers(n.Pipe, out)
		identifiers(n.List, out)
		if n.ElseList != nil {
			identifiers(n.ElseList, out)
		}
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			for _, a := range c.Args {
				identifiers(a, out)
			}
		}
	case *parse.FieldNode:
		for _, id := range n.Ident {
			out[strings.ToLower(id)] = true
		}
	case *parse.VariableNode:
		for _, id := range n.Ident {
			out[strings.ToLower(id)] = true
		}
	case *parse.ChainNode:
		identifiers(n.Node, out)
		for _, f := range n.Field {
			out[strings.ToLower(f)] = true
		}
	}
}

// cutAfterResponse removes, in document order, every node that follows the first .Response field
// (the field itself stays). Returns true once the cut point has been seen.
func cutAfterResponse(n parse.Node, seen *bool) (keep bool) {
	if *seen {
		return false
	}
	switch n := n.(type) {
	case *parse.ListNode:
		var kept []parse.Node
		for _, c := range n.Nodes {
			if cutAfterResponse(c, seen) {
				kept = append(kept, c)
			}
		}
		n.Nodes = kept
	case *parse.ActionNode:
		return cutAfterResponse(n.Pipe, seen)
	case *parse.IfNode:
		cutBranch(&n.BranchNode, seen)
	case *parse.RangeNode:
		cutBranch(&n.BranchNode, seen)
	case *parse.WithNode:
		cutBranch(&n.BranchNode, seen)
	case *parse.PipeNode:
		var cmds []*parse.CommandNode
		for _, c := range n.Cmds {
			var args []parse.Node
			for _, a := range c.Args {
				if cutAfterResponse(a, seen) {
					args = append(args, a)
				}
			}
			if len(args) == 0 {
				continue
			}
			c.Args = args
			cmds = append(cmds, c)
		}
		if len(cmds) == 0 {
			return false
		}
		n.Cmds = cmds
	case *parse.FieldNode:
		for _, id := range n.Ident {
			if id == "Response" {
				*seen = true
			}
		}
	}
	return true
}

func cutBranch(b *parse.BranchNode, seen *bool) {
	cutAfterResponse(b.Pipe, seen)
	cutAfterResponse(b.List, seen)
	if b.ElseList != nil {
		cutAfterResponse(b.ElseList, seen)
	}
}

func parseTemplate(text string) (*template.Template, map[string]bool, error) {
	t, err := template.New("").Option("missingkey=zero").Funcs(funcs).Parse(text)
	if err != nil {
		return nil, nil, err
	}
	vars := map[string]bool{}
	identifiers(t.Tree.Root, vars)
	if !vars["messages"] && !vars["response"] {
		resp := &parse.ActionNode{NodeType: parse.NodeAction, Pipe: &parse.PipeNode{
			NodeType: parse.NodePipe,
			Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand,
				Args: []parse.Node{&parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}}}},
		}}
		t.Tree.Root.Nodes = append(t.Tree.Root.Nodes, resp)
	}
	return t, vars, nil
}

func collate(msgs []message) (string, []*message) {
	var system []string
	var out []*message
	for i := range msgs {
		m := msgs[i]
		if m.Role == "system" {
			system = append(system, m.Content)
		}
		if len(out) > 0 && out[len(out)-1].Role == m.Role && m.Role != "tool" {
			out[len(out)-1].Content += "\n\n" + m.Content
		} else {
			out = append(out, &m)
		}
	}
	return strings.Join(system, "\n\n"), out
}

func render(src string, c conversation, defaultSystem string) (string, error) {
	t, vars, err := parseTemplate(src)
	if err != nil {
		return "", err
	}
	msgs := c.Messages
	if defaultSystem != "" && (len(msgs) == 0 || msgs[0].Role != "system") {
		msgs = append([]message{{Role: "system", Content: defaultSystem}}, msgs...)
	}
	think, thinkSet := false, false
	var tools []tool
	if raw, ok := c.Kwargs["enable_thinking"]; ok {
		thinkSet = true
		if err := json.Unmarshal(raw, &think); err != nil {
			return "", err
		}
	}
	if raw, ok := c.Kwargs["tools"]; ok {
		if err := json.Unmarshal(raw, &tools); err != nil {
			return "", err
		}
	}
	system, collated := collate(msgs)
	var b bytes.Buffer
	if vars["messages"] {
		err := t.Execute(&b, map[string]any{
			"System": system, "Messages": collated, "Tools": tools, "Response": "",
			"Think": think, "IsThinkSet": thinkSet,
		})
		return b.String(), err
	}
	// legacy mode
	sys, prompt, response := "", "", ""
	exec := func(tt *template.Template) error {
		err := tt.Execute(&b, map[string]any{
			"System": sys, "Prompt": prompt, "Response": response,
			"Think": think, "IsThinkSet": thinkSet,
		})
		sys, prompt, response = "", "", ""
		return err
	}
	for _, m := range collated {
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				if err := exec(t); err != nil {
					return "", err
				}
			}
			sys = m.Content
		case "user":
			if response != "" {
				if err := exec(t); err != nil {
					return "", err
				}
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}
	root := t.Tree.Root.CopyList()
	seen := false
	cutAfterResponse(root, &seen)
	last, err := template.New("").Option("missingkey=zero").Funcs(funcs).
		AddParseTree("", &parse.Tree{Name: "", Root: root})
	if err != nil {
		return "", err
	}
	if err := exec(last); err != nil {
		return "", err
	}
	return b.String(), nil
}

func main() {
	tmplPath := flag.String("template", "", "Go template file")
	convPath := flag.String("conversations", "", "conversations.json")
	outDir := flag.String("out", "", "output directory")
	system := flag.String("system", "", "default system prompt (Modelfile SYSTEM)")
	flag.Parse()
	if *tmplPath == "" || *convPath == "" || *outDir == "" {
		flag.Usage()
		os.Exit(2)
	}
	src, err := os.ReadFile(*tmplPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	raw, err := os.ReadFile(*convPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var doc struct {
		Conversations []conversation `json:"conversations"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *convPath, err)
		os.Exit(1)
	}
	if _, _, err := parseTemplate(string(src)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *tmplPath, err)
		os.Exit(1)
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, c := range doc.Conversations {
		text, err := render(string(src), c, *system)
		base := filepath.Join(*outDir, c.Name)
		if err != nil {
			os.WriteFile(base+".err", []byte(err.Error()+"\n"), 0o644)
			continue
		}
		if err := os.WriteFile(base+".txt", []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
