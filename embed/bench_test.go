package embed

import (
	"context"
	"strings"
	"testing"
)

// benchTexts are the texts the local embedders' benchmarks embed.
var benchTexts = []struct {
	name string
	text string
}{
	{"query", "what editor does Dana use"},
	{"memory", "Dana switched from VS Code to Neovim in March and uses it for Go and Rust"},
	{"paragraph", strings.Repeat("Dana said the team moved the production database to PostgreSQL 16 last spring. ", 8)},
}

func BenchmarkLocal(b *testing.B) {
	for _, tc := range benchTexts {
		b.Run(tc.name, func(b *testing.B) {
			l := mustLocal(b, 384)
			dst := make([]float32, 384)
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				l.EmbedOne(tc.text, dst)
			}
		})
	}
}

// BenchmarkSemantic embeds the same texts, one per call (the word table is
// loaded before the timing).
func BenchmarkSemantic(b *testing.B) {
	sem, err := NewSemantic(384)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sem.Embed(context.Background(), []string{"warm up"}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range benchTexts {
		b.Run(tc.name, func(b *testing.B) {
			texts := []string{tc.text}
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sem.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
