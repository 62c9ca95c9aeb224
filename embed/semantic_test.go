package embed_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memrank/memrank/embed"
	"github.com/memrank/memrank/embed/wordvec"
	"github.com/memrank/memrank/telemetry/settings"
)

func semCos(t *testing.T, e embed.Embedder, a, b string) float64 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var dot float64
	for i := range v[0] {
		dot += float64(v[0][i]) * float64(v[1][i])
	}
	return dot
}

func newSemantic(t testing.TB) *embed.Semantic {
	t.Helper()
	s, err := embed.NewSemantic(384)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSemanticMeaning: paraphrases without shared content words are close,
// and closer than the lexical embedder puts them; texts about other things
// are far.
func TestSemanticMeaning(t *testing.T) {
	sem := newSemantic(t)
	lex, err := embed.NewLocal(384)
	if err != nil {
		t.Fatal(err)
	}
	bands, _ := embed.CalibratedBands(sem.Model())
	paraphrases := [][2]string{
		{"Lives in Porto", "Resides in Porto"},
		{"Drinks coffee every morning", "Has coffee each morning"},
		{"Works at Acme as a software engineer", "Is a software developer at Acme"},
		{"Maya is Dana's daughter", "Dana's daughter is called Maya"},
		{"Has three kids", "Has 3 kids"},
	}
	for _, p := range paraphrases {
		s, l := semCos(t, sem, p[0], p[1]), semCos(t, lex, p[0], p[1])
		if s < bands.Judge || s <= l {
			t.Errorf("%q / %q: semantic %.3f, lexical %.3f: want at least the judge band (%.2f) and above lexical", p[0], p[1], s, l, bands.Judge)
		}
	}
	unrelated := [][2]string{
		{"Allergic to peanuts", "The staging cluster runs Kubernetes"},
		{"Plays the cello", "Her flight lands at noon"},
	}
	for _, p := range unrelated {
		if s := semCos(t, sem, p[0], p[1]); s > 0.3 {
			t.Errorf("%q / %q: %.3f, want unrelated texts far apart", p[0], p[1], s)
		}
	}
}

// TestSemanticNegationAndNumbers: a negation or another number moves a pair
// well below its affirmative or equal twin.
func TestSemanticNegationAndNumbers(t *testing.T) {
	sem := newSemantic(t)
	bands, _ := embed.CalibratedBands(sem.Model())
	cases := []struct{ a, same, other string }{
		{"Likes coffee", "Likes coffee a lot", "Does not like coffee"},
		{"Is vegetarian", "Is a vegetarian", "Isn't vegetarian"},
		{"Eats meat", "Eats meat often", "Never eats meat"},
		{"Has 2 kids", "Has two kids", "Has 3 kids"},
		{"The service runs on Python 3.12", "The service runs Python 3.12", "The service runs on Python 3.11"},
		{"Standup is at 9:30", "The standup is at 9:30", "Standup is at 10:00"},
	}
	for _, c := range cases {
		same, other := semCos(t, sem, c.a, c.same), semCos(t, sem, c.a, c.other)
		if other >= bands.Same || other > same-0.1 {
			t.Errorf("%q: %.3f with %q, %.3f with %q: want the second below the same band (%.2f) and well below the first",
				c.a, same, c.same, other, c.other, bands.Same)
		}
	}
}

func TestSemanticVectors(t *testing.T) {
	sem := newSemantic(t)
	texts := []string{"Uses Neovim as her main editor", "", "!!!", "Zxqv Wvut", "ÉLAN à Zürich 2025-06-01"}
	v1, err := sem.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := sem.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range v1 {
		if len(v) != 384 {
			t.Fatalf("%q: %d components", texts[i], len(v))
		}
		var sq float64
		for j, x := range v {
			if math.IsNaN(float64(x)) || x != v2[i][j] {
				t.Fatalf("%q: component %d is %v then %v: want finite and deterministic", texts[i], j, x, v2[i][j])
			}
			sq += float64(x) * float64(x)
		}
		if math.Abs(sq-1) > 1e-4 {
			t.Errorf("%q: squared norm %.6f, want 1", texts[i], sq)
		}
	}
	if got := sem.Model(); got != "memrank-local-sem-v1:384" {
		t.Errorf("Model() = %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sem.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed after cancel: %v", err)
	}
	for _, d := range []int{0, embed.MinSemanticDimensions - 1, embed.MaxDimensions + 1} {
		if _, err := embed.NewSemantic(d); !errors.Is(err, embed.ErrDimensions) {
			t.Errorf("NewSemantic(%d): %v, want ErrDimensions", d, err)
		}
	}
}

func TestBuiltinModels(t *testing.T) {
	for _, model := range []string{"memrank-local-hash-v1:384", "memrank-local-sem-v1:384", "memrank-local-sem-v1:512"} {
		e, err := embed.NewBuiltin(model)
		if err != nil || e.Model() != model {
			t.Errorf("NewBuiltin(%q) = %v, %v", model, e, err)
		}
	}
	for _, model := range []string{"", "text-embedding-3-small", "memrank-local-sem-v1", "memrank-local-sem-v1:x", "memrank-local-sem-v1:10", "memrank-local-sem-v1:+384", "memrank-local-hash-v1:0384"} {
		if _, err := embed.NewBuiltin(model); err == nil {
			t.Errorf("NewBuiltin(%q): no error", model)
		}
	}
	if b, ok := embed.CalibratedBands("memrank-local-sem-v1:384"); !ok || !(b.Judge > 0 && b.Judge < b.Same && b.Same < 1) {
		t.Errorf("semantic bands %+v, %v", b, ok)
	}
	if _, ok := embed.CalibratedBands("memrank-local-hash-v1:384"); ok {
		t.Error("the lexical embedder has calibrated bands; it follows the configuration")
	}
}

// TestServiceFor: a Service gives its own embedder for its model and for
// none, a built-in one for a recorded built-in model, and nothing for an
// external model it is not configured with.
func TestServiceFor(t *testing.T) {
	svc, err := embed.New(embed.DefaultConfig(), settings.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Shutdown(context.Background())
	if e, ok := svc.For(""); !ok || e.Model() != "memrank-local-sem-v1:384" {
		t.Errorf(`For("") = %v, %v`, e, ok)
	}
	if e, ok := svc.For("memrank-local-hash-v1:384"); !ok || e.Model() != "memrank-local-hash-v1:384" {
		t.Errorf("For(lexical) = %v, %v", e, ok)
	}
	if _, ok := svc.For("text-embedding-3-small:1536"); ok {
		t.Error("For(an external model) found one")
	}
}

// BenchmarkSemanticLoad is the first use's cost: parsing the word table
// and computing the weights and the common component.
func BenchmarkSemanticLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tab, err := wordvec.Parse(wordvecData(b))
		if err != nil || tab.Len() == 0 {
			b.Fatal(err)
		}
	}
}

func wordvecData(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("wordvec", "vectors.bin"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// FuzzSemantic: any text, valid UTF-8 or not, embeds to a finite unit
// vector, the same each time.
func FuzzSemantic(f *testing.F) {
	for _, s := range []string{"", "Likes coffee", "Isn't vegetarian", "Dana's 3.12.1-rc2 at 9:30", "ÉLAN\xff", "'s's", "1,,2..3"} {
		f.Add(s)
	}
	sem := newSemantic(f)
	f.Fuzz(func(t *testing.T, text string) {
		v, err := sem.Embed(context.Background(), []string{text, text})
		if err != nil {
			t.Fatal(err)
		}
		var sq float64
		for i, x := range v[0] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x != v[1][i] {
				t.Fatalf("%q: component %d is %v then %v", text, i, x, v[1][i])
			}
			sq += float64(x) * float64(x)
		}
		if math.Abs(sq-1) > 1e-4 {
			t.Fatalf("%q: squared norm %v", text, sq)
		}
	})
}
