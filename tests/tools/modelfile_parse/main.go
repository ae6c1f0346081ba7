// modelfile_parse reads Modelfiles the way Ollama's parser package does (parser/parser.go:
// ParseFile, parseRuneForState, unquote, isSpace/isNewline, isValidCommand) and prints, per file,
// the commands it yields as JSON: {"file":..., "commands":[{"name","args"}...]} or {"file","error"}.
// Written from reading that code, not copied. What it reproduces, because sunny's Modelfile writer
// depends on each point:
//   - the input is decoded as UTF-8 with a leading BOM dropped; ill-formed bytes become U+FFFD;
//   - a line is a command word (letters, case-insensitive), then for PARAMETER a name of letters,
//     digits and '_', for MESSAGE a role; each followed by one space or tab;
//   - a value collects runes until a space, tab or newline at which unquote(TrimSpace(text so far))
//     succeeds; on a space or tab the value still goes on (only a newline or the end finishes it),
//     and the space itself is kept;
//   - only runes strconv.IsPrint accepts are kept, plus the space/tab/newline written at a point
//     where the value could not end yet; everything else vanishes without an error;
//   - unquote strips """...""" or "..." (an unmatched opening quote is not complete yet);
//   - '#' starts a comment only where a command could start; no FROM is an error.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

type command struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

type phase int

const (
	idle phase = iota // between commands
	word              // reading the command word
	value             // reading a value
	param             // reading a PARAMETER name
	role              // reading a MESSAGE role
	comment
)

func blank(r rune) bool   { return r == ' ' || r == '\t' }
func newline(r rune) bool { return r == '\n' || r == '\r' }
func letter(r rune) bool  { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

var commands = map[string]bool{"from": true, "license": true, "template": true, "system": true, "adapter": true,
	"draft": true, "renderer": true, "parser": true, "parameter": true, "message": true, "requires": true}

var errCommand = errors.New("invalid command")

func stripQuotes(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, `"""`):
		if len(s) >= 6 && strings.HasSuffix(s, `"""`) {
			return s[3 : len(s)-3], true
		}
		return "", false
	case strings.HasPrefix(s, `"`):
		if len(s) >= 2 && strings.HasSuffix(s, `"`) {
			return s[1 : len(s)-1], true
		}
		return "", false
	}
	return s, true
}

// step: the phase after rune r in phase p, and whether r belongs to the buffer
func step(p phase, r rune) (phase, bool, error) {
	switch p {
	case idle:
		if r == '#' {
			return comment, false, nil
		}
		if blank(r) || newline(r) {
			return idle, false, nil
		}
		return word, true, nil
	case word:
		if letter(r) {
			return word, true, nil
		}
		if blank(r) {
			return value, false, nil
		}
		return idle, false, errCommand
	case param, role:
		if letter(r) || (p == param && (r == '_' || r >= '0' && r <= '9')) {
			return p, true, nil
		}
		if blank(r) {
			return value, false, nil
		}
		return idle, false, io.ErrUnexpectedEOF
	case value:
		if blank(r) || newline(r) {
			return idle, true, nil
		}
		return value, true, nil
	default: // comment
		if newline(r) {
			return idle, false, nil
		}
		return comment, false, nil
	}
}

func parse(data []byte) ([]command, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	rd := bufio.NewReader(bytes.NewReader(data))
	var out []command
	var buf strings.Builder
	var cur command
	var who string
	p := idle
	for {
		r, _, err := rd.ReadRune() // ill-formed input reads as U+FFFD
		if err == io.EOF {
			break
		}
		next, keep, err := step(p, r)
		if err != nil {
			return nil, err
		}
		if next != p {
			switch p {
			case word:
				w := strings.ToLower(buf.String())
				if !commands[w] {
					return nil, errCommand
				}
				switch w {
				case "from":
					cur.Name = "model"
				case "parameter":
					next = param
				case "message":
					next, cur.Name = role, w
				default:
					cur.Name = w
				}
			case param:
				cur.Name = buf.String()
			case role:
				who = buf.String()
				if who != "system" && who != "user" && who != "assistant" {
					return nil, errors.New("invalid message role")
				}
			case value:
				v, complete := stripQuotes(strings.TrimSpace(buf.String()))
				if !complete || blank(r) {
					buf.WriteRune(r) // not the end: the blank or newline is part of the value
					continue
				}
				if who != "" {
					v, who = who+": "+v, ""
				}
				cur.Args = v
				out = append(out, cur)
			}
			buf.Reset()
			p = next
		}
		if keep && strconv.IsPrint(r) {
			buf.WriteRune(r)
		}
	}
	switch p {
	case value:
		v, complete := stripQuotes(strings.TrimSpace(buf.String()))
		if !complete {
			return nil, io.ErrUnexpectedEOF
		}
		if who != "" {
			v = who + ": " + v
		}
		cur.Args = v
		out = append(out, cur)
	case idle, comment:
	default:
		return nil, io.ErrUnexpectedEOF
	}
	for _, c := range out {
		if c.Name == "model" {
			return out, nil
		}
	}
	return nil, errors.New("no FROM line")
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	for _, f := range os.Args[1:] {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cmds, err := parse(data)
		res := map[string]interface{}{"file": f}
		if err != nil {
			res["error"] = err.Error()
		} else {
			res["commands"] = cmds
		}
		enc.Encode(res)
	}
}
