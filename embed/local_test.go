package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func mustLocal(t testing.TB, dims int) *Local {
	t.Helper()
	l, err := NewLocal(dims)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func embedAll(t testing.TB, e Embedder, texts ...string) [][]float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(dot(v, v)) }

func TestNewLocalDimensions(t *testing.T) {
	tests := []struct {
		dims int
		ok   bool
	}{
		{-1, false}, {0, false}, {1, true}, {2, true}, {384, true}, {1536, true}, {MaxDimensions, true}, {MaxDimensions + 1, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.dims), func(t *testing.T) {
			l, err := NewLocal(tt.dims)
			if !tt.ok {
				if !errors.Is(err, ErrDimensions) {
					t.Fatalf("NewLocal(%d) error %v, want ErrDimensions", tt.dims, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Dimensions() != tt.dims {
				t.Errorf("Dimensions() = %d", l.Dimensions())
			}
			if want := fmt.Sprintf("memrank-local-hash-v1:%d", tt.dims); l.Model() != want {
				t.Errorf("Model() = %q, want %q", l.Model(), want)
			}
			for i, v := range embedAll(t, l, "Dana uses Neovim", "", "x") {
				if len(v) != tt.dims {
					t.Errorf("vector %d has %d components, want %d", i, len(v), tt.dims)
				}
				if n := norm(v); math.Abs(n-1) > 1e-5 {
					t.Errorf("vector %d has norm %v", i, n)
				}
			}
		})
	}
}

// goldenTexts cover ASCII, stop words, repetition, non-Latin scripts and the
// empty text.
var goldenTexts = []string{
	"Dana uses Neovim as her main editor",
	"what editor does Dana use",
	"the the the",
	"Dana wohnt in Köln — 東京 too!",
	"",
}

// TestLocalGolden pins the vectors themselves: the model name promises that
// memrank-local-hash-v1 vectors never change, since collections store them.
// A change here needs a new LocalModelVersion, not a new golden file.
func TestLocalGolden(t *testing.T) {
	l := mustLocal(t, 32)
	type line struct {
		Text   string    `json:"text"`
		Vector []float32 `json:"vector"`
	}
	var got []line
	for i, v := range embedAll(t, l, goldenTexts...) {
		got = append(got, line{goldenTexts[i], v})
	}
	path := filepath.Join("testdata", "local-v1-32.golden.jsonl")
	if *update {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for _, g := range got {
			if err := enc.Encode(g); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []line
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		want = append(want, l)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("vectors moved (-golden +got):\n%s", diff)
	}
}

func TestLocalDeterministicAcrossInstances(t *testing.T) {
	a := embedAll(t, mustLocal(t, 384), goldenTexts...)
	b := embedAll(t, mustLocal(t, 384), goldenTexts...)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two embedders disagree:\n%s", diff)
	}
	// A batch gives what single calls give: no state carries over between
	// texts through the pooled scratch space.
	l := mustLocal(t, 384)
	for i, text := range goldenTexts {
		one := embedAll(t, l, text)[0]
		if diff := cmp.Diff(a[i], one); diff != "" {
			t.Errorf("%q alone differs from in a batch:\n%s", text, diff)
		}
	}
}

func TestLocalEmptyAndFeaturelessTexts(t *testing.T) {
	l := mustLocal(t, 384)
	v := embedAll(t, l, "", "   ", "?!…", "\xff\xfe", "Dana")
	for i := range 4 {
		if diff := cmp.Diff(v[0], v[i]); diff != "" {
			t.Errorf("text %d without letters or digits differs from the empty text:\n%s", i, diff)
		}
	}
	nonzero := 0
	for _, x := range v[0] {
		if x != 0 {
			nonzero++
			if x != 1 && x != -1 {
				t.Errorf("empty-text component %v, want ±1", x)
			}
		}
	}
	if nonzero != 1 {
		t.Errorf("empty-text vector has %d non-zero components, want 1", nonzero)
	}
	if c := dot(v[0], v[4]); math.Abs(c) > 0.3 {
		t.Errorf("empty text is close to a real text: cos %v", c)
	}
}

func TestLocalNormalisationInvariance(t *testing.T) {
	l := mustLocal(t, 384)
	v := embedAll(t, l, "Dana uses Neovim.", "  dana USES   neovim ", "Ｄａｎａ uses Neovim")
	for i := 1; i < len(v); i++ {
		if c := dot(v[0], v[i]); c < 1-1e-6 {
			t.Errorf("text %d: cos %v, want 1 (same normalised text)", i, c)
		}
	}
}

// TestLocalLexicalSimilarity is the property the demo relies on: texts that
// share words are closer than texts that do not, and word order matters only
// through bigrams.
func TestLocalLexicalSimilarity(t *testing.T) {
	l := mustLocal(t, 384)
	tests := []struct {
		name              string
		anchor, near, far string
	}{
		{"paraphrase with shared words", "Dana uses Neovim as her editor", "Neovim is the editor Dana uses", "The production database is PostgreSQL 16"},
		{"question to its answer", "what editor does Dana use", "Dana's editor is Neovim", "Dana lives in Lisbon"},
		{"inflection through character n-grams", "Dana lives in Lisbon", "Dana has been living in Lisbon", "Dana prefers dark mode"},
		{"version numbers", "database version", "The database runs version 16 of PostgreSQL", "Dana likes hiking in the Alps"},
		{"function words do not dominate", "where is the office", "office address: Rua Augusta 12", "where is it and what is it"},
		{"plural and third-person s", "where does Dana live", "Lives in Lisbon", "Takes notes in Obsidian"},
		{"possessive", "Dana's editor", "dana editor settings", "Sam's editor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := embedAll(t, l, tt.anchor, tt.near, tt.far)
			near, far := dot(v[0], v[1]), dot(v[0], v[2])
			if near <= far {
				t.Errorf("cos(anchor, near) = %.3f <= cos(anchor, far) = %.3f", near, far)
			}
		})
	}
	// Lexical, not semantic: synonyms without shared pieces are unrelated.
	v := embedAll(t, l, "car", "automobile")
	if c := dot(v[0], v[1]); math.Abs(c) > 0.2 {
		t.Errorf("cos(car, automobile) = %.3f; the local embedder is not supposed to know synonyms", c)
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"lives": "live", "editors": "editor", "danas": "dana", "cities": "city", "uses": "use",
		"class": "class", "status": "status", "this": "this", "is": "is", "bus": "bus", "ties": "tie", "go": "go",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLocalContextCancelled(t *testing.T) {
	l := mustLocal(t, 64)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := l.Embed(ctx, []string{"a", "b"})
	if !errors.Is(err, context.Canceled) || v != nil {
		t.Fatalf("Embed on a cancelled context = %v, %v; want nil, context.Canceled", v, err)
	}
	v, err = l.Embed(context.Background(), nil)
	if err != nil || len(v) != 0 {
		t.Fatalf("Embed(nil) = %v, %v; want no vectors, no error", v, err)
	}
}

func TestLocalBatchOrder(t *testing.T) {
	l := mustLocal(t, 128)
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory %d about topic %d", i, i%7)
	}
	batch := embedAll(t, l, texts...)
	if len(batch) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(batch), len(texts))
	}
	for i, text := range texts {
		if diff := cmp.Diff(l.EmbedOne(text, nil), batch[i]); diff != "" {
			t.Errorf("vector %d is not %q's:\n%s", i, text, diff)
		}
	}
	// EmbedOne reuses a destination of the right length.
	dst := make([]float32, 128)
	if got := l.EmbedOne("x", dst); &got[0] != &dst[0] {
		t.Error("EmbedOne did not write into dst")
	}
}

func TestLocalConcurrent(t *testing.T) {
	l := mustLocal(t, 256)
	texts := []string{"Dana uses Neovim", "Dana lives in Lisbon", "PostgreSQL 16", "", strings.Repeat("long text ", 200)}
	want := embedAll(t, l, texts...)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := (g + i) % len(texts)
				got, err := l.Embed(context.Background(), []string{texts[k]})
				if err != nil || !cmp.Equal(got[0], want[k]) {
					select {
					case errs <- fmt.Sprintf("goroutine %d, text %d: %v", g, k, err):
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func FuzzLocal(f *testing.F) {
	for _, s := range goldenTexts {
		f.Add(s, 64)
	}
	f.Add("a", 1)
	f.Add("\x00\xff ́́́ ab", 3)
	f.Fuzz(func(t *testing.T, text string, dims int) {
		dims = 1 + (dims&0x7fffffff)%1024
		l := mustLocal(t, dims)
		v := l.EmbedOne(text, nil)
		if len(v) != dims {
			t.Fatalf("%d components, want %d", len(v), dims)
		}
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("component %d is %v", i, x)
			}
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Fatalf("norm %v", n)
		}
	})
}
