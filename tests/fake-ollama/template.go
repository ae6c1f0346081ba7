// template.go - Go TEMPLATE handling as Ollama's template package does it (template/template.go,
// v0.33), written for the fake: Parse (missingkey=zero, the json/currentDate/yesterdayDate/
// toTypeScriptType funcs, {{ .Response }} appended when the template names neither .Messages nor
// .Response), Vars (lower-cased identifiers of every field the template names), Execute (collated
// messages when the template ranges over .Messages, else the legacy per-turn mode whose last turn
// is cut at the {{ .Response }} node), and the template-selection rules of Ollama >= 0.30
// (server/images.go shouldPreferChatTemplate, routes.go shouldUseGoTemplate/selectedModelTemplate).
package main

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

var tmplFuncs = template.FuncMap{
	"json":             func(v any) string { b, _ := json.Marshal(v); return string(b) },
	"currentDate":      func(args ...string) string { return time.Now().Format("2006-01-02") },
	"yesterdayDate":    func(args ...string) string { return time.Now().AddDate(0, 0, -1).Format("2006-01-02") },
	"toTypeScriptType": func(v any) string { return "any" },
}

type ollamaTemplate struct {
	t   *template.Template
	raw string
}

// parseTemplate: template.Parse.
func parseTemplate(s string) (*ollamaTemplate, error) {
	t, err := template.New("").Option("missingkey=zero").Funcs(tmplFuncs).Parse(s)
	if err != nil {
		return nil, err
	}
	ot := &ollamaTemplate{t: t, raw: s}
	v := ot.vars()
	if !v["messages"] && !v["response"] {
		resp := &parse.ActionNode{NodeType: parse.NodeAction, Pipe: &parse.PipeNode{NodeType: parse.NodePipe,
			Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Args: []parse.Node{
				&parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}}}}}}
		t.Tree.Root.Nodes = append(t.Tree.Root.Nodes, resp)
	}
	return ot, nil
}

// walk visits every node below n (pre-order); f returning false skips the children.
func walk(n parse.Node, f func(parse.Node) bool) {
	if n == nil || !f(n) {
		return
	}
	switch x := n.(type) {
	case *parse.ListNode:
		if x != nil {
			for _, c := range x.Nodes {
				walk(c, f)
			}
		}
	case *parse.ActionNode:
		walk(x.Pipe, f)
	case *parse.PipeNode:
		if x != nil {
			for _, c := range x.Cmds {
				walk(c, f)
			}
		}
	case *parse.CommandNode:
		for _, a := range x.Args {
			walk(a, f)
		}
	case *parse.IfNode:
		walkBranch(&x.BranchNode, f)
	case *parse.RangeNode:
		walkBranch(&x.BranchNode, f)
	case *parse.WithNode:
		walkBranch(&x.BranchNode, f)
	case *parse.TemplateNode:
		walk(x.Pipe, f)
	}
}

func walkBranch(b *parse.BranchNode, f func(parse.Node) bool) {
	walk(b.Pipe, f)
	if b.List != nil {
		walk(b.List, f)
	}
	if b.ElseList != nil {
		walk(b.ElseList, f)
	}
}

// vars: Template.Vars - every identifier of every field/chain/variable node, lower-cased.
func (ot *ollamaTemplate) vars() map[string]bool {
	out := map[string]bool{}
	for _, tt := range ot.t.Templates() {
		if tt.Tree == nil {
			continue
		}
		walk(tt.Root, func(n parse.Node) bool {
			switch x := n.(type) {
			case *parse.FieldNode:
				for _, id := range x.Ident {
					out[strings.ToLower(id)] = true
				}
			case *parse.ChainNode:
				for _, id := range x.Field {
					out[strings.ToLower(id)] = true
				}
			case *parse.VariableNode:
				for _, id := range x.Ident[1:] {
					out[strings.ToLower(id)] = true
				}
			}
			return true
		})
	}
	return out
}

// tmplMessage: the fields Ollama's convertMessagesForTemplate exposes to a template.
type tmplMessage struct {
	Role, Content, Thinking, ToolName, ToolCallID string
	Images                                        []string
	ToolCalls                                     []any
}

// collate: consecutive same-role messages joined by "\n\n"; all system messages joined into System.
func collate(msgs []tmplMessage) (string, []tmplMessage) {
	var system []string
	var out []tmplMessage
	for _, m := range msgs {
		if m.Role == "system" {
			system = append(system, m.Content)
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role && m.Role != "tool" {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, m)
	}
	return strings.Join(system, "\n\n"), out
}

// cutAtResponse: a copy of the tree with everything from the first {{ .Response }} on removed (the
// last legacy turn ends where the model's answer starts).
func cutAtResponse(root *parse.ListNode) *parse.ListNode {
	cut := false
	var prune func(l *parse.ListNode) *parse.ListNode
	prune = func(l *parse.ListNode) *parse.ListNode {
		if l == nil {
			return nil
		}
		nl := &parse.ListNode{NodeType: parse.NodeList}
		for _, n := range l.Nodes {
			if cut {
				break
			}
			hasResp := false
			walk(n, func(m parse.Node) bool {
				if f, ok := m.(*parse.FieldNode); ok {
					for _, id := range f.Ident {
						if id == "Response" {
							hasResp = true
						}
					}
				}
				return !hasResp
			})
			if !hasResp {
				nl.Nodes = append(nl.Nodes, n)
				continue
			}
			switch x := n.(type) {
			case *parse.IfNode:
				c := *x
				c.List, c.ElseList = prune(x.List), prune(x.ElseList)
				nl.Nodes = append(nl.Nodes, &c)
			case *parse.RangeNode:
				c := *x
				c.List, c.ElseList = prune(x.List), prune(x.ElseList)
				nl.Nodes = append(nl.Nodes, &c)
			case *parse.WithNode:
				c := *x
				c.List, c.ElseList = prune(x.List), prune(x.ElseList)
				nl.Nodes = append(nl.Nodes, &c)
			}
			cut = true
		}
		return nl
	}
	return prune(root.CopyList())
}

func (ot *ollamaTemplate) exec(tree *parse.ListNode, data map[string]any, b *bytes.Buffer) error {
	t := ot.t
	if tree != nil {
		nt, err := template.New("").Option("missingkey=zero").Funcs(tmplFuncs).AddParseTree("", &parse.Tree{Root: tree})
		if err != nil {
			return err
		}
		t = nt
	}
	return t.Execute(b, data)
}

// execute: Template.Execute with Values{Messages} (no suffix, no tools, think unset).
func (ot *ollamaTemplate) execute(msgs []tmplMessage) (string, error) {
	system, collated := collate(msgs)
	var b bytes.Buffer
	base := map[string]any{"Think": false, "ThinkLevel": "", "IsThinkSet": false}
	if ot.vars()["messages"] {
		d := map[string]any{"System": system, "Messages": collated, "Tools": []any{}, "Response": ""}
		for k, v := range base {
			d[k] = v
		}
		err := ot.exec(nil, d, &b)
		return b.String(), err
	}
	system = ""
	var prompt, response string
	turn := func(tree *parse.ListNode) error {
		d := map[string]any{"System": system, "Prompt": prompt, "Response": response}
		for k, v := range base {
			d[k] = v
		}
		system, prompt, response = "", "", ""
		return ot.exec(tree, d, &b)
	}
	for _, m := range collated {
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				if err := turn(nil); err != nil {
					return "", err
				}
			}
			system = m.Content
		case "user":
			if response != "" {
				if err := turn(nil); err != nil {
					return "", err
				}
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}
	err := turn(cutAtResponse(ot.t.Tree.Root))
	return b.String(), err
}

// ---- template capabilities and selection (server/images.go, >= 0.30) ----

// jinjaCaps: chatTemplateCapabilities - tools if the Jinja mentions "tools" or "tool_call",
// thinking if it has both <think> and </think> (or splits content at '</think>').
func jinjaCaps(j string) []string {
	var c []string
	if strings.Contains(j, "tools") || strings.Contains(j, "tool_call") {
		c = append(c, "tools")
	}
	if (strings.Contains(j, "<think>") && strings.Contains(j, "</think>")) ||
		((strings.Contains(j, "content.split('</think>')") || strings.Contains(j, `content.split("</think>")`)) &&
			!strings.Contains(j, "reasoning_content") && !strings.Contains(j, "<SPECIAL_12>")) {
		c = append(c, "thinking")
	}
	return c
}

func jinjaToolRoundTrip(j string) bool {
	if !(strings.Contains(j, "tools") || strings.Contains(j, "tool_call")) {
		return false
	}
	calls := strings.Contains(j, "tool_calls") || strings.Contains(j, "assistant_tool_call")
	if !calls {
		return false
	}
	for _, s := range []string{"tool_response", "tool_results", "role'] == 'tool'", `role'] == "tool"`,
		`role"] == 'tool'`, `role"] == "tool"`, "message.role == 'tool'", `message.role == "tool"`, "ipython"} {
		if strings.Contains(j, s) {
			return true
		}
	}
	return false
}

// goCaps: goTemplateCapabilities - tools from .Tools, insert from .Suffix, thinking when
// thinking.InferTags finds the tags around {{ .Thinking }} inside a range over .Messages
// (simplified here: the template names .Thinking inside a range and has literal text around it).
func goCaps(ot *ollamaTemplate) []string {
	if ot == nil {
		return nil
	}
	v := ot.vars()
	var c []string
	if v["tools"] {
		c = append(c, "tools")
	}
	if v["suffix"] {
		c = append(c, "insert")
	}
	if v["thinking"] && v["messages"] {
		c = append(c, "thinking")
	}
	return c
}

func goToolRoundTrip(ot *ollamaTemplate) bool {
	if ot == nil {
		return false
	}
	v := ot.vars()
	if !v["tools"] || !v["toolcalls"] {
		return false
	}
	return strings.Contains(ot.raw, `eq .Role "tool"`) || strings.Contains(ot.raw, "tool_response") ||
		strings.Contains(ot.raw, "TOOL_RESULTS")
}

func sameCaps(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	sa, sb := append([]string{}, a...), append([]string{}, b...)
	sort.Strings(sa)
	sort.Strings(sb)
	return strings.Join(sa, ",") == strings.Join(sb, ",")
}

func hasCap(c []string, x string) bool {
	for _, y := range c {
		if y == x {
			return true
		}
	}
	return false
}

// shouldPreferChatTemplate (server/images.go): the GGUF's Jinja wins when it exposes more
// capabilities than the Go TEMPLATE (unless only the Go one round-trips tool results), or the same
// tool capability but only the Jinja round-trips tool calls.
func shouldPreferChatTemplate(jinja string, ot *ollamaTemplate) bool {
	jc, gc := jinjaCaps(jinja), goCaps(ot)
	if len(jc) > len(gc) {
		return !goToolRoundTrip(ot) || jinjaToolRoundTrip(jinja)
	}
	if !sameCaps(jc, gc) || !hasCap(jc, "tools") || !hasCap(gc, "tools") {
		return false
	}
	return jinjaToolRoundTrip(jinja) && !goToolRoundTrip(ot)
}
