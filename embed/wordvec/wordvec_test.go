package wordvec_test

import (
	"errors"
	"math"
	"testing"

	"github.com/memrank/memrank/embed/wordvec"
)

func cosine(t *testing.T, tab *wordvec.Table, a, b string) float64 {
	t.Helper()
	va, vb := make([]float64, tab.Dimensions()), make([]float64, tab.Dimensions())
	for _, p := range []struct {
		w string
		v []float64
	}{{a, va}, {b, vb}} {
		r, ok := tab.Rank(p.w)
		if !ok {
			t.Fatalf("Rank(%q): missing", p.w)
		}
		tab.AddTo(p.v, r, 1)
	}
	var dot, na, nb float64
	for i := range va {
		dot += va[i] * vb[i]
		na += va[i] * va[i]
		nb += vb[i] * vb[i]
	}
	return dot / math.Sqrt(na*nb)
}

func TestBundled(t *testing.T) {
	tab, err := wordvec.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Dimensions() != 100 || tab.Len() != 100000 {
		t.Fatalf("table: %d words x %d dimensions, want 100000 x 100", tab.Len(), tab.Dimensions())
	}
	// Frequency order: "the" first, common words before rare ones.
	if r, _ := tab.Rank("the"); r != 0 {
		t.Errorf(`Rank("the") = %d, want 0`, r)
	}
	if rc, _ := tab.Rank("coffee"); rc < 100 || rc > 10000 {
		t.Errorf(`Rank("coffee") = %d, want a common word`, rc)
	}
	for _, w := range []string{"The", "1999", "don't", ""} {
		if _, ok := tab.Rank(w); ok {
			t.Errorf("Rank(%q) found; the table holds lower-case words of letters only", w)
		}
	}
	// The vectors carry meaning: related words are closer than unrelated ones.
	related := []struct{ a, b, far string }{
		{"car", "automobile", "banana"},
		{"coffee", "tea", "parliament"},
		{"lives", "resides", "guitar"},
		{"editor", "editing", "volcano"},
	}
	for _, c := range related {
		near, far := cosine(t, tab, c.a, c.b), cosine(t, tab, c.a, c.far)
		if near <= far+0.2 {
			t.Errorf("cos(%s, %s) = %.2f, cos(%s, %s) = %.2f: want the first well above", c.a, c.b, near, c.a, c.far, far)
		}
	}
}

func TestParseRejects(t *testing.T) {
	good := []byte("MRWV1\n\x01\x00\x00\x00\x02\x01\x00\x00\x00a\x00\x00\x80\x3f\x01\xff")
	if tab, err := wordvec.Parse(good); err != nil || tab.Len() != 1 {
		t.Fatalf("Parse(minimal table) = %v, %v", tab, err)
	}
	cases := map[string][]byte{
		"empty":          nil,
		"magic":          []byte("MRWV2\n\x01\x00\x00\x00\x02\x01\x00\x00\x00a\x00\x00\x80\x3f\x01\xff"),
		"short":          good[:len(good)-1],
		"long":           append(append([]byte{}, good...), 0),
		"block too long": []byte("MRWV1\n\x01\x00\x00\x00\x02\xff\x00\x00\x00a\x00\x00\x80\x3f\x01\xff"),
		"nan scale":      []byte("MRWV1\n\x01\x00\x00\x00\x02\x01\x00\x00\x00a\x00\x00\xc0\x7f\x01\xff"),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := wordvec.Parse(b); !errors.Is(err, wordvec.ErrFormat) {
				t.Errorf("Parse: %v, want ErrFormat", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("MRWV1\n\x01\x00\x00\x00\x02\x01\x00\x00\x00a\x00\x00\x80\x3f\x01\xff"))
	f.Add([]byte("MRWV1\n\x02\x00\x00\x00\x01\x03\x00\x00\x00a\nb\x00\x00\x80\x3f\x01\x00\x00\x80\x3f\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := wordvec.Parse(b)
		if err != nil {
			return
		}
		dst := make([]float64, tab.Dimensions())
		for r := range tab.Len() {
			tab.AddTo(dst, r, 1)
		}
	})
}
