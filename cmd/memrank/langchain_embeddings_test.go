package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLangChainEmbeddings: LangChain.js's OpenAIEmbeddings, its baseURL at
// memrank (test/js/embeddings.mjs), embeds texts with the built-in
// semantic embedder into the very float32 vectors /v1/observe stored for
// them, whether the openai package asks for base64 (its default) or floats.
func TestLangChainEmbeddings(t *testing.T) {
	node := needTool(t, "MEMRANK_JS_TESTS", "node",
		"install Node 20+ and run `npm ci --prefix test/js`, then `go test -run TestLangChainEmbeddings ./cmd/memrank/`",
		filepath.Join(jsDir, "node_modules", "@langchain", "openai", "package.json"))
	dir := absDir(t, jsDir)
	httpAddr, _, _ := startServe(t, "--data", t.TempDir())
	base := "http://" + httpAddr
	texts := []string{"Dana uses Neovim", "The deploy runs on Fridays at 5pm", "Ωmega café ☕ costs €3"}

	stored := make([][]uint32, len(texts))
	for i, text := range texts {
		body, _ := json.Marshal(map[string]string{"collection": "notes", "text": text})
		code, got := jsonRequest(t, "POST", base+"/v1/observe", string(body))
		var out struct {
			Result struct {
				MemoryID string `json:"memory_id"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(got), &out); code != 200 || err != nil {
			t.Fatalf("observe %q: %d %s", text, code, got)
		}
		code, got = jsonRequest(t, "POST", base+"/collections/notes/points",
			`{"ids":["`+out.Result.MemoryID+`"],"with_vector":true}`)
		var pts struct {
			Result []struct {
				Vector []json.Number `json:"vector"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(got), &pts); code != 200 || err != nil || len(pts.Result) != 1 {
			t.Fatalf("the stored point of %q: %d %.300s", text, code, got)
		}
		for _, n := range pts.Result[0].Vector {
			f, err := strconv.ParseFloat(n.String(), 32)
			if err != nil {
				t.Fatal(err)
			}
			stored[i] = append(stored[i], math.Float32bits(float32(f)))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	textsJSON, _ := json.Marshal(texts)
	cmd := exec.CommandContext(ctx, node, "embeddings.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MEMRANK="+base, "TEXTS="+string(textsJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("node embeddings.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	type vectors struct {
		Documents []string `json:"documents"`
		Query     string   `json:"query"`
	}
	var rep struct {
		Requests []struct {
			Path           string  `json:"path"`
			Model          string  `json:"model"`
			EncodingFormat *string `json:"encoding_format"`
		} `json:"requests"`
		Default vectors `json:"default"`
		Float   vectors `json:"float"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("embeddings.mjs printed no report: %v\nstdout:\n%.2000s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	formats := map[string]bool{}
	for _, r := range rep.Requests {
		if r.Path != "/v1/embeddings" || r.Model != "memrank-local-sem-v1:384" || r.EncodingFormat == nil {
			t.Errorf("the client sent %+v", r)
			continue
		}
		formats[*r.EncodingFormat] = true
	}
	if !formats["base64"] || !formats["float"] {
		t.Errorf("the client asked for encodings %v, want base64 (its default) and float", formats)
	}
	decode := func(s string) []uint32 {
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]uint32, len(raw)/4)
		for i := range out {
			out[i] = binary.LittleEndian.Uint32(raw[4*i:])
		}
		return out
	}
	for name, v := range map[string]vectors{"default (base64)": rep.Default, "float": rep.Float} {
		t.Run(name, func(t *testing.T) {
			var docs [][]uint32
			for _, d := range v.Documents {
				docs = append(docs, decode(d))
			}
			if d := cmp.Diff(stored, docs); d != "" {
				t.Errorf("embedDocuments differs from what /v1/observe stored (-stored +LangChain):\n%s", d)
			}
			if d := cmp.Diff(stored[0], decode(v.Query)); d != "" {
				t.Errorf("embedQuery differs from what /v1/observe stored (-stored +LangChain):\n%s", d)
			}
		})
	}
}
