// ggufinfo.go - just enough GGUF header reading for the fake Ollama and LM Studio servers: magic check and the string/int KVs
// they report (general.architecture, general.file_type, general.name, context length).
package ggufinfo

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

type Info struct {
	Arch     string
	Name     string
	FileType int64
	KV       map[string]interface{}
	// ChatTemplate is tokenizer.chat_template ("" when absent); Tokens is tokenizer.ggml.tokens (for
	// the BOS/EOS texts a Jinja render gets)
	ChatTemplate string
	Tokens       []string
}

// TokenText returns the text of token id KV key (e.g. "tokenizer.ggml.bos_token_id"), "" if unknown.
func (i *Info) TokenText(key string) string {
	id, ok := i.KV[key].(int64)
	if !ok || id < 0 || id >= int64(len(i.Tokens)) {
		return ""
	}
	return i.Tokens[id]
}

var ftypeNames = map[int64]string{0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
	17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}

func IsGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	if _, err := io.ReadFull(f, m[:]); err != nil {
		return false
	}
	return string(m[:]) == "GGUF"
}

func Read(path string) (*Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr struct {
		Magic   [4]byte
		Version uint32
		NT, NKV uint64
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, err
	}
	if string(hdr.Magic[:]) != "GGUF" {
		return nil, errors.New("invalid file magic")
	}
	info := &Info{FileType: -1, KV: map[string]interface{}{}}
	readStr := func() (string, error) {
		var n uint64
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return "", err
		}
		if n > 1<<28 {
			return "", fmt.Errorf("string too long")
		}
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return string(b), err
	}
	collectTokens := false
	var readVal func(t uint32) (interface{}, error)
	readVal = func(t uint32) (interface{}, error) {
		switch t {
		case 0, 1, 7:
			var v uint8
			err := binary.Read(r, binary.LittleEndian, &v)
			return int64(v), err
		case 2, 3:
			var v uint16
			err := binary.Read(r, binary.LittleEndian, &v)
			return int64(v), err
		case 4:
			var v uint32
			err := binary.Read(r, binary.LittleEndian, &v)
			return int64(v), err
		case 5:
			var v int32
			err := binary.Read(r, binary.LittleEndian, &v)
			return int64(v), err
		case 6:
			var v float32
			err := binary.Read(r, binary.LittleEndian, &v)
			return float64(v), err
		case 8:
			return readStr()
		case 9:
			var et uint32
			var n uint64
			if err := binary.Read(r, binary.LittleEndian, &et); err != nil {
				return nil, err
			}
			if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
				return nil, err
			}
			for i := uint64(0); i < n; i++ {
				v, err := readVal(et)
				if err != nil {
					return nil, err
				}
				if collectTokens {
					s, _ := v.(string)
					info.Tokens = append(info.Tokens, s)
				}
			}
			return fmt.Sprintf("[array of %d]", n), nil
		case 10, 11:
			var v uint64
			err := binary.Read(r, binary.LittleEndian, &v)
			return int64(v), err
		case 12:
			var v float64
			err := binary.Read(r, binary.LittleEndian, &v)
			return v, err
		}
		return nil, fmt.Errorf("bad value type %d", t)
	}
	for i := uint64(0); i < hdr.NKV; i++ {
		k, err := readStr()
		if err != nil {
			return nil, err
		}
		var t uint32
		if err := binary.Read(r, binary.LittleEndian, &t); err != nil {
			return nil, err
		}
		collectTokens = k == "tokenizer.ggml.tokens"
		v, err := readVal(t)
		collectTokens = false
		if err != nil {
			return nil, err
		}
		if k == "tokenizer.chat_template" {
			info.ChatTemplate, _ = v.(string)
		}
		if t != 9 && k != "tokenizer.chat_template" {
			info.KV[k] = v
		}
		switch k {
		case "general.architecture":
			info.Arch, _ = v.(string)
		case "general.name":
			info.Name, _ = v.(string)
		case "general.file_type":
			info.FileType, _ = v.(int64)
		}
	}
	return info, nil
}

func (g *Info) Quant() string {
	if s, ok := ftypeNames[g.FileType]; ok {
		return s
	}
	return "unknown"
}
